//! Advance reservations on a topology: a request's `width` counts whole nodes of one class of
//! the named cluster (of any cluster when it names none), held over its window.
//!
//! Placement is [`super::place`]'s rule on nodes: the earliest window of the request's length,
//! at or after its requested start, on the [`Timeline`] of the committed work — running jobs by
//! their requested times and granted reservations, plus, with [`Placement::AfterQueue`], every
//! queued job given its earliest slot in queue order as conservative backfilling would. Classes
//! are tried in topology order; the earliest window wins (ties: the first class). On a shared
//! class the window is pinned to concrete nodes when granted; on a whole-node class its nodes
//! are chosen when it starts (idle nodes, lowest index first), as the class's nodes are
//! interchangeable.

use super::{OnConflict, Placement, ReservationRequest, Rule};
use crate::sim::job::Time;
use crate::sim::scheduler::node::NodeView;
use crate::sim::topology::{Layout, NodeShape, Placement as NodePlacement, Timeline};

/// A granted window on nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeWindow {
    pub start: Time,
    pub class: u32,
    /// Pinned nodes on a shared class; empty on a whole-node class.
    pub nodes: Vec<u32>,
}

/// The classes a request may use (of its cluster, or all), in topology order; empty if it
/// names a cluster the topology does not have.
pub fn classes_for(layout: &Layout, request: &ReservationRequest) -> Vec<u32> {
    let cluster = match &request.cluster {
        Some(name) => match layout.topology().cluster_index(name) {
            Some(c) => Some(c as u32),
            None => return Vec::new(),
        },
        None => None,
    };
    (0..layout.classes().len() as u32)
        .filter(|&c| cluster.is_none_or(|k| layout.class(c).cluster == k))
        .collect()
}

/// The most nodes any class the request may use has (its width may not exceed it).
pub fn capacity_for(layout: &Layout, request: &ReservationRequest) -> u64 {
    classes_for(layout, request)
        .into_iter()
        .map(|c| u64::from(layout.class(c).capacity.nodes))
        .max()
        .unwrap_or(0)
}

/// Where `request` goes, seen at `view.now`, or the rule that refuses it.
pub fn place_on_nodes(
    view: &NodeView<'_>,
    request: &ReservationRequest,
    placement: Placement,
    on_conflict: OnConflict,
) -> Result<NodeWindow, Rule> {
    let layout = view.layout;
    let mut tl = Timeline::default();
    view.committed_timeline(&mut tl);
    if placement == Placement::AfterQueue {
        let mut nodes = Vec::new();
        for q in view.queue {
            let mut best: Option<(Time, u32, NodeShape)> = None;
            for &class in view.classes_of(q.job) {
                if let Some(shape) = view.shape(q.job, class)
                    && let Some(t) = tl.earliest(layout, class, &shape, view.now, q.requested_time)
                    && best.is_none_or(|b| t < b.0)
                {
                    best = Some((t, class, shape));
                }
            }
            if let Some((t, class, shape)) = best {
                nodes.clear();
                if !tl.is_whole(class) {
                    tl.select(
                        layout,
                        class,
                        &shape,
                        t,
                        q.requested_time,
                        view.placement,
                        &mut nodes,
                    );
                }
                tl.hold(class, &shape, &nodes, t, t + q.requested_time);
            }
        }
    }
    let wanted = request.start.max(view.now);
    let width = u32::try_from(request.width).map_err(|_| Rule::WiderThanMachine)?;
    let mut best: Option<(Time, u32, NodeShape)> = None;
    for class in classes_for(layout, request) {
        let cap = &layout.class(class).capacity;
        if width > cap.nodes {
            continue;
        }
        let shape = NodeShape {
            count: width,
            per_node: cap.per_node,
            last: None,
            whole: true,
        };
        if let Some(t) = tl.earliest(layout, class, &shape, wanted, request.duration)
            && best.is_none_or(|b| t < b.0)
        {
            best = Some((t, class, shape));
        }
    }
    let (start, class, shape) = best.ok_or(Rule::NoRoom)?;
    if on_conflict == OnConflict::Reject && start != wanted {
        return Err(Rule::NoRoom);
    }
    let mut nodes = Vec::new();
    if !tl.is_whole(class) {
        tl.select(
            layout,
            class,
            &shape,
            start,
            request.duration,
            NodePlacement::FirstFit,
            &mut nodes,
        );
    }
    Ok(NodeWindow {
        start,
        class,
        nodes,
    })
}
