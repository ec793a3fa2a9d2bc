//! The CLI inside Python: `python -m schedlab …` and `schedlab.run`/`plan`/`report` run the
//! library's own command-line code in this process, with a [`PolicyProvider`] installed, so
//! that manifests naming a Python policy run here — through the same plan, cache and
//! executors as every other manifest. The GIL is released while the command runs; each
//! Python-policy cell takes it for its calls.

use pyo3::prelude::*;
use schedlab::execute::custom_policy::{self, PolicyProvider};
use schedlab::manifest::python_policy::PythonPolicySpec;
use schedlab::sim::policy::Policy;

use crate::errors;
use crate::policy::PyPolicy;

/// Builds a cell's policy: `schedlab._bridge.load_policy` imports the file (its folder on the
/// import path, for its local modules) and instantiates the class with the parameters.
struct PyProvider;

impl PolicyProvider for PyProvider {
    fn build(&self, spec: &PythonPolicySpec) -> Result<Box<dyn Policy>, String> {
        Python::attach(|py| {
            let load = || -> PyResult<Box<dyn Policy>> {
                let params = serde_json::to_string(&spec.params).unwrap_or_else(|_| "{}".into());
                let object = py
                    .import("schedlab._bridge")?
                    .getattr("load_policy")?
                    .call1((
                        spec.path.to_string_lossy().into_owned(),
                        spec.class.clone(),
                        params,
                    ))?;
                Ok(Box::new(PyPolicy::new(py, object.unbind())?))
            };
            load().map_err(|e| {
                format!(
                    "policy {} from {}:\n{}",
                    spec.class,
                    spec.path.display(),
                    crate::policy::traceback(py, &e)
                )
            })
        })
    }
}

fn install(py: Python<'_>) {
    custom_policy::install(Box::new(PyProvider));
    if let Ok(python) = py
        .import("sys")
        .and_then(|sys| sys.getattr("executable"))
        .and_then(|e| e.extract::<String>())
    {
        schedlab::cli::python::set_self_command(
            python.into(),
            vec!["-m".to_string(), "schedlab".to_string()],
        );
    }
}

/// Runs the command line `argv` (program name first); raises the command's error.
#[pyfunction]
pub fn cli(py: Python<'_>, argv: Vec<String>) -> PyResult<()> {
    install(py);
    let parsed = schedlab::cli::parse(argv.into_iter().map(Into::into))
        .map_err(|e| errors::input(e.message))?;
    py.detach(|| schedlab::cli::dispatch(parsed)).map_err(|e| {
        let text = match e.hint {
            Some(h) => format!("{}\nhint: {h}", e.message),
            None => e.message,
        };
        if e.code == schedlab::cli::exit::INPUT {
            errors::input(text)
        } else {
            errors::failed(text)
        }
    })
}

/// Runs the command line `argv` as the `schedlab` command does: errors printed, the exit code
/// returned (`python -m schedlab`).
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    install(py);
    py.detach(|| schedlab::cli::main_with(argv.into_iter().map(Into::into)))
}
