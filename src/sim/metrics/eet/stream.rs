//! The EET metric over a schedule read job by job in arrival order ([`EetStream`]): the same
//! numbers as [`super::evaluate`] and [`super::heatmap`], holding per user only its shares
//! (what is left of them from its latest arrival on), its running totals and the intervals of
//! its violated jobs (for the heatmap's per-bin maxima), plus the heatmap's usage per bin —
//! never a record per job. The caller knows the users and their groups beforehand (one pass
//! over the schedule): the expected capacities split the system among exactly those users.

use std::collections::BTreeMap;

use super::capacity::CapacityRule;
use super::error::EetError;
use super::evaluate::{EetReport, summarize};
use super::heatmap::{Axis, bin_width_for};
use super::heatmap::{AxisError, Cell, Heatmap, MAX_CELLS, Row, Usage, binned};
use super::job::{EetJob, JobEet};
use super::resource::{PerResource, Resource};
use super::share::{PlaceError, ShareProfile};
use super::user::UserEet;
use crate::sim::job::Time;

/// What a first pass over the jobs gathers for an [`EetStream`]: each user's group (that of
/// its first job in arrival order) and the heatmap's span.
#[derive(Clone, Debug, Default)]
pub struct EetUsers {
    pub groups: BTreeMap<i32, i32>,
    first_submit: Option<Time>,
    last_completion: Option<Time>,
}

impl EetUsers {
    /// The next job, in arrival order.
    pub fn push(&mut self, job: &EetJob) {
        self.groups.entry(job.user).or_insert(job.group);
        let to = job.completion().unwrap_or(job.submit);
        self.first_submit = Some(self.first_submit.map_or(job.submit, |f| f.min(job.submit)));
        self.last_completion = Some(self.last_completion.map_or(to, |l| l.max(to)));
    }

    /// The heatmap's axis: bins of `width` (`None`: [`bin_width_for`] the span) from the first
    /// submit to the last completion, as [`super::heatmap()`] chooses them.
    pub fn axis(&self, width: Option<Time>) -> Result<Axis, AxisError> {
        let from = self.first_submit.unwrap_or(0);
        let to = self.last_completion.unwrap_or(from);
        Axis::covering(from, to, width.unwrap_or_else(|| bin_width_for(to - from)))
    }
}

/// One user's state while the jobs stream by.
struct UserState {
    capacity: PerResource<Option<super::ratio::Ratio>>,
    shares: PerResource<Option<ShareProfile>>,
    totals: UserEet,
    /// Violation intervals `[latest start, latest start + T_j)` as ±1 events.
    violations: Vec<(Time, i128)>,
}

/// The EET metric computed job by job (module docs).
pub struct EetStream {
    users: BTreeMap<i32, UserState>,
    axis: Axis,
    /// CPU and memory amount-seconds held per bin (exact integers until the end).
    usage: Vec<[i128; 2]>,
}

impl EetStream {
    /// A stream judging the jobs of exactly the users in `users` under `rule`, binned on `axis`.
    pub fn new(rule: &CapacityRule, users: &EetUsers, axis: Axis) -> Result<EetStream, EetError> {
        let capacities = rule.resolve(&users.groups)?;
        let mut states = BTreeMap::new();
        for (&user, &group) in &users.groups {
            let capacity = capacities[&user];
            let mut shares = PerResource::new(None, None, None);
            for resource in Resource::ALL {
                if let Some(c) = capacity[resource] {
                    shares[resource] =
                        Some(ShareProfile::new(c.num()).ok_or(EetError::ZeroCapacity {
                            owner: format!("user {user}"),
                            resource,
                        })?);
                }
            }
            states.insert(
                user,
                UserState {
                    capacity,
                    shares,
                    totals: UserEet::empty(user, group, capacity),
                    violations: Vec::new(),
                },
            );
        }
        Ok(EetStream {
            users: states,
            axis,
            usage: vec![[0; 2]; axis.bins],
        })
    }

    /// Judges the next job (arrival order: submit times never decrease; a user unknown to
    /// [`EetStream::new`] is refused as out of order).
    pub fn push(&mut self, job: &EetJob) -> Result<JobEet, EetError> {
        let out_of_order = || EetError::OutOfOrder {
            job: job.id,
            user: job.user,
        };
        let state = self.users.get_mut(&job.user).ok_or_else(out_of_order)?;
        let mut by_resource = PerResource::new(None, None, None);
        for resource in Resource::ALL {
            let (Some(capacity), Some(share)) =
                (state.capacity[resource], state.shares[resource].as_mut())
            else {
                continue;
            };
            let overflow = || EetError::Overflow {
                job: job.id,
                user: job.user,
                resource,
            };
            let request = u128::from(job.request[resource])
                .checked_mul(capacity.den())
                .ok_or_else(overflow)?;
            by_resource[resource] = Some(share.place(job.submit, request, job.runtime).map_err(
                |e| match e {
                    PlaceError::OutOfOrder => out_of_order(),
                    _ => overflow(),
                },
            )?);
        }
        // As in `evaluate`: the latest end over the resources, no earlier than the job's own
        // length.
        let own_length = job.submit.saturating_add(job.runtime.max(0));
        let eet = by_resource
            .iter()
            .filter_map(|(_, e)| *e)
            .fold(own_length, Time::max);
        let completion = job.completion();
        let result = JobEet {
            eet,
            by_resource,
            latest_start: eet.saturating_sub(job.runtime.max(0)),
            completion,
            violated: completion.map(|c| c > eet),
            tardiness: completion.map(|c| c.saturating_sub(eet).max(0)),
        };
        state.totals.add(job, &result);
        if let (Some(true), Some(t)) = (result.violated, result.tardiness) {
            state.violations.push((result.latest_start, 1));
            state
                .violations
                .push((result.latest_start.saturating_add(t), -1));
        }
        if let (Some(start), Some(end)) = (job.start, completion) {
            for (slot, resource) in [Resource::Cpu, Resource::Memory].into_iter().enumerate() {
                let amount = i128::from(job.request[resource]);
                if amount > 0 && end > start {
                    self.hold(slot, amount, start, end);
                }
            }
        }
        Ok(result)
    }

    /// Adds `amount` held over `[start, end)` to the usage bins it overlaps.
    fn hold(&mut self, slot: usize, amount: i128, start: Time, end: Time) {
        let axis = self.axis;
        let (from, to) = (start.max(axis.start), end.min(axis.time(axis.bins)));
        let mut t = from;
        while t < to {
            let b = ((t - axis.start) / axis.width) as usize;
            let bin_end = axis.time(b + 1).min(to);
            self.usage[b][slot] += amount * i128::from(bin_end - t);
            t = bin_end;
        }
    }

    /// The per-user results (by user id), the summary and the heatmap; `report.jobs` is empty
    /// (the per-job results went out one by one).
    pub fn finish(self) -> Result<(EetReport, Heatmap), AxisError> {
        let axis = self.axis;
        let mut users = Vec::with_capacity(self.users.len());
        let mut rows = Vec::with_capacity(self.users.len());
        let mut cells_so_far = 0;
        for (_, mut state) in self.users {
            let totals = state.totals.finished();
            let cells: Vec<Cell> = if state.violations.is_empty() {
                Vec::new()
            } else {
                binned(&mut state.violations, &axis)
                    .into_iter()
                    .map(|(bin, integral, max)| Cell {
                        bin,
                        mean: integral / axis.width as f64,
                        max: max as u64,
                    })
                    .collect()
            };
            cells_so_far += cells.len();
            if cells_so_far > MAX_CELLS {
                return Err(AxisError::TooManyCells { width: axis.width });
            }
            rows.push(Row {
                user: totals.user,
                tardiness: totals.tardiness,
                violated: totals.violated,
                cells,
            });
            users.push(totals);
        }
        rows.sort_by(|a, b| b.tardiness.cmp(&a.tardiness).then(a.user.cmp(&b.user)));
        let usage = self
            .usage
            .iter()
            .map(|[cpu, memory]| Usage {
                cpu: *cpu as f64 / axis.width as f64,
                memory: *memory as f64 / axis.width as f64,
            })
            .collect();
        let summary = summarize(&users);
        Ok((
            EetReport {
                jobs: Vec::new(),
                users,
                summary,
            },
            Heatmap { axis, rows, usage },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{evaluate, heatmap};
    use super::*;

    /// A small linear congruential stream: the same jobs on every machine.
    struct Lcg(u64);

    impl Lcg {
        fn new(seed: u64) -> Lcg {
            Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// Random jobs in arrival order: a few users and groups, some without a start.
    fn jobs(seed: u64, n: usize) -> Vec<EetJob> {
        let mut rng = Lcg::new(seed);
        let mut submit = 0;
        (0..n)
            .map(|i| {
                submit += rng.below(50) as Time;
                let runtime = rng.below(400) as Time;
                let user = rng.below(5) as i32;
                EetJob {
                    id: i as u64,
                    user,
                    group: user % 2,
                    submit,
                    runtime,
                    start: (rng.below(10) > 0).then(|| submit + rng.below(900) as Time),
                    request: PerResource::new(1 + rng.below(8), rng.below(4) * 1024, 0),
                }
            })
            .collect()
    }

    #[test]
    fn streamed_results_equal_the_whole_evaluation() {
        for seed in 0..20 {
            let jobs = jobs(seed, 300);
            let mut rule =
                CapacityRule::equal_split(PerResource::new(Some(16), Some(8 * 1024), None));
            if seed % 2 == 1 {
                rule.user_shares = [(0, 3), (1, 1), (2, 1), (3, 2), (4, 1)].into();
            }
            let whole = evaluate(&jobs, &rule).unwrap();
            assert!(
                whole.summary.violated_jobs > 0,
                "seed {seed}: some EETs violated"
            );
            let map = heatmap(&jobs, &whole, None).unwrap();
            let mut users = EetUsers::default();
            jobs.iter().for_each(|j| users.push(j));
            let axis = users.axis(None).unwrap();
            let mut stream = EetStream::new(&rule, &users, axis).unwrap();
            let streamed: Vec<JobEet> = jobs.iter().map(|j| stream.push(j).unwrap()).collect();
            let (report, streamed_map) = stream.finish().unwrap();
            assert_eq!(streamed, whole.jobs, "seed {seed}");
            assert_eq!(report.users, whole.users, "seed {seed}");
            assert_eq!(report.summary, whole.summary, "seed {seed}");
            assert_eq!(streamed_map, map, "seed {seed}");
        }
    }

    #[test]
    fn a_job_of_an_unknown_user_or_out_of_order_is_refused() {
        let jobs = jobs(1, 10);
        let rule = CapacityRule::equal_split(PerResource::new(Some(16), None, None));
        let users = EetUsers::default();
        let axis = Axis::covering(0, 10, 60).unwrap();
        let mut stream = EetStream::new(&rule, &users, axis).unwrap();
        assert!(matches!(
            stream.push(&jobs[0]),
            Err(EetError::OutOfOrder { .. })
        ));
        // A user's later arrival before an earlier one.
        let mut users = EetUsers::default();
        let (mut early, mut late) = (jobs[0].clone(), jobs[0].clone());
        early.submit = 100;
        late.submit = 200;
        users.push(&early);
        let mut stream = EetStream::new(&rule, &users, users.axis(None).unwrap()).unwrap();
        stream.push(&late).unwrap();
        assert!(matches!(
            stream.push(&early),
            Err(EetError::OutOfOrder { .. })
        ));
    }
}
