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
        let mut u = UserEet {
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
        };
        for (job, result) in jobs {
            u.jobs += 1;
            let Some(t) = result.tardiness else { continue };
            u.judged += 1;
            u.violated += u64::from(result.violated == Some(true));
            u.tardiness = u.tardiness.saturating_add(t);
            let cpus = i64::try_from(job.request[Resource::Cpu]).unwrap_or(i64::MAX);
            u.weighted_tardiness = u.weighted_tardiness.saturating_add(t.saturating_mul(cpus));
            u.max_tardiness = u.max_tardiness.max(t);
        }
        u.veet = (u.judged > 0).then(|| u.violated as f64 / u.judged as f64 * 100.0);
        u
    }
}
