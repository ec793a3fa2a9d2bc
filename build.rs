//! Computes the *model version*: a blake3 hash over the sources of the code that computes a
//! simulation node (the simulator, the SWF reader and the metrics). It enters every simulation
//! node's cache key, so editing a scheduler can never serve stale cached results, while changes
//! elsewhere (CLI, reports) keep the cache valid.

use std::fs;
use std::path::{Path, PathBuf};

/// Source trees whose content defines what a simulation node computes.
const MODEL_SOURCES: &[&str] = &["src/sim", "src/swf"];

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
    let mut files = Vec::new();
    for dir in MODEL_SOURCES {
        println!("cargo:rerun-if-changed={dir}");
        collect(Path::new(dir), &mut files);
    }
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
    let hash = hasher.finalize().to_hex();
    println!("cargo:rustc-env=SCHEDLAB_MODEL_VERSION={}", &hash[..16]);
}
