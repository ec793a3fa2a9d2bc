//! How a job reaches a queue: by the SWF queue number (field 15), by the queue name the trace
//! gives (Alea's extended SWF), or by its requested walltime (the first queue, in definition
//! order, whose maximum walltime covers it — Medernach's Test/Short/Long/Day/Infinite).

use std::collections::BTreeMap;

use super::{Limits, LimitsError};
use crate::sim::job::{Job, Workload};

/// The routing rule of a [`Limits`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// SWF queue number → queue index; jobs of other numbers go to `default` (or are rejected).
    SwfQueue {
        map: BTreeMap<i32, u32>,
        default: Option<u32>,
    },
    /// The trace's queue name (its id resolved through [`Workload::queue_names`]) → queue index.
    QueueName {
        map: BTreeMap<String, u32>,
        default: Option<u32>,
    },
    /// The first queue whose maximum walltime is at least the job's request (a queue without
    /// one takes every job). A request over every limit goes to the queue of the largest limit
    /// with `over_walltime: kill`, and is rejected with `reject`.
    RequestedTime,
}

impl Default for Routing {
    /// Every job to queue 0.
    fn default() -> Self {
        Routing::SwfQueue {
            map: BTreeMap::new(),
            default: Some(0),
        }
    }
}

impl Routing {
    pub fn name(&self) -> &'static str {
        match self {
            Routing::SwfQueue { .. } => "swf_queue",
            Routing::QueueName { .. } => "queue_name",
            Routing::RequestedTime => "requested_time",
        }
    }

    pub(super) fn validate(&self, queues: usize) -> Result<(), LimitsError> {
        let targets: Vec<u32> = match self {
            Routing::SwfQueue { map, default } => map
                .values()
                .copied()
                .chain(default.iter().copied())
                .collect(),
            Routing::QueueName { map, default } => map
                .values()
                .copied()
                .chain(default.iter().copied())
                .collect(),
            Routing::RequestedTime => Vec::new(),
        };
        match targets.into_iter().find(|&q| q as usize >= queues) {
            Some(q) => Err(LimitsError::BadCaps {
                what: "routing".into(),
                problem: format!("routes to queue {q}, but only {queues} are defined"),
            }),
            None => Ok(()),
        }
    }
}

impl Limits {
    /// The queue `job` reaches, if any.
    pub fn route(&self, workload: &Workload, job: &Job) -> Option<u32> {
        match &self.routing {
            Routing::SwfQueue { map, default } => map.get(&job.queue).copied().or(*default),
            Routing::QueueName { map, default } => workload
                .queue_name(job.queue)
                .and_then(|name| map.get(name).copied())
                .or(*default),
            Routing::RequestedTime => {
                // Over every limit: the longest queue, where it is cut or rejected.
                self.queues
                    .iter()
                    .position(|q| q.max_walltime.is_none_or(|max| job.requested_time <= max))
                    .map(|q| q as u32)
                    .or_else(|| self.longest_queue())
            }
        }
    }

    /// The queue with the largest maximum walltime (the first of equals).
    fn longest_queue(&self) -> Option<u32> {
        let mut best: Option<(usize, i64)> = None;
        for (i, q) in self.queues.iter().enumerate() {
            let max = q.max_walltime.unwrap_or(i64::MAX);
            if best.is_none_or(|(_, b)| max > b) {
                best = Some((i, max));
            }
        }
        best.map(|(i, _)| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::limits::{OverLimit, Queue};

    fn lpc_like() -> Limits {
        let q = |name: &str, max: i64| Queue {
            name: name.into(),
            max_walltime: Some(max),
            ..Queue::default()
        };
        Limits {
            queues: vec![q("short", 100), q("long", 1000)],
            routing: Routing::RequestedTime,
            ..Limits::default()
        }
    }

    #[test]
    fn requested_time_picks_the_first_queue_that_covers_the_request() {
        let limits = lpc_like();
        let w = Workload::default();
        let job = |r| Job {
            requested_time: r,
            ..Job::default()
        };
        assert_eq!(limits.route(&w, &job(100)), Some(0));
        assert_eq!(limits.route(&w, &job(101)), Some(1));
        assert_eq!(limits.route(&w, &job(1000)), Some(1));
        // Over every limit: the longest queue (and rejected or cut there, as configured).
        assert_eq!(limits.route(&w, &job(5000)), Some(1));
    }

    #[test]
    fn swf_queue_numbers_map_with_a_default_or_none() {
        let mut limits = lpc_like();
        limits.routing = Routing::SwfQueue {
            map: BTreeMap::from([(7, 1)]),
            default: None,
        };
        let w = Workload::default();
        let job = |queue| Job {
            queue,
            ..Job::default()
        };
        assert_eq!(limits.route(&w, &job(7)), Some(1));
        assert_eq!(limits.route(&w, &job(3)), None);
        limits.routing = Routing::SwfQueue {
            map: BTreeMap::from([(7, 1)]),
            default: Some(0),
        };
        assert_eq!(limits.route(&w, &job(3)), Some(0));
    }

    #[test]
    fn queue_names_resolve_through_the_workload() {
        let mut limits = lpc_like();
        limits.routing = Routing::QueueName {
            map: BTreeMap::from([("q_long".to_string(), 1)]),
            default: None,
        };
        let mut w = Workload::default();
        w.queue_names.insert(4, "q_long".into());
        w.queue_names.insert(5, "other".into());
        let job = |queue| Job {
            queue,
            ..Job::default()
        };
        assert_eq!(limits.route(&w, &job(4)), Some(1));
        assert_eq!(limits.route(&w, &job(5)), None);
        assert_eq!(limits.route(&w, &job(-1)), None);
    }

    #[test]
    fn routes_to_undefined_queues_are_refused() {
        let mut limits = lpc_like();
        limits.routing = Routing::SwfQueue {
            map: BTreeMap::from([(1, 2)]),
            default: None,
        };
        assert!(limits.validate().is_err());
    }

    #[test]
    fn over_limit_is_kill_by_default() {
        assert_eq!(OverLimit::default(), OverLimit::Kill);
    }
}
