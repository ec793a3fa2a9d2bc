//! Walks a DAG of nodes: cache hits are reported, the rest run in parallel (rayon, one node per
//! task, each node itself sequential), level by level so that a node runs after its upstream
//! nodes. A failing node does not stop the others; nodes downstream of it are reported blocked.
//! Every node produces exactly one [`Event`] — the log tests assert on (STYLE.md item 13).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::plan::NodeKey;

/// What the executor needs to know of a node.
#[derive(Clone, Debug)]
pub struct DagNode {
    pub label: String,
    pub key: NodeKey,
    /// Indices of upstream nodes.
    pub deps: Vec<usize>,
    /// A complete cache entry already exists.
    pub cached: bool,
    /// Relative cost estimate: within a level, costlier nodes start first (longest processing
    /// time first), so a long node does not run alone at the end. Never affects results.
    pub cost: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Served from the cache; nothing ran.
    Hit,
    /// Ran and stored its entry.
    Ran,
    /// Ran and failed; nothing was stored.
    Failed { error: String },
    /// Not run because an upstream node failed.
    Blocked { upstream: String },
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Event {
    pub label: String,
    pub key: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Wall-clock seconds the node took (0 for hits); not part of any result.
    #[serde(skip)]
    pub seconds: f64,
    /// The node's cost estimate ([`DagNode::cost`]), for progress estimates.
    #[serde(skip)]
    pub cost: u64,
}

/// Receives events as they happen (progress bars, logs).
pub trait Observer: Sync {
    fn started(&self, _to_run: usize, _total: usize) {}
    /// The summed cost estimate of the nodes to run (called after `started`).
    fn costs(&self, _to_run: u64) {}
    fn event(&self, _event: &Event) {}
    /// Something the user should know that is not a node's outcome (printed even when quiet).
    fn warning(&self, _message: &str) {}
    /// A status line from an executor (e.g. the Slurm queue's state), for progress displays.
    fn note(&self, _text: &str) {}
    fn finished(&self) {}
    /// Where running simulations report how far they got, if this observer shows it.
    fn meters(&self) -> Option<&super::meter::Meters> {
        None
    }
}

/// Executes `nodes` with up to `threads` threads, calling `work(i)` for each node `i` that must
/// run. Returns one event per node, in node order.
pub fn execute(
    nodes: &[DagNode],
    threads: usize,
    work: &(dyn Fn(usize) -> Result<(), String> + Sync),
    observer: &dyn Observer,
) -> Vec<Event> {
    let levels = levels(nodes);
    // Each node's outcome and time only: its label and key are in `nodes`, so finished nodes
    // cost no strings until the events are handed back.
    let outcomes: Vec<Mutex<Option<(Outcome, f64)>>> =
        nodes.iter().map(|_| Mutex::new(None)).collect();
    let to_run = nodes.iter().filter(|n| !n.cached).count();
    observer.started(to_run, nodes.len());
    observer.costs(nodes.iter().filter(|n| !n.cached).map(|n| n.cost).sum());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("thread pool starts");
    let failed_upstream = |i: usize| -> Option<String> {
        nodes[i].deps.iter().find_map(|&d| {
            let o = outcomes[d].lock().unwrap();
            match o.as_ref().map(|(outcome, _)| outcome) {
                Some(Outcome::Failed { .. }) => Some(nodes[d].label.clone()),
                Some(Outcome::Blocked { upstream }) => Some(upstream.clone()),
                _ => None,
            }
        })
    };
    pool.install(|| {
        for level in &levels {
            let mut order = level.clone();
            order.sort_by_key(|&i| (std::cmp::Reverse(nodes[i].cost), i));
            let cursor = AtomicUsize::new(0);
            let run_node = |i: usize| {
                let node = &nodes[i];
                let started = Instant::now();
                let outcome = if node.cached {
                    Outcome::Hit
                } else if let Some(upstream) = failed_upstream(i) {
                    Outcome::Blocked { upstream }
                } else {
                    match catch_unwind(AssertUnwindSafe(|| work(i))) {
                        Ok(Ok(())) => Outcome::Ran,
                        Ok(Err(error)) => Outcome::Failed { error },
                        Err(panic) => Outcome::Failed {
                            error: panic_message(&panic),
                        },
                    }
                };
                let seconds = if node.cached {
                    0.0
                } else {
                    started.elapsed().as_secs_f64()
                };
                let event = event_of(node, outcome, seconds);
                observer.event(&event);
                *outcomes[i].lock().unwrap() = Some((event.outcome, seconds));
            };
            // Each worker takes the next node in cost order until the level is done.
            rayon::scope(|scope| {
                for _ in 0..threads.max(1) {
                    scope.spawn(|_| {
                        loop {
                            let k = cursor.fetch_add(1, Ordering::Relaxed);
                            let Some(&i) = order.get(k) else { break };
                            run_node(i);
                        }
                    });
                }
            });
        }
    });
    observer.finished();
    nodes
        .iter()
        .zip(outcomes)
        .map(|(node, o)| {
            let (outcome, seconds) = o.into_inner().unwrap().expect("every node has an event");
            event_of(node, outcome, seconds)
        })
        .collect()
}

fn event_of(node: &DagNode, outcome: Outcome, seconds: f64) -> Event {
    Event {
        label: node.label.clone(),
        key: node.key.0.clone(),
        outcome,
        seconds,
        cost: node.cost,
    }
}

/// Groups node indices by depth (a node's depth exceeds its upstream nodes'), each group in
/// node order.
fn levels(nodes: &[DagNode]) -> Vec<Vec<usize>> {
    let mut depth = vec![0usize; nodes.len()];
    // Nodes are listed upstream first (the planner guarantees it), so one pass suffices.
    for (i, node) in nodes.iter().enumerate() {
        depth[i] = node.deps.iter().map(|&d| depth[d] + 1).max().unwrap_or(0);
    }
    let max = depth.iter().copied().max().map_or(0, |m| m + 1);
    let mut levels = vec![Vec::new(); max];
    for (i, &d) in depth.iter().enumerate() {
        levels[d].push(i);
    }
    levels
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("internal error (panic): {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl Observer for Quiet {}

    fn node(label: &str, deps: Vec<usize>, cached: bool) -> DagNode {
        DagNode {
            cost: 1,
            label: label.into(),
            key: NodeKey(format!("k-{label}")),
            deps,
            cached,
        }
    }

    #[test]
    fn failures_are_isolated_and_block_only_downstream() {
        let nodes = vec![
            node("a", vec![], false),
            node("b", vec![], false),
            node("c", vec![], true),
            node("agg-ab", vec![0, 1], false),
            node("agg-c", vec![2], false),
        ];
        let work = |i: usize| {
            if i == 1 {
                Err("boom".to_string())
            } else {
                Ok(())
            }
        };
        let events = execute(&nodes, 2, &work, &Quiet);
        let outcomes: Vec<_> = events.iter().map(|e| e.outcome.clone()).collect();
        assert_eq!(
            outcomes,
            vec![
                Outcome::Ran,
                Outcome::Failed {
                    error: "boom".into()
                },
                Outcome::Hit,
                Outcome::Blocked {
                    upstream: "b".into()
                },
                Outcome::Ran,
            ]
        );
    }

    #[test]
    fn a_panicking_node_is_a_failure_not_a_crash() {
        let nodes = vec![node("a", vec![], false), node("b", vec![], false)];
        let work = |i: usize| if i == 0 { panic!("bug") } else { Ok(()) };
        let events = execute(&nodes, 1, &work, &Quiet);
        assert!(matches!(&events[0].outcome, Outcome::Failed { error } if error.contains("bug")));
        assert_eq!(events[1].outcome, Outcome::Ran);
    }
}
