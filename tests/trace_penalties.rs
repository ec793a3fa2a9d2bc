//! `schedlab trace penalties` (issue 12; Klusáček & Rudová §4): the paper's Examples 3–5 on its
//! system of 10 nodes × 8 CPUs/16 GB plus one node of 80 CPUs/512 GB (160 CPUs, 672 GB), as an
//! Alea machine file and a three-job trace, with every figure worked out by hand; and bad input.

mod common;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch};

const GIB_KB: u64 = 1 << 20;

/// `schedlab trace penalties t.swf --machines sys.machines --memory kb_per_node` and `extra`,
/// run in `d`.
fn penalties(d: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "trace",
        "penalties",
        "t.swf",
        "--machines",
        "sys.machines",
        "--memory",
        "kb_per_node",
    ];
    args.extend_from_slice(extra);
    common::schedlab_in(d, &args)
}

/// The same writing `p.parquet`, the summary as JSON; it must succeed: the summary and the
/// file's batches.
fn penalties_json(d: &std::path::Path, extra: &[&str]) -> (serde_json::Value, Vec<RecordBatch>) {
    let mut args = vec!["-o", "p.parquet", "--format", "json"];
    args.extend_from_slice(extra);
    let out = penalties(d, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let batches = common::parquet_batches(&d.join("p.parquet"));
    (serde_json::from_slice(&out.stdout).unwrap(), batches)
}

/// Alea machine file: `id name nodes cpus_per_node rating ram_KB`.
fn machines() -> String {
    format!(
        "0\tsmall\t10\t8\t1\t{}\n1\tbig\t1\t80\t1\t{}\n",
        16 * GIB_KB,
        512 * GIB_KB
    )
}

/// Example 3 (1 CPU, 512 GB, user 1), Example 4 (80 CPUs, 80 GB, user 2), Example 5 (1 CPU,
/// 16 GB, user 3), 100 s each; memory per node (`--memory kb_per_node`: one node per job).
fn trace() -> String {
    let line = |id: u32, procs: u32, gib: u64, user: u32| {
        format!(
            "{id} {} 0 100 {procs} -1 -1 {procs} 100 {} 1 {user} 1 -1 -1 -1 -1 -1\n",
            id * 10,
            gib * GIB_KB
        )
    };
    line(1, 1, 512, 1) + &line(2, 80, 80, 2) + &line(3, 1, 16, 3)
}

fn column(batch: &RecordBatch, name: &str) -> Vec<Option<f64>> {
    let c = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no {name}"));
    (0..c.len())
        .map(|i| {
            if c.is_null(i) {
                None
            } else if let Some(a) = c.as_any().downcast_ref::<Float64Array>() {
                Some(a.value(i))
            } else {
                Some(c.as_any().downcast_ref::<Int64Array>().unwrap().value(i) as f64)
            }
        })
        .collect()
}

fn close(got: &[Option<f64>], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let g = g.expect("a value");
        assert!((g - w).abs() < 1e-3, "{got:?} against {want:?}");
    }
}

#[test]
fn the_papers_examples_3_to_5_worked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sys.machines"), machines()).unwrap();
    std::fs::write(d.join("t.swf"), trace()).unwrap();
    let (s, batches) = penalties_json(d, &[]);
    // pe_min against cpu: Example 3 80 against 1 (+7,900 %), Example 4 80 against 80 (not
    // affected), Example 5 2.5 against 1 (+150 %). Affected: 2 of 3 jobs; CPU time
    // (1 + 1) × 100 of (1 + 80 + 1) × 100 = 200 / 8,200; users 1 and 3 of 3. Both increases are
    // ≥ 20 % and ≥ 100 %; median (rank ⌈0.5 · 2⌉ = 1) 1.5, 90th percentile (rank 2) 79.
    assert_eq!(s["jobs"], 3);
    assert_eq!(s["infeasible"], 0);
    assert_eq!(s["affected_jobs"], 2);
    assert_eq!(s["affected_users"], 2);
    assert_eq!(s["users"], 3);
    let f = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("{k}: {s}"));
    assert!((f("affected_job_fraction") - 2.0 / 3.0).abs() < 1e-12);
    assert!((f("cpu_time") - 8200.0).abs() < 1e-9);
    assert!((f("affected_cpu_time_fraction") - 200.0 / 8200.0).abs() < 1e-12);
    assert!((f("affected_user_fraction") - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(f("increase_at_least_20pct"), 1.0);
    assert_eq!(f("increase_at_least_100pct"), 1.0);
    assert!((f("increase_median") - 1.5).abs() < 1e-9);
    assert!((f("increase_p90") - 79.0).abs() < 1e-9);

    // Every job's penalties. F3 (pe_global) = max(cores / 160, memory / 672 GB) × 160:
    // Example 3 512/672 × 160 = 121.905, Example 4 max(0.5, 0.119) × 160 = 80, Example 5
    // max(1/160, 16/672) × 160 = 3.810. Local PE = max(cores / node cores, memory / node
    // memory) × node cores: Example 3 only on the big node (80), Example 4 only there (80),
    // Example 5 8 on a small node and 2.5 on the big one, so F5 = 2.5. standard_job (1 core,
    // 1 GiB): max(cores, GiB) = 512, 80, 16.
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    close(&column(b, "job_id"), &[1.0, 2.0, 3.0]);
    close(&column(b, "cpu"), &[1.0, 80.0, 1.0]);
    close(&column(b, "pe_global"), &[121.905, 80.0, 3.810]);
    close(&column(b, "pe_local_min"), &[80.0, 80.0, 2.5]);
    close(&column(b, "pe_local_max"), &[80.0, 80.0, 8.0]);
    close(&column(b, "pe_min"), &[80.0, 80.0, 2.5]);
    close(&column(b, "standard_job"), &[512.0, 80.0, 16.0]);
    close(&column(b, "classes"), &[1.0, 1.0, 2.0]);
    close(&column(b, "increase"), &[79.0, 0.0, 1.5]);

    // The table names the paper's figures beside ours.
    let table = penalties(d, &[]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("2 = 66.7 %") && text.contains("under 2 %"),
        "{text}"
    );
}

#[test]
fn without_a_machine_file_it_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.swf"), trace()).unwrap();
    let out = common::schedlab_in(dir.path(), &["trace", "penalties", "t.swf"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--machines"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Node properties for a machine file (which lists none): `--properties` gives every node some,
/// `--cluster-properties NAME=LIST` one cluster's nodes. One job (1 CPU, 4 GB, asking for
/// property `fast` in Alea's node spec): local PE max(1/8, 4/16) × 8 = 2 on a small node,
/// max(1/80, 4/512) × 80 = 1 on the big one.
#[test]
fn node_properties_can_be_given_to_the_system() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sys.machines"), machines()).unwrap();
    let line = format!(
        "1 0 0 100 1 -1 -1 1 100 {} 1 7 1 -1 -1 -1 -1 -1 {{1}} q 1:ppn=1:fast\n",
        4 * GIB_KB
    );
    std::fs::write(d.join("t.swf"), line).unwrap();
    let run = |extra: &[&str]| {
        let (s, batches) = penalties_json(d, extra);
        let batch = &batches[0];
        (s, column(batch, "classes"), column(batch, "pe_min"))
    };
    // No properties: no class has `fast`, the job is left out.
    let (s, classes, pe_min) = run(&[]);
    assert_eq!(s["infeasible"], 1);
    assert_eq!((classes, pe_min), (vec![Some(0.0)], vec![None]));
    // Only the big node has it: one class, PE 1.
    let (s, classes, pe_min) = run(&["--cluster-properties", "big=fast,other"]);
    assert_eq!(s["infeasible"], 0);
    assert_eq!((classes, pe_min), (vec![Some(1.0)], vec![Some(1.0)]));
    // Only the small nodes: PE 2, +100 % over cpu.
    let (s, classes, pe_min) = run(&["--cluster-properties", "small=fast"]);
    assert_eq!(s["affected_jobs"], 1);
    assert_eq!((classes, pe_min), (vec![Some(1.0)], vec![Some(2.0)]));
    // Every node: both classes, the cheaper PE.
    let (_, classes, pe_min) = run(&["--properties", "x,fast"]);
    assert_eq!((classes, pe_min), (vec![Some(2.0)], vec![Some(1.0)]));

    // A cluster the machine file does not have: a clear error naming the clusters it has.
    let out = penalties(d, &["--cluster-properties", "huge=fast"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no cluster `huge`") && err.contains("small, big"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
