//! Fairshare usage per user: F_u = Σ walltime_j × N_j × P(j) (Klusáček & Rudová, Formulas 1, 6
//! and 9), with a charging rule and a decay.
//!
//! A running job adds `rate` = N_j × P(j) ([`super::Pricing::rate`]) per second of walltime to
//! its owner's usage. *When* that is charged is the [`Charging`] rule:
//!
//! - [`Charging::Estimate`] — the paper's §3.4 (MetaCentrum's TORQUE): when a job starts, its
//!   owner is charged `rate × requested time` at once ("since an exact walltime of a running job
//!   is not known until that job completes, the maximum walltime limit is used instead"); when it
//!   completes the estimate is replaced by `rate × actual walltime`. The correction is made as if
//!   the actual amount had been charged at the start, so it decays exactly as the estimate did.
//! - [`Charging::Continuous`] — PBS and AleaNG: usage grows by `rate` every second while the job
//!   runs; nothing is charged in advance.
//!
//! Both charge exactly `rate × walltime` per job in the end. [`Decay`] then makes past usage
//! count less: by a factor at every multiple of an interval of trace time (PBS's
//! `fairshare_decay_factor`/`fairshare_decay_time`, AleaNG's ×0.75 every 48 h), or continuously
//! with a half-life (Slurm's `PriorityDecayHalfLife`). Usage accrued *during* an interval decays
//! from the moment it accrued, in both forms, computed in closed form (no per-tick work).
//!
//! The ledger only changes at a start or a completion of one of the user's jobs, and a query
//! never changes it: a replay of the same starts and completions in the same order gives the same
//! numbers to the last bit ([`super::replay`] relies on it).

use std::collections::HashMap;

use crate::sim::job::Time;

/// When a job's usage is charged; see the module documentation.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Charging {
    /// Klusáček & Rudová §3.4: the requested time at the start, corrected at completion.
    #[default]
    Estimate,
    /// Accrues second by second while the job runs (PBS, AleaNG).
    Continuous,
}

impl Charging {
    pub fn name(self) -> &'static str {
        match self {
            Charging::Estimate => "estimate",
            Charging::Continuous => "continuous",
        }
    }
}

/// How past usage fades.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decay {
    /// Usage never fades (Formula 1 as printed).
    #[default]
    None,
    /// Usage is multiplied by `factor` (0 ≤ factor ≤ 1) at every positive multiple of `every`
    /// seconds of trace time (PBS, AleaNG: 0.75 every 48 h).
    Factor { factor: f64, every: Time },
    /// Usage halves every `half_life` seconds, continuously (Slurm).
    HalfLife { half_life: Time },
}

impl Decay {
    /// AleaNG's Example1 decay: × 0.75 every 48 hours.
    pub const ALEANG: Decay = Decay::Factor {
        factor: 0.75,
        every: 48 * 3600,
    };

    /// What a unit of usage charged at `from` is worth at `to` (`from ≤ to`).
    pub fn multiplier(self, from: Time, to: Time) -> f64 {
        match self {
            Decay::None => 1.0,
            Decay::Factor { factor, every } => {
                let n = instants(from, to, every);
                factor.powi(n.min(i32::MAX as i64) as i32)
            }
            Decay::HalfLife { half_life } => (-((to - from) as f64) / half_life as f64).exp2(),
        }
    }

    /// What `rate` per second, accrued over `[from, to]`, is worth at `to`.
    pub fn accrued(self, rate: f64, from: Time, to: Time) -> f64 {
        if rate == 0.0 || to <= from {
            return 0.0;
        }
        match self {
            Decay::None => rate * (to - from) as f64,
            Decay::Factor { factor, every } => {
                let n = instants(from, to, every);
                if n == 0 {
                    return rate * (to - from) as f64;
                }
                // [from, first instant] decays n times, each whole interval between instants
                // n−1 … 1 times, and [last instant, to] not at all.
                let first = (from.div_euclid(every) + 1) * every;
                let last = to.div_euclid(every) * every;
                let n32 = n.min(i32::MAX as i64) as i32;
                let middle = if factor == 1.0 {
                    (n - 1) as f64
                } else {
                    factor * (1.0 - factor.powi(n32 - 1)) / (1.0 - factor)
                };
                rate * ((first - from) as f64 * factor.powi(n32)
                    + every as f64 * middle
                    + (to - last) as f64)
            }
            Decay::HalfLife { half_life } => {
                // ∫ rate · 2^(−(to − x)/h) dx over [from, to].
                let h = half_life as f64;
                let d = (-((to - from) as f64) / h).exp2();
                rate * h / std::f64::consts::LN_2 * (1.0 - d)
            }
        }
    }
}

/// Decay instants (multiples of `every`) in `(from, to]`.
fn instants(from: Time, to: Time, every: Time) -> i64 {
    to.div_euclid(every) - from.div_euclid(every)
}

/// One user's usage as of `since`, plus what their running jobs add per second from then on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Account {
    settled: f64,
    since: Time,
    rate: f64,
    running: u32,
}

/// A running job's charge.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Charge {
    user: u32,
    rate: f64,
    start: Time,
    requested: Time,
}

/// Usage per user (dense indices `0..users`), with a charging rule and a decay.
#[derive(Clone, Debug)]
pub struct Ledger {
    charging: Charging,
    decay: Decay,
    accounts: Vec<Account>,
    /// Running jobs by workload index; only looked up, never iterated.
    running: HashMap<u32, Charge>,
}

impl Ledger {
    pub fn new(users: usize, charging: Charging, decay: Decay) -> Self {
        Ledger {
            charging,
            decay,
            accounts: vec![Account::default(); users],
            running: HashMap::new(),
        }
    }

    pub fn users(&self) -> usize {
        self.accounts.len()
    }

    pub fn charging(&self) -> Charging {
        self.charging
    }

    pub fn decay(&self) -> Decay {
        self.decay
    }

    /// `user`'s usage as it stands at `now` (≥ the time of their last start or completion).
    pub fn usage(&self, user: u32, now: Time) -> f64 {
        let a = &self.accounts[user as usize];
        let now = now.max(a.since);
        a.settled * self.decay.multiplier(a.since, now) + self.decay.accrued(a.rate, a.since, now)
    }

    /// Every user's usage at `now`, into `out` (cleared first).
    pub fn usages(&self, now: Time, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..self.accounts.len() as u32).map(|u| self.usage(u, now)));
    }

    /// Whether `user` has jobs running (their usage grows with time under continuous charging).
    pub fn is_running(&self, user: u32) -> bool {
        self.accounts[user as usize].running > 0
    }

    /// Brings `user`'s account to `now`.
    fn settle(&mut self, user: u32, now: Time) {
        let settled = self.usage(user, now);
        let a = &mut self.accounts[user as usize];
        if now > a.since {
            a.settled = settled;
            a.since = now;
        }
    }

    /// Job `job` of `user` starts at `now`, adding `rate` per second of walltime, with
    /// `requested` seconds of requested time. Starting a job twice is a bug (ignored).
    pub fn start(&mut self, now: Time, job: u32, user: u32, rate: f64, requested: Time) {
        if self.running.contains_key(&job) {
            debug_assert!(false, "job {job} started twice");
            return;
        }
        self.settle(user, now);
        let a = &mut self.accounts[user as usize];
        match self.charging {
            Charging::Estimate => a.settled += rate * requested as f64,
            Charging::Continuous => a.rate += rate,
        }
        a.running += 1;
        self.running.insert(
            job,
            Charge {
                user,
                rate,
                start: now,
                requested,
            },
        );
    }

    /// Job `job` completes at `now`; its walltime is `now` − its start. Completing a job that is
    /// not running is a bug (ignored).
    pub fn complete(&mut self, now: Time, job: u32) {
        let Some(c) = self.running.remove(&job) else {
            debug_assert!(false, "job {job} completed but not running");
            return;
        };
        self.settle(c.user, now);
        let decay = self.decay;
        let a = &mut self.accounts[c.user as usize];
        a.running -= 1;
        match self.charging {
            Charging::Estimate => {
                let correction = c.rate * ((now - c.start) - c.requested) as f64;
                a.settled += correction * decay.multiplier(c.start, now);
                // Guard against rounding below zero when the estimate was all of it.
                a.settled = a.settled.max(0.0);
            }
            Charging::Continuous => {
                a.rate -= c.rate;
                if a.running == 0 {
                    // No drift: a user with nothing running accrues exactly nothing.
                    a.rate = 0.0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Time = 3600;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn estimate_charges_the_request_then_corrects() {
        // §3.4: a 4-core job asking 10 h charges 40 core-hours at its start; it ends after 6 h,
        // so its owner ends with 24 core-hours.
        let mut l = Ledger::new(2, Charging::Estimate, Decay::None);
        l.start(0, 7, 1, 4.0, 10 * H);
        assert!(close(l.usage(1, 0), 40.0 * H as f64));
        assert!(
            close(l.usage(1, 3 * H), 40.0 * H as f64),
            "flat while it runs"
        );
        assert_eq!(l.usage(0, 3 * H), 0.0);
        l.complete(6 * H, 7);
        assert!(close(l.usage(1, 6 * H), 24.0 * H as f64));
        assert!(close(l.usage(1, 100 * H), 24.0 * H as f64));
        assert!(!l.is_running(1));
    }

    #[test]
    fn continuous_accrues_while_running() {
        let mut l = Ledger::new(1, Charging::Continuous, Decay::None);
        l.start(100, 0, 0, 4.0, 10 * H);
        assert_eq!(l.usage(0, 100), 0.0);
        assert!(close(l.usage(0, 100 + H), 4.0 * H as f64));
        l.start(100 + H, 1, 0, 2.0, H);
        assert!(close(l.usage(0, 100 + 2 * H), 10.0 * H as f64));
        l.complete(100 + 2 * H, 1);
        l.complete(100 + 3 * H, 0);
        // 4 cores × 3 h + 2 cores × 1 h.
        assert!(close(l.usage(0, 100 + 3 * H), 14.0 * H as f64));
        assert_eq!(l.usage(0, 100 + 9 * H), l.usage(0, 100 + 3 * H));
        assert!(!l.is_running(0));
    }

    #[test]
    fn both_rules_agree_once_jobs_are_done_without_decay() {
        let jobs = [
            (0, 5.0, 3 * H, 2 * H),
            (H, 1.5, 4 * H, 4 * H),
            (2 * H, 8.0, H, 30),
        ];
        let mut a = Ledger::new(1, Charging::Estimate, Decay::None);
        let mut b = Ledger::new(1, Charging::Continuous, Decay::None);
        let mut events: Vec<(Time, bool, u32)> = Vec::new();
        for (i, &(start, _, _, run)) in jobs.iter().enumerate() {
            events.push((start, true, i as u32));
            events.push((start + run, false, i as u32));
        }
        events.sort_by_key(|&(t, is_start, j)| (t, is_start, j));
        for (t, is_start, j) in events {
            let (_, rate, req, _) = jobs[j as usize];
            for l in [&mut a, &mut b] {
                if is_start {
                    l.start(t, j, 0, rate, req);
                } else {
                    l.complete(t, j);
                }
            }
        }
        let expected = 5.0 * (2 * H) as f64 + 1.5 * (4 * H) as f64 + 8.0 * 30.0;
        assert!(close(a.usage(0, 10 * H), expected));
        assert!(close(b.usage(0, 10 * H), expected));
    }

    #[test]
    fn factor_decay_at_multiples_of_the_interval() {
        // AleaNG: × 0.75 every 48 h. 100 core-hours charged at t = 1 h are 75 after the first
        // decay instant (48 h), 56.25 after the second (96 h).
        let mut l = Ledger::new(1, Charging::Estimate, Decay::ALEANG);
        l.start(H, 0, 0, 10.0, 10 * H);
        l.complete(11 * H, 0);
        let hundred = 100.0 * H as f64;
        assert!(close(l.usage(0, 47 * H), hundred));
        assert!(close(l.usage(0, 48 * H - 1), hundred));
        assert!(close(l.usage(0, 48 * H), 0.75 * hundred));
        assert!(close(l.usage(0, 95 * H), 0.75 * hundred));
        assert!(close(l.usage(0, 96 * H), 0.5625 * hundred));
    }

    #[test]
    fn continuous_accrual_across_decay_instants() {
        // 1 core from 40 h to 100 h, ×0.5 every 48 h: the 8 h before 48 h decay twice (→ 2),
        // the 48 h between 48 h and 96 h once (→ 24), the last 4 h not at all: 30 core-hours.
        let d = Decay::Factor {
            factor: 0.5,
            every: 48 * H,
        };
        let mut l = Ledger::new(1, Charging::Continuous, d);
        l.start(40 * H, 0, 0, 1.0, 100 * H);
        assert!(close(l.usage(0, 100 * H), 30.0 * H as f64));
        l.complete(100 * H, 0);
        assert!(close(l.usage(0, 100 * H), 30.0 * H as f64));
        assert!(close(l.usage(0, 144 * H), 15.0 * H as f64));
        // The closed form equals a sum over the pieces.
        assert!(close(
            d.accrued(1.0, 40 * H, 100 * H),
            (8.0 * 0.25 + 48.0 * 0.5 + 4.0) * H as f64
        ));
    }

    #[test]
    fn estimate_correction_decays_like_the_estimate() {
        // 10 cores, 100 h requested from t = 0, done at 60 h; × 0.5 at 48 h. Charged as if the
        // 600 core-hours had been charged at the start: 300 at 60 h.
        let d = Decay::Factor {
            factor: 0.5,
            every: 48 * H,
        };
        let mut l = Ledger::new(1, Charging::Estimate, d);
        l.start(0, 0, 0, 10.0, 100 * H);
        assert!(close(l.usage(0, 50 * H), 500.0 * H as f64));
        l.complete(60 * H, 0);
        assert!(close(l.usage(0, 60 * H), 300.0 * H as f64));
    }

    #[test]
    fn half_life_decay() {
        // 100 charged at 0 are 50 one half-life later, 25 two.
        let d = Decay::HalfLife {
            half_life: 7 * 24 * H,
        };
        let mut l = Ledger::new(1, Charging::Estimate, d);
        l.start(0, 0, 0, 100.0, 1);
        l.complete(1, 0);
        let at_1 = l.usage(0, 1);
        assert!(close(l.usage(0, 1 + 7 * 24 * H), at_1 / 2.0));
        assert!(close(l.usage(0, 1 + 14 * 24 * H), at_1 / 4.0));
        // Continuous accrual of rate 1 over one half-life h: h / ln 2 × (1 − 1/2).
        let h = (7 * 24 * H) as f64;
        assert!(close(
            d.accrued(1.0, 0, 7 * 24 * H),
            h / std::f64::consts::LN_2 / 2.0
        ));
        // Over a short span it is nearly the undecayed amount.
        assert!((d.accrued(1.0, 0, 10) - 10.0).abs() < 1e-3);
    }

    #[test]
    fn usage_never_decreases_while_consuming_without_decay() {
        let mut l = Ledger::new(1, Charging::Continuous, Decay::None);
        l.start(0, 0, 0, 3.0, 100);
        let mut last = 0.0;
        for t in (0..200).step_by(7) {
            let u = l.usage(0, t);
            assert!(u >= last);
            last = u;
        }
    }

    #[test]
    fn decay_factor_edge_cases() {
        let keep = Decay::Factor {
            factor: 1.0,
            every: 10,
        };
        assert!(close(keep.accrued(2.0, 5, 45), 80.0));
        let forget = Decay::Factor {
            factor: 0.0,
            every: 10,
        };
        // Only what accrued since the last instant survives.
        assert!(close(forget.accrued(2.0, 5, 45), 10.0));
        assert_eq!(forget.multiplier(5, 45), 0.0);
        assert_eq!(forget.multiplier(11, 19), 1.0);
        // Negative trace times: instants are still the multiples of the interval.
        assert_eq!(instants(-15, 5, 10), 2);
    }
}
