//! The experiments shipped in `experiments/`, by name: tests load and run these, never whatever
//! else the folder holds. A user's own studies there belong to `make all` (which runs every
//! `experiments/*.yaml`), not to `make test`: they neither slow the suite nor, when they are
//! drafts, break it (README, "Your own studies"). A new shipped experiment is added here.

use std::path::PathBuf;

/// The shipped manifests' names (`experiments/<name>.yaml`).
pub const SHIPPED_EXPERIMENTS: [&str; 11] = [
    "aleang-example1",
    "easy-vs-fcfs",
    "fairshare-orders",
    "fairshare-penalties",
    "gpu-tables",
    "lpc-queues",
    "markov-arrivals",
    "metacentrum",
    "python-policies",
    "reservations",
    "user-aware",
];

/// The shipped manifests' paths in this checkout, in the order of [`SHIPPED_EXPERIMENTS`].
pub fn shipped_manifests() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("experiments");
    SHIPPED_EXPERIMENTS
        .iter()
        .map(|name| dir.join(format!("{name}.yaml")))
        .collect()
}
