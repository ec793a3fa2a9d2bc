//! Per-user results (Tóth & Klusáček, section 3.3): the percentage of violated EETs, VEET_u
//! (Formula 1), and the total tardiness, plain and weighted by the job's CPUs, WT_u
//! (Formula 3).

use serde::Serialize;

use super::job::{EetJob, JobEet};
use super::ratio::Ratio;
use super::resource::{PerResource, Resource};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UserEet {
    pub user: i32,
    /// The group of the user's first job.
    pub group: i32,
    /// The expected capacity per resource; `None` where not modelled.
    #[serde(skip)]
    pub capacity: PerResource<Option<Ratio>>,
    /// Jobs of the user (all take their place in the share).
    pub jobs: u64,
    /// Jobs with a known completion: the ones judged.
    pub judged: u64,
    /// Judged jobs with C_j > EET_j.
    pub violated: u64,
    /// VEET_u = violated / judged · 100 % (Formula 1, over the judged jobs); `None` when no job
    /// is judged.
    pub veet: Option<f64>,
    /// Σ T_j over the judged jobs, seconds (saturating).
    pub tardiness: i64,
    /// WT_u = Σ w_j · T_j with w_j the job's CPUs (Formula 3), CPU-seconds (saturating).
    pub weighted_tardiness: i64,
    /// The largest T_j, seconds.
    pub max_tardiness: i64,
}

impl UserEet {
    /// Aggregates the results of one user's `jobs`.
    pub fn of<'a>(
        user: i32,
        group: i32,
        capacity: PerResource<Option<Ratio>>,
        jobs: impl Iterator<Item = (&'a EetJob, &'a JobEet)>,
    ) -> UserEet {
        let mut u = UserEet::empty(user, group, capacity);
        for (job, result) in jobs {
            u.add(job, result);
        }
        u.finished()
    }

    /// A user without jobs yet (the start of [`UserEet::add`]ing them one by one).
    pub fn empty(user: i32, group: i32, capacity: PerResource<Option<Ratio>>) -> UserEet {
        UserEet {
            user,
            group,
            capacity,
            jobs: 0,
            judged: 0,
            violated: 0,
            veet: None,
            tardiness: 0,
            weighted_tardiness: 0,
            max_tardiness: 0,
        }
    }

    /// Counts one more job of the user and its result.
    pub fn add(&mut self, job: &EetJob, result: &JobEet) {
        self.jobs += 1;
        let Some(t) = result.tardiness else { return };
        self.judged += 1;
        self.violated += u64::from(result.violated == Some(true));
        self.tardiness = self.tardiness.saturating_add(t);
        let cpus = i64::try_from(job.request[Resource::Cpu]).unwrap_or(i64::MAX);
        self.weighted_tardiness = self
            .weighted_tardiness
            .saturating_add(t.saturating_mul(cpus));
        self.max_tardiness = self.max_tardiness.max(t);
    }

    /// The totals with VEET_u computed from them.
    pub fn finished(mut self) -> UserEet {
        self.veet = (self.judged > 0).then(|| self.violated as f64 / self.judged as f64 * 100.0);
        self
    }
}
