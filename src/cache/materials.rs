//! The key material each node had when it last ran, per experiment, so `plan` can say *why* a
//! node re-runs (which parameter, input or model version changed).
//!
//! One gzip file of JSON lines per experiment (`keys/<experiment>.jsonl.gz`, one
//! `{"label", "material"}` object a line), written and read one line at a time: a grid of a
//! million cells never holds its record in memory, and the repetitive material compresses well.

use std::fs;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use super::CacheError;

#[derive(Clone, Debug)]
pub struct Materials {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct Line {
    label: String,
    material: serde_json::Value,
}

impl Materials {
    pub fn new(state_dir: &Path) -> Self {
        Materials {
            dir: state_dir.join("keys"),
        }
    }

    fn path(&self, experiment: &str) -> PathBuf {
        self.dir.join(format!("{experiment}.jsonl.gz"))
    }

    /// True when a record of `experiment` exists.
    pub fn exists(&self, experiment: &str) -> bool {
        self.path(experiment).is_file()
    }

    /// Calls `f(label, material)` for each node recorded for the last run of `experiment`
    /// (nothing when never run; an unreadable record ends early: reasons are best effort).
    pub fn for_each(&self, experiment: &str, mut f: impl FnMut(&str, serde_json::Value)) {
        let Ok(file) = fs::File::open(self.path(experiment)) else {
            return;
        };
        for line in BufReader::new(MultiGzDecoder::new(BufReader::new(file))).lines() {
            let Ok(line) = line else { return };
            let Ok(item) = serde_json::from_str::<Line>(&line) else {
                return;
            };
            f(&item.label, item.material);
        }
    }

    /// Records the material of the nodes of `experiment` (replacing the previous record),
    /// atomically.
    pub fn save(
        &self,
        experiment: &str,
        records: impl Iterator<Item = (String, serde_json::Value)>,
    ) -> Result<(), CacheError> {
        fs::create_dir_all(&self.dir).map_err(|e| CacheError::io(&self.dir, e))?;
        let path = self.path(experiment);
        let tmp = crate::store::readable_temp()
            .tempfile_in(&self.dir)
            .map_err(|e| CacheError::io(&self.dir, e))?;
        let io = |e| CacheError::io(&path, e);
        let mut out = GzEncoder::new(BufWriter::new(tmp.as_file()), Compression::fast());
        for (label, material) in records {
            serde_json::to_writer(&mut out, &Line { label, material }).map_err(|e| io(e.into()))?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.finish().map_err(io)?.flush().map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
        // The record of earlier versions, superseded by this one.
        let _ = fs::remove_file(self.dir.join(format!("{experiment}.json")));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_reads_back_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let m = Materials::new(dir.path());
        let mut seen = Vec::new();
        m.for_each("x", |l, v| seen.push((l.to_string(), v)));
        assert!(seen.is_empty(), "never run: nothing recorded");
        let records = (0..3).map(|i| (format!("x/c{i}"), json!({"i": i})));
        m.save("x", records).unwrap();
        m.for_each("x", |l, v| seen.push((l.to_string(), v)));
        assert_eq!(
            seen,
            vec![
                ("x/c0".to_string(), json!({"i": 0})),
                ("x/c1".to_string(), json!({"i": 1})),
                ("x/c2".to_string(), json!({"i": 2})),
            ]
        );
    }
}
