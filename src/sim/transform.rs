//! Workload transforms a manifest can apply to a trace before simulation: a submit-time window,
//! a user filter, a partition filter, the first N jobs and load scaling. Pure functions; applied in the order of
//! [`Transforms`]' fields.

use super::job::{Time, Workload};

/// Which users to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserFilter {
    Only(Vec<i32>),
    Except(Vec<i32>),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transforms {
    /// Keep jobs submitted in `[start, end)` (trace seconds); times are not shifted.
    pub window: Option<(Option<Time>, Option<Time>)>,
    /// Keep jobs of these users only, or all but these.
    pub users: Option<UserFilter>,
    /// Keep jobs of these partitions only (SWF field 16).
    pub partitions: Option<Vec<i32>>,
    /// Keep the first N jobs (in submission order) of what is left.
    pub first_jobs: Option<usize>,
    /// Multiply the offered load by this factor by dividing every interarrival time by it:
    /// `submit' = first + round((submit − first) / factor)`, where `first` is the first submit.
    pub load_scale: Option<f64>,
}

impl Transforms {
    /// The workload transformed, borrowed when there is nothing to do (no copy of a large
    /// trace's jobs).
    pub fn apply_cow<'w>(&self, workload: &'w Workload) -> std::borrow::Cow<'w, Workload> {
        if *self == Transforms::default() {
            std::borrow::Cow::Borrowed(workload)
        } else {
            std::borrow::Cow::Owned(self.apply(workload))
        }
    }

    pub fn apply(&self, workload: &Workload) -> Workload {
        let mut jobs: Vec<_> = workload
            .jobs
            .iter()
            .filter(|j| match self.window {
                Some((start, end)) => {
                    start.is_none_or(|s| j.submit >= s) && end.is_none_or(|e| j.submit < e)
                }
                None => true,
            })
            .filter(|j| match &self.users {
                Some(UserFilter::Only(users)) => users.contains(&j.user),
                Some(UserFilter::Except(users)) => !users.contains(&j.user),
                None => true,
            })
            .filter(|j| {
                self.partitions
                    .as_ref()
                    .is_none_or(|p| p.contains(&j.partition))
            })
            // `first_jobs` keeps the first jobs that pass the filters: stop there rather than
            // copy the whole trace and truncate (a metrics node of a 200-job cell of a
            // 28,000-job trace spent a fifth of its time on that copy).
            .take(self.first_jobs.unwrap_or(usize::MAX))
            .cloned()
            .collect();
        if let (Some(factor), Some(first)) = (self.load_scale, jobs.first().map(|j| j.submit)) {
            for job in &mut jobs {
                job.submit =
                    first.saturating_add(((job.submit - first) as f64 / factor).round() as Time);
            }
        }
        // Scaling is monotone, so the submission order is unchanged.
        Workload {
            jobs,
            constraints: workload.constraints.clone(),
            requests: workload.requests.clone(),
            queue_names: workload.queue_names.clone(),
            names: workload.names.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Job;

    fn w(submits: &[(Time, i32)]) -> Workload {
        Workload::new(
            submits
                .iter()
                .enumerate()
                .map(|(i, &(submit, user))| Job {
                    id: i as u64 + 1,
                    submit,
                    runtime: 10,
                    requested_time: 10,
                    procs: 1,
                    cpu_time: -1,
                    user,
                    group: -1,
                    queue: -1,
                    partition: -1,
                    request: Default::default(),
                })
                .collect(),
        )
    }

    fn ids(w: &Workload) -> Vec<u64> {
        w.jobs.iter().map(|j| j.id).collect()
    }

    #[test]
    fn window_is_half_open_and_keeps_times() {
        let t = Transforms {
            window: Some((Some(10), Some(30))),
            ..Default::default()
        };
        let out = t.apply(&w(&[(0, 1), (10, 1), (29, 1), (30, 1)]));
        assert_eq!(ids(&out), vec![2, 3]);
        assert_eq!(out.jobs[0].submit, 10);
    }

    #[test]
    fn users_then_first_jobs() {
        let t = Transforms {
            users: Some(UserFilter::Only(vec![2])),
            first_jobs: Some(2),
            ..Default::default()
        };
        assert_eq!(
            ids(&t.apply(&w(&[(0, 1), (1, 2), (2, 2), (3, 2)]))),
            vec![2, 3]
        );
        let t = Transforms {
            users: Some(UserFilter::Except(vec![2])),
            ..Default::default()
        };
        assert_eq!(ids(&t.apply(&w(&[(0, 1), (1, 2), (2, 3)]))), vec![1, 3]);
    }

    #[test]
    fn load_scale_divides_interarrival_times() {
        let t = Transforms {
            load_scale: Some(2.0),
            ..Default::default()
        };
        let out = t.apply(&w(&[(100, 1), (110, 1), (131, 1)]));
        let submits: Vec<_> = out.jobs.iter().map(|j| j.submit).collect();
        // 100 + 10/2 = 105; 100 + 31/2 = 115.5 → 116 (round half away from zero).
        assert_eq!(submits, vec![100, 105, 116]);
    }

    #[test]
    fn partitions_keep_only_their_jobs() {
        let mut jobs = w(&[(0, 1), (1, 1), (2, 1)]);
        jobs.jobs[0].partition = 2;
        jobs.jobs[2].partition = 3;
        let t = Transforms {
            partitions: Some(vec![2, 3]),
            ..Default::default()
        };
        assert_eq!(ids(&t.apply(&jobs)), vec![1, 3]);
    }
}
