//! One run's dispatch: a built-in scheduler (the config's order × backfilling rule) or a
//! [`Policy`] of the decision interface (with the fairshare its view shows), with or without a
//! queue setup's limits, beside the run's advance reservations. A manifest's cell
//! (`execute::simulate_node`) and the library's front door (`api::simulate`, so the CLI's
//! `simulate` and the Python package's) both run through [`run_into`]: one copy of the choice
//! of adapter and engine entry point.

use super::engine::{
    AnyPolicy, SimConfig, SimError, SimOutcome, simulate_into, simulate_limited_into,
    simulate_limited_policy_into, simulate_policy_into,
};
use super::fairshare::{FairshareSpec, FairshareState};
use super::job::Workload;
use super::limits::Limits;
use super::policy::{NodePolicyScheduler, Policy, PolicyScheduler};
use super::reservation::Reservations;
use super::schedule::ScheduleSink;

/// A policy of the decision interface in place of the built-in rule.
pub struct CustomPolicy {
    pub policy: Box<dyn Policy>,
    /// The fairshare charged for the policy's view (its usage and factor columns), as
    /// `order: fairshare` computes it; `None`: the view has no fairshare.
    pub fairshare: Option<FairshareSpec>,
}

/// Simulates `workload` under `config` — or under `custom` when given — with `reservations`,
/// and under `limits` when given, handing the schedule to `sink`.
///
/// A custom policy is adapted on the workload it is shown: under limits, requests cut to their
/// queues' maximum walltimes, with the fairshare charged on it. On a pool or whole nodes of one
/// size it is the uniform adapter ([`PolicyScheduler`]), on a topology the node-level one
/// ([`NodePolicyScheduler`]).
pub fn run_into(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    limits: Option<&Limits>,
    custom: Option<CustomPolicy>,
    sink: &mut dyn ScheduleSink,
) -> Result<SimOutcome, SimError> {
    let Some(CustomPolicy { policy, fairshare }) = custom else {
        return match limits {
            Some(limits) => simulate_limited_into(workload, config, reservations, limits, sink),
            None => simulate_into(workload, config, reservations, sink),
        };
    };
    let machine = &config.machine;
    let adapt = |workload: &Workload| {
        let fairshare = fairshare
            .as_ref()
            .map(|spec| {
                FairshareState::new(workload, machine, spec).map_err(|source| SimError::Order {
                    order: "fairshare",
                    source: source.into(),
                })
            })
            .transpose()?;
        Ok(match machine.as_uniform() {
            Some(uniform) => {
                let adapter = PolicyScheduler::new(
                    policy,
                    workload.requests.clone(),
                    uniform.procs_per_unit(),
                );
                let adapter = match fairshare {
                    Some(state) => adapter.with_fairshare(state),
                    None => adapter,
                };
                AnyPolicy::Units(Box::new(adapter))
            }
            None => {
                let adapter = NodePolicyScheduler::new(policy, workload);
                let adapter = match fairshare {
                    Some(state) => adapter.with_fairshare(state),
                    None => adapter,
                };
                AnyPolicy::Nodes(Box::new(adapter))
            }
        })
    };
    match limits {
        Some(limits) => {
            simulate_limited_policy_into(workload, config, reservations, limits, sink, adapt)
        }
        None => adapt(workload)
            .and_then(|policy| simulate_policy_into(workload, config, policy, reservations, sink)),
    }
}
