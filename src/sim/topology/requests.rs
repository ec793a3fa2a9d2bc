//! A workload's job requests, kept beside the jobs: a [`Job`](crate::sim::Job) holds a 4-byte
//! [`RequestId`] instead of its [`JobRequest`] (40 bytes), since almost every job of a trace
//! asks for the same few things.
//!
//! Id 0 ([`RequestId::FLEXIBLE`]) is always the default request — the job's `procs` cores, no
//! memory, unconstrained, shared — what a plain SWF job without a memory field gives. Readers
//! intern requests by value ([`RequestInterner`]) so a trace whose jobs ask for a handful of
//! distinct memory sizes and node specs has a handful of entries; the index used for interning
//! is dropped once the workload is built.

use std::collections::HashMap;

use super::request::JobRequest;

/// A request in a workload's [`RequestTable`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u32);

impl RequestId {
    /// The default request ([`JobRequest::default`]): entry 0 of every table.
    pub const FLEXIBLE: RequestId = RequestId(0);
}

/// The distinct requests of a workload, by [`RequestId`]. Entry 0 is always the default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestTable {
    list: Vec<JobRequest>,
}

impl Default for RequestTable {
    fn default() -> Self {
        RequestTable {
            list: vec![JobRequest::default()],
        }
    }
}

impl RequestTable {
    /// Adds `request` at the end and returns its id (the default request is always id 0:
    /// nothing is added for it). No deduplication: see [`RequestInterner`].
    pub fn push(&mut self, request: JobRequest) -> RequestId {
        if request == JobRequest::default() {
            return RequestId::FLEXIBLE;
        }
        let id = RequestId(u32::try_from(self.list.len()).expect("fewer than 2^32 requests"));
        self.list.push(request);
        id
    }

    /// The request of `id`; the default one for an id this table never gave out.
    #[inline]
    pub fn get(&self, id: RequestId) -> &JobRequest {
        self.list.get(id.0 as usize).unwrap_or(&self.list[0])
    }

    /// Every request, by id.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &JobRequest> + '_ {
        self.list.iter()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Never true: entry 0 always exists.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Builds a [`RequestTable`] with each distinct request once, in first-appearance order.
#[derive(Default)]
pub struct RequestInterner {
    table: RequestTable,
    index: HashMap<JobRequest, RequestId>,
}

impl RequestInterner {
    /// The id of `request`, added if new.
    pub fn intern(&mut self, request: JobRequest) -> RequestId {
        if request == JobRequest::default() {
            return RequestId::FLEXIBLE;
        }
        if let Some(&id) = self.index.get(&request) {
            return id;
        }
        let id = self.table.push(request);
        self.index.insert(request, id);
        id
    }

    /// The table, without the index.
    pub fn finish(self) -> RequestTable {
        let mut table = self.table;
        table.list.shrink_to_fit();
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::topology::NodeDemand;

    #[test]
    fn the_default_request_is_id_zero_and_equal_requests_share_an_id() {
        let mut interner = RequestInterner::default();
        let gib = JobRequest {
            memory_kb: 1 << 20,
            ..JobRequest::default()
        };
        let node = JobRequest::nodes(2, NodeDemand::default());
        assert_eq!(interner.intern(JobRequest::default()), RequestId::FLEXIBLE);
        assert_eq!(interner.intern(gib), RequestId(1));
        assert_eq!(interner.intern(node), RequestId(2));
        assert_eq!(interner.intern(gib), RequestId(1));
        let table = interner.finish();
        assert_eq!(table.len(), 3);
        assert_eq!(table.get(RequestId(1)), &gib);
        assert_eq!(table.get(RequestId(2)), &node);
        assert_eq!(table.get(RequestId::FLEXIBLE), &JobRequest::default());
        // An id from elsewhere reads as the default, as constraint ids do.
        assert_eq!(table.get(RequestId(7)), &JobRequest::default());
    }

    #[test]
    fn push_does_not_deduplicate_but_keeps_the_default_at_zero() {
        let mut table = RequestTable::default();
        let node = JobRequest::nodes(1, NodeDemand::default());
        assert_eq!(table.push(node), RequestId(1));
        assert_eq!(table.push(node), RequestId(2));
        assert_eq!(table.push(JobRequest::default()), RequestId::FLEXIBLE);
        assert_eq!(table.len(), 3);
    }
}
