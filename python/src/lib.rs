//! `schedlab._schedlab`: the Python package's native module, a thin layer over the schedlab
//! library (`schedlab::api`). It converts arguments, hands results to pyarrow through the Arrow
//! C data interface, and runs Python policies through the library's decision interface
//! ([`schedlab::sim::policy`]). Everything else — reading, simulating, summarising — is the
//! library's own code, the same the CLI runs.
//!
//! The public Python API is `python/schedlab/__init__.py`; this module is private to it.

mod arrow;
mod cli;
mod errors;
mod gym;
mod policy;
mod trace;
mod view;

use pyo3::prelude::*;

#[pymodule]
fn _schedlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(trace::read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(policy::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(view::limit_names, m)?)?;
    m.add_class::<view::ViewState>()?;
    m.add_class::<view::PyPlan>()?;
    m.add_class::<view::PyPlacer>()?;
    m.add_class::<gym::GymEnvs>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
