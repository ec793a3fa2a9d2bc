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
    Infeasible, Machine, Overrun, Placement, ResourceVec, SchedulerKind, SimConfig, SimOutcome,
    Time, Workload, simulate_into,
};
use crate::store::{JobLabels, JobsWriter};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab simulate workloads/SDSC-SP2-1998-4.2-cln.swf.gz --scheduler easy
  schedlab simulate trace.swf.gz -s conservative --procs 1152 --node-size 8 --jobs-out jobs.parquet
  schedlab simulate workloads/wagap-2013.swf.gz -s easy --memory bytes_per_node \\
      --machines workloads/wagap-2013.swf.machines --properties x86_64,brno,nfs4 \\
      --cluster-properties zewura=nodecpus80 \\
      --cluster-properties zegox=nodecpus12,debian,linux,infiniband
  (the last: on MetaCentrum's nodes; its machine file lists no properties, its jobs ask for some)

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
    super::output::check_folders(&[("--jobs-out", args.jobs_out.as_deref())])?;
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
    let n = trace.workload.len();
    let mut kept = Kept {
        workload: &trace.workload,
        tau: metrics.tau,
        records: args.jobs_out.is_some().then(|| Vec::with_capacity(n)),
        outcomes: Vec::with_capacity(if args.jobs_out.is_some() { 0 } else { n }),
        scan: WindowScan::new(warmup),
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
    let capacities = usage::cluster_capacities(&machine);
    let (summary, by_resource) = summarize(
        &kept,
        &outcome,
        machine.capacity().unit_count(),
        &capacities,
        metrics,
    );
    drop(std::mem::take(&mut kept.outcomes));
    let records = kept.records.take().unwrap_or_default();
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
        let mut metadata = super::provenance::trace_metadata(&args.trace, &trace.source);
        metadata.extend([
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
        ]);
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

/// What `simulate` keeps of a run as the engine hands it over — not the engine's whole outcome
/// (outcomes, steps, calls): the measurement window as it scans, the instants folded into runs,
/// and per job either its record (with `--jobs-out`, whose file and EET labels read them all)
/// or only its outcome (72 bytes against a record's 160; records are rebuilt one at a time).
struct Kept<'w> {
    workload: &'w Workload,
    tau: Time,
    records: Option<Vec<JobRecord>>,
    outcomes: Vec<JobOutcome>,
    scan: WindowScan,
    folding: RunLength,
    runs: Vec<InstantRun>,
}

impl Kept<'_> {
    fn record(&self, outcome: &JobOutcome) -> JobRecord {
        JobRecord::of(&ScheduledJob::of(self.workload, outcome), self.tau)
    }
}

impl ScheduleSink for Kept<'_> {
    fn job(&mut self, outcome: &JobOutcome) {
        let submit = self.workload.jobs[outcome.job as usize].submit;
        self.scan.push(submit, outcome.end);
        match &mut self.records {
            Some(records) => {
                let scheduled = ScheduledJob::of(self.workload, outcome);
                records.push(JobRecord::of(&scheduled, self.tau));
            }
            None => self.outcomes.push(*outcome),
        }
    }

    fn instant(&mut self, instant: &Instant) {
        self.runs.extend(self.folding.push(instant));
    }
}

/// The run summary and the whole machine's utilization by resource, as [`metrics::summarize`]
/// and [`usage::utilization`] compute them from an outcome and records held whole: the same
/// terms in the same order (jobs in submission order, then instant runs in time order).
fn summarize(
    kept: &Kept<'_>,
    outcome: &SimOutcome,
    capacity: u64,
    capacities: &[ResourceVec],
    config: MetricsConfig,
) -> (RunSummary, Fractions) {
    let window = kept.scan.finish();
    let classes = SizeClasses::default();
    let mut acc = RunAccumulator::new(config, window, capacity, &classes);
    let mut held = usage::HeldInWindow::new(capacities.len(), (window.start, window.end));
    let mut add = |r: &JobRecord| {
        acc.job(r);
        held.job(r);
    };
    match &kept.records {
        Some(records) => records.iter().for_each(&mut add),
        None => kept.outcomes.iter().for_each(|o| add(&kept.record(o))),
    }
    for run in &kept.runs {
        acc.instants(run);
    }
    let skipped = outcome.skipped.len() as u64;
    let (summary, _) = acc.finish(skipped, ReservationCounts::of(outcome));
    (summary, held.finish(capacities).1)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(cluster: u32, start: Time, end: Time, held: [u64; 3]) -> JobRecord {
        JobRecord {
            job_id: 1,
            index: 0,
            user: 1,
            group: 1,
            queue: -1,
            submit: 0,
            start,
            end,
            wait: start,
            response: end,
            run: end - start,
            requested_time: end - start,
            procs: 1,
            units: 1,
            cluster,
            nodes: 1,
            held: ResourceVec(held),
            requested_memory_kb: 0,
            slowdown: 1.0,
            bounded_slowdown: 1.0,
            expansion_factor: 1.0,
            backfilled: false,
            killed: false,
        }
    }

    /// The streamed sums give exactly what `usage::utilization` gives from the whole slice.
    #[test]
    fn held_sums_equal_the_utilization_of_the_whole_slice() {
        let capacities = [ResourceVec([10, 1000, 0]), ResourceVec([3, 0, 2])];
        let records = [
            record(0, 0, 7, [3, 300, 0]),
            record(1, 2, 11, [1, 0, 2]),
            record(0, 5, 20, [7, 123, 0]),
            record(1, 13, 17, [3, 0, 1]),
            record(0, 1, 3, [1, 1, 0]),
        ];
        for window in [(0, 20), (3, 15), (4, 4), (30, 40)] {
            let mut held = usage::HeldInWindow::new(capacities.len(), window);
            records.iter().for_each(|r| held.job(r));
            let (_, whole) = usage::utilization(&records, &capacities, window);
            assert_eq!(held.finish(&capacities).1, whole, "window {window:?}");
        }
        // Something was used, or the comparison would prove little.
        let mut held = usage::HeldInWindow::new(capacities.len(), (0, 20));
        records.iter().for_each(|r| held.job(r));
        assert!(held.finish(&capacities).1[0].is_some_and(|u| u > 0.0));
    }
}
