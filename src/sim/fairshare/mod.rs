//! Multi-resource fairshare (Klusáček & Rudová, "Multi-Resource Aware Fairsharing for
//! Heterogeneous Systems"; issue 12): what a job costs, how usage accumulates and fades, and the
//! fairshare factor that orders the queue.
//!
//! - [`penalty`]: P(j) under every model of the paper by name (`cpu`, `standard_job`,
//!   `pe_global`, `pe_local`, `pe_min`), multi-node jobs, walltime normalisation, GPUs
//!   ([`Pricing`]).
//! - [`ledger`]: usage per user, F_u = Σ walltime × N × P, with the §3.4 charging rule or
//!   continuous accrual, and decay by a factor per interval or by a half-life ([`Ledger`]).
//! - [`accounts`]: the users and groups of a workload, densely indexed ([`Accounts`]).
//! - [`factor`]: shares per user and group and FF = 2^(−U/S) ([`ShareTree`]).
//! - [`state`]: all of it as a run unfolds ([`FairshareState`]), fed by starts and ends.
//! - [`replay`]: the same, recomputed from a finished run for the outputs ([`replay()`]).
//!
//! Pure arithmetic on the simulator's types; docs/fairshare.md states every choice made where
//! the paper and the systems it describes leave room.

pub mod accounts;
pub mod factor;
pub mod ledger;
pub mod penalty;
pub mod replay;
pub mod state;

pub use accounts::Accounts;
pub use factor::{Hierarchy, ShareError, ShareTree, SharesSpec, fairshare_factor};
pub use ledger::{Charging, Decay, Ledger};
pub use penalty::{
    Normalization, PenaltyError, PenaltyModel, PenaltySpec, Pricing, StandardJob,
    processor_equivalent,
};
pub use replay::{Replay, ReplayJob, Sampling, UserSample, UserUsage, replay, replay_jobs};
pub use state::{FairshareError, FairshareState};

/// Everything that defines a fairshare: the penalty, when usage is charged, how it decays, and
/// the shares.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FairshareSpec {
    pub penalty: PenaltySpec,
    pub charging: Charging,
    pub decay: Decay,
    pub shares: SharesSpec,
}
