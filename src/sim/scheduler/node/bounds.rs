//! Lower bounds, shared by the queued jobs of one compression, on where a one-node request can
//! start on a shared class: what lets [`super::NodeConservative`] answer most of its "may this
//! job move earlier?" checks with one node search instead of one per node that rose.
//!
//! For a request (class, per-node demand, duration) the bound is kept as the two smallest
//! earliest starts from now over distinct nodes — the smallest with its node, and a bound on
//! every other node — in the timeline with every hold in place. The queue of a crowded system
//! repeats the same few requests (wagap-2013: ~25 checks per distinct request per compression),
//! and between two checks the timeline mostly only loses capacity (a hold taken), which only
//! moves a node's earliest start later, so a bound stays valid. When capacity rose on some
//! nodes since (a hold given back, a job that moved), only their step functions are searched
//! again, once each (with every node that shares one: offering a node's current start again
//! keeps a bound valid), and the others keep their bound. Bounds are cleared at each compression (`now` moves between them).
//!
//! A bound is worked out only the second time its request is asked in a compression: the first
//! time, the check searches as if there were no bounds. Working one out visits every step
//! function of the class, which pays only when the request comes back; on a trace whose jobs
//! rarely repeat a request (the Curie window's requested times are all distinct) the first
//! visit was most of the cost (session 40, BENCHMARKS.md "what a search pays for"), while
//! wagap-2013's repeated requests lose one use in ~25.
//!
//! The check this serves ([`super::NodeConservative`]'s `may_move`) asks whether a job could
//! start before its reservation `s` with its own hold given back. On a node other than its own
//! the timeline is the same with or without that hold, so when every other node's earliest
//! start is at or after `s`, no slot there precedes `s` and only the job's own node is left to
//! look at; otherwise the general search runs as before. Either way the answer — whether the
//! job moves, and where — is the one the general search gives.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::sim::job::Time;
use crate::sim::mix_hash::MixHasher;
use crate::sim::topology::steps::Vector;
use crate::sim::topology::{Layout, Timeline};

/// No node: the smallest bound holds for every node.
const NO_NODE: u32 = u32::MAX;

/// The two smallest earliest starts of one request over a class's nodes.
#[derive(Clone, Copy, Debug)]
struct Bound {
    /// No node starts earlier.
    first: Time,
    /// The node whose start `first` is (`NO_NODE`: none in particular).
    node: u32,
    /// No node but `node` starts earlier.
    second: Time,
    /// The timeline's clock when the bound was last brought up to date.
    clock: u64,
}

impl Bound {
    const NONE: Bound = Bound {
        first: Time::MAX,
        node: NO_NODE,
        second: Time::MAX,
        clock: 0,
    };

    /// A request asked once in this compression, its bound not worked out.
    const ASKED_ONCE: Bound = Bound {
        clock: u64::MAX,
        ..Bound::NONE
    };

    /// Takes in `node`'s earliest start `e` (`node` not yet counted, or its old start
    /// dropped).
    #[inline]
    fn offer(&mut self, node: u32, e: Time) {
        if e < self.first {
            self.second = self.first;
            self.first = e;
            self.node = node;
        } else if e < self.second {
            self.second = e;
        }
    }

    /// Takes in the earliest start `e` shared by `members` nodes of one step function (`node`
    /// one of them): more than one sets both bounds.
    #[inline]
    fn offer_many(&mut self, node: u32, e: Time, members: usize) {
        self.offer(node, e);
        if members > 1 {
            self.offer(node, e);
        }
    }
}

/// A request's key: class, per-node demand, duration.
type Key = (u32, Vector, Time);

/// Per (class, per-node demand, duration): a [`Bound`], valid for the current compression.
///
/// The bounds live in a `Vec`, found through a map from the key; each class also remembers the
/// last one it asked for, since consecutive queued jobs mostly repeat a request (a user's
/// burst), and comparing the key is much cheaper than hashing it (wagap-2013: see
/// BENCHMARKS.md, "Node-level conservative").
#[derive(Debug, Default)]
pub struct OneNodeBounds {
    bounds: Vec<(Key, Bound)>,
    index: HashMap<Key, u32, BuildHasherDefault<MixHasher>>,
    /// Per class: the index in `bounds` of the last bound asked for there (`NO_NODE`: none).
    last: Vec<u32>,
}

impl OneNodeBounds {
    /// Forgets every bound: `now` moved, or the timeline was rebuilt.
    pub fn clear(&mut self) {
        self.bounds.clear();
        self.index.clear();
        self.last.fill(NO_NODE);
    }

    /// The index in `bounds` of `key`'s bound, if it has one.
    #[inline]
    fn find(&mut self, key: &Key) -> Option<usize> {
        let class = key.0 as usize;
        if class >= self.last.len() {
            self.last.resize(class + 1, NO_NODE);
        }
        let last = self.last[class] as usize;
        let i = match self.bounds.get(last) {
            Some((k, _)) if k == key => last,
            _ => *self.index.get(key)? as usize,
        };
        self.last[class] = i as u32;
        Some(i)
    }

    /// A lower bound on the earliest `t ≥ now` at which `demand` is free over `[t, t +
    /// duration)` on a node of the shared `class` other than `except`, in `tl` as it is; `None`
    /// the first time the request is asked in this compression (module documentation).
    #[allow(clippy::too_many_arguments)]
    pub fn others(
        &mut self,
        tl: &mut Timeline,
        layout: &Layout,
        class: u32,
        demand: &Vector,
        duration: Time,
        now: Time,
        except: Option<u32>,
    ) -> Option<Time> {
        let key = (class, *demand, duration);
        let Some(i) = self.find(&key) else {
            let i = self.bounds.len();
            self.index.insert(key, i as u32);
            self.last[class as usize] = i as u32;
            self.bounds.push((key, Bound::ASKED_ONCE));
            return None;
        };
        let clock = tl.clock();
        // Nodes whose futures agree are searched once (below, and in `refresh`).
        tl.sync_groups();
        let tl = &*tl;
        let b = &mut self.bounds[i].1;
        if b.clock == Bound::ASKED_ONCE.clock {
            *b = Bound {
                clock,
                ..Bound::NONE
            };
            // Once per distinct future: its nodes all start at the same time, so a function
            // of several nodes sets both bounds. A start at or after `second` changes nothing.
            tl.for_each_function(layout, class, |steps, node, members| {
                if let Some(e) =
                    steps.earliest_fit_within(now, b.second, duration, Time::MAX, demand)
                {
                    b.offer_many(node, e, members);
                }
            });
        } else if b.clock != clock {
            if tl.rose_since(class, b.clock) {
                refresh(b, tl, class, demand, duration, now);
            }
            b.clock = clock;
        }
        Some(if except == Some(b.node) {
            b.second
        } else {
            b.first
        })
    }
}

/// Brings `b` up to date after capacity rose on some nodes of `class` since `b.clock`: each
/// such node's step function is searched again, once; every other node only
/// lost capacity since, so its start only moved later and the old bounds still hold for it.
fn refresh(b: &mut Bound, tl: &Timeline, class: u32, demand: &Vector, duration: Time, now: Time) {
    let since = b.clock;
    // The functions that rose: every node that rose has one (with the nodes that share it,
    // which may not have risen: searching them again only offers their start anew).
    let risen = || tl.risen_functions(class, since);
    if b.node != NO_NODE && risen().any(|(id, _, _)| id == tl.function_of(b.node)) {
        // Its start is searched again below; every other node still starts at or after
        // `second`.
        b.first = b.second;
        b.node = NO_NODE;
    }
    let mut fresh = *b;
    for (_, node, members) in risen() {
        // A start at or after `second` changes nothing.
        if let Some(e) = tl.node_earliest_fit(node, (now, fresh.second), duration, demand) {
            fresh.offer_many(node, e, members);
        }
    }
    *b = fresh;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};
    use crate::sim::resources::ResourceVec;
    use crate::sim::topology::steps::vector;
    use crate::sim::topology::{Cluster, FreeNodes, NodeClass, NodeShape, Topology};

    const NODES: u32 = 6;

    fn one_node(cores: u64) -> NodeShape {
        NodeShape {
            count: 1,
            per_node: ResourceVec([cores, 0, 0]),
            last: None,
            whole: false,
        }
    }

    /// The earliest start of `demand` for `duration` from `now` over every node but `except`,
    /// node by node.
    fn earliest_elsewhere(
        tl: &Timeline,
        demand: &Vector,
        duration: Time,
        now: Time,
        except: Option<u32>,
    ) -> Time {
        (0..NODES)
            .filter(|&n| Some(n) != except)
            .filter_map(|n| tl.node_earliest_fit(n, (now, Time::MAX), duration, demand))
            .min()
            .unwrap_or(Time::MAX)
    }

    /// Random holds, holds given back (stamped as rises, or unstamped and taken again) and
    /// queries on a class of six 8-core nodes: a kept bound never exceeds the true earliest
    /// start elsewhere (it would let a check skip a node that fits), and a fresh one equals it.
    #[test]
    fn a_kept_bound_stays_below_the_earliest_start_and_a_fresh_one_is_it() {
        let layout = Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "s",
            Allocation::Shared,
            vec![NodeClass::new("n", NODES, 8, 16)],
        )])))
        .unwrap();
        let mut tl = Timeline::default();
        tl.reset(&layout, 0, &FreeNodes::new(&layout));
        let mut bounds = OneNodeBounds::default();
        let mut holds: Vec<(u32, u64, Time, Time)> = Vec::new();
        // The simulator's seeded stream (crate::sim::random), not a generator of the test's own.
        let mut rng = <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(0x2545);
        let mut next = |n: u64| rand_core::RngCore::next_u64(&mut rng) % n;
        let (mut kept_below, mut rises, mut first_asks) = (0, 0, 0);
        for step in 0..3000 {
            // As at each compression.
            if step % 30 == 0 {
                bounds.clear();
            }
            match next(10) {
                0..=5 => {
                    let node = next(u64::from(NODES)) as u32;
                    let cores = 1 + next(8);
                    let from = next(120) as Time;
                    let to = from + 20 + next(80) as Time;
                    // Sometimes the same hold on a neighbour too: nodes whose futures agree
                    // share a step function, searched once.
                    let twin = (next(2) == 0).then_some((node + 1) % NODES);
                    for node in std::iter::once(node).chain(twin) {
                        if tl.node_min(node, from, to)[0] >= cores as i64 {
                            tl.hold(0, &one_node(cores), &[node], from, to);
                            holds.push((node, cores, from, to));
                        }
                    }
                }
                6 | 7 if !holds.is_empty() => {
                    let (node, cores, from, to) =
                        holds.swap_remove(next(holds.len() as u64) as usize);
                    tl.unhold(0, &one_node(cores), &[node], from, to);
                    rises += 1;
                }
                8 if !holds.is_empty() => {
                    // Given back only to search without it, then taken again: no rise.
                    let (node, cores, from, to) = holds[next(holds.len() as u64) as usize];
                    tl.unhold_unstamped(0, &one_node(cores), &[node], from, to);
                    tl.hold(0, &one_node(cores), &[node], from, to);
                }
                _ => {}
            }
            let demand = vector(ResourceVec([[2, 4, 8][next(3) as usize], 0, 0]));
            let duration = [20, 60][next(2) as usize];
            let except = (next(3) > 0).then(|| next(u64::from(NODES)) as u32);
            let truth = earliest_elsewhere(&tl, &demand, duration, 0, except);
            let ask = |bounds: &mut OneNodeBounds, tl: &mut Timeline, except| {
                bounds.others(tl, &layout, 0, &demand, duration, 0, except)
            };
            // A request is worked out only when asked again.
            let kept = match ask(&mut bounds, &mut tl, except) {
                Some(kept) => kept,
                None => {
                    first_asks += 1;
                    ask(&mut bounds, &mut tl, except).expect("a request asked again has a bound")
                }
            };
            assert!(
                kept <= truth,
                "kept bound {kept} above the earliest start {truth}"
            );
            kept_below += usize::from(kept < truth);
            // A fresh bound is exact whichever node is left out (of a group of alike nodes,
            // any member).
            let mut fresh = OneNodeBounds::default();
            assert_eq!(
                ask(&mut fresh, &mut tl, None),
                None,
                "a first ask works nothing out"
            );
            for except in std::iter::once(None).chain((0..NODES).map(Some)) {
                let truth = earliest_elsewhere(&tl, &demand, duration, 0, except);
                let got = ask(&mut fresh, &mut tl, except);
                assert_eq!(got, Some(truth), "leaving out {except:?}");
            }
        }
        // The run exercised rises and bounds that holds taken since left behind.
        assert!(
            rises > 100 && kept_below > 10 && first_asks > 10,
            "{rises} rises, {kept_below} stale, {first_asks} first asks"
        );
    }
}
