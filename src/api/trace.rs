//! Reading a trace as every door does: the reader's located errors with their hints, and a
//! warning count of malformed lines skipped in lenient mode.

use std::path::Path;

use super::ApiError;
use crate::swf::{Mode, ReadOptions, Trace, TraceFormat};

/// Reads the trace at `path`: SWF (plain or gzip), or a Batsim JSON workload when the options
/// say so or the name ends in `.json` (docs/sources.md). With `lenient`, malformed lines (jobs)
/// are skipped and counted (`Trace::malformed`) instead of failing the read.
pub fn load(path: &Path, lenient: bool, options: &ReadOptions) -> Result<Trace, ApiError> {
    let mode = Mode::from_lenient(lenient);
    let options = options.clone().for_path(path);
    if !options.format.is_swf() && options.swf_fields() != ReadOptions::default() {
        if let TraceFormat::Table(_) = options.format {
            return Err(ApiError::input(format!(
                "{}: the memory and extended-field options say how to read SWF fields, but this \
                 is a job table",
                path.display()
            ))
            .with_hint("the mapping says how the table's columns are read (docs/sources.md, \"Job tables\")"));
        }
        return Err(ApiError::input(format!(
            "{}: the memory and extended-field options say how to read SWF fields, but this is a \
             Batsim workload",
            path.display()
        ))
        .with_hint(
            "drop them (a Batsim job has none); a path ending in .json is read as Batsim (docs/sources.md)",
        ));
    }
    if options.format.is_swf() && crate::table::TableFormat::of_path(path).is_some() {
        return Err(ApiError::input(format!(
            "{}: a job table (CSV or Parquet) is read through a column mapping, and none was given",
            path.display()
        ))
        .with_hint(format!(
            "pass --mapping NAME|FILE (shipped: {}; docs/sources.md, \"Job tables\")",
            crate::table::mapping::shipped_names()
        )));
    }
    crate::source::read_path(path, mode, &options).map_err(|e| {
        // `--lenient` skips malformed lines; it cannot mend a damaged file.
        let hint = e.hint().filter(|_| !(lenient && e.is_malformed_line()));
        let err = ApiError::input(&e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    })
}
