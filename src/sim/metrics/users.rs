//! Per-user metrics of a run (users.parquet) and the fairness of their distribution across users
//! (Jain's index, in the summary): each user's jobs, core-hours, penalised usage, share and final
//! fairshare factor ([`crate::sim::fairshare::replay()`]) beside their mean wait, response and
//! bounded slowdown over the measured jobs (docs/metrics.md, "Per user").

use serde::{Deserialize, Serialize};

use super::JobRecord;
use crate::sim::fairshare::Replay;

/// One user's row of users.parquet.
#[derive(Clone, Debug, PartialEq)]
pub struct UserRow {
    pub user: i32,
    pub group: i32,
    /// Simulated jobs (all of them, warm-up included).
    pub jobs: u64,
    /// Jobs in the measurement window (after warm-up): what the means are over.
    pub measured_jobs: u64,
    /// Σ cores held × run / 3600.
    pub core_hours: f64,
    /// Σ P(j) × run under the fairshare's penalty model, undecayed (penalty-seconds).
    pub penalised_usage: f64,
    /// The decayed usage at the end of the run (what the final factor is computed from).
    pub usage: f64,
    /// S_u, the user's normalised share.
    pub share: f64,
    /// FF at the end of the run.
    pub fairshare_factor: f64,
    pub wait_mean: Option<f64>,
    pub response_mean: Option<f64>,
    pub bounded_slowdown_mean: Option<f64>,
}

/// How evenly the run treated its users: Jain's fairness index (Σx)² / (n Σx²) of a per-user
/// quantity, 1 when every user got the same, 1/n when one user got everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserFairness {
    /// Users with at least one simulated job.
    pub users: u64,
    /// Jain's index of the users' mean bounded slowdowns (measured jobs).
    pub jain_bounded_slowdown: Option<f64>,
    /// Jain's index of the users' mean waits (measured jobs).
    pub jain_wait: Option<f64>,
    /// Jain's index of penalised usage per unit of share: 1 when every user's consumption is
    /// proportional to their share.
    pub jain_usage_per_share: Option<f64>,
}

/// Jain's fairness index of `xs` (non-negative); `None` for no values, 1 when all are zero.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if squares == 0.0 {
        return Some(1.0);
    }
    Some(sum * sum / (xs.len() as f64 * squares))
}

/// The rows of users with at least one simulated job, by user id; `records` are the run's job
/// records and `first` the first measured one (the warm-up cut of [`super::measurement`]).
pub fn user_rows(records: &[JobRecord], first: usize, replay: &Replay) -> Vec<UserRow> {
    let mut sums = UserSums::new(replay);
    for r in &records[first.min(records.len())..] {
        sums.measured(r);
    }
    sums.rows(replay)
}

/// The per-user sums of [`user_rows`], fed one measured record at a time (a few numbers per
/// user, nothing per job).
pub struct UserSums {
    /// The replay's user ids (sorted), to find a record's user.
    ids: Vec<i32>,
    /// Per user: measured jobs, Σ wait, Σ response, Σ bounded slowdown.
    sums: Vec<(u64, f64, f64, f64)>,
}

impl UserSums {
    pub fn new(replay: &Replay) -> UserSums {
        UserSums {
            ids: replay.ids.clone(),
            sums: vec![(0, 0.0, 0.0, 0.0); replay.ids.len()],
        }
    }

    /// The next measured record, in submission order.
    pub fn measured(&mut self, r: &JobRecord) {
        if let Ok(u) = self.ids.binary_search(&r.user) {
            let s = &mut self.sums[u];
            s.0 += 1;
            s.1 += r.wait as f64;
            s.2 += r.response as f64;
            s.3 += r.bounded_slowdown;
        }
    }

    /// The rows, by user id, of the users `replay` saw run a job.
    pub fn rows(self, replay: &Replay) -> Vec<UserRow> {
        let sums = self.sums;
        let mut rows: Vec<UserRow> = (0..replay.ids.len())
            .filter(|&u| replay.users[u].jobs > 0)
            .map(|u| {
                let usage = &replay.users[u];
                let (m, wait, response, bsld) = sums[u];
                let mean = |total: f64| (m > 0).then(|| total / m as f64);
                UserRow {
                    user: replay.ids[u],
                    group: replay.groups[u],
                    jobs: usage.jobs,
                    measured_jobs: m,
                    core_hours: usage.core_seconds / 3600.0,
                    penalised_usage: usage.charged,
                    usage: usage.usage,
                    share: usage.share,
                    fairshare_factor: usage.factor,
                    wait_mean: mean(wait),
                    response_mean: mean(response),
                    bounded_slowdown_mean: mean(bsld),
                }
            })
            .collect();
        rows.sort_by_key(|r| r.user);
        rows
    }
}

/// Jain's indices over `rows`.
pub fn fairness(rows: &[UserRow]) -> UserFairness {
    let of = |f: &dyn Fn(&UserRow) -> Option<f64>| {
        jain_index(&rows.iter().filter_map(f).collect::<Vec<_>>())
    };
    UserFairness {
        users: rows.len() as u64,
        jain_bounded_slowdown: of(&|r| r.bounded_slowdown_mean),
        jain_wait: of(&|r| r.wait_mean),
        jain_usage_per_share: of(&|r| (r.share > 0.0).then(|| r.penalised_usage / r.share)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_by_hand() {
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), Some(1.0));
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), Some(1.0));
        // One of four users gets everything: 1/n.
        assert_eq!(jain_index(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1 + 3)² / (2 × (1 + 9)) = 16 / 20.
        assert_eq!(jain_index(&[1.0, 3.0]), Some(0.8));
    }
}
