//! The report's reservation views (Margo et al., section 6), shown when an experiment has
//! reservation scenarios: a table per scenario (replicas averaged), expansion factor and wait by
//! scenario and job-size class, the effect of the reservation rate per throttle cap, utilization
//! (reserved capacity counted as used) and queue depth over time, and a paragraph per month and
//! scheduler comparing the direction of the effects with the paper's findings.

use super::charts;
use super::data::{ReportData, SectionView, SummaryRow, fmt_scaled, mean_over};

/// A value read off a time-series bin (start, utilization, queue, reserved).
type BinValue = dyn Fn(&(f64, f64, f64, f64)) -> f64;
/// A named polyline.
type Line = (String, Vec<(f64, f64)>);

/// The paper's throttle: 256 nodes × 12 hours per sliding 7 days.
pub const PAPER_CAP_NODE_HOURS: f64 = 256.0 * 12.0;

/// The capped scenario whose cap is nearest the paper's.
fn nearest_paper_cap<'a, 'r>(scenarios: &[&'a Group<'r>]) -> Option<&'a Group<'r>> {
    let distance = |g: &Group<'_>| (g.cap.unwrap_or(0.0) - PAPER_CAP_NODE_HOURS).abs();
    scenarios
        .iter()
        .copied()
        .filter(|g| g.cap.is_some())
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

/// One scenario of one workload and scheduler, over its replicas.
struct Group<'a> {
    workload: String,
    scheduler: String,
    baseline: bool,
    rate: Option<f64>,
    cap: Option<f64>,
    rows: Vec<&'a SummaryRow>,
}

impl Group<'_> {
    fn label(&self) -> String {
        if self.baseline {
            return "baseline".into();
        }
        let rate = self.rate.map_or(String::new(), |r| format!("{r}/wk, "));
        let cap = self
            .cap
            .map_or("no cap".to_string(), |c| format!("cap {c} node-h"));
        format!("{rate}{cap}")
    }

    fn mean(&self, column: &str) -> Option<f64> {
        mean_over(&self.rows, column)
    }
}

fn groups(data: &ReportData) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for row in &data.rows {
        let text = |k: &str| row.text.get(k).cloned().unwrap_or_default();
        let num = |k: &str| row.numbers.get(k).copied().flatten();
        let (workload, scheduler) = (text("workload"), text("scheduler"));
        let baseline = text("reservations") == "none";
        let (rate, cap) = if baseline {
            (None, None)
        } else {
            (num("reservation_rate"), num("throttle_node_hours"))
        };
        match out.iter_mut().find(|g| {
            g.workload == workload
                && g.scheduler == scheduler
                && g.baseline == baseline
                && g.rate == rate
                && g.cap == cap
        }) {
            Some(g) => g.rows.push(row),
            None => out.push(Group {
                workload,
                scheduler,
                baseline,
                rate,
                cap,
                rows: vec![row],
            }),
        }
    }
    out
}

/// The view, or `None` when no cell has reservations.
pub fn view(data: &ReportData, classes: &[String]) -> Option<SectionView> {
    if !data
        .rows
        .iter()
        .any(|r| r.text.get("reservations").is_some_and(|s| s != "none"))
    {
        return None;
    }
    let groups = groups(data);
    let mut headers: Vec<String> = [
        "workload",
        "scheduler",
        "scenario",
        "replicas",
        "EF (Eq. 2)",
        "mean wait (h)",
        "utilization",
        "with reserved",
        "granted",
        "shifted",
        "rejected",
    ]
    .map(String::from)
    .to_vec();
    for c in classes {
        headers.push(format!("EF {c}"));
        headers.push(format!("wait {c} (h)"));
    }
    let rows = groups
        .iter()
        .map(|g| {
            let mut row = vec![
                g.workload.clone(),
                g.scheduler.clone(),
                g.label(),
                g.rows.len().to_string(),
                fmt_scaled(g.mean("expansion_factor_weighted"), 1.0, 2),
                fmt_scaled(g.mean("wait_mean"), 1.0 / 3600.0, 1),
                fmt_scaled(g.mean("utilization"), 1.0, 3),
                fmt_scaled(g.mean("utilization_with_reserved"), 1.0, 3),
                fmt_scaled(g.mean("reservations_granted"), 1.0, 1),
                fmt_scaled(g.mean("reservations_shifted"), 1.0, 1),
                fmt_scaled(g.mean("reservations_rejected"), 1.0, 1),
            ];
            for c in classes {
                row.push(fmt_scaled(
                    g.mean(&format!("{c}_expansion_factor_weighted")),
                    1.0,
                    2,
                ));
                row.push(fmt_scaled(
                    g.mean(&format!("{c}_wait_mean")),
                    1.0 / 3600.0,
                    1,
                ));
            }
            row
        })
        .collect();

    let mut charts = Vec::new();
    let mut findings = Vec::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for g in &groups {
        let pair = (g.workload.clone(), g.scheduler.clone());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    for (workload, scheduler) in &pairs {
        let mine: Vec<&Group<'_>> = groups
            .iter()
            .filter(|g| &g.workload == workload && &g.scheduler == scheduler)
            .collect();
        let Some(baseline) = mine.iter().find(|g| g.baseline) else {
            continue;
        };
        let mut rates: Vec<f64> = mine.iter().filter_map(|g| g.rate).collect();
        rates.sort_by(f64::total_cmp);
        rates.dedup();
        let rate = rates.get(rates.len() / 2).copied();
        let mut shown: Vec<&Group<'_>> = vec![baseline];
        let mut at_rate: Vec<&Group<'_>> = mine
            .iter()
            .filter(|g| !g.baseline && g.rate == rate)
            .copied()
            .collect();
        at_rate.sort_by(|a, b| {
            a.cap
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.cap.unwrap_or(f64::INFINITY))
                .reverse()
        });
        shown.extend(at_rate.iter().copied());
        let tag = format!("{workload}-{scheduler}");
        let mut categories = vec!["all jobs".to_string()];
        categories.extend(classes.iter().cloned());
        // `metric` over all jobs, then `<class>_<metric>` per class.
        let bars = |metric: &str, scale: f64| -> Vec<(String, Vec<Option<f64>>)> {
            shown
                .iter()
                .map(|g| {
                    let mut values = vec![g.mean(metric).map(|v| v * scale)];
                    values.extend(
                        classes
                            .iter()
                            .map(|c| g.mean(&format!("{c}_{metric}")).map(|v| v * scale)),
                    );
                    (g.label(), values)
                })
                .collect()
        };
        let rate_text = rate.map_or(String::new(), |r| format!(", {r} reservations a week"));
        charts.push((
            format!("ef-by-size-{tag}"),
            format!(
                "Expansion factor by scenario and job size, {workload}, {scheduler}{rate_text}"
            ),
            charts::grouped_bars(
                &format!("Expansion factor (Eq. 2) — {workload}, {scheduler}"),
                "node-seconds-weighted EF",
                &categories,
                &bars("expansion_factor_weighted", 1.0),
            ),
        ));
        charts.push((
            format!("wait-by-size-{tag}"),
            format!("Mean wait by scenario and job size, {workload}, {scheduler}{rate_text}"),
            charts::grouped_bars(
                &format!("Mean wait — {workload}, {scheduler}"),
                "hours",
                &categories,
                &bars("wait_mean", 1.0 / 3600.0),
            ),
        ));
        // The reservation rate's effect, one line per cap, the baseline flat.
        if rates.len() > 1 {
            let mut caps: Vec<Option<f64>> =
                mine.iter().filter(|g| !g.baseline).map(|g| g.cap).collect();
            caps.sort_by(|a, b| {
                a.unwrap_or(f64::INFINITY)
                    .total_cmp(&b.unwrap_or(f64::INFINITY))
                    .reverse()
            });
            caps.dedup();
            let mut lines: Vec<(String, Vec<(f64, f64)>)> = caps
                .iter()
                .map(|cap| {
                    let pts = rates
                        .iter()
                        .filter_map(|r| {
                            let g = mine
                                .iter()
                                .find(|g| !g.baseline && g.cap == *cap && g.rate == Some(*r))?;
                            Some((*r, g.mean("expansion_factor_weighted")?))
                        })
                        .collect();
                    let name = cap.map_or("no cap".to_string(), |c| format!("cap {c} node-h"));
                    (name, pts)
                })
                .collect();
            if let Some(ef) = baseline.mean("expansion_factor_weighted") {
                lines.push((
                    "baseline".into(),
                    vec![(rates[0], ef), (rates[rates.len() - 1], ef)],
                ));
            }
            charts.push((
                format!("ef-by-rate-{tag}"),
                format!("Expansion factor against the reservation rate, {workload}, {scheduler}"),
                charts::lines(
                    &format!("EF against reservations per week — {workload}, {scheduler}"),
                    "reservations per week",
                    "node-seconds-weighted EF",
                    &lines,
                    None,
                ),
            ));
        }
        // Over time, three lines stay readable: the baseline, no cap, and the cap nearest the
        // paper's.
        let nearest_paper = nearest_paper_cap(&at_rate);
        let over_time: Vec<&Group<'_>> = std::iter::once(*baseline)
            .chain(at_rate.iter().find(|g| g.cap.is_none()).copied())
            .chain(nearest_paper)
            .collect();
        let series = |f: &BinValue| -> Vec<Line> {
            over_time
                .iter()
                .map(|g| {
                    let bins = data
                        .series
                        .get(&g.rows[0].cell)
                        .map(|s| s.bins_with_reserved())
                        .unwrap_or_default();
                    let pts: Vec<(f64, f64)> =
                        bins.iter().map(|b| (b.0 / 86_400.0, f(b))).collect();
                    (g.label(), charts::thin(pts, 300))
                })
                .collect()
        };
        charts.push((
            format!("utilization-reserved-{tag}"),
            format!("Utilization over time with reserved capacity counted as used (first replica), {workload}, {scheduler}"),
            charts::lines(
                &format!("Utilization incl. reserved — {workload}, {scheduler}"),
                "time (days of trace time)",
                "fraction of capacity",
                &series(&|b| b.1 + b.3),
                Some((0.0, 1.0)),
            ),
        ));
        charts.push((
            format!("queue-depth-{tag}"),
            format!("Queue depth over time (first replica), {workload}, {scheduler}"),
            charts::lines(
                &format!("Queue depth — {workload}, {scheduler}"),
                "time (days of trace time)",
                "waiting jobs (mean per bin)",
                &series(&|b| b.2),
                None,
            ),
        ));
        findings.push((
            format!("{workload}, {scheduler}"),
            finding(baseline, &at_rate, classes),
        ));
    }
    Some(SectionView {
        headers,
        rows,
        charts,
        findings,
    })
}

fn direction(before: f64, after: f64) -> &'static str {
    if after > before * 1.02 {
        "raised"
    } else if after < before / 1.02 {
        "lowered"
    } else {
        "left about unchanged"
    }
}

/// A paragraph comparing the baseline, reservations without a throttle, and the throttle
/// nearest the paper's, with the paper's figures (Margo et al., section 6).
fn finding(baseline: &Group<'_>, at_rate: &[&Group<'_>], classes: &[String]) -> String {
    let ef = |g: &Group<'_>| g.mean("expansion_factor_weighted").unwrap_or(f64::NAN);
    let wait = |g: &Group<'_>| g.mean("wait_mean").unwrap_or(f64::NAN) / 3600.0;
    let mut text = String::new();
    let unthrottled = at_rate.iter().find(|g| g.cap.is_none());
    let Some(open) = unthrottled else {
        text.push_str("No unthrottled reservation scenario to compare with the baseline.");
        return text;
    };
    let rate = open
        .rate
        .map_or("The".to_string(), |r| format!("{r} reservations a week"));
    text.push_str(&format!(
        "Without a throttle, {rate} {} the node-seconds-weighted expansion factor from {:.2} to {:.2} and {} the mean wait from {:.1} h to {:.1} h; the paper saw both rise sharply (EF 2.05 → 7.35 and wait 6.03 → 74.0 h in March 2006, 2.53 → 9.35 and 13.7 → 107 h in March 2007){}. ",
        direction(ef(baseline), ef(open)),
        ef(baseline),
        ef(open),
        direction(wait(baseline), wait(open)),
        wait(baseline),
        wait(open),
        if ef(open) > ef(baseline) && wait(open) > wait(baseline) {
            ": the same direction"
        } else {
            ": not the direction found here"
        }
    ));
    let throttled = nearest_paper_cap(at_rate);
    if let Some(t) = throttled {
        let (e, w) = (ef(t), wait(t));
        let against = if e <= ef(baseline) {
            "below the baseline, as in the paper's March 2006 run (1.70 and 4.44 h, better than its baseline)"
        } else if e < ef(open) {
            "between the baseline and the unthrottled case, as in the paper's March 2007 run (5.21 and 44.0 h: improved, but still worse than its baseline)"
        } else {
            "no better than without a throttle, unlike either of the paper's runs"
        };
        text.push_str(&format!(
            "The throttle of {} node-hours per window brought them to {e:.2} and {w:.1} h: {against}. ",
            t.cap.unwrap_or(0.0)
        ));
    }
    let ratios: Vec<(String, f64)> = classes
        .iter()
        .filter_map(|c| {
            let col = format!("{c}_expansion_factor_weighted");
            Some((c.clone(), open.mean(&col)? / baseline.mean(&col)?))
        })
        .collect();
    if let Some((worst, r)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        let list = ratios
            .iter()
            .map(|(c, r)| format!("{c} ×{r:.1}"))
            .collect::<Vec<_>>()
            .join(", ");
        text.push_str(&format!(
            "By job size, unthrottled reservations multiplied the expansion factor by {list}: {worst} jobs suffered most (×{r:.1}); the paper found medium jobs suffered most in 2006 and medium and large jobs in 2007. "
        ));
    }
    if let (Some(u0), Some(u1), Some(ur)) = (
        baseline.mean("utilization"),
        open.mean("utilization"),
        open.mean("utilization_with_reserved"),
    ) {
        text.push_str(&format!(
            "Utilization by jobs went from {u0:.3} to {u1:.3}, or {ur:.3} counting reserved capacity as used (the paper: with reservations counted as used, utilization \"remains high\")."
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(
        cell: &str,
        scenario: &str,
        rate: Option<f64>,
        cap: Option<f64>,
        ef: f64,
        wait_h: f64,
    ) -> SummaryRow {
        let mut text = BTreeMap::new();
        text.insert("workload".to_string(), "month".to_string());
        text.insert("scheduler".to_string(), "easy".to_string());
        text.insert("reservations".to_string(), scenario.to_string());
        let mut numbers = BTreeMap::new();
        numbers.insert("reservation_rate".to_string(), rate);
        numbers.insert("throttle_node_hours".to_string(), cap);
        numbers.insert("expansion_factor_weighted".to_string(), Some(ef));
        numbers.insert("wait_mean".to_string(), Some(wait_h * 3600.0));
        numbers.insert(
            "medium_expansion_factor_weighted".to_string(),
            Some(ef * 2.0),
        );
        SummaryRow {
            cell: cell.to_string(),
            text,
            numbers,
        }
    }

    #[test]
    fn replicas_are_averaged_and_effects_compared_with_the_paper() {
        let data = ReportData {
            rows: vec![
                row("b", "none", None, None, 2.0, 1.0),
                row("r0", "tg", Some(15.0), None, 7.0, 10.0),
                row("r1", "tg", Some(15.0), None, 9.0, 14.0),
                row("t0", "tg", Some(15.0), Some(3072.0), 3.0, 2.0),
            ],
            ..ReportData::default()
        };
        let view = view(&data, &["medium".to_string()]).unwrap();
        assert_eq!(view.rows.len(), 3);
        let unthrottled = &view.rows[1];
        assert_eq!(unthrottled[2], "15/wk, no cap");
        assert_eq!(unthrottled[3], "2"); // two replicas
        assert_eq!(unthrottled[4], "8.00"); // mean EF
        assert_eq!(unthrottled[5], "12.0"); // mean wait, hours
        let (title, text) = &view.findings[0];
        assert_eq!(title, "month, easy");
        assert!(
            text.contains("raised the node-seconds-weighted expansion factor from 2.00 to 8.00"),
            "{text}"
        );
        assert!(text.contains("the same direction"), "{text}");
        assert!(
            text.contains(
                "brought them to 3.00 and 2.0 h: between the baseline and the unthrottled case"
            ),
            "{text}"
        );
        assert!(text.contains("medium ×4.0"), "{text}");
    }

    #[test]
    fn no_view_without_reservation_scenarios() {
        let data = ReportData {
            rows: vec![row("b", "none", None, None, 2.0, 1.0)],
            ..ReportData::default()
        };
        assert!(view(&data, &[]).is_none());
    }
}
