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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::limits::Caps;
    use crate::sim::policy::{PolicyError, PolicyView};
    use crate::sim::reservation::ReservationRequest;
    use crate::sim::scheduler::order::OrderSpec;
    use crate::sim::{Machine, Overrun, SchedulerKind};
    use crate::swf::{Mode, read_bytes};

    /// FCFS without backfilling: waiting rows in order while they fit.
    struct Fcfs;

    impl Policy for Fcfs {
        fn decide(
            &mut self,
            view: &PolicyView<'_>,
            starts: &mut Vec<usize>,
        ) -> Result<(), PolicyError> {
            let w = view.waiting;
            let mut free = view.free;
            for k in 0..w.len() {
                if w.units[k] > free {
                    break;
                }
                free -= w.units[k];
                starts.push(k);
            }
            Ok(())
        }

        fn name(&self) -> &str {
            "fcfs"
        }
    }

    fn config(machine: Machine) -> SimConfig {
        SimConfig {
            machine,
            scheduler: SchedulerKind::Fcfs,
            order: OrderSpec::default(),
            placement: Default::default(),
            interval: None,
            overrun: Overrun::Kill,
        }
    }

    /// Each simulated job's start, in submission order, under the built-in FCFS and under the
    /// FCFS policy.
    fn starts(swf: &str, reservations: &Reservations, limits: Option<&Limits>) -> [Vec<i64>; 2] {
        let trace = read_bytes(swf.as_bytes(), "test.swf", Mode::Strict).unwrap();
        let config = config(Machine::pool(4));
        [None, Some(Fcfs)].map(|policy| {
            let custom = policy.map(|p| CustomPolicy {
                policy: Box::new(p),
                fairshare: None,
            });
            let mut kept = SimOutcome::default();
            run_into(
                &trace.workload,
                &config,
                reservations,
                limits,
                custom,
                &mut kept,
            )
            .unwrap();
            kept.jobs.iter().map(|j| j.start).collect()
        })
    }

    /// One user may run one job: job 2 (user 1) waits for job 1's end at 100 although three
    /// processors are free; job 3 (user 2) starts on arrival — built-in rule and policy alike.
    #[test]
    fn limits_hold_a_job_under_the_rule_and_under_a_policy() {
        let swf = "; MaxProcs: 4\n\
            1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
            2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
            3 10 -1 50 1 -1 -1 1 50 -1 1 2 1 -1 1 -1 -1 -1\n";
        let none = Reservations::default();
        assert_eq!(starts(swf, &none, None), [vec![0, 0, 10], vec![0, 0, 10]]);
        let mut limits = Limits::single("batch");
        limits.users.default = Caps {
            max_running: Some(1),
            ..Caps::default()
        };
        let held = vec![0, 100, 10];
        assert_eq!(starts(swf, &none, Some(&limits)), [held.clone(), held]);
    }

    /// The whole pool reserved over [50, 150): the 100 s job at the head waits for the
    /// reservation's end; FCFS does not backfill the 30 s job behind it.
    #[test]
    fn reservations_hold_the_machine_under_the_rule_and_under_a_policy() {
        let swf = "; MaxProcs: 4\n\
            1 10 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n\
            2 10 -1 30 2 -1 -1 2 30 -1 1 1 1 -1 1 -1 -1 -1\n";
        let reservations = Reservations {
            requests: vec![ReservationRequest {
                id: 1,
                owner: "lab".into(),
                created: 0,
                start: 50,
                duration: 100,
                width: 4,
                cluster: None,
            }],
            ..Reservations::default()
        };
        let expected = vec![10, 10];
        let free = starts(swf, &Reservations::default(), None);
        assert_eq!(free, [expected.clone(), expected]);
        let booked = vec![150, 150];
        assert_eq!(starts(swf, &reservations, None), [booked.clone(), booked]);
    }
}
