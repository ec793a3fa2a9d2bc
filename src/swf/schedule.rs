//! Writing a *simulated schedule* as SWF, so that archive tools (evalys, the Parallel Workloads
//! Archive's scripts) read schedlab's schedules as they read real logs: the waits the simulator
//! computed fill field 3, the actual run times field 4, and a killed job gets status 0
//! ("failed"; completed jobs 1). What a schedule does not know is -1. docs/swf.md, "Exporting a
//! schedule".

use std::io::{self, Write};

/// One job of a schedule, as `jobs.parquet` holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledJob {
    pub id: i64,
    pub submit: i64,
    pub wait: i64,
    /// Actual run time (end − start).
    pub run: i64,
    /// Processors the job held (its units × the node size on exclusive nodes).
    pub allocated: i64,
    /// Processors requested.
    pub requested_procs: i64,
    pub requested_time: i64,
    pub killed: bool,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
}

/// The header of an exported schedule.
#[derive(Clone, Debug, Default)]
pub struct ScheduleHeader {
    /// `; Note:` lines (what the schedule is, where it comes from).
    pub notes: Vec<String>,
    pub jobs: u64,
    pub max_procs: Option<u64>,
    pub max_nodes: Option<u64>,
}

/// Writes the header, then one line per job from `jobs` (in the order given: submission).
pub fn write_schedule(
    out: &mut impl Write,
    header: &ScheduleHeader,
    jobs: impl IntoIterator<Item = ScheduledJob>,
) -> io::Result<()> {
    write_schedule_header(out, header)?;
    for job in jobs {
        write_scheduled_job(out, &job)?;
    }
    Ok(())
}

/// The header lines of a schedule.
pub fn write_schedule_header(out: &mut impl Write, header: &ScheduleHeader) -> io::Result<()> {
    writeln!(out, "; Version: 2.2")?;
    writeln!(
        out,
        "; Computer: simulated by schedlab {}",
        env!("CARGO_PKG_VERSION")
    )?;
    for note in &header.notes {
        writeln!(out, "; Note: {note}")?;
    }
    writeln!(out, "; MaxJobs: {}", header.jobs)?;
    writeln!(out, "; MaxRecords: {}", header.jobs)?;
    if let Some(p) = header.max_procs {
        writeln!(out, "; MaxProcs: {p}")?;
    }
    if let Some(n) = header.max_nodes {
        writeln!(out, "; MaxNodes: {n}")?;
    }
    Ok(())
}

/// One job line of a schedule.
pub fn write_scheduled_job(out: &mut impl Write, j: &ScheduledJob) -> io::Result<()> {
    {
        // 1 id, 2 submit, 3 wait, 4 run time, 5 allocated procs, 6 cpu time, 7 used memory,
        // 8 requested procs, 9 requested time, 10 requested memory, 11 status, 12 user,
        // 13 group, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.
        writeln!(
            out,
            "{} {} {} {} {} -1 -1 {} {} -1 {} {} {} -1 {} -1 -1 -1",
            j.id,
            j.submit,
            j.wait,
            j.run,
            j.allocated,
            j.requested_procs,
            j.requested_time,
            if j.killed { 0 } else { 1 },
            j.user,
            j.group,
            j.queue,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::{Mode, read_bytes};

    #[test]
    fn a_schedule_reads_back_with_its_waits() {
        let jobs = vec![
            ScheduledJob {
                id: 1,
                submit: 0,
                wait: 0,
                run: 30,
                allocated: 4,
                requested_procs: 4,
                requested_time: 60,
                killed: false,
                user: 1,
                group: 2,
                queue: 3,
            },
            ScheduledJob {
                id: 2,
                submit: 10,
                wait: 20,
                run: 60,
                allocated: 8,
                requested_procs: 6,
                requested_time: 60,
                killed: true,
                user: 2,
                group: 2,
                queue: -1,
            },
        ];
        let header = ScheduleHeader {
            notes: vec!["a test".into()],
            jobs: 2,
            max_procs: Some(16),
            max_nodes: None,
        };
        let mut out = Vec::new();
        write_schedule(&mut out, &header, jobs).unwrap();
        let trace = read_bytes(&out, "s.swf", Mode::Strict).unwrap();
        assert_eq!(trace.recorded_waits, vec![0, 20]);
        assert_eq!(trace.header.max_procs, Some(16));
        let second = &trace.workload.jobs[1];
        assert_eq!((second.submit, second.runtime, second.procs), (10, 60, 6));
        let text = String::from_utf8(out).unwrap();
        let line: Vec<&str> = text.lines().last().unwrap().split(' ').collect();
        assert_eq!(line.len(), 18);
        assert_eq!(
            (line[4], line[10]),
            ("8", "0"),
            "allocated 8, status killed"
        );
    }
}
