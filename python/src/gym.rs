//! `schedlab.gym`'s native half: [`GymEnvs`], n environments of the library's
//! [`schedlab::gym::Env`] stepped together. One call steps every environment and hands the
//! observations back as one block of bytes per array (numpy views on the Python side): never a
//! Python object per job. A finished episode is replaced at once by the next one of the same
//! environment (its stream goes on), its jobs kept for a reward computed in Python.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use schedlab::gym::{Backfill, Env, EnvConfig, EnvError, Feature, Metric, Starts};

use crate::errors;

/// n environments over one trace.
#[pyclass(unsendable, module = "schedlab._schedlab")]
pub struct GymEnvs {
    envs: Vec<Env>,
    #[pyo3(get)]
    k: usize,
    #[pyo3(get)]
    n_features: usize,
    #[pyo3(get)]
    n_machine: usize,
    #[pyo3(get)]
    procs: u32,
    /// The jobs of each environment's last finished episode (rows of 6 int64).
    finished: Vec<Vec<[i64; 6]>>,
    jobs_buf: Vec<f32>,
    machine_buf: Vec<f32>,
    mask_buf: Vec<u8>,
}

fn env_error(e: EnvError) -> PyErr {
    match e {
        EnvError::Masked { .. } => PyValueError::new_err(e.to_string()),
        EnvError::Over => PyRuntimeError::new_err(e.to_string()),
        EnvError::Sim(_) => errors::failed(e.to_string()),
    }
}

fn bytes_of<'py, T: Copy>(py: Python<'py>, values: &[T]) -> Bound<'py, PyBytes> {
    let size = std::mem::size_of_val(values);
    // SAFETY: plain numbers (f32, f64, i64, u8) viewed as their bytes.
    let raw = unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, size) };
    PyBytes::new(py, raw)
}

type Observation<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);
/// An observation, the reward and whether the episode ended.
type StepOne<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    f64,
    bool,
);
/// The observations, the rewards and which episodes ended (as bytes).
type StepMany<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

impl GymEnvs {
    fn observe_all<'py>(&mut self, py: Python<'py>) -> Observation<'py> {
        let (k, f, m) = (self.k, self.n_features, self.n_machine);
        for (i, env) in self.envs.iter().enumerate() {
            env.observe(
                &mut self.jobs_buf[i * k * f..(i + 1) * k * f],
                &mut self.machine_buf[i * m..(i + 1) * m],
                &mut self.mask_buf[i * k..(i + 1) * k],
            );
        }
        (
            bytes_of(py, &self.jobs_buf),
            bytes_of(py, &self.machine_buf),
            bytes_of(py, &self.mask_buf),
        )
    }

    /// Resets environment `i` until its episode has a decision to take.
    fn reset_env(&mut self, i: usize, seed: Option<u64>) -> PyResult<()> {
        let mut seed = seed;
        for _ in 0..1000 {
            if !self.envs[i].reset(seed.take()).map_err(env_error)? {
                return Ok(());
            }
        }
        Err(errors::failed(
            "1000 episodes in a row had no decision to take (every job infeasible on the machine?)",
        ))
    }
}

#[pymethods]
impl GymEnvs {
    #[new]
    #[pyo3(signature = (
        trace = None, *, workload = None, n_envs = 1, seed = 0, procs = None, k = 128, features = None,
        running_slots = 8, backfill = "easy", episode_jobs = Some(256), starts = None,
        reward = "bounded_slowdown", per_step = false, tau = 10, time_scale = 86400.0,
        lenient = false, machines = None, memory = "kb_per_proc"
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        trace: Option<PathBuf>,
        workload: Option<&str>,
        n_envs: usize,
        seed: u64,
        procs: Option<i64>,
        k: i64,
        features: Option<Vec<String>>,
        running_slots: i64,
        backfill: &str,
        episode_jobs: Option<i64>,
        starts: Option<Vec<i64>>,
        reward: &str,
        per_step: bool,
        tau: i64,
        time_scale: f64,
        lenient: bool,
        machines: Option<PathBuf>,
        memory: &str,
    ) -> PyResult<Self> {
        if n_envs == 0 {
            return Err(errors::input("n_envs must be at least 1"));
        }
        let nonneg = |name: &str, v: i64| -> PyResult<usize> {
            usize::try_from(v).map_err(|_| {
                errors::input(format!("{name} must be a non-negative integer, found {v}"))
            })
        };
        let k = nonneg("k", k)?;
        let running_slots = nonneg("running_slots", running_slots)?;
        let features = match features {
            None => Feature::DEFAULT.to_vec(),
            Some(names) => names
                .iter()
                .map(|n| n.parse::<Feature>().map_err(errors::input))
                .collect::<PyResult<Vec<_>>>()?,
        };
        let metric = match reward {
            "bounded_slowdown" => Metric::BoundedSlowdown,
            "wait" => Metric::Wait,
            "utilization" => Metric::Utilization,
            "eet_violations" => Metric::EetViolations,
            "none" => Metric::None,
            other => {
                return Err(errors::input(format!(
                    "unknown reward {other:?} (expected bounded_slowdown, wait, utilization, eet_violations or a callable)"
                )));
            }
        };
        if per_step && matches!(metric, Metric::Utilization | Metric::EetViolations) {
            return Err(errors::input(format!(
                "the {reward} reward is given at the end of an episode only (per_step=False)"
            )));
        }
        let episode_jobs = episode_jobs
            .map(|n| {
                usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    errors::input(format!(
                        "episode_jobs must be a positive integer, found {n}"
                    ))
                })
            })
            .transpose()?;
        let starts = match starts {
            None => Starts::Random,
            Some(list) => Starts::Fixed(
                list.iter()
                    .map(|&s| nonneg("an episode start", s))
                    .collect::<PyResult<Vec<_>>>()?,
            ),
        };
        let config = EnvConfig {
            k,
            features,
            running_slots,
            backfill: backfill.parse::<Backfill>().map_err(errors::input)?,
            episode_jobs,
            starts,
            metric,
            per_step,
            tau,
            time_scale,
        };
        // A topology (docs/rl.md, "On a topology"): the machine file gives the machine.
        let topology = match machines {
            None => None,
            Some(path) => {
                if procs.is_some() {
                    return Err(errors::input(
                        "machines= gives the machine: leave out procs",
                    ));
                }
                Some(crate::policy::topology_machine(&path, None)?)
            }
        };
        let topology_cores = topology
            .as_ref()
            .map(|m| u32::try_from(m.capacity().unit_count()).unwrap_or(u32::MAX));
        let procs = procs.or(topology_cores.map(i64::from));
        let loaded = match (trace, workload) {
            (Some(trace), None) => {
                py.detach(|| crate::trace::load(trace, lenient, memory, None))?
            }
            (None, Some(mapping)) => {
                // Generated once, for `seed`, on a machine of `procs`: every environment draws
                // its episodes from this one workload (docs/rl.md, "Generated workloads").
                let procs = procs
                    .map(|p| {
                        u32::try_from(p).ok().filter(|&p| p > 0).ok_or_else(|| {
                            errors::input(format!("procs must be a positive integer, found {p}"))
                        })
                    })
                    .transpose()?;
                crate::trace::generated(py, mapping, procs, seed)?
            }
            _ => {
                return Err(errors::input(
                    "give a trace path or a generated workload (workload=), one of them",
                ));
            }
        };
        let procs = match (procs, loaded.header.max_procs) {
            (Some(p), _) => u32::try_from(p).ok().filter(|&p| p > 0).ok_or_else(|| {
                errors::input(format!("procs must be a positive integer, found {p}"))
            })?,
            (None, Some(p)) => p,
            (None, None) => {
                return Err(errors::input(format!(
                    "{}: the trace has no MaxProcs header; give the machine size with procs=N",
                    loaded.source
                )));
            }
        };
        let workload = Arc::new(loaded.workload);
        let mut envs = Vec::with_capacity(n_envs);
        for i in 0..n_envs {
            // Each environment its own stream: seed, seed + 1, …
            let machine = topology
                .clone()
                .unwrap_or_else(|| schedlab::sim::Machine::pool(procs));
            envs.push(
                Env::on_machine(
                    workload.clone(),
                    machine,
                    config.clone(),
                    seed.wrapping_add(i as u64),
                )
                .map_err(errors::input)?,
            );
        }
        let (f, m) = (config.features.len(), envs[0].machine_features());
        Ok(GymEnvs {
            envs,
            k,
            n_features: f,
            n_machine: m,
            procs,
            finished: vec![Vec::new(); n_envs],
            jobs_buf: vec![0.0; n_envs * k * f],
            machine_buf: vec![0.0; n_envs * m],
            mask_buf: vec![0; n_envs * k],
        })
    }

    #[getter]
    fn n_envs(&self) -> usize {
        self.envs.len()
    }

    /// The feature names, in column order.
    #[getter]
    fn features(&self) -> Vec<&'static str> {
        self.envs[0]
            .config
            .features
            .iter()
            .map(|f| f.name())
            .collect()
    }

    /// Resets every environment (environment i re-seeded with seed + i when a seed is given).
    #[pyo3(signature = (seed = None))]
    fn reset<'py>(&mut self, py: Python<'py>, seed: Option<u64>) -> PyResult<Observation<'py>> {
        for i in 0..self.envs.len() {
            self.reset_env(i, seed.map(|s| s.wrapping_add(i as u64)))?;
        }
        Ok(self.observe_all(py))
    }

    /// Steps environment 0 with `action`: (jobs, machine, mask, reward, done). A finished
    /// episode is not replaced.
    fn step_one<'py>(&mut self, py: Python<'py>, action: i64) -> PyResult<StepOne<'py>> {
        let r = self.envs[0].step(action).map_err(env_error)?;
        if r.done {
            self.finished[0] = self.envs[0].jobs();
        }
        let (jobs, machine, mask) = self.observe_all(py);
        Ok((jobs, machine, mask, r.reward, r.done))
    }

    /// Steps every environment with `actions` (int64 bytes, one per environment); an
    /// environment whose episode ends starts the next at once. Returns the observations, the
    /// rewards (float64 bytes) and which episodes ended (uint8 bytes). No environment moves
    /// when an action is masked.
    fn step_many<'py>(&mut self, py: Python<'py>, actions: &[u8]) -> PyResult<StepMany<'py>> {
        let n = self.envs.len();
        if actions.len() != n * 8 {
            return Err(PyValueError::new_err(format!(
                "give one action per environment: {n} expected, {} given",
                actions.len() / 8
            )));
        }
        let actions: Vec<i64> = actions
            .chunks_exact(8)
            .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect();
        for (i, (&a, env)) in actions.iter().zip(&self.envs).enumerate() {
            let valid = env.valid();
            if a < 0 || a as usize >= valid {
                return Err(PyValueError::new_err(format!(
                    "environment {i}: {}",
                    EnvError::Masked { action: a, valid }
                )));
            }
        }
        let mut rewards = vec![0.0f64; n];
        let mut done = vec![0u8; n];
        for i in 0..n {
            let r = self.envs[i].step(actions[i]).map_err(env_error)?;
            rewards[i] = r.reward;
            if r.done {
                done[i] = 1;
                self.finished[i] = self.envs[i].jobs();
                self.reset_env(i, None)?;
            }
        }
        let (jobs, machine, mask) = self.observe_all(py);
        Ok((
            jobs,
            machine,
            mask,
            bytes_of(py, &rewards),
            bytes_of(py, &done),
        ))
    }

    /// Environment `i`'s first K waiting jobs, raw (int64 bytes, columns index, submit, wait,
    /// requested_time, procs, user; K each).
    #[pyo3(signature = (i = 0))]
    fn raw<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
        let env = self
            .envs
            .get(i)
            .ok_or_else(|| PyValueError::new_err("no such environment"))?;
        let mut out = vec![0i64; Env::RAW_COLUMNS.len() * self.k];
        env.raw(&mut out);
        Ok(bytes_of(py, &out))
    }

    /// Environment `i`'s episode jobs so far (or, with `finished`, those of its last finished
    /// episode): int64 bytes, rows of index, submit, start, end, requested_time, procs.
    #[pyo3(signature = (i = 0, finished = false))]
    fn jobs<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        finished: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let env = self
            .envs
            .get(i)
            .ok_or_else(|| PyValueError::new_err("no such environment"))?;
        let rows = if finished {
            self.finished[i].clone()
        } else {
            env.jobs()
        };
        let flat: Vec<i64> = rows.into_iter().flatten().collect();
        Ok(bytes_of(py, &flat))
    }

    /// (time of the decision, decisions this episode, jobs backfilled, first trace index).
    #[pyo3(signature = (i = 0))]
    fn status(&self, i: usize) -> PyResult<(i64, u64, u64, usize)> {
        let env = self
            .envs
            .get(i)
            .ok_or_else(|| PyValueError::new_err("no such environment"))?;
        Ok((env.now(), env.decisions, env.backfilled(), env.first()))
    }
}
