//! `schedlab trace penalties`: Klusáček & Rudová's §4 analysis of a trace on a system — every
//! job's penalty under each model (`analysis::penalties`), and who pays more under `pe_min` than
//! under `cpu`: the share of jobs, CPU time and users affected and the distribution of the
//! increase, printed beside the paper's MetaCentrum figures; per-job penalties to Parquet.

use std::path::PathBuf;

use super::machine::{ReadArgs, TopologyArgs};
use super::{CliError, Format, load_trace_with};
use crate::analysis::{JobPenalties, PenaltySummary, job_penalties, summarize_penalties};
use crate::sim::fairshare::{PenaltyModel, PenaltySpec, Pricing};
use crate::store::{Table, Value};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab trace penalties workloads/wagap-2013.swf.gz --machines workloads/wagap-2013.swf.machines \\
      --memory bytes_per_node --properties x86_64,brno,nfs4
  schedlab trace penalties trace.swf --machines site.machines --gpus -o penalties.parquet --format json

Exit codes: 0 done; 1 the output file could not be written; 2 bad input (trace, machine file,
arguments; without --machines).")]
pub struct PenaltiesArgs {
    /// SWF trace, plain or gzip-compressed.
    pub trace: PathBuf,
    /// Skip malformed lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    /// The system (required: `--machines FILE`, an Alea or AleaNG machine file).
    #[command(flatten)]
    pub topology: TopologyArgs,
    /// Also count GPUs as a resource in the max of the PE models.
    #[arg(long)]
    pub gpus: bool,
    /// Write every job's penalties to this Parquet file (docs/outputs.md, "penalties.parquet").
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

pub fn run(args: PenaltiesArgs) -> Result<(), CliError> {
    super::output::check_folders(&[("-o", args.output.as_deref())])?;
    let Some(machine) = args.topology.machine()? else {
        return Err(
            CliError::input("trace penalties needs the system: --machines FILE").with_hint(
                "an Alea or AleaNG machine file, e.g. workloads/alea/wagap-2013.swf.machines",
            ),
        );
    };
    let trace = load_trace_with(&args.trace, args.lenient, &args.read.options()?)?;
    let spec = PenaltySpec {
        gpus: args.gpus,
        ..PenaltySpec::of(PenaltyModel::PeMin)
    };
    let pricing = Pricing::new(
        &machine,
        (&trace.workload.constraints, &trace.workload.requests),
        &spec,
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    let jobs = job_penalties(&trace.workload, &pricing);
    let summary = summarize_penalties(&jobs);
    if let Some(path) = &args.output {
        table(&jobs)
            .write(
                path,
                &super::provenance::trace_metadata(&args.trace, &trace.source),
                crate::store::OutputFile::Penalties,
            )
            .map_err(CliError::failed)?;
    }
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("summary serializes")
        ),
        Format::Table => print!("{}", render(&summary)),
    }
    for e in &trace.malformed.first {
        eprintln!("warning: skipped {e}");
    }
    Ok(())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1} %", v * 100.0))
}

/// The summary beside the paper's figures (its §4, MetaCentrum 2013).
fn render(s: &PenaltySummary) -> String {
    let mut out = format!(
        "jobs {} (no node class can run {}: left out)\n\n{:<34} {:>14} {:>22}\n",
        s.jobs, s.infeasible, "pe_min above cpu", "this trace", "paper (MetaCentrum)"
    );
    let rows = [
        (
            "jobs".to_string(),
            format!("{} = {}", s.affected_jobs, pct(s.affected_job_fraction)),
            "under 2 %",
        ),
        (
            "CPU time (cores × runtime)".to_string(),
            pct(s.affected_cpu_time_fraction),
            "over 5 %",
        ),
        (
            "users".to_string(),
            format!("{} = {}", s.affected_users, pct(s.affected_user_fraction)),
            "about 40 %",
        ),
        (
            "affected jobs with +20 % or more".to_string(),
            pct(s.increase_at_least_20pct),
            "nearly 90 %",
        ),
        (
            "affected jobs with +100 % or more".to_string(),
            pct(s.increase_at_least_100pct),
            "about 40 %",
        ),
        ("median increase".to_string(), pct(s.increase_median), ""),
        (
            "90th percentile increase".to_string(),
            pct(s.increase_p90),
            "",
        ),
    ];
    for (what, ours, paper) in rows {
        out.push_str(&format!("{what:<34} {ours:>14} {paper:>22}\n"));
    }
    out
}

/// One row per job: its request and its penalty under every model.
fn table(jobs: &[JobPenalties]) -> Table {
    let mut t = Table::default();
    let float = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
    for j in jobs {
        t.row()
            .set("job_id", Value::Int(j.job_id as i64))
            .set("user", Value::Int(i64::from(j.user)))
            .set("group", Value::Int(i64::from(j.group)))
            .set("queue", Value::Int(i64::from(j.queue)))
            .set("cores", Value::Float(j.cores))
            .set("memory_kb", Value::Float(j.memory_kb))
            .set("gpus", Value::Float(j.gpus))
            .set("runtime", Value::Int(j.runtime))
            .set("classes", Value::Int(i64::from(j.classes)))
            .set("clusters", Value::Int(i64::from(j.clusters)))
            .set("cpu", Value::Float(j.cpu))
            .set("standard_job", Value::Float(j.standard_job))
            .set("pe_global", Value::Float(j.pe_global))
            .set("pe_local_min", float(j.pe_local_min))
            .set("pe_local_max", float(j.pe_local_max))
            .set("pe_min", float(j.pe_min))
            .set("increase", float(j.increase()));
    }
    t
}
