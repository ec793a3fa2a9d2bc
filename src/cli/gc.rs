//! `schedlab gc`: removes cache entries that no current manifest reaches, but for the results
//! of named runs (`run --name`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{CliError, manifests};
use crate::cache::{self, EntryStore, ResultsLock};
use crate::execute;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab gc --dry-run                          what would go
  schedlab gc experiments/*.yaml --results results

Exit codes: 0 done; 1 an entry could not be removed; 2 bad input (manifests).")]
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
    let mut keep: BTreeSet<&str> = prepared.plan.nodes.iter().map(|n| n.key.as_str()).collect();
    // Named runs (`run --name`) stay reachable by `diff @NAME`: their aggregate entries are kept.
    let records = execute::pipeline::recorded_runs(&args.results);
    keep.extend(
        records
            .iter()
            .filter(|r| r.name.is_some())
            .map(|r| r.key.as_str()),
    );
    let state_dir = cache::state_dir(&args.results);
    let _lock = ResultsLock::acquire(&state_dir, true).map_err(CliError::failed)?;
    let entries = EntryStore::new(&state_dir);
    let mut removed = 0;
    // Entries present that a manifest still reaches (the plan's nodes not yet run have none).
    let mut kept = 0;
    for key in entries.keys().map_err(CliError::failed)? {
        if keep.contains(key.as_str()) {
            kept += 1;
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
    // Half-present entries (a directory without its marker) and quarantined ones are never
    // used again: always removed.
    for key in entries.partial_keys() {
        removed += 1;
        if args.dry_run {
            println!("would remove {key} (incomplete)");
        } else {
            entries.remove(&key).map_err(CliError::failed)?;
            println!("removed {key} (incomplete)");
        }
    }
    for dir in entries.quarantined() {
        removed += 1;
        let what = dir.file_name().unwrap_or_default().to_string_lossy();
        if args.dry_run {
            println!("would remove {what} (quarantined)");
        } else {
            std::fs::remove_dir_all(&dir).map_err(|e| {
                CliError::failed(format!("failed to remove {}: {e}", dir.display()))
            })?;
            println!("removed {what} (quarantined)");
        }
    }
    if !args.dry_run {
        entries.sweep_staging().map_err(CliError::failed)?;
        // What interrupted publishes left in the results folder.
        for path in cache::publish::sweep(&args.results).map_err(CliError::failed)? {
            removed += 1;
            println!("removed {} (interrupted publish)", path.display());
        }
    }
    eprintln!(
        "{removed} entries {}; {kept} kept",
        if args.dry_run { "to remove" } else { "removed" },
    );
    Ok(())
}
