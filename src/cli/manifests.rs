//! Finding and loading the manifests a command works on: those named, or every
//! `experiments/*.yaml` when none are.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::manifest::{self, Manifest};

pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Manifest>, CliError> {
    let paths = if paths.is_empty() {
        default_manifests()?
    } else {
        paths.to_vec()
    };
    paths
        .iter()
        .map(|p| manifest::load(p).map_err(CliError::input))
        .collect()
}

fn default_manifests() -> Result<Vec<PathBuf>, CliError> {
    let dir = Path::new("experiments");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| {
            CliError::input(format!("failed to list {}: {e}", dir.display()))
                .with_hint("name the manifests to use, or run from the project folder")
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(
            CliError::input("no manifests in experiments/").with_hint("name the manifests to use")
        );
    }
    Ok(found)
}
