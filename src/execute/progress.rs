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
    let total = state.len().unwrap_or(0);
    let _ = match time_left(state.elapsed(), state.pos(), total) {
        Some(left) => write!(out, "{}", indicatif::HumanDuration(left)),
        None => out.write_str("?"),
    };
}

/// `elapsed × (total − done) / done` in cost units; unknown before any cost is done or once all
/// of it is.
fn time_left(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 || total <= done {
        return None;
    }
    let left = elapsed.as_secs_f64() * (total - done) as f64 / done as f64;
    Some(Duration::from_secs_f64(left))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(cost: u64) -> Event {
        Event {
            label: "cell".into(),
            key: "k".into(),
            outcome: Outcome::Ran,
            seconds: 1.0,
            cost,
        }
    }

    /// Issue 16: the estimate swung from 24 s to 2 min on a 49 s run because it counted nodes.
    /// The bar advances by node cost, so after the node holding 90 % of the cost finished in 9 s
    /// the time left is 1 s — counting nodes (1 of 2 done) would say 9 s.
    #[test]
    fn the_time_left_is_estimated_from_node_costs_not_node_counts() {
        let progress = Progress::Bar {
            bar: ProgressBar::hidden(),
            nodes: (AtomicUsize::new(0), AtomicUsize::new(0)),
        };
        progress.started(2, 2);
        progress.costs(100);
        progress.event(&ran(90));
        let Progress::Bar { bar, .. } = &progress else {
            unreachable!()
        };
        assert_eq!((bar.position(), bar.length()), (90, Some(100)));
        assert_eq!(bar.prefix(), "1/2");
        let left = time_left(Duration::from_secs(9), bar.position(), 100).unwrap();
        assert!((left.as_secs_f64() - 1.0).abs() < 1e-9, "{left:?}");
        assert_eq!(time_left(Duration::from_secs(9), 0, 100), None);
        assert_eq!(time_left(Duration::from_secs(9), 100, 100), None);
    }
}
