//! Property tests of node-level scheduling on random heterogeneous topologies (issue 10):
//! nothing is ever over-allocated (recomputed from the outcome, per node and component); with
//! exact estimates no reserved job (EASY's head, conservative's queue) starts later than its
//! reservation; a pool written as a topology (one node of P cores; P nodes of one core, except
//! for conservative on a shared class) and whole nodes of one class schedule exactly like the
//! uniform machine; EASY's fast path and
//! its timeline formulation decide alike, and its shadow time is a recount of the releases node
//! by node. Started jobs are also checked against their requests
//! without the layout's help: the right cluster and properties, distinct nodes, the amounts asked.

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use common::node_policies::{Easy, Fcfs};
use proptest::prelude::*;
use schedlab::sim::policy::{NodePolicyScheduler, Policy};
use schedlab::sim::reservation::{OnConflict, Placement as AfterOrAt, Reservations};
use schedlab::sim::resources::ResourceVec;
use schedlab::sim::scheduler::node::{
    Decisions, NodeConservative, NodeEasy, NodeScheduler, NodeView,
};
use schedlab::sim::scheduler::order::Submission;
use schedlab::sim::topology::{
    Cluster, Constraint, ConstraintTable, JobRequest, Layout, NodeClass, NodeDemand, NodeShape,
    Placement, Shape, Topology,
};
use schedlab::sim::{
    Allocation, AnyPolicy, Job, Machine, Overrun, SchedulerKind, SimConfig, SimOutcome, Time,
    TopologyMachine, Workload, simulate, simulate_policy, simulate_reserving,
};

fn arb_class(i: usize) -> impl Strategy<Value = NodeClass> {
    (1u32..5, 1u32..9, 0u64..5, 0u32..3, any::<bool>(), 1u32..4).prop_map(
        move |(count, cores, mem, gpus, tagged, speed)| {
            let mut c = NodeClass::new(format!("k{i}"), count, cores, mem * 16)
                .with_gpus(gpus)
                .with_speed(f64::from(speed));
            if tagged {
                c = c.with_properties(["fast"]);
            }
            c
        },
    )
}

fn arb_topology() -> impl Strategy<Value = Topology> {
    prop::collection::vec(
        (
            any::<bool>(),
            prop::collection::vec((0usize..1).prop_flat_map(arb_class), 1..3),
        ),
        1..4,
    )
    .prop_map(common::numbered_topology)
}

/// Jobs with flexible or node requests, constraints (none, a property, a cluster, a missing
/// property) and sometimes whole nodes; memory in the same small units as the classes.
fn arb_jobs(exact: bool) -> impl Strategy<Value = Workload> {
    prop::collection::vec(
        (
            (0i64..300, 1i64..100, 0i64..3, 1i64..40),
            (
                any::<bool>(),
                1u32..14,
                0u64..24,
                1u32..4,
                0u32..9,
                0u64..80,
                0u32..3,
            ),
            (0u8..8, 0u8..6),
        ),
        1..40,
    )
    .prop_map(move |raw| {
        let mut table = ConstraintTable::default();
        let ids = [
            table.intern(Constraint::properties(["fast"])),
            table.intern(Constraint::cluster("c0")),
            table.intern(Constraint::cluster("c1")),
            table.intern(Constraint::properties(["missing"])),
        ];
        let jobs = raw
            .into_iter()
            .enumerate()
            .map(
                |(
                    i,
                    (
                        (submit, runtime, mult, extra),
                        (flexible, procs, mem, n, cores, nmem, gpus),
                        (c, x),
                    ),
                )| {
                    let requested = if exact {
                        runtime
                    } else {
                        (runtime * mult).max(1) + extra
                    };
                    let shape = if flexible {
                        Shape::Flexible
                    } else {
                        Shape::Nodes {
                            count: n,
                            per_node: NodeDemand {
                                cores,
                                memory_kb: nmem,
                                gpus,
                            },
                        }
                    };
                    let job = Job {
                        id: i as u64 + 1,
                        submit,
                        runtime,
                        requested_time: requested,
                        procs: if flexible { procs } else { n * cores.max(1) },
                        cpu_time: -1,
                        ..Job::default()
                    };
                    let request = JobRequest {
                        shape,
                        memory_kb: if flexible { mem } else { 0 },
                        constraint: ids.get(c as usize).copied().unwrap_or_default(),
                        exclusive: x == 0,
                    };
                    (job, request)
                },
            )
            .collect::<Vec<_>>();
        Workload::of_requests(jobs, table)
    })
}

fn config(topology: &Topology, kind: SchedulerKind, placement: Placement) -> SimConfig {
    SimConfig {
        placement,
        ..SimConfig::new(Machine::topology(topology.clone()), kind)
    }
}

fn layout(topology: &Topology) -> Layout {
    Layout::new(&TopologyMachine::new(topology.clone())).unwrap()
}

/// Recomputes every node's use over time from the outcome (jobs and started reservations) and
/// checks each component against the node's capacity.
fn check_no_overallocation(
    w: &Workload,
    topology: &Topology,
    reservations: &Reservations,
    out: &SimOutcome,
) -> Result<(), TestCaseError> {
    let l = layout(topology);
    let mut events: HashMap<u32, Vec<(Time, i8, [i64; 3])>> = HashMap::new();
    prop_assert_eq!(out.assignments.len(), out.jobs.len());
    let classes = flat_classes(topology);
    for (a, o) in out.assignments.iter().zip(&out.jobs) {
        prop_assert_eq!(a.job, o.job);
        let j = &w.jobs[a.job as usize];
        let shape = l.shape(w.request(j), j.procs, a.class).unwrap();
        prop_assert_eq!(a.nodes.len(), shape.count as usize);
        prop_assert_eq!(o.held, shape.total());
        // Independently of the layout: the class is in the job's cluster and has its
        // properties, the nodes are distinct, and what each takes is what the job asked for.
        let (cluster, class) = classes[a.class as usize];
        prop_assert_eq!(o.cluster as usize, cluster);
        check_request(w, j, &topology.clusters[cluster], class, &a.nodes, &shape)?;
        for (i, &node) in a.nodes.iter().enumerate() {
            prop_assert_eq!(l.class_of(node), a.class, "node {} outside its class", node);
            let v = shape.amount(i as u32).0.map(|x| x as i64);
            events.entry(node).or_default().push((o.start, 1, v));
            events.entry(node).or_default().push((o.end, 0, v));
        }
    }
    for (request, nodes) in &out.reserved_nodes {
        let (start, end) = out.reservations[*request as usize].window.unwrap();
        let asked = &reservations.requests[*request as usize];
        prop_assert_eq!(nodes.len() as u64, asked.width);
        // Whole nodes of one class, distinct, in the cluster the request named.
        prop_assert!(distinct(nodes));
        let class = l.class_of(nodes[0]);
        prop_assert!(nodes.iter().all(|&n| l.class_of(n) == class));
        if let Some(name) = &asked.cluster {
            prop_assert_eq!(&topology.clusters[classes[class as usize].0].name, name);
        }
        for &node in nodes {
            let v = l.capacity_of(node).0.map(|x| x as i64);
            events.entry(node).or_default().push((start, 1, v));
            events.entry(node).or_default().push((end, 0, v));
        }
    }
    for (node, mut ev) in events {
        // Releases before acquisitions at the same instant.
        ev.sort_by_key(|e| (e.0, e.1));
        let cap = l.capacity_of(node).0.map(|x| x as i64);
        let mut used = [0i64; 3];
        for (t, sign, v) in ev {
            for k in 0..3 {
                used[k] += if sign == 1 { v[k] } else { -v[k] };
                prop_assert!(
                    used[k] <= cap[k],
                    "node {} over-allocated in component {} at t={}",
                    node,
                    k,
                    t
                );
            }
        }
    }
    Ok(())
}

/// Every class of the topology in layout order, with its cluster's index.
fn flat_classes(topology: &Topology) -> Vec<(usize, &NodeClass)> {
    topology
        .clusters
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.classes.iter().map(move |k| (i, k)))
        .collect()
}

fn distinct(nodes: &[u32]) -> bool {
    let mut v = nodes.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len() == nodes.len()
}

/// A started job's nodes against its request, worked out from the request and the class alone.
fn check_request(
    w: &Workload,
    j: &Job,
    cluster: &Cluster,
    class: &NodeClass,
    nodes: &[u32],
    shape: &NodeShape,
) -> Result<(), TestCaseError> {
    let request = w.request(j);
    let constraint = w.constraints.get(request.constraint);
    if let Some(name) = &constraint.cluster {
        prop_assert_eq!(&cluster.name, name, "job {} outside its cluster", j.id);
    }
    for p in &constraint.properties {
        prop_assert!(
            *p == cluster.name || class.properties.contains(p),
            "job {} on a class without {}",
            j.id,
            p
        );
    }
    prop_assert!(distinct(nodes), "job {} holds a node twice", j.id);
    let capacity = [
        u64::from(class.cores),
        class.memory_kb,
        u64::from(class.gpus),
    ];
    let whole = request.exclusive || cluster.allocation == Allocation::ExclusiveNodes;
    let amounts: Vec<[u64; 3]> = (0..nodes.len() as u32).map(|i| shape.amount(i).0).collect();
    match request.shape {
        Shape::Nodes { count, per_node } => {
            prop_assert_eq!(nodes.len(), count as usize);
            let each = if whole {
                capacity
            } else {
                [
                    u64::from(per_node.cores),
                    per_node.memory_kb,
                    u64::from(per_node.gpus),
                ]
            };
            prop_assert!(
                amounts.iter().all(|v| *v == each),
                "job {}: {:?}",
                j.id,
                amounts
            );
        }
        Shape::Flexible => {
            let cores: u64 = amounts.iter().map(|v| v[0]).sum();
            if whole {
                prop_assert!(amounts.iter().all(|v| *v == capacity));
                prop_assert!(cores >= u64::from(j.procs.max(1)));
            } else {
                prop_assert_eq!(cores, u64::from(j.procs.max(1)));
                for v in &amounts {
                    prop_assert_eq!(v[1], v[0] * request.memory_kb);
                    prop_assert_eq!(v[2], 0);
                }
            }
        }
    }
    Ok(())
}

fn check_basics(
    w: &Workload,
    topology: &Topology,
    config: &SimConfig,
    reservations: &Reservations,
    out: &SimOutcome,
) -> Result<(), TestCaseError> {
    let l = layout(topology);
    prop_assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
    for &(job, why) in &out.skipped {
        let j = &w.jobs[job as usize];
        let request = w.request(j);
        let classes = l.eligible(w.constraints.get(request.constraint), Placement::FirstFit);
        let reason = classes.and_then(|c| l.admit(request, j.procs, &c).map(|()| c));
        prop_assert_eq!(
            reason.err(),
            Some(why),
            "job {} skipped for another reason",
            job
        );
    }
    for o in &out.jobs {
        let j = &w.jobs[o.job as usize];
        prop_assert!(o.start >= j.submit);
        let run = o.end - o.start;
        match config.overrun {
            Overrun::Kill => prop_assert_eq!(run, j.runtime.min(j.requested_time)),
            Overrun::Continue => prop_assert_eq!(run, j.runtime),
        }
    }
    check_no_overallocation(w, topology, reservations, out)
}

/// Wraps a node-level policy and records, per job, a reservation it made.
struct Spy<S> {
    inner: S,
    log: Rc<RefCell<HashMap<u32, Time>>>,
    record: fn(&S, &NodeView<'_>, &Decisions, &mut HashMap<u32, Time>),
}

impl<S: NodeScheduler> NodeScheduler for Spy<S> {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        self.inner.schedule(view, decisions);
        (self.record)(&self.inner, view, decisions, &mut self.log.borrow_mut());
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.inner.started(now, job, class);
    }
}

/// The first shadow time EASY computes for each job that becomes the blocked head.
fn record_shadow(e: &NodeEasy, _: &NodeView<'_>, _: &Decisions, log: &mut HashMap<u32, Time>) {
    if let Some((head, shadow)) = e.last_shadow() {
        log.entry(head).or_insert(shadow);
    }
}

/// EASY's shadow time recounted from the view, node by node: every node's free vector now less
/// this call's starts before the blocked head (in submission order, the starts at queue
/// positions before it), then the running jobs' and those starts' releases in order of end —
/// all of one instant together — until the head fits on one of its classes: enough nodes
/// covering its full amount, and enough covering its full or its last one.
fn shadow_by_recount(view: &NodeView<'_>, d: &Decisions, head: u32) -> Option<Time> {
    let mut free: Vec<ResourceVec> = (0..view.layout.node_count())
        .map(|n| view.free.free(n))
        .collect();
    let head_pos = view.queue.iter().position(|q| q.job == head)?;
    let mut releases: Vec<(Time, u32, NodeShape, Vec<u32>)> = view
        .running
        .iter()
        .map(|r| {
            let a = view.alloc(r.job);
            (
                view.predicted_end(r.expected_end),
                a.class,
                a.shape,
                a.nodes.clone(),
            )
        })
        .collect();
    for start in d.starts().iter().filter(|s| s.pos < head_pos) {
        let q = &view.queue[start.pos];
        let shape = view.shape(q.job, start.class).expect("it started there");
        let nodes = d.nodes(start).to_vec();
        for (i, &n) in nodes.iter().enumerate() {
            free[n as usize] -= shape.amount(i as u32);
        }
        releases.push((view.now + q.requested_time, start.class, shape, nodes));
    }
    releases.sort_by_key(|r| r.0);
    let fits = |free: &[ResourceVec]| {
        view.classes_of(head).iter().any(|&class| {
            view.shape(head, class).is_some_and(|h| {
                let last = h.last.unwrap_or(h.per_node);
                let nodes = view.layout.class(class).nodes.clone();
                let full = nodes
                    .clone()
                    .filter(|&n| h.per_node.fits_in(&free[n as usize]));
                let some = nodes.filter(|&n| last.fits_in(&free[n as usize]));
                full.count() as u32 >= h.full() && some.count() as u32 >= h.count
            })
        })
    };
    if fits(&free) {
        return Some(view.now);
    }
    let mut i = 0;
    while i < releases.len() {
        let t = releases[i].0;
        while i < releases.len() && releases[i].0 == t {
            let (_, _, shape, nodes) = &releases[i];
            for (k, &n) in nodes.iter().enumerate() {
                free[n as usize] += shape.amount(k as u32);
            }
            i += 1;
        }
        if fits(&free) {
            return Some(t);
        }
    }
    None
}

/// The heads whose shadow time differs from its recount ([`shadow_by_recount`]), each with the
/// recount (−1: the recount never fits it).
fn record_recount(e: &NodeEasy, view: &NodeView<'_>, d: &Decisions, log: &mut HashMap<u32, Time>) {
    if let Some((head, shadow)) = e.last_shadow() {
        let recount = shadow_by_recount(view, d, head);
        if recount != Some(shadow) {
            log.insert(head, recount.unwrap_or(-1));
        }
    }
}

/// The first reservation conservative gives each job.
fn record_reservation(
    c: &NodeConservative,
    view: &NodeView<'_>,
    d: &Decisions,
    log: &mut HashMap<u32, Time>,
) {
    for (pos, q) in view.queue.iter().enumerate() {
        let reserved = if d.starts().iter().any(|s| s.pos == pos) {
            Some(view.now)
        } else {
            c.reservation(q.job)
        };
        if let Some(t) = reserved {
            log.entry(q.job).or_insert(t);
        }
    }
}

fn arb_reservations(topology: &Topology) -> impl Strategy<Value = Reservations> + use<> {
    let clusters: Vec<Option<String>> = std::iter::once(None)
        .chain(topology.clusters.iter().map(|c| Some(c.name.clone())))
        .collect();
    let ranges = common::RequestRanges {
        created: 0..300,
        notice: 0..80,
        duration: 1..60,
        width: 1..=2,
        most: 4,
    };
    let cluster = prop::sample::select(clusters).prop_map(|cluster| ("o".to_string(), cluster));
    (
        common::arb_requests_within(ranges, cluster),
        prop::sample::select(vec![AfterOrAt::AfterQueue, AfterOrAt::AtRequestedTime]),
        prop::sample::select(vec![OnConflict::Reject, OnConflict::Shift]),
    )
        .prop_map(|(requests, placement, on_conflict)| Reservations {
            requests,
            placement,
            on_conflict,
            ..Reservations::default()
        })
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    #[test]
    fn schedules_on_topologies_are_valid(
        topology in arb_topology(),
        w in arb_jobs(false),
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
        interval in prop::option::of(1i64..50),
    ) {
        let config = SimConfig { overrun, interval, ..config(&topology, kind, placement) };
        let out = simulate(&w, &config).unwrap();
        check_basics(&w, &topology, &config, &Reservations::default(), &out)?;
        prop_assert_eq!(&simulate(&w, &config).unwrap(), &out);
    }

    #[test]
    fn reservations_on_topologies_are_respected(
        (topology, reservations) in arb_topology().prop_flat_map(|t| {
            let r = arb_reservations(&t);
            (Just(t), r)
        }),
        w in arb_jobs(false),
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        interval in prop::option::of(1i64..50),
    ) {
        let config = SimConfig { interval, ..config(&topology, kind, placement) };
        let out = simulate_reserving(&w, &config, &reservations).unwrap();
        check_basics(&w, &topology, &config, &reservations, &out)?;
        prop_assert_eq!(out.reservations.len(), reservations.requests.len());
        let started = out.reservations.iter().filter(|r| r.window.is_some_and(|(s, _)| s <= out.steps.last().map_or(0, |x| x.time))).count();
        prop_assert!(out.reserved_nodes.len() <= started);
    }

    #[test]
    fn fcfs_on_nodes_starts_in_submission_order(topology in arb_topology(), w in arb_jobs(false)) {
        let out = simulate(&w, &config(&topology, SchedulerKind::Fcfs, Placement::FirstFit)).unwrap();
        for pair in out.jobs.windows(2) {
            prop_assert!(pair[0].start <= pair[1].start);
        }
        prop_assert!(out.jobs.iter().all(|o| !o.backfilled));
    }

    #[test]
    fn easy_head_never_starts_after_its_shadow_time_on_nodes(
        topology in arb_topology(),
        w in arb_jobs(true),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let config = config(&topology, SchedulerKind::Easy, placement);
        let log = Rc::new(RefCell::new(HashMap::new()));
        let spy = Spy { inner: NodeEasy::new(Box::new(Submission)), log: log.clone(), record: record_shadow };
        let out = simulate_policy(&w, &config, AnyPolicy::Nodes(Box::new(spy)), &Reservations::default()).unwrap();
        check_basics(&w, &topology, &config, &Reservations::default(), &out)?;
        prop_assert_eq!(&out, &simulate(&w, &config).unwrap());
        for o in &out.jobs {
            if let Some(&shadow) = log.borrow().get(&o.job) {
                prop_assert!(o.start <= shadow, "job {} started at {} after its shadow time {}", o.job, o.start, shadow);
            }
        }
    }

    #[test]
    fn conservative_never_starts_a_job_after_its_reservation_on_nodes(
        topology in arb_topology(),
        w in arb_jobs(true),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let config = config(&topology, SchedulerKind::Conservative, placement);
        let log = Rc::new(RefCell::new(HashMap::new()));
        let spy = Spy { inner: NodeConservative::new(Box::new(Submission)), log: log.clone(), record: record_reservation };
        let out = simulate_policy(&w, &config, AnyPolicy::Nodes(Box::new(spy)), &Reservations::default()).unwrap();
        check_basics(&w, &topology, &config, &Reservations::default(), &out)?;
        prop_assert_eq!(&out, &simulate(&w, &config).unwrap());
        for o in &out.jobs {
            let reserved = log.borrow()[&o.job];
            prop_assert!(o.start <= reserved, "job {} started at {} after its reservation {}", o.job, o.start, reserved);
        }
    }

    #[test]
    fn placer_policies_beside_reservations_reproduce_the_native_rules(
        (topology, reservations) in arb_topology().prop_flat_map(|t| {
            let r = arb_reservations(&t);
            (Just(t), r)
        }),
        w in arb_jobs(false),
        easy in any::<bool>(),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        interval in prop::option::of(1i64..50),
    ) {
        // Issue 31: a policy on a topology plans beside advance reservations through the
        // placer, which then decides every fit on the committed future as the built-in rules
        // do; rows-only FCFS and EASY on it are the native rules, job for job and node for node.
        let kind = if easy { SchedulerKind::Easy } else { SchedulerKind::Fcfs };
        let config = SimConfig { interval, ..config(&topology, kind, placement) };
        let native = simulate_reserving(&w, &config, &reservations).unwrap();
        let policy: Box<dyn Policy> = if easy { Box::new(Easy) } else { Box::new(Fcfs) };
        let mine = simulate_policy(
            &w,
            &config,
            AnyPolicy::Nodes(Box::new(NodePolicyScheduler::new(policy, &w))),
            &reservations,
        )
        .unwrap();
        prop_assert_eq!(&native.jobs, &mine.jobs);
        prop_assert_eq!(&native.assignments, &mine.assignments);
        prop_assert_eq!(&native.reservations, &mine.reservations);
        prop_assert_eq!(&native.reserved_nodes, &mine.reserved_nodes);
        check_basics(&w, &topology, &config, &reservations, &mine)?;
    }

    #[test]
    fn a_pool_written_as_a_topology_schedules_like_the_pool(
        jobs in prop::collection::vec((0i64..400, 1u32..44, 1i64..120, 0i64..3, 1i64..60), 1..60),
        procs in 4u32..40,
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
        interval in prop::option::of(1i64..50),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let w = pool_jobs(jobs);
        let pool = SimConfig { interval, overrun, ..SimConfig::new(Machine::pool(procs), kind) };
        let topology = Topology::new(vec![Cluster::new(
            "pool",
            Allocation::Shared,
            vec![NodeClass::new("node", 1, procs, 0)],
        )]);
        let nodes = SimConfig { interval, overrun, placement, ..SimConfig::new(Machine::topology(topology), kind) };
        let a = simulate(&w, &pool).unwrap();
        let b = simulate(&w, &nodes).unwrap();
        prop_assert_eq!(&a.jobs, &b.jobs);
        prop_assert_eq!(&a.invocations, &b.invocations);
        prop_assert_eq!(&a.steps, &b.steps);
        let skipped = |o: &SimOutcome| o.skipped.iter().map(|s| s.0).collect::<Vec<_>>();
        prop_assert_eq!(skipped(&a), skipped(&b));
    }

    #[test]
    fn single_core_nodes_schedule_like_the_pool(
        jobs in prop::collection::vec((0i64..400, 1u32..44, 1i64..120, 0i64..3, 1i64..60), 1..60),
        procs in 4u32..40,
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
        interval in prop::option::of(1i64..50),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        allocation in prop::sample::select(vec![Allocation::Shared, Allocation::ExclusiveNodes]),
    ) {
        // P nodes of one core each: a job of p processors takes p of them. Conservative on a
        // shared class reserves concrete nodes, which the pool's count does not: there it may
        // differ (docs/semantics.md); on whole nodes the class's nodes are counted.
        prop_assume!(kind != SchedulerKind::Conservative || allocation == Allocation::ExclusiveNodes);
        let w = pool_jobs(jobs);
        let pool = SimConfig { interval, overrun, ..SimConfig::new(Machine::pool(procs), kind) };
        let topology = Topology::new(vec![Cluster::new(
            "cores",
            allocation,
            vec![NodeClass::new("core", procs, 1, 0)],
        )]);
        let cores = SimConfig { interval, overrun, placement, ..SimConfig::new(Machine::topology(topology), kind) };
        let a = simulate(&w, &pool).unwrap();
        let b = simulate(&w, &cores).unwrap();
        prop_assert_eq!(a.jobs.len(), b.jobs.len());
        for (x, y) in a.jobs.iter().zip(&b.jobs) {
            prop_assert_eq!((x.job, x.start, x.end, x.killed, x.backfilled, x.units), (y.job, y.start, y.end, y.killed, y.backfilled, y.units));
            prop_assert_eq!((y.nodes, y.held.0[0]), (x.units as u32, x.units));
        }
        prop_assert_eq!(&a.invocations, &b.invocations);
        prop_assert_eq!(&a.steps, &b.steps);
        let skipped = |o: &SimOutcome| o.skipped.iter().map(|s| s.0).collect::<Vec<_>>();
        prop_assert_eq!(skipped(&a), skipped(&b));
    }

    #[test]
    fn whole_nodes_of_one_class_schedule_like_the_exclusive_machine(
        jobs in prop::collection::vec((0i64..400, 1u32..44, 1i64..120, 0i64..3, 1i64..60), 1..60),
        nodes in 2u32..10,
        size in 1u32..5,
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        interval in prop::option::of(1i64..50),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let w = pool_jobs(jobs);
        let uniform = SimConfig { interval, ..SimConfig::new(Machine::exclusive_nodes(nodes, size), kind) };
        let topology = Topology::new(vec![Cluster::new(
            "nodes",
            Allocation::ExclusiveNodes,
            vec![NodeClass::new("node", nodes, size, 0)],
        )]);
        let on_nodes = SimConfig { interval, placement, ..SimConfig::new(Machine::topology(topology), kind) };
        let a = simulate(&w, &uniform).unwrap();
        let b = simulate(&w, &on_nodes).unwrap();
        // The uniform machine counts nodes, the topology cores: the same schedule, scaled.
        prop_assert_eq!(a.jobs.len(), b.jobs.len());
        for (x, y) in a.jobs.iter().zip(&b.jobs) {
            prop_assert_eq!((x.job, x.start, x.end, x.killed, x.backfilled), (y.job, y.start, y.end, y.killed, y.backfilled));
            prop_assert_eq!((x.nodes, x.held), (y.nodes, y.held));
            prop_assert_eq!(x.units * u64::from(size), y.units);
        }
        prop_assert_eq!(&a.invocations, &b.invocations);
        for (x, y) in a.steps.iter().zip(&b.steps) {
            prop_assert_eq!((x.time, x.queue_len, x.busy * u64::from(size)), (y.time, y.queue_len, y.busy));
        }
    }

    #[test]
    fn reservations_on_whole_nodes_match_the_exclusive_machine(
        jobs in prop::collection::vec((0i64..400, 1u32..44, 1i64..120, 0i64..3, 1i64..60), 1..50),
        nodes in 2u32..10,
        size in 1u32..5,
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        interval in prop::option::of(1i64..50),
        reservations in arb_reservations(&Topology::new(vec![Cluster::new(
            "nodes",
            Allocation::ExclusiveNodes,
            vec![NodeClass::new("node", 1, 1, 0)],
        )])),
    ) {
        // A reservation's width counts whole nodes on both machines.
        let w = pool_jobs(jobs);
        let uniform = SimConfig { interval, ..SimConfig::new(Machine::exclusive_nodes(nodes, size), kind) };
        let topology = Topology::new(vec![Cluster::new(
            "nodes",
            Allocation::ExclusiveNodes,
            vec![NodeClass::new("node", nodes, size, 0)],
        )]);
        let on_nodes = SimConfig { interval, ..SimConfig::new(Machine::topology(topology.clone()), kind) };
        let a = simulate_reserving(&w, &uniform, &reservations).unwrap();
        let b = simulate_reserving(&w, &on_nodes, &reservations).unwrap();
        check_basics(&w, &topology, &on_nodes, &reservations, &b)?;
        prop_assert_eq!(&a.reservations, &b.reservations);
        prop_assert_eq!(a.jobs.len(), b.jobs.len());
        for (x, y) in a.jobs.iter().zip(&b.jobs) {
            prop_assert_eq!((x.job, x.start, x.end, x.killed, x.backfilled), (y.job, y.start, y.end, y.killed, y.backfilled));
        }
        prop_assert_eq!(&a.invocations, &b.invocations);
    }
}

fn pool_jobs(raw: Vec<(i64, u32, i64, i64, i64)>) -> Workload {
    Workload::new(
        raw.into_iter()
            .enumerate()
            .map(|(i, (submit, procs, runtime, mult, extra))| {
                let requested = (runtime * mult).max(1) + extra;
                common::job(i as u64 + 1, submit, procs, runtime, requested)
            })
            .collect(),
    )
}

/// `w` under node-level EASY's timeline formulation (`NodeEasy::on_timeline`), which the fast
/// path must equal.
fn easy_on_timeline(w: &Workload, config: &SimConfig) -> SimOutcome {
    simulate_policy(
        w,
        config,
        AnyPolicy::Nodes(Box::new(NodeEasy::on_timeline(Box::new(Submission)))),
        &Reservations::default(),
    )
    .unwrap()
}

proptest! {
    // More cases than above, for the releases by count of jobs alone on their nodes
    // (scheduler::node::shadow): a waiting request without a core, which makes them write `S`
    // before it is placed, and a class holding one, which keeps them from counting, meet
    // rarely on these topologies; 300 cases missed a shadow that ignored either (checked by
    // breaking it), 3,000 catch both (under a second).
    #![proptest_config(crate::common::proptest_cases(3000))]

    #[test]
    fn easy_fast_path_and_timeline_decide_alike(
        topology in arb_topology(),
        w in arb_jobs(false),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
    ) {
        let config = SimConfig { overrun, ..config(&topology, SchedulerKind::Easy, placement) };
        let fast = simulate(&w, &config).unwrap();
        prop_assert_eq!(fast, easy_on_timeline(&w, &config));
    }

    /// The shadow time, computed from the class's counts with jobs alone on their nodes
    /// released by count (scheduler::node::shadow), is the one a recount node by node gives.
    #[test]
    fn easy_shadow_time_is_the_recount_of_the_releases_on_nodes(
        topology in arb_topology(),
        w in arb_jobs(false),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let config = config(&topology, SchedulerKind::Easy, placement);
        let log = Rc::new(RefCell::new(HashMap::new()));
        let spy = Spy { inner: NodeEasy::new(Box::new(Submission)), log: log.clone(), record: record_recount };
        let out = simulate_policy(&w, &config, AnyPolicy::Nodes(Box::new(spy)), &Reservations::default()).unwrap();
        prop_assert_eq!(&out, &simulate(&w, &config).unwrap());
        prop_assert!(log.borrow().is_empty(), "heads whose shadow time differs from the recount: {:?}", log.borrow());
    }
}

/// Classes of 2–12 nodes of 1, 2 or 4 cores, shared or whole-node clusters: wide enough that a
/// blocked head of several nodes has nodes to spare, or not, when a long job asks for some.
fn arb_wide_topology() -> impl Strategy<Value = Topology> {
    prop::collection::vec(
        (
            prop::sample::select(vec![false, false, true]),
            prop::collection::vec(
                (2u32..13, prop::sample::select(vec![1u32, 2, 4]), 0u64..3)
                    .prop_map(|(count, cores, mem)| NodeClass::new("k", count, cores, mem * 16)),
                1..3,
            ),
        ),
        1..3,
    )
    .prop_map(common::numbered_topology)
}

/// Mostly jobs that take every core of each of their nodes (a node request of the class's
/// cores, or processors a multiple of them), beside some that take part of a node and a few
/// that take memory without a core; constraints now and then tie a job to one cluster.
fn arb_whole_core_jobs() -> impl Strategy<Value = Workload> {
    prop::collection::vec(
        (
            (0i64..200, 1i64..100, 0i64..3, 1i64..40),
            (
                0u8..10,
                1u32..9,
                prop::sample::select(vec![1u32, 2, 4]),
                0u64..20,
            ),
            0u8..6,
        ),
        1..50,
    )
    .prop_map(|raw| {
        let mut table = ConstraintTable::default();
        let ids = [
            table.intern(Constraint::cluster("c0")),
            table.intern(Constraint::cluster("c1")),
        ];
        let jobs = raw
            .into_iter()
            .enumerate()
            .map(
                |(i, ((submit, runtime, mult, extra), (kind, n, cores, mem), c))| {
                    // 0–5: whole cores of `cores`-core nodes; 6–7: processors; 8: part of a
                    // node; 9: memory without a core.
                    let (shape, procs, memory_kb) = match kind {
                        0..=5 => (
                            Shape::Nodes {
                                count: n,
                                per_node: NodeDemand {
                                    cores,
                                    memory_kb: mem,
                                    gpus: 0,
                                },
                            },
                            n * cores,
                            0,
                        ),
                        6 | 7 => (Shape::Flexible, n * cores, mem / 4),
                        8 => (Shape::Flexible, n, mem / 4),
                        _ => (
                            Shape::Nodes {
                                count: 1,
                                per_node: NodeDemand {
                                    cores: 0,
                                    memory_kb: 1 + mem,
                                    gpus: 0,
                                },
                            },
                            1,
                            0,
                        ),
                    };
                    let job = Job {
                        id: i as u64 + 1,
                        submit,
                        runtime,
                        requested_time: (runtime * mult).max(1) + extra,
                        procs,
                        cpu_time: -1,
                        ..Job::default()
                    };
                    let request = JobRequest {
                        shape,
                        memory_kb,
                        constraint: ids.get(c as usize).copied().unwrap_or_default(),
                        exclusive: false,
                    };
                    (job, request)
                },
            )
            .collect::<Vec<_>>();
        Workload::of_requests(jobs, table)
    })
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1000))]

    /// A long job that takes every core of its nodes is backfilled from the head's counts
    /// (scheduler::node::shadow, `select_every_core`) instead of by the two sweeps over the
    /// nodes; the timeline formulation still sweeps, so the two must decide alike.
    #[test]
    fn easy_long_jobs_of_whole_cores_decide_as_on_the_timeline(
        topology in arb_wide_topology(),
        w in arb_whole_core_jobs(),
        placement in prop::sample::select(Placement::ALL.to_vec()),
    ) {
        let config = config(&topology, SchedulerKind::Easy, placement);
        let fast = simulate(&w, &config).unwrap();
        prop_assert_eq!(fast, easy_on_timeline(&w, &config));
    }
}

/// A node request of `count` nodes of `cores` cores and `memory_kb` each.
fn nodes(count: u32, cores: u32, memory_kb: u64) -> Shape {
    Shape::Nodes {
        count,
        per_node: NodeDemand {
            cores,
            memory_kb,
            gpus: 0,
        },
    }
}

/// Jobs (submit, shape, processors, runtime = requested time, whole nodes asked) on
/// `topology`: their starts under node-level EASY in either placement, which must equal the
/// timeline formulation's, and their nodes under first fit.
fn hand_worked(
    topology: &Topology,
    jobs: &[(Time, Shape, u32, Time, bool)],
) -> (Vec<Time>, Vec<Vec<u32>>) {
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(submit, shape, procs, runtime, exclusive))| {
            let job = common::job(i as u64 + 1, submit, procs, runtime, runtime);
            let request = JobRequest {
                shape,
                memory_kb: 0,
                constraint: Default::default(),
                exclusive,
            };
            (job, request)
        })
        .collect::<Vec<_>>();
    let w = Workload::of_requests(jobs, ConstraintTable::default());
    let mut first = None;
    for placement in Placement::ALL {
        let config = config(topology, SchedulerKind::Easy, placement);
        let fast = simulate(&w, &config).unwrap();
        assert_eq!(fast, easy_on_timeline(&w, &config), "{placement}");
        let starts = fast.jobs.iter().map(|j| j.start).collect();
        let nodes = fast.assignments.iter().map(|a| a.nodes.clone()).collect();
        first.get_or_insert((starts, nodes));
    }
    first.expect("two placements")
}

/// Hand-worked: 4 nodes of 2 cores and 32 KB. At 0, job 0 takes nodes 0–1 whole until 50. At
/// 1 job 1 takes node 2 whole for 1,000 s (a start of this call, alone on its node); the head,
/// job 2 (3 nodes of 2 cores and 20 KB), fits at 50 on nodes 0, 1 and 3 with none to spare;
/// job 3 takes 20 KB without a core for 1,000 s. Nodes 0, 1 and 3 would each be lost to the
/// head (12 KB left), node 2 is not: at the shadow time it has no core free, so job 3 starts
/// there at 1. Counting node 2 at its capacity there would refuse it, and start job 3 only
/// after the head.
#[test]
fn a_job_without_a_core_goes_beside_the_calls_own_start_on_a_whole_node() {
    let topology = common::numbered_topology([(false, vec![NodeClass::new("k", 4, 2, 32)])]);
    let (starts, nodes) = hand_worked(
        &topology,
        &[
            (0, nodes(2, 2, 0), 4, 50, false),
            (1, nodes(1, 2, 0), 2, 1000, false),
            (1, nodes(3, 2, 20), 6, 10, false),
            (1, nodes(1, 0, 20), 1, 1000, false),
        ],
    );
    assert_eq!(starts, [0, 1, 50, 1]);
    assert_eq!(nodes[2], [0, 1, 3]);
    assert_eq!(nodes[3], [2]);
}

/// Hand-worked: 3 nodes of 2 cores and 32 KB. At 0 job 0 holds 4 KB of node 0 without a core
/// for 1,000 s. At 1 job 1 takes node 1 whole (asked) until 11 — a start of this call on a
/// class holding an amount without a core, so not counted by count; the head, job 2 (3 nodes
/// of 2 cores and 20 KB), has nodes 0 and 2 now and node 1 at 11: its shadow time. Job 3 (one
/// core for 5 s) ends by then and starts at 1 on node 0. Missing the release of job 1 would
/// leave the head no shadow time, and job 3 waiting.
#[test]
fn the_calls_own_whole_node_start_is_released_beside_a_hold_without_a_core() {
    let topology = common::numbered_topology([(false, vec![NodeClass::new("k", 3, 2, 32)])]);
    let (starts, nodes) = hand_worked(
        &topology,
        &[
            (0, nodes(1, 0, 4), 1, 1000, false),
            (1, nodes(1, 2, 0), 2, 10, true),
            (1, nodes(3, 2, 20), 6, 10, false),
            (1, nodes(1, 1, 0), 1, 5, false),
        ],
    );
    assert_eq!(starts, [0, 1, 11, 1]);
    assert_eq!(nodes[1], [1]);
    assert_eq!(nodes[2], [0, 1, 2]);
    assert_eq!(nodes[3], [0]);
}
