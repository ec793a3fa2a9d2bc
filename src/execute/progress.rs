//! Progress reporting on stderr: an indicatif bar on a terminal, one plain line per finished
//! node otherwise, nothing with `--quiet` (warnings are printed in every mode).
//!
//! The bar advances by each node's *cost estimate* (the same estimate that orders the work), not
//! by node count, and redraws on a timer: the elapsed time keeps moving while long nodes run,
//! and the time left — elapsed × cost left / cost done — does not swing when a run mixes short
//! and long simulations.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use super::dag::{Event, Observer, Outcome};

pub enum Progress {
    Quiet,
    Lines {
        done: Mutex<(usize, usize)>,
    },
    Bar {
        bar: ProgressBar,
        /// Nodes finished and nodes to run.
        nodes: (AtomicUsize, AtomicUsize),
    },
}

/// How often the bar redraws, whether or not a node finished.
const TICK: Duration = Duration::from_millis(200);

/// The time left, from the cost done so far: `elapsed × (len − pos) / pos`.
fn eta_from_costs(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let (done, total) = (state.pos(), state.len().unwrap_or(0));
    if done == 0 || total <= done {
        let _ = out.write_str("?");
        return;
    }
    let elapsed = state.elapsed().as_secs_f64();
    let left = elapsed * (total - done) as f64 / done as f64;
    let _ = write!(
        out,
        "{}",
        indicatif::HumanDuration(Duration::from_secs_f64(left))
    );
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
                    "{spinner} [{elapsed_precise}] {bar:30} {prefix} nodes, about {eta_costs} left {wide_msg}",
                )
                .expect("valid template")
                .with_key("eta_costs", eta_from_costs),
            );
            bar.enable_steady_tick(TICK);
            Progress::Bar {
                bar,
                nodes: (AtomicUsize::new(0), AtomicUsize::new(0)),
            }
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
            Progress::Bar { bar, nodes } => {
                nodes.1.store(to_run, Ordering::SeqCst);
                bar.set_prefix(format!("0/{to_run}"));
            }
        }
    }

    fn costs(&self, to_run: u64) {
        if let Progress::Bar { bar, .. } = self {
            bar.set_length(to_run.max(1));
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
        let cause = match &event.outcome {
            Outcome::Failed { error } => format!(": {error}"),
            _ => String::new(),
        };
        match self {
            Progress::Quiet => {}
            Progress::Lines { done } => {
                let mut d = done.lock().unwrap();
                d.0 += 1;
                eprintln!(
                    "[{}/{}] {what} {} ({:.2}s){cause}",
                    d.0, d.1, event.label, event.seconds
                );
            }
            Progress::Bar { bar, nodes } => {
                let done = nodes.0.fetch_add(1, Ordering::SeqCst) + 1;
                bar.set_prefix(format!("{done}/{}", nodes.1.load(Ordering::SeqCst)));
                bar.inc(event.cost.max(1));
                if cause.is_empty() {
                    bar.set_message(format!("{what} {}", event.label));
                } else {
                    bar.println(format!("{what} {}{cause}", event.label));
                }
            }
        }
    }

    fn warning(&self, message: &str) {
        match self {
            Progress::Bar { bar, .. } => bar.suspend(|| eprintln!("warning: {message}")),
            _ => eprintln!("warning: {message}"),
        }
    }

    fn note(&self, text: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { .. } => eprintln!("{text}"),
            Progress::Bar { bar, .. } => bar.set_message(text.to_string()),
        }
    }

    fn finished(&self) {
        if let Progress::Bar { bar, .. } = self {
            bar.finish_and_clear();
        }
    }
}
