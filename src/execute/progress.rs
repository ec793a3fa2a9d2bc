//! Progress reporting on stderr: an indicatif bar with ETA on a terminal, one plain line per
//! finished node otherwise, nothing with `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use super::dag::{Event, Observer, Outcome};

pub enum Progress {
    Quiet,
    Lines { done: Mutex<(usize, usize)> },
    Bar(ProgressBar),
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise, or nothing when `quiet`.
    pub fn for_stderr(quiet: bool) -> Progress {
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} nodes (eta {eta}) {msg}",
                )
                .expect("valid template"),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines {
                done: Mutex::new((0, 0)),
            }
        }
    }
}

impl Observer for Progress {
    fn started(&self, to_run: usize, total: usize) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { done } => {
                *done.lock().unwrap() = (0, to_run);
                eprintln!(
                    "{to_run} of {total} nodes to run ({} cached)",
                    total - to_run
                );
            }
            Progress::Bar(bar) => bar.set_length(to_run as u64),
        }
    }

    fn event(&self, event: &Event) {
        if event.outcome == Outcome::Hit {
            return;
        }
        let what = match &event.outcome {
            Outcome::Hit => "hit",
            Outcome::Ran => "ran",
            Outcome::Failed { .. } => "FAILED",
            Outcome::Blocked { .. } => "blocked",
        };
        match self {
            Progress::Quiet => {}
            Progress::Lines { done } => {
                let mut d = done.lock().unwrap();
                d.0 += 1;
                eprintln!(
                    "[{}/{}] {what} {} ({:.2}s)",
                    d.0, d.1, event.label, event.seconds
                );
            }
            Progress::Bar(bar) => {
                bar.inc(1);
                bar.set_message(format!("{what} {}", event.label));
            }
        }
    }

    fn warning(&self, message: &str) {
        match self {
            Progress::Bar(bar) => bar.suspend(|| eprintln!("warning: {message}")),
            _ => eprintln!("warning: {message}"),
        }
    }

    fn finished(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
