//! [`NodePolicyScheduler`]: a [`Policy`] as the engine's [`NodeScheduler`] on a topology
//! (heterogeneous nodes with memory, GPUs and properties, shared or exclusive) — the
//! counterpart of [`super::PolicyScheduler`] on uniform machines.
//!
//! At each engine call it charges the jobs that ended to their users and copies the state into
//! the view ([`TopologyView`]: the nodes as columns, the waiting and running jobs); then, only
//! if some waiting job fits now on a node it may use, it asks the policy
//! ([`Policy::decide_on_nodes`]) and checks every decision in the policy's terms before the
//! engine sees it: a row that is not waiting or repeats, a row without nodes that fits nowhere
//! now, or nodes that do not exist, are of two classes, do not satisfy the job's constraint,
//! are too many or too few for its shape, repeat, or lack the free resources after the call's
//! earlier starts — an error naming the job, the node and the reason. Rows without nodes are
//! placed as the built-in node-level rules place them ([`super::Placer::place`]), in the order
//! given; the engine checks the whole again as it allocates.

use std::collections::HashMap;
use std::sync::Arc;

use super::columns::{self, CallColumns, CallState};
use super::topology::{Placer, TopologyView};
use super::view::PolicyView;
use super::{NodeStart, Policy, PolicyError};
use crate::sim::engine::SimError;
use crate::sim::fairshare::FairshareState;
use crate::sim::job::{Time, Workload};
use crate::sim::reservation::ReservedWindow;
use crate::sim::scheduler::node::pass::Failed;
use crate::sim::scheduler::node::{Decisions, NodeScheduler, NodeView, Pass};
use crate::sim::topology::{ConstraintTable, RequestTable};

/// Adapts a [`Policy`] to the engine on a topology. Build one per run.
pub struct NodePolicyScheduler<P: Policy> {
    policy: P,
    requests: Arc<RequestTable>,
    constraints: Arc<ConstraintTable>,
    topology: Option<TopologyView>,
    /// The view's columns of the call (waiting, running, held) and each user's usage.
    columns: CallColumns,
    /// The granted reservations as the view lists them.
    windows: Vec<ReservedWindow>,
    starts: Vec<NodeStart>,
    placer: Placer,
    /// The engine-state pass of the "does anything fit" check, its memo and node buffer.
    pass: Pass,
    failed: Failed,
    nodes: Vec<u32>,
    /// When each running job started (for the usage of the jobs that end).
    start_of: HashMap<u32, Time>,
    /// The run's fairshare, charged as the native `order: fairshare` charges it on nodes, when
    /// the run configures one: the view's `fairshare_usage` and `fairshare_factor`.
    fairshare: Option<FairshareState>,
    failure: Option<SimError>,
}

impl<P: Policy> NodePolicyScheduler<P> {
    /// `policy` over `workload` (its request and constraint tables).
    pub fn new(policy: P, workload: &Workload) -> Self {
        NodePolicyScheduler {
            policy,
            requests: Arc::new(workload.requests.clone()),
            constraints: Arc::new(workload.constraints.clone()),
            topology: None,
            columns: CallColumns::default(),
            windows: Vec::new(),
            starts: Vec::new(),
            placer: Placer::default(),
            pass: Pass::default(),
            failed: Failed::default(),
            nodes: Vec::new(),
            start_of: HashMap::new(),
            fairshare: None,
            failure: None,
        }
    }

    /// Shows the policy the decayed fairshare of `state` (built on the run's workload and
    /// topology from the run's fairshare settings) in `fairshare_usage` and `fairshare_factor`.
    pub fn with_fairshare(mut self, state: FairshareState) -> Self {
        self.fairshare = Some(state);
        self
    }

    /// Charges the jobs that ended since the previous call, asked or not.
    fn account(&mut self, view: &NodeView<'_>) {
        self.columns.usage.ensure(view.jobs);
        for c in view.completed {
            if let Some(fairshare) = &mut self.fairshare {
                fairshare.ended(c.job, c.end);
            }
            let start = self.start_of.remove(&c.job).unwrap_or(c.end);
            let job = &view.jobs[c.job as usize];
            self.columns.usage.charge(c.job, job.procs, c.end - start);
        }
    }

    /// The waiting and running columns of this call.
    fn fill(&mut self, view: &NodeView<'_>) {
        let state = CallState {
            jobs: view.jobs,
            requests: &self.requests,
            queue: view.queue,
            running: view.running,
            limits: view.limits,
            now: view.now,
        };
        self.columns.fill(state, self.fairshare.as_mut(), |end| {
            view.predicted_end(end)
        });
    }

    /// Checks the policy's decisions in its terms and turns them into the engine's.
    fn check(
        topo: &TopologyView,
        placer: &mut Placer,
        policy_view: &PolicyView<'_>,
        starts: &[NodeStart],
        view: &NodeView<'_>,
        decisions: &mut Decisions,
    ) -> Result<(), String> {
        let waiting = policy_view.waiting;
        let mut seen = vec![false; waiting.len()];
        for start in starts {
            let row = start.row;
            if let Some(error) = columns::held_row_error(policy_view, row) {
                return Err(error);
            }
            if row >= waiting.len() {
                return Err(format!(
                    "it started row {row}, but only {} jobs are waiting (rows 0 to {})",
                    waiting.len(),
                    waiting.len() as i64 - 1
                ));
            }
            let job = format!("job {} (row {row})", waiting.id[row]);
            if std::mem::replace(&mut seen[row], true) {
                return Err(format!("it started {job} twice"));
            }
            let nodes: Vec<u32> = match &start.nodes {
                None => match placer.place(topo, row) {
                    Some(nodes) => nodes.to_vec(),
                    None => {
                        return Err(format!(
                            "{job} does not fit now on any node it may use, after this call's earlier starts"
                        ));
                    }
                },
                Some(nodes) => {
                    placer.take(topo, row, nodes).map_err(|reason| {
                        format!("{job} cannot start on nodes {nodes:?}: {reason}")
                    })?;
                    nodes.clone()
                }
            };
            // The engine's class is its nodes' class; its position is the row (the view lists
            // the queue in its order).
            let class = view.layout.class_of(nodes[0]);
            decisions.start(row, class, &nodes);
        }
        Ok(())
    }
}

/// Whether some waiting job fits now on an eligible class, on the engine's state (a request
/// that found no nodes is not searched again: within a call resources only shrink).
fn any_fits(
    view: &NodeView<'_>,
    pass: &mut Pass,
    failed: &mut Failed,
    nodes: &mut Vec<u32>,
) -> bool {
    pass.begin(view);
    failed.clear();
    view.queue.iter().any(|q| {
        let job = &view.jobs[q.job as usize];
        if failed.contains(job, false) {
            return false;
        }
        let fits = view.classes_of(q.job).iter().any(|&class| {
            view.shape(q.job, class)
                .is_some_and(|shape| pass.select_any(view, class, &shape, nodes))
        });
        if !fits {
            failed.insert(job, false);
        }
        fits
    })
}

impl<P: Policy> NodeScheduler for NodePolicyScheduler<P> {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        if self.failure.is_some() {
            return;
        }
        self.account(view);
        let fail = |message: String| SimError::Policy {
            time: view.now,
            message,
        };
        if view.queue.is_empty() {
            return;
        }
        // Nothing can start unless some waiting job fits now on a node it may use: the policy
        // is not asked (docs/policies.md, "When it calls"), and no snapshot is made.
        if !any_fits(view, &mut self.pass, &mut self.failed, &mut self.nodes) {
            return;
        }
        let topo = self.topology.get_or_insert_with(|| {
            TopologyView::new(view, self.requests.clone(), self.constraints.clone())
        });
        topo.fill(view);
        self.fill(view);
        let topo = self.topology.as_ref().expect("filled above");
        // Reservations as on a pool, their width counting whole nodes of one class (the
        // placer plans beside them).
        self.windows.clear();
        self.windows
            .extend(view.reservations.iter().map(|w| ReservedWindow {
                start: w.start,
                end: w.end,
                width: u64::from(w.count),
            }));
        let capacity: i64 = topo.nodes.cores.iter().sum();
        let free: i64 = topo.nodes.free_cores.iter().sum();
        let policy_view = PolicyView {
            now: view.now,
            capacity,
            free,
            procs_per_unit: 1,
            waiting: &self.columns.waiting,
            running: &self.columns.running,
            reservations: &self.windows,
            held: &self.columns.held,
            topology: Some(topo),
        };
        self.starts.clear();
        match self.policy.decide_on_nodes(&policy_view, &mut self.starts) {
            Err(PolicyError(message)) => {
                self.failure = Some(fail(format!(
                    "policy {} failed:\n{message}",
                    self.policy.name()
                )));
            }
            Ok(()) => {
                self.placer = topo.placer();
                if let Err(reason) = Self::check(
                    topo,
                    &mut self.placer,
                    &policy_view,
                    &self.starts,
                    view,
                    decisions,
                ) {
                    decisions.clear();
                    self.failure = Some(fail(format!(
                        "policy {} made an impossible decision: {reason}",
                        self.policy.name()
                    )));
                }
            }
        }
    }

    // The fairshare, when the run has one, is charged here as the native order charges it.
    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.start_of.insert(job, now);
        if let Some(fairshare) = &mut self.fairshare {
            fairshare.started(now, job, class);
        }
    }

    fn failure(&mut self) -> Option<SimError> {
        self.failure.take()
    }
}
