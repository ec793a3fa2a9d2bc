//! `schedlab trace info`: what a trace holds, in numbers (definitions in docs/swf.md).

use std::collections::BTreeSet;
use std::fmt::Write;

use serde::Serialize;

use super::reader::{Anomalies, Trace};

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
}

impl TraceInfo {
    pub fn from_trace(trace: &Trace) -> TraceInfo {
        let jobs = &trace.workload.jobs;
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
        }
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
    let _ = writeln!(s, "malformed lines  {}", info.malformed_lines);
    let _ = writeln!(s, "anomalies kept");
    let _ = writeln!(s, "  run time > request   {}", a.runtime_exceeds_request);
    let _ = writeln!(s, "  no requested time    {}", a.missing_request);
    let _ = writeln!(s, "  submit out of order  {}", a.out_of_order);
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
    s
}
