//! What a Python policy's `View` reads: [`ViewState`] holds one call's state (reused from call
//! to call, so its buffers are allocated once per run) and hands each table over as one block
//! of bytes, which `schedlab.View` wraps in numpy arrays without a copy — one Python object per
//! table per call, never one per job. The helpers (shadow time, earliest start, the plan) run
//! here in Rust, on the library's own code.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use schedlab::sim::policy::{Held, Plan, PolicyView, Running, Waiting};
use schedlab::sim::reservation::ReservedWindow;

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
    fn shadow(&self, row: usize, started: Vec<usize>) -> Option<(i64, i64)> {
        self.view().shadow(row, &started).map(|s| (s.time, s.extra))
    }

    /// The earliest start of `units` for `duration` seconds (None: never).
    #[pyo3(signature = (units, duration, started = Vec::new()))]
    fn earliest_start(&self, units: i64, duration: i64, started: Vec<usize>) -> Option<i64> {
        self.view().earliest_start(units, duration, &started)
    }

    /// The committed future as a scratch pad.
    #[pyo3(signature = (started = Vec::new()))]
    fn plan(&self, started: Vec<usize>) -> PyPlan {
        PyPlan {
            plan: self.view().plan(&started),
        }
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
