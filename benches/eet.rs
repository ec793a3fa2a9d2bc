//! `make bench`: the EET metric (issue 13) on synthetic schedules of 10⁴–10⁶ jobs, and a whole
//! `schedlab trace eet` on a million-job SWF trace. O(n log n) shows as a time per job that
//! grows by a small step per tenfold n — also for the worst case, one user holding every job
//! (one share with the most breakpoints). Each run checks its answer: identical results on
//! every repetition, every EET at least arrival + runtime, and the EETs of three users'
//! first 2,000 jobs equal to the paper's Algorithm 1 run second by second.
//!
//! `EET_BENCH_BINARIES="A B"` runs only the whole command, each build side by side (3 runs each,
//! interleaved) on the same trace; `EET_BENCH_TRACE=path` keeps that trace.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use schedlab::sim::Time;
use schedlab::sim::metrics::eet::{
    CapacityRule, EetJob, EetReport, PerResource, Resource, evaluate, heatmap,
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// SplitMix64, enough for benchmark inputs.
struct Mix(u64);
impl Mix {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((x ^ (x >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// The system for `n` jobs a year: 2,048 CPUs and 8 TiB per 100,000 jobs, so that the jobs below
/// keep it about half busy whatever n.
fn system(n: usize) -> (u64, u64) {
    let scale = n as u64;
    (2048 * scale / 100_000, (8 << 30) * scale / 100_000)
}

/// `n` jobs over a year: `users` users of skewed activity (a few submit most jobs), 1–64 CPUs,
/// 0.5–8 GiB per CPU, runtimes 1 min–2 days, waits up to about a day.
fn schedule(n: usize, users: u32) -> Vec<EetJob> {
    let mut rng = Mix(13);
    let year = 365.0 * 86_400.0;
    let mut submits: Vec<Time> = (0..n).map(|_| (rng.unit() * year) as Time).collect();
    submits.sort_unstable();
    submits
        .into_iter()
        .enumerate()
        .map(|(i, submit)| {
            let cpus = rng.log_uniform(1.0, 64.0).round() as u64;
            let memory = (cpus as f64 * rng.log_uniform(0.5, 8.0) * (1 << 20) as f64) as u64;
            let runtime = rng.log_uniform(60.0, 172_800.0) as Time;
            let wait = (rng.unit().powi(3) * 86_400.0) as Time;
            EetJob {
                id: i as u64,
                user: (f64::from(users) * rng.unit().powi(2)) as i32,
                group: 1,
                submit,
                runtime,
                start: Some(submit + wait),
                request: PerResource::new(cpus, memory, 0),
            }
        })
        .collect()
}

/// The paper's Algorithm 1, second by second (as transcribed in tests/eet.rs).
fn algorithm_1(jobs: &[(Time, u128, Time)], capacity: u128) -> Vec<Time> {
    let origin = jobs.iter().map(|j| j.0).min().unwrap_or(0);
    let mut left: Vec<u128> = Vec::new();
    jobs.iter()
        .map(|&(arrival, request, runtime)| {
            let mut need = request as i128 * runtime as i128;
            let mut t = (arrival - origin) as usize;
            while need > 0 {
                if t >= left.len() {
                    left.resize(t + 1, capacity);
                }
                let taken = left[t].min(request);
                left[t] -= taken;
                need -= taken as i128;
                t += 1;
            }
            t as Time + origin
        })
        .collect()
}

fn check(jobs: &[EetJob], report: &EetReport, cpus: u64) {
    for (j, r) in jobs.iter().zip(&report.jobs) {
        assert!(
            r.eet >= j.submit + j.runtime,
            "EET before arrival + runtime"
        );
    }
    let users: BTreeSet<i32> = jobs.iter().map(|j| j.user).collect();
    let count = users.len() as u128;
    for user in users.iter().take(3) {
        // A job's EET depends only on its user's earlier jobs, so any first few will do: as
        // many as the second-by-second walk can afford.
        let all: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].user == *user).collect();
        let mine = affordable(&all, jobs, report, 50_000_000);
        // Capacity cpus / count: in units of 1/count, capacity cpus and requests × count.
        let input: Vec<(Time, u128, Time)> = mine
            .iter()
            .map(|&i| {
                let cpus = u128::from(jobs[i].request[Resource::Cpu]);
                (jobs[i].submit, cpus * count, jobs[i].runtime)
            })
            .collect();
        let fast: Vec<Time> = mine
            .iter()
            .map(|&i| report.jobs[i].by_resource[Resource::Cpu].expect("cpu modelled"))
            .collect();
        assert_eq!(
            fast,
            algorithm_1(&input, u128::from(cpus)),
            "Algorithm 1 disagrees for user {user}"
        );
    }
}

/// The longest prefix of `members` whose walk second by second (Σ EET − arrival) stays within
/// `budget` steps.
fn affordable(members: &[usize], jobs: &[EetJob], report: &EetReport, budget: i64) -> Vec<usize> {
    let mut spent = 0;
    members
        .iter()
        .copied()
        .take_while(|&i| {
            let eet = report.jobs[i].by_resource[Resource::Cpu].expect("cpu modelled");
            spent += eet - jobs[i].submit;
            spent <= budget
        })
        .collect()
}

/// CPU time of this thread so far, seconds (`/proc/thread-self/schedstat`): on a shared machine
/// less noisy than wall time.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `EET_BENCH_BINARIES="old/schedlab new/schedlab"`: only the whole command, with each of
    // these builds side by side on the same trace (to compare an earlier build's time and peak).
    if let Ok(list) = std::env::var("EET_BENCH_BINARIES") {
        let exes: Vec<PathBuf> = list.split_whitespace().map(PathBuf::from).collect();
        assert!(
            exes.iter().all(|e| e.is_file()),
            "EET_BENCH_BINARIES: not files: {list}"
        );
        whole_command(&exes);
        return;
    }
    let rule_for = |n: usize| {
        let (cpus, memory) = system(n);
        CapacityRule::equal_split(PerResource::new(Some(cpus), Some(memory), None))
    };
    println!("## EET metric: evaluate (CPU and memory shares) and heatmap data, one thread\n");
    println!(
        "| jobs | users | CPUs | samples | evaluate median wall s | CPU s | CPU ns per job | heatmap s | violated | peak RSS so far |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (n, users) in [
        (10_000, 100),
        (100_000, 100),
        (1_000_000, 100),
        (10_000, 1),
        (100_000, 1),
        (1_000_000, 1),
    ] {
        let jobs = schedule(n, users);
        let rule = rule_for(n);
        let reps = if n >= 1_000_000 { 3 } else { 5 };
        let mut times = Vec::new();
        let mut cpu_times = Vec::new();
        let mut first: Option<Vec<Time>> = None;
        let mut report = None;
        // Small inputs run many times per sample, so that each sample lasts long enough for
        // the CPU-time counter.
        let inner = (1_000_000 / n).max(1);
        for _ in 0..reps {
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut r = evaluate(&jobs, &rule).expect("evaluates");
            for _ in 1..inner {
                r = evaluate(&jobs, &rule).expect("evaluates");
            }
            times.push(t.elapsed().as_secs_f64() / inner as f64);
            cpu_times.push(cpu_seconds().zip(c).map_or(f64::NAN, |(b, a)| b - a) / inner as f64);
            let eets: Vec<Time> = r.jobs.iter().map(|j| j.eet).collect();
            match &first {
                None => first = Some(eets),
                Some(f) => assert_eq!(f, &eets, "same input, different EETs"),
            }
            report = Some(r);
        }
        let report = report.expect("ran");
        check(&jobs, &report, system(n).0);
        let t = Instant::now();
        let map = heatmap(&jobs, &report, None).expect("heatmap");
        let heat = t.elapsed().as_secs_f64();
        assert_eq!(map.rows.len() as u64, report.summary.users);
        let secs = median(times);
        let cpu = median(cpu_times);
        println!(
            "| {n} | {} | {} | {reps} | {secs:.3} | {cpu:.3} | {:.0} | {heat:.3} | {} | {} |",
            report.summary.users,
            system(n).0,
            cpu / n as f64 * 1e9,
            report.summary.violated_jobs,
            peak_rss_kb().map_or("n/a".into(), |kb| format!("{:.0} MB", kb as f64 / 1024.0))
        );
    }

    // Algorithm 1 as written, side by side, on as many of the busiest user's jobs as 10⁹ steps
    // of its walk allow.
    let jobs = schedule(100_000, 100);
    let cpus = system(100_000).0;
    let report = evaluate(&jobs, &rule_for(100_000)).expect("evaluates");
    let busiest: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].user == 0).collect();
    let prefix = affordable(&busiest, &jobs, &report, 1_000_000_000);
    let input: Vec<(Time, u128, Time)> = prefix
        .iter()
        .map(|&i| {
            let cpus = u128::from(jobs[i].request[Resource::Cpu]);
            (jobs[i].submit, cpus * 100, jobs[i].runtime)
        })
        .collect();
    let t = Instant::now();
    let slow = algorithm_1(&input, u128::from(cpus));
    let literal = t.elapsed().as_secs_f64();
    let reps = 101;
    let t = Instant::now();
    let mut fast = Vec::new();
    for _ in 0..reps {
        fast = schedlab::sim::metrics::eet::share::expected_end_times(&input, u128::from(cpus))
            .expect("places");
    }
    let stepped = t.elapsed().as_secs_f64() / reps as f64;
    assert_eq!(slow, fast);
    println!(
        "\n| jobs of one user (CPU share) | Algorithm 1 second by second s | step function s | ratio |\n|---:|---:|---:|---:|\n| {} | {literal:.3} | {stepped:.6} | {:.0} |",
        input.len(),
        literal / stepped
    );

    // The whole command on a million-job trace.
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/schedlab");
    if !exe.is_file() {
        println!(
            "\n(build target/release/schedlab first for the whole-command figure: `make build`)"
        );
        return;
    }
    whole_command(&[exe]);
}

/// `schedlab trace eet` on one million-job SWF file, three runs per binary (interleaved when
/// several builds are compared side by side), median wall time and the largest peak RSS.
fn whole_command(exes: &[PathBuf]) {
    let dir = tempfile::tempdir().expect("temp dir");
    // `EET_BENCH_TRACE=path` keeps the trace there, for profiling the command by hand.
    let trace = std::env::var_os("EET_BENCH_TRACE")
        .map_or_else(|| dir.path().join("million.swf"), PathBuf::from);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&trace).expect("creates"));
    let (cpus, memory) = system(1_000_000);
    writeln!(file, "; MaxProcs: {cpus}").expect("writes");
    for j in schedule(1_000_000, 100) {
        let cpus = j.request[Resource::Cpu];
        writeln!(
            file,
            "{} {} {} {} {cpus} -1 -1 {cpus} {} {} 1 {} 1 -1 1 -1 -1 -1",
            j.id + 1,
            j.submit,
            j.start.expect("recorded") - j.submit,
            j.runtime,
            j.runtime,
            j.request[Resource::Memory] / cpus,
            j.user
        )
        .expect("writes");
    }
    file.flush().expect("flushes");
    drop(file);
    let gnu_time = Path::new("/usr/bin/time").is_file();
    let mut runs = vec![Vec::new(); exes.len()];
    let mut rss = vec![Vec::new(); exes.len()];
    for _ in 0..3 {
        for (i, exe) in exes.iter().enumerate() {
            let mut cmd = if gnu_time {
                let mut c = Command::new("/usr/bin/time");
                c.args(["-f", "%M"]).arg(exe);
                c
            } else {
                Command::new(exe)
            };
            let t = Instant::now();
            let out = cmd
                .arg("trace")
                .arg("eet")
                .arg(&trace)
                .args(["--memory", &memory.to_string(), "--format", "json"])
                .arg("--jobs-out")
                .arg(dir.path().join("jobs.parquet"))
                .arg("--heatmap-out")
                .arg(dir.path().join("heat.parquet"))
                .output()
                .expect("runs");
            runs[i].push(t.elapsed().as_secs_f64());
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(v["jobs"], 1_000_000);
            // GNU time's figure is the last line of stderr.
            let stderr = String::from_utf8_lossy(&out.stderr);
            if let Some(kb) = stderr
                .lines()
                .last()
                .and_then(|l| l.trim().parse::<u64>().ok())
            {
                rss[i].push(kb);
            }
        }
    }
    println!("\n| command | binary | median s | peak RSS (each run) |\n|---|---|---:|---:|");
    for (i, exe) in exes.iter().enumerate() {
        let each: Vec<String> = rss[i]
            .iter()
            .map(|kb| format!("{:.0}", *kb as f64 / 1024.0))
            .collect();
        println!(
            "| `schedlab trace eet` on 1,000,000 jobs (CPU + memory, jobs and heatmap Parquet) | {} | {:.2} | {} |",
            exe.display(),
            median(runs[i].clone()),
            if each.is_empty() {
                "n/a".into()
            } else {
                format!("{} MB", each.join(" / "))
            }
        );
    }
}
