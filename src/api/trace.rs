//! Reading a trace as every door does: the reader's located errors with their hints, and a
//! warning count of malformed lines skipped in lenient mode.

use std::path::Path;

use super::ApiError;
use crate::swf::{Mode, ReadOptions, Trace};

/// Reads the SWF trace at `path` (plain or gzip). With `lenient`, malformed lines are skipped
/// and counted (`Trace::malformed`) instead of failing the read.
pub fn load(path: &Path, lenient: bool, options: &ReadOptions) -> Result<Trace, ApiError> {
    let mode = Mode::from_lenient(lenient);
    crate::swf::read_path_with(path, mode, options).map_err(|e| {
        // `--lenient` skips malformed lines; it cannot mend a damaged file.
        let hint = e.hint().filter(|_| !(lenient && e.is_malformed_line()));
        let err = ApiError::input(&e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    })
}
