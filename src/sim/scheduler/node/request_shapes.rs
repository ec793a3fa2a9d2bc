//! Each waiting request's shapes on the classes it may run on, worked out once: node-level
//! EASY's backfilling tries a request at nearly every call it waits through, and most tries end
//! at the cheap test of each class ([`super::pass::Pass::may_fit`]), so resolving the request on
//! each class again ([`crate::sim::topology::JobRequest::on_class`]) was a third of a failed
//! try (BENCHMARKS.md, session 27).

use super::NodeView;
use crate::sim::topology::NodeShape;

/// A request's (class, shape) on each class it may run on and fits when empty, in placement
/// order.
type Shapes = Box<[(u32, NodeShape)]>;

/// Shapes by the dense request index of [`super::waiting::WaitingGroups`] (a request id and
/// processors), dropped when those indices are dealt afresh.
#[derive(Clone, Debug, Default)]
pub struct RequestShapes {
    /// The [`super::waiting::WaitingGroups::rebuilds`] the indices below belong to.
    rebuilds: u64,
    /// Per request index: its shapes; `None` until asked.
    shapes: Vec<Option<Shapes>>,
}

impl RequestShapes {
    /// The shapes of `job`, whose request has dense index `request` under `rebuilds`.
    pub fn of(
        &mut self,
        view: &NodeView<'_>,
        rebuilds: u64,
        request: u32,
        job: u32,
    ) -> &[(u32, NodeShape)] {
        if rebuilds != self.rebuilds {
            self.shapes.clear();
            self.rebuilds = rebuilds;
        }
        let i = request as usize;
        if self.shapes.len() <= i {
            self.shapes.resize(i + 1, None);
        }
        self.shapes[i].get_or_insert_with(|| {
            view.classes_of(job)
                .iter()
                .filter_map(|&class| Some((class, view.shape(job, class)?)))
                .collect()
        })
    }
}
