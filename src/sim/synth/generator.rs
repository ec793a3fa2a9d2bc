//! The synthetic workload generator: users (or groups of alike users), each with a
//! Login/Logout arrival process, runtimes, estimates and sizes, merged into one
//! [`Workload`]. Deterministic: every individual user has its own two ChaCha8 streams — one for
//! arrivals, one for job attributes — seeded from blake3 of (seed, user name, index in its
//! group), so adding or removing a user, or changing one user's job model, changes no other
//! user's jobs, and changing a job model never moves arrivals (docs/synthetic.md).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

use super::arrivals::MarkovArrivals;
use super::daily::DailyCycle;
use super::estimate::EstimateModel;
use super::markov::LoginModel;
use super::runtime::LogUniformStages;
use super::size::SizeModel;
use crate::sim::job::{Job, Time, Workload};
use crate::sim::random::uniform;
use crate::sim::topology::{ConstraintTable, JobRequest, RequestId, RequestInterner};

/// One user model; `count` alike users share it (each with its own streams).
#[derive(Clone, Debug, PartialEq)]
pub struct UserSpec {
    pub name: String,
    pub count: u32,
    pub model: LoginModel,
    pub daily: Option<DailyCycle>,
    pub runtime: LogUniformStages,
    pub estimate: EstimateModel,
    pub size: SizeModel,
    /// Requested memory per processor, KB (0: unknown).
    pub memory_kb: u64,
}

/// How much to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// Jobs submitted in [0, T).
    Seconds(Time),
    /// The first N jobs in submission order.
    Jobs(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticSpec {
    pub users: Vec<UserSpec>,
    pub length: Length,
    /// Multiplies λ, δ and μ of every user (time runs that much faster; CVs and jobs per login
    /// are unchanged).
    pub rate_scale: f64,
}

/// Expected processor-seconds submitted per second: Σ over individual users of μ·P_Login ×
/// E[runtime, cut at the estimate cap] × E[processors], with `rate_scale` applied. A daily cycle
/// leaves the mean rate unchanged (its weights have mean 1).
pub fn expected_offered_work_rate(spec: &SyntheticSpec) -> f64 {
    spec.users
        .iter()
        .map(|u| {
            f64::from(u.count)
                * u.model.arrival_rate()
                * spec.rate_scale
                * u.runtime.mean_capped(u.estimate.cap())
                * u.size.mean()
        })
        .sum()
}

/// A 256-bit seed for stream `purpose` of individual user `index` of group `name`.
fn stream(seed: u64, name: &str, index: u32, purpose: &str) -> ChaCha8Rng {
    let mut h = blake3::Hasher::new();
    h.update(b"schedlab/synth/v1\0");
    h.update(&seed.to_le_bytes());
    h.update(name.as_bytes());
    h.update(b"\0");
    h.update(&index.to_le_bytes());
    h.update(purpose.as_bytes());
    ChaCha8Rng::from_seed(*h.finalize().as_bytes())
}

/// One individual user while generating.
struct Source<'a> {
    spec: &'a UserSpec,
    arrivals: MarkovArrivals,
    attributes: ChaCha8Rng,
    user: i32,
    group: i32,
    /// The user's memory per processor, in the workload's request table.
    request: RequestId,
}

impl Source<'_> {
    /// The next submission, in integer real seconds (rounded down).
    fn next_submit(&mut self) -> Time {
        let tau = self.arrivals.next().unwrap_or(f64::INFINITY);
        let t = match &self.spec.daily {
            Some(cycle) => cycle.real_time(tau),
            None => tau,
        };
        if t >= Time::MAX as f64 {
            Time::MAX
        } else {
            t.floor() as Time
        }
    }

    fn job(&mut self, id: u64, submit: Time) -> Job {
        let rng = &mut self.attributes;
        let spec = self.spec;
        let runtime = (spec.runtime.sample(uniform(rng)).round() as Time).max(1);
        let (runtime, requested_time) = spec.estimate.apply(runtime, uniform(rng));
        let procs = spec.size.sample(uniform(rng), uniform(rng));
        Job {
            id,
            submit,
            runtime,
            requested_time,
            procs,
            cpu_time: -1,
            user: self.user,
            group: self.group,
            queue: -1,
            partition: -1,
            request: self.request,
        }
    }
}

/// Generates the workload of `spec` for `seed`. Users are numbered 1, 2, … in spec order (a
/// group's users consecutively), groups by their spec position; submissions at the same second
/// are ordered by user number.
pub fn generate(spec: &SyntheticSpec, seed: u64) -> Workload {
    generate_at_most(spec, seed, u64::MAX).expect("no bound")
}

/// [`generate`], or `None` as soon as the workload would hold more than `max_jobs` jobs (so an
/// absurd length fails before it exhausts memory).
pub fn generate_at_most(spec: &SyntheticSpec, seed: u64, max_jobs: u64) -> Option<Workload> {
    let mut sources = Vec::new();
    let mut requests = RequestInterner::default();
    for (g, u) in spec.users.iter().enumerate() {
        let request = requests.intern(JobRequest {
            memory_kb: u.memory_kb,
            ..JobRequest::default()
        });
        let model = LoginModel {
            login_rate: u.model.login_rate * spec.rate_scale,
            logout_rate: u.model.logout_rate * spec.rate_scale,
            submit_rate: u.model.submit_rate * spec.rate_scale,
        };
        for k in 0..u.count {
            sources.push(Source {
                spec: u,
                arrivals: MarkovArrivals::new(model, stream(seed, &u.name, k, "arrivals")),
                attributes: stream(seed, &u.name, k, "attributes"),
                user: sources.len() as i32 + 1,
                group: g as i32 + 1,
                request,
            });
        }
    }
    let (horizon, limit) = match spec.length {
        Length::Seconds(t) => (t, u64::MAX),
        Length::Jobs(n) => (Time::MAX, n),
    };
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> = sources
        .iter_mut()
        .enumerate()
        .map(|(i, s)| Reverse((s.next_submit(), i)))
        .collect();
    let mut jobs = Vec::new();
    // The earliest user submits; its next submission replaces it at the top (one sift).
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((t, i)) = *top;
        if t >= horizon || jobs.len() as u64 >= limit {
            break;
        }
        let id = jobs.len() as u64 + 1;
        if id > max_jobs {
            return None;
        }
        jobs.push(sources[i].job(id, t));
        *top = Reverse((sources[i].next_submit(), i));
    }
    // Already in submission order; Workload::new's stable sort keeps it.
    Some(Workload::with_requests(
        jobs,
        requests.finish(),
        ConstraintTable::default(),
    ))
}
