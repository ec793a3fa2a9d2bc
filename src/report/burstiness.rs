//! The report's burstiness view, shown when an experiment has synthetic workloads (issue 5):
//! one row per workload, scheduler and arrival setting (P_Login, μ) with replicas averaged, and
//! charts of mean wait and mean bounded slowdown against the measured interarrival CV, a line
//! per scheduler — how burstier arrivals at the same offered load change what users see.

use super::charts;
use super::data::{ReportData, SectionView, SummaryRow, fmt_scaled, mean_over};

struct Group<'a> {
    workload: String,
    scheduler: String,
    p_login: Option<f64>,
    mu: Option<f64>,
    rows: Vec<&'a SummaryRow>,
}

impl Group<'_> {
    fn mean(&self, column: &str) -> Option<f64> {
        mean_over(&self.rows, column)
    }
}

/// Spearman's rank correlation of paired values (ties get their average rank).
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    if n < 3 {
        return None;
    }
    let ranks = |values: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut r = vec![0.0; n];
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for k in i..=j {
                r[order[k]] = (i + j) as f64 / 2.0 + 1.0;
            }
            i = j + 1;
        }
        r
    };
    let (x, y) = (
        ranks(pairs.iter().map(|p| p.0).collect()),
        ranks(pairs.iter().map(|p| p.1).collect()),
    );
    let mean = (n as f64 + 1.0) / 2.0;
    let cov: f64 = x.iter().zip(&y).map(|(a, b)| (a - mean) * (b - mean)).sum();
    let var = |v: &[f64]| v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>();
    let d = (var(&x) * var(&y)).sqrt();
    (d > 0.0).then(|| cov / d)
}

/// The view, or `None` when no cell has a synthetic workload.
pub fn view(data: &ReportData) -> Option<SectionView> {
    let synthetic = |r: &SummaryRow| {
        r.numbers
            .get("model_interarrival_cv")
            .copied()
            .flatten()
            .is_some()
    };
    if !data.rows.iter().any(synthetic) {
        return None;
    }
    let mut groups: Vec<Group<'_>> = Vec::new();
    for row in data.rows.iter().filter(|r| synthetic(r)) {
        let text = |k: &str| row.text.get(k).cloned().unwrap_or_default();
        let num = |k: &str| row.numbers.get(k).copied().flatten();
        let key = (
            text("workload"),
            text("scheduler"),
            num("p_login"),
            num("mu"),
        );
        match groups
            .iter_mut()
            .find(|g| (g.workload.clone(), g.scheduler.clone(), g.p_login, g.mu) == key)
        {
            Some(g) => g.rows.push(row),
            None => groups.push(Group {
                workload: key.0,
                scheduler: key.1,
                p_login: key.2,
                mu: key.3,
                rows: vec![row],
            }),
        }
    }
    let headers = [
        "workload",
        "scheduler",
        "P_login",
        "μ (1/s)",
        "replicas",
        "model CV",
        "measured CV",
        "jobs",
        "utilization",
        "mean wait (h)",
        "mean bsld",
    ]
    .map(String::from)
    .to_vec();
    let rows = groups
        .iter()
        .map(|g| {
            vec![
                g.workload.clone(),
                g.scheduler.clone(),
                fmt_scaled(g.p_login, 1.0, 3),
                g.mu.map_or("–".into(), |m| format!("{m:.3e}")),
                g.rows.len().to_string(),
                fmt_scaled(g.mean("model_interarrival_cv"), 1.0, 2),
                fmt_scaled(g.mean("interarrival_cv"), 1.0, 2),
                fmt_scaled(g.mean("jobs"), 1.0, 0),
                fmt_scaled(g.mean("utilization"), 1.0, 3),
                fmt_scaled(g.mean("wait_mean"), 1.0 / 3600.0, 2),
                fmt_scaled(g.mean("bounded_slowdown_mean"), 1.0, 1),
            ]
        })
        .collect();
    let mut workloads: Vec<String> = Vec::new();
    let mut schedulers: Vec<String> = Vec::new();
    for g in &groups {
        if !workloads.contains(&g.workload) {
            workloads.push(g.workload.clone());
        }
        if !schedulers.contains(&g.scheduler) {
            schedulers.push(g.scheduler.clone());
        }
    }
    let mut out_charts = Vec::new();
    let mut findings = Vec::new();
    for w in &workloads {
        let points = |metric: &str, scale: f64, s: &str| -> Vec<(f64, f64)> {
            let mut p: Vec<(f64, f64)> = groups
                .iter()
                .filter(|g| &g.workload == w && g.scheduler == s)
                .filter_map(|g| Some((g.mean("interarrival_cv")?, g.mean(metric)? * scale)))
                .collect();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            p
        };
        for (metric, title, unit, scale, id) in [
            (
                "wait_mean",
                "Mean wait",
                "hours",
                1.0 / 3600.0,
                "wait-vs-cv",
            ),
            (
                "bounded_slowdown_mean",
                "Mean bounded slowdown",
                "bounded slowdown",
                1.0,
                "bsld-vs-cv",
            ),
        ] {
            let lines: Vec<(String, Vec<(f64, f64)>)> = schedulers
                .iter()
                .map(|s| (s.clone(), points(metric, scale, s)))
                .collect();
            out_charts.push((
                format!("{id}-{w}"),
                format!("{title} against the measured interarrival CV (replicas averaged), {w}"),
                charts::lines(
                    &format!("{title} against interarrival CV — {w}"),
                    "interarrival CV of the workload",
                    unit,
                    &lines,
                    None,
                ),
            ));
        }
        let mut sentence = Vec::new();
        for s in &schedulers {
            let p = points("wait_mean", 1.0 / 3600.0, s);
            let (Some(first), Some(last)) = (p.first(), p.last()) else {
                continue;
            };
            let rho = spearman(&p).map_or("–".to_string(), |r| format!("{r:.2}"));
            sentence.push(format!(
                "under {s} the mean wait went from {:.2} h at the least bursty setting (CV {:.2}) to {:.2} h at the burstiest (CV {:.2}), rank correlation with the CV {rho}",
                first.1, first.0, last.1, last.0
            ));
        }
        if !sentence.is_empty() {
            findings.push((
                w.clone(),
                format!(
                    "At the same expected offered load, {}.",
                    sentence.join("; ")
                ),
            ));
        }
    }
    Some(SectionView {
        headers,
        rows,
        charts: out_charts,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        assert_eq!(
            spearman(&[(1.0, 10.0), (2.0, 20.0), (3.0, 25.0)]),
            Some(1.0)
        );
        assert_eq!(spearman(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]), Some(-1.0));
        // Ranks x = 1,2,3,4; y = 2,1,4,3: d² sum 4, ρ = 1 − 6·4/(4·15) = 0.6.
        let r = spearman(&[(1.0, 2.0), (2.0, 1.0), (3.0, 4.0), (4.0, 3.0)]).unwrap();
        assert!((r - 0.6).abs() < 1e-12);
        assert_eq!(spearman(&[(1.0, 1.0), (2.0, 2.0)]), None);
    }
}
