//! Rows-only FCFS and EASY on a topology, written against the policy interface's `Placer`
//! only: the Rust counterparts of `policies/nodes.py`, which must reproduce the native
//! node-level rules job for job and node for node.

use schedlab::sim::policy::{NodeStart, Policy, PolicyError, PolicyView};

/// FCFS with rows only: each waiting row in order while the placer finds it nodes.
pub struct Fcfs;

impl Policy for Fcfs {
    fn decide(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), PolicyError> {
        let topo = view.topology.expect("on a topology");
        let mut placer = topo.placer();
        for row in 0..view.waiting.len() {
            if placer.place(topo, row).is_none() {
                break;
            }
            starts.push(row);
        }
        Ok(())
    }

    fn name(&self) -> &str {
        "fcfs"
    }
}

/// EASY: start in order while jobs fit, the head's shadow time, then backfill; the decisions
/// are the placer's, each on the nodes it chose (a long backfill spares the head's nodes).
pub struct Easy;

impl Policy for Easy {
    fn decide(&mut self, _: &PolicyView<'_>, _: &mut Vec<usize>) -> Result<(), PolicyError> {
        unreachable!("decide_on_nodes is called on a topology")
    }

    fn decide_on_nodes(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), PolicyError> {
        let topo = view.topology.expect("on a topology");
        let mut placer = topo.placer();
        let mut rows = 0..view.waiting.len();
        let mut head = None;
        for row in rows.by_ref() {
            if placer.place(topo, row).is_none() {
                head = Some(row);
                break;
            }
        }
        if let Some(head) = head
            && placer.shadow(topo, head).is_some()
        {
            for row in rows {
                placer.backfill(topo, row);
            }
        }
        starts.extend(placer.starts());
        Ok(())
    }

    fn name(&self) -> &str {
        "easy"
    }
}
