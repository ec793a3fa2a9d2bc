//! One trace on one machine: the run path of `schedlab simulate` and of the Python package's
//! `schedlab.simulate`, under a built-in scheduler (order × backfilling rule) or a
//! [`Policy`] of the decision interface.
//!
//! What it returns is data: the summary (the `simulate` report), the per-job records when asked
//! for, and the `jobs.parquet` columns as an Arrow [`RecordBatch`] (docs/outputs.md), which the
//! CLI writes to Parquet and the Python package hands to pyarrow without a copy.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use arrow_array::RecordBatch;
use serde::Serialize;

use super::ApiError;
use super::sections::Sections;
use crate::sim::engine::JobOutcome;
use crate::sim::fairshare::FairshareSpec;
use crate::sim::metrics::usage::{self, Fractions};
use crate::sim::metrics::{
    self, JobRecord, MetricsConfig, ReservationCounts, RunAccumulator, RunSummary, SizeClasses,
    Warmup, WindowScan,
};
use crate::sim::policy::{NodeStart, Policy};
use crate::sim::reservation::Reservations;
use crate::sim::run::{CustomPolicy, run_into};
use crate::sim::schedule::{Instant, InstantRun, RunLength, ScheduleSink, ScheduledJob};
use crate::sim::scheduler::order::{CandidateOrder, OrderKind, OrderSpec};
use crate::sim::{
    Infeasible, Machine, Overrun, Placement, ResourceVec, SchedulerKind, SimConfig, SimError,
    SimOutcome, Time, Workload,
};
use crate::store::JobLabels;
use crate::swf::Trace;

/// Everything of a run but the trace, the machine and a custom policy.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The backfilling rule of a built-in scheduler (ignored with a custom policy).
    pub scheduler: SchedulerKind,
    /// The queue order a built-in rule walks. A custom policy orders itself: with
    /// [`OrderKind::Fairshare`] its view holds the default fairshare's usage and factor.
    pub order: OrderKind,
    /// The order of backfill candidates after the first job that cannot start (ignored with a
    /// custom policy).
    pub backfill_order: CandidateOrder,
    pub placement: Placement,
    pub interval: Option<Time>,
    pub overrun: Overrun,
    pub tau: Time,
    pub warmup: Warmup,
    /// Whole nodes of this many processors, as given (reported only: the machine has it).
    pub node_size: Option<u32>,
    /// How the memory fields were read (reported only).
    pub memory_reading: &'static str,
    /// A queue setup, advance reservations and a configured fairshare: a manifest's sections
    /// (docs/python.md, "A manifest's sections as keywords").
    pub sections: Sections,
    /// The replica seed of generated reservation requests (a manifest's `seed`).
    pub seed: u64,
}

impl Settings {
    /// `scheduler` with every other setting at the CLI's default.
    pub fn new(scheduler: SchedulerKind) -> Self {
        Settings {
            scheduler,
            order: OrderKind::Fcfs,
            backfill_order: CandidateOrder::Queue,
            placement: Placement::default(),
            interval: None,
            overrun: Overrun::Kill,
            tau: metrics::DEFAULT_TAU,
            warmup: Warmup::None,
            node_size: None,
            memory_reading: "kb_per_proc",
            sections: Sections::default(),
            seed: 0,
        }
    }
}

/// Everything `simulate` reports: the setting, what the trace held, and the run summary.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub trace: String,
    /// The built-in rule, or `policy` for a custom policy.
    pub scheduler: String,
    pub order: OrderKind,
    /// The order of backfill candidates; absent when it is the queue order.
    #[serde(skip_serializing_if = "CandidateOrder::is_queue")]
    pub backfill_order: CandidateOrder,
    /// A custom policy's name; absent with a built-in scheduler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
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
    pub skipped_by_reason: BTreeMap<&'static str, u64>,
}

/// A finished run.
pub struct Simulated {
    pub report: Report,
    /// Per-job records in submission order, when asked for.
    pub records: Vec<JobRecord>,
    /// The engine's outcome without the per-job parts (skipped jobs, limits, assignments).
    pub outcome: SimOutcome,
    /// Cluster names, by index (empty on a uniform machine).
    pub clusters: Vec<String>,
    /// How many times a custom policy was called (0 with a built-in scheduler).
    pub policy_calls: u64,
    /// The run's advance reservations (requests in id order; their outcomes are in
    /// [`Self::outcome`]); `None` when the settings gave none.
    pub reservations: Option<Reservations>,
    capacities: Vec<ResourceVec>,
}

/// Runs `trace` on `machine` under `settings`, or under `policy` when one is given, with the
/// settings' queue setup, reservations and fairshare ([`Settings::sections`]) applied as a
/// manifest's cell applies them ([`run_into`]). With `keep_records`, [`Simulated::records`]
/// holds every job's record.
pub fn simulate(
    trace: &mut Trace,
    machine: &Machine,
    settings: &Settings,
    policy: Option<Box<dyn Policy>>,
    keep_records: bool,
) -> Result<Simulated, ApiError> {
    if let Some(n) = settings.interval.filter(|&n| n <= 0) {
        return Err(ApiError::input(format!(
            "the scheduling interval must be a positive number of seconds, found {n}"
        )));
    }
    let sections = &settings.sections;
    check_order_settings(settings, policy.is_some())?;
    let config = SimConfig {
        order: OrderSpec {
            candidates: settings.backfill_order,
            fairshare: sections.fairshare.clone().unwrap_or_default(),
            priority: sections.priority.clone().unwrap_or_default(),
            reorder: sections.reorder.unwrap_or_default(),
            ..OrderSpec::of(settings.order)
        },
        machine: machine.clone(),
        scheduler: settings.scheduler,
        interval: settings.interval,
        overrun: settings.overrun,
        placement: settings.placement,
    };
    let metrics = MetricsConfig {
        tau: settings.tau,
        warmup: settings.warmup,
    };
    // A run that keeps no job is an error, never an empty success.
    if trace.workload.jobs.is_empty() {
        let a = &trace.anomalies;
        let mut reasons = vec![];
        for (count, reason) in [
            (a.unknown_runtime, "run time -1"),
            (a.zero_runtime, "run time 0"),
            (a.unknown_procs, "no processors"),
            (a.unknown_submit, "submit time -1"),
            (a.never_started, "never started"),
            (a.job_steps, "job steps"),
            (trace.malformed.count, "malformed (--lenient)"),
        ] {
            if count > 0 {
                reasons.push(format!("{count} {reason}"));
            }
        }
        let why = if reasons.is_empty() {
            String::new()
        } else {
            format!(": every job line was skipped ({})", reasons.join(", "))
        };
        return Err(
            ApiError::input(format!("{}: no job to simulate{why}", trace.source)).with_hint(
                "`schedlab trace info` counts what the trace holds and why lines are skipped",
            ),
        );
    }
    // The trace's recorded waits are not simulated: give their memory back before the run.
    drop(std::mem::take(&mut trace.recorded_waits));
    let workload = &trace.workload;
    let n = workload.len();
    let mut kept = Kept {
        workload,
        tau: metrics.tau,
        records: keep_records.then(|| Vec::with_capacity(n)),
        outcomes: Vec::with_capacity(if keep_records { 0 } else { n }),
        scan: WindowScan::new(settings.warmup),
        folding: RunLength::default(),
        runs: Vec::new(),
    };
    let policy_name = policy.as_ref().map(|p| p.name().to_string());
    let reservations = match &sections.reservations {
        Some(spec) => Some(
            spec.for_run(machine, workload, settings.seed)
                .map_err(|e| ApiError::input(format!("reservations=: {e}")))?,
        ),
        None => None,
    };
    let no_reservations = Reservations::default();
    // The engine owns its policy for the run: the call count comes back through a shared cell.
    let calls = Rc::new(Cell::new(0u64));
    let custom = policy.map(|policy| CustomPolicy {
        policy: Box::new(CountCalls(policy, calls.clone())),
        // `order: fairshare` orders nothing under a policy: it puts a fairshare in the view —
        // the one given, else the default (the one the built-in order would use).
        fairshare: sections
            .fairshare
            .clone()
            .or_else(|| (settings.order == OrderKind::Fairshare).then(FairshareSpec::default)),
    });
    let outcome = run_into(
        workload,
        &config,
        reservations.as_ref().unwrap_or(&no_reservations),
        sections.queues.as_deref().map(|setup| &setup.limits),
        custom,
        &mut kept,
    )
    .map_err(|e| match e {
        SimError::Stalled { time, waiting } if policy_name.is_some() => ApiError::failed(format!(
            "policy {}: at t={time}, {waiting} jobs wait on an idle machine with nothing left to happen, and the policy starts none of them",
            policy_name.as_deref().unwrap_or_default()
        ))
        .with_hint("a policy must start a waiting job that fits an idle machine sooner or later"),
        // The view's fairshare could not be set up: the settings are at fault (a decay, shares).
        e @ SimError::Order {
            order: "fairshare", ..
        } if policy_name.is_some() => ApiError::input(e),
        other => ApiError::failed(other),
    })?;
    kept.runs.extend(kept.folding.finish());
    let capacities = usage::cluster_capacities(machine);
    let (summary, by_resource) = summarize(
        &kept,
        &outcome,
        machine.capacity().unit_count(),
        &capacities,
        metrics,
    );
    let records = kept.records.take().unwrap_or_default();
    let mut skipped_by_reason = BTreeMap::new();
    for (_, reason) in &outcome.skipped {
        *skipped_by_reason
            .entry(Infeasible::name(*reason))
            .or_insert(0) += 1;
    }
    // Jobs the queue setup refused at submission, as a manifest's summary counts them.
    for (_, why) in outcome.limits.iter().flat_map(|l| &l.rejected) {
        *skipped_by_reason.entry(why.name()).or_insert(0) += 1;
    }
    let topology = matches!(machine, Machine::Topology(_));
    let report = Report {
        trace: trace.source.clone(),
        scheduler: match &policy_name {
            Some(_) => "policy".to_string(),
            None => settings.scheduler.to_string(),
        },
        order: settings.order,
        backfill_order: settings.backfill_order,
        policy: policy_name,
        procs: machine.procs(),
        node_size: settings.node_size,
        interval: settings.interval,
        overrun: settings.overrun.name(),
        warmup: settings.warmup,
        trace_jobs_skipped: trace.anomalies.skipped(),
        malformed_lines: trace.malformed.count,
        memory_reading: settings.memory_reading,
        placement: topology.then_some(settings.placement),
        summary,
        utilization_cores: by_resource[0],
        utilization_memory: by_resource[1],
        utilization_gpus: by_resource[2],
        skipped_by_reason,
    };
    let clusters = match machine {
        Machine::Topology(t) => t.topology.clusters.iter().map(|c| c.name.clone()).collect(),
        Machine::Uniform(_) => Vec::new(),
    };
    Ok(Simulated {
        report,
        records,
        outcome,
        clusters,
        policy_calls: calls.get(),
        reservations,
        capacities,
    })
}

/// Refuses order settings that the run would leave unused: priority weights and a re-order
/// period only order a built-in rule (a policy orders itself), the weights only under
/// `priority`, a fairshare and a period only under `fairshare` or `priority`.
fn check_order_settings(settings: &Settings, policy: bool) -> Result<(), ApiError> {
    let s = &settings.sections;
    let ranked = matches!(settings.order, OrderKind::Fairshare | OrderKind::Priority);
    let unused = |what: &str, hint: &str| {
        Err(ApiError::input(format!(
            "{what} given, but the queue order `{}` does not use it",
            settings.order.name()
        ))
        .with_hint(hint.to_string()))
    };
    if policy {
        if s.priority.is_some() || s.reorder.is_some() {
            return Err(ApiError::input(
                "priority weights and a re-order period are settings of the built-in rules; a policy orders the queue itself",
            )
            .with_hint("leave them out, or give them to the policy's constructor"));
        }
        return Ok(());
    }
    if s.fairshare.is_some() && !ranked {
        return unused(
            "a fairshare",
            "use the order fairshare (or priority, whose fairshare factor it sets), or leave the fairshare out",
        );
    }
    if s.priority.is_some() && settings.order != OrderKind::Priority {
        return unused(
            "priority weights",
            "use the order priority, or leave the weights out",
        );
    }
    if s.reorder.is_some() && !ranked {
        return unused(
            "a re-order period",
            "use the order fairshare or priority, or leave the period out",
        );
    }
    Ok(())
}

/// A policy that counts its calls.
struct CountCalls(Box<dyn Policy>, Rc<Cell<u64>>);

impl Policy for CountCalls {
    fn decide(
        &mut self,
        view: &crate::sim::policy::PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), crate::sim::policy::PolicyError> {
        self.1.set(self.1.get() + 1);
        self.0.decide(view, starts)
    }

    fn name(&self) -> &str {
        self.0.name()
    }

    fn decide_on_nodes(
        &mut self,
        view: &crate::sim::policy::PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), crate::sim::policy::PolicyError> {
        self.1.set(self.1.get() + 1);
        self.0.decide_on_nodes(view, starts)
    }
}

impl Simulated {
    /// The expected end times of the kept records under the default capacity (the machine
    /// split equally among the users), as `jobs.parquet`'s EET columns give them.
    fn expected_ends(&self) -> Result<crate::sim::metrics::eet::ScheduleEet, ApiError> {
        let total = self
            .capacities
            .iter()
            .fold(ResourceVec::ZERO, |a, c| a + *c);
        crate::sim::metrics::eet::schedule_eet(
            &self.records,
            &Default::default(),
            total.0[0],
            total.0[1],
            &[],
        )
        .map_err(ApiError::input)
    }

    /// The `jobs.parquet` columns of this run (docs/outputs.md), with the expected end times
    /// under the default capacity (the machine split equally among the users), as
    /// `schedlab simulate --jobs-out` writes them. Needs the records ([`simulate`]'s
    /// `keep_records`).
    pub fn jobs_batch(&self, workload: &Workload) -> Result<RecordBatch, ApiError> {
        let eet = self.expected_ends()?;
        let labels = JobLabels {
            limits: self.outcome.limits.as_ref(),
            clusters: &self.clusters,
            queue_names: &workload.queue_names,
            names: &workload.names,
            eet: Some(&eet.report.jobs),
            workload: Some(workload),
        };
        crate::store::jobs_batch(&self.records, &labels).map_err(ApiError::failed)
    }

    /// The `reservations.parquet` columns of this run (docs/outputs.md): every request with
    /// its outcome; `None` when the run had no reservations given.
    pub fn reservations_batch(&self) -> Result<Option<RecordBatch>, ApiError> {
        self.reservations
            .as_ref()
            .map(|r| {
                crate::store::reservations_batch(&r.requests, &self.outcome.reservations)
                    .map_err(ApiError::failed)
            })
            .transpose()
    }

    /// Writes the rows of [`Self::jobs_batch`] to the Parquet file at `path` a slice at a
    /// time, never building the whole table (issue 37: `simulate --jobs-out` on 5 M jobs held
    /// the records, their EET results and the table's Arrow columns together).
    pub fn write_jobs(
        &self,
        workload: &Workload,
        path: &std::path::Path,
        metadata: &[(String, String)],
    ) -> Result<(), ApiError> {
        const SLICE: usize = 1 << 16;
        let eet = self.expected_ends()?;
        let mut writer =
            crate::store::JobsWriter::create(path, metadata, false).map_err(ApiError::failed)?;
        for (records, eet) in self
            .records
            .chunks(SLICE)
            .zip(eet.report.jobs.chunks(SLICE))
        {
            let labels = JobLabels {
                limits: self.outcome.limits.as_ref(),
                clusters: &self.clusters,
                queue_names: &workload.queue_names,
                names: &workload.names,
                eet: Some(eet),
                workload: Some(workload),
            };
            writer
                .write("", records, &labels)
                .map_err(ApiError::failed)?;
        }
        writer.finish().map_err(ApiError::failed)
    }
}

/// What a run keeps as the engine hands it over — not the engine's whole outcome (outcomes,
/// steps, calls): the measurement window as it scans, the instants folded into runs, and per
/// job either its record (when records are kept) or only its outcome (72 bytes against a
/// record's 160; records are rebuilt one at a time).
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

    fn instants(&mut self, first: &Instant, period: Time, count: u64) {
        self.folding.push_many(first, period, count, &mut self.runs);
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

/// The machine for `procs` processors, in whole nodes of `node_size` when given; messages name
/// the settings as the caller's door spells them (`--procs` or `procs`).
pub fn machine(
    procs: u32,
    node_size: Option<u32>,
    [procs_name, node_size_name]: [&str; 2],
) -> Result<Machine, ApiError> {
    if procs == 0 {
        return Err(ApiError::input(format!(
            "the machine needs at least one processor ({procs_name})"
        )));
    }
    match node_size {
        None => Ok(Machine::pool(procs)),
        Some(0) => Err(ApiError::input(format!(
            "{node_size_name} must be at least 1"
        ))),
        Some(k) if !procs.is_multiple_of(k) => Err(ApiError::input(format!(
            "{procs} processors do not divide into nodes of {k}"
        ))
        .with_hint(format!(
            "use {procs_name} {} (a multiple of {k})",
            procs / k * k
        ))),
        Some(k) if u64::from(procs / k) > crate::sim::topology::MAX_NODES => {
            Err(ApiError::input(format!(
                "{procs} processors in nodes of {k} are {} nodes; at most {} are supported",
                procs / k,
                crate::sim::topology::MAX_NODES
            ))
            .with_hint(format!(
                "use a larger {node_size_name}, or leave it out for a processor pool"
            )))
        }
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
