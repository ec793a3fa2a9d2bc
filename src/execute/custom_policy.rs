//! Policies written in another language, for the cells that name one (`policy: python`,
//! docs/policies.md "In a manifest"). The library cannot start Python itself: the Python
//! package installs a [`PolicyProvider`] when it is imported, and a run in that process builds
//! each such cell's policy through it. A process without one (the plain CLI) reports what to
//! install — the CLI first hands such runs to Python when it can find the package
//! (`cli::python`).

use std::sync::OnceLock;

use crate::manifest::python_policy::PythonPolicySpec;
use crate::sim::policy::Policy;

/// Builds a cell's policy from its spec: imports the file, instantiates the class with the
/// parameters. Called once per simulated cell, on the thread that simulates it.
pub trait PolicyProvider: Send + Sync {
    fn build(&self, spec: &PythonPolicySpec) -> Result<Box<dyn Policy>, String>;
}

static PROVIDER: OnceLock<Box<dyn PolicyProvider>> = OnceLock::new();

/// Installs the process's provider (the first one stays).
pub fn install(provider: Box<dyn PolicyProvider>) {
    let _ = PROVIDER.set(provider);
}

/// Whether this process can run Python policies.
pub fn installed() -> bool {
    PROVIDER.get().is_some()
}

/// The policy of `spec`, or why there is none.
pub fn build(spec: &PythonPolicySpec) -> Result<Box<dyn Policy>, String> {
    match PROVIDER.get() {
        Some(p) => p.build(spec),
        None => Err(format!(
            "{} is a Python policy, and this process has no Python: run the manifest with the schedlab Python package installed (`make venv`, then `.venv/bin/python -m schedlab run ...`)",
            spec.path.display()
        )),
    }
}
