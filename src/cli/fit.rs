//! `schedlab fit`: fit the Login/Logout model to the most active users of a trace, print the
//! fitted parameters next to the observed statistics, and write a manifest that generates a
//! synthetic workload reproducing those users (docs/synthetic.md, "Fitting a trace").

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{CliError, Format, load_trace};
use crate::analysis::{EmpiricalR0, Moments, fit_login_model};
use crate::cache::write_atomic;
use crate::sim::Job;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab fit workloads/KTH-SP2-1996-2.1-cln.swf.gz --top-users 3
  schedlab fit trace.swf.gz --top-users 5 --format json -o fitted.yaml

Exit codes: 0 fitted; 1 the manifest could not be written; 2 bad input (trace, arguments).")]
pub struct Args {
    /// SWF trace, plain or gzip-compressed.
    pub trace: PathBuf,
    /// Fit the N users with most jobs.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top_users: usize,
    /// Write a manifest generating these users to this file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Skip malformed lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// Output format of the fitted parameters: an aligned table or JSON.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

/// One fitted user.
#[derive(Debug, serde::Serialize)]
pub struct FittedUser {
    pub user: i32,
    pub jobs: u64,
    /// Jobs per second over the user's span.
    pub rate: f64,
    pub lambda: f64,
    pub delta: f64,
    pub mu: f64,
    pub p_login: f64,
    pub jobs_per_login: f64,
    pub model_cv: f64,
    pub observed_cv: Option<f64>,
    /// max |R0_model − R̂0| over the fitted curve.
    pub error: f64,
    /// R0 at 1 h and 1 day: model, observed.
    pub r0_hour: (f64, Option<f64>),
    pub r0_day: (f64, Option<f64>),
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.top_users == 0 {
        return Err(CliError::input("--top-users must be at least 1"));
    }
    super::output::check_folders(&[("-o", args.output.as_deref())])?;
    let trace = load_trace(&args.trace, args.lenient)?;
    let mut by_user: std::collections::BTreeMap<i32, Vec<&Job>> = Default::default();
    for j in &trace.workload.jobs {
        by_user.entry(j.user).or_default().push(j);
    }
    let mut users: Vec<(i32, Vec<&Job>)> = by_user.into_iter().collect();
    users.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let mut fitted = Vec::new();
    let mut sections = Vec::new();
    for (user, jobs) in users.iter().take(args.top_users) {
        let times: Vec<f64> = jobs.iter().map(|j| j.submit as f64).collect();
        let Some(fit) = fit_login_model(&times) else {
            eprintln!(
                "warning: user {user}: {} jobs over too short a span to fit; left out",
                jobs.len()
            );
            continue;
        };
        let empirical = EmpiricalR0::new(&times).expect("fitted, so at least two arrivals");
        let m = fit.model;
        let observed_cv = Moments::of(times.windows(2).map(|w| w[1] - w[0])).and_then(|s| s.cv);
        fitted.push(FittedUser {
            user: *user,
            jobs: jobs.len() as u64,
            rate: empirical.rate(),
            lambda: m.login_rate,
            delta: m.logout_rate,
            mu: m.submit_rate,
            p_login: m.p_login(),
            jobs_per_login: m.mean_jobs_per_login(),
            model_cv: m.interarrival_cv2().sqrt(),
            observed_cv,
            error: fit.error,
            r0_hour: (m.r0(3600.0), empirical.at(3600.0)),
            r0_day: (m.r0(86_400.0), empirical.at(86_400.0)),
        });
        sections.push(user_yaml(
            *user,
            jobs,
            m.login_rate,
            m.logout_rate,
            m.submit_rate,
        ));
    }
    if fitted.is_empty() {
        return Err(CliError::input(format!(
            "{}: no user has enough arrivals to fit",
            trace.source
        )));
    }
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&fitted).expect("fits serialize")
        ),
        Format::Table => print!("{}", render(&fitted)),
    }
    if let Some(path) = &args.output {
        let stem = args
            .trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem: String = stem
            .split('.')
            .next()
            .unwrap_or("trace")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let first = trace.workload.jobs.first().map_or(0, |j| j.submit);
        let last = trace.workload.jobs.last().map_or(0, |j| j.submit);
        let days = ((last - first) as f64 / 86_400.0).ceil().max(1.0);
        let procs = trace.header.max_procs.unwrap_or(1);
        let mut text = format!(
            "# schedlab fit {} --top-users {} (generated; edit freely)\n\
             # The {} users with most jobs, each fitted to its empirical R0(t) (docs/synthetic.md).\n\
             name: {stem}-synthetic\nworkloads:\n  {stem}-synthetic:\n    synthetic:\n      length: {{days: {days}}}\n      users:\n",
            args.trace.display(),
            args.top_users,
            fitted.len()
        );
        for s in &sections {
            text.push_str(s);
        }
        let _ = write!(
            text,
            "clusters:\n  trace-size: {{procs: {procs}}}\nschedulers:\n  easy: {{policy: easy}}\n"
        );
        write_atomic(path, text.as_bytes()).map_err(CliError::failed)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn render(users: &[FittedUser]) -> String {
    let mut out = format!(
        "{:>6} {:>7} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>8} {:>14} {:>14}\n",
        "user",
        "jobs",
        "rate/s",
        "lambda",
        "delta",
        "mu",
        "P_login",
        "jobs/log",
        "model cv",
        "trace cv",
        "error",
        "R0(1h) m/t",
        "R0(1d) m/t"
    );
    let o = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.3}"));
    for u in users {
        out.push_str(&format!(
            "{:>6} {:>7} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>8.3} {:>9.1} {:>9.2} {:>9} {:>8.4} {:>14} {:>14}\n",
            u.user,
            u.jobs,
            u.rate,
            u.lambda,
            u.delta,
            u.mu,
            u.p_login,
            u.jobs_per_login,
            u.model_cv,
            u.observed_cv.map_or("–".into(), |v| format!("{v:.2}")),
            u.error,
            format!("{:.3}/{}", u.r0_hour.0, o(u.r0_hour.1)),
            format!("{:.3}/{}", u.r0_day.0, o(u.r0_day.1)),
        ));
    }
    out
}

/// The element at quantile `q` of sorted `values`: index round(q·(n − 1)).
fn quantile<T: Copy>(values: &[T], q: f64) -> T {
    values[((q * (values.len() - 1) as f64).round() as usize).min(values.len() - 1)]
}

/// Distinct values with their counts, most frequent first (ties: smaller value first).
fn most_common<T: Ord + Copy>(values: impl Iterator<Item = T>) -> Vec<(T, usize)> {
    let mut counts: std::collections::BTreeMap<T, usize> = Default::default();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut common: Vec<(T, usize)> = counts.into_iter().collect();
    common.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    common
}

/// The manifest entry of one fitted user: arrivals, runtime CDF points at the quantiles 0, .25,
/// .5, .75, .9 and 1 of its runtimes, estimates from its requested/runtime ratios (10th–90th
/// percentile factors, its most common requested times as limits) and its 8 most common sizes.
fn user_yaml(user: i32, jobs: &[&Job], lambda: f64, delta: f64, mu: f64) -> String {
    let mut runtimes: Vec<i64> = jobs.iter().map(|j| j.runtime.max(1)).collect();
    runtimes.sort_unstable();
    let mut points: Vec<(i64, f64)> = Vec::new();
    for q in [0.0, 0.25, 0.5, 0.75, 0.9, 1.0] {
        let t = quantile(&runtimes, q);
        match points.last_mut() {
            Some(last) if t <= last.0 => last.1 = q,
            _ => points.push((t, q)),
        }
    }
    if points.len() == 1 {
        points.push((points[0].0 + 1, 1.0));
    }
    // The first point carries probability 0 and the last 1.
    points[0].1 = 0.0;
    let last = points.len() - 1;
    points[last].1 = 1.0;
    let runtime = points
        .iter()
        .map(|(t, p)| format!("[{t}, {p}]"))
        .collect::<Vec<_>>()
        .join(", ");
    let exact = jobs.iter().all(|j| j.requested_time == j.runtime);
    let estimate = if exact {
        String::new()
    } else {
        let mut ratios: Vec<f64> = jobs
            .iter()
            .map(|j| j.requested_time as f64 / j.runtime.max(1) as f64)
            .collect();
        ratios.sort_by(f64::total_cmp);
        let lo = quantile(&ratios, 0.1).max(1.0);
        let hi = quantile(&ratios, 0.9).max(lo);
        let common = most_common(jobs.iter().map(|j| j.requested_time));
        let mut limits: Vec<i64> = common.iter().take(8).map(|c| c.0).collect();
        limits.sort_unstable();
        let max = jobs.iter().map(|j| j.requested_time).max().unwrap_or(1);
        format!(
            "          estimate: {{factor: [{lo:.2}, {hi:.2}], round_up: [{}], max: {max}}}\n",
            limits
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let sizes = most_common(jobs.iter().map(|j| j.procs));
    let weights = sizes
        .iter()
        .take(8)
        .map(|(p, n)| format!("{p}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "        - name: user-{user}\n          arrivals: {{lambda: {lambda:.4e}, delta: {delta:.4e}, mu: {mu:.4e}}}   # per second\n          runtime: [{runtime}]\n{estimate}          procs: {{weights: {{{weights}}}}}\n"
    )
}
