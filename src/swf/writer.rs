//! Writing a workload as SWF text (`schedlab generate`, and `schedlab trace import` through
//! [`write_trace`]): the 18 standard fields per job, with what a workload does not have written
//! as -1, and a header naming the source. Written line by line to any `io::Write`, so a large
//! workload never exists as one string. The reader reads the output back into the same jobs
//! (tests check it).

use std::io::{self, Write};

use super::reader::Trace;
use crate::sim::Workload;
use crate::sim::topology::Shape;

/// SWF text of `workload` as a string (see [`write_swf`]).
pub fn to_swf(workload: &Workload, max_procs: Option<u64>, notes: &[String]) -> String {
    let mut out = Vec::with_capacity(64 * (workload.len() + 16));
    write_swf(&mut out, workload, max_procs, notes).expect("writing to memory");
    String::from_utf8(out).expect("SWF text is ASCII")
}

/// Writes `workload` as SWF: the header lines `notes` (each prefixed with `; `), the standard
/// directives, then one line per job in submission order. Jobs are written as completed
/// (status 1), with the wait time unknown (-1): the log of a submission stream, not a schedule.
pub fn write_swf(
    out: &mut impl Write,
    workload: &Workload,
    max_procs: Option<u64>,
    notes: &[String],
) -> io::Result<()> {
    writeln!(out, "; Version: 2.2")?;
    for note in notes {
        writeln!(out, "; {note}")?;
    }
    writeln!(out, "; MaxJobs: {}", workload.len())?;
    writeln!(out, "; MaxRecords: {}", workload.len())?;
    if let Some(p) = max_procs {
        writeln!(out, "; MaxProcs: {p}")?;
    }
    let users = workload.jobs.iter().map(|j| j.user).max().unwrap_or(0);
    writeln!(out, "; MaxUsers: {}", users.max(0))?;
    for j in &workload.jobs {
        let memory_kb = workload.memory_kb(j);
        let memory = if memory_kb > 0 { memory_kb as i64 } else { -1 };
        // 1 id, 2 submit, 3 wait, 4 runtime, 5 allocated procs, 6 cpu time, 7 used memory,
        // 8 requested procs, 9 requested time, 10 requested memory, 11 status, 12 user,
        // 13 group, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.
        writeln!(
            out,
            "{} {} -1 {} {} -1 -1 {} {} {} 1 {} {} -1 {} {} -1 -1",
            j.id,
            j.submit,
            j.runtime,
            j.procs,
            j.procs,
            j.requested_time,
            memory,
            j.user,
            j.group,
            j.queue,
            j.partition
        )?;
    }
    Ok(())
}

/// What [`write_trace`] could not write exactly, by reason (each a count of jobs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inexact {
    /// Node requests whose memory per node is not a whole number of KB per core: field 10
    /// (KB per processor) holds it rounded down.
    pub memory_rounded: u64,
    /// Requests for whole nodes (`#excl`), more than one property, or a cluster: AleaNG's
    /// fields hold at most one property.
    pub constraints_dropped: u64,
}

impl Inexact {
    pub fn total(&self) -> u64 {
        self.memory_rounded + self.constraints_dropped
    }
}

/// Writes a trace read from any source as SWF: the header lines `notes`, the directives
/// (`UnixStartTime`, `MaxProcs`, `MaxNodes` where the trace has them), then one line per job of
/// its workload, in its order, with the recorded wait where known and the CPU time. A job
/// asking for nodes × per-node amounts (a job table's node request, GPUs, a GPU type) carries
/// AleaNG's fields 19–21 — its GPUs in total, -1, and `[PROPERTY:]NxP` — which schedlab reads
/// back into the same request (docs/swf.md, "Extended fields"); other tools read the standard
/// 18 fields and ignore them. Returns what could not be written exactly.
pub fn write_trace(out: &mut impl Write, trace: &Trace, notes: &[String]) -> io::Result<Inexact> {
    let workload = &trace.workload;
    writeln!(out, "; Version: 2.2")?;
    for note in notes {
        writeln!(out, "; {note}")?;
    }
    if let Some(t) = trace.header.unix_start_time {
        writeln!(out, "; UnixStartTime: {t}")?;
    }
    writeln!(out, "; MaxJobs: {}", workload.len())?;
    writeln!(out, "; MaxRecords: {}", workload.len())?;
    if let Some(p) = trace.header.max_procs {
        writeln!(out, "; MaxProcs: {p}")?;
    }
    if let Some(n) = trace.header.max_nodes {
        writeln!(out, "; MaxNodes: {n}")?;
    }
    let users = workload.jobs.iter().map(|j| j.user).max().unwrap_or(0);
    writeln!(out, "; MaxUsers: {}", users.max(0))?;
    let mut inexact = Inexact::default();
    for (i, j) in workload.jobs.iter().enumerate() {
        let request = workload.request(j);
        let memory = if request.memory_kb > 0 {
            request.memory_kb as i64
        } else {
            -1
        };
        let wait = trace.recorded_waits.get(i).copied().unwrap_or(-1);
        write!(
            out,
            "{} {} {wait} {} {} {} -1 {} {} {memory} 1 {} {} -1 {} {} -1 -1",
            j.id,
            j.submit,
            j.runtime,
            j.procs,
            j.cpu_time,
            j.procs,
            j.requested_time,
            j.user,
            j.group,
            j.queue,
            j.partition
        )?;
        let constraint = workload.constraints.get(request.constraint);
        let property = match constraint.properties.as_slice() {
            [p] if writable_property(p) => Some(p.as_str()),
            _ => None,
        };
        let mut dropped = request.exclusive
            || constraint.cluster.is_some()
            || constraint.properties.len() > usize::from(property.is_some());
        if let Shape::Nodes { count, per_node } = request.shape {
            if per_node.memory_kb != request.memory_kb * u64::from(per_node.cores) {
                inexact.memory_rounded += 1;
            }
            let gpus = u64::from(per_node.gpus) * u64::from(count);
            match property {
                Some(p) => write!(out, " {gpus} -1 {p}:{count}x{}", per_node.cores)?,
                None => write!(out, " {gpus} -1 {count}x{}", per_node.cores)?,
            }
        } else {
            // Without a node spec AleaNG's fields would make every processor a node.
            dropped |= property.is_some();
        }
        inexact.constraints_dropped += u64::from(dropped);
        writeln!(out)?;
    }
    Ok(inexact)
}

/// Whether AleaNG's reader takes `p`, written first in field 21, as that one property: not
/// "any cluster" (`all` anywhere), not a node spec (`2x4`), no separator, nothing
/// [`super::nodespec`] leaves out.
fn writable_property(p: &str) -> bool {
    let spec = p
        .split_once('x')
        .is_some_and(|(n, c)| n.parse::<u32>().is_ok() && c.parse::<u32>().is_ok());
    !p.is_empty()
        && !spec
        && !p.contains("all")
        && !p.starts_with('^')
        && !p.contains([':', '.', '=', '#', '+'])
        && !p.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Job;
    use crate::sim::topology::{ConstraintTable, JobRequest, RequestId, RequestTable};
    use crate::swf::{Mode, read_bytes};

    #[test]
    fn the_reader_reads_back_the_same_jobs() {
        let jobs = vec![
            Job {
                id: 1,
                submit: 0,
                runtime: 30,
                requested_time: 60,
                procs: 4,
                cpu_time: -1,
                user: 1,
                group: 1,
                queue: -1,
                partition: -1,
                request: Default::default(),
            },
            Job {
                id: 2,
                submit: 17,
                runtime: 3600,
                requested_time: 3600,
                procs: 64,
                cpu_time: -1,
                user: 2,
                group: 1,
                queue: 3,
                partition: 2,
                request: RequestId(1),
            },
        ];
        let mut requests = RequestTable::default();
        // 2,048 KB per processor: what the reader makes of field 10.
        let memory = requests.push(JobRequest {
            memory_kb: 2048,
            ..JobRequest::default()
        });
        assert_eq!(memory, RequestId(1));
        let w = Workload::with_requests(jobs, requests, ConstraintTable::default());
        let text = to_swf(&w, Some(128), &["Note: a test".to_string()]);
        let trace = read_bytes(text.as_bytes(), "test.swf", Mode::Strict).unwrap();
        assert_eq!(trace.workload, w);
        assert_eq!(trace.header.max_procs, Some(128));
        assert_eq!(trace.anomalies.skipped(), 0);
    }
}
