//! Arrow batches to pyarrow without a copy: the batch is exported through the Arrow C data
//! interface and imported by `pyarrow.RecordBatch._import_from_c`, which takes ownership of
//! the buffers (they are freed when Python drops the batch).

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::prelude::*;

/// `batch` as a `pyarrow.RecordBatch`, its schema's metadata kept.
pub fn to_pyarrow<'py>(py: Python<'py>, batch: RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    let schema = batch.schema();
    let data = StructArray::from(batch).into_data();
    let mut array = FFI_ArrowArray::new(&data);
    let mut ffi_schema = FFI_ArrowSchema::try_from(data.data_type())
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let pyarrow = py.import("pyarrow")?;
    let imported = pyarrow.getattr("RecordBatch")?.call_method1(
        "_import_from_c",
        (
            &mut array as *mut FFI_ArrowArray as usize,
            &mut ffi_schema as *mut FFI_ArrowSchema as usize,
        ),
    )?;
    // pyarrow moved the array and schema out (their release callbacks are now its own).
    if schema.metadata().is_empty() {
        return Ok(imported);
    }
    let metadata = pyo3::types::PyDict::new(py);
    for (k, v) in schema.metadata() {
        metadata.set_item(k, v)?;
    }
    imported.call_method1("replace_schema_metadata", (metadata,))
}
