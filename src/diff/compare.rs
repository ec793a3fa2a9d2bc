//! The comparison itself (pure): cells matched by their stable id, per metric the values of A
//! and B, absolute and relative change; with replicates (cells that differ only by `.seed-N`),
//! the mean and 95% confidence interval of each side and Welch's t-test, so a change within the
//! noise is not reported as one.

use std::collections::BTreeMap;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::load::ResultSet;

/// The metrics compared, in the order they are shown (columns of summary.parquet).
pub const METRICS: [&str; 18] = [
    "wait_mean",
    "wait_median",
    "wait_p95",
    "response_mean",
    "response_median",
    "response_p95",
    "slowdown_mean",
    "bounded_slowdown_mean",
    "bounded_slowdown_median",
    "bounded_slowdown_p95",
    "expansion_factor_mean",
    "expansion_factor_weighted",
    "backfilled_fraction",
    "utilization",
    "queue_length_time_weighted",
    "queue_length_sampled",
    "makespan",
    "killed",
];

/// One side of a comparison: a value, or the mean of replicates with its 95% CI half-width.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean (replicates only).
    pub ci95: Option<f64>,
    pub n: usize,
    #[serde(skip)]
    values: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricDelta {
    pub metric: String,
    pub a: Option<Side>,
    pub b: Option<Side>,
    /// b − a.
    pub abs: Option<f64>,
    /// (b − a) / |a|; `None` when a is 0 or missing.
    pub rel: Option<f64>,
    /// Welch's t-test p-value (replicates on both sides only).
    pub p_value: Option<f64>,
    /// The change is real: any change without replicates, p < 0.05 with them.
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellDiff {
    pub experiment: String,
    /// The cell id (without `.seed-N` when replicates are pooled).
    pub cell: String,
    pub metrics: Vec<MetricDelta>,
}

impl CellDiff {
    pub fn changed(&self) -> bool {
        self.metrics.iter().any(|m| m.changed)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    pub a: String,
    pub b: String,
    /// Cells present on both sides, in experiment and id order.
    pub cells: Vec<CellDiff>,
    /// `experiment/cell` present only in A, or only in B.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

/// The replicate group of a cell id: the id without a trailing `.seed-N`.
fn group_of(cell: &str) -> &str {
    match cell.rsplit_once(".seed-") {
        Some((base, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => base,
        _ => cell,
    }
}

type Groups = BTreeMap<(String, String), Vec<BTreeMap<String, Option<f64>>>>;

fn groups(set: &ResultSet) -> Groups {
    let mut out: Groups = BTreeMap::new();
    for (experiment, cells) in &set.experiments {
        for (cell, metrics) in cells {
            out.entry((experiment.clone(), group_of(cell).to_string()))
                .or_default()
                .push(metrics.clone());
        }
    }
    out
}

fn side(rows: &[BTreeMap<String, Option<f64>>], metric: &str) -> Option<Side> {
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.get(metric).copied().flatten())
        .collect();
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let ci95 = (n > 1).then(|| {
        let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).map_or(1.96, |d| d.inverse_cdf(0.975));
        t * sd / (n as f64).sqrt()
    });
    Some(Side {
        mean,
        ci95,
        n,
        values,
    })
}

/// Welch's two-sided t-test of equal means.
fn welch(a: &Side, b: &Side) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let var =
        |s: &Side| s.values.iter().map(|v| (v - s.mean).powi(2)).sum::<f64>() / (s.n - 1) as f64;
    let (va, vb) = (var(a) / a.n as f64, var(b) / b.n as f64);
    if va + vb == 0.0 {
        return Some(if a.mean == b.mean { 1.0 } else { 0.0 });
    }
    let t = (b.mean - a.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

pub fn compare(a: &ResultSet, b: &ResultSet) -> Diff {
    let (ga, gb) = (groups(a), groups(b));
    let mut diff = Diff {
        a: a.label.clone(),
        b: b.label.clone(),
        cells: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
    };
    for ((experiment, cell), rows_a) in &ga {
        let Some(rows_b) = gb.get(&(experiment.clone(), cell.clone())) else {
            diff.only_a.push(format!("{experiment}/{cell}"));
            continue;
        };
        let metrics = METRICS
            .iter()
            .map(|&metric| {
                let (sa, sb) = (side(rows_a, metric), side(rows_b, metric));
                let abs = sa.as_ref().zip(sb.as_ref()).map(|(x, y)| y.mean - x.mean);
                let rel = sa
                    .as_ref()
                    .zip(abs)
                    .filter(|(x, _)| x.mean != 0.0)
                    .map(|(x, d)| d / x.mean.abs());
                let p_value = sa.as_ref().zip(sb.as_ref()).and_then(|(x, y)| welch(x, y));
                let changed = match (p_value, abs) {
                    (Some(p), _) => p < 0.05,
                    (None, Some(d)) => d != 0.0,
                    (None, None) => sa.is_some() != sb.is_some(),
                };
                MetricDelta {
                    metric: metric.to_string(),
                    a: sa,
                    b: sb,
                    abs,
                    rel,
                    p_value,
                    changed,
                }
            })
            .collect();
        diff.cells.push(CellDiff {
            experiment: experiment.clone(),
            cell: cell.clone(),
            metrics,
        });
    }
    diff.only_b = gb
        .keys()
        .filter(|k| !ga.contains_key(*k))
        .map(|(e, c)| format!("{e}/{c}"))
        .collect();
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(label: &str, cells: &[(&str, f64)]) -> ResultSet {
        let mut s = ResultSet {
            label: label.into(),
            ..Default::default()
        };
        let e = s.experiments.entry("exp".into()).or_default();
        for (cell, wait) in cells {
            e.insert(
                cell.to_string(),
                BTreeMap::from([("wait_mean".to_string(), Some(*wait))]),
            );
        }
        s
    }

    fn wait(d: &Diff, cell: &str) -> MetricDelta {
        let c = d.cells.iter().find(|c| c.cell == cell).unwrap();
        c.metrics
            .iter()
            .find(|m| m.metric == "wait_mean")
            .unwrap()
            .clone()
    }

    #[test]
    fn single_cells_report_absolute_and_relative_change() {
        let d = compare(
            &set("A", &[("x", 100.0), ("gone", 1.0)]),
            &set("B", &[("x", 110.0), ("new", 1.0)]),
        );
        let m = wait(&d, "x");
        assert_eq!((m.abs, m.rel, m.changed), (Some(10.0), Some(0.1), true));
        assert_eq!(d.only_a, vec!["exp/gone"]);
        assert_eq!(d.only_b, vec!["exp/new"]);
    }

    #[test]
    fn replicates_separate_noise_from_change() {
        let noisy_a = [("x.seed-1", 100.0), ("x.seed-2", 104.0), ("x.seed-3", 96.0)];
        let noisy_b = [("x.seed-1", 101.0), ("x.seed-2", 97.0), ("x.seed-3", 105.0)];
        let m = wait(&compare(&set("A", &noisy_a), &set("B", &noisy_b)), "x");
        assert_eq!(m.a.as_ref().unwrap().n, 3);
        assert!(m.p_value.unwrap() > 0.5 && !m.changed, "{m:?}");
        // A shift of ten standard deviations is beyond noise.
        let shifted = [
            ("x.seed-1", 140.0),
            ("x.seed-2", 144.0),
            ("x.seed-3", 136.0),
        ];
        let m = wait(&compare(&set("A", &noisy_a), &set("B", &shifted)), "x");
        assert!(m.p_value.unwrap() < 0.001 && m.changed, "{m:?}");
        // Mean 100, sd 4, n 3: half-width t(0.975, 2) · 4/√3 = 4.303 · 2.309 = 9.94.
        let ci = m.a.unwrap().ci95.unwrap();
        assert!((ci - 9.936).abs() < 0.01, "{ci}");
    }
}
