//! Builders shared by the integration tests.
#![allow(dead_code)]

pub mod arb_workload;
pub mod easy_reference;
pub mod easy_runs;
pub mod fairshare_reference;
pub mod node_policies;
pub mod project;
pub mod shared;
pub mod shipped;

use proptest::prelude::*;
use schedlab::sim::reservation::{OnConflict, Placement as When, ReservationRequest, Reservations};
use schedlab::sim::topology::{Cluster, NodeClass, Topology};
use schedlab::sim::{Allocation, Job, Machine, Overrun, SchedulerKind, SimConfig, Time};
use std::ops::{Range, RangeInclusive};

/// A job with runtime = requested time unless `requested` says otherwise.
pub fn job(id: u64, submit: Time, procs: u32, runtime: Time, requested: Time) -> Job {
    Job {
        id,
        submit,
        runtime,
        requested_time: requested,
        procs,
        cpu_time: -1,
        user: (id % 7) as i32,
        group: -1,
        queue: -1,
        partition: -1,
        request: Default::default(),
    }
}

/// A topology of the given clusters (exclusive nodes or shared, and their node classes), the
/// clusters named `c0`, `c1`, … and each cluster's classes `k0`, `k1`, …: the shape the random
/// topologies of the property tests take.
pub fn numbered_topology(clusters: impl IntoIterator<Item = (bool, Vec<NodeClass>)>) -> Topology {
    Topology::new(
        clusters
            .into_iter()
            .enumerate()
            .map(|(i, (exclusive, mut classes))| {
                for (k, class) in classes.iter_mut().enumerate() {
                    class.name = format!("k{k}");
                }
                let allocation = if exclusive {
                    Allocation::ExclusiveNodes
                } else {
                    Allocation::Shared
                };
                Cluster::new(format!("c{i}"), allocation, classes)
            })
            .collect(),
    )
}

/// The ranges the fields of generated advance-reservation requests are drawn from: creation
/// time, notice (start − creation), duration and width, and `most` − 1 requests at most.
#[derive(Clone, Debug)]
pub struct RequestRanges {
    pub created: Range<Time>,
    pub notice: Range<Time>,
    pub duration: Range<Time>,
    pub width: RangeInclusive<u64>,
    pub most: usize,
}

impl Default for RequestRanges {
    /// Created in the first 300 s, starting up to 150 s later, for up to 2 minutes, 1 to 8
    /// units wide, up to 9 requests.
    fn default() -> Self {
        RequestRanges {
            created: 0..300,
            notice: 0..150,
            duration: 1..120,
            width: 1..=8,
            most: 10,
        }
    }
}

/// Reservation requests with fields drawn from `ranges`, numbered from 1, each with the owner
/// and cluster that `owner_and_cluster` draws (a `Just` for one fixed owner on any cluster).
pub fn arb_requests_within<S>(
    ranges: RequestRanges,
    owner_and_cluster: S,
) -> impl Strategy<Value = Vec<ReservationRequest>>
where
    S: Strategy<Value = (String, Option<String>)>,
{
    let fields = (
        ranges.created,
        ranges.notice,
        ranges.duration,
        ranges.width,
        owner_and_cluster,
    );
    prop::collection::vec(fields, 0..ranges.most).prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(
                |(i, (created, notice, duration, width, (owner, cluster)))| ReservationRequest {
                    id: i as u64 + 1,
                    owner,
                    created,
                    start: created + notice,
                    duration,
                    width,
                    cluster,
                },
            )
            .collect()
    })
}

/// Up to `most` − 1 requests of the default ranges, owned by `o`, on any cluster.
pub fn arb_reservation_requests(most: usize) -> impl Strategy<Value = Vec<ReservationRequest>> {
    let ranges = RequestRanges {
        most,
        ..RequestRanges::default()
    };
    arb_requests_within(ranges, Just(("o".to_string(), None)))
}

pub fn pool(procs: u32, scheduler: SchedulerKind) -> SimConfig {
    SimConfig {
        order: Default::default(),
        machine: Machine::pool(procs),
        scheduler,
        interval: None,
        overrun: Overrun::Kill,
        placement: Default::default(),
    }
}

/// The cells of the first Markdown table row in `md` that starts with `prefix`, trimmed.
pub fn markdown_row<'a>(md: &'a str, prefix: &str) -> Vec<&'a str> {
    let row = md
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no table row {prefix}: {md}"));
    table_cells(row)
}

/// The cells of one Markdown table row, trimmed.
pub fn table_cells(row: &str) -> Vec<&str> {
    row.trim_matches('|').split('|').map(str::trim).collect()
}

/// A temporary project folder with `experiments/` and `workloads/kth.swf.gz` (the bundled
/// KTH-SP2 trace), as a user's checkout would have.
pub fn project_with_kth() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("experiments")).unwrap();
    std::fs::create_dir_all(dir.path().join("workloads")).unwrap();
    let kth = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    std::fs::copy(kth, dir.path().join("workloads/kth.swf.gz")).unwrap();
    dir
}

/// A command's output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the schedlab binary in `dir` with `args`.
pub fn schedlab_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Runs every experiment of the project in `dir`, then renders its reports dated 2026-01-01;
/// panics with the command's stderr if either fails.
pub fn run_and_report(dir: &std::path::Path) {
    for args in [&["run", "--quiet"][..], &["report", "--date", "2026-01-01"]] {
        let out = schedlab_in(dir, args);
        assert!(
            out.status.success(),
            "schedlab {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A Float64 column of a result file by cell: cell → values (`None` for nulls), in file order.
pub fn cell_column(
    path: &std::path::Path,
    name: &str,
) -> std::collections::BTreeMap<String, Vec<Option<f64>>> {
    use arrow_array::{Array, Float64Array, StringArray};
    let mut out: std::collections::BTreeMap<String, Vec<Option<f64>>> = Default::default();
    for b in parquet_batches(path) {
        let column = |n: &str| {
            b.column_by_name(n)
                .unwrap_or_else(|| panic!("{}: no column {n}", path.display()))
        };
        let (cell, values) = (column("cell"), column(name));
        let cell = cell.as_any().downcast_ref::<StringArray>().unwrap();
        let values = values.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(cell.value(i).to_string())
                .or_default()
                .push((!values.is_null(i)).then(|| values.value(i)));
        }
    }
    out
}

/// Every record batch of a Parquet file, read with the parquet crate's Arrow reader.
pub fn parquet_batches(path: &std::path::Path) -> Vec<arrow_array::RecordBatch> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Peak resident memory (KiB) of a finished child that succeeded.
pub fn peak_rss(child: std::process::Child) -> i64 {
    let (status, peak) = wait_with_peak_rss(child);
    assert_eq!(status, 0, "the run succeeds");
    peak
}

/// Peak resident memory (KiB) and exit status of a finished child.
pub fn wait_with_peak_rss(child: std::process::Child) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: rusage is plain data; the pid is our own unwaited child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    std::mem::forget(child);
    (status, usage.ru_maxrss)
}

/// Reservation request 1 (owner `o`), made at `created` for `width` units (nodes on a
/// topology) over [`start`, `start + duration`), on `cluster` or any.
pub fn reserve(
    created: Time,
    start: Time,
    duration: Time,
    width: u64,
    cluster: Option<&str>,
) -> ReservationRequest {
    ReservationRequest {
        id: 1,
        owner: "o".into(),
        created,
        start,
        duration,
        width,
        cluster: cluster.map(Into::into),
    }
}

/// `requests` placed at their requested times, a conflict rejected, no throttle.
pub fn at_requested_times(requests: Vec<ReservationRequest>) -> Reservations {
    Reservations {
        requests,
        placement: When::AtRequestedTime,
        on_conflict: OnConflict::Reject,
        ..Reservations::default()
    }
}

/// A property test's configuration: `default` random cases, or `PROPTEST_CASES` when that is
/// set, so that one variable runs every property test longer when hunting a rare case
/// (`PROPTEST_CASES=20000 cargo test --release --test node_easy_index`). A count written into
/// the configuration would otherwise override the variable, which proptest reads only as the
/// default.
pub fn proptest_cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        // proptest's default allows 1,024 rejected cases in all (`prop_assume!`), sized for
        // its default of 256 cases: a longer run keeps the same share.
        max_global_rejects: cases.saturating_mul(4).max(1024),
        ..ProptestConfig::default()
    }
}

/// Withdraws a waiting job without starting it, as the engine does one that leaves the queue
/// (a CPU quota): the `i`-th (modulo) of the positions not in `starts` joins `starts` (kept
/// sorted, for `Queue::remove_positions`) and the queue is marked changed. Nothing when every
/// position already starts.
pub fn withdraw_one(queue: &mut schedlab::sim::queue::Queue, starts: &mut Vec<usize>, i: usize) {
    if queue.len() <= starts.len() {
        return;
    }
    let pos = (0..queue.len())
        .filter(|p| !starts.contains(p))
        .nth(i % (queue.len() - starts.len()))
        .unwrap();
    starts.push(pos);
    starts.sort_unstable();
    queue.mark_changed();
}
