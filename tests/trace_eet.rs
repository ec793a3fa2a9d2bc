//! `schedlab trace eet` (issue 13): the paper's Fig. 3 as a trace whose recorded waits give the
//! schedule, worked by hand; its Parquet files read back; memory per node from Alea's node
//! spec; bad input.

mod common;

use std::path::Path;

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Fig. 3 of the paper: two users with Table 1's jobs (arrival 0: 2 CPUs × 4 s; arrival 1:
/// 2 CPUs × 1 s) on 6 CPUs, so 3 each: EETs 4 and 3. Job 4 waits one second (start 2, end 3
/// = its EET). Job 5 (user 2) has no recorded wait.
const FIG3: &str = "; MaxProcs: 6
1 0 0 4 2 -1 -1 2 4 -1 1 1 1 -1 1 -1 -1 -1
2 1 0 1 2 -1 -1 2 1 -1 1 1 1 -1 1 -1 -1 -1
3 0 0 4 2 -1 -1 2 4 -1 1 2 1 -1 1 -1 -1 -1
4 1 1 1 2 -1 -1 2 1 -1 1 2 1 -1 1 -1 -1 -1
5 10 -1 1 1 -1 -1 1 1 -1 1 2 1 -1 1 -1 -1 -1
";

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    common::schedlab_in(dir, args)
}

fn ok_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn batch(path: &Path) -> arrow_array::RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    reader.next().unwrap().unwrap()
}

/// Column `name` of `b` as options (null → None), read with `get` from its array type `A`.
fn column<A: Array + 'static, T>(
    b: &arrow_array::RecordBatch,
    name: &str,
    get: fn(&A, usize) -> T,
) -> Vec<Option<T>> {
    let col = b.column_by_name(name).unwrap();
    let a = col.as_any().downcast_ref::<A>().unwrap();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| get(a, i)))
        .collect()
}

fn ints(b: &arrow_array::RecordBatch, name: &str) -> Vec<Option<i64>> {
    column(b, name, Int64Array::value)
}

fn bools(b: &arrow_array::RecordBatch, name: &str) -> Vec<Option<bool>> {
    column(b, name, BooleanArray::value)
}

fn floats(b: &arrow_array::RecordBatch, name: &str) -> Vec<Option<f64>> {
    column(b, name, Float64Array::value)
}

#[test]
fn figure_3_as_a_recorded_schedule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fig3.swf"), FIG3).unwrap();
    let v = ok_json(&run(
        dir.path(),
        &[
            "trace",
            "eet",
            "fig3.swf",
            "--format",
            "json",
            "--jobs-out",
            "jobs.parquet",
            "--users-out",
            "users.parquet",
            "--heatmap-out",
            "heat.parquet",
            "--usage-out",
            "usage.parquet",
            "--svg",
            "heat.svg",
            "--boxplot-svg",
            "box.svg",
        ],
    ));
    assert_eq!(v["system_cpus"], 6);
    assert_eq!(v["jobs"], 5);
    assert_eq!(v["without_wait"], 1);
    assert_eq!(v["summary"]["violated_jobs"], 0);
    assert_eq!(v["summary"]["judged_jobs"], 4);
    assert_eq!(v["summary"]["users_veet_at_most_35"], 1.0);

    // Rows in submission order: jobs 1, 3, 2, 4, 5.
    let jobs = batch(&dir.path().join("jobs.parquet"));
    assert_eq!(ints(&jobs, "job_id"), [1, 3, 2, 4, 5].map(Some).to_vec());
    // Job 5 (arrival 10, 1 CPU × 1 s) finds user 2's share untouched: EET 11.
    assert_eq!(ints(&jobs, "eet"), [4, 4, 3, 3, 11].map(Some).to_vec());
    assert_eq!(
        ints(&jobs, "start"),
        vec![Some(0), Some(0), Some(1), Some(2), None]
    );
    assert_eq!(
        ints(&jobs, "end"),
        vec![Some(4), Some(4), Some(2), Some(3), None]
    );
    assert_eq!(
        bools(&jobs, "violated"),
        vec![Some(false), Some(false), Some(false), Some(false), None]
    );
    // Memory is not measured: no memory EET.
    assert_eq!(ints(&jobs, "eet_memory"), vec![None; 5]);
    assert_eq!(
        ints(&jobs, "latest_start"),
        [0, 0, 2, 2, 10].map(Some).to_vec()
    );
    let users = batch(&dir.path().join("users.parquet"));
    assert_eq!(floats(&users, "capacity_cpu"), vec![Some(3.0), Some(3.0)]);
    assert_eq!(ints(&users, "judged"), vec![Some(2), Some(2)]);
    assert_eq!(batch_rows(&dir.path().join("heat.parquet")), 0);
    let usage = batch(&dir.path().join("usage.parquet"));
    // One one-minute bin: 2·4 + 2·1 + 2·4 + 2·1 = 20 CPU-seconds over 60 s.
    assert_eq!(floats(&usage, "cpu"), vec![Some(20.0 / 60.0)]);
    assert_eq!(floats(&usage, "cpu_fraction"), vec![Some(20.0 / 360.0)]);
    for svg in ["heat.svg", "box.svg"] {
        let text = std::fs::read_to_string(dir.path().join(svg)).unwrap();
        roxmltree::Document::parse(&text).unwrap();
    }
}

fn batch_rows(path: &Path) -> usize {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .metadata()
        .file_metadata()
        .num_rows() as usize
}

#[test]
fn a_late_job_is_violated_weighted_by_its_cpus_and_on_the_heatmap() {
    // Job 4 waits 2 s instead of 1: it ends at 4 > EET 3, tardy by 1 s, 2 CPUs → WT 2.
    let late = FIG3.replace("4 1 1 1 2", "4 1 2 1 2");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("late.swf"), late).unwrap();
    let v = ok_json(&run(
        dir.path(),
        &[
            "trace",
            "eet",
            "late.swf",
            "--format",
            "json",
            "--heatmap-out",
            "heat.parquet",
            "--jobs-out",
            "jobs.parquet",
        ],
    ));
    assert_eq!(v["summary"]["violated_jobs"], 1);
    // Users most tardy first: user 2 (VEET 1 of 2 judged = 50 %).
    let u2 = &v["users"][0];
    assert_eq!(
        (u2["user"].as_i64(), u2["veet"].as_f64()),
        (Some(2), Some(50.0))
    );
    assert_eq!(u2["weighted_tardiness"], 2);
    assert_eq!(v["summary"]["users_veet_at_most_35"], 0.5);
    let jobs = batch(&dir.path().join("jobs.parquet"));
    assert_eq!(ints(&jobs, "tardiness")[3], Some(1));
    assert_eq!(ints(&jobs, "weighted_tardiness")[3], Some(2));
    // Plotted from its latest start 2 for 1 s: one cell, bin 0 of 60 s, mean 1/60.
    let heat = batch(&dir.path().join("heat.parquet"));
    assert_eq!(ints(&heat, "time"), vec![Some(0)]);
    assert_eq!(floats(&heat, "violated_mean"), vec![Some(1.0 / 60.0)]);
    assert_eq!(ints(&heat, "violated_max"), vec![Some(1)]);
    // The table on stdout says the same.
    let out = run(dir.path(), &["trace", "eet", "late.swf"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("violated EETs  1 of 4 judged jobs (25.0 %)"),
        "{text}"
    );
}

#[test]
fn memory_per_node_from_alea_node_specs() {
    // Field 10 in bytes per node (as in wagap-2013). Job 1: 4 CPUs on 2 nodes (spec 2:ppn=2),
    // 2 GiB per node = 4 GiB. System 8 CPUs, 6 GiB for 2 users: 4 CPUs and 3 GiB each. The
    // CPU share fits (EET 10); memory needs 4 GiB × 10 s at 3 GiB/s: ⌈40/3⌉ = 14 s.
    let trace = "; MaxProcs: 8
1 0 0 10 4 -1 -1 4 10 2147483648 1 1 1 -1 1 -1 -1 -1 {1,1,2,2} q_1d 2:ppn=2
2 0 0 10 1 -1 -1 1 10 1073741824 1 2 1 -1 1 -1 -1 -1 {3} q_1d 1:ppn=1
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("alea.swf"), trace).unwrap();
    let args = [
        "trace",
        "eet",
        "alea.swf",
        "--memory",
        "6GiB",
        "--memory-unit",
        "bytes-per-node",
        "--jobs-out",
        "jobs.parquet",
        "--format",
        "json",
    ];
    let v = ok_json(&run(dir.path(), &args));
    assert_eq!(v["system_memory_kb"], 6 << 20);
    let jobs = batch(&dir.path().join("jobs.parquet"));
    assert_eq!(ints(&jobs, "memory_kb"), vec![Some(4 << 20), Some(1 << 20)]);
    assert_eq!(ints(&jobs, "eet_cpu"), vec![Some(10), Some(10)]);
    assert_eq!(ints(&jobs, "eet_memory"), vec![Some(14), Some(10)]);
    assert_eq!(ints(&jobs, "eet"), vec![Some(14), Some(10)]);
    // Read as the SWF standard (KB per processor) the same field asks for far more.
    let standard = ok_json(&run(
        dir.path(),
        &[
            "trace", "eet", "alea.swf", "--memory", "6GiB", "--format", "json",
        ],
    ));
    assert_eq!(standard["memory_unit"], "kb-per-proc");
    assert_eq!(standard["summary"]["violated_jobs"], 0);
    // A job without a node spec is one node of all its processors (the SWF reader's rule,
    // docs/swf.md): 1024 KB per node for 4 CPUs is 1024 KB in all, not 4 × 1024.
    std::fs::write(
        dir.path().join("plain.swf"),
        "; MaxProcs: 8\n1 0 0 10 4 -1 -1 4 10 1024 1 1 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "trace",
            "eet",
            "plain.swf",
            "--memory",
            "1GiB",
            "--memory-unit",
            "kb-per-node",
            "--jobs-out",
            "plain.parquet",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jobs = batch(&dir.path().join("plain.parquet"));
    assert_eq!(ints(&jobs, "memory_kb"), vec![Some(1024)]);
}

#[test]
fn capacities_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fig3.swf"), FIG3).unwrap();
    let eets = |extra: &[&str]| {
        let mut args = vec![
            "trace",
            "eet",
            "fig3.swf",
            "--format",
            "json",
            "--jobs-out",
            "j.parquet",
        ];
        args.extend_from_slice(extra);
        let v = ok_json(&run(dir.path(), &args));
        (ints(&batch(&dir.path().join("j.parquet")), "eet"), v)
    };
    // Half the default (1.5 CPUs each): job 1 (2 CPUs × 4 s) takes 1.5/s: ⌈8/1.5⌉ = 6.
    let (e, v) = eets(&["--capacity-scale", "0.5"]);
    assert_eq!(e[0], Some(6));
    assert!(v["capacity"].as_str().unwrap().contains("× 1/2"));
    // Shares 2 : 1 of 6 CPUs: user 1 expects 4, user 2 expects 2.
    let (_, v) = eets(&["--user-share", "1=2"]);
    assert_eq!(
        v["users"][0]["capacity_cpu"].as_f64().unwrap()
            + v["users"][1]["capacity_cpu"].as_f64().unwrap(),
        6.0
    );
    // Explicit: user 2 expects 1 CPU; job 3 (2 CPUs × 4 s, row 2) then takes 8 s.
    let (e, _) = eets(&["--user-capacity", "2:cpu=1"]);
    assert_eq!(e[1], Some(8));
    // A group capacity applies to each of its users; the user's own wins.
    let (e, _) = eets(&["--group-capacity", "1:cpu=1", "--user-capacity", "1:cpu=2"]);
    assert_eq!((e[0], e[1]), (Some(4), Some(8)));
}

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fig3.swf"), FIG3).unwrap();
    std::fs::write(
        dir.path().join("noheader.swf"),
        FIG3.lines().skip(1).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["noheader.swf"], "no MaxProcs header"),
        (&["fig3.swf", "--bin", "30"], "--bin must be at least 60"),
        (
            &["fig3.swf", "--bin", "60", "--cpus", "0"],
            "--cpus must be at least 1",
        ),
        (
            &["fig3.swf", "--user-capacity", "2:cpu=x"],
            "expected a non-negative decimal",
        ),
        (
            &["fig3.swf", "--user-capacity", "2:memory=1G"],
            "system's memory is not",
        ),
        (&["fig3.swf", "--user-share", "1=0"], "--user-share"),
        (
            &["fig3.swf", "--capacity-scale", "0"],
            "--capacity-scale must be above 0",
        ),
        (&["fig3.swf", "--memory", "lots"], "--memory"),
    ];
    for (args, message) in cases {
        let mut all = vec!["trace", "eet"];
        all.extend_from_slice(args);
        let out = run(dir.path(), &all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
