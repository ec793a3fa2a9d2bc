//! The key material each node had when it last ran, per experiment, so `plan` can say *why* a
//! node re-runs (which parameter, input or model version changed).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::CacheError;
use super::digests::write_atomic;

#[derive(Clone, Debug)]
pub struct Materials {
    dir: PathBuf,
}

impl Materials {
    pub fn new(state_dir: &Path) -> Self {
        Materials {
            dir: state_dir.join("keys"),
        }
    }

    fn path(&self, experiment: &str) -> PathBuf {
        self.dir.join(format!("{experiment}.json"))
    }

    /// Node label → key material of the last run of `experiment` (empty when never run).
    pub fn load(&self, experiment: &str) -> BTreeMap<String, serde_json::Value> {
        fs::read_to_string(self.path(experiment))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Records the material of the nodes of `experiment` (replacing the previous record).
    pub fn save(
        &self,
        experiment: &str,
        materials: &BTreeMap<String, serde_json::Value>,
    ) -> Result<(), CacheError> {
        fs::create_dir_all(&self.dir).map_err(|e| CacheError::io(&self.dir, e))?;
        let text = serde_json::to_string_pretty(materials).expect("materials serialize");
        write_atomic(&self.path(experiment), text.as_bytes())
    }
}
