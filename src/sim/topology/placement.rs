//! Node placement: which class and which nodes a job takes among those that fit, a named,
//! deterministic component of a scheduler configuration (queue order × backfilling rule ×
//! placement).
//!
//! Whether a job fits (now, or at some future time) never depends on the placement policy: it is
//! a count of nodes that can take the job's per-node amounts (docs/semantics.md). The policy
//! only chooses among the classes and nodes that fit:
//!
//! - [`Placement::FirstFit`]: classes in topology order (clusters as listed, classes as listed
//!   within a cluster), nodes by increasing index within the class.
//! - [`Placement::BestFit`]: classes by increasing node size (cores, then memory, then GPUs;
//!   ties in topology order) — a 1-core/16 GB job goes to a 16 GB node rather than to a 512 GB
//!   one (Klusáček & Rudová's Example 5); nodes by increasing free cores, then free memory, then
//!   index (the tightest node first), measured at the start time the job is placed at.

use crate::sim::resources::ResourceVec;

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    #[default]
    FirstFit,
    BestFit,
}

impl Placement {
    pub const ALL: [Placement; 2] = [Placement::FirstFit, Placement::BestFit];

    pub fn name(self) -> &'static str {
        match self {
            Placement::FirstFit => "first_fit",
            Placement::BestFit => "best_fit",
        }
    }

    /// Sorts `classes` (global class indices, in topology order) into the order this policy
    /// tries them, given each class's per-node capacity.
    pub fn order_classes(self, classes: &mut [u32], capacity: impl Fn(u32) -> ResourceVec) {
        match self {
            Placement::FirstFit => classes.sort_unstable(),
            Placement::BestFit => classes.sort_by_key(|&c| (capacity(c), c)),
        }
    }

    /// The key nodes are chosen by (smallest first), from the node's index and what it has free
    /// at the time the job is placed.
    #[inline]
    pub fn node_key(self, node: u32, free: &ResourceVec) -> (u64, u64, u32) {
        match self {
            Placement::FirstFit => (0, 0, node),
            Placement::BestFit => (free.0[0], free.0[1], node),
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Placement::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown placement {s:?} (expected first_fit or best_fit)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_tries_the_smallest_nodes_first() {
        let caps = [
            ResourceVec([80, 512, 0]),
            ResourceVec([8, 16, 0]),
            ResourceVec([8, 16, 0]),
            ResourceVec([8, 8, 0]),
        ];
        let mut c = vec![0, 1, 2, 3];
        Placement::BestFit.order_classes(&mut c, |i| caps[i as usize]);
        assert_eq!(c, [3, 1, 2, 0]);
        Placement::FirstFit.order_classes(&mut c, |i| caps[i as usize]);
        assert_eq!(c, [0, 1, 2, 3]);
        assert_eq!("best_fit".parse(), Ok(Placement::BestFit));
        assert!("worst_fit".parse::<Placement>().is_err());
    }
}
