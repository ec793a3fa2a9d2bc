//! A trace file read in the format its reading options name (docs/sources.md): SWF text
//! (`crate::swf`), a Batsim JSON workload (`crate::batsim`) or a job table through its mapping
//! (`crate::table`). Every door reads traces here.

use std::path::Path;

use crate::swf::{Mode, ReadOptions, SwfError, Trace, TraceFormat};

/// Reads the trace at `path` as `options` say, in their format.
pub fn read_path(path: &Path, mode: Mode, options: &ReadOptions) -> Result<Trace, SwfError> {
    match &options.format {
        TraceFormat::Swf => crate::swf::read_path_with(path, mode, options),
        TraceFormat::Batsim => crate::batsim::read_path(path, mode),
        TraceFormat::Table(reading) => crate::table::read_path(path, mode, reading.as_ref()),
    }
}
