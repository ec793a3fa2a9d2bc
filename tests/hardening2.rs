//! Regression tests for issue 37 (hardening, second pass), one per item, each named after the
//! behaviour it guards: machine and limit files that cannot panic, sizes bounded before anything
//! is allocated for them, every reader fuzzed, bounded report templates, clear errors for
//! selections that leave no job. (Issue 16's pass: tests/hardening.rs.)

use std::fs;
use std::path::{Path, PathBuf};

mod common;

use common::project::Project;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn machines_error(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "m.swf.machines", bytes);
    let err = schedlab::machines::read_path(&path).unwrap_err();
    assert!(err.contains("m.swf.machines"), "the file is named: {err}");
    err
}

// ----------------------------------------------------------------------------------------------
// Machine and limit files

/// A later line with fewer columns than the first is an error at its line saying what was
/// expected (it panicked on an index out of bounds).
#[test]
fn a_machine_file_line_shorter_than_the_first_is_a_located_error_not_a_panic() {
    let err = machines_error(b"0 zewura 20 80 1 529426432\n1 zegox 48\n");
    assert!(err.contains("line 2:"), "{err}");
    assert!(err.contains("expected 6 columns"), "{err}");
    assert!(err.contains("found 3"), "{err}");
    let err = machines_error(b"; AleaNG\n0 a 4 1 1 256 dedicated 4\n1 b 64 1 1 256\n");
    assert!(err.contains("line 3:"), "{err}");
    assert!(err.contains("expected 8 columns"), "{err}");
}

/// An 8-column AleaNG line after a 6-column Alea first line is refused: it was read as Alea and
/// lost its GPUs and properties without a word.
#[test]
fn an_aleang_line_in_an_alea_machine_file_is_refused_not_read_without_its_gpus() {
    let err = machines_error(b"0 a 2 8 1 1024\n1 gpu 2 8 1 16 ib 4\n");
    assert!(err.contains("line 2:"), "{err}");
    assert!(err.contains("an AleaNG line in an Alea file"), "{err}");
}

/// Duplicate queue names in AleaNG's `.queues` are refused at their line, as a manifest refuses
/// them.
#[test]
fn duplicate_queue_names_in_a_queues_file_are_refused_at_their_line() {
    let err = schedlab::machines::aleang_limits::parse_queues("0 batch 100 10\n1 batch 50 20\n")
        .unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.message.contains("`batch`"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "w.swf", b"");
    write(
        dir.path(),
        "w.swf.queues",
        b"0 batch 100 10\n1 batch 50 20\n",
    );
    let err = schedlab::machines::aleang_limits::read_beside(&trace).unwrap_err();
    assert!(err.contains("w.swf.queues: line 2:"), "{err}");
}

/// A machine or limit file that is not UTF-8 is an error at the line and byte where it stops
/// being text, naming the file (it was "stream did not contain valid UTF-8", nothing more).
#[test]
fn non_utf8_machine_and_limit_files_name_the_file_line_and_byte() {
    let err = machines_error(b"0 a 2 8 1 1024\n1 b\xe9 2 8 1 1024\n");
    assert!(
        err.contains("line 2: byte 4 is not valid UTF-8 (0xe9)"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "w.swf", b"");
    write(dir.path(), "w.swf.queues", b"0 batch 100 10\n");
    write(dir.path(), "w.swf.users", b"0 u 1 10\n1 \xff 1 10\n");
    let err = schedlab::machines::aleang_limits::read_beside(&trace).unwrap_err();
    assert!(err.contains("w.swf.users: line 2: byte 3"), "{err}");
}

/// Through a manifest, as `plan` loads it: the machine file's problem comes with the manifest's
/// line and the file's.
#[test]
fn plan_reports_a_bad_machine_file_line_with_both_locations() {
    let p = Project::new();
    fs::write(
        p.path().join("workloads/bad.swf.machines"),
        "0 a 2 8 1 1024\n1 b 2\n",
    )
    .unwrap();
    let manifest = p.manifest(
        "bad-machines",
        "name: bad-machines
workloads:
  kth: {trace: ../workloads/kth.swf.gz}
clusters:
  mc: {machines: ../workloads/bad.swf.machines}
schedulers:
  easy: {policy: easy}
",
    );
    let err = schedlab::manifest::load(&manifest).unwrap_err().to_string();
    assert!(err.contains("bad-machines.yaml:5:"), "{err}");
    assert!(err.contains("bad.swf.machines: line 2:"), "{err}");
    let out = p.schedlab(&["plan"]);
    assert_eq!(out.status.code(), Some(2), "an input error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 2:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// ----------------------------------------------------------------------------------------------
// Sizes bounded before allocating

/// 4,000,000,000 cores per node (machine file or manifest topology) is a located error at read
/// time; it aborted on a 16 GB allocation when the simulation began.
#[test]
fn four_billion_cores_per_node_is_a_located_error_before_allocating() {
    let err = machines_error(b"0 big 1 4000000000 1 1024\n");
    assert!(err.contains("line 1: column 4"), "{err}");
    assert!(
        err.contains("4000000000 cores per node; at most 1048576"),
        "{err}"
    );

    let p = Project::new();
    let manifest = p.manifest(
        "huge-node",
        "name: huge-node
workloads:
  kth: {trace: ../workloads/kth.swf.gz}
clusters:
  huge:
    topology:
      c: {nodes: [{count: 1, cores: 4000000000}]}
schedulers:
  easy: {policy: easy}
",
    );
    let err = schedlab::manifest::load(&manifest).unwrap_err().to_string();
    assert!(err.contains("huge-node.yaml:7:"), "{err}");
    assert!(
        err.contains("4000000000 cores per node; at most 1048576"),
        "{err}"
    );
}

/// A pool of 500,000,000 one-processor nodes is refused at plan time (and by `simulate`) with
/// the node count and the bound; it aborted on a 12 GB allocation.
#[test]
fn half_a_billion_one_processor_nodes_are_refused_at_plan_time() {
    let p = Project::new();
    let manifest = p.manifest(
        "many-nodes",
        "name: many-nodes
workloads:
  kth: {trace: ../workloads/kth.swf.gz}
clusters:
  pool: {procs: 500000000, node_size: 1}
schedulers:
  easy: {policy: easy}
",
    );
    let err = schedlab::manifest::load(&manifest).unwrap_err().to_string();
    assert!(err.contains("many-nodes.yaml:5:"), "{err}");
    assert!(err.contains("500000000 nodes; at most 16777216"), "{err}");

    let err = schedlab::api::simulate::machine(500_000_000, Some(1), ["--procs", "--node-size"])
        .unwrap_err();
    assert!(err.to_string().contains("500000000 nodes"), "{err}");
}

/// More than the 16.7 M-node limit in a machine file is refused at the line that crosses it.
#[test]
fn a_machine_file_beyond_the_node_limit_is_refused_at_the_line_that_crosses_it() {
    let err = machines_error(b"0 a 10000000 1 1 1\n1 b 10000000 1 1 1\n");
    assert!(err.contains("line 2:"), "{err}");
    assert!(err.contains("20000000 nodes; at most 16777216"), "{err}");
}

// ----------------------------------------------------------------------------------------------
// Report templates

/// One small cell: KTH's first 300 jobs under EASY.
const ONE_CELL: &str = "name: one
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
    first_jobs: 300
clusters:
  pool: {procs: 100}
schedulers:
  easy: {policy: easy}
";

/// A template that would render 160 GB stops at its budget with an error that says so; it ran
/// until the process hit the memory cap.
#[test]
fn a_report_template_rendering_unbounded_output_stops_at_its_budget() {
    let p = Project::new();
    fs::write(
        p.path().join("experiments/huge.html.j2"),
        "{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxxxxxxxx{% endfor %}{% endfor %}",
    )
    .unwrap();
    p.manifest(
        "one",
        &format!("{ONE_CELL}reports:\n  formats: [html]\n  template: huge.html.j2\n"),
    );
    let (out, _) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = std::time::Instant::now();
    let out = p.schedlab(&["report"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("HTML template"), "{err}");
    assert!(err.contains("budget"), "{err}");
    assert!(!p.path().join("reports/one.html").exists());
    assert!(started.elapsed().as_secs() < 60, "stopped early");
}

// ----------------------------------------------------------------------------------------------
// Selections that leave no job

/// A workload filter that leaves no job is an error naming the filter (it was an internal Arrow
/// error at the metrics step: "must either specify a row count or at least one column"). Since
/// issue 35 it is refused when the run is planned, located at the filter's key, with the trace's
/// span, and nothing runs.
#[test]
fn a_filter_that_leaves_no_job_is_an_error_naming_the_filter() {
    let p = Project::new();
    p.manifest(
        "one",
        &ONE_CELL.replace("first_jobs: 300\n", "first_jobs: 300\n    users: [99999]\n"),
    );
    let (out, _) = p.run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("failed to plan experiments/one.yaml"), "{err}");
    assert!(err.contains("at workloads.kth.users:"), "{err}");
    assert!(
        err.contains("expected a selection that keeps at least one job, but users: [99999], first_jobs: 300 keep none"),
        "{err}"
    );
    assert!(!err.contains("row count"), "{err}");
    assert!(!p.path().join("results/one").exists(), "nothing is written");
}

/// A queue setup that refuses every job is an error naming the setup and the refusals.
#[test]
fn a_queue_setup_that_leaves_no_job_is_an_error_naming_the_setup() {
    let p = Project::new();
    p.manifest(
        "one",
        &format!(
            "{ONE_CELL}queues:\n  nowhere:\n    queues:\n      - {{name: only, swf_queue: [77]}}\ngrid:\n  axes:\n    queues: [nowhere]\n"
        ),
    );
    let (out, _) = p.run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no job ran"), "{err}");
    assert!(err.contains("queue setup `nowhere`"), "{err}");
    assert!(err.contains("300 rejected_no_queue"), "{err}");
    assert!(!err.contains("row count"), "{err}");
}

/// `trace stats -o` on a trace whose every line is skipped says there is no job, and writes
/// nothing.
#[test]
fn trace_stats_on_a_trace_with_every_line_skipped_says_there_is_no_job() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "junk.swf", b"; MaxProcs: 10\nfoo bar\nbaz\n");
    let parquet = dir.path().join("stats.parquet");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["trace", "stats", "--lenient"])
        .arg(&trace)
        .arg("-o")
        .arg(&parquet)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no job to describe"), "{err}");
    assert!(err.contains("2 malformed lines skipped"), "{err}");
    assert!(!parquet.exists());
}

// ----------------------------------------------------------------------------------------------
// The cache

/// A cache entry's file replaced by a FIFO or a directory is quarantined and recomputed; the
/// run never opens the FIFO (it blocked forever) and no longer fails on the directory (it failed
/// every run, and `gc` kept it).
#[test]
fn cache_entry_files_replaced_by_a_fifo_or_a_directory_are_quarantined_and_recomputed() {
    let p = Project::new();
    p.manifest("one", ONE_CELL);
    let (out, _) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let original = p.published("one");
    let entries = p.entry_dirs();
    let aggregate = entries
        .iter()
        .find(|d| d.join("summary.parquet").exists())
        .unwrap()
        .clone();
    let metrics = entries
        .iter()
        .find(|d| **d != aggregate && d.join("jobs.parquet").exists())
        .unwrap()
        .clone();
    let fifo = aggregate.join("summary.parquet");
    fs::remove_file(&fifo).unwrap();
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    fs::remove_file(metrics.join("jobs.parquet")).unwrap();
    fs::create_dir(metrics.join("jobs.parquet")).unwrap();
    fs::remove_dir_all(p.path().join("results/one")).unwrap();

    let log = p.path().join("events.jsonl");
    let mut child = p
        .cmd(&["run", "--quiet", "--events", log.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the run blocked on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("summary.parquet is a FIFO"), "{err}");
    assert!(err.contains("jobs.parquet is a directory"), "{err}");
    let events = common::project::read_events(&log);
    let ran: Vec<_> = events.iter().filter(|(_, o)| *o == "ran").collect();
    assert_eq!(
        ran.len(),
        2,
        "the metrics node and the aggregate: {events:?}"
    );
    assert_eq!(
        p.published("one"),
        original,
        "recomputed results are the same"
    );

    let out = p.schedlab(&["gc"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = fs::read_dir(p.state().join("quarantine")).map_or(0, |d| d.count());
    assert_eq!(left, 0, "gc removes the quarantine");
}

/// A trace edited in place with its size and modification time restored (as `cp -p`,
/// `rsync -t`, `tar` and `unzip` leave it) is hashed again: its digest follows the content.
#[test]
fn a_trace_edited_in_place_with_size_and_mtime_restored_gets_a_new_digest() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(
        dir.path(),
        "t.swf",
        b"1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let set_mtime = |t| {
        fs::File::options()
            .write(true)
            .open(&trace)
            .unwrap()
            .set_modified(t)
            .unwrap()
    };
    set_mtime(old);
    let state = dir.path().join("state");
    let mut cache = schedlab::cache::DigestCache::load(&state);
    let before = cache.digest(&trace).unwrap();
    cache.save().unwrap();
    // Same length, other content, written in place (same inode), mtime restored.
    {
        use std::io::{Seek, Write};
        let mut f = fs::File::options().write(true).open(&trace).unwrap();
        f.seek(std::io::SeekFrom::Start(8)).unwrap();
        f.write_all(b"2").unwrap();
    }
    set_mtime(old);
    let mut cache = schedlab::cache::DigestCache::load(&state);
    let after = cache.digest(&trace).unwrap();
    assert_eq!(after.bytes, before.bytes);
    assert_ne!(after, before, "the digest follows the content");
    assert_eq!(
        after.blake3,
        blake3::hash(&fs::read(&trace).unwrap())
            .to_hex()
            .to_string()
    );
}

// ----------------------------------------------------------------------------------------------
// Periodic schedulers: idle ticks

mod idle_ticks {
    use std::cell::Cell;
    use std::rc::Rc;

    use proptest::prelude::*;
    use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
    use schedlab::sim::scheduler::{Scheduler, View};
    use schedlab::sim::{
        Job, Machine, Overrun, SchedulerKind, SimConfig, SimError, SimOutcome, Time, Workload,
        engine::simulate_with_every_tick, simulate_with,
    };

    use super::common;

    /// A scheduler that counts the calls it gets.
    struct Counting {
        inner: Box<dyn Scheduler>,
        calls: Rc<Cell<u64>>,
    }

    impl Scheduler for Counting {
        fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
            self.calls.set(self.calls.get() + 1);
            self.inner.schedule(view, starts);
        }
        fn failure(&mut self) -> Option<SimError> {
            self.inner.failure()
        }
        fn started(&mut self, now: Time, job: u32) {
            self.inner.started(now, job);
        }
    }

    /// The outcome and the scheduler's calls, skipping idle ticks or asking at every one.
    fn run(w: &Workload, config: &SimConfig, every_tick: bool) -> (SimOutcome, u64) {
        let calls = Rc::new(Cell::new(0));
        let order = config.order.build(w, &config.machine).unwrap();
        let scheduler = Box::new(Counting {
            inner: config.scheduler.build_ordered(order),
            calls: calls.clone(),
        });
        let out = if every_tick {
            simulate_with_every_tick(w, config, scheduler)
        } else {
            simulate_with(w, config, scheduler)
        }
        .unwrap();
        (out, calls.get())
    }

    fn config(machine: Machine, scheduler: SchedulerKind, interval: Time) -> SimConfig {
        SimConfig {
            interval: Some(interval),
            ..common::pool(1, scheduler)
        }
        .with_machine(machine)
    }

    trait WithMachine {
        fn with_machine(self, machine: Machine) -> Self;
    }

    impl WithMachine for SimConfig {
        fn with_machine(mut self, machine: Machine) -> Self {
            self.machine = machine;
            self
        }
    }

    /// Two jobs, the first holding the whole machine for 10^6 s, the second waiting for it,
    /// with `interval: 1`: a handful of scheduler calls instead of one per second, and the same
    /// schedule, instants and recorded calls as asking at every tick.
    #[test]
    fn a_periodic_scheduler_is_not_asked_at_ticks_where_nothing_can_start() {
        let w = Workload::new(vec![
            common::job(1, 0, 8, 1_000_000, 1_000_000),
            common::job(2, 5, 8, 10, 10),
        ]);
        let c = config(Machine::pool(8), SchedulerKind::Easy, 1);
        let (skipping, calls) = run(&w, &c, false);
        let (every, all_calls) = run(&w, &c, true);
        assert_eq!(
            skipping, every,
            "the same outcome, instants and recorded calls"
        );
        assert!(all_calls > 999_990, "{all_calls}");
        assert!(calls <= 4, "{calls} calls");
        assert_eq!(skipping.jobs[1].start, 1_000_000);
    }

    fn arb_jobs() -> impl Strategy<Value = Vec<Job>> {
        prop::collection::vec((0i64..2000, 1u32..12, 1i64..400, 0i64..3), 1..25)
            .prop_map(|raw| {
                raw.into_iter()
                    .enumerate()
                    .map(|(i, (submit, procs, runtime, slack))| {
                        let requested = runtime * (1 + slack) + slack;
                        let mut j = common::job(i as u64 + 1, submit, procs, runtime, requested);
                        j.user = (i % 3) as i32;
                        j
                    })
                    .collect::<Vec<_>>()
            })
            .prop_map(|mut jobs| {
                jobs.sort_by_key(|j| j.submit);
                jobs
            })
    }

    /// Skipping idle ticks changes nothing a run produces (jobs, instants, recorded calls)
    /// for every rule, order and overrun policy, and never asks more often; in many cases it
    /// asks less (the property is not vacuous).
    #[test]
    fn skipping_idle_ticks_changes_no_outcome() {
        let strategy = (
            arb_jobs(),
            prop_oneof![
                (8u32..24).prop_map(Machine::pool),
                ((3u32..8), (1u32..4)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
            ],
            0..4usize,
            0..3usize,
            prop::sample::select(vec![1i64, 7, 60, 600]),
            any::<bool>(),
        );
        let fewer = Cell::new(0u32);
        let cases = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(200);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases,
            ..ProptestConfig::default()
        });
        runner
            .run(
                &strategy,
                |(jobs, machine, rule, order, interval, overrun)| {
                    let w = Workload::new(jobs);
                    let rule = [
                        SchedulerKind::Fcfs,
                        SchedulerKind::Easy,
                        SchedulerKind::Conservative,
                        SchedulerKind::Aggressive,
                    ][rule];
                    let mut c = config(machine, rule, interval);
                    c.order = OrderSpec {
                        kind: [OrderKind::Fcfs, OrderKind::Fairshare, OrderKind::Sjf][order],
                        ..OrderSpec::default()
                    };
                    c.overrun = if overrun {
                        Overrun::Continue
                    } else {
                        Overrun::Kill
                    };
                    let (skipping, calls) = run(&w, &c, false);
                    let (every, all_calls) = run(&w, &c, true);
                    prop_assert_eq!(&skipping, &every);
                    prop_assert!(calls <= all_calls);
                    if calls < all_calls {
                        fewer.set(fewer.get() + 1);
                    }
                    Ok(())
                },
            )
            .unwrap();
        assert!(
            fewer.get() > 50,
            "only {} of 200 cases skipped a tick",
            fewer.get()
        );
    }
}

// ----------------------------------------------------------------------------------------------
// Result sets published whole

fn inode(path: &Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&fs::metadata(path).unwrap())
}

/// A new result set replaces `results/<experiment>/` whole (a new folder renamed into place, not
/// files replaced one by one next to the old ones); what interrupted publishes left
/// (`results/.tmp-*`, `results/<experiment>/.tmp-*`) is removed by the next run and by `gc`;
/// the user's own files in the folder stay.
#[test]
fn result_sets_are_published_whole_and_interrupted_publishes_are_swept() {
    let p = Project::new();
    p.manifest("one", ONE_CELL);
    let (out, _) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = p.path().join("results/one");
    let before = inode(&dir);
    let first = p.published("one");
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    let leftovers = [
        p.path().join("results/.tmp-publish-1-0-0"),
        dir.join(".tmp-Ab12Cd"),
    ];
    fs::create_dir(&leftovers[0]).unwrap();
    fs::write(leftovers[0].join("jobs.parquet"), vec![0u8; 4096]).unwrap();
    fs::write(&leftovers[1], vec![0u8; 4096]).unwrap();

    p.manifest("one", &ONE_CELL.replace("policy: easy", "policy: fcfs"));
    let (out, _) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(inode(&dir), before, "a new folder took the old one's place");
    assert_ne!(p.published("one"), first, "the new results");
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    for l in &leftovers {
        assert!(!l.exists(), "{} was removed", l.display());
    }
    let names: Vec<String> = fs::read_dir(p.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".tmp-")), "{names:?}");

    // gc removes them too.
    fs::create_dir(&leftovers[0]).unwrap();
    fs::write(&leftovers[1], b"x").unwrap();
    let out = p.schedlab(&["gc"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("(interrupted publish)"));
    for l in &leftovers {
        assert!(!l.exists(), "gc removed {}", l.display());
    }
}

/// `results/<experiment>` as a symbolic link is refused; nothing lands where it points.
#[test]
fn a_results_folder_that_is_a_symbolic_link_is_refused() {
    let p = Project::new();
    p.manifest("one", ONE_CELL);
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir_all(p.path().join("results")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), p.path().join("results/one")).unwrap();
    let (out, _) = p.run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(
        fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "nothing written there"
    );
}

/// An experiment name longer than 200 bytes is refused when the manifest is validated, at its
/// line (it failed at publish time with "File name too long").
#[test]
fn an_experiment_name_longer_than_200_bytes_is_refused_at_validation() {
    let p = Project::new();
    let long = "x".repeat(300);
    let path = p.manifest(
        "long",
        &ONE_CELL.replace("name: one", &format!("name: {long}")),
    );
    let err = schedlab::manifest::load(&path).unwrap_err().to_string();
    assert!(err.contains("long.yaml:1:"), "{err}");
    assert!(err.contains("300 bytes long; at most 200"), "{err}");
}

// ----------------------------------------------------------------------------------------------
// `plan` validates what `run` refuses

/// Reservations with `overrun: continue` are refused when the manifest is read (so by `plan`),
/// at the scheduler's `overrun`; `plan` accepted them and `run` failed every such cell.
#[test]
fn plan_refuses_reservations_with_overrun_continue() {
    let p = Project::new();
    let text = "name: resv
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
    first_jobs: 300
clusters:
  pool: {procs: 100, node_size: 1}
schedulers:
  easy: {policy: easy, overrun: continue}
reservations:
  one:
    requests:
      - {id: 1, owner: a, created: 0, start: 3600, duration: 3600, nodes: 10}
";
    let path = p.manifest("resv", text);
    let err = schedlab::manifest::load(&path).unwrap_err().to_string();
    assert!(err.contains("resv.yaml:9:"), "{err}");
    assert!(err.contains("need `overrun: kill`"), "{err}");
    let out = p.schedlab(&["plan"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `run` or `gc` that waits for the results lock says who holds it and since when (it waited
/// without a word).
#[test]
fn a_wait_for_the_results_lock_names_the_holder_and_since_when() {
    let p = Project::new();
    p.manifest("one", ONE_CELL);
    let state = p.state();
    fs::create_dir_all(&state).unwrap();
    let lock = state.join("lock");
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&lock)
        .unwrap();
    file.lock().unwrap();
    fs::write(&lock, "pid 4242\nsince 1000\ncommand schedlab run\n").unwrap();
    let child = p
        .cmd(&["gc"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    drop(file);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("waiting for the results lock"), "{err}");
    assert!(
        err.contains("held by pid 4242 (schedlab run) since"),
        "{err}"
    );
    assert!(err.contains("(Unix time 1000)"), "{err}");
}

/// A cluster sized by a trace that has no MaxProcs header is refused by `plan` (it planned, and
/// every cell failed at run time).
#[test]
fn plan_refuses_a_trace_without_maxprocs_for_a_cluster_sized_by_it() {
    let p = Project::new();
    fs::write(
        p.path().join("workloads/nomax.swf"),
        "; Version: 2.2\n1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    p.manifest(
        "nomax",
        "name: nomax
workloads:
  w: {trace: ../workloads/nomax.swf}
clusters:
  sized: {from_trace: true}
schedulers:
  easy: {policy: easy}
",
    );
    let out = p.schedlab(&["plan"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("has no MaxProcs header"), "{err}");
    assert!(err.contains("cluster `sized`"), "{err}");
}

/// A `node_size` grid axis whose value does not divide the processors is an error at the axis's
/// line (it had none: "at grid").
#[test]
fn a_node_size_axis_that_does_not_divide_the_processors_is_located() {
    let p = Project::new();
    let path = p.manifest(
        "axis",
        &format!("{ONE_CELL}grid:\n  axes:\n    node_size: [4, 3]\n"),
    );
    let err = schedlab::manifest::load(&path).unwrap_err().to_string();
    assert!(err.contains("axis.yaml:12:"), "{err}");
    assert!(
        err.contains("100 processors do not divide into nodes of 3"),
        "{err}"
    );
}
