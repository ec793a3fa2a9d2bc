//! Job tables of modern clusters (docs/sources.md, "Job tables"): CSV or Parquet files of one
//! row per job (PM100, Philly, Helios, Alibaba PAI, or your own), and Slurm accounting as
//! `sacct --parsable2` prints it (`format: sacct`, the shipped mapping `slurm`, with Slurm's
//! value formats in [`slurm`]) or `sacct --json` ([`sacct_json`]), read through a column mapping (`mapping`: shipped ones by name,
//! or written in YAML) into a [`crate::swf::Trace`].
//!
//! File in, trace out: the reader knows nothing of machines or schedulers, applies the SWF
//! reader's rules and counts every row it leaves out by reason.

mod cells;
pub mod mapping;
mod number;
mod reader;
pub mod sacct_json;
pub mod slurm;
pub mod time;
pub mod zone;

pub use mapping::{Keep, MappingRef, RawMapping, TableFormat, TableReading};
pub use reader::read_path;
