//! The readable summary of `trace eet` on stdout: setting, totals, the spread of VEET_u and
//! WT_u across users, the paper's 35 % yardstick, and the users with most tardiness.

use super::Report;
use crate::sim::metrics::eet::Spread;

fn hours(seconds: f64) -> String {
    format!("{:.1}", seconds / 3600.0)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("–".into(), f)
}

fn spread_row(name: &str, s: &Spread, f: impl Fn(f64) -> String + Copy) -> String {
    format!(
        "{name:<24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        opt(s.min, f),
        opt(s.q1, f),
        opt(s.median, f),
        opt(s.q3, f),
        opt(s.max, f),
        opt(s.mean, f)
    )
}

pub fn table(r: &Report, top: usize) -> String {
    let s = &r.summary;
    let mut out = String::new();
    out.push_str(&format!("trace          {}\n", r.trace));
    out.push_str(&format!(
        "jobs           {} of {} users; {} judged ({} without a recorded wait); {} job lines left out by the reader\n",
        r.jobs, s.users, s.judged_jobs, r.without_wait, r.trace_jobs_skipped
    ));
    let memory = r
        .system_memory_kb
        .map_or("memory not measured".to_string(), |kb| {
            format!("{kb} KB memory (field 10 as {})", r.memory_unit)
        });
    out.push_str(&format!(
        "system         {} CPUs, {memory}\n",
        r.system_cpus
    ));
    out.push_str(&format!("capacity       {}\n", r.capacity));
    out.push_str(&format!(
        "violated EETs  {} of {} judged jobs ({})\n",
        s.violated_jobs,
        s.judged_jobs,
        opt(s.violated_fraction, |f| format!("{:.1} %", f * 100.0))
    ));
    out.push_str(&format!(
        "VEET_u ≤ 35 %  {} of {} users ({}); the paper's section 4 reads 75 % of users at ≤ 35 % as fair\n",
        s.users_veet_at_most_35
            .map_or("–".into(), |f| format!("{:.0}", f * s.judged_users as f64)),
        s.judged_users,
        opt(s.users_veet_at_most_35, |f| format!("{:.1} %", f * 100.0))
    ));
    out.push_str(&format!(
        "\n{:<24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "across users", "min", "q1", "median", "q3", "max", "mean"
    ));
    out.push_str(&spread_row("VEET_u (%)", &s.veet, |v| format!("{v:.1}")));
    out.push_str(&spread_row("WT_u (CPU·h)", &s.weighted_tardiness, hours));
    out.push_str(&spread_row("Σ T_j per user (h)", &s.tardiness, hours));
    out.push_str(&format!(
        "\nusers by total tardiness (top {} of {}):\n{:>8} {:>6} {:>7} {:>8} {:>8} {:>11} {:>13} {:>11} {:>10}\n",
        top.min(r.users.len()),
        r.users.len(),
        "user",
        "group",
        "jobs",
        "violated",
        "VEET %",
        "Σ T_j (h)",
        "WT_u (CPU·h)",
        "max T_j (h)",
        "CPU share"
    ));
    for line in r.users.iter().take(top) {
        let u = &line.user;
        out.push_str(&format!(
            "{:>8} {:>6} {:>7} {:>8} {:>8} {:>11} {:>13} {:>11} {:>10}\n",
            u.user,
            u.group,
            u.jobs,
            u.violated,
            opt(u.veet, |v| format!("{v:.1}")),
            hours(u.tardiness as f64),
            hours(u.weighted_tardiness as f64),
            hours(u.max_tardiness as f64),
            opt(line.capacity_cpu, |c| format!("{c:.2}"))
        ));
    }
    out.push_str(&format!("\nheatmap bins   {} s\n", r.bin_seconds));
    out
}
