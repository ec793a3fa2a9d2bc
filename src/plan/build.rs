//! Building the DAG (pure): one *simulate* node per distinct schedule, one *metrics* node per
//! distinct (schedule, metric settings) and one *aggregate* node per experiment, keyed by
//! canonical key material.
//!
//! Simulate material holds what changes a simulated schedule — the trace's content hash (never
//! its path), transforms, machine, scheduler and reservation settings, and the model version (a
//! hash of the simulator's sources, computed by build.rs). Metric settings (τ, warm-up, size
//! classes, time-series step) are not part of it: they enter the metrics node's material with
//! the simulate key it reads and the metrics version, so a τ axis or a changed warm-up computes
//! metrics again from the cached schedule and never simulates again. Names of workloads,
//! clusters and schedulers, cell ids, seeds of trace workloads (deterministic), thread counts
//! and paths stay out, so renaming an entry or re-running with `-j 8` reuses the cache.
//! Identical computations in several cells or experiments share one node.
//!
//! Aggregate material holds the manifest hash, the schedlab version, the git commit, the
//! command that reproduces the result set and the traces' digests — all written into the result
//! files' metadata — and a digest of the experiment's cells (id, parameters, upstream key).
//!
//! The plan keeps keys, not material: material is rebuilt on demand ([`Plan::material`]), so
//! planning a grid of a million cells holds a few hundred bytes per cell.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::key::{KEY_SCHEMA, NodeKey};
use crate::cache::Digest;
use crate::manifest::queues::QueueSetup;
use crate::manifest::{
    Cell, ClusterSpec, Manifest, MetricsSpec, ReservationSpec, SchedulerSpec, WorkloadSource,
    WorkloadSpec,
};
use crate::sim::scheduler::order::OrderSpec;

/// The version of the simulation model (see build.rs).
pub const MODEL_VERSION: &str = env!("SCHEDLAB_MODEL_VERSION");
/// The version of the metrics code (see build.rs).
pub const METRICS_VERSION: &str = env!("SCHEDLAB_METRICS_VERSION");
/// The version of the aggregation code (see build.rs).
pub const AGGREGATE_VERSION: &str = env!("SCHEDLAB_AGGREGATE_VERSION");

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// Simulates cell `cell` (experiment index, cell index); every other cell with the same key
    /// shares its result ([`Plan::cell_nodes`]).
    Simulate { cell: (usize, usize) },
    /// Computes the metrics of cell `cell` from the schedule of its simulate node (its only
    /// upstream node); shared like simulate nodes.
    Metrics { cell: (usize, usize) },
    /// Writes the result files of experiment `experiment`.
    Aggregate { experiment: usize },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// `<experiment>/<cell id>` or `<experiment>`.
    pub label: String,
    pub kind: NodeKind,
    pub key: NodeKey,
    /// Upstream nodes (indices into [`Plan::nodes`]); upstream nodes come first.
    pub deps: Vec<usize>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub nodes: Vec<Node>,
    /// For each experiment, the metrics node of each of its cells, in cell order (its simulate
    /// node is [`Plan::simulation_of`]).
    pub cell_nodes: Vec<Vec<usize>>,
    digests: BTreeMap<PathBuf, Digest>,
    commit: Option<String>,
    commands: Vec<String>,
}

/// What the planner knows of the world, gathered by the caller.
pub struct Inputs<'a> {
    /// Content digest of every trace the manifests name.
    pub digests: &'a BTreeMap<PathBuf, Digest>,
    /// The git commit the manifests are in (with `-dirty` for uncommitted changes), if any.
    pub commit: Option<&'a str>,
    /// For each manifest, the command that reproduces its results (recorded as provenance);
    /// `schedlab run <manifest path>` when absent.
    pub commands: &'a [String],
}

/// Key material of the simulation of `cell`; `trace` is the digest of its trace, for trace
/// workloads.
pub fn simulate_material(cell: &Cell, trace: Option<&Digest>) -> Value {
    let parts = simulate_material_parts(cell, trace);
    let mut material = json!({
        "key_schema": KEY_SCHEMA,
        "node": "simulate",
        "model_version": MODEL_VERSION,
        "workload": parts.workload(),
        "cluster": parts.cluster(),
        "scheduler": parts.scheduler(),
        "reservations": parts.reservations(),
        "seed": parts.seed(),
    });
    // Queues count by content, and only where a cell has them (other keys are unchanged).
    if let Some(q) = parts.queues() {
        material["queues"] = q;
    }
    material
}

/// Key material of the metrics of `cell`, computed from the schedule of simulate node
/// `simulation`.
pub fn metrics_material(cell: &Cell, simulation: &NodeKey) -> Value {
    json!({
        "key_schema": KEY_SCHEMA,
        "node": "metrics",
        "metrics_version": METRICS_VERSION,
        "metrics": cell.metrics,
        "upstream": simulation,
    })
}

fn simulate_material_parts<'a>(cell: &'a Cell, trace: Option<&'a Digest>) -> Parts<'a> {
    Parts { cell, trace }
}

/// The parts of a simulate node's material.
struct Parts<'a> {
    cell: &'a Cell,
    trace: Option<&'a Digest>,
}

impl Parts<'_> {
    fn workload(&self) -> Value {
        let w = &self.cell.workload;
        let synthetic = match &w.source {
            WorkloadSource::Synthetic(spec) => Some(spec),
            WorkloadSource::Trace(_) => None,
        };
        let mut workload = json!({
            "trace": self.trace,
            "synthetic": synthetic,
            "transforms": w.transforms,
            "lenient": w.lenient,
        });
        if !w.reads_standard() {
            workload["reading"] = json!(w.reading);
        }
        workload
    }

    fn cluster(&self) -> Value {
        // Topology settings enter only where they exist, so uniform machines keep their
        // material.
        let c = &self.cell.cluster;
        let mut cluster = json!({ "procs": c.procs, "node_size": c.node_size });
        if let Some(t) = &c.topology {
            cluster["topology"] = serde_json::to_value(t).expect("topologies serialize");
        }
        cluster
    }

    fn scheduler(&self) -> Value {
        let s = &self.cell.scheduler;
        let mut scheduler =
            json!({ "policy": s.policy, "interval": s.interval, "overrun": s.overrun });
        if self.cell.cluster.topology.is_some() {
            scheduler["placement"] = json!(s.placement);
        }
        // The queue order enters the key only when it is not the default (submission order,
        // default fairshare settings), so the keys of cells that predate orders stay what they
        // were.
        if s.order != OrderSpec::default() {
            scheduler["order"] = json!(s.order);
        }
        // A Python policy replaces the rule: its class, parameters and sources' contents.
        if let Some(python) = &s.python {
            scheduler["policy"] = json!("python");
            scheduler["python"] = python.key_material();
        }
        scheduler
    }

    /// A reservation scenario counts by content, not by name.
    fn reservations(&self) -> Value {
        match &self.cell.reservations {
            Some(r) => {
                let mut v = serde_json::to_value(r).expect("reservation specs serialize");
                if let Some(map) = v.as_object_mut() {
                    map.remove("name");
                }
                v
            }
            None => Value::Null,
        }
    }

    /// A queue setup counts by its limits (not its name); `None` without one.
    fn queues(&self) -> Option<Value> {
        self.cell
            .queues
            .as_ref()
            .map(|q| serde_json::to_value(&q.limits).expect("limits serialize"))
    }

    /// The seed counts only where something is drawn at random: a synthetic workload or
    /// generated reservation requests.
    fn seed(&self) -> Option<u64> {
        let cell = self.cell;
        let synthetic = matches!(cell.workload.source, WorkloadSource::Synthetic(_));
        let generated = cell
            .reservations
            .as_ref()
            .is_some_and(|r| r.generator.is_some());
        (synthetic || generated).then_some(cell.seed)
    }
}

/// Computes simulate keys without building each cell's material: the canonical JSON of each
/// setting is made once (cells share their settings through `Arc`s, which identify them) and
/// the parts are joined in the sorted key order of [`simulate_material`] — the same bytes,
/// hence the same key (a unit test compares them).
#[derive(Default)]
struct KeyMaker {
    workloads: HashMap<*const WorkloadSpec, String>,
    clusters: HashMap<*const ClusterSpec, String>,
    /// By scheduler and whether the cluster is a topology (placement counts only there).
    schedulers: HashMap<(*const SchedulerSpec, bool), String>,
    metrics: HashMap<*const MetricsSpec, String>,
    reservations: HashMap<*const ReservationSpec, String>,
    queues: HashMap<*const QueueSetup, String>,
}

fn canonical(value: &Value) -> String {
    serde_json::to_string(value).expect("material serializes")
}

impl KeyMaker {
    fn key(&mut self, cell: &Cell, trace: Option<&Digest>) -> NodeKey {
        let material = simulate_material_parts(cell, trace);
        let workload = self
            .workloads
            .entry(Arc::as_ptr(&cell.workload))
            .or_insert_with(|| canonical(&material.workload()));
        let cluster = self
            .clusters
            .entry(Arc::as_ptr(&cell.cluster))
            .or_insert_with(|| canonical(&material.cluster()));
        let scheduler = self
            .schedulers
            .entry((
                Arc::as_ptr(&cell.scheduler),
                cell.cluster.topology.is_some(),
            ))
            .or_insert_with(|| canonical(&material.scheduler()));
        let reservations = match &cell.reservations {
            Some(r) => self
                .reservations
                .entry(Arc::as_ptr(r))
                .or_insert_with(|| canonical(&material.reservations())),
            None => "null",
        };
        // Present only where a cell has queues, in its sorted place.
        let queues = match &cell.queues {
            Some(q) => {
                let text = self
                    .queues
                    .entry(Arc::as_ptr(q))
                    .or_insert_with(|| canonical(&material.queues().expect("a queue setup")));
                format!(r#""queues":{text},"#)
            }
            None => String::new(),
        };
        let seed = material
            .seed()
            .map_or("null".to_string(), |s| s.to_string());
        let bytes = format!(
            r#"{{"cluster":{cluster},"key_schema":{KEY_SCHEMA},"model_version":"{MODEL_VERSION}","node":"simulate",{queues}"reservations":{reservations},"scheduler":{scheduler},"seed":{seed},"workload":{workload}}}"#
        );
        NodeKey::of_bytes(bytes.as_bytes())
    }

    /// The key of [`metrics_material`], joined like [`KeyMaker::key`].
    fn metrics_key(&mut self, cell: &Cell, simulation: &NodeKey) -> NodeKey {
        let metrics = self
            .metrics
            .entry(Arc::as_ptr(&cell.metrics))
            .or_insert_with(|| canonical(&json!(cell.metrics)));
        let bytes = format!(
            r#"{{"key_schema":{KEY_SCHEMA},"metrics":{metrics},"metrics_version":"{METRICS_VERSION}","node":"metrics","upstream":"{simulation}"}}"#
        );
        NodeKey::of_bytes(bytes.as_bytes())
    }
}

/// The command recorded when the caller gives none.
pub fn default_command(manifest: &Manifest) -> String {
    format!("schedlab run {}", manifest.path.display())
}

/// Each trace of `manifest`, named as the manifest writes it (relative to its folder), with its
/// digest.
fn traces_of(manifest: &Manifest, digests: &BTreeMap<PathBuf, Digest>) -> BTreeMap<String, Value> {
    let base = manifest
        .path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut traces = BTreeMap::new();
    let mut last: Option<&PathBuf> = None;
    for cell in &manifest.cells {
        let Some(path) = cell.workload.trace() else {
            continue;
        };
        // Cells of a workload are mostly consecutive: skip the map lookup for repeats.
        if last == Some(path) {
            continue;
        }
        last = Some(path);
        let name = path.strip_prefix(base).unwrap_or(path);
        let name = name.to_string_lossy().replace('\\', "/");
        traces
            .entry(name)
            .or_insert_with(|| json!(digests.get(path)));
    }
    traces
}

impl Plan {
    /// The key material of node `i` (rebuilt: the plan keeps only keys).
    pub fn material(&self, manifests: &[Manifest], i: usize) -> Value {
        match self.nodes[i].kind {
            NodeKind::Simulate { cell: (e, c) } => {
                let cell = &manifests[e].cells[c];
                simulate_material(cell, cell.workload.trace().map(|t| &self.digests[t]))
            }
            NodeKind::Metrics { cell: (e, c) } => {
                let simulation = &self.nodes[self.simulation_of(i)].key;
                metrics_material(&manifests[e].cells[c], simulation)
            }
            NodeKind::Aggregate { experiment } => self.aggregate_material(manifests, experiment),
        }
    }

    /// The digest of the trace simulate node `i` reads (`None` for synthetic workloads and
    /// aggregate nodes).
    pub fn trace_digest(&self, manifests: &[Manifest], i: usize) -> Option<&Digest> {
        match self.nodes[i].kind {
            NodeKind::Simulate { cell: (e, c) } => manifests[e].cells[c]
                .workload
                .trace()
                .and_then(|t| self.digests.get(t)),
            NodeKind::Metrics { .. } | NodeKind::Aggregate { .. } => None,
        }
    }

    /// The simulate node whose schedule metrics node `i` reads.
    pub fn simulation_of(&self, i: usize) -> usize {
        debug_assert!(matches!(self.nodes[i].kind, NodeKind::Metrics { .. }));
        self.nodes[i].deps[0]
    }

    /// The size of a trace the plan read (0 if unknown).
    pub fn trace_bytes(&self, path: &Path) -> u64 {
        self.digests.get(path).map_or(0, |d| d.bytes)
    }

    /// The metrics-node key of every cell of `experiment`, in cell order.
    pub fn cell_keys(&self, experiment: usize) -> impl ExactSizeIterator<Item = &NodeKey> {
        self.cell_nodes[experiment]
            .iter()
            .map(|&n| &self.nodes[n].key)
    }

    /// The aggregate node of `experiment`.
    pub fn aggregate_of(&self, experiment: usize) -> Option<usize> {
        // Aggregates follow every simulate node, in experiment order.
        let first = self.nodes.len().checked_sub(self.cell_nodes.len())?;
        let i = first + experiment;
        (self.nodes.get(i)?.kind == NodeKind::Aggregate { experiment }).then_some(i)
    }

    /// The command recorded as the provenance of `experiment`'s results.
    pub fn command(&self, manifests: &[Manifest], experiment: usize) -> String {
        self.commands
            .get(experiment)
            .cloned()
            .unwrap_or_else(|| default_command(&manifests[experiment]))
    }

    /// The traces of `experiment` with their digests, as JSON (recorded as provenance).
    pub fn traces(&self, manifests: &[Manifest], experiment: usize) -> Value {
        json!(traces_of(&manifests[experiment], &self.digests))
    }

    fn aggregate_material(&self, manifests: &[Manifest], e: usize) -> Value {
        let manifest = &manifests[e];
        // The cells enter as a digest of their canonical lines (id, parameters, upstream key):
        // a key of bounded size whatever the grid, and any change of a cell changes it.
        let mut cells = blake3::Hasher::new();
        for (cell, key) in manifest.cells.iter().zip(self.cell_keys(e)) {
            // Fields in sorted order: canonical JSON, as a `Value` would print it.
            #[derive(serde::Serialize)]
            struct Line<'a> {
                id: &'a str,
                key: &'a NodeKey,
                params: &'a crate::manifest::model::Params,
            }
            let line = Line {
                id: &cell.id,
                key,
                params: &cell.params,
            };
            serde_json::to_writer(&mut cells, &line).expect("cell line serializes");
            cells.update(b"\n");
        }
        json!({
            "key_schema": KEY_SCHEMA,
            "node": "aggregate",
            "aggregate_version": AGGREGATE_VERSION,
            "schedlab_version": env!("CARGO_PKG_VERSION"),
            "experiment": manifest.name,
            "manifest": manifest.hash,
            "commit": self.commit,
            "command": self.command(manifests, e),
            "traces": self.traces(manifests, e),
            "axes": manifest.axes,
            "upstream": {
                "cells": manifest.cells.len(),
                "digest": cells.finalize().to_hex().to_string(),
            },
        })
    }
}

/// Nodes by key: the index of the node with a key, or a new node.
#[derive(Default)]
struct Distinct {
    by_prefix: HashMap<u128, usize>,
    collisions: BTreeMap<NodeKey, usize>,
}

impl Distinct {
    /// The node keyed `key`, pushed onto `nodes` (built by `make`, keyed here) if new.
    fn node(&mut self, nodes: &mut Vec<Node>, key: NodeKey, make: impl FnOnce() -> Node) -> usize {
        let prefix = u128::from_str_radix(&key.as_str()[..32], 16).expect("hex key");
        let found = match self.by_prefix.get(&prefix) {
            Some(&i) if nodes[i].key == key => Some(i),
            Some(_) => self.collisions.get(&key).copied(),
            None => None,
        };
        found.unwrap_or_else(|| {
            let i = nodes.len();
            match self.by_prefix.entry(prefix) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
                std::collections::hash_map::Entry::Occupied(_) => {
                    self.collisions.insert(key.clone(), i);
                }
            }
            nodes.push(Node { key, ..make() });
            i
        })
    }
}

/// Builds the plan for `manifests`. Panics only if a digest is missing for a trace the
/// manifests name (the caller computes them from the same manifests).
pub fn build(manifests: &[Manifest], inputs: &Inputs<'_>) -> Plan {
    let mut plan = Plan {
        digests: inputs.digests.clone(),
        commit: inputs.commit.map(str::to_string),
        commands: inputs.commands.to_vec(),
        ..Plan::default()
    };
    // Distinct keys, by their first 128 bits (the full key is compared on a hit).
    let mut distinct = Distinct::default();
    let mut keys = KeyMaker::default();
    for (e, manifest) in manifests.iter().enumerate() {
        let mut nodes_of_cells = Vec::with_capacity(manifest.cells.len());
        for (c, cell) in manifest.cells.iter().enumerate() {
            let digest = cell.workload.trace().map(|t| &inputs.digests[t]);
            let label = || format!("{}/{}", manifest.name, cell.id);
            let key = keys.key(cell, digest);
            let simulation = distinct.node(&mut plan.nodes, key, || Node {
                label: label(),
                kind: NodeKind::Simulate { cell: (e, c) },
                key: NodeKey(String::new()),
                deps: Vec::new(),
            });
            let key = keys.metrics_key(cell, &plan.nodes[simulation].key);
            let metrics = distinct.node(&mut plan.nodes, key, || Node {
                label: format!("{}/metrics", label()),
                kind: NodeKind::Metrics { cell: (e, c) },
                key: NodeKey(String::new()),
                deps: vec![simulation],
            });
            nodes_of_cells.push(metrics);
        }
        plan.cell_nodes.push(nodes_of_cells);
    }
    drop(distinct);
    for (e, manifest) in manifests.iter().enumerate() {
        let material = plan.aggregate_material(manifests, e);
        let mut deps = plan.cell_nodes[e].clone();
        deps.sort_unstable();
        deps.dedup();
        plan.nodes.push(Node {
            label: manifest.name.clone(),
            kind: NodeKind::Aggregate { experiment: e },
            key: NodeKey::of(&material),
            deps,
        });
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_keys_are_the_hash_of_the_material() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.swf");
        std::fs::write(
            &trace,
            "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
        )
        .unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(
            &path,
            "workloads:\n  t: {trace: t.swf, first_jobs: 5}\n  s:\n    synthetic:\n      length: {jobs: 10}\n      users: [{name: u, arrivals: {lambda: 1e-3, delta: 1e-2, mu: 0.1}, runtime: [[1, 0], [60, 1]], procs: {weights: {1: 1}}}]\nclusters:\n  c: {procs: 8}\nschedulers:\n  e: {policy: easy, interval: 60}\nreservations:\n  r:\n    generate: {per_week: 3, procs: {fixed: 2}, hours: {fixed: 1}}\nqueues:\n  q:\n    queues:\n      - {name: all, max_running: 2}\ngrid:\n  axes:\n    reservations: [none, r]\n    queues: [none, q]\n    tau: [10, 20]\n    first_jobs: [3, 4]\nreplicas: 2\n",
        )
        .unwrap();
        let m = crate::manifest::load(&path).unwrap();
        let digest = Digest {
            blake3: "00".repeat(32),
            bytes: 99,
        };
        let mut maker = KeyMaker::default();
        for cell in &m.cells {
            let d = cell.workload.trace().map(|_| &digest);
            let key = maker.key(cell, d);
            assert_eq!(
                key,
                NodeKey::of(&simulate_material(cell, d)),
                "cell {}",
                cell.id
            );
            assert_eq!(
                maker.metrics_key(cell, &key),
                NodeKey::of(&metrics_material(cell, &key)),
                "cell {}",
                cell.id
            );
        }
        assert_eq!(m.cells.len(), 64);
        assert!(m.cells.iter().any(|c| c.queues.is_some()));
    }
}
