//! `schedlab trace stats`: per-group statistics of a trace (Medernach's measurements) as a
//! table, JSON or Parquet.

use std::path::PathBuf;

use super::{CliError, Format, load_trace};
use crate::analysis::{GroupBy, GroupStats, R0_GRID, group_stats};
use crate::report::text::number;
use crate::report::units::WaitUnit;
use crate::store::{Table, Value};

/// How to split the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    All,
    User,
    Group,
    Queue,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab trace stats workloads/KTH-SP2-1996-2.1-cln.swf.gz --by user --top 5
  schedlab trace stats trace.swf.gz --format json -o stats.parquet

Exit codes: 0 done; 1 the Parquet file could not be written; 2 bad input (trace, arguments).")]
pub struct StatsArgs {
    /// SWF trace, plain or gzip-compressed.
    pub trace: PathBuf,
    /// One row per user, group or queue (default: the whole trace).
    #[arg(long, default_value = "all")]
    pub by: By,
    /// Keep the N groups with most jobs.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Also write every statistic to this Parquet file (docs/outputs.md, "stats.parquet").
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Skip malformed lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// Output format: aligned tables or JSON.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

pub fn run(args: StatsArgs) -> Result<(), CliError> {
    if args.top == Some(0) {
        return Err(CliError::input("--top must be at least 1"));
    }
    super::output::check_folders(&[("-o", args.output.as_deref())])?;
    let trace = load_trace(&args.trace, args.lenient)?;
    if trace.workload.jobs.is_empty() {
        // Nothing to describe (every line was skipped): say so rather than write an empty file.
        return Err(CliError::input(format!(
            "{}: no job to describe: {} job lines read, {} malformed lines skipped",
            args.trace.display(),
            trace.records,
            trace.malformed.count
        ))
        .with_hint("without --lenient the first malformed line is reported with its number"));
    }
    let by = match args.by {
        By::All => GroupBy::All,
        By::User => GroupBy::User,
        By::Group => GroupBy::Group,
        By::Queue => GroupBy::Queue,
    };
    // Local hours when the log says when it started and in which zone.
    let clock = trace.header.unix_start_time.unwrap_or(0) + trace.header.time_zone.unwrap_or(0);
    let mut groups = group_stats(&trace.workload, &trace.recorded_waits, by, clock);
    if let Some(n) = args.top {
        groups.truncate(n);
    }
    if let Some(path) = &args.output {
        table(&groups)
            .write(
                path,
                &super::provenance::trace_metadata(&args.trace, &trace.source),
                crate::store::OutputFile::Stats,
            )
            .map_err(CliError::failed)?;
    }
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&groups).expect("stats serialize")
        ),
        Format::Table => print!("{}", render(&groups)),
    }
    Ok(())
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("–".into(), |v| format!("{v:.decimals$}"))
}

/// The table: times in one unit per column, chosen as a report chooses its wait unit (the
/// median of the column) and named in the header ("wait mean (h)").
fn render(groups: &[GroupStats]) -> String {
    let unit = |values: Vec<f64>| WaitUnit::for_mean_waits(&values);
    let run = unit(groups.iter().map(|g| g.runtime.mean).collect());
    let wait = unit(
        groups
            .iter()
            .filter_map(|g| g.wait.map(|w| w.mean))
            .collect(),
    );
    let ia = unit(
        groups
            .iter()
            .filter_map(|g| g.interarrival.map(|m| m.mean))
            .collect(),
    );
    let time = |u: WaitUnit, v: Option<f64>| v.map_or("–".into(), |v| number(u.of(v)));
    let mut out = format!(
        "{:<12} {:>8} {:>14} {:>7} {:>15} {:>7} {:>13} {:>7} {:>10} {:>8} {:>8}\n",
        "group",
        "jobs",
        format!("run mean ({})", run.symbol()),
        "run cv",
        format!("wait mean ({})", wait.symbol()),
        "wait cv",
        format!("ia mean ({})", ia.symbol()),
        "ia cv",
        "ŴT",
        "R0(1h)",
        "R0(1d)"
    );
    for g in groups {
        let r0 = |t: f64| {
            let i = R0_GRID.iter().position(|&x| x == t).expect("on the grid");
            opt(g.r0[i], 3)
        };
        out.push_str(&format!(
            "{:<12} {:>8} {:>14} {:>7} {:>15} {:>7} {:>13} {:>7} {:>10} {:>8} {:>8}\n",
            g.group,
            g.jobs,
            time(run, Some(g.runtime.mean)),
            opt(g.runtime.cv, 2),
            time(wait, g.wait.map(|w| w.mean)),
            opt(g.wait.and_then(|w| w.cv), 2),
            time(ia, g.interarrival.map(|m| m.mean)),
            opt(g.interarrival.and_then(|m| m.cv), 2),
            g.normalized_wait.map_or("–".into(), |v| format!("{v:.2e}")),
            r0(3600.0),
            r0(86_400.0),
        ));
    }
    out
}

/// One row per group: scalar statistics, `hour_00` … `hour_23`, and `r0_<t>s` on the grid.
fn table(groups: &[GroupStats]) -> Table {
    let mut t = Table::default();
    let float = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
    for g in groups {
        t.row()
            .set("group", Value::Str(g.group.clone()))
            .set(
                "key",
                g.key.map_or(Value::NullInt, |k| Value::Int(i64::from(k))),
            )
            .set("jobs", Value::Int(g.jobs as i64))
            .set("runtime_mean", Value::Float(g.runtime.mean))
            .set("runtime_sd", Value::Float(g.runtime.sd))
            .set("runtime_cv", float(g.runtime.cv))
            .set(
                "wait_jobs",
                g.wait.map_or(Value::Int(0), |w| Value::Int(w.n as i64)),
            )
            .set("wait_mean", float(g.wait.map(|w| w.mean)))
            .set("wait_sd", float(g.wait.map(|w| w.sd)))
            .set("wait_cv", float(g.wait.and_then(|w| w.cv)))
            .set("interarrival_mean", float(g.interarrival.map(|m| m.mean)))
            .set("interarrival_sd", float(g.interarrival.map(|m| m.sd)))
            .set("interarrival_cv", float(g.interarrival.and_then(|m| m.cv)))
            .set("normalized_wait", float(g.normalized_wait));
        for (h, n) in g.daily.iter().enumerate() {
            t.set(&format!("hour_{h:02}"), Value::Int(*n as i64));
        }
        for (t_s, r) in R0_GRID.iter().zip(&g.r0) {
            t.set(&format!("r0_{}s", *t_s as i64), float(*r));
        }
    }
    t
}
