//! Where the shared reference data is (`../shared`: papers, traces not bundled, the pyss
//! fixtures), and whether it is there: the one place integration tests ask. A fresh clone has no
//! `../shared`; a test that needs it then skips, printing its reason, and passes.
//!
//! `SCHEDLAB_SHARED` names the folder (default `<crate root>/../shared`); `.ci/run` sets it to a
//! missing folder for one run of the suite, so a test that reads shared data without asking
//! here fails there. `tests/fresh_clone.rs` checks that no other test names `../shared`.

use std::path::PathBuf;

/// The environment variable naming the shared folder.
pub const SHARED_VAR: &str = "SCHEDLAB_SHARED";

/// The shared folder: `$SCHEDLAB_SHARED` when set and not empty, else `<crate root>/../shared`.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os(SHARED_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// `relative` inside the shared folder, or `None` when the folder is absent, after printing
/// `skipped: …` with the reason; the caller returns. When the folder is there, `relative` must
/// be too: a missing file in a present folder is a failure, never a skip.
pub fn shared(relative: &str) -> Option<PathBuf> {
    let dir = shared_dir();
    if !dir.is_dir() {
        eprintln!(
            "skipped: {} not present (the shared reference folder; {SHARED_VAR} names another)",
            dir.join(relative).display()
        );
        return None;
    }
    let path = dir.join(relative);
    assert!(
        path.exists(),
        "{} is missing from the shared folder {} ({SHARED_VAR} or ../shared)",
        relative,
        dir.display()
    );
    Some(path)
}
