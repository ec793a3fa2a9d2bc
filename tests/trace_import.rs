//! `schedlab trace import` (docs/sources.md, "Importing to SWF"): every kind of source — a
//! `sacct` dump, the job tables of each shipped mapping, a Batsim workload — written as SWF, and
//! read back into the same jobs as reading the source directly (every field, node requests,
//! GPUs and GPU types included); the header names the source and the rows left out by reason;
//! `trace info` reads the result; the standard fields of a line worked out by hand.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schedlab::sim::topology::Shape;
use schedlab::swf::{ReadOptions, Trace, TraceFormat};
use schedlab::table::{Keep, mapping};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

use common::{schedlab_in as schedlab, text};

/// The source read directly, as `trace info` and a manifest read it.
fn read_source(path: &Path, mapping_name: Option<&str>) -> Trace {
    let options = match mapping_name {
        Some(name) => {
            let reading = mapping::shipped(name)
                .unwrap()
                .with_keep(Some(Keep::default()))
                .resolve(name)
                .unwrap();
            ReadOptions {
                format: TraceFormat::Table(Arc::new(reading)),
                ..ReadOptions::default()
            }
        }
        None => ReadOptions::default().for_path(path),
    };
    schedlab::api::trace::load(path, false, &options).unwrap()
}

/// Imports `source` (relative to the repository) into a temporary SWF file; returns it and the
/// command's standard error.
fn import(dir: &Path, source: &str, extra: &[&str]) -> (PathBuf, String) {
    let out = dir.join("imported.swf");
    let src = root().join(source);
    let mut args = vec![
        "trace",
        "import",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = schedlab(dir, &args);
    assert!(run.status.success(), "{source}: {}", text(&run.stderr));
    (out, text(&run.stderr))
}

/// Every field of every job, with its request and required properties, in order; `as_swf`:
/// with the memory per node a node request's SWF line holds (KB per processor × cores).
fn jobs(t: &Trace, as_swf: bool) -> Vec<String> {
    let w = &t.workload;
    w.jobs
        .iter()
        .map(|j| {
            let r = w.request(j);
            let mut shape = r.shape;
            if let (true, Shape::Nodes { per_node, .. }) = (as_swf, &mut shape) {
                per_node.memory_kb = r.memory_kb * u64::from(per_node.cores);
            }
            format!(
                "{j:?} {shape:?} {:?} {:?} {}",
                r.memory_kb,
                w.constraints.get(r.constraint),
                r.exclusive
            )
        })
        .collect()
}

/// Imports `source`, reads the result back and checks it holds the jobs of the source:
/// exactly, except for the memory per node of the jobs the import says it rounded (per-node
/// memory that is not a whole number of KB per core). Returns the source, the import read
/// back, its text and the number of jobs whose memory was rounded.
fn round_trip(source: &str, mapping_name: Option<&str>) -> (Trace, Trace, String, usize) {
    let dir = tempfile::tempdir().unwrap();
    let extra: Vec<&str> = mapping_name.map_or(vec![], |m| vec!["--mapping", m]);
    let (out, stderr) = import(dir.path(), source, &extra);
    let direct = read_source(&root().join(source), mapping_name);
    let back = schedlab::api::trace::load(&out, false, &ReadOptions::default()).unwrap();
    assert!(!direct.workload.is_empty());
    let rounded = jobs(&direct, true)
        .iter()
        .zip(jobs(&direct, false))
        .filter(|(a, b)| **a != *b)
        .count();
    assert_eq!(jobs(&back, true), jobs(&direct, true), "{source}");
    if rounded == 0 {
        assert_eq!(jobs(&back, false), jobs(&direct, false), "{source}");
        assert!(!stderr.contains("warning"), "{source}: {stderr}");
    } else {
        assert!(
            stderr.contains(&format!(
                "warning: {rounded} jobs ask for memory per node that is not a whole number of KB per core: written rounded down"
            )),
            "{source}: {stderr}"
        );
    }
    assert_eq!(
        back.header.unix_start_time, direct.header.unix_start_time,
        "{source}"
    );
    assert_eq!(back.header.max_procs, direct.header.max_procs, "{source}");
    // Nothing skipped, nothing counted that the source did not count.
    assert_eq!(back.anomalies.skipped(), 0, "{source}");
    assert_eq!(back.records, direct.workload.len() as u64);
    assert_eq!(back.anomalies.extended_unrecognized, 0);
    assert_eq!(back.anomalies.node_spec_ignored_tokens, 0);
    assert_eq!(
        back.anomalies.node_spec_procs_mismatch,
        direct.anomalies.node_spec_procs_mismatch
    );
    let swf = std::fs::read_to_string(&out).unwrap();
    (direct, back, swf, rounded)
}

#[test]
fn a_sacct_dump_reads_back_into_the_same_jobs() {
    let (direct, back, swf, rounded) =
        round_trip("workloads/samples/slurm/sacct.txt", Some("slurm"));
    assert_eq!(direct.workload.len(), 9);
    assert_eq!(rounded, 0);
    // Where it came from, and the 10 rows left out of the hand-checked sample (tests/sacct.rs):
    // 5 steps, 3 jobs that never started, 1 still running, 1 that ran 0 s.
    let digest =
        blake3::hash(&std::fs::read(root().join("workloads/samples/slurm/sacct.txt")).unwrap())
            .to_hex()
            .to_string();
    assert!(
        swf.contains(&format!(
            "from sacct.txt (blake3 {digest}), read as a job table through the mapping `slurm`"
        )),
        "{swf}"
    );
    assert!(
        swf.contains("; Note: 19 records, 9 jobs written; left out: 10 (unknown_runtime 1, zero_runtime 1, job_steps 5, never_started 3); malformed rows skipped: 0"),
        "{swf}"
    );
    assert!(
        swf.contains("missing_request (requested time = run time) 2"),
        "{swf}"
    );
    // 2026-10-01T00:00:00 UTC.
    assert!(swf.contains("; UnixStartTime: 1790812800\n"), "{swf}");
    assert_eq!(back.header.unix_start_time, Some(1_790_812_800));
    let w = &direct.workload;
    let users: Vec<String> = w
        .names
        .users
        .iter()
        .map(|(id, n)| format!("{id}={n}"))
        .collect();
    assert!(
        swf.contains(&format!("; Note: users by number: {}\n", users.join(" "))),
        "{swf}"
    );
    // Job 101, by hand from its row: submitted 60 s after the first job, ran 1-00:00:30, asked
    // 2-00:00:00 and 16 CPUs; 64G on 2 nodes is 32 GiB per node of 8 cores, 4 GiB (4,194,304 KB)
    // per processor; 4 V100s in all.
    let line = swf
        .lines()
        .find(|l| l.starts_with("101 "))
        .expect("job 101 written");
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 21, "{line}");
    let bob = w.names.users.iter().find(|(_, n)| *n == "bob").unwrap().0;
    assert_eq!(
        f[..11],
        [
            "101", "60", "-1", "86430", "16", "-1", "-1", "16", "172800", "4194304", "1"
        ]
    );
    assert_eq!(f[11], bob.to_string());
    assert_eq!(f[18..], ["4", "-1", "v100:2x8"]);
    // The standard fields alone, as another tool reads them (extended fields ignored).
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("plain.swf");
    std::fs::write(&copy, &swf).unwrap();
    let plain = schedlab::api::trace::load(
        &copy,
        false,
        &ReadOptions {
            extended: schedlab::swf::Extended::Ignore,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let ids: Vec<u64> = plain.workload.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [100, 101, 102, 103, 104, 106, 107, 108, 112]);
}

#[test]
fn job_tables_of_every_shipped_mapping_read_back_into_the_same_jobs() {
    for (source, name) in [
        ("workloads/samples/helios/cluster_log.csv", "helios"),
        ("workloads/samples/pm100/job_table.parquet", "pm100"),
        ("workloads/samples/philly/cluster_job_log.csv", "philly"),
        (
            "workloads/samples/alibaba_pai/pai_task_table.csv",
            "alibaba_pai",
        ),
    ] {
        let (direct, _, swf, rounded) = round_trip(source, Some(name));
        // Alibaba's task 4: 100 GB on each of 4 instances of 12 cores, 8,738,133.3 KB a core.
        assert_eq!(rounded, usize::from(name == "alibaba_pai"), "{name}");
        assert!(
            swf.contains(&format!("read as a job table through the mapping `{name}`")),
            "{swf}"
        );
        assert!(
            swf.contains(&format!(
                "; Note: {} records, {} jobs written; left out: {} ",
                direct.records,
                direct.workload.len(),
                direct.anomalies.skipped()
            )),
            "{name}: {swf}"
        );
    }
}

#[test]
fn a_batsim_workload_reads_back_into_the_same_jobs() {
    let (direct, back, swf, _) = round_trip("tests/fixtures/batsim/workload.json", None);
    // The fixture: 6 jobs, job 5's delay of 0 left out; nb_res 8.
    assert_eq!(direct.workload.len(), 5);
    assert_eq!(back.header.max_procs, Some(8));
    assert!(swf.contains("read as a Batsim JSON workload"), "{swf}");
    assert!(swf.contains("left out: 1 (zero_runtime 1)"), "{swf}");
}

#[test]
fn trace_info_reads_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = import(
        dir.path(),
        "workloads/samples/slurm/sacct.txt",
        &["--mapping", "slurm", "--keep-status", "COMPLETED"],
    );
    let info = schedlab(dir.path(), &["trace", "info", out.to_str().unwrap()]);
    let stdout = text(&info.stdout);
    assert!(info.status.success(), "{}", text(&info.stderr));
    // COMPLETED jobs of the sample: 100, 101, 106 (105_0), 107, 108.
    for line in [
        "jobs kept        5",
        "jobs skipped     0",
        "  nodes × per-node     5",
        "  with properties      2",
        "start (unix)     1790812800",
    ] {
        assert!(stdout.contains(line), "{line}:\n{stdout}");
    }
    let swf = std::fs::read_to_string(&out).unwrap();
    assert!(swf.contains("keeping status COMPLETED"), "{swf}");
    assert!(swf.contains("filtered_status "), "{swf}");
}

#[test]
fn bad_input_is_a_located_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    let sample = std::fs::read_to_string(root().join("workloads/samples/slurm/sacct.txt")).unwrap();
    std::fs::write(&bad, sample.replacen("2026-10-01T00:01:00", "yesterday", 1)).unwrap();
    let out = dir.path().join("out.swf");
    let run = schedlab(
        dir.path(),
        &[
            "trace",
            "import",
            bad.to_str().unwrap(),
            "--mapping",
            "slurm",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.txt:6:") && stderr.contains("yesterday"),
        "{stderr}"
    );
    assert!(!out.exists());
}

fn doc_block(marker: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/sources.md")).unwrap();
    let section = &doc[doc.find(marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).unwrap() + fence.len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

#[test]
fn the_documented_commands_and_header_are_what_import_does() {
    let dir = tempfile::tempdir().unwrap();
    let commands: Vec<String> = doc_block("## Importing to SWF", "sh")
        .lines()
        .filter(|l| l.starts_with("schedlab "))
        .map(|l| {
            // Inputs from the repository, outputs in the temporary folder.
            let r = root().display().to_string();
            l.replace(" workloads/", &format!(" {r}/workloads/"))
                .replace(" tests/", &format!(" {r}/tests/"))
        })
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    for command in &commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = schedlab(dir.path(), &args);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
    }
    // The documented header, line by line, except the lines it shortens with "…".
    let swf = std::fs::read_to_string(dir.path().join("sacct.swf")).unwrap();
    let version = format!("schedlab {} from", env!("CARGO_PKG_VERSION"));
    for line in doc_block("## Importing to SWF", "text").lines() {
        let line = line.replace("schedlab 0.1.0 from", &version);
        match line.split_once('…') {
            None => assert!(swf.contains(&format!("{line}\n")), "{line}:\n{swf}"),
            Some((head, tail)) => {
                assert!(swf.contains(head), "{line}:\n{swf}");
                assert!(swf.contains(tail.trim_end()), "{line}:\n{swf}");
            }
        }
    }
}
