//! `schedlab simulate`: one trace, one scheduler, the run summary on stdout.

use std::path::PathBuf;

use crate::sim::SchedulerKind;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// SWF trace (plain or gzip).
    pub trace: PathBuf,
    /// Scheduling policy.
    #[arg(long, short)]
    pub scheduler: SchedulerKind,
}

pub fn run(_args: Args) -> Result<(), super::CliError> {
    Err(super::CliError::failed("not yet"))
}
