//! Python policies through the library's decision interface, and `simulate`.
//!
//! A [`PyPolicy`] is a [`Policy`]: at each call it copies the view into its [`ViewState`] and
//! calls `schedlab._bridge.decide(policy, state)`, which wraps the state in a `schedlab.View`,
//! calls the policy's `decide` and checks that it returned row numbers. What the policy raises
//! stops the run with its traceback; what it decides is checked by the library
//! (`schedlab::sim::policy::PolicyScheduler`) and the engine.

use std::path::PathBuf;

use pyo3::prelude::*;
use schedlab::api::simulate::{self as api_simulate, Settings};
use schedlab::sim::metrics::Warmup;
use schedlab::sim::policy::{Policy, PolicyError, PolicyView};
use schedlab::sim::{Overrun, SchedulerKind};
use schedlab::swf::MemoryReading;

use crate::errors;
use crate::view::ViewState;

/// A Python object with a `decide(view)` method.
pub struct PyPolicy {
    object: Py<PyAny>,
    bridge: Py<PyAny>,
    state: Py<ViewState>,
    name: String,
}

impl PyPolicy {
    pub fn new(py: Python<'_>, object: Py<PyAny>) -> PyResult<Self> {
        let bridge = py.import("schedlab._bridge")?.getattr("decide")?.unbind();
        let name = object
            .bind(py)
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "policy".to_string());
        Ok(PyPolicy {
            object,
            bridge,
            state: Py::new(py, ViewState::default())?,
            name,
        })
    }
}

/// The exception's traceback as Python prints it.
pub fn traceback(py: Python<'_>, e: &PyErr) -> String {
    let formatted = py.import("traceback").and_then(|tb| {
        tb.call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )
    });
    match formatted.and_then(|lines| lines.extract::<Vec<String>>()) {
        Ok(lines) => lines.concat().trim_end().to_string(),
        Err(_) => e.to_string(),
    }
}

impl Policy for PyPolicy {
    fn decide(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), PolicyError> {
        Python::attach(|py| {
            self.state.borrow_mut(py).fill(view);
            let rows = self
                .bridge
                .call1(py, (self.object.clone_ref(py), self.state.clone_ref(py)))
                .and_then(|rows| rows.extract::<Vec<usize>>(py))
                .map_err(|e| PolicyError(traceback(py, &e)))?;
            starts.extend(rows);
            Ok(())
        })
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Simulates `trace`, or the generated `workload` (a manifest's workload mapping as JSON text,
/// generated for `seed`), under a built-in `scheduler` (with its `order`) or a Python `policy`.
/// Returns (jobs as a pyarrow RecordBatch, the summary as JSON text, policy calls).
#[pyfunction]
#[pyo3(signature = (
    trace = None, *, workload = None, seed = 0,
    scheduler = None, policy = None, order = "fcfs", backfill_order = "queue",
    procs = None, node_size = None,
    interval = None, overrun = "kill", tau = 10, warmup_jobs = None, warmup_seconds = None,
    lenient = false, memory = "kb_per_proc"
))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    trace: Option<PathBuf>,
    workload: Option<&str>,
    seed: u64,
    scheduler: Option<&str>,
    policy: Option<Py<PyAny>>,
    order: &str,
    backfill_order: &str,
    procs: Option<i64>,
    node_size: Option<i64>,
    interval: Option<i64>,
    overrun: &str,
    tau: i64,
    warmup_jobs: Option<u64>,
    warmup_seconds: Option<i64>,
    lenient: bool,
    memory: &str,
) -> PyResult<(Py<PyAny>, String, u64)> {
    let kind: SchedulerKind = match (scheduler, &policy) {
        (Some(_), Some(_)) => {
            return Err(errors::input(
                "give a scheduler or a policy, not both (scheduler= names a built-in rule)",
            ));
        }
        (Some(s), None) => s.parse().map_err(errors::input)?,
        (None, _) => SchedulerKind::Easy,
    };
    let positive = |name: &str, v: Option<i64>| -> PyResult<Option<u32>> {
        v.map(|v| {
            u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| {
                errors::input(format!("{name} must be a positive integer, found {v}"))
            })
        })
        .transpose()
    };
    let procs = positive("procs", procs)?;
    let node_size = positive("node_size", node_size)?;
    if tau <= 0 {
        return Err(errors::input(format!(
            "tau must be a positive number of seconds, found {tau}"
        )));
    }
    let warmup = match (warmup_jobs, warmup_seconds) {
        (Some(_), Some(_)) => {
            return Err(errors::input(
                "give warmup_jobs or warmup_seconds, not both",
            ));
        }
        (Some(n), None) => Warmup::Jobs(n),
        (None, Some(t)) => Warmup::Seconds(t),
        (None, None) => Warmup::None,
    };
    let settings = Settings {
        scheduler: kind,
        order: order.parse().map_err(errors::input)?,
        backfill_order: backfill_order.parse().map_err(errors::input)?,
        interval,
        overrun: overrun.parse::<Overrun>().map_err(errors::input)?,
        tau,
        warmup,
        node_size,
        memory_reading: memory
            .parse::<MemoryReading>()
            .map_err(errors::input)?
            .name(),
        ..Settings::new(kind)
    };
    let mut loaded = match (trace, workload) {
        (Some(trace), None) => crate::trace::load(trace, lenient, memory)?,
        (None, Some(mapping)) => {
            let Some(procs) = procs else {
                return Err(errors::input(
                    "a generated workload needs the machine size: give procs=N",
                ));
            };
            let mapping: serde_json::Value =
                serde_json::from_str(mapping).map_err(|e| errors::input(e.to_string()))?;
            let source = format!("generated workload (seed {seed})");
            py.detach(|| schedlab::api::generated::generated(&mapping, procs, seed, &source))
                .map_err(errors::to_py)?
        }
        _ => {
            return Err(errors::input(
                "give a trace path or a generated workload (workload=), one of them",
            ));
        }
    };
    let procs = match (procs, loaded.header.max_procs) {
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => {
            return Err(errors::to_py(
                schedlab::api::ApiError::input(format!(
                    "{}: the trace has no MaxProcs header",
                    loaded.source
                ))
                .with_hint("give the machine size with procs=N"),
            ));
        }
    };
    let machine =
        api_simulate::machine(procs, node_size, ["procs", "node_size"]).map_err(errors::to_py)?;
    let simulated = match policy {
        // A built-in rule needs no Python: other threads run meanwhile.
        None => py.detach(|| api_simulate::simulate(&mut loaded, &machine, &settings, None, true)),
        Some(object) => {
            let policy: Box<dyn Policy> = Box::new(PyPolicy::new(py, object)?);
            api_simulate::simulate(&mut loaded, &machine, &settings, Some(policy), true)
        }
    }
    .map_err(errors::to_py)?;
    let batch = simulated
        .jobs_batch(&loaded.workload)
        .map_err(errors::to_py)?;
    let jobs = crate::arrow::to_pyarrow(py, batch)?.unbind();
    let summary = serde_json::to_string(&simulated.report)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok((jobs, summary, simulated.policy_calls))
}
