//! The Standard Workload Format (SWF) reader and writers (workloads, simulated schedules). Reading is streaming, gzip or plain
//! (sniffed from the magic bytes), strict or lenient, with every anomaly counted (docs/swf.md).
//!
//! The reader turns text into [`crate::sim::Workload`]s; it knows nothing of machines or
//! schedulers. Jobs that can never be simulated (unknown or zero runtime, unknown processors,
//! unknown submit time) are left out of the workload and counted by reason, never dropped
//! silently.

mod error;
mod fields;
mod header;
mod info;
pub(crate) mod names;
mod nodespec;
mod options;
mod reader;
mod request;
mod schedule;
mod writer;

pub use error::{ErrorKind, JsonValueError, SwfError, TableValueError};
pub use fields::{FIELD_COUNT, field_name};
pub use header::Header;
pub use info::{TraceInfo, render_info};
pub use options::{Extended, MemoryReading, ReadOptions, TraceFormat};
pub use reader::{
    Anomalies, Malformed, Mode, Trace, read, read_bytes, read_bytes_with, read_header_path,
    read_path, read_path_with,
};
pub use schedule::{
    ScheduleHeader, ScheduledJob, write_schedule, write_schedule_header, write_scheduled_job,
};
pub use writer::{Inexact, to_swf, write_swf, write_trace};
