//! Building the DAG (pure): one *simulate* node per distinct cell computation and one
//! *aggregate* node per experiment, keyed by canonical key material.
//!
//! Simulate material holds what changes a simulation's output — the trace's content hash (never
//! its path), transforms, machine, scheduler and metric settings, and the model version (a hash
//! of the simulator's sources, computed by build.rs). Names of workloads, clusters and
//! schedulers, cell ids, seeds of trace workloads (deterministic), thread counts and paths stay
//! out, so renaming an entry or re-running with `-j 8` reuses the cache. Identical computations
//! in several cells or experiments share one node.
//!
//! Aggregate material holds the experiment's cells (id, parameters, upstream key), the manifest
//! hash, the schedlab version and the git commit — all written into the result files' metadata.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::key::{KEY_SCHEMA, NodeKey};
use crate::cache::Digest;
use crate::manifest::{Cell, Manifest, WorkloadSource};

/// The version of the simulation model (see build.rs).
pub const MODEL_VERSION: &str = env!("SCHEDLAB_MODEL_VERSION");
/// The version of the aggregation code (see build.rs).
pub const AGGREGATE_VERSION: &str = env!("SCHEDLAB_AGGREGATE_VERSION");

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// Simulates `cells` (experiment index, cell index): the first one is computed, the others
    /// share its result.
    Simulate { cells: Vec<(usize, usize)> },
    /// Writes the result files of experiment `experiment`.
    Aggregate { experiment: usize },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// `<experiment>/<cell id>` or `<experiment>`.
    pub label: String,
    pub kind: NodeKind,
    pub key: NodeKey,
    pub material: Value,
    /// Upstream nodes (indices into [`Plan::nodes`]); upstream nodes come first.
    pub deps: Vec<usize>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub nodes: Vec<Node>,
}

/// What the planner knows of the world, gathered by the caller.
pub struct Inputs<'a> {
    /// Content digest of every trace the manifests name.
    pub digests: &'a BTreeMap<PathBuf, Digest>,
    /// The git commit the manifests are in (with `-dirty` for uncommitted changes), if any.
    pub commit: Option<&'a str>,
}

/// Key material of the simulation of `cell`; `trace` is the digest of its trace, for trace
/// workloads.
pub fn simulate_material(cell: &Cell, trace: Option<&Digest>) -> Value {
    // A reservation scenario counts by content, not by name; its seed only when it draws
    // requests at random.
    let reservations = cell.reservations.as_ref().map(|r| {
        let mut v = serde_json::to_value(r).expect("reservation specs serialize");
        if let Some(map) = v.as_object_mut() {
            map.remove("name");
        }
        v
    });
    let synthetic = match &cell.workload.source {
        WorkloadSource::Synthetic(spec) => Some(spec),
        WorkloadSource::Trace(_) => None,
    };
    let generated_reservations = cell
        .reservations
        .as_ref()
        .is_some_and(|r| r.generator.is_some());
    // The seed counts only where something is drawn at random.
    let seed = (synthetic.is_some() || generated_reservations).then_some(cell.seed);
    // Topology settings enter only where they exist, so uniform machines keep their material.
    let mut cluster = json!({ "procs": cell.cluster.procs, "node_size": cell.cluster.node_size });
    if let Some(t) = &cell.cluster.topology {
        cluster["topology"] = serde_json::to_value(t).expect("topologies serialize");
    }
    let mut scheduler = json!({
        "policy": cell.scheduler.policy,
        "interval": cell.scheduler.interval,
        "overrun": cell.scheduler.overrun,
    });
    if cell.cluster.topology.is_some() {
        scheduler["placement"] = json!(cell.scheduler.placement);
    }
    let mut workload = json!({
        "trace": trace,
        "synthetic": synthetic,
        "transforms": cell.workload.transforms,
        "lenient": cell.workload.lenient,
    });
    if !cell.workload.reads_standard() {
        workload["reading"] = json!(cell.workload.reading);
    }
    let mut material = json!({
        "key_schema": KEY_SCHEMA,
        "node": "simulate",
        "model_version": MODEL_VERSION,
        "workload": workload,
        "cluster": cluster,
        "scheduler": scheduler,
        "metrics": cell.metrics,
        "reservations": reservations,
        "seed": seed,
    });
    // Queues count by content, and only where a cell has them (other keys are unchanged).
    if let Some(q) = &cell.queues {
        material["queues"] = serde_json::to_value(&q.limits).expect("limits serialize");
    }
    material
}

/// Builds the plan for `manifests`. Panics only if a digest is missing for a trace the
/// manifests name (the caller computes them from the same manifests).
pub fn build(manifests: &[Manifest], inputs: &Inputs<'_>) -> Plan {
    let mut plan = Plan::default();
    let mut by_key: BTreeMap<NodeKey, usize> = BTreeMap::new();
    let mut cell_nodes: Vec<Vec<usize>> = Vec::new();
    for (e, manifest) in manifests.iter().enumerate() {
        let mut nodes_of_cells = Vec::with_capacity(manifest.cells.len());
        for (c, cell) in manifest.cells.iter().enumerate() {
            let digest = cell.workload.trace().map(|t| &inputs.digests[t]);
            let material = simulate_material(cell, digest);
            let key = NodeKey::of(&material);
            let index = *by_key.entry(key.clone()).or_insert_with(|| {
                plan.nodes.push(Node {
                    label: format!("{}/{}", manifest.name, cell.id),
                    kind: NodeKind::Simulate { cells: Vec::new() },
                    key,
                    material,
                    deps: Vec::new(),
                });
                plan.nodes.len() - 1
            });
            if let NodeKind::Simulate { cells } = &mut plan.nodes[index].kind {
                cells.push((e, c));
            }
            nodes_of_cells.push(index);
        }
        cell_nodes.push(nodes_of_cells);
    }
    for (e, manifest) in manifests.iter().enumerate() {
        let cells: Vec<Value> = manifest
            .cells
            .iter()
            .zip(&cell_nodes[e])
            .map(|(cell, &n)| json!({ "id": cell.id, "params": cell.params, "key": plan.nodes[n].key }))
            .collect();
        let material = json!({
            "key_schema": KEY_SCHEMA,
            "node": "aggregate",
            "aggregate_version": AGGREGATE_VERSION,
            "schedlab_version": env!("CARGO_PKG_VERSION"),
            "experiment": manifest.name,
            "manifest": manifest.hash,
            "commit": inputs.commit,
            "axes": manifest.axes,
            "cells": cells,
        });
        let mut deps = cell_nodes[e].clone();
        deps.sort_unstable();
        deps.dedup();
        plan.nodes.push(Node {
            label: manifest.name.clone(),
            kind: NodeKind::Aggregate { experiment: e },
            key: NodeKey::of(&material),
            material,
            deps,
        });
    }
    plan
}
