//! `schedlab simulate`: one trace, one scheduler; the run summary on stdout, per-job records to
//! Parquet on request.

use std::path::PathBuf;

use serde::Serialize;

use super::machine::{ReadArgs, TopologyArgs};
use super::{CliError, Format, load_trace_with};
use crate::sim::engine::JobOutcome;
use crate::sim::metrics::usage::{self, Fractions};
use crate::sim::metrics::{
    self, JobRecord, MetricsConfig, ReservationCounts, RunAccumulator, RunSummary, SizeClasses,
    Warmup, WindowScan,
};
use crate::sim::reservation::Reservations;
use crate::sim::schedule::{Instant, InstantRun, RunLength, ScheduleSink, ScheduledJob};
use crate::sim::scheduler::order::{OrderKind, OrderSpec};
use crate::sim::{
    Infeasible, Machine, Overrun, Placement, SchedulerKind, SimConfig, SimOutcome, Time, Workload,
    simulate_into,
};
use crate::store::{JobLabels, JobsWriter};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab simulate workloads/SDSC-SP2-1998-4.2-cln.swf.gz --scheduler easy
  schedlab simulate trace.swf.gz -s conservative --procs 1152 --node-size 8 --jobs-out jobs.parquet

Exit codes: 0 simulated; 1 the simulation or writing failed; 2 bad input (trace, arguments).")]
pub struct Args {
    /// SWF trace, plain or gzip-compressed.
    pub trace: PathBuf,
    /// Backfilling rule: fcfs (none), easy, conservative or aggressive.
    #[arg(long, short)]
    pub scheduler: SchedulerKind,
    /// Queue order the scheduler walks: fcfs, fairshare or priority (default fairshare and
    /// priority settings, docs/fairshare.md) or sjf.
    #[arg(long, default_value = "fcfs")]
    pub order: OrderKind,
    /// Processors of the machine [default: the trace's MaxProcs].
    #[arg(long)]
    pub procs: Option<u32>,
    /// Allocate whole nodes of this many processors (a job takes ceil(procs/K) nodes).
    #[arg(long, value_name = "K")]
    pub node_size: Option<u32>,
    #[command(flatten)]
    pub topology: TopologyArgs,
    /// Node placement on a topology: first_fit or best_fit.
    #[arg(long, default_value = "first_fit")]
    pub placement: Placement,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Call the scheduler only every N seconds instead of at every event.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<Time>,
    /// What happens to a job that runs past its requested time: kill or continue.
    #[arg(long, default_value = "kill")]
    pub overrun: Overrun,
    /// Bounded-slowdown threshold τ in seconds.
    #[arg(long, default_value_t = metrics::DEFAULT_TAU)]
    pub tau: Time,
    /// Leave the first N jobs out of the aggregates (initial transient).
    #[arg(long, value_name = "N", conflicts_with = "warmup_seconds")]
    pub warmup_jobs: Option<u64>,
    /// Leave jobs submitted in the first T seconds out of the aggregates.
    #[arg(long, value_name = "T")]
    pub warmup_seconds: Option<Time>,
    /// Skip malformed trace lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// Write per-job records to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub jobs_out: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

/// Everything `simulate` reports: the setting, what the trace held, and the run summary.
#[derive(Debug, Serialize)]
pub struct Report {
    pub trace: String,
    pub scheduler: SchedulerKind,
    pub order: OrderKind,
    pub procs: u64,
    pub node_size: Option<u32>,
    pub interval: Option<Time>,
    pub overrun: &'static str,
    pub warmup: Warmup,
    pub trace_jobs_skipped: u64,
    pub malformed_lines: u64,
    /// Unit and scope of the memory fields as read.
    pub memory_reading: &'static str,
    /// Topology settings; absent on a processor pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    #[serde(flatten)]
    pub summary: RunSummary,
    pub utilization_cores: Option<f64>,
    pub utilization_memory: Option<f64>,
    pub utilization_gpus: Option<f64>,
    /// Jobs that can never run on the machine, by reason (those with none are left out).
    pub skipped_by_reason: std::collections::BTreeMap<&'static str, u64>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.topology.machines.is_some() && (args.procs.is_some() || args.node_size.is_some()) {
        return Err(CliError::input(
            "--machines gives the machine: leave out --procs and --node-size",
        ));
    }
    let mut trace = load_trace_with(&args.trace, args.lenient, &args.read.options())?;
    let machine = match args.topology.machine()? {
        Some(m) => m,
        None => {
            let procs = match (args.procs, trace.header.max_procs) {
                (Some(p), _) | (None, Some(p)) => p,
                (None, None) => {
                    return Err(CliError::input(format!(
                        "{}: the trace has no MaxProcs header",
                        trace.source
                    ))
                    .with_hint("give the machine size with --procs N, or --machines FILE"));
                }
            };
            machine(procs, args.node_size)?
        }
    };
    if let Some(n) = args.interval.filter(|&n| n <= 0) {
        return Err(CliError::input(format!(
            "--interval must be a positive number of seconds, found {n}"
        )));
    }
    let warmup = match (args.warmup_jobs, args.warmup_seconds) {
        (Some(n), _) => Warmup::Jobs(n),
        (None, Some(t)) => Warmup::Seconds(t),
        (None, None) => Warmup::None,
    };
    let config = SimConfig {
        order: OrderSpec::of(args.order),
        machine: machine.clone(),
        scheduler: args.scheduler,
        interval: args.interval,
        overrun: args.overrun,
        placement: args.placement,
    };
    let metrics = MetricsConfig {
        tau: args.tau,
        warmup,
    };
    // The trace's recorded waits are not simulated: give their memory back before the run.
    drop(std::mem::take(&mut trace.recorded_waits));
    let mut kept = Kept {
        workload: &trace.workload,
        tau: metrics.tau,
        records: Vec::with_capacity(trace.workload.len()),
        folding: RunLength::default(),
        runs: Vec::new(),
    };
    let outcome = simulate_into(
        &trace.workload,
        &config,
        &Reservations::default(),
        &mut kept,
    )
    .map_err(CliError::failed)?;
    kept.runs.extend(kept.folding.finish());
    let Kept { records, runs, .. } = kept;
    let (summary, (window_start, window_end)) = summarize(
        &records,
        &runs,
        &outcome,
        machine.capacity().unit_count(),
        metrics,
    );
    let capacities = usage::cluster_capacities(&machine);
    let (_, by_resource): (_, Fractions) =
        usage::utilization(&records, &capacities, (window_start, window_end));
    let mut skipped_by_reason = std::collections::BTreeMap::new();
    for (_, reason) in &outcome.skipped {
        *skipped_by_reason
            .entry(Infeasible::name(*reason))
            .or_insert(0) += 1;
    }
    let topology = matches!(machine, Machine::Topology(_));
    let report = Report {
        trace: trace.source.clone(),
        scheduler: args.scheduler,
        order: args.order,
        procs: machine.procs(),
        node_size: args.node_size,
        interval: args.interval,
        overrun: args.overrun.name(),
        warmup,
        trace_jobs_skipped: trace.anomalies.skipped(),
        malformed_lines: trace.malformed.count,
        memory_reading: args.read.memory.name(),
        placement: topology.then_some(args.placement),
        summary,
        utilization_cores: by_resource[0],
        utilization_memory: by_resource[1],
        utilization_gpus: by_resource[2],
        skipped_by_reason,
    };
    if let Some(path) = &args.jobs_out {
        let metadata = vec![
            (
                "schedlab.version".to_string(),
                env!("CARGO_PKG_VERSION").to_string(),
            ),
            ("schedlab.trace".to_string(), trace.source.clone()),
            ("schedlab.scheduler".to_string(), args.scheduler.to_string()),
            ("schedlab.procs".to_string(), machine.procs().to_string()),
            (
                "schedlab.node_size".to_string(),
                args.node_size.map_or("none".into(), |k| k.to_string()),
            ),
            (
                "schedlab.interval".to_string(),
                args.interval.map_or("event".into(), |n| n.to_string()),
            ),
            (
                "schedlab.overrun".to_string(),
                args.overrun.name().to_string(),
            ),
            ("schedlab.tau".to_string(), args.tau.to_string()),
            (
                "schedlab.memory_reading".to_string(),
                args.read.memory.name().to_string(),
            ),
        ];
        let clusters: Vec<String> = match &machine {
            Machine::Topology(t) => t.topology.clusters.iter().map(|c| c.name.clone()).collect(),
            Machine::Uniform(_) => Vec::new(),
        };
        // Expected end times under the default capacity: the machine split equally among the
        // users (manifests choose others: docs/manifest.md, "Expected capacity").
        let total = capacities
            .iter()
            .fold(crate::sim::ResourceVec::ZERO, |a, c| a + *c);
        let eet = crate::sim::metrics::eet::schedule_eet(
            &records,
            &Default::default(),
            total.0[0],
            total.0[1],
            &[],
        )
        .map_err(CliError::input)?;
        let labels = JobLabels {
            limits: outcome.limits.as_ref(),
            clusters: &clusters,
            queue_names: &trace.workload.queue_names,
            eet: Some(&eet.report.jobs),
        };
        let mut writer = JobsWriter::create(path, &metadata, false).map_err(CliError::input)?;
        writer
            .write("", &records, &labels)
            .map_err(CliError::failed)?;
        writer.finish().map_err(CliError::failed)?;
    }
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serializes")
        ),
        Format::Table => print!("{}", super::render_table(&report)),
    }
    Ok(())
}

/// What `simulate` keeps of a run as the engine hands it over: each simulated job's record (the
/// summary, utilization and `--jobs-out` read them all) and the instants folded into runs — not
/// the engine's outcomes, steps and calls, which the records and runs stand for.
struct Kept<'w> {
    workload: &'w Workload,
    tau: Time,
    records: Vec<JobRecord>,
    folding: RunLength,
    runs: Vec<InstantRun>,
}

impl ScheduleSink for Kept<'_> {
    fn job(&mut self, outcome: &JobOutcome) {
        let scheduled = ScheduledJob::of(self.workload, outcome);
        self.records.push(JobRecord::of(&scheduled, self.tau));
    }

    fn instant(&mut self, instant: &Instant) {
        self.runs.extend(self.folding.push(instant));
    }
}

/// The run summary from the records (submission order) and instant runs (time order), as
/// [`metrics::summarize`] computes it from an outcome held whole; and the measurement window.
fn summarize(
    records: &[JobRecord],
    runs: &[InstantRun],
    outcome: &SimOutcome,
    capacity: u64,
    config: MetricsConfig,
) -> (RunSummary, (Time, Time)) {
    let mut scan = WindowScan::new(config.warmup);
    for r in records {
        scan.push(r.submit, r.end);
    }
    let window = scan.finish();
    let classes = SizeClasses::default();
    let mut acc = RunAccumulator::new(config, window, capacity, &classes);
    for r in records {
        acc.job(r);
    }
    for run in runs {
        acc.instants(run);
    }
    let skipped = outcome.skipped.len() as u64;
    let (summary, _) = acc.finish(skipped, ReservationCounts::of(outcome));
    (summary, (window.start, window.end))
}

/// The machine for `procs` processors, in whole nodes of `node_size` when given.
pub fn machine(procs: u32, node_size: Option<u32>) -> Result<Machine, CliError> {
    if procs == 0 {
        return Err(CliError::input(
            "the machine needs at least one processor (--procs)",
        ));
    }
    match node_size {
        None => Ok(Machine::pool(procs)),
        Some(0) => Err(CliError::input("--node-size must be at least 1")),
        Some(k) if !procs.is_multiple_of(k) => Err(CliError::input(format!(
            "{procs} processors do not divide into nodes of {k}"
        ))
        .with_hint(format!("use --procs {} (a multiple of {k})", procs / k * k))),
        Some(k) => Ok(Machine::exclusive_nodes(procs / k, k)),
    }
}
