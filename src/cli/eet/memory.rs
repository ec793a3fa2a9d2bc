//! How to read a trace's memory field (SWF field 10) as the memory a job asks for in total, in
//! KB — the one place `trace eet` converts it. The SWF standard says KB per processor; some
//! archives differ (Alea's wagap-2013 writes bytes per node), so the unit is an option.
//!
//! Per-node units are read by the SWF reader itself ([`MemoryUnit::reading`]): it knows each
//! job's nodes from Alea's node spec (field 21) or AleaNG's fields, and a job without one is one
//! node of all its processors, as the simulator and Alea read it (docs/swf.md, "Job requests").

use crate::sim::metrics::requested_memory_kb;
use crate::sim::{Job, Workload};
use crate::swf::MemoryReading;

/// The unit of SWF field 10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryUnit {
    /// KB per processor (the SWF standard): × processors.
    KbPerProc,
    /// KB per node: × the job's nodes.
    KbPerNode,
    /// Bytes per node (Alea's wagap-2013): ÷ 1,024, × the job's nodes.
    BytesPerNode,
    /// KB for the whole job.
    KbPerJob,
    /// Bytes for the whole job: ÷ 1,024.
    BytesPerJob,
}

impl MemoryUnit {
    pub fn name(self) -> &'static str {
        match self {
            MemoryUnit::KbPerProc => "kb-per-proc",
            MemoryUnit::KbPerNode => "kb-per-node",
            MemoryUnit::BytesPerNode => "bytes-per-node",
            MemoryUnit::KbPerJob => "kb-per-job",
            MemoryUnit::BytesPerJob => "bytes-per-job",
        }
    }

    /// How the SWF reader reads field 10 for this unit: per-node units as such (the reader
    /// builds each job's nodes × memory per node); the others as the standard, which keeps the
    /// field's value as it is (`Workload::memory_kb`) for the conversions below.
    pub fn reading(self) -> MemoryReading {
        match self {
            MemoryUnit::KbPerNode => MemoryReading::KbPerNode,
            MemoryUnit::BytesPerNode => MemoryReading::BytesPerNode,
            MemoryUnit::KbPerProc | MemoryUnit::KbPerJob | MemoryUnit::BytesPerJob => {
                MemoryReading::KbPerProc
            }
        }
    }

    /// The job's memory in KB (bytes rounded up to whole KB, saturating), from a job read with
    /// [`MemoryUnit::reading`].
    pub fn job_kb(self, workload: &Workload, job: &Job) -> u64 {
        let request = workload.request(job);
        match self {
            MemoryUnit::KbPerProc => request.memory_kb.saturating_mul(u64::from(job.procs)),
            MemoryUnit::KbPerJob => request.memory_kb,
            MemoryUnit::BytesPerJob => request.memory_kb.div_ceil(1024),
            MemoryUnit::KbPerNode | MemoryUnit::BytesPerNode => {
                requested_memory_kb(request, job.procs)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::{Mode, ReadOptions, read_bytes_with};

    /// The jobs of `lines` as `unit` reads them, in KB.
    fn kb(unit: MemoryUnit, lines: &str) -> Vec<u64> {
        let options = ReadOptions {
            memory: unit.reading(),
            ..ReadOptions::default()
        };
        let trace = read_bytes_with(lines.as_bytes(), "t.swf", Mode::Strict, &options).unwrap();
        trace
            .workload
            .jobs
            .iter()
            .map(|j| unit.job_kb(&trace.workload, j))
            .collect()
    }

    #[test]
    fn conversions_by_hand() {
        let job = |id: u64, procs: u32, field: u64, spec: &str| {
            format!(
                "{id} 0 0 10 {procs} -1 -1 {procs} 100 {field} 1 1 1 -1 1 -1 -1 -1 {{1}} q_1d {spec}\n"
            )
        };
        let plain = |id: u64, procs: u32, field: u64| {
            format!("{id} 0 0 10 {procs} -1 -1 {procs} 100 {field} 1 1 1 -1 1 -1 -1 -1\n")
        };
        // 8 nodes × 8 GiB per node, as bytes: 64 GiB = 67,108,864 KB; the node count comes
        // from the spec (8:ppn=8), several parts add up (2 + 1 nodes), a job without a spec
        // is one node.
        let lines = job(1, 64, 8 << 30, "8:ppn=8:x86_64:cl_zegox")
            + &job(2, 10, 1 << 30, "2:ppn=4+1:ppn=2")
            + &plain(3, 4, 1 << 30);
        assert_eq!(
            kb(MemoryUnit::BytesPerNode, &lines),
            [64 << 20, 3 << 20, 1 << 20]
        );
        assert_eq!(
            kb(MemoryUnit::KbPerNode, &plain(1, 4, 1000)),
            [1000],
            "no spec: one node"
        );
        assert_eq!(
            kb(MemoryUnit::KbPerNode, &job(1, 4, 1000, "2:ppn=2")),
            [2000]
        );
        assert_eq!(kb(MemoryUnit::KbPerProc, &plain(1, 4, 1000)), [4000]);
        // The standard's reading keeps the field's value for a job with a node spec too.
        assert_eq!(
            kb(MemoryUnit::KbPerProc, &job(1, 4, 1000, "2:ppn=2")),
            [4000]
        );
        assert_eq!(kb(MemoryUnit::KbPerJob, &plain(1, 4, 1000)), [1000]);
        assert_eq!(kb(MemoryUnit::BytesPerJob, &plain(1, 4, 1025)), [2]);
    }
}
