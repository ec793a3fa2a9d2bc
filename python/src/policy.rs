//! Python policies through the library's decision interface, and `simulate`.
//!
//! A [`PyPolicy`] is a [`Policy`]: at each call it copies the view into its [`ViewState`] and
//! calls `schedlab._bridge.decide(policy, state)`, which wraps the state in a `schedlab.View`,
//! calls the policy's `decide` and checks that it returned row numbers. What the policy raises
//! stops the run with its traceback; what it decides is checked by the library
//! (`schedlab::sim::policy::PolicyScheduler`) and the engine.

use std::path::PathBuf;

use pyo3::prelude::*;
use schedlab::api::sections::{self, Mappings};
use schedlab::api::simulate::{self as api_simulate, Settings};
use schedlab::sim::metrics::Warmup;
use schedlab::sim::policy::{NodeStart, Policy, PolicyError, PolicyView};
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

    /// On a topology the bridge returns rows (placed by the engine) or, when the policy named
    /// nodes or placed rows with `view.placer()`, (row, nodes) pairs — nodes None for a row the
    /// engine places.
    fn decide_on_nodes(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), PolicyError> {
        Python::attach(|py| {
            self.state.borrow_mut(py).fill(view);
            let answer = self
                .bridge
                .call1(py, (self.object.clone_ref(py), self.state.clone_ref(py)))
                .map_err(|e| PolicyError(traceback(py, &e)))?;
            if let Ok(rows) = answer.extract::<Vec<usize>>(py) {
                starts.extend(rows.into_iter().map(NodeStart::placed));
                return Ok(());
            }
            let pairs = answer
                .extract::<Vec<(usize, Option<Vec<u32>>)>>(py)
                .map_err(|e| PolicyError(traceback(py, &e)))?;
            starts.extend(
                pairs
                    .into_iter()
                    .map(|(row, nodes)| NodeStart { row, nodes }),
            );
            Ok(())
        })
    }
}

/// What `simulate` returns: the jobs (a pyarrow RecordBatch), the summary as JSON text, the
/// policy calls, on a topology each job's (index, nodes), and the reservations (a pyarrow
/// RecordBatch) when some were given.
type Simulated = (
    Py<PyAny>,
    String,
    u64,
    Vec<(u32, Vec<u32>)>,
    Option<Py<PyAny>>,
);

/// Simulates `trace`, or the generated `workload` (a manifest's workload mapping as JSON text,
/// generated for `seed`), under a built-in `scheduler` (with its `order`) or a Python `policy`,
/// with the manifest sections `queues`, `reservations`, `fairshare` and `priority` when given
/// (each a manifest's mapping as JSON text, read by `schedlab::api::sections`) and `reorder`. Returns (jobs as a
/// pyarrow RecordBatch, the summary as JSON text, policy calls, nodes, reservations).
#[pyfunction]
#[pyo3(signature = (
    trace = None, *, workload = None, seed = 0,
    scheduler = None, policy = None, order = "fcfs", backfill_order = "queue",
    procs = None, node_size = None,
    interval = None, overrun = "kill", tau = 10, warmup_jobs = None, warmup_seconds = None,
    lenient = false, memory = "kb_per_proc", machines = None, allocation = None,
    placement = "first_fit", queues = None, reservations = None, fairshare = None,
    priority = None, reorder = None
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
    machines: Option<PathBuf>,
    allocation: Option<&str>,
    placement: &str,
    queues: Option<&str>,
    reservations: Option<&str>,
    fairshare: Option<&str>,
    priority: Option<&str>,
    reorder: Option<ReorderArg>,
) -> PyResult<Simulated> {
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
    let mut settings = Settings {
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
        placement: placement.parse().map_err(errors::input)?,
        sections: Default::default(),
        seed,
    };
    let json = |keyword: &str, text: Option<&str>| -> PyResult<Option<serde_json::Value>> {
        text.map(|t| serde_json::from_str(t).map_err(|e| errors::input(format!("{keyword}=: {e}"))))
            .transpose()
    };
    let (queues, reservations, fairshare, priority) = (
        json("queues", queues)?,
        json("reservations", reservations)?,
        json("fairshare", fairshare)?,
        json("priority", priority)?,
    );
    let reorder = reorder.map(|r| match r {
        ReorderArg::Seconds(n) => serde_json::Value::from(n),
        ReorderArg::Word(w) => serde_json::Value::from(w),
    });
    let mappings = Mappings {
        queues: queues.as_ref(),
        reservations: reservations.as_ref(),
        fairshare: fairshare.as_ref(),
        priority: priority.as_ref(),
        reorder: reorder.as_ref(),
    };
    // Kept for the sections' one-cell manifest: its workload and cluster mirror the run's.
    let workload_mapping = match (&trace, workload) {
        (Some(path), _) => {
            let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let key = if path.extension().is_some_and(|e| e == "json") {
                "batsim"
            } else {
                "trace"
            };
            serde_json::json!({ key: path })
        }
        (None, Some(mapping)) => json("workload", Some(mapping))?.unwrap_or_default(),
        (None, None) => serde_json::Value::Null,
    };
    let machines_file = machines.clone();
    let mut loaded = match (trace, workload) {
        (Some(trace), None) => crate::trace::load(trace, lenient, memory, None)?,
        (None, Some(mapping)) => crate::trace::generated(py, mapping, procs, seed)?,
        _ => {
            return Err(errors::input(
                "give a trace path or a generated workload (workload=), one of them",
            ));
        }
    };
    let machine = match machines {
        Some(path) => {
            if procs.is_some() || node_size.is_some() {
                return Err(errors::input(
                    "machines= gives the machine: leave out procs and node_size",
                ));
            }
            topology_machine(&path, allocation)?
        }
        None => {
            if allocation.is_some() {
                return Err(errors::input("allocation= goes with machines="));
            }
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
            api_simulate::machine(procs, node_size, ["procs", "node_size"])
                .map_err(errors::to_py)?
        }
    };
    if !mappings.is_empty() {
        let cluster = match (&machines_file, &machine) {
            (Some(path), _) => {
                let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                let mut c = serde_json::json!({ "machines": path });
                if let Some(a) = allocation {
                    c["allocation"] = serde_json::json!(a);
                }
                c
            }
            (None, m) => {
                let mut c = serde_json::json!({ "procs": m.procs() });
                if let Some(k) = node_size {
                    c["node_size"] = serde_json::json!(k);
                }
                c
            }
        };
        settings.sections = sections::resolve(
            &sections::Labels::keywords(),
            mappings,
            workload_mapping,
            cluster,
            overrun,
            seed,
            std::path::Path::new("."),
        )
        .map_err(errors::to_py)?;
    }
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
    let nodes = simulated
        .outcome
        .assignments
        .iter()
        .map(|a| (a.job, a.nodes.clone()))
        .collect();
    let reservations = match simulated.reservations_batch().map_err(errors::to_py)? {
        Some(batch) => Some(crate::arrow::to_pyarrow(py, batch)?.unbind()),
        None => None,
    };
    Ok((jobs, summary, simulated.policy_calls, nodes, reservations))
}

/// The topology of an Alea or AleaNG machine file; `allocation` shared or exclusive overrides
/// the file's.
pub(crate) fn topology_machine(
    path: &std::path::Path,
    allocation: Option<&str>,
) -> PyResult<schedlab::sim::Machine> {
    use schedlab::sim::topology::Topology;
    use schedlab::sim::{Allocation, Machine, TopologyMachine};
    let file = schedlab::machines::read_path(path)
        .map_err(|e| errors::input(format!("failed to import the machine file: {e}")))?;
    let mut clusters = file.clusters;
    let allocation = match allocation {
        None => None,
        Some("shared") => Some(Allocation::Shared),
        Some("exclusive") => Some(Allocation::ExclusiveNodes),
        Some(other) => {
            return Err(errors::input(format!(
                "allocation must be shared or exclusive, found {other:?}"
            )));
        }
    };
    if let Some(a) = allocation {
        for c in &mut clusters {
            c.allocation = a;
        }
    }
    let topology = Topology::new(clusters);
    topology
        .validate()
        .map_err(|e| errors::input(format!("{}: {e}", path.display())))?;
    Ok(Machine::Topology(TopologyMachine::new(topology)))
}

/// `reorder=`: seconds, or a word (`"start"`), as a manifest's `reorder` takes.
#[derive(FromPyObject)]
pub(crate) enum ReorderArg {
    Seconds(i64),
    Word(String),
}
