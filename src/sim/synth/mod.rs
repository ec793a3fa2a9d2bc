//! Synthetic workloads (Medernach 2005): the Login/Logout Markov arrival model, the
//! distributions jobs are drawn from (runtimes, estimates, sizes, a daily cycle) and the
//! generator that merges users into a workload. Pure and deterministic: randomness comes only
//! from seeded ChaCha8 streams.

pub mod arrivals;
mod daily;
mod estimate;
mod generator;
pub mod markov;
mod runtime;
mod size;

pub use arrivals::{Event, MarkovArrivals};
pub use daily::DailyCycle;
pub use estimate::EstimateModel;
pub use generator::{
    Length, SyntheticSpec, UserSpec, expected_offered_work_rate, generate, generate_at_most,
};
pub use markov::{HyperExponential, LoginModel, ModelError};
pub use runtime::LogUniformStages;
pub use size::SizeModel;
