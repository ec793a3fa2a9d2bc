//! Grid axes: the three *name* axes (workload, cluster, scheduler) and the *parameter* axes that
//! override one setting of a cell. Values are checked here and rendered for cell ids.

use serde_json::Value;

use super::model::{Cell, WorkloadSource};
use crate::sim::fairshare::{Charging, PenaltyModel};
use crate::sim::scheduler::order::{CandidateOrder, OrderKind};
use crate::sim::{Overrun, Placement};

/// Axes that pick a named entry of a section.
pub const NAME_AXES: [&str; 5] = ["workload", "cluster", "scheduler", "reservations", "queues"];

/// The reservation scenario of the baseline: no reservations.
pub const NO_RESERVATIONS: &str = "none";

/// Axes that override one setting, with what their values must be.
pub const PARAM_AXES: [(&str, &str); 20] = [
    ("backfill", "none, easy, conservative or aggressive"),
    (
        "backfill_order",
        "queue, submission, shortest or smallest_area",
    ),
    (
        "capacity_scale",
        "a positive number (multiplies the users' split expected capacities)",
    ),
    ("charging", "estimate or continuous"),
    ("first_jobs", "a positive integer"),
    (
        "ignore_memory",
        "true or false (topologies: treat memory requests as 0)",
    ),
    (
        "interval",
        "a positive integer (seconds) or null (every event)",
    ),
    ("load_scale", "a number from 0.001 to 1000"),
    (
        "mu",
        "a positive number (submissions per second while logged in)",
    ),
    ("node_size", "a positive integer or null (a processor pool)"),
    ("order", "fcfs, fairshare, priority or sjf"),
    ("overrun", "kill or continue"),
    ("p_login", "a number between 0 and 1 (exclusive)"),
    (
        "penalty",
        "cpu, standard_job, pe_global, pe_local or pe_min",
    ),
    ("placement", "first_fit or best_fit"),
    ("procs", "a positive integer"),
    (
        "reservation_rate",
        "a non-negative number (generated reservations per week)",
    ),
    (
        "scale_runtime",
        "true or false (topologies: node speed scales runtimes)",
    ),
    ("tau", "a positive integer (seconds)"),
    (
        "throttle_node_hours",
        "a positive number (node-hours per window) or null (no cap)",
    ),
];

/// Load scaling stretches or compresses time; beyond these bounds simulated time overflows or
/// the workload collapses into one instant.
pub fn valid_load_scale(x: f64) -> bool {
    (0.001..=1000.0).contains(&x)
}

pub fn is_known(axis: &str) -> bool {
    NAME_AXES.contains(&axis) || PARAM_AXES.iter().any(|(a, _)| *a == axis)
}

pub fn known_axes() -> impl Iterator<Item = &'static str> {
    NAME_AXES
        .iter()
        .copied()
        .chain(PARAM_AXES.iter().map(|(a, _)| *a))
}

/// What a parameter axis's values must be, for messages.
pub fn expectation(axis: &str) -> &'static str {
    PARAM_AXES
        .iter()
        .find(|(a, _)| *a == axis)
        .map_or("a name", |(_, e)| e)
}

fn positive(v: &Value) -> Option<i64> {
    v.as_i64().filter(|&n| n > 0)
}

fn penalty_model(s: &str) -> Option<PenaltyModel> {
    PenaltyModel::ALL.into_iter().find(|m| m.name() == s)
}

fn charging(s: &str) -> Option<Charging> {
    [Charging::Estimate, Charging::Continuous]
        .into_iter()
        .find(|c| c.name() == s)
}

/// Checks a parameter axis value; `Err` says what was expected.
pub fn check_param(axis: &str, v: &Value) -> Result<(), String> {
    let ok = match axis {
        "first_jobs" | "procs" | "tau" => positive(v).is_some(),
        "interval" | "node_size" => v.is_null() || positive(v).is_some(),
        "load_scale" => v.as_f64().is_some_and(valid_load_scale),
        "overrun" => v.as_str().is_some_and(|s| s.parse::<Overrun>().is_ok()),
        "backfill" => v
            .as_str()
            .is_some_and(|s| super::order::parse_backfill(s).is_ok()),
        "order" => v.as_str().is_some_and(|s| s.parse::<OrderKind>().is_ok()),
        "backfill_order" => v
            .as_str()
            .is_some_and(|s| s.parse::<CandidateOrder>().is_ok()),
        "penalty" => v.as_str().and_then(penalty_model).is_some(),
        "charging" => v.as_str().and_then(charging).is_some(),
        "placement" => v.as_str().is_some_and(|s| s.parse::<Placement>().is_ok()),
        "ignore_memory" | "scale_runtime" => v.is_boolean(),
        "reservation_rate" => v.as_f64().is_some_and(|x| x.is_finite() && x >= 0.0),
        "capacity_scale" => v
            .as_f64()
            .and_then(super::expected_capacity::positive_ratio)
            .is_some(),
        "mu" => v.as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
        "p_login" => v.as_f64().is_some_and(|x| x > 0.0 && x < 1.0),
        "throttle_node_hours" => {
            v.is_null() || v.as_f64().is_some_and(|x| x.is_finite() && x > 0.0)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}, found {}", expectation(axis), v))
    }
}

/// Applies a checked parameter value to a cell.
/// Settings are shared between cells (`Arc`); only a setting an axis changes is copied.
pub fn apply_param(cell: &mut Cell, axis: &str, v: &Value) {
    use std::sync::Arc;
    match axis {
        "first_jobs" => Arc::make_mut(&mut cell.workload).transforms.first_jobs = v.as_u64(),
        "load_scale" => Arc::make_mut(&mut cell.workload).transforms.load_scale = v.as_f64(),
        "procs" => Arc::make_mut(&mut cell.cluster).procs = v.as_u64().map(|n| n as u32),
        "node_size" => Arc::make_mut(&mut cell.cluster).node_size = v.as_u64().map(|n| n as u32),
        "interval" => Arc::make_mut(&mut cell.scheduler).interval = v.as_i64(),
        "overrun" => {
            if let Some(o) = v.as_str().and_then(|s| s.parse().ok()) {
                Arc::make_mut(&mut cell.scheduler).overrun = o;
            }
        }
        "tau" => {
            if let Some(tau) = v.as_i64() {
                Arc::make_mut(&mut cell.metrics).tau = tau;
            }
        }
        "capacity_scale" => {
            if let Some(scale) = v
                .as_f64()
                .and_then(super::expected_capacity::positive_ratio)
            {
                Arc::make_mut(&mut cell.metrics).expected_capacity.scale = scale;
            }
        }
        "backfill" => {
            if let Some(k) = v
                .as_str()
                .and_then(|s| super::order::parse_backfill(s).ok())
            {
                Arc::make_mut(&mut cell.scheduler).policy = k;
            }
        }
        "order" => {
            if let Some(k) = v.as_str().and_then(|s| s.parse().ok()) {
                Arc::make_mut(&mut cell.scheduler).order.kind = k;
            }
        }
        "backfill_order" => {
            if let Some(c) = v.as_str().and_then(|s| s.parse().ok()) {
                Arc::make_mut(&mut cell.scheduler).order.candidates = c;
            }
        }
        "penalty" => {
            if let Some(m) = v.as_str().and_then(penalty_model) {
                Arc::make_mut(&mut cell.scheduler)
                    .order
                    .fairshare
                    .penalty
                    .model = m;
            }
        }
        "charging" => {
            if let Some(c) = v.as_str().and_then(charging) {
                Arc::make_mut(&mut cell.scheduler).order.fairshare.charging = c;
            }
        }
        "placement" => {
            if let Some(p) = v.as_str().and_then(|s| s.parse().ok()) {
                Arc::make_mut(&mut cell.scheduler).placement = p;
            }
        }
        // Topology settings; a processor pool has neither memory nor speeds.
        "ignore_memory" | "scale_runtime" => {
            if let (true, Some(b)) = (cell.cluster.topology.is_some(), v.as_bool())
                && let Some(t) = Arc::make_mut(&mut cell.cluster).topology.as_mut()
            {
                if axis == "ignore_memory" {
                    t.ignore_memory = b;
                } else {
                    t.scale_runtime = b;
                }
            }
        }
        // Arrival parameters of every user of a synthetic workload; trace workloads have none.
        "p_login" | "mu" => {
            if let (WorkloadSource::Synthetic(_), Some(x)) = (&cell.workload.source, v.as_f64())
                && let WorkloadSource::Synthetic(spec) =
                    &mut Arc::make_mut(&mut cell.workload).source
            {
                for user in &mut spec.users {
                    if axis == "mu" {
                        user.mu = x;
                    } else {
                        user.set_p_login(x);
                    }
                }
            }
        }
        // Reservation parameters change the cell's scenario; the `none` scenario has none.
        "reservation_rate" => {
            if let Some(r) = cell.reservations.as_mut()
                && r.generator.is_some()
                && let Some(g) = Arc::make_mut(r).generator.as_mut()
            {
                g.per_week = v.as_f64().unwrap_or(g.per_week);
            }
        }
        "throttle_node_hours" => {
            if let Some(r) = cell.reservations.as_mut() {
                let r = Arc::make_mut(r);
                r.throttle.max_node_seconds = v.as_f64().map(|h| (h * 3600.0).round() as u64);
                if r.throttle.max_node_seconds.is_some() {
                    r.throttle.max_proc_seconds = None;
                }
            }
        }
        _ => {}
    }
}

/// How a value appears in a cell id and in the summary's parameter columns.
pub fn render(axis: &str, v: &Value) -> String {
    match v {
        Value::Null if axis == "interval" => "event".to_string(),
        Value::Null => "none".to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string().replace('.', "p"),
        other => other.to_string(),
    }
}
