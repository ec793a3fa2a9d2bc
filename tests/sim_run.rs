//! `sim::run::run_into`, the one dispatch of a manifest's cell and of `api::simulate` (issue
//! 31): a built-in rule and a policy deciding as it give the same schedule under a queue
//! setup's limits and beside advance reservations, on traces worked by hand.

use schedlab::sim::limits::Caps;
use schedlab::sim::limits::Limits;
use schedlab::sim::policy::Policy;
use schedlab::sim::policy::{PolicyError, PolicyView};
use schedlab::sim::reservation::ReservationRequest;
use schedlab::sim::reservation::Reservations;
use schedlab::sim::run::{CustomPolicy, run_into};
use schedlab::sim::scheduler::order::OrderSpec;
use schedlab::sim::{Machine, Overrun, SchedulerKind};
use schedlab::sim::{SimConfig, SimOutcome};
use schedlab::swf::{Mode, read_bytes};

/// FCFS without backfilling: waiting rows in order while each fits now beside the running
/// jobs, the advance reservations and the rows started before it.
struct Fcfs;

impl Policy for Fcfs {
    fn decide(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), PolicyError> {
        let w = view.waiting;
        for k in 0..w.len() {
            if view.earliest_start(w.units[k], w.requested_time[k], starts) != Some(view.now) {
                break;
            }
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
