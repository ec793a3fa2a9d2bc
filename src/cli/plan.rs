//! `schedlab plan`: a dry run. Lists every node with its state (cached, or to run and why), or
//! with `--explain` prints the canonical key material of one node.

use std::path::PathBuf;

use super::{CliError, manifests};
use crate::execute;
use crate::plan::NodeState;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab plan                                  every experiments/*.yaml: cached or run, and why
  schedlab plan --explain easy-vs-fcfs/sdsc-sp2.easy.interval-event

Exit codes: 0 planned; 2 bad input (manifests, traces, an unknown --explain node).")]
pub struct Args {
    /// Manifests to plan [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Results directory.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Print the key material of this node (a label such as `easy-vs-fcfs/sdsc-sp2.easy`, or a
    /// key prefix).
    #[arg(long, value_name = "NODE")]
    pub explain: Option<String>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let manifests = manifests::load_all(&args.manifests)?;
    let prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    let nodes = &prepared.plan.nodes;
    if let Some(wanted) = &args.explain {
        let Some(index) = nodes.iter().position(|n| {
            &n.label == wanted || (wanted.len() >= 6 && n.key.0.starts_with(wanted.as_str()))
        }) else {
            let err = CliError::input(format!("no node `{wanted}` in the plan"));
            let labels: Vec<&str> = nodes.iter().map(|n| n.label.as_str()).collect();
            return Err(
                match crate::manifest::did_you_mean(wanted, labels.iter().copied()) {
                    Some(s) => err.with_hint(format!("did you mean `{s}`?")),
                    None => err.with_hint("`schedlab plan` lists the node labels"),
                },
            );
        };
        let node = &nodes[index];
        let material = prepared.plan.material(&prepared.manifests, index);
        println!("node  {}\nkey   {}", node.label, node.key);
        println!(
            "{}",
            serde_json::to_string_pretty(&material).expect("material serializes")
        );
        return Ok(());
    }
    let mut to_run = 0;
    for (node, state) in nodes.iter().zip(&prepared.states) {
        match state {
            NodeState::Cached => println!("cached  {}  {}", node.key.short(), node.label),
            NodeState::ToRun(reason) => {
                to_run += 1;
                println!("run     {}  {}  ({reason})", node.key.short(), node.label);
            }
        }
    }
    eprintln!(
        "{} nodes: {to_run} to run, {} cached",
        nodes.len(),
        nodes.len() - to_run
    );
    Ok(())
}
