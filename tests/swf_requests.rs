//! Job requests from SWF lines (issue 10): the memory readings, Alea's and AleaNG's extended
//! fields, on hand-written lines and on the real files (bundled in workloads/). Expectations are
//! worked out by hand from the lines (and, for the whole files, counted independently with awk:
//! see each test).

use std::path::{Path, PathBuf};

use schedlab::sim::topology::{Constraint, JobRequest, NodeDemand, Shape};
use schedlab::swf::{Extended, MemoryReading, Mode, ReadOptions, read_bytes_with, read_path_with};

const GIB_KB: u64 = 1 << 20;

/// The bundled traces: wagap-2013 and AleaNG's Example1 are those of ../shared/workloads, byte
/// for byte (gzipped; tests/aleang_example1.rs compares Example1's).
fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

fn options(memory: MemoryReading) -> ReadOptions {
    ReadOptions {
        memory,
        ..ReadOptions::default()
    }
}

/// Job 0 of wagap-2013 (per-CPU node list shortened: its content is never used).
const WAGAP_0: &str = "0 1356996147 0 56011 64 1 1024 64 86400 68719476736 1 62 1 1 -1 1 1 1 \
                       {1241,1241} q_1d 1:ppn=64:x86_64:cl_zewura#excl\n";
/// Job 6 of wagap-2013: 8 nodes of 8 on zegox, 8 GiB (bytes) per node.
const WAGAP_6: &str = "6 1357016559 1 33765 64 1 1024 64 86400 8589934592 1 62 1 1 -1 1 1 1 \
                       {1273,1255} q_1d 8:ppn=8:x86_64:cl_zegox\n";

#[test]
fn alea_node_spec_with_bytes_per_node() {
    let text = format!("{WAGAP_0}{WAGAP_6}");
    let t = read_bytes_with(
        text.as_bytes(),
        "w.swf",
        Mode::Strict,
        &options(MemoryReading::BytesPerNode),
    )
    .unwrap();
    let [j0, j6] = t.workload.jobs.as_slice() else {
        panic!("two jobs")
    };
    // 68719476736 bytes = 64 GiB on the one node of 64 processors, whole node (#excl).
    assert_eq!(j0.procs, 64);
    assert_eq!(
        t.workload.request(j0).shape,
        Shape::Nodes {
            count: 1,
            per_node: NodeDemand {
                cores: 64,
                memory_kb: 64 * GIB_KB,
                gpus: 0
            }
        }
    );
    assert!(t.workload.request(j0).exclusive);
    assert_eq!(
        t.workload
            .constraints
            .get(t.workload.request(j0).constraint),
        &Constraint::properties(["cl_zewura", "x86_64"])
    );
    // 8589934592 bytes = 8 GiB per node, 8 nodes of 8; 1 GiB per processor.
    assert_eq!(
        *t.workload.request(j6),
        JobRequest {
            constraint: t.workload.request(j6).constraint,
            memory_kb: GIB_KB,
            ..JobRequest::nodes(
                8,
                NodeDemand {
                    cores: 8,
                    memory_kb: 8 * GIB_KB,
                    gpus: 0
                }
            )
        }
    );
    assert_eq!(t.workload.memory_kb(j6), GIB_KB);
    assert_eq!(
        t.workload
            .constraints
            .get(t.workload.request(j6).constraint)
            .properties,
        ["cl_zegox", "x86_64"]
    );
    // Queue names: field 20, ids in order of appearance; field 15 (-1 here) is replaced.
    assert_eq!((j0.queue, j6.queue), (0, 0));
    assert_eq!(t.workload.queue_name(0), Some("q_1d"));
    assert_eq!(t.anomalies.node_spec_procs_mismatch, 0);
}

#[test]
fn the_standard_reading_is_kb_per_processor() {
    // The same line read as the SWF standard says: field 10 is KB per processor, so a node of
    // 64 processors asks 64 × 68719476736 KB. Nothing fits it; that is for the simulator to
    // report (too_much_memory_per_node), not for the reader to guess.
    let t = read_bytes_with(
        WAGAP_0.as_bytes(),
        "w.swf",
        Mode::Strict,
        &ReadOptions::default(),
    )
    .unwrap();
    let j = &t.workload.jobs[0];
    assert_eq!(t.workload.memory_kb(j), 68_719_476_736);
    let Shape::Nodes { per_node, .. } = t.workload.request(j).shape else {
        panic!("a node request")
    };
    assert_eq!(per_node.memory_kb, 64 * 68_719_476_736);
    // Ignoring memory, and ignoring the extended fields.
    let t = read_bytes_with(
        WAGAP_0.as_bytes(),
        "w.swf",
        Mode::Strict,
        &options(MemoryReading::Ignore),
    )
    .unwrap();
    assert_eq!(t.workload.memory_kb(&t.workload.jobs[0]), 0);
    let plain = ReadOptions {
        extended: Extended::Ignore,
        ..ReadOptions::default()
    };
    let t = read_bytes_with(WAGAP_0.as_bytes(), "w.swf", Mode::Strict, &plain).unwrap();
    let j = &t.workload.jobs[0];
    // Without the extended fields: a flexible request of the memory field as read.
    assert_eq!(
        *t.workload.request(j),
        JobRequest {
            memory_kb: 68_719_476_736,
            ..JobRequest::default()
        }
    );
    assert_eq!((j.queue, t.workload.queue_names.len()), (-1, 0));
}

#[test]
fn standard_lines_keep_todays_reading() {
    // 18 fields: 4 processors, 2048 KB per processor; a flexible request as before.
    let line = "1 0 -1 100 4 -1 -1 4 300 2048 1 7 3 -1 2 1 -1 -1\n";
    let t = read_bytes_with(
        line.as_bytes(),
        "s.swf",
        Mode::Strict,
        &ReadOptions::default(),
    )
    .unwrap();
    let j = &t.workload.jobs[0];
    // A flexible request that carries the memory per processor.
    assert_eq!(
        *t.workload.request(j),
        JobRequest {
            memory_kb: 2048,
            ..JobRequest::default()
        }
    );
    assert_eq!(t.workload.constraints.len(), 1);
    // Per node without a node spec: one node of all 4 processors holding 2048 KB (Alea's
    // reading), i.e. 512 KB per processor.
    let t = read_bytes_with(
        line.as_bytes(),
        "s.swf",
        Mode::Strict,
        &options(MemoryReading::KbPerNode),
    )
    .unwrap();
    let j = &t.workload.jobs[0];
    assert_eq!(
        *t.workload.request(j),
        JobRequest {
            memory_kb: 512,
            ..JobRequest::nodes(
                1,
                NodeDemand {
                    cores: 4,
                    memory_kb: 2048,
                    gpus: 0
                }
            )
        }
    );
    assert_eq!(t.workload.memory_kb(j), 512);
}

#[test]
fn used_memory_is_a_fallback_only_when_asked() {
    // Field 10 unknown, field 7 (used) 3000 KB per processor.
    let line = "1 0 -1 100 2 -1 3000 2 300 -1 1 7 3 -1 2 1 -1 -1\n";
    let t = read_bytes_with(
        line.as_bytes(),
        "u.swf",
        Mode::Strict,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(t.workload.memory_kb(&t.workload.jobs[0]), 0);
    assert_eq!(t.anomalies.memory_from_used, 0);
    let fallback = ReadOptions {
        used_memory_fallback: true,
        ..ReadOptions::default()
    };
    let t = read_bytes_with(line.as_bytes(), "u.swf", Mode::Strict, &fallback).unwrap();
    assert_eq!(t.workload.memory_kb(&t.workload.jobs[0]), 3000);
    assert_eq!(t.anomalies.memory_from_used, 1);
    // Field 10 known: field 7 is not used.
    let line = "1 0 -1 100 2 -1 3000 2 300 500 1 7 3 -1 2 1 -1 -1\n";
    let t = read_bytes_with(line.as_bytes(), "u.swf", Mode::Strict, &fallback).unwrap();
    assert_eq!(t.workload.memory_kb(&t.workload.jobs[0]), 500);
}

#[test]
fn aleang_gpus_properties_and_whole_nodes() {
    // AleaNG Example1 style: 8 processors = 8 nodes of one (whole-node reading), 16 GiB per
    // node in KB, 8 GPUs in total = 1 per node, property `normal`.
    let a = "3 1 0 5362 8 5362 16777216 8 7200 16777216 1 2 1 -1 1 -1 -1 -1 8 5362 normal\n";
    // `all` asks for any node; an explicit 2x4 node spec; 3 GPUs on 2 nodes round up to 2.
    let b = "4 2 0 60 8 60 1048576 8 600 1048576 1 1 0 -1 0 -1 -1 -1 3 60 all:2x4\n";
    let text = format!("{a}{b}");
    let t = read_bytes_with(
        text.as_bytes(),
        "ng.swf",
        Mode::Strict,
        &options(MemoryReading::KbPerNode),
    )
    .unwrap();
    let [ja, jb] = t.workload.jobs.as_slice() else {
        panic!("two jobs")
    };
    assert_eq!(
        t.workload.request(ja).shape,
        Shape::Nodes {
            count: 8,
            per_node: NodeDemand {
                cores: 1,
                memory_kb: 16 * GIB_KB,
                gpus: 1
            }
        }
    );
    assert_eq!(
        t.workload
            .constraints
            .get(t.workload.request(ja).constraint)
            .properties,
        ["normal"]
    );
    assert_eq!(ja.queue, 1, "AleaNG keeps field 15 as the queue");
    assert_eq!(
        t.workload.request(jb).shape,
        Shape::Nodes {
            count: 2,
            per_node: NodeDemand {
                cores: 4,
                memory_kb: GIB_KB,
                gpus: 2
            }
        }
    );
    assert!(
        t.workload
            .constraints
            .get(t.workload.request(jb).constraint)
            .is_none()
    );
    // Read as AleaNG's, a bad GPU count is a located error in strict mode (with `auto` it would
    // be an unrecognised dialect, counted below).
    let bad = "4 2 0 60 8 60 1 8 600 1 1 1 0 -1 0 -1 -1 -1 x 60 all\n";
    let aleang = ReadOptions {
        extended: Extended::AleaNg,
        ..options(MemoryReading::KbPerNode)
    };
    let err = read_bytes_with(bad.as_bytes(), "ng.swf", Mode::Strict, &aleang).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ng.swf:1: field 19 (extra field): expected a non-negative number of GPUs, found \"x\""
    );
    // Extra fields of no known dialect are counted and ignored.
    let odd = "1 0 -1 100 2 -1 -1 2 300 -1 1 7 3 -1 2 1 -1 -1 foo bar\n";
    let t = read_bytes_with(
        odd.as_bytes(),
        "o.swf",
        Mode::Strict,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(t.anomalies.extended_unrecognized, 1);
    assert_eq!(
        *t.workload.request(&t.workload.jobs[0]),
        JobRequest::default()
    );
}

#[test]
fn wagap_2013_as_a_whole() {
    let path = bundled().join("wagap-2013.swf.gz");
    let t = read_path_with(&path, Mode::Strict, &options(MemoryReading::BytesPerNode)).unwrap();
    // Counted with awk over fields 4, 20 and 21 of the 17,900 lines: two negative run times
    // (jobs 4185 and 4199); 231 `#excl`; 12 specs of two parts; 20 with ppn=1.5; 114 with a
    // negated property, a host name or a resource (`mem=3gb`); 11 queue names; 14 distinct
    // property sets.
    assert_eq!((t.records, t.workload.len()), (17_900, 17_898));
    let exclusive = t
        .workload
        .jobs
        .iter()
        .filter(|j| t.workload.request(j).exclusive)
        .count();
    assert_eq!(exclusive, 231);
    assert_eq!(t.anomalies.node_spec_multi_part, 12);
    assert_eq!(t.anomalies.node_spec_fractional_ppn, 20);
    assert_eq!(t.anomalies.node_spec_ignored_tokens, 114);
    assert_eq!(t.anomalies.node_spec_procs_mismatch, 0);
    let names: Vec<&str> = t
        .workload
        .queue_names
        .values()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "q_1d",
            "q_2w",
            "q_2d",
            "q_4d",
            "q_1w",
            "q_4h",
            "q_2h",
            "q_2w_plus",
            "backfill",
            "priority_long",
            "ops"
        ]
    );
    assert_eq!(t.workload.constraints.len(), 1 + 14);
    // Every job is a node request; the largest per-node memory is 512 GiB (549755813888 bytes,
    // job 8687) — more than zewura's 504.9 GiB nodes hold.
    let max = t
        .workload
        .jobs
        .iter()
        .map(|j| match t.workload.request(j).shape {
            Shape::Nodes { per_node, .. } => per_node.memory_kb,
            Shape::Flexible => panic!("job {} has no node spec", j.id),
        })
        .max();
    assert_eq!(max, Some(512 * GIB_KB));
}

#[test]
fn aleang_example1_as_a_whole() {
    let path = bundled().join("aleang-example1/Example1-load_100%-urgent_10%-instance_0.swf.gz");
    let t = read_path_with(&path, Mode::Strict, &options(MemoryReading::KbPerNode)).unwrap();
    assert_eq!(t.workload.len(), 4014);
    // Whole-node reading: as many nodes as processors, one processor each, field 10 per node.
    for j in &t.workload.jobs {
        let Shape::Nodes { count, per_node } = t.workload.request(j).shape else {
            panic!("job {}: a node request", j.id)
        };
        assert_eq!((count, per_node.cores), (j.procs, 1), "job {}", j.id);
    }
    // Job 1: 40 nodes, 33554432 KB = 32 GiB each, 40 GPUs = 1 per node, property `all` (no
    // constraint).
    let j1 = &t.workload.jobs[0];
    assert_eq!(
        t.workload.request(j1).shape,
        Shape::Nodes {
            count: 40,
            per_node: NodeDemand {
                cores: 1,
                memory_kb: 32 * GIB_KB,
                gpus: 1
            }
        }
    );
    assert!(
        t.workload
            .constraints
            .get(t.workload.request(j1).constraint)
            .is_none()
    );
    // The only properties are `normal` (and `all`, which is none).
    let props: Vec<_> = t
        .workload
        .constraints
        .iter()
        .map(|c| c.properties.clone())
        .collect();
    assert_eq!(props, [vec![], vec!["normal".to_string()]]);
}
