//! The run configuration file, `schedlab.yaml` in the current directory (or `--config FILE`):
//! which executor `schedlab run` uses by default and the Slurm settings. It holds where and how
//! nodes run, never what they compute, so nothing in it enters a key.
//!
//! ```yaml
//! executor: slurm          # default executor of `schedlab run` (default: local)
//! slurm:
//!   partition: short
//!   time: "00:30:00"
//!   mem: 2G
//! ```

// Errors are manifest-style located errors, as large as the manifest's own.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::slurm::config::{RawSlurm, SlurmConfig};
use crate::manifest::ManifestError;

/// The file read when no `--config` is given (if it exists).
pub const DEFAULT_CONFIG: &str = "schedlab.yaml";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    /// Threads on this machine (`-j N`).
    #[default]
    Local,
    /// Slurm job arrays over the shared cache (docs/slurm.md).
    Slurm,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRunConfig {
    executor: Option<ExecutorKind>,
    #[serde(default)]
    slurm: RawSlurm,
}

/// Checked run settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunConfig {
    pub executor: ExecutorKind,
    pub slurm: SlurmConfig,
    /// The file they came from, if any.
    pub source: Option<PathBuf>,
}

impl RunConfig {
    /// Reads `path`, or `schedlab.yaml` when `path` is `None` and that file exists (defaults
    /// otherwise). Errors name the file, line and key.
    pub fn load(path: Option<&Path>) -> Result<RunConfig, ManifestError> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None if Path::new(DEFAULT_CONFIG).is_file() => PathBuf::from(DEFAULT_CONFIG),
            None => return Ok(RunConfig::default()),
        };
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ManifestError::new(&file, "", format!("cannot read the file: {e}")))?;
        let mut config = Self::parse(&text, &file)?;
        config.source = Some(path);
        Ok(config)
    }

    /// Parses configuration text (`file` names it in messages).
    pub fn parse(text: &str, file: &str) -> Result<RunConfig, ManifestError> {
        let key_path = RefCell::new(String::new());
        let raw: Option<RawRunConfig> = serde_saphyr::with_deserializer_from_str(text, |de| {
            serde_path_to_error::deserialize(de).map_err(|e| {
                *key_path.borrow_mut() = e.path().to_string();
                e.into_inner()
            })
        })
        .map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            let message = e.to_string();
            let message = message.lines().next().unwrap_or_default();
            let path = key_path.borrow().replace(".?", "");
            let path = if path == "." { String::new() } else { path };
            ManifestError::new(file, path, message.trim_start_matches("error: "))
                .at(line, column)
                .with_source(text)
        })?;
        let raw = raw.unwrap_or_default();
        let slurm = SlurmConfig::resolve(raw.slurm)
            .map_err(|(key, message)| ManifestError::new(file, key, message))?;
        Ok(RunConfig {
            executor: raw.executor.unwrap_or_default(),
            slurm,
            source: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_sets_the_executor_and_slurm_defaults() {
        let c = RunConfig::parse(
            "executor: slurm\nslurm:\n  partition: short\n  max_parallel: 8\n",
            "schedlab.yaml",
        )
        .unwrap();
        assert_eq!(c.executor, ExecutorKind::Slurm);
        assert_eq!(c.slurm.partition.as_deref(), Some("short"));
        assert_eq!(c.slurm.max_parallel, Some(8));
        assert_eq!(RunConfig::parse("", "x").unwrap(), RunConfig::default());
    }

    #[test]
    fn unknown_keys_and_bad_values_are_located() {
        let e = RunConfig::parse("slurm:\n  partiton: short\n", "schedlab.yaml").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("schedlab.yaml:2"), "{text}");
        assert!(text.contains("partiton"), "{text}");
        let e = RunConfig::parse("slurm:\n  mem: lots\n", "schedlab.yaml").unwrap_err();
        assert!(e.to_string().contains("slurm.mem"), "{e}");
    }
}
