//! A manifest's sections as options of one run: `schedlab.simulate(queues=..., reservations=...,
//! fairshare=..., priority=..., reorder=...)` takes what a manifest takes at `queues.<setup>`,
//! `reservations.<scenario>` and `schedulers.<name>.fairshare` (`.priority`, `.reorder`). Each is read by the manifest's
//! own parser and resolver inside a one-cell manifest — on a cluster that mirrors the run's
//! machine, so that the checks of a scenario against its cluster are the manifest's too — never
//! a second copy of either. Errors are the manifest's messages, with the key path given from
//! the keyword (`queues=, at queues[0].max_running: …`).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::ApiError;
use crate::manifest::queues::QueueSetup;
use crate::manifest::{self, ManifestError, ReservationSpec};
use crate::sim::fairshare::FairshareSpec;
use crate::sim::scheduler::order::{PriorityWeights, Reorder};

/// The resolved options of a run from a manifest's sections; all absent by default.
#[derive(Clone, Debug, Default)]
pub struct Sections {
    /// A queue setup: queues, routing, limits and quotas (docs/queues.md).
    pub queues: Option<Arc<QueueSetup>>,
    /// Advance reservations (docs/reservations.md).
    pub reservations: Option<Arc<ReservationSpec>>,
    /// The fairshare of `order: fairshare` and of `priority`'s fairshare factor, or of a
    /// policy's view (docs/fairshare.md).
    pub fairshare: Option<FairshareSpec>,
    /// The weights of `order: priority` (docs/fairshare.md).
    pub priority: Option<PriorityWeights>,
    /// When `fairshare` and `priority` orders recompute priorities (a scheduler's `reorder`).
    pub reorder: Option<Reorder>,
}

/// The mappings given, each a manifest section's entry as JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mappings<'a> {
    pub queues: Option<&'a Value>,
    pub reservations: Option<&'a Value>,
    pub fairshare: Option<&'a Value>,
    pub priority: Option<&'a Value>,
    /// A number of seconds, as a manifest's `reorder`.
    pub reorder: Option<&'a Value>,
}

impl Mappings<'_> {
    pub fn is_empty(&self) -> bool {
        self.queues.is_none()
            && self.reservations.is_none()
            && self.fairshare.is_none()
            && self.priority.is_none()
            && self.reorder.is_none()
    }
}

/// How a door names the options in messages: `queues=` in Python, `--queues q.yaml` on the
/// command line.
#[derive(Clone, Debug)]
pub struct Labels {
    pub queues: String,
    pub reservations: String,
    pub fairshare: String,
    pub priority: String,
    pub reorder: String,
    pub overrun: String,
}

impl Labels {
    /// The Python package's keywords.
    pub fn keywords() -> Self {
        Labels {
            queues: "queues=".into(),
            reservations: "reservations=".into(),
            fairshare: "fairshare=".into(),
            priority: "priority=".into(),
            reorder: "reorder=".into(),
            overrun: "overrun=".into(),
        }
    }
}

/// The names of the one-cell manifest's entries.
const SETUP: &str = "setup";
const CLUSTER: &str = "machine";
const SCHEDULER: &str = "simulate";
const WORKLOAD: &str = "workload";
/// How the manifest's cell-level checks begin (the one cell's id is its workload's name).
const CELL_PREFIX: &str = "cell workload: ";

/// Resolves `mappings` as a manifest resolves its sections, in a one-cell manifest whose
/// workload is `workload` (a manifest's workload mapping: `{"trace": path}` or a generated
/// one), whose cluster is `cluster` (a manifest's cluster mapping mirroring the run's machine:
/// `{"procs": N}`, with `node_size`, or `{"machines": path}`), whose scheduler has `overrun`,
/// and `seed`. `base_dir` resolves relative paths in the mappings (reservations' `csv`, a queue
/// setup's `aleang` file). Messages name the options by `labels`.
pub fn resolve(
    labels: &Labels,
    mappings: Mappings<'_>,
    workload: Value,
    cluster: Value,
    overrun: &str,
    seed: u64,
    base_dir: &Path,
) -> Result<Sections, ApiError> {
    if mappings.is_empty() {
        return Ok(Sections::default());
    }
    for (keyword, label, value) in [
        ("queues", &labels.queues, mappings.queues),
        ("reservations", &labels.reservations, mappings.reservations),
        ("fairshare", &labels.fairshare, mappings.fairshare),
        ("priority", &labels.priority, mappings.priority),
    ] {
        if let Some(v) = value
            && !v.is_object()
        {
            return Err(ApiError::input(format!(
                "{label} takes a mapping (a manifest's `{}` entry), found {}",
                section_of(keyword),
                kind(v)
            ))
            .with_hint(format!(
                "see docs/{}.md",
                if keyword == "priority" {
                    "fairshare"
                } else {
                    keyword
                }
            )));
        }
    }
    // A generated workload's `target_load` names the cluster it targets: the cluster takes that
    // name, as `api::generated` gives it.
    let cluster_name = workload
        .get("synthetic")
        .and_then(|s| s.get("target_load"))
        .and_then(|t| t.get("cluster"))
        .and_then(Value::as_str)
        .unwrap_or(CLUSTER)
        .to_string();
    let mut scheduler = Map::new();
    scheduler.insert("policy".into(), json!("easy"));
    scheduler.insert("overrun".into(), json!(overrun));
    for (key, value) in [
        ("fairshare", mappings.fairshare),
        ("priority", mappings.priority),
        ("reorder", mappings.reorder),
    ] {
        if let Some(v) = value {
            scheduler.insert(key.into(), v.clone());
        }
    }
    let mut doc = json!({
        "name": "simulate",
        "seed": seed,
        "workloads": { WORKLOAD: workload },
        "clusters": { cluster_name.clone(): cluster },
        "schedulers": { SCHEDULER: scheduler },
    });
    if let Some(q) = mappings.queues {
        doc["queues"] = json!({ SETUP: q });
    }
    if let Some(r) = mappings.reservations {
        doc["reservations"] = json!({ SETUP: r });
    }
    let text = doc.to_string();
    let m = manifest::load_str(&text, "simulate", base_dir, "simulate")
        .map_err(|e| located(e, labels, &cluster_name))?;
    let Some(cell) = m.cells.first() else {
        return Err(ApiError::failed(
            "the one-cell manifest of the options has no cell",
        ));
    };
    Ok(Sections {
        queues: cell.queues.clone(),
        reservations: cell.reservations.clone(),
        fairshare: mappings
            .fairshare
            .map(|_| cell.scheduler.order.fairshare.clone()),
        priority: mappings
            .priority
            .map(|_| cell.scheduler.order.priority.clone()),
        reorder: mappings.reorder.map(|_| cell.scheduler.order.reorder),
    })
}

/// The manifest section entry a keyword's mapping is.
fn section_of(keyword: &str) -> &'static str {
    match keyword {
        "queues" => "queues.<setup>",
        "reservations" => "reservations.<scenario>",
        "priority" => "schedulers.<name>.priority",
        _ => "schedulers.<name>.fairshare",
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The manifest's error with its key path given from the keyword whose mapping it is in:
/// `queues.setup.queues[0].max_running` becomes `queues=, at queues[0].max_running`. The
/// one-cell manifest's text and positions mean nothing to the caller and are left out.
fn located(e: ManifestError, labels: &Labels, cluster: &str) -> ApiError {
    let prefixes = [
        (format!("queues.{SETUP}"), labels.queues.as_str()),
        (format!("reservations.{SETUP}"), &labels.reservations),
        (
            format!("schedulers.{SCHEDULER}.fairshare"),
            &labels.fairshare,
        ),
        (format!("schedulers.{SCHEDULER}.priority"), &labels.priority),
        (format!("schedulers.{SCHEDULER}.reorder"), &labels.reorder),
        (format!("schedulers.{SCHEDULER}.overrun"), &labels.overrun),
        (format!("clusters.{cluster}"), "the machine"),
        (format!("workloads.{WORKLOAD}"), "the workload"),
    ];
    let path = e.key_path.as_str();
    let place = prefixes.iter().find_map(|(prefix, keyword)| {
        let rest = path.strip_prefix(prefix.as_str())?;
        if rest.is_empty() {
            Some(keyword.to_string())
        } else if let Some(inner) = rest.strip_prefix('.') {
            Some(format!("{keyword}, at {inner}"))
        } else if rest.starts_with('[') {
            Some(format!("{keyword}, at {rest}"))
        } else {
            None
        }
    });
    // Checks of a scenario against its cluster name the one cell, which the caller never saw.
    let text = e.message.strip_prefix(CELL_PREFIX).unwrap_or(&e.message);
    let message = match (place, path.is_empty()) {
        (Some(place), _) => format!("{place}: {text}"),
        (None, true) => text.to_string(),
        (None, false) => format!("at {path}: {text}"),
    };
    let error = ApiError::input(message);
    match e.hint {
        Some(h) => error.with_hint(h),
        None => error,
    }
}
