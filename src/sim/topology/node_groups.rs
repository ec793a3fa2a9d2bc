//! The nodes of each shared class grouped by their availability from now on.
//!
//! Nodes whose step functions agree from the present on are interchangeable to a search for the
//! earliest fit: each gives the same earliest start for a shape. A search can then visit one
//! node per group and count it as many times as the group has members, which turns a walk over
//! every node of a class into a walk over the distinct futures there. On the Curie-shaped
//! window those are about 1 % of the nodes at 5,000 nodes and 6 % at 500 (wide jobs hold many
//! nodes over the same interval, and idle nodes share one flat future).
//!
//! Grouping is exact, not hashed: a node joins a group only if its future equals the group's
//! representative's breakpoint for breakpoint ([`Steps::same_future`]); the hash only finds the
//! candidate. Upkeep is lazy:
//! - a node whose step function changed is marked dirty ([`NodeGroups::touch`]) and re-grouped
//!   at the next [`NodeGroups::sync`], once however often it changed in between;
//! - a group's hash describes its future from the present, so it expires when the present
//!   passes the group's next breakpoint; `sync` re-hashes expired groups and merges those that
//!   have become equal (two nodes whose holds end at different times agree once both ended).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;

use super::layout::Layout;
use super::steps::{Steps, Vector};
use crate::sim::job::Time;
use crate::sim::mix_hash::MixHasher;

/// No group: the node is dirty, or of a class not grouped.
const NONE: u32 = u32::MAX;

/// Classes of fewer nodes are not grouped: a walk over them costs little, and the upkeep would
/// cost more (METACENTRUM-2009 on `mc-2013`, classes of 1–112 nodes: node-level conservative
/// took +55 % CPU with every class grouped). Unit tests group every class.
const GROUPED_FROM: u32 = if cfg!(test) { 1 } else { 128 };

#[derive(Clone, Debug, Default)]
struct Group {
    class: u32,
    /// The members' future hash as of when it was last computed.
    key: u64,
    /// Whether `by_key` maps `(class, key)` to this group (not when another group with a
    /// different future took the key first: a hash collision).
    indexed: bool,
    /// Nodes, in no order; the first is the representative.
    members: Vec<u32>,
    /// The members' next breakpoint after the present when `key` was computed.
    expires: Time,
    /// Where the group sits in its class's list.
    class_slot: u32,
}

#[derive(Clone, Debug, Default)]
pub struct NodeGroups {
    /// Per node: its group, or [`NONE`].
    group_of: Vec<u32>,
    /// Per node: its index in its group's members.
    slot: Vec<u32>,
    /// Per node: its class.
    class_of: Vec<u32>,
    /// Per class: whether its nodes are grouped (shared, and at least [`GROUPED_FROM`] nodes).
    grouped: Vec<bool>,
    /// Per node: whether it waits in `dirty`.
    is_dirty: Vec<bool>,
    dirty: Vec<u32>,
    groups: Vec<Group>,
    /// Group ids free for reuse.
    spare: Vec<u32>,
    by_key: HashMap<(u32, u64), u32, BuildHasherDefault<MixHasher>>,
    /// Per class: its live groups.
    per_class: Vec<Vec<u32>>,
    /// Groups by when their key expires (entries whose group moved on are skipped).
    expiry: BinaryHeap<Reverse<(Time, u32)>>,
}

impl NodeGroups {
    /// Forgets every group: the nodes of the shared classes (`shared[c]`) large enough to be
    /// grouped are all dirty.
    pub fn reset(&mut self, layout: &Layout, shared: &[bool]) {
        let n = layout.node_count() as usize;
        self.group_of.clear();
        self.group_of.resize(n, NONE);
        self.slot.clear();
        self.slot.resize(n, 0);
        self.class_of.clear();
        self.is_dirty.clear();
        self.is_dirty.resize(n, false);
        self.dirty.clear();
        self.groups.clear();
        self.spare.clear();
        self.by_key.clear();
        self.per_class.clear();
        self.per_class.resize_with(shared.len(), Vec::new);
        self.expiry.clear();
        self.grouped.clear();
        for (c, class) in layout.classes().iter().enumerate() {
            let grouped = shared[c] && class.nodes.len() as u32 >= GROUPED_FROM;
            self.grouped.push(grouped);
            for node in class.nodes.clone() {
                self.class_of.push(c as u32);
                if grouped {
                    self.touch(node);
                }
            }
        }
        debug_assert_eq!(self.class_of.len(), n);
    }

    /// Whether `class`'s nodes are grouped (else searched node by node).
    #[inline]
    pub fn grouped(&self, class: u32) -> bool {
        self.grouped[class as usize]
    }

    /// Notes that `node`'s step function changed (a node of a grouped class).
    #[inline]
    pub fn touch(&mut self, node: u32) {
        let dirty = &mut self.is_dirty[node as usize];
        if !*dirty {
            *dirty = true;
            self.dirty.push(node);
        }
    }

    /// Brings the groups up to `nodes` (every node's step function) at `now`.
    pub fn sync(&mut self, now: Time, nodes: &[Steps<Vector>]) {
        if self.dirty.is_empty() && self.expiry.peek().is_none_or(|e| e.0.0 > now) {
            return;
        }
        // The dirty nodes leave their groups first: what stays are clean members, whose
        // futures still agree.
        let dirty = std::mem::take(&mut self.dirty);
        for &node in &dirty {
            self.leave(node);
        }
        while let Some(&Reverse((t, g))) = self.expiry.peek() {
            if t > now {
                break;
            }
            self.expiry.pop();
            let group = &self.groups[g as usize];
            if group.members.is_empty() || group.expires != t {
                continue;
            }
            self.rekey(g, now, nodes);
        }
        // Nodes changed together often agree (a wide job's nodes; runs of idle nodes after a
        // reset): the group the previous one joined is tried before any hash.
        let mut previous: Option<u32> = None;
        for &node in &dirty {
            self.is_dirty[node as usize] = false;
            match previous {
                Some(p)
                    if self.class_of[p as usize] == self.class_of[node as usize]
                        && nodes[p as usize].same_future(&nodes[node as usize], now) =>
                {
                    self.add_member(self.group_of[p as usize], node);
                }
                _ => self.join(node, now, nodes),
            }
            previous = Some(node);
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    /// The groups of `class` as (a representative node, the number of members), once synced.
    pub fn of_class(&self, class: u32) -> impl Iterator<Item = (u32, usize)> + '_ {
        debug_assert!(self.dirty.is_empty(), "groups read unsynced");
        self.per_class[class as usize].iter().map(|&g| {
            let members = &self.groups[g as usize].members;
            (members[0], members.len())
        })
    }

    /// `node`'s group, once synced (ids are below [`NodeGroups::ids`]).
    #[inline]
    pub fn group_of(&self, node: u32) -> u32 {
        self.group_of[node as usize]
    }

    /// An upper bound on group ids.
    pub fn ids(&self) -> usize {
        self.groups.len()
    }

    fn leave(&mut self, node: u32) {
        let g = self.group_of[node as usize];
        if g == NONE {
            return;
        }
        self.group_of[node as usize] = NONE;
        let slot = self.slot[node as usize] as usize;
        let group = &mut self.groups[g as usize];
        group.members.swap_remove(slot);
        if let Some(&moved) = group.members.get(slot) {
            self.slot[moved as usize] = slot as u32;
        }
        if group.members.is_empty() {
            self.drop_group(g);
        }
    }

    fn drop_group(&mut self, g: u32) {
        let group = &self.groups[g as usize];
        let (class, slot) = (group.class as usize, group.class_slot as usize);
        if group.indexed {
            self.by_key.remove(&(group.class, group.key));
        }
        let list = &mut self.per_class[class];
        list.swap_remove(slot);
        if let Some(&moved) = list.get(slot) {
            self.groups[moved as usize].class_slot = slot as u32;
        }
        self.groups[g as usize].indexed = false;
        self.spare.push(g);
    }

    /// Files `g` under its key as of `now` and schedules the key's expiry.
    fn index(&mut self, g: u32, now: Time, nodes: &[Steps<Vector>]) {
        let group = &mut self.groups[g as usize];
        let steps = &nodes[group.members[0] as usize];
        group.key = steps.future_hash(now);
        group.expires = steps.next_change(now).unwrap_or(Time::MAX);
        group.indexed = false;
        if let std::collections::hash_map::Entry::Vacant(e) =
            self.by_key.entry((group.class, group.key))
        {
            e.insert(g);
            group.indexed = true;
        }
        if group.expires < Time::MAX {
            self.expiry.push(Reverse((group.expires, g)));
        }
    }

    /// The present passed `g`'s next breakpoint: files it under its new key, merged into the
    /// group already there if their futures now agree.
    fn rekey(&mut self, g: u32, now: Time, nodes: &[Steps<Vector>]) {
        let group = &mut self.groups[g as usize];
        let (class, rep) = (group.class, group.members[0]);
        if group.indexed {
            group.indexed = false;
            self.by_key.remove(&(class, group.key));
        }
        let key = nodes[rep as usize].future_hash(now);
        if let Some(&other) = self.by_key.get(&(class, key))
            && nodes[self.groups[other as usize].members[0] as usize]
                .same_future(&nodes[rep as usize], now)
        {
            self.merge(g, other);
            return;
        }
        self.index(g, now, nodes);
    }

    /// Moves every member of `from` into `into` and drops `from`.
    fn merge(&mut self, from: u32, into: u32) {
        let members = std::mem::take(&mut self.groups[from as usize].members);
        let target = &mut self.groups[into as usize].members;
        for &node in &members {
            self.group_of[node as usize] = into;
            self.slot[node as usize] = target.len() as u32;
            target.push(node);
        }
        self.drop_group(from);
    }

    fn join(&mut self, node: u32, now: Time, nodes: &[Steps<Vector>]) {
        let class = self.class_of[node as usize];
        let steps = &nodes[node as usize];
        let key = steps.future_hash(now);
        let g = match self.by_key.get(&(class, key)) {
            Some(&g)
                if nodes[self.groups[g as usize].members[0] as usize].same_future(steps, now) =>
            {
                g
            }
            _ => {
                let g = self.new_group(class, node);
                self.index(g, now, nodes);
                return;
            }
        };
        self.add_member(g, node);
    }

    fn add_member(&mut self, g: u32, node: u32) {
        let members = &mut self.groups[g as usize].members;
        self.group_of[node as usize] = g;
        self.slot[node as usize] = members.len() as u32;
        members.push(node);
    }

    /// A group of `node` alone, in its class's list (not yet indexed).
    fn new_group(&mut self, class: u32, node: u32) -> u32 {
        let list = &mut self.per_class[class as usize];
        let group = Group {
            class,
            key: 0,
            indexed: false,
            members: vec![node],
            expires: Time::MAX,
            class_slot: list.len() as u32,
        };
        let g = match self.spare.pop() {
            Some(g) => {
                // Keep the spare's member buffer.
                let old = &mut self.groups[g as usize];
                let mut members = std::mem::take(&mut old.members);
                members.clear();
                members.push(node);
                *old = Group { members, ..group };
                g
            }
            None => {
                self.groups.push(group);
                (self.groups.len() - 1) as u32
            }
        };
        list.push(g);
        self.group_of[node as usize] = g;
        self.slot[node as usize] = 0;
        g
    }
}

/// A value worked out once per group within one search (what every member would give).
#[derive(Clone, Debug, Default)]
pub struct PerGroup<T> {
    /// Per group id: the search that filled it, and the value.
    entries: Vec<(u64, T)>,
    search: u64,
}

impl<T: Copy + Default> PerGroup<T> {
    /// Starts a search over groups with ids below `ids`: every entry is unknown.
    pub fn begin(&mut self, ids: usize) {
        self.search += 1;
        if self.entries.len() < ids {
            self.entries.resize(ids, (0, T::default()));
        }
    }

    /// Group `g`'s value, worked out by `f` the first time in this search.
    #[inline]
    pub fn get(&mut self, g: u32, f: impl FnOnce() -> T) -> T {
        let entry = &mut self.entries[g as usize];
        if entry.0 != self.search {
            *entry = (self.search, f());
        }
        entry.1
    }
}

#[cfg(test)]
mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    /// Two shared classes of alike nodes (so that an idle node of one agrees with an idle node
    /// of the other: groups must still not mix classes) and a whole-node class.
    fn layout() -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![
            Cluster::new(
                "s",
                Allocation::Shared,
                vec![NodeClass::new("a", 9, 8, 16), NodeClass::new("b", 5, 8, 16)],
            ),
            Cluster::new(
                "x",
                Allocation::ExclusiveNodes,
                vec![NodeClass::new("n", 3, 8, 16)],
            ),
        ])))
        .unwrap()
    }

    /// After every sync over random changes and a moving present: each node of a shared class
    /// sits in one group of its class, agrees from now on with the group's representative, and
    /// the class has as many groups as distinct futures (equal futures are merged, also once
    /// the holds that told them apart have passed).
    #[test]
    fn groups_are_the_distinct_futures() {
        let l = layout();
        let shared = [true, true, false];
        let mut rand = super::super::test_rand(0x9e37);
        for _ in 0..200 {
            let mut nodes: Vec<Steps<Vector>> = (0..l.node_count())
                .map(|_| {
                    let mut s = Steps::default();
                    s.reset(0, [8, 16, 0]);
                    s
                })
                .collect();
            let mut groups = NodeGroups::default();
            groups.reset(&l, &shared);
            let mut now = 0;
            for _ in 0..60 {
                match rand(3) {
                    0 => now += rand(15) as Time,
                    _ => {
                        // A hold or give-back on a run of nodes of one class, as a wide job's.
                        let class = rand(2) as u32;
                        let range = l.class(class).nodes.clone();
                        let first = range.start + rand(u64::from(range.len() as u32)) as u32;
                        let last = (first + 1 + rand(4) as u32).min(range.end);
                        let from = now + rand(30) as Time;
                        let to = (rand(4) > 0).then(|| from + 1 + rand(30) as Time);
                        let delta = [rand(3) as i64 - 1, 0, 0];
                        for node in first..last {
                            let steps = &mut nodes[node as usize];
                            steps.advance(now);
                            steps.add(from, to, delta);
                            groups.touch(node);
                        }
                    }
                }
                if rand(3) > 0 {
                    continue;
                }
                groups.sync(now, &nodes);
                for class in 0..2u32 {
                    let range = l.class(class).nodes.clone();
                    let listed: usize = groups.of_class(class).map(|(_, m)| m).sum();
                    assert_eq!(listed, range.len());
                    for node in range.clone() {
                        let g = groups.group_of(node);
                        assert_eq!(groups.groups[g as usize].class, class);
                        let rep = groups.groups[g as usize].members[0];
                        assert!(nodes[node as usize].same_future(&nodes[rep as usize], now));
                    }
                    let mut distinct: Vec<u32> = Vec::new();
                    for node in range {
                        if !distinct
                            .iter()
                            .any(|&d| nodes[d as usize].same_future(&nodes[node as usize], now))
                        {
                            distinct.push(node);
                        }
                    }
                    assert_eq!(groups.of_class(class).count(), distinct.len(), "at {now}");
                }
            }
        }
    }
}
