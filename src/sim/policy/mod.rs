//! Policies written outside the built-in rules: the one decision interface (docs/policies.md).
//!
//! A [`Policy`] is called by the engine at scheduling points with a read-only [`PolicyView`]:
//! the time, the waiting jobs as columns in submission order, the running jobs as columns in
//! order of expected end, the free and total capacity, and the helpers every backfilling rule
//! needs ([`PolicyView::shadow`], [`PolicyView::earliest_start`]). It returns its decisions as
//! data: the rows of the waiting jobs to start now. [`PolicyScheduler`] adapts a policy to the
//! engine's [`crate::sim::Scheduler`]: it builds the view, calls the policy, checks every
//! decision (a row that is not waiting, a repeated row, a job that does not fit now or would
//! hold reserved capacity is an error naming the job and the reason) and hands the engine the
//! queue positions, which the engine checks again and applies.
//!
//! The built-in orders × backfilling rules keep their own fast paths
//! ([`crate::sim::scheduler`]); this is how everything else comes in: a policy written in
//! Rust, or in Python through the `schedlab` package (`python/`), which hands the columns over
//! as arrays once per call.
//!
//! Guarantees (docs/policies.md, "What the engine guarantees"): the policy is called at the
//! instants where the engine would call a built-in rule (every event instant, or the multiples
//! of the scheduling interval), but only when at least one waiting job's units fit in the free
//! allocation units — no start is possible otherwise (beside advance reservations such a job
//! may still have to wait; the policy is asked then). Nothing is lost at the instants skipped:
//! each view is the whole state at its time, and the users' usage counts every job that ended,
//! at a call or not. Calls come in time order; the view lists jobs in submission order; the
//! same workload, machine and policy give the same calls and the same schedule, run after run.

mod adapter;
mod availability;
mod columns;
mod node_adapter;
mod topology;
mod view;

pub use adapter::PolicyScheduler;
pub use availability::{Plan, Shadow};
pub use node_adapter::NodePolicyScheduler;
pub use topology::{JobShape, Nodes, Placer, TopologyView};
pub use view::{Held, PolicyView, Running, Waiting};

/// A scheduling policy: at each call, the rows of [`PolicyView::waiting`] to start now.
pub trait Policy {
    /// Pushes to `starts` the rows (indices into `view.waiting`) of the jobs to start at
    /// `view.now`, each at most once, in any order. Starting nothing is a valid decision. An
    /// error stops the run with the policy's message (e.g. a Python traceback).
    fn decide(&mut self, view: &PolicyView<'_>, starts: &mut Vec<usize>)
    -> Result<(), PolicyError>;

    /// A short name for messages (the class name of a Python policy).
    fn name(&self) -> &str;

    /// On a topology ([`PolicyView::topology`]): the jobs to start now, each either placed by
    /// the engine with the machine's placement ([`NodeStart::placed`]) or on the nodes the
    /// policy names ([`NodeStart::on`]). The default starts the rows of [`Policy::decide`],
    /// every one placed by the engine.
    fn decide_on_nodes(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), PolicyError> {
        let mut rows = Vec::new();
        self.decide(view, &mut rows)?;
        starts.extend(rows.into_iter().map(NodeStart::placed));
        Ok(())
    }
}

/// A decision on a topology: start waiting row `row`, on `nodes` when given (node indices of
/// [`TopologyView::nodes`], full nodes first and a last partial node last), else where the
/// machine's placement puts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStart {
    pub row: usize,
    pub nodes: Option<Vec<u32>>,
}

impl NodeStart {
    /// `row`, placed by the engine.
    pub fn placed(row: usize) -> Self {
        NodeStart { row, nodes: None }
    }

    /// `row` on `nodes`.
    pub fn on(row: usize, nodes: Vec<u32>) -> Self {
        NodeStart {
            row,
            nodes: Some(nodes),
        }
    }
}

/// Why a policy could not decide: its own failure (what it raised), carried as text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn decide(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), PolicyError> {
        (**self).decide(view, starts)
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn decide_on_nodes(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), PolicyError> {
        (**self).decide_on_nodes(view, starts)
    }
}
