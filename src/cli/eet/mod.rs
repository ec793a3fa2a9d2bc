//! `schedlab trace eet`: the user-aware metrics of Tóth & Klusáček on a trace's own recorded
//! schedule, post mortem, as the paper did ("by default, we assume that this provided schedule
//! is a historic schedule as found in a workload trace"): each job started at submit + its
//! recorded wait (SWF field 3). The pipeline: read the trace, settle the capacities, build the
//! metric's jobs, evaluate, bin the heatmap, write the files asked for, print the summary.

mod memory;
mod render;
mod spec;

use std::path::PathBuf;

use serde::Serialize;

use super::{CliError, Format};
use crate::report::boxplot::{BoxGroup, Scale, boxplot_svg};
use crate::report::dates::TraceClock;
use crate::report::heatmap::{HeatRow, HeatmapChart, UsageLine, heatmap_svg};
use crate::sim::metrics::eet::{
    CapacityRule, EetJob, EetReport, EetSummary, Heatmap, PerResource, Ratio, Resource, UserEet,
    evaluate, heatmap,
};
use crate::store::{write_eet_heatmap, write_eet_jobs, write_eet_usage, write_eet_users};
use memory::MemoryUnit;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab trace eet workloads/KTH-SP2-1996-2.1-cln.swf.gz
  schedlab trace eet wagap-2013.swf.gz --cpus 2176 --memory 15102255104 \\
      --memory-unit bytes-per-node --unix-start 0 --users-out users.parquet --svg heatmap.svg

Exit codes: 0 done; 1 an output file could not be written; 2 bad input (trace, arguments).")]
pub struct EetArgs {
    /// SWF trace, plain or gzip-compressed; its recorded waits (field 3) give the schedule.
    pub trace: PathBuf,
    /// The system's CPUs, split among the users [default: the trace's MaxProcs].
    #[arg(long, value_name = "N")]
    pub cpus: Option<u64>,
    /// The system's memory (e.g. 14TiB, 504GiB; a bare number is KB): also measure memory.
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// How to read the memory field (SWF field 10).
    #[arg(long, value_name = "UNIT", default_value = "kb-per-proc")]
    pub memory_unit: MemoryUnit,
    /// Split the system in proportion to shares: a user's share (repeatable; others take
    /// their group's, else 1).
    #[arg(long = "user-share", value_name = "USER=W")]
    pub user_shares: Vec<String>,
    /// A group's share, for each of its users without their own (repeatable).
    #[arg(long = "group-share", value_name = "GROUP=W")]
    pub group_shares: Vec<String>,
    /// An explicit expected capacity for a user, e.g. 17:cpu=8,memory=64GiB (repeatable).
    #[arg(long = "user-capacity", value_name = "USER:RES=V,…")]
    pub user_capacities: Vec<String>,
    /// An explicit expected capacity for each user of a group (repeatable).
    #[arg(long = "group-capacity", value_name = "GROUP:RES=V,…")]
    pub group_capacities: Vec<String>,
    /// Multiply the split capacities (not explicit ones) by this factor, e.g. 0.5 or 2.
    #[arg(long, value_name = "F", default_value = "1")]
    pub capacity_scale: String,
    /// Heatmap bin width in seconds, at least 60 [default: chosen for the span].
    #[arg(long, value_name = "SECONDS")]
    pub bin: Option<i64>,
    /// Write per-job EETs, violations and tardiness to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub jobs_out: Option<PathBuf>,
    /// Write per-user VEET_u, WT_u and capacities to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub users_out: Option<PathBuf>,
    /// Write the heatmap's non-empty cells to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub heatmap_out: Option<PathBuf>,
    /// Write the system's CPU and memory usage per heatmap bin to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub usage_out: Option<PathBuf>,
    /// Draw the heatmap (with the usage underneath) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
    /// Draw box plots of VEET_u and WT_u across users to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub boxplot_svg: Option<PathBuf>,
    /// Unix time of trace time 0, for the heatmap's dates [default: the header's UnixStartTime;
    /// without one, 0 when the trace's times are Unix times (a first submission from 1980 on)].
    #[arg(long, value_name = "SECONDS")]
    pub unix_start: Option<i64>,
    /// Users listed in the table, most total tardiness first.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Skip malformed trace lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// Output format of the summary: an aligned table or JSON.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

/// One user as `trace eet` reports it: the metric's figures and the capacities as numbers.
#[derive(Debug, Serialize)]
pub struct UserLine {
    #[serde(flatten)]
    pub user: UserEet,
    pub capacity_cpu: Option<f64>,
    pub capacity_memory_kb: Option<f64>,
}

/// Everything `trace eet` reports (`--format json`; the table shows the same).
#[derive(Debug, Serialize)]
pub struct Report {
    pub trace: String,
    /// Jobs of the trace the metric saw (the reader's workload).
    pub jobs: u64,
    /// Job lines the reader left out (docs/swf.md).
    pub trace_jobs_skipped: u64,
    /// Jobs without a recorded wait: in their users' shares, not judged.
    pub without_wait: u64,
    pub system_cpus: u64,
    pub system_memory_kb: Option<u64>,
    pub memory_unit: &'static str,
    /// How the expected capacities were set.
    pub capacity: String,
    pub bin_seconds: i64,
    pub summary: EetSummary,
    /// All users, most total tardiness first.
    pub users: Vec<UserLine>,
}

pub fn run(args: EetArgs) -> Result<(), CliError> {
    super::output::check_folders(&[
        ("--jobs-out", args.jobs_out.as_deref()),
        ("--users-out", args.users_out.as_deref()),
        ("--heatmap-out", args.heatmap_out.as_deref()),
        ("--usage-out", args.usage_out.as_deref()),
        ("--svg", args.svg.as_deref()),
        ("--boxplot-svg", args.boxplot_svg.as_deref()),
    ])?;
    let options = crate::swf::ReadOptions {
        memory: args.memory_unit.reading(),
        ..crate::swf::ReadOptions::default()
    };
    let trace = super::load_trace_with(&args.trace, args.lenient, &options)?;
    let rule = capacity_rule(&args, trace.header.max_procs, &trace.source)?;
    if let Some(bin) = args.bin.filter(|&b| b < 60) {
        return Err(CliError::input(format!(
            "--bin must be at least 60 seconds (the paper's one-minute resolution), found {bin}"
        )));
    }
    let jobs = eet_jobs(&args, &trace, rule.system[Resource::Memory].is_some());
    let clock = TraceClock::of_trace(
        args.unix_start.or(trace.header.unix_start_time),
        trace.header.time_zone,
        trace.header.time_zone_string.clone(),
        trace.workload.jobs.iter().map(|j| j.submit).min(),
    );
    let trace_jobs_skipped = trace.anomalies.skipped();
    // The metric's jobs hold all it reads: the trace's jobs, requests and recorded waits (about
    // 100 bytes a job) would otherwise stay alive through the evaluation and the Parquet writes,
    // the command's peak (BENCHMARKS.md, "trace eet's peak").
    let source = trace.source.clone();
    drop(trace);
    if !jobs.is_empty() && jobs.iter().all(|j| j.start.is_none()) {
        eprintln!(
            "warning: {source}: no job has a recorded wait (SWF field 3), so no schedule to judge"
        );
    }
    let report = evaluate(&jobs, &rule).map_err(|e| CliError::input(format!("{source}: {e}")))?;
    let map = heatmap(&jobs, &report, args.bin)
        .map_err(|e| CliError::input(format!("--bin: {e}")).with_hint("use a wider --bin"))?;
    write_outputs(&args, &source, clock, &rule, &jobs, &report, &map)?;
    let summary = Report {
        trace: source.clone(),
        jobs: jobs.len() as u64,
        trace_jobs_skipped,
        without_wait: jobs.iter().filter(|j| j.start.is_none()).count() as u64,
        system_cpus: rule.system[Resource::Cpu].unwrap_or(0),
        system_memory_kb: rule.system[Resource::Memory],
        memory_unit: args.memory_unit.name(),
        capacity: describe(&rule, report.users.len()),
        bin_seconds: map.axis.width,
        summary: report.summary.clone(),
        users: map
            .rows
            .iter()
            .map(|row| {
                let u = report
                    .users
                    .iter()
                    .find(|u| u.user == row.user)
                    .expect("every row is a user");
                UserLine {
                    user: u.clone(),
                    capacity_cpu: u.capacity[Resource::Cpu].map(|c| c.to_f64()),
                    capacity_memory_kb: u.capacity[Resource::Memory].map(|c| c.to_f64()),
                }
            })
            .collect(),
    };
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("report serializes")
        ),
        Format::Table => print!("{}", render::table(&summary, args.top)),
    }
    Ok(())
}

/// The capacity rule from the options: system sizes, shares, overrides, scale.
fn capacity_rule(
    args: &EetArgs,
    max_procs: Option<u32>,
    source: &str,
) -> Result<CapacityRule, CliError> {
    let cpus = match (args.cpus, max_procs) {
        (Some(n), _) => n,
        (None, Some(n)) => u64::from(n),
        (None, None) => {
            return Err(
                CliError::input(format!("{source}: the trace has no MaxProcs header")).with_hint(
                    "give the system's size with --cpus N (and --memory SIZE to measure memory)",
                ),
            );
        }
    };
    if cpus == 0 {
        return Err(CliError::input("--cpus must be at least 1"));
    }
    let memory = match &args.memory {
        None => None,
        Some(text) => match spec::whole_kb(text) {
            Ok(0) => return Err(CliError::input("--memory must be above 0")),
            Ok(kb) => Some(kb),
            Err(e) => return Err(CliError::input(format!("--memory: {e}"))),
        },
    };
    let mut rule = CapacityRule::equal_split(PerResource::new(Some(cpus), memory, None));
    rule.user_shares =
        spec::collect("--user-share", &args.user_shares, spec::share).map_err(CliError::input)?;
    rule.group_shares =
        spec::collect("--group-share", &args.group_shares, spec::share).map_err(CliError::input)?;
    rule.users = spec::collect("--user-capacity", &args.user_capacities, spec::capacity)
        .map_err(CliError::input)?;
    rule.groups = spec::collect("--group-capacity", &args.group_capacities, spec::capacity)
        .map_err(CliError::input)?;
    rule.scale = Ratio::parse_decimal(args.capacity_scale.trim())
        .map_err(|e| CliError::input(format!("--capacity-scale: {e}")))?;
    if rule.scale.is_zero() {
        return Err(CliError::input("--capacity-scale must be above 0"));
    }
    let gpu = rule
        .users
        .iter()
        .chain(rule.groups.iter())
        .any(|(_, c)| c[Resource::Gpu].is_some());
    if gpu {
        return Err(CliError::input(
            "gpu capacities need GPU requests, which SWF traces do not record",
        ));
    }
    if memory.is_none()
        && rule
            .users
            .iter()
            .chain(rule.groups.iter())
            .any(|(_, c)| c[Resource::Memory].is_some())
    {
        return Err(
            CliError::input("memory capacities are given but the system's memory is not")
                .with_hint("give it with --memory SIZE (e.g. --memory 14TiB)"),
        );
    }
    Ok(rule)
}

/// The metric's jobs: start = submit + recorded wait; CPUs = processors; memory per job in KB
/// (when measured) by the memory unit.
fn eet_jobs(args: &EetArgs, trace: &crate::swf::Trace, memory: bool) -> Vec<EetJob> {
    trace
        .workload
        .jobs
        .iter()
        .zip(&trace.recorded_waits)
        .map(|(job, &wait)| {
            let memory_kb = if memory {
                args.memory_unit.job_kb(&trace.workload, job)
            } else {
                0
            };
            EetJob {
                id: job.id,
                user: job.user,
                group: job.group,
                submit: job.submit,
                runtime: job.runtime,
                start: (wait >= 0).then(|| job.submit.saturating_add(wait)),
                request: PerResource::new(u64::from(job.procs), memory_kb, 0),
            }
        })
        .collect()
}

fn describe(rule: &CapacityRule, users: usize) -> String {
    let mut text = if rule.user_shares.is_empty() && rule.group_shares.is_empty() {
        format!("equal split among {users} users")
    } else {
        format!(
            "split among {users} users in proportion to shares ({} user, {} group)",
            rule.user_shares.len(),
            rule.group_shares.len()
        )
    };
    if rule.scale != Ratio::ONE {
        text.push_str(&format!(", × {}", rule.scale));
    }
    if !rule.users.is_empty() || !rule.groups.is_empty() {
        text.push_str(&format!(
            "; explicit for {} users and {} groups",
            rule.users.len(),
            rule.groups.len()
        ));
    }
    text
}

fn write_outputs(
    args: &EetArgs,
    source: &str,
    clock: Option<TraceClock>,
    rule: &CapacityRule,
    jobs: &[EetJob],
    report: &EetReport,
    map: &Heatmap,
) -> Result<(), CliError> {
    let cpus = rule.system[Resource::Cpu];
    let memory = rule.system[Resource::Memory];
    let mut metadata = super::provenance::trace_metadata(&args.trace, source);
    metadata.extend([
        (
            "schedlab.eet.capacity".to_string(),
            describe(rule, report.users.len()),
        ),
        (
            "schedlab.eet.cpus".to_string(),
            cpus.map_or("none".into(), |c| c.to_string()),
        ),
        (
            "schedlab.eet.memory_kb".to_string(),
            memory.map_or("none".into(), |c| c.to_string()),
        ),
        (
            "schedlab.eet.memory_unit".to_string(),
            args.memory_unit.name().to_string(),
        ),
        (
            "schedlab.eet.bin_seconds".to_string(),
            map.axis.width.to_string(),
        ),
    ]);
    let failed = CliError::failed;
    if let Some(path) = &args.jobs_out {
        write_eet_jobs(path, jobs, &report.jobs, &metadata).map_err(failed)?;
    }
    if let Some(path) = &args.users_out {
        write_eet_users(path, &report.users, &metadata).map_err(failed)?;
    }
    if let Some(path) = &args.heatmap_out {
        write_eet_heatmap(path, map, &metadata).map_err(failed)?;
    }
    if let Some(path) = &args.usage_out {
        write_eet_usage(path, map, cpus, memory, &metadata).map_err(failed)?;
    }
    let name = std::path::Path::new(source)
        .file_name()
        .map_or(source.to_string(), |n| n.to_string_lossy().into_owned());
    if let Some(path) = &args.svg {
        let chart = heatmap_chart(&name, map, cpus, memory, clock);
        write_text(path, &heatmap_svg(&chart))?;
    }
    if let Some(path) = &args.boxplot_svg {
        let judged = || report.users.iter().filter(|u| u.judged > 0);
        let veet = boxplot_svg(
            &format!("VEET_u — {name}"),
            "violated EETs per user (%)",
            &[BoxGroup {
                name: "recorded schedule".into(),
                values: judged().map(|u| u.veet.unwrap_or(0.0)).collect(),
            }],
            Scale::Linear,
        );
        let wt = boxplot_svg(
            &format!("WT_u — {name}"),
            "weighted tardiness per user (CPU·s)",
            &[BoxGroup {
                name: "recorded schedule".into(),
                values: judged().map(|u| u.weighted_tardiness as f64).collect(),
            }],
            Scale::Log,
        );
        write_text(path, &side_by_side(&[veet, wt]))?;
    }
    Ok(())
}

fn heatmap_chart(
    name: &str,
    map: &Heatmap,
    cpus: Option<u64>,
    memory: Option<u64>,
    clock: Option<TraceClock>,
) -> HeatmapChart {
    let mut usage = Vec::new();
    if let Some(c) = cpus {
        usage.push(UsageLine {
            name: "CPUs in use".into(),
            values: map.usage.iter().map(|u| u.cpu / c as f64).collect(),
        });
    }
    if let Some(m) = memory {
        usage.push(UsageLine {
            name: "memory in use".into(),
            values: map.usage.iter().map(|u| u.memory / m as f64).collect(),
        });
    }
    HeatmapChart {
        title: format!("Violated EETs per user — {name}"),
        value_label: "violated EETs".into(),
        start: map.axis.start,
        clock,
        shared_scale: None,
        bin_seconds: map.axis.width,
        bins: map.axis.bins,
        rows: map
            .rows
            .iter()
            .map(|row| HeatRow {
                label: format!("user {}", row.user),
                cells: row.cells.iter().map(|c| (c.bin as usize, c.mean)).collect(),
            })
            .collect(),
        usage,
    }
}

/// Several SVG charts side by side in one SVG document.
fn side_by_side(charts: &[String]) -> String {
    let size = |svg: &str, attr: &str| -> f64 {
        svg.split(&format!(" {attr}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let width: f64 = charts.iter().map(|c| size(c, "width")).sum();
    let height = charts.iter().map(|c| size(c, "height")).fold(0.0, f64::max);
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}">"#
    );
    let mut x = 0.0;
    for c in charts {
        out.push_str(&c.replacen("<svg ", &format!(r#"<svg x="{x}" "#), 1));
        x += size(c, "width");
    }
    out.push_str("</svg>");
    out
}

fn write_text(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    crate::cache::write_atomic(path, text.as_bytes()).map_err(CliError::failed)
}
