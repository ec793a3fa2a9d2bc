//! Running a manifest that names a Python policy from the plain CLI: the CLI has no Python in
//! it, so it hands the whole command to the Python package (`python -m schedlab …`, the same
//! library with a policy provider installed, the same cache) and exits with its code. Where no
//! such Python is found, the error says what to install.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::CliError;
use crate::manifest::Manifest;

static SELF_COMMAND: std::sync::OnceLock<(PathBuf, Vec<String>)> = std::sync::OnceLock::new();

/// Records how to run this command line again when it runs inside Python (the interpreter and
/// `-m schedlab`): what Slurm tasks started from here run.
pub fn set_self_command(python: PathBuf, args: Vec<String>) {
    let _ = SELF_COMMAND.set((python, args));
}

/// The command that runs the schedlab command in this process's Python, when it is one.
pub fn self_command() -> Option<(PathBuf, Vec<String>)> {
    SELF_COMMAND.get().cloned()
}

/// The environment variable naming the Python interpreter to use.
pub const PYTHON_ENV: &str = "SCHEDLAB_PYTHON";

/// The first scheduler of `manifests` that is a Python policy, as `experiment: scheduler`.
pub fn first_python_policy(manifests: &[Manifest]) -> Option<String> {
    manifests.iter().find_map(|m| {
        m.cells
            .iter()
            .find(|c| c.scheduler.python.is_some())
            .map(|c| format!("{}: scheduler `{}`", m.path.display(), c.scheduler.name))
    })
}

/// Interpreters to try, in order: `$SCHEDLAB_PYTHON`, `.venv/bin/python` here, the one of the
/// repository this binary was built in (`target/release/schedlab` → `.venv/bin/python`), then
/// `python3`.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os(PYTHON_ENV) {
        out.push(PathBuf::from(p));
        return out;
    }
    out.push(PathBuf::from(".venv/bin/python"));
    if let Ok(exe) = std::env::current_exe()
        && let Some(repo) = exe.parent().and_then(Path::parent).and_then(Path::parent)
    {
        out.push(repo.join(".venv/bin/python"));
    }
    out.push(PathBuf::from("python3"));
    out
}

/// An interpreter that can import the schedlab package.
fn find() -> Result<PathBuf, Vec<PathBuf>> {
    let tried = candidates();
    for python in &tried {
        let ok = Command::new(python)
            .args(["-c", "import schedlab._schedlab"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(python.clone());
        }
    }
    Err(tried)
}

/// Runs this process's command line again through the Python package and exits with its code.
/// `what` names the Python policy that needs it (for the error).
pub fn hand_over(what: &str) -> Result<std::convert::Infallible, CliError> {
    let python = find().map_err(|tried| {
        CliError::input(format!(
            "{what} is a Python policy: the schedlab command runs it through the schedlab Python package, and no Python with it was found (tried {})",
            tried
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_hint(format!(
            "run `make venv` in the repository (or `pip install .` into your environment), or set {PYTHON_ENV} to a Python that has it"
        ))
    })?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let status = Command::new(&python)
        .args(["-m", "schedlab"])
        .args(&args)
        .status()
        .map_err(|e| CliError::failed(format!("could not start {}: {e}", python.display())))?;
    std::process::exit(status.code().unwrap_or(1));
}
