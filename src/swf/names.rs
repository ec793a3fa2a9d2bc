//! Names where SWF expects numbers: AleaNG's own data sets (its NGI_CZ journal traces) put a
//! user *name* in field 12 (`user_A`), and others name groups (13) and queues (15). A name is
//! any token that is not a number; it is mapped to an id deterministically — names in order of
//! first appearance in the file, numbered after the largest numeric id of that field (and, for
//! queues, after the ids of Alea's named queues), so a trace mixing numbers and names never
//! gives two users one id. The mapping travels with the workload ([`crate::sim::Names`],
//! `Workload::queue_names`) into the outputs' `user_name`, `group_name` and `queue_name`
//! columns (docs/swf.md, "Names in place of numbers").

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use crate::sim::mix_hash::MixHasher;
use crate::sim::{Job, Names};

/// The fields that may hold names, by 0-based SWF index: user (12), group (13), queue (15).
pub const NAMED_FIELDS: [usize; 3] = [11, 12, 14];

/// Which of [`NAMED_FIELDS`] index `i` is, if any.
pub fn named_slot(i: usize) -> Option<usize> {
    NAMED_FIELDS.iter().position(|&f| f == i)
}

/// The names met while reading, and the jobs that gave them.
#[derive(Debug, Default)]
pub struct NameReader {
    /// Per named field: name → rank of first appearance. Hashed with [`MixHasher`]: a
    /// million-row table looks a name up three times a row, and the order of the map never
    /// reaches an output (ranks do).
    ranks: [HashMap<Vec<u8>, u32, BuildHasherDefault<MixHasher>>; 3],
    /// Per named field: names by rank.
    names: [Vec<String>; 3],
    /// Per named field: the rank of the name met last. Rows in time order often repeat a
    /// field's name (a partition, an account): the repeat is a comparison, not a look-up.
    last: [Option<u32>; 3],
    /// (position of the job among those kept, field slot, rank).
    uses: Vec<(u32, u8, u32)>,
}

impl NameReader {
    /// Records that the job about to be kept at position `pos` names `token` in field `slot`.
    pub fn note(&mut self, pos: usize, slot: usize, token: &[u8]) {
        let names = &self.names[slot];
        let rank = match self.last[slot] {
            Some(last) if names[last as usize].as_bytes() == token => last,
            // Looked up before it is copied: a name met again costs no allocation.
            _ => match self.ranks[slot].get(token) {
                Some(&rank) => rank,
                None => {
                    let rank = names.len() as u32;
                    self.names[slot].push(String::from_utf8_lossy(token).into_owned());
                    self.ranks[slot].insert(token.to_vec(), rank);
                    rank
                }
            },
        };
        self.last[slot] = Some(rank);
        self.uses.push((pos as u32, slot as u8, rank));
    }

    /// Whether no name was read.
    pub fn is_empty(&self) -> bool {
        self.uses.is_empty()
    }

    /// Gives every named job its id and returns the user and group names by id, adding the
    /// queue names to `queue_names`. Ids of a field start after its largest numeric id (at
    /// least 1); a queue already named by Alea's extended fields keeps that name.
    pub fn resolve(self, jobs: &mut [Job], queue_names: &mut BTreeMap<i32, String>) -> Names {
        let numeric_max = |field: fn(&Job) -> i32| jobs.iter().map(field).max().unwrap_or(0);
        let queue_max =
            numeric_max(|j| j.queue).max(queue_names.keys().next_back().copied().unwrap_or(0));
        let base = [
            numeric_max(|j| j.user).max(0) as i64 + 1,
            numeric_max(|j| j.group).max(0) as i64 + 1,
            queue_max.max(0) as i64 + 1,
        ];
        // Ids past i32's range cannot be told apart: such names stay unknown (-1), as an
        // out-of-range number does.
        let id = |slot: usize, rank: u32| i32::try_from(base[slot] + i64::from(rank)).ok();
        let mut out = Names::default();
        for (slot, names) in self.names.iter().enumerate() {
            for (rank, name) in names.iter().enumerate() {
                let Some(id) = id(slot, rank as u32) else {
                    continue;
                };
                match slot {
                    0 => out.users.insert(id, name.clone()),
                    1 => out.groups.insert(id, name.clone()),
                    _ => queue_names.insert(id, name.clone()),
                };
            }
        }
        for (pos, slot, rank) in self.uses {
            let job = &mut jobs[pos as usize];
            let value = id(slot as usize, rank).unwrap_or(-1);
            match slot {
                0 => job.user = value,
                1 => job.group = value,
                // Alea's extended fields name the queue with precedence.
                _ if job.queue == -1 => job.queue = value,
                _ => {}
            }
        }
        out
    }
}
