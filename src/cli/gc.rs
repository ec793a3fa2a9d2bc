//! `schedlab gc`: removes cache entries that no current manifest reaches.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{CliError, manifests};
use crate::cache::{self, EntryStore, ResultsLock};
use crate::execute;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The manifests whose nodes to keep [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Results directory.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// List what would be removed without removing it.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let manifests = manifests::load_all(&args.manifests)?;
    let prepared = execute::prepare(manifests, &args.results).map_err(CliError::input)?;
    let keep: BTreeSet<&str> = prepared.plan.nodes.iter().map(|n| n.key.as_str()).collect();
    let state_dir = cache::state_dir(&args.results);
    let _lock = ResultsLock::acquire(&state_dir, true).map_err(CliError::failed)?;
    let entries = EntryStore::new(&state_dir);
    let mut removed = 0;
    for key in entries.keys().map_err(CliError::failed)? {
        if keep.contains(key.as_str()) {
            continue;
        }
        removed += 1;
        if args.dry_run {
            println!("would remove {key}");
        } else {
            entries.remove(&key).map_err(CliError::failed)?;
            println!("removed {key}");
        }
    }
    if !args.dry_run {
        entries.sweep_staging().map_err(CliError::failed)?;
    }
    eprintln!(
        "{removed} entries {}; {} kept",
        if args.dry_run { "to remove" } else { "removed" },
        keep.len()
    );
    Ok(())
}
