//! Packing nodes into array tasks by estimated cost (pure).
//!
//! Thousands of one-simulation jobs hurt a cluster's scheduler, and a task's fixed cost (start,
//! reading the manifest, parsing its trace) dwarfs a tiny simulation; one task per CPU wastes
//! nothing. So nodes are packed: `tasks` bins of about equal estimated cost; nodes that read the
//! same input go into the same task where possible (its trace is parsed once per task); a node
//! costlier than the share of one task runs alone. Tasks come out costliest first, so the array's
//! low indices — which Slurm tends to start first — hold the long work (LPT across the cluster).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// A node to place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// Index of the node in the plan.
    pub node: usize,
    /// Estimated cost (relative units).
    pub cost: u64,
    /// Nodes of one group share an input: packed together where possible.
    pub group: u64,
}

/// Splits `items` into at most `tasks` bins (at least one, never more than there are items);
/// each bin lists plan node indices. Deterministic: the same items give the same bins.
pub fn pack(items: &[Item], tasks: usize) -> Vec<Vec<usize>> {
    if items.is_empty() {
        return Vec::new();
    }
    let tasks = tasks.clamp(1, items.len());
    let total: u64 = items.iter().map(|i| i.cost.max(1)).sum();
    let share = total.div_ceil(tasks as u64);

    // Next fit within each group, costliest nodes first.
    let mut groups: BTreeMap<u64, Vec<Item>> = BTreeMap::new();
    for item in items {
        groups.entry(item.group).or_default().push(*item);
    }
    let mut bins: Vec<(u64, Vec<usize>)> = Vec::new();
    for mut group in groups.into_values() {
        group.sort_by_key(|i| (Reverse(i.cost), i.node));
        let mut open: Option<(u64, Vec<usize>)> = None;
        for item in group {
            let cost = item.cost.max(1);
            match &mut open {
                Some((load, nodes)) if *load + cost <= share => {
                    *load += cost;
                    nodes.push(item.node);
                }
                _ => {
                    bins.extend(open.take());
                    open = Some((cost, vec![item.node]));
                }
            }
        }
        bins.extend(open);
    }

    // Too many bins (many small groups): merge, heaviest first onto the lightest task.
    if bins.len() > tasks {
        bins.sort_by_key(|(load, nodes)| (Reverse(*load), nodes[0]));
        let mut merged: Vec<(u64, Vec<usize>)> = bins.drain(..tasks).collect();
        let mut lightest: BinaryHeap<Reverse<(u64, usize)>> = merged
            .iter()
            .enumerate()
            .map(|(i, (load, _))| Reverse((*load, i)))
            .collect();
        for (load, nodes) in bins {
            let Reverse((current, i)) = lightest.pop().expect("tasks ≥ 1");
            merged[i].0 += load;
            merged[i].1.extend(nodes);
            lightest.push(Reverse((current + load, i)));
        }
        bins = merged;
    }
    bins.sort_by_key(|(load, nodes)| (Reverse(*load), nodes[0]));
    bins.into_iter().map(|(_, nodes)| nodes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(costs: &[(u64, u64)]) -> Vec<Item> {
        costs
            .iter()
            .enumerate()
            .map(|(node, &(cost, group))| Item { node, cost, group })
            .collect()
    }

    fn every_node_once(bins: &[Vec<usize>], n: usize) {
        let mut seen: Vec<usize> = bins.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn small_nodes_share_tasks_and_a_big_one_runs_alone() {
        // One node of 1,000 and 100 nodes of 10: two tasks of about 1,000 each.
        let mut costs = vec![(1000, 0)];
        costs.extend(std::iter::repeat_n((10, 0), 100));
        let bins = pack(&items(&costs), 2);
        every_node_once(&bins, 101);
        assert_eq!(bins.len(), 2);
        assert_eq!(bins[0], vec![0], "the costly node alone, first");
        assert_eq!(bins[1].len(), 100);
    }

    #[test]
    fn never_more_tasks_than_asked_or_than_nodes() {
        let costs: Vec<(u64, u64)> = (0..50).map(|i| (1 + i % 7, i % 13)).collect();
        for tasks in [1, 2, 5, 13, 49, 50, 500] {
            let bins = pack(&items(&costs), tasks);
            every_node_once(&bins, 50);
            assert!(bins.len() <= tasks.min(50), "{tasks}: {}", bins.len());
            assert!(bins.iter().all(|b| !b.is_empty()));
        }
        assert!(pack(&[], 4).is_empty());
    }

    #[test]
    fn nodes_of_one_input_stay_together_and_loads_are_balanced() {
        // Two traces, 40 equal nodes each, 4 tasks: each task reads one trace only.
        let costs: Vec<(u64, u64)> = (0..80).map(|i| (5, i / 40)).collect();
        let bins = pack(&items(&costs), 4);
        every_node_once(&bins, 80);
        assert_eq!(bins.len(), 4);
        for bin in &bins {
            let groups: std::collections::BTreeSet<usize> = bin.iter().map(|n| n / 40).collect();
            assert_eq!(groups.len(), 1, "{bin:?}");
            assert_eq!(bin.len(), 20);
        }
    }

    #[test]
    fn packing_is_deterministic() {
        let costs: Vec<(u64, u64)> = (0..200).map(|i| ((i * 37) % 101, i % 3)).collect();
        assert_eq!(pack(&items(&costs), 16), pack(&items(&costs), 16));
    }
}
