//! What `make test` needs on a fresh clone (issue 35). The shared reference folder (`../shared`:
//! traces not bundled, the pyss fixtures) may be absent: only tests/common/shared.rs says where
//! it is, and a test that needs it skips there with its reason. `.ci/run` runs the suite once
//! more with `SCHEDLAB_SHARED=/nonexistent`; this test catches a test that would find the folder
//! anyway by naming the path itself, which that run cannot see while CI has `../shared`.

use std::fs;
use std::path::{Path, PathBuf};

/// Every file under `dir` whose name ends in one of `exts`, recursively.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, exts, out);
        } else if path
            .extension()
            .is_some_and(|e| exts.iter().any(|x| e == *x))
        {
            out.push(path);
        }
    }
}

#[test]
fn only_the_shared_helper_names_the_shared_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let helper = root.join("tests/common/shared.rs");
    // Spelt in two parts, so that this file does not name it.
    let needle = concat!("..", "/shared");
    let mut sources = Vec::new();
    files(&root.join("src"), &["rs"], &mut sources);
    files(&root.join("tests"), &["rs", "py"], &mut sources);
    assert!(sources.len() > 100, "found {} sources", sources.len());
    let mut naming = Vec::new();
    for path in sources.iter().filter(|p| **p != helper) {
        let text = fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.contains(needle) && !code.starts_with("//") && !code.starts_with('#') {
                naming.push(format!("{}:{}: {code}", path.display(), n + 1));
            }
        }
    }
    assert!(
        naming.is_empty(),
        "read shared data through tests/common/shared.rs (it skips when the folder is absent), \
         or use the bundled copy in workloads/: {naming:#?}"
    );
}
