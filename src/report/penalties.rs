//! Klusáček & Rudová's §4 from stored results (`job_penalties.parquet`, docs/outputs.md): per
//! cell, every job's penalty under `cpu` and `pe_min` and its wait; and, pure, the figures the
//! report sets beside the paper's — the shares of jobs, CPU time and users whose penalty rises
//! under `pe_min` (paper: under 2 %, over 5 %, about 40 %), the distribution of the increase
//! (its Fig. 4 left: nearly 90 % +20 % or more), and how the waits of affected and unaffected
//! jobs change between the `cpu` and the `pe_min` run (paper: affected jobs wait about 33
//! minutes longer on average). Definitions as `schedlab::analysis::penalties`.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::AFFECTED_TOLERANCE;

/// One job of one cell (a row of job_penalties.parquet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PenaltyRow {
    pub job_id: i64,
    pub user: i64,
    pub cores: f64,
    pub runtime: f64,
    pub cpu: f64,
    pub pe_min: Option<f64>,
    pub increase: Option<f64>,
    /// Seconds; `None`: never ran.
    pub wait: Option<f64>,
}

impl PenaltyRow {
    pub fn affected(&self) -> bool {
        self.increase.is_some_and(|x| x > AFFECTED_TOLERANCE)
    }
}

/// The §4 shares of one workload on one machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shares {
    /// Jobs some node class can run, and those whose `pe_min` exceeds `cpu`.
    pub priced: usize,
    pub affected: usize,
    pub job_fraction: f64,
    /// Of Σ cores × runtime over the priced jobs.
    pub cpu_time_fraction: f64,
    pub users: usize,
    pub affected_users: usize,
    /// Among affected jobs: +20 % or more, +100 % or more.
    pub at_least_20pct: Option<f64>,
    pub at_least_100pct: Option<f64>,
    /// The affected jobs' increases, ascending (pe_min / cpu − 1).
    pub increases: Vec<f64>,
}

pub fn shares(rows: &[PenaltyRow]) -> Shares {
    let priced: Vec<&PenaltyRow> = rows.iter().filter(|r| r.pe_min.is_some()).collect();
    let affected: Vec<&PenaltyRow> = priced.iter().copied().filter(|r| r.affected()).collect();
    let time = |v: &[&PenaltyRow]| v.iter().map(|r| r.cores * r.runtime).sum::<f64>();
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let users: BTreeSet<i64> = priced.iter().map(|r| r.user).collect();
    let affected_users: BTreeSet<i64> = affected.iter().map(|r| r.user).collect();
    let mut increases: Vec<f64> = affected.iter().filter_map(|r| r.increase).collect();
    increases.sort_by(f64::total_cmp);
    let at_least = |x: f64| {
        (!increases.is_empty()).then(|| {
            increases
                .iter()
                .filter(|&&v| v >= x - AFFECTED_TOLERANCE)
                .count() as f64
                / increases.len() as f64
        })
    };
    Shares {
        priced: priced.len(),
        affected: affected.len(),
        job_fraction: ratio(affected.len() as f64, priced.len() as f64),
        cpu_time_fraction: ratio(time(&affected), time(&priced)),
        users: users.len(),
        affected_users: affected_users.len(),
        at_least_20pct: at_least(0.2),
        at_least_100pct: at_least(1.0),
        increases,
    }
}

/// Mean waits of one set of jobs under the `cpu` and the `pe_min` run (jobs that ran in both).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WaitPair {
    pub jobs: usize,
    pub cpu: f64,
    pub pe_min: f64,
}

impl WaitPair {
    /// pe_min − cpu, seconds.
    pub fn change(&self) -> f64 {
        self.pe_min - self.cpu
    }
}

/// Waits of the affected jobs, of the others, and of all, between the `cpu` run and the
/// `pe_min` run of the same workload and machine (rows matched by job id); `None` for a set
/// with no job that ran in both.
pub fn waits(cpu: &[PenaltyRow], pe_min: &[PenaltyRow]) -> [Option<WaitPair>; 3] {
    let other: BTreeMap<i64, Option<f64>> = pe_min.iter().map(|r| (r.job_id, r.wait)).collect();
    let mut sums = [(0usize, 0.0, 0.0); 3];
    for r in cpu {
        let (Some(a), Some(Some(b))) = (r.wait, other.get(&r.job_id)) else {
            continue;
        };
        let set = if r.affected() { 0 } else { 1 };
        for k in [set, 2] {
            sums[k].0 += 1;
            sums[k].1 += a;
            sums[k].2 += b;
        }
    }
    sums.map(|(n, a, b)| {
        (n > 0).then(|| WaitPair {
            jobs: n,
            cpu: a / n as f64,
            pe_min: b / n as f64,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(job_id: i64, user: i64, cores: f64, cpu: f64, pe_min: f64, wait: f64) -> PenaltyRow {
        PenaltyRow {
            job_id,
            user,
            cores,
            runtime: 100.0,
            cpu,
            pe_min: Some(pe_min),
            increase: Some(pe_min / cpu - 1.0),
            wait: Some(wait),
        }
    }

    #[test]
    fn shares_and_waits_worked_by_hand() {
        // Job 1 (user 1, 1 core): 1 → 2.5, +150 %; job 2 (user 1, 8 cores): 8 → 8;
        // job 3 (user 2, 1 core): 1 → 1.1, +10 %; job 4 (user 3, 2 cores): fits nowhere.
        let mut cpu = vec![
            row(1, 1, 1.0, 1.0, 2.5, 600.0),
            row(2, 1, 8.0, 8.0, 8.0, 0.0),
            row(3, 2, 1.0, 1.0, 1.1, 60.0),
        ];
        cpu.push(PenaltyRow {
            job_id: 4,
            user: 3,
            cores: 2.0,
            runtime: 100.0,
            cpu: 2.0,
            ..PenaltyRow::default()
        });
        let s = shares(&cpu);
        assert_eq!((s.priced, s.affected), (3, 2));
        assert!((s.job_fraction - 2.0 / 3.0).abs() < 1e-12);
        // CPU time: affected 100 + 100 of 100 + 800 + 100.
        assert!((s.cpu_time_fraction - 0.2).abs() < 1e-12);
        assert_eq!((s.users, s.affected_users), (2, 2));
        assert_eq!(s.at_least_20pct, Some(0.5));
        assert_eq!(s.at_least_100pct, Some(0.5));
        assert_eq!(s.increases.len(), 2);
        // Under pe_min job 1 waits 2,400 s (+1,800), job 3 0 s (−60), job 2 120 s (+120);
        // job 4 never ran in either.
        let mut pe = cpu.clone();
        pe[0].wait = Some(2400.0);
        pe[1].wait = Some(120.0);
        pe[2].wait = Some(0.0);
        let [affected, others, all] = waits(&cpu, &pe);
        let affected = affected.unwrap();
        assert_eq!(affected.jobs, 2);
        assert_eq!((affected.cpu, affected.pe_min), (330.0, 1200.0));
        assert_eq!(affected.change(), 870.0);
        let others = others.unwrap();
        assert_eq!((others.jobs, others.cpu, others.pe_min), (1, 0.0, 120.0));
        assert_eq!(all.unwrap().jobs, 3);
        assert!(
            (all.unwrap().change() - (1800.0 - 60.0 + 120.0) / 3.0).abs() < 1e-9,
            "{all:?}"
        );
    }
}
