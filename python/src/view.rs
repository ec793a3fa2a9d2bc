//! What a Python policy's `View` reads: [`ViewState`] holds one call's state (reused from call
//! to call, so its buffers are allocated once per run) and hands each table over as one block
//! of bytes, which `schedlab.View` wraps in numpy arrays without a copy — one Python object per
//! table per call, never one per job. The helpers (shadow time, earliest start, the plan) run
//! here in Rust, on the library's own code.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use schedlab::sim::policy::{Plan, PolicyView, Running, Waiting};
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
        }
    }
}

/// Native-endian bytes of `columns`, one after the other.
fn block<'py>(py: Python<'py>, columns: &[&[i64]]) -> Bound<'py, PyBytes> {
    let total: usize = columns.iter().map(|c| c.len() * 8).sum();
    PyBytes::new_with(py, total, |buf| {
        let mut at = 0;
        for column in columns {
            for v in column.iter() {
                buf[at..at + 8].copy_from_slice(&v.to_ne_bytes());
                at += 8;
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

    /// The waiting table's integer columns as one block: index, id, user, group, queue, submit,
    /// requested_time, wait, procs, units, memory_kb, gpus.
    fn waiting_ints<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let w = &self.waiting;
        block(
            py,
            &[
                &w.index,
                &w.id,
                &w.user,
                &w.group,
                &w.queue,
                &w.submit,
                &w.requested_time,
                &w.wait,
                &w.procs,
                &w.units,
                &w.memory_kb,
                &w.gpus,
            ],
        )
    }

    /// The waiting jobs' users' usage (float64).
    fn waiting_usage<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let usage = &self.waiting.user_usage;
        PyBytes::new_with(py, usage.len() * 8, |buf| {
            for (k, v) in usage.iter().enumerate() {
                buf[k * 8..k * 8 + 8].copy_from_slice(&v.to_ne_bytes());
            }
            Ok(())
        })
        .expect("filling a bytes object cannot fail")
    }

    /// The running table as one block: index, id, user, start, expected_end, procs, units.
    fn running_ints<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let r = &self.running;
        block(
            py,
            &[
                &r.index,
                &r.id,
                &r.user,
                &r.start,
                &r.expected_end,
                &r.procs,
                &r.units,
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
