//! Computes the *model version*: a blake3 hash over the sources of the code that computes a
//! simulation node's schedule (the simulator without its metrics, the SWF reader, the schedule
//! files). It enters every simulation node's cache key, so editing a scheduler can never serve
//! stale cached results, while changes elsewhere (CLI, reports) keep the cache valid. A second
//! hash covers the metrics code (a metrics node's key: editing a metric recomputes metrics from
//! cached schedules, without simulating again), a third the code that writes an experiment's
//! aggregated result files.

use std::fs;
use std::path::{Path, PathBuf};

/// Source trees whose content defines what a simulation node computes.
const MODEL_SOURCES: &[&str] = &[
    "src/sim",
    "src/swf",
    "src/source.rs",
    "src/batsim/workload.rs",
    "src/batsim/locate.rs",
    "src/table",
    // Job tables' date-times become submit times through it.
    "src/calendar.rs",
    "src/execute/simulate_node.rs",
    "src/store/schedule.rs",
];
/// Source trees whose content defines what a metrics node computes (left out of the model).
const METRICS_SOURCES: &[&str] = &[
    "src/sim/metrics",
    "src/sim/timeseries.rs",
    "src/execute/metrics_node.rs",
    "src/store/jobs.rs",
    "src/store/timeseries.rs",
    "src/store/users.rs",
    "src/store/table.rs",
    "src/store/columns.rs",
    "src/store/penalties.rs",
    "src/execute/eet_outputs.rs",
    "src/store/eet.rs",
    // The container of a metrics entry's small tables (`tables.bundle`).
    "src/cache/bundle.rs",
];
/// Source trees whose content defines what an aggregation node writes.
const AGGREGATE_SOURCES: &[&str] = &["src/store", "src/execute/aggregate_node.rs"];

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    println!(
        "cargo:rustc-env=SCHEDLAB_MODEL_VERSION={}",
        version_of(MODEL_SOURCES, METRICS_SOURCES)
    );
    println!(
        "cargo:rustc-env=SCHEDLAB_METRICS_VERSION={}",
        version_of(METRICS_SOURCES, &[])
    );
    println!(
        "cargo:rustc-env=SCHEDLAB_AGGREGATE_VERSION={}",
        version_of(AGGREGATE_SOURCES, &[])
    );
}

/// blake3 over the sorted relative paths and contents of the `.rs` files under `roots`, except
/// those under `except`.
fn version_of(roots: &[&str], except: &[&str]) -> String {
    let mut files = Vec::new();
    for root in roots {
        println!("cargo:rerun-if-changed={root}");
        let path = Path::new(root);
        if path.is_file() {
            files.push(path.to_path_buf());
        } else {
            collect(path, &mut files);
        }
    }
    files.retain(|f| !except.iter().any(|e| f.starts_with(e)));
    // Sorted relative paths: the hash does not depend on directory order or checkout location.
    files.sort();
    let mut hasher = blake3::Hasher::new();
    for file in &files {
        let rel = file.to_string_lossy().replace('\\', "/");
        let bytes = fs::read(file).expect("read model source");
        hasher.update(rel.as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hasher.finalize().to_hex()[..16].to_string()
}
