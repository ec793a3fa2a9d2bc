//! Writing a workload as SWF text (`schedlab generate`): the 18 standard fields per job, with
//! what a generated workload does not have written as -1, and a header naming the source.
//! Written line by line to any `io::Write`, so a large workload never exists as one string. The
//! reader reads the output back into the same jobs (a test checks it).

use std::io::{self, Write};

use crate::sim::Workload;

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
