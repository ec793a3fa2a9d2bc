//! `schedlab worker BATCH_DIR` (hidden): what a Slurm array task or `srun` step runs — compute
//! the nodes of one task of a recorded batch into the shared cache (docs/slurm.md).

use std::path::PathBuf;

use super::CliError;
use crate::execute::executor::slurm::worker::{self, PREFIX};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The batch directory (`results/.schedlab/slurm/<id>`).
    pub batch: PathBuf,
    /// The task to compute [default: --offset + SLURM_ARRAY_TASK_ID].
    #[arg(long)]
    pub task: Option<usize>,
    /// Added to SLURM_ARRAY_TASK_ID (a batch larger than MaxArraySize spans several arrays).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let task = match args.task {
        Some(t) => t,
        None => {
            let index = std::env::var("SLURM_ARRAY_TASK_ID")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| {
                    CliError::input("no --task given and SLURM_ARRAY_TASK_ID is not set")
                })?;
            args.offset + index
        }
    };
    match worker::run_task(&args.batch, task) {
        Ok(report) if report.failed == 0 => Ok(()),
        Ok(report) => Err(CliError::failed(format!(
            "{} of {} nodes failed",
            report.failed,
            report.failed + report.computed + report.cached
        ))),
        Err(e) => {
            // One line the submitting process recognises (with the hint: it is what the user
            // needs to read), then the usual error.
            let hint = e.hint();
            match &hint {
                Some(h) => eprintln!("{PREFIX} error: {e}; {h}"),
                None => eprintln!("{PREFIX} error: {e}"),
            }
            let err = CliError::failed(e);
            Err(match hint {
                Some(h) => err.with_hint(h),
                None => err,
            })
        }
    }
}
