//! The fairshare of a finished run, recomputed from its outcome: each user's usage, share and
//! final factor (users.parquet), and, per time bin, the usage, factor and cores held of the users
//! who used the machine most (user_timeseries.parquet) — how priority moved, and who got the
//! machine.
//!
//! The replay feeds a [`FairshareState`] the run's starts and ends in time order (at an instant,
//! ends first, then starts, each by submission order): the same charges in the same order as the
//! `fairshare` and `priority` orders saw during the run, so for those runs the numbers are the
//! ones the scheduler used. For runs under other orders they say what the fairshare *would* have
//! been (the cell's fairshare settings, or the defaults).

use super::{FairshareError, FairshareSpec, FairshareState};
use crate::sim::engine::SimOutcome;
use crate::sim::job::{Time, Workload};
use crate::sim::machine::Machine;

/// One user's fairshare over the run (dense user index of [`super::Accounts`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserUsage {
    /// Simulated jobs.
    pub jobs: u64,
    /// Σ cores held × run, in core-seconds (whole nodes count whole).
    pub core_seconds: f64,
    /// Σ N × P(j) × run, undecayed: the penalised usage the run charged.
    pub charged: f64,
    /// The decayed usage at the end of the run.
    pub usage: f64,
    /// S_u, the normalised share.
    pub share: f64,
    /// FF at the end of the run.
    pub factor: f64,
}

/// One bin of a user's series; `user: None` sums every user not in the series' top.
#[derive(Clone, Debug, PartialEq)]
pub struct UserSample {
    /// Start of the bin.
    pub time: Time,
    /// The user id; `None` for all other users together.
    pub user: Option<i32>,
    /// Usage at the end of the bin.
    pub usage: f64,
    /// FF at the end of the bin (`None` for the others).
    pub factor: Option<f64>,
    /// Time-weighted mean cores held over the bin.
    pub cores: f64,
}

/// What [`replay`] finds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replay {
    /// User ids by dense index, and each user's fairshare.
    pub ids: Vec<i32>,
    pub groups: Vec<i32>,
    pub users: Vec<UserUsage>,
    /// The end of the run (last job end): when `usage` and `factor` are taken.
    pub end: Time,
    pub samples: Vec<UserSample>,
}

/// How to sample the series: bins of `step` seconds from `origin`, for the `top` users by
/// charged usage (ties by user id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    pub origin: Time,
    pub step: Time,
    pub top: usize,
}

/// Replays `outcome` (a run of `workload` on `machine`) under `spec`.
pub fn replay(
    workload: &Workload,
    outcome: &SimOutcome,
    machine: &Machine,
    spec: &FairshareSpec,
    sampling: Option<Sampling>,
) -> Result<Replay, FairshareError> {
    let mut class = vec![0u32; workload.len()];
    for a in &outcome.assignments {
        class[a.job as usize] = a.class;
    }
    let jobs = |f: &mut dyn FnMut(ReplayJob)| -> Result<(), String> {
        for o in &outcome.jobs {
            f(ReplayJob {
                job: o.job,
                class: class[o.job as usize],
                start: o.start,
                end: o.end,
                cores: o.held.0[0],
            });
        }
        Ok(())
    };
    match replay_jobs(workload, machine, spec, sampling, jobs) {
        Ok(replay) => replay,
        Err(never) => unreachable!("the outcome is in memory: {never}"),
    }
}

/// A simulated job as the replay reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayJob {
    /// Index in the workload.
    pub job: u32,
    /// The node class it ran on (0 on a uniform machine).
    pub class: u32,
    pub start: Time,
    pub end: Time,
    /// Cores held (whole nodes count whole).
    pub cores: u64,
}

/// [`replay`] over a run read, in submission order, from `jobs` — a source that hands every
/// job to its argument and may be called twice (once for usage and events, once more for the
/// series' cores). Holds 16 bytes a job (its start and end, packed) and the node class of each
/// workload job on a topology, not the outcome. The outer error is the source's.
pub fn replay_jobs(
    workload: &Workload,
    machine: &Machine,
    spec: &FairshareSpec,
    sampling: Option<Sampling>,
    mut jobs: impl FnMut(&mut dyn FnMut(ReplayJob)) -> Result<(), String>,
) -> Result<Result<Replay, FairshareError>, String> {
    let mut state = match FairshareState::new(workload, machine, spec) {
        Ok(state) => state,
        Err(e) => return Ok(Err(e)),
    };
    // Per user: their id and group. Per job, the owner is read from the state's accounts when
    // needed rather than from a copy (4 bytes a job, issue 16).
    let accounts = state.accounts();
    let n = accounts.user_count();
    let ids = accounts.users().to_vec();
    let user_groups: Vec<_> = (0..n as u32)
        .map(|u| accounts.groups()[accounts.group_of(u) as usize])
        .collect();
    // The class of each job, allocated once a job ran on a class other than 0.
    let mut class: Vec<u32> = Vec::new();
    let base = workload.jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let mut events = Events::new(base, workload.len());
    let mut users = vec![UserUsage::default(); n];
    let mut end: Option<Time> = None;
    jobs(&mut |o| {
        if o.class != 0 && class.is_empty() {
            class = vec![0; workload.len()];
        }
        if let Some(c) = class.get_mut(o.job as usize) {
            *c = o.class;
        }
        events.push(o.start, 1, o.job);
        events.push(o.end, 0, o.job);
        let u = &mut users[state.accounts().user_of_job(o.job) as usize];
        u.jobs += 1;
        let run = (o.end - o.start) as f64;
        u.core_seconds += o.cores as f64 * run;
        u.charged += state.rate(o.job, o.class) * run;
        end = Some(end.map_or(o.end, |e| e.max(o.end)));
    })?;
    let ran = end.is_some();
    let end = end.unwrap_or(0);
    let mut events = events.sorted();
    let class_of = |job: u32| class.get(job as usize).copied().unwrap_or(0);

    // The series' users: the top by charged usage.
    let mut series_users: Vec<u32> = (0..n as u32)
        .filter(|&u| users[u as usize].jobs > 0)
        .collect();
    series_users.sort_by(|&a, &b| {
        users[b as usize]
            .charged
            .total_cmp(&users[a as usize].charged)
            .then(ids[a as usize].cmp(&ids[b as usize]))
    });
    let top = sampling.map_or(0, |s| s.top.min(series_users.len()));
    series_users.truncate(top);
    series_users.sort_by_key(|&u| ids[u as usize]);
    let mut slot = vec![None::<usize>; n];
    for (k, &u) in series_users.iter().enumerate() {
        slot[u as usize] = Some(k);
    }
    let others = series_users.len() < users.iter().filter(|u| u.jobs > 0).count();

    let mut samples = Vec::new();
    let apply = |state: &mut FairshareState, events: &mut SortedEvents, until: Time| {
        while let Some((t, kind, job)) = events.next_until(until) {
            if kind == 1 {
                state.started(t, job, class_of(job));
            } else {
                state.ended(job, t);
            }
        }
    };
    if let Some(s) = sampling
        && s.step > 0
        && ran
    {
        let origin = s.origin.div_euclid(s.step) * s.step;
        // Bins cover [origin, end); a run ending on a bin boundary does not open another.
        let bins = ((end - origin).max(0) + s.step - 1)
            .div_euclid(s.step)
            .max(1) as usize;
        let width = series_users.len() + usize::from(others);
        // Cores held per bin, per series slot (the last slot: the others).
        let mut cores = vec![0.0f64; bins * width];
        if width > 0 {
            jobs(&mut |o| {
                // Without "others", every user with jobs has a slot of their own.
                let k = slot[state.accounts().user_of_job(o.job) as usize].unwrap_or(width - 1);
                let held = o.cores as f64;
                let mut t = o.start.max(origin);
                while t < o.end {
                    let b = ((t - origin) / s.step) as usize;
                    let bin_end = origin + (b as Time + 1) * s.step;
                    let upto = bin_end.min(o.end);
                    cores[b * width + k] += held * (upto - t) as f64 / s.step as f64;
                    t = upto;
                }
            })?;
        }
        for b in 0..bins {
            let start = origin + b as Time * s.step;
            let at = (start + s.step).min(end);
            apply(&mut state, &mut events, at);
            state.refresh(at, None);
            let mut other_usage = 0.0;
            for u in 0..n as u32 {
                if slot[u as usize].is_none() {
                    other_usage += state.usage(u);
                }
            }
            for (k, &u) in series_users.iter().enumerate() {
                samples.push(UserSample {
                    time: start,
                    user: Some(ids[u as usize]),
                    usage: state.usage(u),
                    factor: Some(state.factor(u)),
                    cores: cores[b * width + k],
                });
            }
            if others {
                samples.push(UserSample {
                    time: start,
                    user: None,
                    usage: other_usage,
                    factor: None,
                    cores: cores[b * width + width - 1],
                });
            }
        }
    }
    apply(&mut state, &mut events, end);
    state.refresh(end, None);
    for (u, usage) in users.iter_mut().enumerate() {
        usage.usage = state.usage(u as u32);
        usage.share = state.share(u as u32);
        usage.factor = state.factor(u as u32);
    }
    Ok(Ok(Replay {
        ids,
        groups: user_groups,
        users,
        end,
        samples,
    }))
}

/// The run's starts and ends as they are gathered: packed as `(time − base) << 32 | job`, starts
/// and ends apart (8 bytes an event), while every time fits 32 bits from `base`; else as
/// `(time, 0 = end / 1 = start, job)` triples.
enum Events {
    Packed {
        base: Time,
        starts: Vec<u64>,
        ends: Vec<u64>,
    },
    Wide(Vec<(Time, u8, u32)>),
}

impl Events {
    /// Room for `jobs` starts and ends, reserved once: growing by doubling would leave up to
    /// twice the room the run needs (issue 16, 5 M jobs).
    fn new(base: Time, jobs: usize) -> Events {
        Events::Packed {
            base,
            starts: Vec::with_capacity(jobs),
            ends: Vec::with_capacity(jobs),
        }
    }

    fn push(&mut self, time: Time, kind: u8, job: u32) {
        match self {
            Events::Packed { base, starts, ends } => {
                match u32::try_from(time.wrapping_sub(*base))
                    .ok()
                    .filter(|_| time >= *base)
                {
                    Some(offset) => {
                        let key = (u64::from(offset) << 32) | u64::from(job);
                        if kind == 1 { starts } else { ends }.push(key);
                    }
                    None => {
                        let base = *base;
                        let unpack = |k: u64| (base + (k >> 32) as Time, k as u32);
                        let mut wide: Vec<(Time, u8, u32)> =
                            Vec::with_capacity(starts.len() + ends.len() + 1);
                        wide.extend(starts.iter().map(|&k| (unpack(k).0, 1, unpack(k).1)));
                        wide.extend(ends.iter().map(|&k| (unpack(k).0, 0, unpack(k).1)));
                        wide.push((time, kind, job));
                        *self = Events::Wide(wide);
                    }
                }
            }
            Events::Wide(v) => v.push((time, kind, job)),
        }
    }

    /// In the replay's order: by time, ends before starts, then by job.
    fn sorted(self) -> SortedEvents {
        match self {
            Events::Packed {
                base,
                mut starts,
                mut ends,
            } => {
                starts.sort_unstable();
                ends.sort_unstable();
                SortedEvents::Packed {
                    base,
                    starts,
                    ends,
                    next: (0, 0),
                }
            }
            Events::Wide(mut v) => {
                v.sort_unstable();
                SortedEvents::Wide(v, 0)
            }
        }
    }
}

/// [`Events`] sorted, read in order with a cursor.
enum SortedEvents {
    Packed {
        base: Time,
        starts: Vec<u64>,
        ends: Vec<u64>,
        /// Next start, next end.
        next: (usize, usize),
    },
    Wide(Vec<(Time, u8, u32)>, usize),
}

impl SortedEvents {
    /// The next event at or before `until`, if any.
    fn next_until(&mut self, until: Time) -> Option<(Time, u8, u32)> {
        match self {
            SortedEvents::Packed {
                base,
                starts,
                ends,
                next,
            } => {
                let unpack = |k: u64, kind: u8| (*base + (k >> 32) as Time, kind, k as u32);
                let start = starts.get(next.0).map(|&k| unpack(k, 1));
                let end = ends.get(next.1).map(|&k| unpack(k, 0));
                let event = match (start, end) {
                    (Some(s), Some(e)) => s.min(e),
                    (s, e) => s.or(e)?,
                };
                if event.0 > until {
                    return None;
                }
                if event.1 == 1 {
                    next.0 += 1;
                } else {
                    next.1 += 1;
                }
                Some(event)
            }
            SortedEvents::Wide(v, next) => {
                let event = *v.get(*next)?;
                if event.0 > until {
                    return None;
                }
                *next += 1;
                Some(event)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fairshare::{Charging, Decay};
    use crate::sim::{Job, SchedulerKind, SimConfig, simulate};

    fn job(user: i32, submit: Time, procs: u32, runtime: Time) -> Job {
        Job {
            user,
            submit,
            procs,
            runtime,
            requested_time: runtime * 2,
            ..Job::default()
        }
    }

    #[test]
    fn hand_worked_users_and_series() {
        // A 4-processor pool, FCFS: user 1's 4-processor job over [0, 100), user 2's
        // 2-processor job over [100, 300) and user 3's 1-processor job over [100, 200).
        let w = Workload::new(vec![
            job(1, 0, 4, 100),
            job(2, 10, 2, 200),
            job(3, 20, 1, 100),
        ]);
        let machine = Machine::pool(4);
        let out = simulate(&w, &SimConfig::new(machine.clone(), SchedulerKind::Fcfs)).unwrap();
        let spec = FairshareSpec {
            charging: Charging::Continuous,
            ..FairshareSpec::default()
        };
        let sampling = Sampling {
            origin: 0,
            step: 100,
            top: 2,
        };
        let r = replay(&w, &out, &machine, &spec, Some(sampling)).unwrap();
        assert_eq!(r.ids, [1, 2, 3]);
        assert_eq!(r.end, 300);
        // Usage in processor-seconds: 400, 400, 100 of 900; equal shares of 1/3:
        // FF = 2^−(400/900 · 3) = 2^−(4/3) for users 1 and 2, 2^−(1/3) for user 3.
        let charged: Vec<f64> = r.users.iter().map(|u| u.charged).collect();
        assert_eq!(charged, [400.0, 400.0, 100.0]);
        assert_eq!(r.users[0].core_seconds, 400.0);
        assert!((r.users[0].factor - 2f64.powf(-4.0 / 3.0)).abs() < 1e-12);
        assert!((r.users[2].factor - 2f64.powf(-1.0 / 3.0)).abs() < 1e-12);
        assert!((r.users[1].share - 1.0 / 3.0).abs() < 1e-12);
        // Series: the top 2 by charged usage are users 1 and 2 (tie broken by id), then the
        // others (user 3). Bins [0,100), [100,200), [200,300], taken at 100, 200, 300.
        let at = |time: Time, user: Option<i32>| {
            r.samples
                .iter()
                .find(|s| s.time == time && s.user == user)
                .unwrap()
                .clone()
        };
        assert_eq!(r.samples.len(), 9);
        assert_eq!(at(0, Some(1)).cores, 4.0);
        assert_eq!(at(0, Some(1)).usage, 400.0);
        assert_eq!(
            at(0, Some(1)).factor,
            Some(0.125),
            "all usage, a third of the shares"
        );
        assert_eq!(at(100, Some(2)).cores, 2.0);
        assert_eq!(at(100, Some(2)).usage, 200.0);
        assert_eq!(at(100, None).cores, 1.0);
        assert_eq!(at(100, None).usage, 100.0);
        assert_eq!(at(100, None).factor, None);
        assert_eq!(at(200, Some(2)).usage, 400.0);
        assert_eq!(at(200, None).cores, 0.0);
    }

    #[test]
    fn the_replay_finds_what_the_fairshare_order_used() {
        // Under fairshare ordering with decay, the replay's final factors equal those of the
        // state the order kept (same charges, same order, same arithmetic).
        use crate::sim::scheduler::order::{OrderKind, OrderSpec};
        let mut jobs = Vec::new();
        for i in 0..60 {
            jobs.push(job(
                i % 5,
                i as Time * 7,
                1 + (i as u32 % 4),
                30 + (i as Time * 13) % 90,
            ));
        }
        let w = Workload::new(jobs);
        let machine = Machine::pool(6);
        let spec = FairshareSpec {
            decay: Decay::Factor {
                factor: 0.5,
                every: 100,
            },
            ..FairshareSpec::default()
        };
        let mut config = SimConfig::new(machine.clone(), SchedulerKind::Easy);
        config.order = OrderSpec {
            fairshare: spec.clone(),
            ..OrderSpec::of(OrderKind::Fairshare)
        };
        let out = simulate(&w, &config).unwrap();
        let r = replay(&w, &out, &machine, &spec, None).unwrap();
        // Drive a state by hand with the engine's decisions, in the engine's order.
        let mut state = FairshareState::new(&w, &machine, &spec).unwrap();
        let mut events: Vec<(Time, u8, u32)> = out
            .jobs
            .iter()
            .flat_map(|o| [(o.start, 1, o.job), (o.end, 0, o.job)])
            .collect();
        events.sort_unstable();
        for (t, kind, job) in events {
            if kind == 1 {
                state.started(t, job, 0);
            } else {
                state.ended(job, t);
            }
        }
        state.refresh(r.end, None);
        for u in 0..5 {
            assert_eq!(
                r.users[u].factor.to_bits(),
                state.factor(u as u32).to_bits()
            );
        }
        // Decay made usage less than what was charged.
        assert!(r.users.iter().all(|u| u.usage < u.charged));
    }
}
