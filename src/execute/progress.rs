//! Progress reporting on stderr: an indicatif bar on a terminal, plain lines otherwise — one per
//! finished node and, while nodes run, one every [`DEFAULT_INTERVAL`] saying which cells run and
//! how far they got — nothing with `--quiet` (warnings are printed in every mode).
//!
//! Progress is counted in the nodes' *cost estimates* (the same estimate that orders the work),
//! not in nodes: a finished node counts its whole cost, a running simulation the fraction of
//! its submission span simulated so far (its [`Meter`](super::meter::Meter)). The time left is
//! the elapsed time × cost left / cost done, so it is known from the first seconds of the first
//! long cell, learns from every cell done, does not swing when a run mixes short and long
//! simulations, and never says "0 seconds" while work remains (issue 35). A display thread
//! redraws the bar every 200 ms and writes the plain lines; it reads the meters, the
//! simulations never wait for it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};

use super::dag::{Event, Observer, Outcome};
use super::meter::{Meters, Reading};

/// How often the bar redraws, whether or not a node finished.
const TICK: Duration = Duration::from_millis(200);

/// How often, with stderr not a terminal, a line says which cells run and how far they got.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(20);

/// Overrides [`DEFAULT_INTERVAL`], in seconds (decimals allowed; docs/cli.md). Tests shorten it.
pub const INTERVAL_ENV: &str = "SCHEDLAB_PROGRESS_INTERVAL";

/// Running cells named in the bar's message at most.
const MAX_NAMED: usize = 3;

pub struct Progress {
    mode: Mode,
    live: Arc<Live>,
    /// The display thread, from `started` to `finished`.
    display: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Clone)]
enum Mode {
    Quiet,
    Lines { interval: Duration },
    Bar(ProgressBar),
}

/// What the display thread shares with the run.
struct Live {
    meters: Meters,
    since: Mutex<Instant>,
    /// Nodes finished and nodes to run.
    nodes: (AtomicUsize, AtomicUsize),
    /// Cost of the finished nodes and of all nodes to run.
    cost: (AtomicU64, AtomicU64),
    /// The last finished node, for the bar's message while nothing is metered.
    last: Mutex<String>,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Live {
    fn new() -> Live {
        Live {
            meters: Meters::default(),
            since: Mutex::new(Instant::now()),
            nodes: (AtomicUsize::new(0), AtomicUsize::new(0)),
            cost: (AtomicU64::new(0), AtomicU64::new(0)),
            last: Mutex::new(String::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// Cost done: the finished nodes' and the simulated fraction of each running cell's.
    fn done(&self, running: &[Reading]) -> f64 {
        done_cost(self.cost.0.load(Ordering::SeqCst), running)
    }

    fn total(&self) -> u64 {
        self.cost.1.load(Ordering::SeqCst)
    }
}

/// The finished cost plus each running cell's cost × the fraction it simulated.
fn done_cost(finished: u64, running: &[Reading]) -> f64 {
    finished as f64
        + running
            .iter()
            .map(|r| r.cost as f64 * r.fraction())
            .sum::<f64>()
}

/// The time left, from the cost done so far: `elapsed × (total − done) / done`, and at least a
/// second while cost remains; unknown before any cost is done.
pub fn time_left(elapsed: Duration, done: f64, total: f64) -> Option<Duration> {
    if done <= 0.0 || !done.is_finite() {
        return None;
    }
    let left = elapsed.as_secs_f64() * (total - done).max(0.0) / done;
    // Estimates below a second round to "0 seconds", which reads as "done" (issue 35).
    Some(Duration::from_secs_f64(left).max(Duration::from_secs(1)))
}

/// The bar's `{eta_costs}`: its position is the cost done, its length the total.
fn eta_from_costs(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let total = state.len().unwrap_or(0);
    let _ = match time_left(state.elapsed(), state.pos() as f64, total as f64) {
        Some(left) => write!(out, "about {} left", HumanDuration(left)),
        None => out.write_str("time left unknown yet"),
    };
}

/// A simulated span in the unit that reads best: "26.1 of 60.0 days".
fn span_words(reached: i64, span: i64) -> String {
    let (unit, name) = if span >= 2 * 86_400 {
        (86_400.0, "days")
    } else if span >= 2 * 3_600 {
        (3_600.0, "hours")
    } else {
        (60.0, "minutes")
    };
    format!(
        "{:.1} of {:.1} {name}",
        reached as f64 / unit,
        span as f64 / unit
    )
}

/// "exp/cell 43 % (26.1 of 60.0 days simulated)", or "(reading its workload)" before its first
/// simulated instant.
fn describe(r: &Reading) -> String {
    match r.simulated {
        Some((reached, span)) => format!(
            "{} {:.0} % ({} simulated)",
            r.label,
            100.0 * r.fraction(),
            span_words(reached.min(span), span)
        ),
        None => format!("{} (reading its workload)", r.label),
    }
}

/// `hh:mm:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The periodic line of a run whose stderr is not a terminal.
fn status_line(live: &Live) -> String {
    let elapsed = live.since.lock().unwrap().elapsed();
    let running = live.meters.read();
    let (done, to_run) = (
        live.nodes.0.load(Ordering::SeqCst),
        live.nodes.1.load(Ordering::SeqCst),
    );
    let mut line = format!("[{}] {done}/{to_run} nodes done", clock(elapsed));
    if !running.is_empty() {
        let cells: Vec<String> = running.iter().map(describe).collect();
        line.push_str(&format!("; running {}", cells.join(", ")));
    }
    match time_left(elapsed, live.done(&running), live.total() as f64) {
        Some(left) => line.push_str(&format!("; about {} left", HumanDuration(left))),
        None => line.push_str("; time left unknown yet"),
    }
    line
}

/// The bar's message: the running cells and how far each got, else the last node finished.
fn bar_message(live: &Live, running: &[Reading]) -> String {
    if running.is_empty() {
        return live.last.lock().unwrap().clone();
    }
    let mut named: Vec<String> = running
        .iter()
        .take(MAX_NAMED)
        .map(|r| match r.simulated {
            Some(_) => format!("{} {:.0} %", r.label, 100.0 * r.fraction()),
            None => r.label.clone(),
        })
        .collect();
    if running.len() > MAX_NAMED {
        named.push(format!("{} more", running.len() - MAX_NAMED));
    }
    format!("running {}", named.join(", "))
}

/// The display thread: redraws the bar every [`TICK`], or writes a status line every
/// `interval`, until `finished`.
fn display(mode: Mode, live: Arc<Live>) {
    let period = match &mode {
        Mode::Lines { interval } => *interval,
        _ => TICK,
    };
    let mut stop = live.stop.lock().unwrap();
    loop {
        // Checked before waiting too: `finished` may have come before this thread first ran.
        if *stop {
            return;
        }
        stop = live.wake.wait_timeout(stop, period).unwrap().0;
        if *stop {
            return;
        }
        match &mode {
            Mode::Quiet => return,
            Mode::Bar(bar) => {
                let running = live.meters.read();
                let total = live.total();
                bar.set_position((live.done(&running) as u64).min(total));
                bar.set_message(bar_message(&live, &running));
            }
            Mode::Lines { .. } => {
                // Without cost estimates (a Slurm run's remote wave) the executor's own notes
                // say what happens.
                if live.total() > 0 {
                    eprintln!("{}", status_line(&live));
                }
            }
        }
    }
}

/// The interval of the plain status lines: [`INTERVAL_ENV`] if set to a positive number of
/// seconds, else [`DEFAULT_INTERVAL`].
fn interval() -> Duration {
    std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_INTERVAL, Duration::from_secs_f64)
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise, or nothing when `quiet`.
    pub fn for_stderr(quiet: bool) -> Progress {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {prefix} nodes, {eta_costs} {wide_msg}",
                )
                .expect("valid template")
                .with_key("eta_costs", eta_from_costs),
            );
            bar.enable_steady_tick(TICK);
            Mode::Bar(bar)
        } else {
            Mode::Lines {
                interval: interval(),
            }
        };
        Progress::new(mode)
    }

    fn new(mode: Mode) -> Progress {
        Progress {
            mode,
            live: Arc::new(Live::new()),
            display: Mutex::new(None),
        }
    }
}

impl Observer for Progress {
    fn started(&self, to_run: usize, total: usize) {
        self.live.nodes.1.store(to_run, Ordering::SeqCst);
        match &self.mode {
            Mode::Quiet => return,
            Mode::Lines { .. } => {
                eprintln!(
                    "{to_run} of {total} nodes to run ({} cached)",
                    total - to_run
                );
            }
            Mode::Bar(bar) => bar.set_prefix(format!("0/{to_run}")),
        }
        *self.live.since.lock().unwrap() = Instant::now();
        let mut display = self.display.lock().unwrap();
        if display.is_none() {
            let (mode, live) = (self.mode.clone(), self.live.clone());
            *display = std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || self::display(mode, live))
                .ok();
        }
    }

    fn costs(&self, to_run: u64) {
        self.live.cost.1.store(to_run, Ordering::SeqCst);
        if let Mode::Bar(bar) = &self.mode {
            bar.set_length(to_run.max(1));
        }
    }

    fn event(&self, event: &Event) {
        // After `finished` nothing more is said: a run stopped by a signal has swept its
        // staging area, so a node still running fails at its next write, which is not a
        // failure to report after "interrupted: …" (the node runs again on resume).
        if event.outcome == Outcome::Hit || *self.live.stop.lock().unwrap() {
            return;
        }
        let done = self.live.nodes.0.fetch_add(1, Ordering::SeqCst) + 1;
        self.live.cost.0.fetch_add(event.cost, Ordering::SeqCst);
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
        let to_run = self.live.nodes.1.load(Ordering::SeqCst);
        match &self.mode {
            Mode::Quiet => {}
            Mode::Lines { .. } => {
                eprintln!(
                    "[{done}/{to_run}] {what} {} ({:.2}s){cause}",
                    event.label, event.seconds
                );
            }
            Mode::Bar(bar) => {
                bar.set_prefix(format!("{done}/{to_run}"));
                let running = self.live.meters.read();
                bar.set_position((self.live.done(&running) as u64).min(self.live.total()));
                *self.live.last.lock().unwrap() = format!("{what} {}", event.label);
                if cause.is_empty() {
                    bar.set_message(bar_message(&self.live, &running));
                } else {
                    bar.println(format!("{what} {}{cause}", event.label));
                }
            }
        }
    }

    fn warning(&self, message: &str) {
        match &self.mode {
            Mode::Bar(bar) => bar.suspend(|| eprintln!("warning: {message}")),
            _ => eprintln!("warning: {message}"),
        }
    }

    fn note(&self, text: &str) {
        match &self.mode {
            Mode::Quiet => {}
            Mode::Lines { .. } => eprintln!("{text}"),
            Mode::Bar(bar) => bar.set_message(text.to_string()),
        }
    }

    fn finished(&self) {
        *self.live.stop.lock().unwrap() = true;
        self.live.wake.notify_all();
        if let Some(handle) = self.display.lock().unwrap().take() {
            let _ = handle.join();
        }
        if let Mode::Bar(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }

    fn meters(&self) -> Option<&Meters> {
        match self.mode {
            Mode::Quiet => None,
            _ => Some(&self.live.meters),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        *self.live.stop.lock().unwrap() = true;
        self.live.wake.notify_all();
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

    fn bar() -> Progress {
        Progress::new(Mode::Bar(ProgressBar::hidden()))
    }

    /// Issue 16: the estimate swung from 24 s to 2 min on a 49 s run because it counted nodes.
    /// The bar advances by node cost, so after the node holding 90 % of the cost finished in 9 s
    /// the time left is 1 s — counting nodes (1 of 2 done) would say 9 s.
    #[test]
    fn the_time_left_is_estimated_from_node_costs_not_node_counts() {
        let progress = bar();
        progress.started(2, 2);
        progress.costs(100);
        progress.event(&ran(90));
        let Mode::Bar(bar) = &progress.mode else {
            unreachable!()
        };
        assert_eq!((bar.position(), bar.length()), (90, Some(100)));
        assert_eq!(bar.prefix(), "1/2");
        let left = time_left(Duration::from_secs(9), bar.position() as f64, 100.0).unwrap();
        assert!((left.as_secs_f64() - 1.0).abs() < 1e-9, "{left:?}");
        assert_eq!(time_left(Duration::from_secs(9), 0.0, 100.0), None);
        progress.finished();
    }

    /// Issue 35: a bar said "about 0 seconds left" while a long cell ran. Below a second the
    /// estimate says one; with cost left it is never zero.
    #[test]
    fn the_time_left_is_never_zero_while_cost_remains() {
        // 99.99 of 100 done in 10 s: 10 × 0.01 / 99.99 = 1 ms → 1 s.
        let left = time_left(Duration::from_secs(10), 99.99, 100.0).unwrap();
        assert_eq!(left, Duration::from_secs(1));
        // All done: the same floor, never "0 seconds".
        assert_eq!(
            time_left(Duration::from_secs(10), 100.0, 100.0),
            Some(Duration::from_secs(1))
        );
    }

    /// Issue 35: with one 9-minute cell of two running, the estimate came only when it ended.
    /// Two cells of cost 50 each, two threads: after 60 s both simulated a quarter of their
    /// span (worked by hand: done = 50 × 0.25 + 50 × 0.25 = 25 of 100; left = 60 s × 75 / 25
    /// = 180 s), so the estimate is known before any cell ends, and after the first cell ends
    /// at 4 min with the other at 80 %, done = 50 + 40 = 90 of 100 and left = 240 × 10 / 90 =
    /// 26.7 s: it learns from the cell done.
    #[test]
    fn running_cells_count_by_the_fraction_they_simulated() {
        let progress = bar();
        progress.started(2, 2);
        progress.costs(100);
        let meters = progress.meters().expect("a bar follows the simulations");
        let a = meters.start(0, "exp/a", 50);
        let b = meters.start(1, "exp/b", 50);
        for running in [&a, &b] {
            running.meter.span(0, 400);
        }
        let mut sink = crate::sim::SimOutcome::default();
        let at = |time| crate::sim::schedule::Instant {
            time,
            ..Default::default()
        };
        use crate::sim::schedule::ScheduleSink;
        for running in [&a, &b] {
            let mut metered = super::super::meter::Metered {
                inner: &mut sink,
                meter: &running.meter,
            };
            metered.instant(&at(100));
        }
        let readings = meters.read();
        let done = progress.live.done(&readings);
        assert_eq!(done, 25.0);
        let left = time_left(Duration::from_secs(60), done, 100.0).unwrap();
        assert!((left.as_secs_f64() - 180.0).abs() < 1e-9, "{left:?}");
        assert_eq!(
            bar_message(&progress.live, &readings),
            "running exp/a 25 %, exp/b 25 %"
        );

        drop(a);
        progress.event(&ran(50));
        let mut metered = super::super::meter::Metered {
            inner: &mut sink,
            meter: &b.meter,
        };
        metered.instant(&at(320));
        let done = progress.live.done(&meters.read());
        assert_eq!(done, 90.0);
        let left = time_left(Duration::from_secs(240), done, 100.0).unwrap();
        assert!((left.as_secs_f64() - 240.0 / 9.0).abs() < 1e-9, "{left:?}");
        drop(b);
        progress.finished();
    }

    #[test]
    fn a_status_line_names_each_running_cell_and_how_far_it_got() {
        let progress = Progress::new(Mode::Lines {
            interval: Duration::from_secs(20),
        });
        progress.started(3, 4);
        progress.costs(300);
        let meters = progress.meters().unwrap();
        let a = meters.start(0, "pwa/easy", 100);
        let _b = meters.start(1, "pwa/conservative", 100);
        // 60 days of submissions, 15 simulated: 25 %.
        a.meter.span(31_656_837, 31_656_837 + 60 * 86_400);
        let mut sink = crate::sim::SimOutcome::default();
        use crate::sim::schedule::ScheduleSink;
        super::super::meter::Metered {
            inner: &mut sink,
            meter: &a.meter,
        }
        .instant(&crate::sim::schedule::Instant {
            time: 31_656_837 + 15 * 86_400,
            ..Default::default()
        });
        let line = status_line(&progress.live);
        assert!(line.starts_with("[00:00:0"), "{line}");
        assert!(
            line.contains(
                "] 0/3 nodes done; running pwa/easy 25 % (15.0 of 60.0 days simulated), pwa/conservative (reading its workload); about "
            ),
            "{line}"
        );
        assert!(!line.contains("about 0 seconds"), "{line}");
        drop(a);
        progress.finished();
    }

    #[test]
    fn spans_read_in_days_hours_or_minutes() {
        assert_eq!(span_words(3 * 86_400, 6 * 86_400), "3.0 of 6.0 days");
        assert_eq!(span_words(1_800, 3 * 3_600), "0.5 of 3.0 hours");
        assert_eq!(span_words(30, 600), "0.5 of 10.0 minutes");
        assert_eq!(clock(Duration::from_secs(3_725)), "01:02:05");
    }
}
