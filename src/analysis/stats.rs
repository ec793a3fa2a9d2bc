//! Per-group statistics of a trace, the measurements of Medernach's section "Workload data
//! analysis": jobs, runtime, wait and interarrival mean / standard deviation / CV (his tables
//! "Group mean waiting time" and "Group interarrival time"), the normalised waiting time
//! ŴT = mean wait / (jobs × mean runtime) (section "Waiting time": a waiting-time measure that
//! does not reward splitting work into many jobs), the daily cycle of arrivals (section "Arrival
//! time") and the empirical R0(t).

use serde::Serialize;

use super::moments::Moments;
use super::r0::{EmpiricalR0, R0_GRID};
use crate::sim::{Job, Workload};

/// How to split a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    All,
    User,
    Group,
    Queue,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupStats {
    /// `all`, or `user N` / `group N` / `queue N`.
    pub group: String,
    /// The user, group or queue number (SWF fields 12, 13, 15); `None` for `all`.
    pub key: Option<i32>,
    pub jobs: u64,
    pub runtime: Moments,
    /// Over jobs whose log records a wait (SWF field 3 ≥ 0).
    pub wait: Option<Moments>,
    /// Gaps between consecutive submissions of the group.
    pub interarrival: Option<Moments>,
    /// ŴT = mean wait / (jobs with a wait × mean runtime of those jobs).
    pub normalized_wait: Option<f64>,
    /// Submissions per hour of the day (0–23).
    pub daily: [u64; 24],
    /// R̂0(t) at each t of [`R0_GRID`]; `None` where t ≥ the group's span.
    pub r0: Vec<Option<f64>>,
}

fn key_of(job: &Job, by: GroupBy) -> Option<i32> {
    match by {
        GroupBy::All => None,
        GroupBy::User => Some(job.user),
        GroupBy::Group => Some(job.group),
        GroupBy::Queue => Some(job.queue),
    }
}

/// Statistics per group, most jobs first (ties by key). `waits[i]` is the recorded wait of job
/// `i` (-1 unknown). `clock` is added to submit times before taking the hour of the day (the
/// log's UnixStartTime plus its TimeZone offset, for local hours; 0 for trace time).
pub fn group_stats(workload: &Workload, waits: &[i64], by: GroupBy, clock: i64) -> Vec<GroupStats> {
    // One pass puts each job in its group (in submission order within a group).
    let mut members: std::collections::BTreeMap<Option<i32>, Vec<usize>> = Default::default();
    for (i, job) in workload.jobs.iter().enumerate() {
        members.entry(key_of(job, by)).or_default().push(i);
    }
    let mut out: Vec<GroupStats> = members
        .into_iter()
        .map(|(key, members)| stats_of(workload, waits, &members, by, key, clock))
        .collect();
    out.sort_by(|a, b| b.jobs.cmp(&a.jobs).then(a.key.cmp(&b.key)));
    out
}

fn stats_of(
    workload: &Workload,
    waits: &[i64],
    members: &[usize],
    by: GroupBy,
    key: Option<i32>,
    clock: i64,
) -> GroupStats {
    let jobs: Vec<&Job> = members.iter().map(|&i| &workload.jobs[i]).collect();
    let runtime = Moments::of(jobs.iter().map(|j| j.runtime as f64)).expect("a group has jobs");
    let known: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| waits.get(i).is_some_and(|&w| w >= 0))
        .collect();
    let wait = Moments::of(known.iter().map(|&i| waits[i] as f64));
    let known_runtime = Moments::of(known.iter().map(|&i| workload.jobs[i].runtime as f64));
    let normalized_wait = match (wait, known_runtime) {
        (Some(w), Some(r)) if r.mean > 0.0 => Some(w.mean / (w.n as f64 * r.mean)),
        _ => None,
    };
    let submits: Vec<f64> = jobs.iter().map(|j| j.submit as f64).collect();
    let interarrival = Moments::of(submits.windows(2).map(|w| w[1] - w[0]));
    let mut daily = [0u64; 24];
    for j in &jobs {
        daily[((j.submit + clock).rem_euclid(86_400) / 3600) as usize] += 1;
    }
    let r0 = match EmpiricalR0::new(&submits) {
        Some(e) => R0_GRID.iter().map(|&t| e.at(t)).collect(),
        None => vec![None; R0_GRID.len()],
    };
    let group = match (by, key) {
        (GroupBy::All, _) | (_, None) => "all".to_string(),
        (GroupBy::User, Some(k)) => format!("user {k}"),
        (GroupBy::Group, Some(k)) => format!("group {k}"),
        (GroupBy::Queue, Some(k)) => format!("queue {k}"),
    };
    GroupStats {
        group,
        key,
        jobs: jobs.len() as u64,
        runtime,
        wait,
        interarrival,
        normalized_wait,
        daily,
        r0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(submit: i64, runtime: i64, user: i32) -> Job {
        Job {
            id: 0,
            submit,
            runtime,
            requested_time: runtime,
            procs: 1,
            cpu_time: -1,
            user,
            group: 1,
            queue: -1,
            partition: -1,
            request: Default::default(),
        }
    }

    #[test]
    fn per_user_by_hand() {
        // User 1 submits at 0, 100, 400 (runtimes 10, 20, 30; waits 5, 15, unknown); user 2 at
        // 3700 once.
        let w = Workload::new(vec![
            job(0, 10, 1),
            job(100, 20, 1),
            job(400, 30, 1),
            job(3700, 60, 2),
        ]);
        let waits = [5, 15, -1, 0];
        let s = group_stats(&w, &waits, GroupBy::User, 0);
        assert_eq!(s[0].group, "user 1");
        assert_eq!(s[0].jobs, 3);
        assert_eq!(s[0].runtime.mean, 20.0);
        let wait = s[0].wait.unwrap();
        assert_eq!((wait.n, wait.mean, wait.sd), (2, 10.0, 5.0));
        // ŴT over the two jobs with a wait: 10 / (2 × mean(10, 20) = 15) = 1/3.
        assert!((s[0].normalized_wait.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let ia = s[0].interarrival.unwrap();
        assert_eq!((ia.mean, ia.sd), (200.0, 100.0));
        assert_eq!(ia.cv, Some(0.5));
        assert_eq!(s[0].daily[0], 3);
        // R0(60 s) over gaps 100 and 300 (span 400): (40 + 240) / 340.
        assert!((s[0].r0[3].unwrap() - 280.0 / 340.0).abs() < 1e-12);
        assert_eq!(s[1].group, "user 2");
        assert_eq!(s[1].interarrival, None);
        assert_eq!(s[1].daily[1], 1);
        let all = group_stats(&w, &waits, GroupBy::All, 3600);
        assert_eq!(
            (all.len(), all[0].jobs, all[0].daily[1], all[0].daily[2]),
            (1, 4, 3, 1)
        );
    }
}
