//! Batsim's file formats (docs/sources.md): JSON workloads read as traces (`read_path`: jobs
//! whose profiles are `delay`s, `nb_res` as the machine size), and a simulated schedule written
//! in the form of Batsim's `jobs.csv` output, which evalys reads (`jobs_csv`).
//!
//! Text in, [`crate::swf::Trace`] out: the reader knows nothing of machines or schedulers, and
//! applies the SWF reader's rules and anomaly counts.

pub mod jobs_csv;
pub(crate) mod locate;
mod workload;

pub use workload::{read_bytes, read_path};
