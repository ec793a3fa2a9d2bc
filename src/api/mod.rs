//! The library's front door: what the CLI (`src/cli`) and the Python package (`python/`) call,
//! so that neither holds a second copy of a run path. Each function takes plain settings and
//! returns data; printing, argument parsing and conversion to Python objects stay in the doors.
//!
//! - [`trace`]: reading a trace as the CLI does (located errors, hints).
//! - [`simulate`]: one trace on one machine under a built-in scheduler or a [`Policy`]; the run
//!   summary, per-job records and the `jobs.parquet` columns as an Arrow batch.
//! - [`sections`]: a manifest's queue setup, reservations and fairshare as options of one run,
//!   read by the manifest's own parser.
//! - [`generated`]: a generated workload from a manifest's workload mapping.
//!
//! [`Policy`]: crate::sim::policy::Policy

pub mod error;
pub mod generated;
pub mod sections;
pub mod simulate;
pub mod trace;

pub use error::ApiError;
