//! The package's exceptions: every library error becomes one carrying the library's own
//! message (file, line, key path, hint), as the CLI prints it.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use schedlab::api::ApiError;
use schedlab::api::error::ErrorKind;

create_exception!(
    _schedlab,
    SchedlabError,
    PyException,
    "Any error schedlab reports."
);
create_exception!(
    _schedlab,
    InputError,
    SchedlabError,
    "Bad input: a trace, a setting, a manifest (the CLI's exit code 2)."
);
create_exception!(
    _schedlab,
    SimulationError,
    SchedlabError,
    "The work failed: a policy that raised or decided the impossible, a write that failed (the CLI's exit code 1)."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SchedlabError", py.get_type::<SchedlabError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    Ok(())
}

/// The Python exception for a library error.
pub fn to_py(e: ApiError) -> PyErr {
    let text = e.to_string();
    match e.kind {
        ErrorKind::Input => InputError::new_err(text),
        ErrorKind::Failed => SimulationError::new_err(text),
    }
}

/// An input error with `message`.
pub fn input(message: impl Into<String>) -> PyErr {
    InputError::new_err(message.into())
}

/// A failure with `message` (the CLI's exit code 1).
pub fn failed(message: impl Into<String>) -> PyErr {
    SimulationError::new_err(message.into())
}
