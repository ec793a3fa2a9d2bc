//! The synthetic workload generator (issue 5): deterministic per seed, one stream per user
//! (adding a user or changing a user's job model leaves the others' jobs alone), daily cycles,
//! length by time or job count, load targeting, and `schedlab generate` writing SWF that reads
//! back as the same jobs.

mod common;

use schedlab::sim::synth::{
    DailyCycle, EstimateModel, Length, LogUniformStages, LoginModel, SizeModel, SyntheticSpec,
    UserSpec, expected_offered_work_rate, generate,
};
use schedlab::sim::{Job, Workload};

fn user(name: &str, count: u32) -> UserSpec {
    UserSpec {
        name: name.to_string(),
        count,
        model: LoginModel::new(2.1e-4, 0.02079, 0.0837).unwrap(),
        daily: None,
        runtime: LogUniformStages::new(&[(1.0, 0.0), (600.0, 0.6), (36_000.0, 1.0)]).unwrap(),
        estimate: EstimateModel::Factor {
            factor_min: 1.0,
            factor_max: 3.0,
            round_up: vec![900, 3600, 14_400],
            max: 36_000,
        },
        size: SizeModel::log_uniform(1, 64, 0.75),
        memory_kb: 0,
    }
}

fn spec(users: Vec<UserSpec>) -> SyntheticSpec {
    SyntheticSpec {
        users,
        length: Length::Seconds(60 * 86_400),
        rate_scale: 1.0,
    }
}

/// The jobs of the users named `name`, without ids and user numbers (which depend on the
/// other users).
fn jobs_of(w: &Workload, group: i32) -> Vec<Job> {
    w.jobs
        .iter()
        .filter(|j| j.group == group)
        .map(|j| Job {
            id: 0,
            user: 0,
            group: 0,
            ..j.clone()
        })
        .collect()
}

#[test]
fn same_seed_same_workload_other_seed_other_workload() {
    let s = spec(vec![user("a", 3), user("b", 2)]);
    let w = generate(&s, 7);
    assert!(w.len() > 1000);
    assert_eq!(w, generate(&s, 7));
    assert_ne!(w, generate(&s, 8));
    assert!(w.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
    assert_eq!(
        w.jobs.iter().map(|j| j.id).collect::<Vec<_>>(),
        (1..=w.len() as u64).collect::<Vec<_>>()
    );
    assert!(
        w.jobs
            .iter()
            .all(|j| j.submit < 60 * 86_400 && j.runtime <= j.requested_time)
    );
    let users: std::collections::BTreeSet<i32> = w.jobs.iter().map(|j| j.user).collect();
    assert_eq!(users, (1..=5).collect());
}

#[test]
fn adding_a_user_or_changing_a_job_model_leaves_other_users_alone() {
    let base = generate(&spec(vec![user("a", 2), user("b", 1)]), 1);
    let more = generate(&spec(vec![user("a", 2), user("c", 4), user("b", 1)]), 1);
    assert_eq!(jobs_of(&base, 1), jobs_of(&more, 1));
    assert_eq!(jobs_of(&base, 2), jobs_of(&more, 3));
    // Another runtime model for b: b's arrivals stay, a's jobs stay.
    let mut b = user("b", 1);
    b.runtime = LogUniformStages::new(&[(1.0, 0.0), (10.0, 1.0)]).unwrap();
    let changed = generate(&spec(vec![user("a", 2), b]), 1);
    assert_eq!(jobs_of(&base, 1), jobs_of(&changed, 1));
    let submits = |w: &Workload| {
        w.jobs
            .iter()
            .filter(|j| j.group == 2)
            .map(|j| j.submit)
            .collect::<Vec<_>>()
    };
    assert_eq!(submits(&base), submits(&changed));
    assert!(jobs_of(&changed, 2).iter().all(|j| j.runtime <= 10));
}

#[test]
fn a_daily_cycle_puts_the_arrivals_in_its_hours_and_keeps_the_rate() {
    let mut weights = [0.0; 24];
    weights[9..17].fill(1.0);
    let mut office = user("office", 20);
    office.daily = Some(DailyCycle::new(&weights).unwrap());
    let flat = generate(&spec(vec![user("office", 20)]), 3);
    let w = generate(&spec(vec![office]), 3);
    let in_hours = w
        .jobs
        .iter()
        .filter(|j| (9..17).contains(&((j.submit % 86_400) / 3600)))
        .count();
    assert_eq!(in_hours, w.len(), "every arrival falls in 9:00–17:00");
    // Same operational process, so the same number of jobs within a few percent.
    let ratio = w.len() as f64 / flat.len() as f64;
    assert!((ratio - 1.0).abs() < 0.05, "{ratio}");
}

#[test]
fn length_in_jobs_and_load_targeting() {
    let mut s = spec(vec![user("a", 10)]);
    s.length = Length::Jobs(5000);
    let w = generate(&s, 4);
    assert_eq!(w.len(), 5000);
    // Scaling the rates by k compresses time by k: the same jobs at 1/k the times.
    let mut fast = s.clone();
    fast.rate_scale = 4.0;
    let f = generate(&fast, 4);
    assert_eq!(f.len(), 5000);
    let span = |w: &Workload| w.jobs.last().unwrap().submit as f64;
    assert!((span(&w) / span(&f) - 4.0).abs() < 0.01);
    // The expected offered work rate scales with the rates, and the generated work agrees with
    // it within sampling error over a long run.
    let long = SyntheticSpec {
        length: Length::Seconds(365 * 86_400),
        ..spec(vec![user("a", 10)])
    };
    let expected = expected_offered_work_rate(&long);
    assert!(
        (expected_offered_work_rate(&fast) / expected_offered_work_rate(&s) - 4.0).abs() < 1e-9
    );
    let w = generate(&long, 5);
    let work: f64 = w
        .jobs
        .iter()
        .map(|j| j.runtime as f64 * f64::from(j.procs))
        .sum();
    let rate = work / (365.0 * 86_400.0);
    assert!((rate / expected - 1.0).abs() < 0.1, "{rate} vs {expected}");
}

#[test]
fn generate_writes_swf_that_reads_back_as_the_cells_jobs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    std::fs::write(
        dir.path().join("experiments/s.yaml"),
        "workloads:
  burst:
    synthetic:
      length: {jobs: 3000}
      target_load: {cluster: c, load: 0.6}
      users:
        - name: u
          count: 4
          arrivals: {p: 0.3, m1: 0.05, m2: 0.0002}
          runtime: [[1, 0.0], [3600, 1.0]]
          procs: {weights: {1: 3, 8: 1}}
clusters:
  c: {procs: 64}
schedulers:
  easy: {policy: easy}
",
    )
    .unwrap();
    let out = common::schedlab_in(
        dir.path(),
        &[
            "generate",
            "experiments/s.yaml",
            "--workload",
            "burst",
            "-o",
            "burst.swf",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace =
        schedlab::swf::read_path(&dir.path().join("burst.swf"), schedlab::swf::Mode::Strict)
            .unwrap();
    assert_eq!(trace.workload.len(), 3000);
    assert_eq!(trace.header.max_procs, Some(64));
    let m = schedlab::manifest::load(&dir.path().join("experiments/s.yaml")).unwrap();
    let schedlab::manifest::WorkloadSource::Synthetic(spec) = &m.cells[0].workload.source else {
        panic!("synthetic")
    };
    let direct =
        schedlab::manifest::synthetic::generate_workload(spec, m.cells[0].seed, u64::MAX).unwrap();
    assert_eq!(trace.workload, direct);
    assert!(
        trace
            .workload
            .jobs
            .iter()
            .all(|j| j.procs == 1 || j.procs == 8)
    );
    // A trace workload or an unknown name is an input error with exit code 2.
    let bad = common::schedlab_in(
        dir.path(),
        &[
            "generate",
            "experiments/s.yaml",
            "--workload",
            "bursts",
            "-o",
            "x.swf",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean `burst`?"));
    assert!(!dir.path().join("x.swf").exists());
}

#[test]
fn replicas_of_a_synthetic_workload_are_distinct_simulations() {
    // Trace workloads are deterministic: replicas share one simulate node. Synthetic workloads
    // draw from the replica seed: one node per replica, and the seed is in the key.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("e")).unwrap();
    let path = dir.path().join("e/m.yaml");
    std::fs::write(
        &path,
        "workloads:
  syn:
    synthetic:
      length: {jobs: 100}
      users:
        - {name: u, arrivals: {lambda: 1e-3, delta: 1e-2, mu: 0.1}, runtime: [[1, 0], [60, 1]], procs: {weights: {1: 1}}}
clusters:
  c: {procs: 8}
schedulers:
  easy: {policy: easy}
replicas: 3
",
    )
    .unwrap();
    let m = schedlab::manifest::load(&path).unwrap();
    let digests = std::collections::BTreeMap::new();
    let plan = schedlab::plan::build(
        std::slice::from_ref(&m),
        &schedlab::plan::Inputs {
            digests: &digests,
            commit: None,
            commands: &[],
        },
    );
    let simulate: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| {
            matches!(
                plan.nodes[i].kind,
                schedlab::plan::NodeKind::Simulate { .. }
            )
        })
        .collect();
    assert_eq!(simulate.len(), 3);
    let material = plan.material(std::slice::from_ref(&m), simulate[1]);
    assert_eq!(material["seed"], 1);
}
