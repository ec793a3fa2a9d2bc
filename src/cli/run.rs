//! `schedlab run`: plan, then execute what is not cached, in parallel, and publish each
//! experiment's results to `results/<experiment>/`. Ctrl-C, SIGTERM and SIGHUP stop it cleanly:
//! running nodes are abandoned, no entry is left half-written, the staging area is emptied, and
//! the next run resumes where this one stopped.

use std::path::{Path, PathBuf};

use super::{CliError, exit, manifests};
use crate::cache::{self, EntryStore};
use crate::execute::progress::Progress;
use crate::execute::{self, Interrupt, Observer, Outcome};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  schedlab run                                 every experiments/*.yaml
  schedlab run experiments/easy-vs-fcfs.yaml -j 4 --events events.jsonl

Exit codes: 0 success; 1 a node failed (its error is printed; finished nodes are cached);
2 bad input (manifest, trace, arguments); 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM), 129 hung up (SIGHUP): run again to resume.")]
pub struct Args {
    /// Manifests to run [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Parallel simulations [default: the number of CPUs].
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Results directory.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// No progress output (warnings and errors are still printed).
    #[arg(long, short)]
    pub quiet: bool,
    /// Fail at once if another run holds the results lock, instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Write the event log (one JSON object per node: label, key, outcome) to this file.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let progress = Progress::for_stderr(args.quiet);
    let interrupt = Interrupt::default();
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|e| CliError::failed(format!("failed to handle signals: {e}")))?;
        let handle = signals.handle();
        let state_dir = cache::state_dir(&args.results);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                if let Some(signal) = signals.forever().next() {
                    stop(&interrupt, &progress, &state_dir, signal);
                }
            });
            let result = run_with(&args, &progress, &interrupt);
            handle.close();
            result
        })
    }
    #[cfg(not(unix))]
    run_with(&args, &progress, &interrupt)
}

fn run_with(args: &Args, progress: &Progress, interrupt: &Interrupt) -> Result<(), CliError> {
    let manifests = manifests::load_all(&args.manifests)?;
    let prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    let threads = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let report = execute::run(&prepared, threads, !args.no_wait, progress, interrupt)
        .map_err(CliError::failed)?;
    // The event log first: whatever failed, it records what happened.
    let mut problems = report.problems.clone();
    if let Some(path) = &args.events
        && let Err(e) = write_events(path, &report.events)
    {
        problems.push(format!("failed to write {}: {e}", path.display()));
    }
    let count = |f: fn(&Outcome) -> bool| report.events.iter().filter(|e| f(&e.outcome)).count();
    let ran = count(|o| *o == Outcome::Ran);
    let hits = count(|o| *o == Outcome::Hit);
    let failed = report.failed();
    if !args.quiet {
        eprintln!(
            "{} nodes: {ran} ran, {hits} cached, {} failed; results in {}",
            report.events.len(),
            failed.len(),
            args.results.display()
        );
    }
    for e in &failed {
        match &e.outcome {
            Outcome::Failed { error } => eprintln!("failed: {}: {error}", e.label),
            Outcome::Blocked { upstream } => {
                eprintln!("not run: {} (needs {upstream}, which failed)", e.label)
            }
            _ => {}
        }
    }
    for p in &problems {
        eprintln!("failed: {p}");
    }
    if failed.is_empty() && problems.is_empty() {
        return Ok(());
    }
    let what = if failed.is_empty() {
        format!("{} steps after the nodes failed", problems.len())
    } else {
        format!(
            "{} of {} nodes did not complete",
            failed.len(),
            report.events.len()
        )
    };
    Err(CliError::failed(what)
        .with_hint("fix the cause and run again: finished nodes are cached, only these will run"))
}

/// Writes one JSON line per event, atomically.
fn write_events(path: &Path, events: &[execute::Event]) -> Result<(), cache::CacheError> {
    let mut text = String::new();
    for e in events {
        text.push_str(&serde_json::to_string(e).expect("event serializes"));
        text.push('\n');
    }
    cache::write_atomic(path, text.as_bytes())
}

/// Stops the run for `signal`: waits until no cache or result write is in flight (none starts
/// after this), empties the staging area of this run's unfinished nodes, says how far the run
/// got and exits with 128 + the signal's number.
#[cfg(unix)]
fn stop(interrupt: &Interrupt, progress: &Progress, state_dir: &Path, signal: i32) -> ! {
    let _quiet = interrupt.quiesce();
    progress.finished();
    if interrupt.holds_lock() {
        let _ = EntryStore::new(state_dir).sweep_staging();
    }
    let (done, total) = interrupt.progress();
    let name = match signal {
        signal_hook::consts::SIGTERM => "terminated",
        signal_hook::consts::SIGHUP => "hung up",
        _ => "interrupted",
    };
    if total == 0 {
        eprintln!("{name}: stopped before any node ran; run again to start");
    } else {
        eprintln!("{name}: {done} of {total} nodes done; run again to resume");
    }
    let code = match signal {
        signal_hook::consts::SIGTERM => exit::TERMINATED,
        signal_hook::consts::SIGHUP => exit::HUNG_UP,
        _ => exit::INTERRUPTED,
    };
    std::process::exit(i32::from(code))
}
