//! `schedlab run`: plan, then execute what is not cached — on local threads or on Slurm — and
//! publish each experiment's results to `results/<experiment>/`. On local threads, Ctrl-C,
//! SIGTERM and SIGHUP stop it cleanly: running nodes are abandoned, no entry is left
//! half-written, the staging area is emptied, and the next run resumes where this one stopped
//! (the Slurm executor cancels what it submitted instead: docs/slurm.md).

use std::path::{Path, PathBuf};

use super::{CliError, exit, manifests};
use crate::cache::{self, EntryStore};
use crate::execute::executor::slurm::{self, SlurmConfig};
use crate::execute::executor::{ExecutorKind, RunConfig};
use crate::execute::progress::Progress;
use crate::execute::{self, Executor, Interrupt, Local, Observer, Outcome, PipelineError, Slurm};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  schedlab run                                 every experiments/*.yaml
  schedlab run experiments/easy-vs-fcfs.yaml -j 4 --events events.jsonl
  schedlab run --name baseline                 then `schedlab diff @baseline @latest`

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
    /// Name this run's results, for `schedlab diff @NAME`, kept through `gc` (letters,
    /// digits, '.', '_', '-').
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Write the event log (one JSON object per node: label, key, outcome) to this file.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Where simulations run [default: `executor:` in the config file, else local].
    #[arg(long, value_enum)]
    pub executor: Option<ExecutorKind>,
    /// Run configuration file (executor, Slurm settings) [default: schedlab.yaml, if present].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub slurm: SlurmArgs,
}

/// Slurm settings on the command line; each overrides the config file's `slurm:` key.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Slurm (--executor slurm; docs/slurm.md)")]
pub struct SlurmArgs {
    /// Submit and return at once; a later `run` (or `status`) picks the work up.
    #[arg(long)]
    pub detach: bool,
    /// Partition to submit to.
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Account to charge.
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
    /// Quality of service.
    #[arg(long, value_name = "NAME")]
    pub qos: Option<String>,
    /// Time limit per array task (Slurm notation, e.g. 30:00).
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// Memory per array task (e.g. 2G).
    #[arg(long, value_name = "SIZE")]
    pub mem: Option<String>,
    /// At most this many array tasks at once.
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<u32>,
}

impl SlurmArgs {
    fn apply(&self, config: &mut SlurmConfig) -> Result<(), CliError> {
        let mut raw = slurm::config::RawSlurm {
            partition: self.partition.clone().or(config.partition.take()),
            account: self.account.clone().or(config.account.take()),
            qos: self.qos.clone().or(config.qos.take()),
            time: self.time.clone().or(config.time.take()),
            mem: self.mem.clone().or(config.mem.take()),
            max_parallel: self.max_parallel.or(config.max_parallel),
            pack_seconds: Some(config.pack_seconds),
            max_array_size: config.max_array_size,
            max_tasks: Some(config.max_tasks),
            poll_seconds: Some(config.poll_seconds),
            sbatch_args: Vec::new(),
        };
        raw.sbatch_args = std::mem::take(&mut config.sbatch_args);
        *config = SlurmConfig::resolve(raw).map_err(|(key, message)| {
            CliError::input(format!(
                "--{}: {message}",
                key.trim_start_matches("slurm.").replace('_', "-")
            ))
        })?;
        Ok(())
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    super::output::check_folders(&[("--events", args.events.as_deref())])?;
    let mut config = RunConfig::load(args.config.as_deref()).map_err(CliError::input)?;
    args.slurm.apply(&mut config.slurm)?;
    let kind = args.executor.unwrap_or(config.executor);
    if args.slurm.detach && kind != ExecutorKind::Slurm {
        return Err(CliError::input("--detach needs the Slurm executor")
            .with_hint("add --executor slurm (or `executor: slurm` in schedlab.yaml)"));
    }
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
                let mut received = signals.forever();
                let Some(signal) = received.next() else {
                    return;
                };
                if kind == ExecutorKind::Local {
                    stop(&interrupt, &progress, &state_dir, signal);
                }
                // The Slurm executor sees the request in its waiting loop, cancels what it
                // submitted and returns; a second signal ends the process at once.
                interrupt.request_for_signal(signal);
                if let Some(again) = received.next() {
                    progress.finished();
                    std::process::exit(i32::from(exit_code(again)));
                }
            });
            let result = run_planned(&args, config, kind, &progress, &interrupt);
            handle.close();
            result
        })
    }
    #[cfg(not(unix))]
    run_planned(&args, config, kind, &progress, &interrupt)
}

fn run_planned(
    args: &Args,
    config: RunConfig,
    kind: ExecutorKind,
    progress: &Progress,
    interrupt: &Interrupt,
) -> Result<(), CliError> {
    if let Some(name) = &args.name {
        execute::pipeline::check_run_name(name).map_err(CliError::input)?;
    }
    let manifests = manifests::load_all(&args.manifests)?;
    // A Python policy runs where Python is: hand the command to the Python package.
    if !execute::custom_policy::installed()
        && let Some(what) = super::python::first_python_policy(&manifests)
    {
        super::python::hand_over(&what)?;
    }
    let mut prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    prepared.run_name = args.name.clone();
    let threads = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let state_dir = crate::cache::state_dir(&args.results);
    let slurm_executor = match kind {
        ExecutorKind::Slurm => {
            // Inside Python (`python -m schedlab`), tasks run that Python's package too.
            let (exe, exe_args) = match super::python::self_command() {
                Some((python, args)) => (python, args),
                None => (
                    std::env::current_exe().map_err(|e| {
                        CliError::failed(format!("cannot locate the schedlab binary: {e}"))
                    })?,
                    Vec::new(),
                ),
            };
            Some(Slurm {
                config: config.slurm,
                exe,
                exe_args,
                local_threads: threads,
            })
        }
        ExecutorKind::Local => None,
    };
    let local = Local { threads };
    let executor: &dyn Executor = match &slurm_executor {
        Some(slurm_executor) if args.slurm.detach => {
            return detach(
                slurm_executor,
                &prepared,
                &state_dir,
                !args.no_wait,
                args.quiet,
            );
        }
        Some(slurm_executor) => slurm_executor,
        None => {
            warn_about_batches(&state_dir);
            &local
        }
    };
    let report = execute::run_with(&prepared, executor, !args.no_wait, progress, interrupt)
        .map_err(|e| pipeline_error(e, interrupt))?;
    #[cfg(unix)]
    if let Some(signal) = interrupt.signal() {
        // Stopped (Slurm executor) after its remote work: the local steps did not start.
        let (done, total) = interrupt.progress();
        let mut err = CliError::failed(format!(
            "interrupted: {done} of {total} nodes done; run again to resume"
        ));
        err.code = exit_code(signal);
        return Err(err);
    }
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
        let _ = EntryStore::new(state_dir).sweep_staging_and_fence();
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
    std::process::exit(i32::from(exit_code(signal)))
}

/// The documented exit code of a run stopped by `signal` (128 + its number).
#[cfg(unix)]
fn exit_code(signal: i32) -> u8 {
    match signal {
        signal_hook::consts::SIGTERM => exit::TERMINATED,
        signal_hook::consts::SIGHUP => exit::HUNG_UP,
        _ => exit::INTERRUPTED,
    }
}

fn pipeline_error(e: PipelineError, interrupt: &Interrupt) -> CliError {
    let interrupted = matches!(
        &e,
        PipelineError::Execute(execute::executor::ExecuteError::Slurm(
            slurm::SlurmError::Interrupted { .. }
        ))
    );
    let hint = match &e {
        PipelineError::Execute(x) => x.hint(),
        _ => None,
    };
    let mut err = CliError::failed(e);
    if interrupted {
        #[cfg(unix)]
        {
            err.code = interrupt.signal().map_or(exit::INTERRUPTED, exit_code);
        }
        #[cfg(not(unix))]
        {
            let _ = interrupt;
            err.code = exit::INTERRUPTED;
        }
    }
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// `run --detach`: submit, say what and how to follow it, return.
fn detach(
    slurm: &Slurm,
    prepared: &execute::Prepared,
    state_dir: &std::path::Path,
    wait_for_lock: bool,
    quiet: bool,
) -> Result<(), CliError> {
    let detached = slurm::detach(slurm, prepared, state_dir, wait_for_lock).map_err(|e| {
        let hint = e.hint();
        let err = CliError::failed(e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    })?;
    if quiet {
        return Ok(());
    }
    if let Some(batch) = &detached.batch {
        eprintln!("{}", slurm::describe(batch, false));
    }
    eprintln!(
        "{} nodes: {} cached, {} already queued or running, {} submitted; `schedlab status` \
         follows them, `schedlab run` again collects the results",
        detached.total,
        detached.cached,
        detached.in_flight,
        detached.batch.as_ref().map_or(0, |b| b.node_count()),
    );
    Ok(())
}

/// A local run while Slurm batches may still be running computes their nodes here too: say so.
fn warn_about_batches(state_dir: &std::path::Path) {
    let pending: Vec<String> = slurm::batch::Batch::list(state_dir)
        .into_iter()
        .filter(|b| !b.finished && b.mode == slurm::batch::Mode::Array)
        .flat_map(|b| b.job_ids())
        .collect();
    if !pending.is_empty() {
        eprintln!(
            "warning: Slurm job {} submitted earlier may still be running; nodes it has not \
             finished are computed here too (use --executor slurm to wait for it instead)",
            pending.join(", ")
        );
    }
}
