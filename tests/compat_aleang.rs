//! `compat: aleang` on hand-worked cases (docs/aleang.md, "What it reproduces"): the clusters by
//! size, the second more on the nodes, the charge at start with its re-sort — each against our
//! own aggressive fairshare rule on the same input, and the refusals off a topology or off
//! aggressive + fairshare.

mod common;

use schedlab::sim::compat::Compat;
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
use schedlab::sim::topology::{Cluster, NodeClass};
use schedlab::sim::{
    Allocation, Machine, Overrun, SchedulerKind, SimConfig, Topology, TopologyMachine, Workload,
    simulate,
};

/// Whole-node clusters of one-core nodes, in file order: (name, nodes).
fn machine(clusters: &[(&str, u32)]) -> Machine {
    Machine::Topology(TopologyMachine::new(Topology::new(
        clusters
            .iter()
            .map(|&(name, nodes)| {
                Cluster::new(
                    name,
                    Allocation::ExclusiveNodes,
                    vec![NodeClass::new(name, nodes, 1, 1 << 20)],
                )
            })
            .collect(),
    )))
}

fn config(machine: Machine, compat: Compat) -> SimConfig {
    SimConfig {
        order: OrderSpec {
            compat,
            ..OrderSpec::of(OrderKind::Fairshare)
        },
        machine,
        scheduler: SchedulerKind::Aggressive,
        interval: None,
        overrun: Overrun::Kill,
        placement: Default::default(),
    }
}

#[test]
fn the_largest_cluster_first_and_one_more_second_on_the_nodes() {
    // `small` (1 node) is first in the file, `big` (2 nodes) second. A 1-node job of 10 s at 0:
    // our first fit takes `small` and frees it at 10; AleaNG tries `big` first and holds the
    // node until 11.
    let m = machine(&[("small", 1), ("big", 2)]);
    let w = Workload::new(vec![common::job(1, 0, 1, 10, 20)]);
    let ours = simulate(&w, &config(m.clone(), Compat::None)).unwrap();
    let alea = simulate(&w, &config(m, Compat::Aleang)).unwrap();
    let (o, a) = (ours.jobs[0], alea.jobs[0]);
    assert_eq!((o.cluster, o.start, o.end), (0, 0, 10));
    assert_eq!((a.cluster, a.start, a.end), (1, 0, 11));
}

#[test]
fn a_start_charges_its_owner_at_once_and_the_queue_is_resorted() {
    // Two nodes; at 0, jobs 1 and 2 of user 1 and job 3 of user 2, 100 s each (requested 100),
    // equal shares. Every user starts with usage 1, so both factors are 2^(−(1/2)/(1/2)) and
    // job id decides: job 1 starts. Its charge (1 CPU × 100 s) makes user 1's factor
    // 2^(−(101/102)/(1/2)) ≈ 0.25 against user 2's 2^(−(1/102)/(1/2)) ≈ 0.99: job 3 starts
    // next, and job 2 when a node is free again, at 101 (100 s + AleaNG's second).
    let m = machine(&[("c", 2)]);
    let mut jobs = vec![
        common::job(1, 0, 1, 100, 100),
        common::job(2, 0, 1, 100, 100),
        common::job(3, 0, 1, 100, 100),
    ];
    for (j, user) in jobs.iter_mut().zip([1, 1, 2]) {
        j.user = user;
    }
    let w = Workload::new(jobs);
    let starts = |compat| -> Vec<i64> {
        simulate(&w, &config(m.clone(), compat))
            .unwrap()
            .jobs
            .iter()
            .map(|o| o.start)
            .collect()
    };
    assert_eq!(starts(Compat::Aleang), [0, 101, 0]);
    // Our rule charges the same start too, but at the job's rate as it runs: with no usage
    // yet at 0 both users rank equally and jobs 1 and 2 start in submission order.
    assert_eq!(starts(Compat::None), [0, 0, 100]);
}

#[test]
fn off_a_topology_or_off_aggressive_fairshare_it_is_refused() {
    let w = Workload::new(vec![common::job(1, 0, 1, 10, 10)]);
    let mut pool = common::pool(4, SchedulerKind::Aggressive);
    pool.order = OrderSpec {
        compat: Compat::Aleang,
        ..OrderSpec::of(OrderKind::Fairshare)
    };
    let err = simulate(&w, &pool).unwrap_err().to_string();
    assert!(err.contains("compat: aleang runs on a topology"), "{err}");
    let mut easy = config(machine(&[("c", 2)]), Compat::Aleang);
    easy.scheduler = SchedulerKind::Easy;
    let err = simulate(&w, &easy).unwrap_err().to_string();
    assert!(err.contains("backfill: aggressive"), "{err}");
}
