//! The pure simulator: workloads, machine model, event engine, schedulers and metrics.
//!
//! Invariant: nothing in here touches files, clocks, threads, environment variables or
//! randomness that is not passed in. Same inputs → same outputs, bit for bit.

pub mod compat;
pub mod engine;
pub mod fairshare;
pub mod job;
pub mod limits;
pub mod machine;
pub(crate) mod machine_state;
pub mod metrics;
pub mod mix_hash;
pub mod nodes;
pub mod policy;
pub mod queue;
pub mod random;
pub mod reservation;
pub mod resources;
pub mod run;
pub mod running;
pub mod schedule;
pub mod scheduler;
pub mod synth;
pub mod timeseries;
pub mod topology;
pub mod transform;

pub use engine::{
    AnyPolicy, Assignment, Invocation, JobOutcome, Overrun, SimConfig, SimError, SimOutcome, Step,
    Stepped, simulate, simulate_into, simulate_limited, simulate_limited_into,
    simulate_limited_policy_into, simulate_policy, simulate_policy_into, simulate_reserving,
    simulate_with, simulate_with_reserving,
};
pub use job::{Job, Names, Time, Workload};
pub use machine::{Allocation, Infeasible, Machine, TopologyMachine, Uniform};
pub use resources::ResourceVec;
pub use scheduler::{Scheduler, SchedulerKind};
pub use topology::{JobRequest, Placement, Topology};
