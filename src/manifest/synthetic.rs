//! Synthetic workloads in manifests (docs/synthetic.md): the raw `synthetic` section resolved
//! into a [`SyntheticSpec`] — arrival parameters checked and converted (λ, δ, μ from either
//! form), runtime, estimate and size models checked — and a spec turned into the simulator's
//! generator input.

use serde::Serialize;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::raw::{RawArrivals, RawSynthetic, RawUser};
use crate::sim::synth::{
    self as sim_synth, DailyCycle, EstimateModel, HyperExponential, LogUniformStages, LoginModel,
    SizeModel,
};
use crate::sim::{Time, Workload};

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntheticLength {
    Seconds(Time),
    Jobs(u64),
}

/// Rates are scaled so that the expected offered load on `procs` processors is `load`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetLoad {
    pub procs: u64,
    pub load: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EstimateSpec {
    pub factor_min: f64,
    pub factor_max: f64,
    pub round_up: Vec<Time>,
    pub max: Time,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcsSpec {
    Weights(Vec<(u32, f64)>),
    LogUniform {
        min: u32,
        max: u32,
        power_of_two: f64,
    },
}

/// One user (or `count` alike users) of a synthetic workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UserSpec {
    pub name: String,
    pub count: u32,
    /// λ, δ, μ per second.
    pub lambda: f64,
    pub delta: f64,
    pub mu: f64,
    pub daily_cycle: Option<Vec<f64>>,
    /// Runtime CDF points (seconds, cumulative probability).
    pub runtime: Vec<(f64, f64)>,
    /// `None`: requested time = runtime.
    pub estimate: Option<EstimateSpec>,
    pub procs: ProcsSpec,
    pub memory_kb: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyntheticSpec {
    pub length: SyntheticLength,
    pub target_load: Option<TargetLoad>,
    pub users: Vec<UserSpec>,
}

impl UserSpec {
    pub fn login_model(&self) -> LoginModel {
        LoginModel {
            login_rate: self.lambda,
            logout_rate: self.delta,
            submit_rate: self.mu,
        }
    }

    /// Sets P_Login = λ/(λ+δ) to `p` by changing λ (δ kept): grid axis `p_login`.
    pub fn set_p_login(&mut self, p: f64) {
        self.lambda = self.delta * p / (1.0 - p);
    }
}

/// Resolves `workloads.<name>.synthetic`. `cluster_procs` gives the processors of a named
/// cluster, for `target_load`.
pub fn resolve(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawSynthetic,
    cluster_procs: &dyn Fn(&str) -> Result<u64, String>,
) -> Result<SyntheticSpec, ManifestError> {
    let key_err = |p: &str, key: &str, m: String| ctx.key_error(&format!("{path}.{p}"), key, m);
    let length = match (raw.length.days, raw.length.seconds, raw.length.jobs) {
        (Some(d), None, None) if d.is_finite() && d > 0.0 => {
            SyntheticLength::Seconds((d * 86_400.0).round() as Time)
        }
        (None, Some(s), None) if s > 0 => SyntheticLength::Seconds(s),
        (None, None, Some(n)) if n > 0 => SyntheticLength::Jobs(n),
        (None, None, None)
        | (Some(_), Some(_), _)
        | (Some(_), _, Some(_))
        | (_, Some(_), Some(_)) => {
            return Err(key_err(
                "length",
                "length",
                "give the length as exactly one of `days`, `seconds` or `jobs`".into(),
            ));
        }
        _ => {
            return Err(key_err(
                "length",
                "length",
                "the length must be positive".into(),
            ));
        }
    };
    let target_load = match &raw.target_load {
        None => None,
        Some(t) => {
            if !(t.load.is_finite() && t.load > 0.0) {
                return Err(key_err(
                    "target_load.load",
                    "load",
                    format!("expected a positive offered load, found {}", t.load),
                ));
            }
            let procs = cluster_procs(&t.cluster)
                .map_err(|m| key_err("target_load.cluster", "target_load", m))?;
            Some(TargetLoad {
                procs,
                load: t.load,
            })
        }
    };
    if raw.users.is_empty() {
        return Err(key_err(
            "users",
            "users",
            "at least one user is needed".into(),
        ));
    }
    let mut users = Vec::with_capacity(raw.users.len());
    let mut names = std::collections::BTreeSet::new();
    for (i, u) in raw.users.iter().enumerate() {
        let upath = format!("{path}.users[{i}]");
        if !names.insert(u.name.clone()) {
            return Err(ctx.key_error(
                &upath,
                "name",
                format!("user name `{}` is used twice", u.name),
            ));
        }
        users.push(user(ctx, &upath, u)?);
    }
    Ok(SyntheticSpec {
        length,
        target_load,
        users,
    })
}

fn arrivals(a: &RawArrivals) -> Result<(f64, f64, f64), String> {
    match (a.lambda, a.delta, a.mu, a.p, a.m1, a.m2) {
        (Some(l), Some(d), Some(m), None, None, None) => {
            let model = LoginModel::new(l, d, m).map_err(|e| e.to_string())?;
            Ok((model.login_rate, model.logout_rate, model.submit_rate))
        }
        (None, None, None, Some(p), Some(m1), Some(m2)) => {
            let h = HyperExponential::new(p, m1, m2).map_err(|e| e.to_string())?;
            let model = h.to_login_model();
            LoginModel::new(model.login_rate, model.logout_rate, model.submit_rate)
                .map_err(|e| e.to_string())?;
            Ok((model.login_rate, model.logout_rate, model.submit_rate))
        }
        _ => Err(
            "give `lambda`, `delta` and `mu`, or `p`, `m1` and `m2` (all three of one form)".into(),
        ),
    }
}

fn user(ctx: &Ctx<'_>, path: &str, u: &RawUser) -> Result<UserSpec, ManifestError> {
    let err = |p: &str, key: &str, m: String| ctx.key_error(&format!("{path}.{p}"), key, m);
    let (lambda, delta, mu) = arrivals(&u.arrivals).map_err(|m| {
        err("arrivals", "arrivals", m)
            .hint("rates are per second, e.g. {lambda: 2.1e-4, delta: 0.0208, mu: 0.0837}")
    })?;
    let count = u.count.unwrap_or(1);
    if count == 0 {
        return Err(err("count", "count", "expected at least 1 user".into()));
    }
    if let Some(cycle) = &u.daily_cycle {
        DailyCycle::new(cycle).map_err(|e| {
            err(
                "daily_cycle",
                "daily_cycle",
                format!("{e} (one per hour of the day, 0–23)"),
            )
        })?;
    }
    let runtime: Vec<(f64, f64)> = u.runtime.iter().map(|p| (p[0], p[1])).collect();
    LogUniformStages::new(&runtime).map_err(|e| {
        err("runtime", "runtime", e.to_string())
            .hint("e.g. [[1, 0.0], [600, 0.5], [3600, 0.9], [86400, 1.0]]")
    })?;
    let estimate = match &u.estimate {
        None => None,
        Some(e) => {
            let [lo, hi] = e.factor;
            if !(lo.is_finite() && hi.is_finite() && lo >= 1.0 && lo <= hi) {
                return Err(err(
                    "estimate.factor",
                    "factor",
                    format!("expected [min, max] with 1 ≤ min ≤ max, found [{lo}, {hi}]"),
                ));
            }
            if e.max <= 0
                || e.round_up.iter().any(|&l| l <= 0)
                || !e.round_up.windows(2).all(|w| w[0] < w[1])
            {
                return Err(err(
                    "estimate",
                    "estimate",
                    "`max` must be positive and `round_up` positive and increasing (seconds)"
                        .into(),
                ));
            }
            Some(super::synthetic::EstimateSpec {
                factor_min: lo,
                factor_max: hi,
                round_up: e.round_up.clone(),
                max: e.max,
            })
        }
    };
    let procs = match (&u.procs.weights, u.procs.log_uniform) {
        (Some(w), None) if u.procs.power_of_two.is_none() => {
            let pairs: Vec<(u32, f64)> = w.iter().map(|(&n, &x)| (n, x)).collect();
            if pairs.iter().any(|p| !p.1.is_finite()) || SizeModel::weights(&pairs).is_none() {
                return Err(err(
                    "procs.weights",
                    "weights",
                    "expected positive processor counts with non-negative weights, not all zero"
                        .into(),
                ));
            }
            ProcsSpec::Weights(pairs)
        }
        (None, Some([lo, hi])) => {
            let p2 = u.procs.power_of_two.unwrap_or(0.75);
            if lo == 0 || lo > hi || !(0.0..=1.0).contains(&p2) {
                return Err(err(
                    "procs",
                    "procs",
                    format!(
                        "expected log_uniform [min, max] with 1 ≤ min ≤ max and power_of_two in [0, 1], found [{lo}, {hi}] and {p2}"
                    ),
                ));
            }
            ProcsSpec::LogUniform {
                min: lo,
                max: hi,
                power_of_two: p2,
            }
        }
        _ => {
            return Err(err(
                "procs",
                "procs",
                "give `weights: {procs: weight, …}` or `log_uniform: [min, max]` (with an optional `power_of_two`)".into(),
            ));
        }
    };
    Ok(UserSpec {
        name: u.name.clone(),
        count,
        lambda,
        delta,
        mu,
        daily_cycle: u.daily_cycle.clone(),
        runtime,
        estimate,
        procs,
        memory_kb: u.memory_kb.unwrap_or(0),
    })
}

impl UserSpec {
    /// The generator's user model (checked at resolve time, so conversion cannot fail later).
    fn to_sim(&self) -> Result<sim_synth::UserSpec, String> {
        let model = LoginModel::new(self.lambda, self.delta, self.mu).map_err(|e| e.to_string())?;
        let daily = self
            .daily_cycle
            .as_ref()
            .map(|w| DailyCycle::new(w))
            .transpose()
            .map_err(|e| e.to_string())?;
        let runtime = LogUniformStages::new(&self.runtime).map_err(|e| e.to_string())?;
        let estimate = match &self.estimate {
            None => EstimateModel::Exact,
            Some(e) => EstimateModel::Factor {
                factor_min: e.factor_min,
                factor_max: e.factor_max,
                round_up: e.round_up.clone(),
                max: e.max,
            },
        };
        let size = match &self.procs {
            ProcsSpec::Weights(pairs) => {
                SizeModel::weights(pairs).ok_or("processor weights must be positive")?
            }
            ProcsSpec::LogUniform {
                min,
                max,
                power_of_two,
            } => SizeModel::log_uniform(*min, *max, *power_of_two),
        };
        Ok(sim_synth::UserSpec {
            name: self.name.clone(),
            count: self.count,
            model,
            daily,
            runtime,
            estimate,
            size,
            memory_kb: self.memory_kb,
        })
    }
}

impl SyntheticSpec {
    /// The generator's input, with rates scaled to the target load if one is set: the
    /// expected offered load is Σ μ·P_Login × E[runtime] × E[procs] over users, divided by the
    /// cluster's processors (docs/synthetic.md).
    pub fn to_sim(&self) -> Result<sim_synth::SyntheticSpec, String> {
        let users = self
            .users
            .iter()
            .map(|u| u.to_sim().map_err(|e| format!("user `{}`: {e}", u.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = sim_synth::SyntheticSpec {
            users,
            length: match self.length {
                SyntheticLength::Seconds(s) => sim_synth::Length::Seconds(s),
                SyntheticLength::Jobs(n) => sim_synth::Length::Jobs(n),
            },
            rate_scale: 1.0,
        };
        if let Some(t) = &self.target_load {
            let offered = sim_synth::expected_offered_work_rate(&spec) / t.procs as f64;
            if !(offered.is_finite() && offered > 0.0) {
                return Err("the users submit no work: cannot target a load".into());
            }
            spec.rate_scale = t.load / offered;
        }
        Ok(spec)
    }
}

impl SyntheticSpec {
    /// The expected number of jobs generated: the count of a `jobs` length, else the summed
    /// submission rate Σ count·μ·P_Login (after load targeting) times the length. `None` when
    /// the model cannot be built.
    pub fn expected_jobs(&self) -> Option<f64> {
        match self.length {
            SyntheticLength::Jobs(n) => Some(n as f64),
            SyntheticLength::Seconds(seconds) => {
                let spec = self.to_sim().ok()?;
                let rate: f64 = spec
                    .users
                    .iter()
                    .map(|u| f64::from(u.count) * u.model.arrival_rate() * spec.rate_scale)
                    .sum();
                Some(rate * seconds as f64)
            }
        }
    }
}

/// Generates the workload of `spec` for replica `seed`.
/// Generates the workload of `spec` for replica `seed`, failing (before exhausting memory) when
/// it would hold more than `max_jobs` jobs.
pub fn generate_workload(
    spec: &SyntheticSpec,
    seed: u64,
    max_jobs: u64,
) -> Result<Workload, String> {
    sim_synth::generate_at_most(&spec.to_sim()?, seed, max_jobs).ok_or_else(|| {
        format!(
            "the synthetic workload would hold more than `limits.max_jobs` ({max_jobs}) jobs (about {:.0} expected); shorten its `length`, or raise the limit in the manifest's `limits` section",
            spec.expected_jobs().unwrap_or(f64::NAN)
        )
    })
}
