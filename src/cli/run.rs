//! `schedlab run`: plan, then execute what is not cached, in parallel, and publish each
//! experiment's results to `results/<experiment>/`.

use std::path::PathBuf;

use super::{CliError, manifests};
use crate::execute::progress::Progress;
use crate::execute::{self, Outcome};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Manifests to run [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Parallel simulations [default: the number of CPUs].
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Results directory.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// No progress output.
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
    let manifests = manifests::load_all(&args.manifests)?;
    let prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    let threads = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = Progress::for_stderr(args.quiet);
    let interrupt = execute::Interrupt::default();
    let report = execute::run(&prepared, threads, !args.no_wait, &progress, &interrupt)
        .map_err(CliError::failed)?;
    if let Some(path) = &args.events {
        let lines: Vec<String> = report
            .events
            .iter()
            .map(|e| serde_json::to_string(e).expect("event serializes"))
            .collect();
        std::fs::write(path, lines.join("\n") + "\n")
            .map_err(|e| CliError::failed(format!("failed to write {}: {e}", path.display())))?;
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
    if failed.is_empty() {
        return Ok(());
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
    Err(CliError::failed(format!(
        "{} of {} nodes did not complete",
        failed.len(),
        report.events.len()
    ))
    .with_hint("fix the cause and run again: finished nodes are cached, only these will run"))
}
