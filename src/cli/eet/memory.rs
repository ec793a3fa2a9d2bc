//! How to read a trace's memory field (SWF field 10) as the memory a job asks for in total, in
//! KB — the one place `trace eet` converts it. The SWF standard says KB per processor; some
//! archives differ (Alea's wagap-2013 writes bytes per node), so the unit is an option.
//!
//! Per-node units need each job's node count, which the SWF fields do not carry. Until the
//! reader carries one, it comes from Alea's extended SWF node spec (field 21, `N:ppn=P…`),
//! read here in a second pass over the file.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The unit of SWF field 10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryUnit {
    /// KB per processor (the SWF standard): × processors.
    KbPerProc,
    /// KB per node: × nodes (from Alea's node spec).
    KbPerNode,
    /// Bytes per node (Alea's wagap-2013): ÷ 1,024, × nodes (from Alea's node spec).
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

    pub fn per_node(self) -> bool {
        matches!(self, MemoryUnit::KbPerNode | MemoryUnit::BytesPerNode)
    }

    /// The job's memory in KB (bytes rounded up to whole KB, saturating), from `field` (0:
    /// unknown) and its processors or nodes; `None` when a per-node unit lacks the node count.
    pub fn job_kb(self, field: u64, procs: u32, nodes: Option<u32>) -> Option<u64> {
        let per_job = |per: u64, n: u32| per.saturating_mul(u64::from(n));
        Some(match self {
            MemoryUnit::KbPerProc => per_job(field, procs),
            MemoryUnit::KbPerJob => field,
            MemoryUnit::BytesPerJob => field.div_ceil(1024),
            MemoryUnit::KbPerNode => per_job(field, nodes?),
            MemoryUnit::BytesPerNode => per_job(field, nodes?).div_ceil(1024),
        })
    }
}

/// Node counts by job number from Alea's node spec (field 21), read as PBS node specs: parts
/// joined by `+`, each `N:ppn=…` (N nodes) or a host name (one node). Jobs without a spec are
/// absent. Plain or gzip, like the SWF reader.
pub fn alea_node_counts(path: &Path) -> std::io::Result<HashMap<u64, u32>> {
    let mut input = BufReader::new(std::fs::File::open(path)?);
    let gzip = input.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let lines: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(input)))
    } else {
        Box::new(input)
    };
    let mut out = HashMap::new();
    for line in lines.split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        if text.trim_start().starts_with(';') {
            continue;
        }
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        let (Some(id), Some(spec)) = (fields.first(), fields.get(20)) else {
            continue;
        };
        let nodes = spec
            .split('+')
            .map(|part| {
                let head = part.split(':').next().unwrap_or("");
                match head.parse::<u32>() {
                    Ok(n) => Some(n),
                    // A host name is one node; an empty part is no spec at all.
                    Err(_) => (!head.is_empty()).then_some(1),
                }
            })
            .try_fold(0u32, |total, n| n.map(|n| total.saturating_add(n)));
        if let (Ok(id), Some(n)) = (id.parse::<u64>(), nodes.filter(|&n| n > 0)) {
            out.insert(id, n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_by_hand() {
        // 8 nodes × 8 GiB per node, as bytes: 64 GiB = 67,108,864 KB.
        assert_eq!(
            MemoryUnit::BytesPerNode.job_kb(8 << 30, 64, Some(8)),
            Some(64 << 20)
        );
        assert_eq!(MemoryUnit::BytesPerNode.job_kb(8 << 30, 64, None), None);
        assert_eq!(MemoryUnit::KbPerProc.job_kb(1000, 4, None), Some(4000));
        assert_eq!(MemoryUnit::KbPerNode.job_kb(1000, 4, Some(2)), Some(2000));
        assert_eq!(MemoryUnit::KbPerJob.job_kb(1000, 4, None), Some(1000));
        assert_eq!(MemoryUnit::BytesPerJob.job_kb(1025, 4, None), Some(2));
        assert_eq!(
            MemoryUnit::KbPerProc.job_kb(u64::MAX, 4, None),
            Some(u64::MAX)
        );
    }

    #[test]
    fn node_counts_from_alea_specs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.swf");
        let job = |id: u64, spec: &str| {
            format!("{id} 0 0 10 64 1 1024 64 100 1 1 1 1 1 -1 1 1 1 {{1,1}} q_1d {spec}\n")
        };
        let text = format!(
            "; comment\n{}{}{}1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n",
            job(7, "8:ppn=8:x86_64:cl_zegox"),
            job(8, "1:ppn=64"),
            job(9, "zewura19.cerit-sc.cz"),
        ) + &job(10, "2:ppn=4+1:ppn=2");
        std::fs::write(&path, text).unwrap();
        let counts = alea_node_counts(&path).unwrap();
        assert_eq!(counts.get(&7), Some(&8));
        assert_eq!(counts.get(&8), Some(&1));
        assert_eq!(counts.get(&9), Some(&1));
        assert_eq!(counts.get(&10), Some(&3));
        assert_eq!(counts.get(&1), None);
    }
}
