//! What a Python policy's `View` reads: [`ViewState`] holds one call's state (reused from call
//! to call, so its buffers are allocated once per run) and hands each table over as one block
//! of bytes, which `schedlab.View` wraps in numpy arrays without a copy — one Python object per
//! table per call, never one per job. The helpers (shadow time, earliest start, the plan) run
//! here in Rust, on the library's own code.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use schedlab::sim::policy::{Held, Placer, Plan, PolicyView, Running, TopologyView, Waiting};
use schedlab::sim::reservation::ReservedWindow;

/// A job's shape on a class as Python gets it: (nodes, per-node amounts, the last node's
/// amounts, whole nodes).
type ShapeTuple = (u32, [u64; 3], [u64; 3], bool);

/// One call's state. Created by the package, filled by the engine before each call.
#[pyclass(module = "schedlab._schedlab")]
#[derive(Default)]
pub struct ViewState {
    #[pyo3(get)]
    pub now: i64,
    #[pyo3(get)]
    pub capacity: i64,
    #[pyo3(get)]
    pub free: i64,
    #[pyo3(get)]
    pub procs_per_unit: i64,
    pub waiting: Waiting,
    pub running: Running,
    pub reservations: Vec<ReservedWindow>,
    /// The jobs queues and limits hold (empty without a queue setup).
    pub held: Held,

    // --- On a topology (issue 31): the nodes and the node-level helpers ---
    pub topology: Option<TopologyView>,
}

impl ViewState {
    /// Copies `view` in (reusing the buffers).
    pub fn fill(&mut self, view: &PolicyView<'_>) {
        self.now = view.now;
        self.capacity = view.capacity;
        self.free = view.free;
        self.procs_per_unit = view.procs_per_unit;
        self.waiting.clone_from(view.waiting);
        self.running.clone_from(view.running);
        self.reservations.clear();
        self.reservations.extend_from_slice(view.reservations);
        self.held.clone_from(view.held);
        match (&mut self.topology, view.topology) {
            (Some(mine), Some(theirs)) => mine.clone_from(theirs),
            (mine, theirs) => *mine = theirs.cloned(),
        }
    }

    /// The topology, or the error a node-level helper raises on a uniform machine.
    fn topo(&self) -> PyResult<&TopologyView> {
        self.topology.as_ref().ok_or_else(|| {
            PyValueError::new_err(
                "this machine is a processor pool or whole nodes of one size: it has no topology (view.on_topology is False)",
            )
        })
    }

    /// The error a uniform helper raises on a topology.
    fn uniform(&self, helper: &str) -> PyResult<()> {
        if self.topology.is_some() {
            return Err(PyValueError::new_err(format!(
                "view.{helper}() counts allocation units of a processor pool or of whole nodes of one size; on a topology use view.placer() (place, shadow, backfill) — docs/policies.md, \"On a topology\""
            )));
        }
        Ok(())
    }

    fn view(&self) -> PolicyView<'_> {
        PolicyView {
            now: self.now,
            capacity: self.capacity,
            free: self.free,
            procs_per_unit: self.procs_per_unit,
            waiting: &self.waiting,
            running: &self.running,
            reservations: &self.reservations,
            held: &self.held,
            topology: self.topology.as_ref(),
        }
    }
}

/// A column of a block: 8-byte values either way.
enum Column<'a> {
    Int(&'a [i64]),
    Float(&'a [f64]),
}

/// Native-endian bytes of `columns`, one after the other.
fn block<'py>(py: Python<'py>, columns: &[Column<'_>]) -> Bound<'py, PyBytes> {
    let len = |c: &Column<'_>| match c {
        Column::Int(v) => v.len(),
        Column::Float(v) => v.len(),
    };
    let total: usize = columns.iter().map(|c| len(c) * 8).sum();
    PyBytes::new_with(py, total, |buf| {
        let mut chunks = buf.chunks_exact_mut(8);
        for column in columns {
            match column {
                Column::Int(v) => {
                    for (x, chunk) in v.iter().zip(chunks.by_ref()) {
                        chunk.copy_from_slice(&x.to_ne_bytes());
                    }
                }
                Column::Float(v) => {
                    for (x, chunk) in v.iter().zip(chunks.by_ref()) {
                        chunk.copy_from_slice(&x.to_ne_bytes());
                    }
                }
            }
        }
        Ok(())
    })
    .expect("filling a bytes object cannot fail")
}

#[pymethods]
impl ViewState {
    #[new]
    fn new() -> Self {
        ViewState::default()
    }

    /// What every call's `View` reads first, in one crossing: (now, capacity, free,
    /// procs_per_unit, on_topology, n_waiting, n_running).
    fn header(&self) -> (i64, i64, i64, i64, bool, usize, usize) {
        (
            self.now,
            self.capacity,
            self.free,
            self.procs_per_unit,
            self.topology.is_some(),
            self.waiting.len(),
            self.running.len(),
        )
    }

    #[getter]
    fn n_waiting(&self) -> usize {
        self.waiting.len()
    }

    #[getter]
    fn n_running(&self) -> usize {
        self.running.len()
    }

    /// The waiting table as one block: the integer columns index, id, user, group, queue,
    /// submit, requested_time, wait, procs, units, memory_kb, gpus, then user_usage (float64),
    /// then the queue columns routed_queue, queue_priority, then the fairshare columns
    /// fairshare_usage, fairshare_factor (float64).
    fn waiting_block<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let w = &self.waiting;
        block(
            py,
            &[
                Column::Int(&w.index),
                Column::Int(&w.id),
                Column::Int(&w.user),
                Column::Int(&w.group),
                Column::Int(&w.queue),
                Column::Int(&w.submit),
                Column::Int(&w.requested_time),
                Column::Int(&w.wait),
                Column::Int(&w.procs),
                Column::Int(&w.units),
                Column::Int(&w.memory_kb),
                Column::Int(&w.gpus),
                Column::Float(&w.user_usage),
                // Queues and limits.
                Column::Int(&w.routed_queue),
                Column::Int(&w.queue_priority),
                // Fairshare.
                Column::Float(&w.fairshare_usage),
                Column::Float(&w.fairshare_factor),
            ],
        )
    }

    /// The running table as one block: index, id, user, start, expected_end, procs, units.
    fn running_ints<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let r = &self.running;
        block(
            py,
            &[
                Column::Int(&r.index),
                Column::Int(&r.id),
                Column::Int(&r.user),
                Column::Int(&r.start),
                Column::Int(&r.expected_end),
                Column::Int(&r.procs),
                Column::Int(&r.units),
            ],
        )
    }

    #[getter]
    fn n_held(&self) -> usize {
        self.held.len()
    }

    /// The held jobs as one block: index, id, user, group, queue, procs, requested_time, wait,
    /// limit (a code: its name is `limit_names()[code]`).
    fn held_block<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let h = &self.held;
        block(
            py,
            &[
                Column::Int(&h.index),
                Column::Int(&h.id),
                Column::Int(&h.user),
                Column::Int(&h.group),
                Column::Int(&h.queue),
                Column::Int(&h.procs),
                Column::Int(&h.requested_time),
                Column::Int(&h.wait),
                Column::Int(&h.limit),
            ],
        )
    }

    /// Granted reservations not yet over: (start, end, units) by start.
    fn reservations(&self) -> Vec<(i64, i64, u64)> {
        self.reservations
            .iter()
            .map(|w| (w.start, w.end, w.width))
            .collect()
    }

    /// EASY's shadow time and extra units for waiting row `row` (None: never fits).
    #[pyo3(signature = (row, started = Vec::new()))]
    fn shadow(&self, row: usize, started: Vec<usize>) -> PyResult<Option<(i64, i64)>> {
        self.uniform("shadow")?;
        Ok(self.view().shadow(row, &started).map(|s| (s.time, s.extra)))
    }

    /// The earliest start of `units` for `duration` seconds (None: never).
    #[pyo3(signature = (units, duration, started = Vec::new()))]
    fn earliest_start(
        &self,
        units: i64,
        duration: i64,
        started: Vec<usize>,
    ) -> PyResult<Option<i64>> {
        self.uniform("earliest_start")?;
        Ok(self.view().earliest_start(units, duration, &started))
    }

    /// The committed future as a scratch pad.
    #[pyo3(signature = (started = Vec::new()))]
    fn plan(&self, started: Vec<usize>) -> PyResult<PyPlan> {
        self.uniform("plan")?;
        Ok(PyPlan {
            plan: self.view().plan(&started),
        })
    }

    // --- On a topology (issue 31) ---

    /// Whether the machine is a topology (nodes, node-level helpers).
    #[getter]
    fn on_topology(&self) -> bool {
        self.topology.is_some()
    }

    /// Nodes in all (0 on a uniform machine).
    #[getter]
    fn n_nodes(&self) -> usize {
        self.topology.as_ref().map_or(0, |t| t.nodes.len())
    }

    /// The nodes table as one block: cluster, class, cores, memory_kb, gpus, free_cores,
    /// free_memory_kb, free_gpus, exclusive (int64, by node index).
    fn nodes_block<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let n = &self.topo()?.nodes;
        Ok(block(
            py,
            &[
                Column::Int(&n.cluster),
                Column::Int(&n.class),
                Column::Int(&n.cores),
                Column::Int(&n.memory_kb),
                Column::Int(&n.gpus),
                Column::Int(&n.free_cores),
                Column::Int(&n.free_memory_kb),
                Column::Int(&n.free_gpus),
                Column::Int(&n.exclusive),
            ],
        ))
    }

    /// Cluster names, by cluster index.
    fn clusters(&self) -> PyResult<Vec<String>> {
        Ok(self.topo()?.clusters.clone())
    }

    /// The machine's placement (first_fit or best_fit).
    fn placement(&self) -> PyResult<&'static str> {
        Ok(self.topo()?.placement.name())
    }

    /// Waiting row `row`'s shape on `node`'s class: (nodes, cores, memory_kb, gpus per node,
    /// the last node's cores, memory_kb, gpus, whole nodes); None where it may not run.
    fn shape(&self, row: usize, node: u32) -> PyResult<Option<ShapeTuple>> {
        Ok(self.topo()?.shape(row, node).map(|s| {
            let last = s.last.unwrap_or(s.per_node);
            (s.count, s.per_node.0, last.0, s.whole)
        }))
    }

    /// The nodes waiting row `row` may run on (classes in placement order).
    fn eligible_nodes(&self, row: usize) -> PyResult<Vec<u32>> {
        Ok(self.topo()?.eligible_nodes(row))
    }

    /// A fresh scratch pad for this call's starts on nodes.
    fn placer(&self) -> PyResult<PyPlacer> {
        let topology = self.topo()?.clone();
        let placer = topology.placer();
        Ok(PyPlacer { topology, placer })
    }
}

/// `schedlab.Placer`'s native half: the node-level rules' node choice over one call's state.
#[pyclass(module = "schedlab._schedlab", name = "Placer")]
pub struct PyPlacer {
    topology: TopologyView,
    placer: Placer,
}

#[pymethods]
impl PyPlacer {
    /// Whether waiting row `row` fits now, after the pad's starts.
    fn fits(&mut self, row: usize) -> bool {
        self.placer.fits(&self.topology, row)
    }

    /// Starts `row` in the pad where the machine's placement puts it; its nodes, or None.
    fn place(&mut self, row: usize) -> Option<Vec<u32>> {
        self.placer.place(&self.topology, row).map(<[u32]>::to_vec)
    }

    /// Starts `row` in the pad on `nodes`; ValueError saying why not.
    fn take(&mut self, row: usize, nodes: Vec<u32>) -> PyResult<()> {
        self.placer
            .take(&self.topology, row, &nodes)
            .map_err(PyValueError::new_err)
    }

    /// EASY's shadow time for `row` on nodes (None: never fits).
    fn shadow(&mut self, row: usize) -> Option<i64> {
        self.placer.shadow(&self.topology, row)
    }

    /// EASY's backfilling of `row` against the last shadow: its nodes, or None.
    fn backfill(&mut self, row: usize) -> Option<Vec<u32>> {
        self.placer
            .backfill(&self.topology, row)
            .map(<[u32]>::to_vec)
    }

    /// The nodes the pad started `row` on, if it did.
    fn nodes_of(&self, row: usize) -> Option<Vec<u32>> {
        self.placer.nodes_of(row).map(<[u32]>::to_vec)
    }

    /// What the pad started, in order, each with its nodes.
    fn starts(&self) -> Vec<(usize, Vec<u32>)> {
        self.placer
            .starts()
            .into_iter()
            .map(|s| (s.row, s.nodes.unwrap_or_default()))
            .collect()
    }
}

/// `schedlab.Plan`'s native half: the availability profile of the committed future.
#[pyclass(module = "schedlab._schedlab", name = "Plan")]
pub struct PyPlan {
    plan: Plan,
}

#[pymethods]
impl PyPlan {
    /// The earliest time ≥ now at which `units` fit for `duration` seconds (None: never).
    fn earliest_start(&self, units: i64, duration: i64) -> Option<i64> {
        self.plan.earliest_start(units, duration)
    }

    /// Whether `units` fit from now for `duration` seconds.
    fn fits_now(&self, units: i64, duration: i64) -> bool {
        self.plan.fits_now(units, duration)
    }

    /// Holds `units` over `[at, at + duration)`.
    fn reserve(&mut self, at: i64, units: i64, duration: i64) {
        self.plan.reserve(at, units, duration);
    }

    /// Free units at `t`.
    fn free_at(&self, t: i64) -> i64 {
        self.plan.free_at(t)
    }
}

/// The names of the held table's limit codes, by code.
#[pyfunction]
pub fn limit_names() -> Vec<&'static str> {
    Held::LIMITS.to_vec()
}
