//! `schedlab trace info`: what a trace holds, in numbers (definitions in docs/swf.md).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::Serialize;

use super::reader::{Anomalies, Trace};
use crate::sim::topology::{Layout, Shape};
use crate::sim::{Infeasible, Machine, Placement};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceInfo {
    pub source: String,
    /// Job lines read (kept + skipped).
    pub records: u64,
    /// Jobs in the workload.
    pub jobs: u64,
    /// Job lines left out, by reason (see `anomalies`).
    pub skipped: u64,
    pub malformed_lines: u64,
    pub anomalies: Anomalies,
    /// Jobs asking for more processors than MaxProcs (when the header gives it).
    pub larger_than_machine: Option<u64>,
    pub first_submit: Option<i64>,
    pub last_submit: Option<i64>,
    /// Latest submit + run time.
    pub last_end: Option<i64>,
    /// last_submit − first_submit, in seconds.
    pub submit_span: i64,
    pub max_procs: Option<u32>,
    pub max_nodes: Option<u32>,
    pub unix_start_time: Option<i64>,
    pub time_zone: Option<String>,
    pub users: u64,
    pub groups: u64,
    pub queues: u64,
    /// Σ run time × processors over the jobs, in processor-seconds.
    pub work: u128,
    /// work / (MaxProcs × submit_span): the load the trace offers its machine.
    pub offered_load: Option<f64>,
    /// Jobs asking for a number of nodes × per-node amounts (a node spec, or per-node memory).
    pub node_requests: u64,
    /// Jobs asking for whole nodes (`#excl`).
    pub exclusive_requests: u64,
    /// Jobs requiring properties or a cluster.
    pub constrained_requests: u64,
    /// Queue names the trace gives (Alea's extended SWF, or names in field 15).
    pub queue_names: Vec<String>,
    /// Users and groups the trace names (fields 12 and 13) rather than numbers, with the ids
    /// they were given (docs/swf.md, "Names in place of numbers"); absent when none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub user_names: BTreeMap<String, i32>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub group_names: BTreeMap<String, i32>,
    /// With a machine (`--machines`, `--procs`): jobs that fit no node of it, by reason (every
    /// reason listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<BTreeMap<&'static str, u64>>,
}

impl TraceInfo {
    pub fn from_trace(trace: &Trace) -> TraceInfo {
        let jobs = &trace.workload.jobs;
        let request = |j: &crate::sim::Job| trace.workload.request(j);
        let distinct = |f: fn(&crate::sim::Job) -> i32| {
            jobs.iter()
                .map(f)
                .filter(|&v| v >= 0)
                .collect::<BTreeSet<_>>()
                .len() as u64
        };
        let first_submit = jobs.first().map(|j| j.submit);
        let last_submit = jobs.last().map(|j| j.submit);
        let submit_span = last_submit.zip(first_submit).map_or(0, |(l, f)| l - f);
        let work: u128 = jobs
            .iter()
            .map(|j| j.runtime as u128 * u128::from(j.procs))
            .sum();
        let max_procs = trace.header.max_procs;
        TraceInfo {
            source: trace.source.clone(),
            records: trace.records,
            jobs: jobs.len() as u64,
            skipped: trace.anomalies.skipped(),
            malformed_lines: trace.malformed.count,
            anomalies: trace.anomalies,
            larger_than_machine: max_procs.map(|p| trace.larger_than(u64::from(p))),
            first_submit,
            last_submit,
            last_end: jobs.iter().map(|j| j.submit + j.runtime).max(),
            submit_span,
            max_procs,
            max_nodes: trace.header.max_nodes,
            unix_start_time: trace.header.unix_start_time,
            time_zone: trace.header.time_zone_string.clone(),
            users: distinct(|j| j.user),
            groups: distinct(|j| j.group),
            queues: distinct(|j| j.queue),
            work,
            offered_load: max_procs
                .filter(|&p| p > 0 && submit_span > 0)
                .map(|p| work as f64 / (f64::from(p) * submit_span as f64)),
            node_requests: jobs
                .iter()
                .filter(|j| matches!(request(j).shape, Shape::Nodes { .. }))
                .count() as u64,
            exclusive_requests: jobs.iter().filter(|j| request(j).exclusive).count() as u64,
            constrained_requests: jobs
                .iter()
                .filter(|j| {
                    !trace
                        .workload
                        .constraints
                        .get(request(j).constraint)
                        .is_none()
                })
                .count() as u64,
            queue_names: trace.workload.queue_names.values().cloned().collect(),
            user_names: invert(&trace.workload.names.users),
            group_names: invert(&trace.workload.names.groups),
            infeasible: None,
        }
    }

    /// Counts the jobs that can never run on `machine`, by reason (the simulator's rules,
    /// docs/semantics.md): on a topology, no eligible node class fits the request on an empty
    /// system; on a uniform machine, more processors than it has.
    pub fn check_machine(&mut self, trace: &Trace, machine: &Machine) -> Result<(), String> {
        let mut counts: BTreeMap<&'static str, u64> =
            Infeasible::ALL.iter().map(|r| (r.name(), 0)).collect();
        let mut count = |reason: Infeasible| *counts.entry(reason.name()).or_default() += 1;
        match machine {
            Machine::Uniform(u) => {
                for job in &trace.workload.jobs {
                    if u.demand(job).is_err() {
                        count(Infeasible::TooManyProcs);
                    }
                }
            }
            Machine::Topology(t) => {
                let layout = Layout::new(t).map_err(|e| e.to_string())?;
                let eligible = layout.eligibility(&trace.workload.constraints, Placement::FirstFit);
                for job in &trace.workload.jobs {
                    let request = trace.workload.request(job);
                    let verdict = match &eligible[request.constraint.0 as usize] {
                        Ok(classes) => layout.admit(request, job.procs, classes),
                        Err(reason) => Err(*reason),
                    };
                    if let Err(reason) = verdict {
                        count(reason);
                    }
                }
            }
        }
        self.infeasible = Some(counts);
        Ok(())
    }
}

/// A human-readable table of `info`.
pub fn render_info(info: &TraceInfo) -> String {
    let opt = |v: Option<i64>| v.map_or("unknown".to_string(), |v| v.to_string());
    let opt32 = |v: Option<u32>| v.map_or("unknown".to_string(), |v| v.to_string());
    let a = &info.anomalies;
    let mut s = String::new();
    let _ = writeln!(s, "trace            {}", info.source);
    let _ = writeln!(s, "job lines        {}", info.records);
    let _ = writeln!(s, "jobs kept        {}", info.jobs);
    let _ = writeln!(s, "jobs skipped     {}", info.skipped);
    let _ = writeln!(s, "  unknown run time     {}", a.unknown_runtime);
    let _ = writeln!(s, "  zero run time        {}", a.zero_runtime);
    let _ = writeln!(s, "  unknown processors   {}", a.unknown_procs);
    let _ = writeln!(s, "  unknown submit time  {}", a.unknown_submit);
    for (label, n) in [
        ("  status not kept      ", a.filtered_status),
        ("  partition not kept   ", a.filtered_partition),
        ("  outside since/until  ", a.filtered_time),
        ("  never started        ", a.never_started),
        ("  job steps (Slurm)    ", a.job_steps),
    ] {
        if n > 0 {
            let _ = writeln!(s, "{label}{n}");
        }
    }
    let _ = writeln!(s, "malformed lines  {}", info.malformed_lines);
    let _ = writeln!(s, "anomalies kept");
    let _ = writeln!(s, "  run time > request   {}", a.runtime_exceeds_request);
    let _ = writeln!(s, "  no requested time    {}", a.missing_request);
    let _ = writeln!(s, "  submit out of order  {}", a.out_of_order);
    if a.fractional_times > 0 {
        let _ = writeln!(s, "  times rounded        {}", a.fractional_times);
    }
    if a.fractional_amounts > 0 {
        let _ = writeln!(s, "  amounts rounded up   {}", a.fractional_amounts);
    }
    let larger = info
        .larger_than_machine
        .map_or("unknown (no MaxProcs)".to_string(), |v| v.to_string());
    let _ = writeln!(s, "  larger than machine  {larger}");
    let _ = writeln!(
        s,
        "machine          MaxProcs {}, MaxNodes {}",
        opt32(info.max_procs),
        opt32(info.max_nodes)
    );
    let _ = writeln!(s, "first submit     {} s", opt(info.first_submit));
    let _ = writeln!(s, "last submit      {} s", opt(info.last_submit));
    let _ = writeln!(s, "last end         {} s", opt(info.last_end));
    let days = info.submit_span as f64 / 86400.0;
    let _ = writeln!(
        s,
        "submit span      {} s ({days:.1} days)",
        info.submit_span
    );
    let _ = writeln!(s, "start (unix)     {}", opt(info.unix_start_time));
    let _ = writeln!(
        s,
        "time zone        {}",
        info.time_zone.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(s, "users            {}", info.users);
    let _ = writeln!(s, "groups           {}", info.groups);
    let _ = writeln!(s, "queues           {}", info.queues);
    let load = info
        .offered_load
        .map_or("unknown (no MaxProcs)".to_string(), |l| format!("{l:.3}"));
    let _ = writeln!(s, "offered load     {load}");
    let _ = writeln!(s, "requests");
    let _ = writeln!(s, "  nodes × per-node     {}", info.node_requests);
    let _ = writeln!(s, "  exclusive (#excl)    {}", info.exclusive_requests);
    let _ = writeln!(s, "  with properties      {}", info.constrained_requests);
    let _ = writeln!(s, "  memory from field 7  {}", a.memory_from_used);
    let _ = writeln!(s, "node specs");
    let _ = writeln!(s, "  tokens left out      {}", a.node_spec_ignored_tokens);
    let _ = writeln!(s, "  fractional ppn       {}", a.node_spec_fractional_ppn);
    let _ = writeln!(s, "  several parts        {}", a.node_spec_multi_part);
    let _ = writeln!(s, "  ≠ requested procs    {}", a.node_spec_procs_mismatch);
    let _ = writeln!(s, "  unknown extra fields {}", a.extended_unrecognized);
    if !info.queue_names.is_empty() {
        let _ = writeln!(s, "queue names      {}", info.queue_names.join(", "));
    }
    if let Some(infeasible) = &info.infeasible {
        let total: u64 = infeasible.values().sum();
        let _ = writeln!(s, "fit no node      {total}");
        for (reason, n) in infeasible.iter().filter(|(_, n)| **n > 0) {
            let _ = writeln!(s, "  {reason:<24} {n}");
        }
    }
    s
}

/// Names → ids, from ids → names.
fn invert(names: &BTreeMap<i32, String>) -> BTreeMap<String, i32> {
    names.iter().map(|(&id, name)| (name.clone(), id)).collect()
}
