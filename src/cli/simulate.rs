//! `schedlab simulate`: one trace, one scheduler; the run summary on stdout, per-job records to
//! Parquet on request.

use std::path::PathBuf;

use super::machine::{ReadArgs, TopologyArgs};
use super::{CliError, Format, load_trace_with};
use crate::api::{self, simulate::Settings};
use crate::sim::metrics::{self, Warmup};
use crate::sim::scheduler::order::{CandidateOrder, OrderKind};
use crate::sim::{Machine, Overrun, Placement, SchedulerKind, Time};

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
    /// Order of the backfill candidates after the first job that cannot start: queue (the
    /// queue order), submission, shortest (shortest-job backfilling) or smallest_area.
    #[arg(long, default_value = "queue", value_name = "ORDER")]
    pub backfill_order: CandidateOrder,
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
    /// Queues, limits and quotas: a YAML file holding the mapping of a manifest's
    /// `queues.<setup>` (docs/queues.md).
    #[arg(long, value_name = "FILE.yaml")]
    pub queues: Option<PathBuf>,
    /// Advance reservations: a YAML file holding the mapping of a manifest's
    /// `reservations.<scenario>` (docs/reservations.md).
    #[arg(long, value_name = "FILE.yaml")]
    pub reservations: Option<PathBuf>,
    /// The fairshare of --order fairshare or priority: a YAML file holding a manifest
    /// scheduler's `fairshare` mapping (docs/fairshare.md).
    #[arg(long, value_name = "FILE.yaml")]
    pub fairshare: Option<PathBuf>,
    /// The weights of --order priority: a YAML file holding a manifest scheduler's `priority`
    /// mapping (docs/fairshare.md).
    #[arg(long, value_name = "FILE.yaml")]
    pub priority: Option<PathBuf>,
    /// Recompute the priorities of --order fairshare or priority every N seconds of trace time,
    /// or `start`: after every single start (a manifest scheduler's `reorder`; default: at
    /// every scheduler call).
    #[arg(long, value_name = "SECONDS|start")]
    pub reorder: Option<String>,
    /// The seed of generated reservation requests (a manifest's `seed`).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write per-job records to this Parquet file.
    #[arg(long, value_name = "FILE.parquet")]
    pub jobs_out: Option<PathBuf>,
    /// With --reservations: write every request and its outcome to this Parquet file (the
    /// columns of reservations.parquet without `experiment` and `cell`).
    #[arg(long, value_name = "FILE.parquet", requires = "reservations")]
    pub reservations_out: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.topology.machines.is_some() && (args.procs.is_some() || args.node_size.is_some()) {
        return Err(CliError::input(
            "--machines gives the machine: leave out --procs and --node-size",
        ));
    }
    super::output::check_folders(&[
        ("--jobs-out", args.jobs_out.as_deref()),
        ("--reservations-out", args.reservations_out.as_deref()),
    ])?;
    let mut trace = load_trace_with(&args.trace, args.lenient, &args.read.options()?)?;
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
    let settings = Settings {
        scheduler: args.scheduler,
        order: args.order,
        backfill_order: args.backfill_order,
        placement: args.placement,
        interval: args.interval,
        overrun: args.overrun,
        tau: args.tau,
        warmup,
        node_size: args.node_size,
        memory_reading: args.read.memory.name(),
        sections: sections(&args, &machine)?,
        seed: args.seed,
    };
    let simulated = api::simulate::simulate(
        &mut trace,
        &machine,
        &settings,
        None,
        args.jobs_out.is_some(),
    )?;
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
        simulated.write_jobs(&trace.workload, path, &metadata)?;
    }
    if let (Some(path), Some(r)) = (&args.reservations_out, &simulated.reservations) {
        crate::store::write_reservations(path, &r.requests, &simulated.outcome.reservations, &[])
            .map_err(|e| CliError::failed(e.to_string()))?;
    }
    let report = &simulated.report;
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(report).expect("report serializes")
        ),
        Format::Table => print!(
            "{}",
            super::render_table_with_units(report, |key| {
                crate::store::columns::describe(crate::store::columns::OutputFile::Summary, key)
                    .is_some_and(|c| c.unit.as_deref() == Some("s"))
            })
        ),
    }
    Ok(())
}

/// The queue setup, reservations and fairshare of `--queues`, `--reservations` and
/// `--fairshare`: each file's mapping read by the manifest's own code, in a one-cell manifest
/// on the trace and a cluster mirroring `machine` (`api::sections`).
fn sections(args: &Args, machine: &Machine) -> Result<api::sections::Sections, CliError> {
    let read = |flag: &str,
                path: &Option<PathBuf>|
     -> Result<Option<serde_json::Value>, CliError> {
        let Some(path) = path else { return Ok(None) };
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::input(format!("{flag}: cannot read {}: {e}", path.display())))?;
        serde_saphyr::from_str(&text)
            .map(Some)
            .map_err(|e| CliError::input(format!("{flag} {}: {e}", path.display())))
    };
    let queues = read("--queues", &args.queues)?;
    let reservations = read("--reservations", &args.reservations)?;
    let fairshare = read("--fairshare", &args.fairshare)?;
    let priority = read("--priority", &args.priority)?;
    // A number is seconds, as in a manifest; any other word goes to the manifest's check.
    let reorder = args.reorder.as_deref().map(|r| match r.parse::<i64>() {
        Ok(n) => serde_json::Value::from(n),
        Err(_) => serde_json::Value::from(r),
    });
    let mappings = api::sections::Mappings {
        queues: queues.as_ref(),
        reservations: reservations.as_ref(),
        fairshare: fairshare.as_ref(),
        priority: priority.as_ref(),
        reorder: reorder.as_ref(),
    };
    if mappings.is_empty() {
        return Ok(Default::default());
    }
    let label = |flag: &str, path: &Option<PathBuf>| {
        path.as_ref()
            .map_or_else(String::new, |p| format!("{flag} {}", p.display()))
    };
    let labels = api::sections::Labels {
        queues: label("--queues", &args.queues),
        reservations: label("--reservations", &args.reservations),
        fairshare: label("--fairshare", &args.fairshare),
        priority: label("--priority", &args.priority),
        reorder: "--reorder".into(),
        overrun: "--overrun".into(),
    };
    let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    let cluster = match &args.topology.machines {
        Some(path) => {
            let mut c = serde_json::json!({ "machines": absolute(path) });
            if let Some(a) = args.topology.allocation {
                c["allocation"] = serde_json::json!(match a {
                    super::machine::AllocationArg::Shared => "shared",
                    super::machine::AllocationArg::Exclusive => "exclusive",
                });
            }
            c
        }
        None => {
            let mut c = serde_json::json!({ "procs": machine.procs() });
            if let Some(k) = args.node_size {
                c["node_size"] = serde_json::json!(k);
            }
            c
        }
    };
    Ok(api::sections::resolve(
        &labels,
        mappings,
        serde_json::json!({ "trace": absolute(&args.trace) }),
        cluster,
        args.overrun.name(),
        args.seed,
        std::path::Path::new("."),
    )?)
}

/// The machine for `procs` processors, in whole nodes of `node_size` when given.
pub fn machine(procs: u32, node_size: Option<u32>) -> Result<Machine, CliError> {
    Ok(api::simulate::machine(
        procs,
        node_size,
        ["--procs", "--node-size"],
    )?)
}
