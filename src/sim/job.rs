//! A job as the simulator sees it, and a workload: jobs in submission order.

use std::collections::BTreeMap;

use super::topology::{ConstraintTable, JobRequest, RequestId, RequestInterner, RequestTable};

/// Simulated time, in integer seconds since the start of the trace.
pub type Time = i64;

/// One job of a workload. Fields follow the Standard Workload Format (SWF) after the reader has
/// applied its rules (requested processors = field 8 else field 5; requested time = field 9 else
/// the runtime); see `docs/semantics.md`.
///
/// Kept compact (64 bytes, `tests/memory.rs` holds it there): a workload of millions of jobs is
/// mostly `Job`s. What few jobs have — memory, node specs, properties — lives in the workload's
/// request table; read it with [`Workload::request`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// SWF field 1: the job number in the trace.
    pub id: u64,
    /// SWF field 2: submit time in seconds.
    pub submit: Time,
    /// SWF field 4: the actual runtime in seconds (always > 0 in a workload).
    pub runtime: Time,
    /// SWF field 9 (else the runtime): the user's estimate, the only runtime a scheduler may use
    /// (always > 0 in a workload).
    pub requested_time: Time,
    /// SWF field 8 (else field 5): requested processors (always > 0 in a workload).
    pub procs: u32,
    /// SWF field 6, average CPU time used per processor in seconds (rounded); -1 when unknown.
    /// Only queue CPU-time limits read it.
    pub cpu_time: Time,
    /// SWF field 12; -1 when unknown.
    pub user: i32,
    /// SWF field 13; -1 when unknown.
    pub group: i32,
    /// SWF field 15; -1 when unknown.
    pub queue: i32,
    /// SWF field 16; -1 when unknown.
    pub partition: i32,
    /// What the job asks of a topology (memory per core as SWF field 10 gives it, nodes,
    /// per-node amounts, properties), in the workload's [`RequestTable`]. The default,
    /// [`RequestId::FLEXIBLE`] — `procs` cores, no memory — is what a plain SWF job gives;
    /// uniform machines only look at `procs`.
    pub request: RequestId,
}

/// A one-processor, one-second job with every SWF field unknown: a base for struct updates.
impl Default for Job {
    fn default() -> Self {
        Job {
            id: 0,
            submit: 0,
            runtime: 1,
            requested_time: 1,
            procs: 1,
            cpu_time: -1,
            user: -1,
            group: -1,
            queue: -1,
            partition: -1,
            request: RequestId::FLEXIBLE,
        }
    }
}

/// Jobs sorted by submit time (stable: ties keep trace order). The position of a job in
/// `jobs` is its *submission order*, used to break every tie in the engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub jobs: Vec<Job>,
    /// The distinct property/cluster constraints the jobs' requests refer to.
    pub constraints: ConstraintTable,
    /// The requests the jobs refer to (`Job::request`).
    pub requests: RequestTable,
    /// Queue names by queue id (`Job::queue`), for traces that name their queues (Alea's
    /// extended SWF, or names in SWF field 15); empty otherwise.
    pub queue_names: BTreeMap<i32, String>,
    /// User and group names by id, for traces that name them (SWF fields 12 and 13).
    pub names: Names,
}

/// User and group names by id (`Job::user`, `Job::group`), for traces that give names where
/// SWF has numbers (docs/swf.md, "Names in place of numbers"); empty otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    pub users: BTreeMap<i32, String>,
    pub groups: BTreeMap<i32, String>,
}

impl Workload {
    /// Builds a workload, sorting jobs stably by submit time.
    pub fn new(jobs: Vec<Job>) -> Self {
        Self::with_requests(jobs, RequestTable::default(), ConstraintTable::default())
    }

    /// [`Workload::new`] for jobs that refer to `requests`, whose requests refer to
    /// `constraints`.
    pub fn with_requests(
        mut jobs: Vec<Job>,
        requests: RequestTable,
        constraints: ConstraintTable,
    ) -> Self {
        if !jobs.is_sorted_by_key(|job| job.submit) {
            jobs.sort_by_key(|job| job.submit);
        }
        Workload {
            jobs,
            constraints,
            requests,
            queue_names: BTreeMap::new(),
            names: Names::default(),
        }
    }

    /// A workload of jobs given with their requests (interned into the request table; each
    /// job's `request` is set), whose requests refer to `constraints`.
    pub fn of_requests(
        jobs: impl IntoIterator<Item = (Job, JobRequest)>,
        constraints: ConstraintTable,
    ) -> Self {
        let mut requests = RequestInterner::default();
        let jobs = jobs
            .into_iter()
            .map(|(job, request)| Job {
                request: requests.intern(request),
                ..job
            })
            .collect();
        Self::with_requests(jobs, requests.finish(), constraints)
    }

    /// What `job` (one of this workload's) asks of a topology.
    #[inline]
    pub fn request(&self, job: &Job) -> &JobRequest {
        self.requests.get(job.request)
    }

    /// `job`'s requested memory per core in KB (SWF field 10 as read); 0 when unknown.
    #[inline]
    pub fn memory_kb(&self, job: &Job) -> u64 {
        self.request(job).memory_kb
    }

    /// The name of queue `id`, when the trace names its queues.
    pub fn queue_name(&self, id: i32) -> Option<&str> {
        self.queue_names.get(&id).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}
