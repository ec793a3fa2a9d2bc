//! Job-size classes (Margo et al., section 6: small = 1 node, medium = 2–64 nodes, large = 65
//! and more) and the per-class aggregates the paper breaks its results down by: mean wait,
//! node-seconds-weighted expansion factor (Eq. 2) and time-weighted queue depth.

use serde::{Deserialize, Serialize};

use super::record::JobRecord;
use crate::sim::job::Time;

/// One class: jobs whose width in allocation units is at most `up_to` (and above the previous
/// class's bound); `None` for the last, open-ended class.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SizeClass {
    pub name: String,
    pub up_to: Option<u64>,
}

/// Classes in increasing order of width; the last is open-ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SizeClasses(pub Vec<SizeClass>);

impl Default for SizeClasses {
    /// The paper's: small = 1, medium = 2–64, large = 65+.
    fn default() -> Self {
        let class = |name: &str, up_to| SizeClass {
            name: name.to_string(),
            up_to,
        };
        SizeClasses(vec![
            class("small", Some(1)),
            class("medium", Some(64)),
            class("large", None),
        ])
    }
}

impl SizeClasses {
    /// Index of the class of a job `units` wide.
    pub fn of(&self, units: u64) -> usize {
        self.0
            .iter()
            .position(|c| c.up_to.is_none_or(|max| units <= max))
            .unwrap_or(self.0.len().saturating_sub(1))
    }
}

/// Aggregates of one size class over the measured jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassSummary {
    pub name: String,
    pub jobs: u64,
    pub wait_mean: Option<f64>,
    /// Σ(EF · node-seconds) / Σ node-seconds over the class (Eq. 2).
    pub expansion_factor_weighted: Option<f64>,
    pub bounded_slowdown_mean: Option<f64>,
    /// Time-weighted mean number of the class's jobs waiting over `[from, to)`.
    pub queue_mean: Option<f64>,
}

/// Per-class aggregates of `measured` records (a suffix of `all`); queue depth over
/// `[from, to)` counts every record in `all` (waiting is waiting, measured or not). The same
/// sums as the run summary's ([`super::RunAccumulator`]).
pub fn summarize_classes(
    all: &[JobRecord],
    measured: &[JobRecord],
    classes: &SizeClasses,
    (from, to): (Time, Time),
) -> Vec<ClassSummary> {
    let window = super::Window {
        first: (all.len() - measured.len()) as u64,
        start: from,
        end: to,
    };
    let mut acc = super::RunAccumulator::new(super::MetricsConfig::default(), window, 1, classes);
    for r in all {
        acc.job(r);
    }
    acc.finish(0, super::ReservationCounts::default()).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(units: u64, submit: Time, start: Time, run: Time, requested: Time) -> JobRecord {
        let wait = start - submit;
        JobRecord {
            job_id: 1,
            index: 0,
            user: 1,
            group: -1,
            queue: -1,
            submit,
            start,
            end: start + run,
            wait,
            response: wait + run,
            run,
            requested_time: requested,
            procs: units as u32,
            units,
            cluster: 0,
            nodes: 1,
            held: crate::sim::ResourceVec([units, 0, 0]),
            requested_memory_kb: 0,
            slowdown: 1.0,
            bounded_slowdown: 1.0,
            expansion_factor: (requested + wait) as f64 / requested as f64,
            backfilled: false,
            killed: false,
        }
    }

    #[test]
    fn the_papers_classes_by_hand() {
        let c = SizeClasses::default();
        assert_eq!(
            (c.of(1), c.of(2), c.of(64), c.of(65), c.of(256)),
            (0, 1, 1, 2, 2)
        );
        // Medium: a 2-node job waiting 100 s for a 100 s request (EF 2) running 100 s, and a
        // 4-node one not waiting (EF 1) running 50 s: weighted EF = (2·200 + 1·200) / 400.
        let rs = vec![
            record(2, 0, 100, 100, 100),
            record(4, 0, 0, 50, 50),
            record(1, 50, 60, 10, 10),
        ];
        let s = summarize_classes(&rs, &rs, &c, (0, 200));
        assert_eq!(s[1].jobs, 2);
        assert_eq!(s[1].wait_mean, Some(50.0));
        assert_eq!(s[1].expansion_factor_weighted, Some(1.5));
        // Queue depth: the 2-node job waits 100 of 200 s.
        assert_eq!(s[1].queue_mean, Some(0.5));
        assert_eq!(s[0].wait_mean, Some(10.0));
        assert_eq!(s[0].queue_mean, Some(10.0 / 200.0));
        assert_eq!(
            (s[2].jobs, s[2].wait_mean, s[2].expansion_factor_weighted),
            (0, None, None)
        );
    }
}
