//! Every schedule in `../shared/fixtures/pyss` (an independent simulator's output) reproduced
//! exactly, for each scheduler its header names.

use std::fs;
use std::path::{Path, PathBuf};

use schedlab::sim::{Job, Machine, Overrun, SchedulerKind, SimConfig, Workload, simulate};

fn fixtures_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/pyss");
    dir.is_dir().then_some(dir)
}

struct Case {
    name: String,
    max_procs: u32,
    schedulers: Vec<SchedulerKind>,
    workload: Workload,
    expected: Vec<(u64, i64, i64, i64)>,
}

fn load_case(swf: &Path) -> Case {
    let text = fs::read_to_string(swf).unwrap();
    let mut max_procs = 0;
    let mut schedulers = Vec::new();
    let mut jobs = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(';') {
            let rest = rest.trim();
            if let Some(v) = rest.strip_prefix("MaxProcs:") {
                max_procs = v.trim().parse().unwrap();
            }
            if let Some(v) = rest.strip_prefix("Expected schedule for:") {
                let names = v.split('(').next().unwrap();
                schedulers = names
                    .split(',')
                    .map(|s| s.trim().parse().unwrap())
                    .collect();
            }
            continue;
        }
        let f: Vec<i64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        if f.is_empty() {
            continue;
        }
        let procs = if f[7] > 0 { f[7] } else { f[4] };
        jobs.push(Job {
            id: f[0] as u64,
            submit: f[1],
            runtime: f[3],
            requested_time: if f[8] > 0 { f[8] } else { f[3] },
            procs: procs as u32,
            memory_kb: 0,
            user: f[11] as i32,
            group: f[12] as i32,
            queue: f[14] as i32,
            partition: f[15] as i32,
        });
    }
    let expected_path = swf.with_extension("expected.csv");
    let expected = fs::read_to_string(expected_path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<i64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            (v[0] as u64, v[1], v[2], v[3])
        })
        .collect();
    Case {
        name: swf.file_name().unwrap().to_string_lossy().into_owned(),
        max_procs,
        schedulers,
        workload: Workload::new(jobs),
        expected,
    }
}

#[test]
fn pyss_fixtures_reproduce_exactly() {
    let Some(dir) = fixtures_dir() else {
        eprintln!("../shared/fixtures/pyss not found; skipping");
        return;
    };
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "swf"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 40,
        "expected the whole pyss folder, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in &cases {
        let case = load_case(path);
        assert!(
            !case.schedulers.is_empty(),
            "{}: no schedulers named",
            case.name
        );
        for &kind in &case.schedulers {
            let config = SimConfig {
                machine: Machine::pool(case.max_procs),
                scheduler: kind,
                interval: None,
                overrun: Overrun::Kill,
            };
            let out = simulate(&case.workload, &config).unwrap();
            let mut got: Vec<_> = out
                .jobs
                .iter()
                .map(|o| {
                    let j = &case.workload.jobs[o.job as usize];
                    (j.id, j.submit, o.start, o.end)
                })
                .collect();
            got.sort();
            let mut want = case.expected.clone();
            want.sort();
            checked += 1;
            if got != want {
                let diff: Vec<_> = got
                    .iter()
                    .zip(&want)
                    .filter(|(g, w)| g != w)
                    .take(5)
                    .collect();
                failures.push(format!("{} under {kind}: (got, want) {diff:?}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} schedules differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
