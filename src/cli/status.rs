//! `schedlab status`: what a results directory holds and what Slurm is doing with it — each
//! batch's tasks by state and nodes done, failures recorded in task logs, and the plan's nodes
//! cached, in flight or still to run. Reads only; never submits.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{CliError, manifests};
use crate::execute;
use crate::execute::executor::slurm;
use crate::plan::NodeState;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab status                                Slurm batches of results/ and what is left
  schedlab status experiments/easy-vs-fcfs.yaml --results results

Exit codes: 0 shown; 1 Slurm could not be queried; 2 bad input (manifests).")]
pub struct Args {
    /// Manifests whose nodes to count [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Results directory.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let state_dir = crate::cache::state_dir(&args.results);
    let batches = slurm::status(&state_dir).map_err(|e| {
        let hint = e.hint();
        let err = CliError::failed(e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    })?;
    let mut in_flight = BTreeSet::new();
    for s in &batches {
        let tasks: Vec<String> = s.tasks.iter().map(|(k, n)| format!("{n} {k}")).collect();
        println!(
            "batch {}  job {}  tasks: {}  nodes: {} of {} done{}",
            s.batch.id,
            if s.batch.arrays.is_empty() {
                "-".to_string()
            } else {
                s.batch.job_ids().join(",")
            },
            tasks.join(", "),
            s.nodes_done,
            s.batch.node_count(),
            if s.batch.finished { "  (finished)" } else { "" }
        );
        for (label, error) in &s.failures {
            println!("  failed {label}: {error}");
        }
        if s.active() {
            in_flight.extend(s.batch.tasks.iter().flatten().map(|n| n.key.clone()));
        }
    }
    if batches.is_empty() {
        println!("no Slurm batches in {}", args.results.display());
    }
    // Without named manifests and without experiments/, the batches are all there is to show.
    let manifests = match manifests::load_all(&args.manifests) {
        Ok(m) => m,
        Err(_) if args.manifests.is_empty() && !std::path::Path::new("experiments").is_dir() => {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    let (mut cached, mut flying, mut to_run) = (0, 0, 0);
    for (node, state) in prepared.plan.nodes.iter().zip(&prepared.states) {
        match state {
            NodeState::Cached => cached += 1,
            NodeState::ToRun(_) if in_flight.contains(node.key.as_str()) => flying += 1,
            NodeState::ToRun(_) => to_run += 1,
        }
    }
    println!(
        "{} nodes: {cached} cached, {flying} queued or running on Slurm, {to_run} to run",
        prepared.plan.nodes.len()
    );
    Ok(())
}
