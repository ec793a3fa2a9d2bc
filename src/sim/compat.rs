//! Compatibility settings: a scheduler that reproduces another simulator's own behaviours where
//! they differ from ours, so that a study moved here gets that simulator's schedule job for job
//! (docs/aleang.md).
//!
//! `compat: aleang` (a scheduler key) runs AleaNG's `FairshareAggressiveBackfilling` as AleaNG
//! implements it, on a topology: [`crate::sim::scheduler::node::AleangAggressive`] for the
//! decisions, and the engine keeps a job on its nodes one second longer than its run time
//! ([`Compat::occupancy`]), as AleaNG's resources do.

use serde::{Deserialize, Serialize};

use crate::sim::job::Time;

/// Which simulator's behaviours a scheduler reproduces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compat {
    /// Ours (the default).
    #[default]
    None,
    /// AleaNG's (github.com/aleasimulator/AleaNG): its fairshare aggressive backfilling.
    Aleang,
}

impl Compat {
    pub fn name(self) -> &'static str {
        match self {
            Compat::None => "none",
            Compat::Aleang => "aleang",
        }
    }

    /// Whether this is the default (no compatibility mode): left out of the key material.
    pub fn is_none(&self) -> bool {
        *self == Compat::None
    }

    /// Seconds a job holds its nodes beyond its run time. AleaNG reports every job's run time
    /// one second longer than the trace's (`runtime` = `real_runtime` + 1 in its
    /// `completed_jobs` output, for every job of Example1) and frees its nodes then.
    pub fn occupancy(self) -> Time {
        match self {
            Compat::None => 0,
            Compat::Aleang => 1,
        }
    }
}
