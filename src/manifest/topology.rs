//! Topologies in manifests (docs/manifest.md, "Topologies"): a system of clusters, each a list
//! of node classes, written in YAML or imported from an Alea/AleaNG machine file and amended.
//!
//! ```yaml
//! clusters:
//!   example3:
//!     topology:
//!       small: {nodes: [{count: 10, cores: 8, memory: 16 GB}]}
//!       big: {nodes: [{count: 1, cores: 80, memory: 512 GB}]}
//!   wagap:
//!     machines: ../workloads/wagap-2013.swf.machines
//!     properties: [x86_64]            # every node
//!     topology:
//!       zegox: {allocation: exclusive} # amends the imported cluster `zegox`
//! ```
//!
//! Settings apply from the most specific: a class's own, then its cluster's, then the
//! system's. The result is validated as the simulator will use it
//! ([`crate::sim::topology::Topology::validate`]).

use serde_saphyr::Location;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::model::{NodeClassSpec, TopologyClusterSpec, TopologySpec};
use super::raw::{RawAllocation, RawCluster, RawNodeClass, RawTopologyCluster};
use super::units::parse_memory_kb;
use crate::sim::Allocation;
use crate::sim::topology::Cluster;

fn allocation(raw: RawAllocation) -> Allocation {
    match raw {
        RawAllocation::Shared => Allocation::Shared,
        RawAllocation::Exclusive => Allocation::ExclusiveNodes,
    }
}

pub fn resolve(
    ctx: &Ctx<'_>,
    path: &str,
    name: &str,
    c: &RawCluster,
) -> Result<TopologySpec, ManifestError> {
    for (key, set) in [
        ("procs", c.procs.is_some()),
        ("node_size", c.node_size.is_some()),
        ("from_trace", c.from_trace.is_some()),
    ] {
        if set {
            return Err(ctx
                .key_error(
                    &format!("{path}.{key}"),
                    key,
                    format!(
                        "`{key}` describes a processor pool, but cluster `{name}` is a topology"
                    ),
                )
                .hint("a topology's size is its nodes: drop this key"));
        }
    }
    let system_allocation = c.allocation.map(allocation);
    let mut clusters = match &c.machines {
        Some(file) => imported(ctx, path, file, c)?,
        None => Vec::new(),
    };
    let imported = !clusters.is_empty();
    for (cname, raw) in c.topology.iter().flat_map(|t| t.value.0.iter()) {
        let cpath = format!("{path}.topology.{cname}");
        let existing = clusters.iter_mut().find(|x| &x.name == cname);
        match (existing, &raw.nodes, imported) {
            (Some(target), None, true) => amend(ctx, &cpath, target, raw)?,
            (Some(_), Some(nodes), true) => {
                let message = format!(
                    "cluster `{cname}` comes from the machine file; its nodes cannot be redefined"
                );
                let path = format!("{cpath}.nodes");
                let err = match nodes.first() {
                    Some(n) => ctx.error(&path, message, &n.referenced),
                    None => ctx.key_error(&path, cname, message),
                };
                return Err(err
                    .hint("amend it with allocation, properties, speed, spec or cost, or define the system without `machines`"));
            }
            (None, _, true) => {
                let known: Vec<&str> = clusters.iter().map(|x| x.name.as_str()).collect();
                let err = ctx.key_error(
                    &cpath,
                    cname,
                    format!("the machine file has no cluster `{cname}`"),
                );
                return Err(
                    match super::error::did_you_mean(cname, known.iter().copied()) {
                        Some(s) => err.hint(format!("did you mean `{s}`?")),
                        None => err.hint(format!("its clusters: {}", known.join(", "))),
                    },
                );
            }
            (_, None, false) => {
                return Err(ctx
                    .key_error(&cpath, cname, format!("cluster `{cname}` has no `nodes`"))
                    .hint("e.g. `nodes: [{count: 10, cores: 8, memory: 16 GiB}]`"));
            }
            (_, Some(nodes), false) => {
                let mut cluster = TopologyClusterSpec {
                    name: cname.clone(),
                    allocation: Allocation::Shared,
                    classes: Vec::with_capacity(nodes.len()),
                };
                for (i, n) in nodes.iter().enumerate() {
                    let default_name = if nodes.len() == 1 {
                        cname.clone()
                    } else {
                        format!("{cname}-{}", i + 1)
                    };
                    cluster.classes.push(class(
                        ctx,
                        &format!("{cpath}.nodes[{i}]"),
                        &n.value,
                        &n.referenced,
                        default_name,
                    )?);
                }
                let allocation_given = raw.allocation.is_some();
                amend(ctx, &cpath, &mut cluster, raw)?;
                if !allocation_given {
                    cluster.allocation = system_allocation.unwrap_or_default();
                }
                clusters.push(cluster);
            }
        }
    }
    if imported {
        // Imported clusters take the system's allocation unless amended.
        for cluster in &mut clusters {
            let amended = c
                .topology
                .iter()
                .flat_map(|t| t.value.0.iter())
                .any(|(n, r)| *n == cluster.name && r.allocation.is_some());
            if !amended && let Some(a) = system_allocation {
                cluster.allocation = a;
            }
        }
    }
    let locate = |e: ManifestError| match &c.topology {
        Some(t) => ctx.locate(e, &t.referenced),
        None => e,
    };
    if clusters.is_empty() {
        return Err(locate(ManifestError::new(
            ctx.file,
            format!("{path}.topology"),
            "a topology needs at least one cluster",
        )));
    }
    let extra = c.properties.clone().unwrap_or_default();
    for cluster in &mut clusters {
        for class in &mut cluster.classes {
            add_properties(&mut class.properties, &extra);
        }
    }
    check_speeds(ctx, path, &clusters)?;
    let spec = TopologySpec {
        clusters,
        ignore_memory: c.ignore_memory.unwrap_or(false),
        scale_runtime: c.scale_runtime.unwrap_or(false),
        machines: c.machines.as_ref().map(|m| m.value.clone()),
    };
    spec.topology().validate().map_err(|e| {
        locate(ManifestError::new(
            ctx.file,
            format!("{path}.topology"),
            e.to_string(),
        ))
    })?;
    Ok(spec)
}

/// The clusters of an Alea/AleaNG machine file.
fn imported(
    ctx: &Ctx<'_>,
    path: &str,
    file: &serde_saphyr::Spanned<String>,
    c: &RawCluster,
) -> Result<Vec<TopologyClusterSpec>, ManifestError> {
    let kpath = format!("{path}.machines");
    let full = ctx.existing_file(&kpath, "machine", file)?;
    let parsed = crate::machines::read_path(&full).map_err(|e| {
        ctx.error(&kpath, format!("failed to import the machine file: {e}"), &file.referenced)
            .hint("Alea lines are `id name nodes cpus_per_node rating ram_KB`; AleaNG lines `cl_id name nodes CPUs speed GB_RAM properties GPUs` (docs/manifest.md)")
    })?;
    let _ = c;
    Ok(parsed.clusters.iter().map(from_sim).collect())
}

fn from_sim(c: &Cluster) -> TopologyClusterSpec {
    TopologyClusterSpec {
        name: c.name.clone(),
        allocation: c.allocation,
        classes: c
            .classes
            .iter()
            .map(|k| NodeClassSpec {
                name: k.name.clone(),
                count: k.count,
                cores: k.cores,
                memory_kb: k.memory_kb,
                gpus: k.gpus,
                speed: k.speed,
                spec_per_core: k.spec_per_core,
                properties: k.properties.clone(),
                cost: k.cost,
            })
            .collect(),
    }
}

/// Applies a cluster's settings to it (and to all its classes).
fn amend(
    ctx: &Ctx<'_>,
    path: &str,
    cluster: &mut TopologyClusterSpec,
    raw: &RawTopologyCluster,
) -> Result<(), ManifestError> {
    if let Some(a) = raw.allocation {
        cluster.allocation = allocation(a);
    }
    let extra = raw.properties.clone().unwrap_or_default();
    let check = |key: &str, v: &serde_saphyr::Spanned<f64>, zero_ok: bool| {
        positive_number(
            ctx,
            &format!("{path}.{key}"),
            v.value,
            zero_ok,
            &v.referenced,
        )
    };
    if let Some(v) = &raw.speed {
        check("speed", v, false)?;
    }
    if let Some(v) = &raw.spec {
        check("spec", v, false)?;
    }
    if let Some(v) = &raw.cost {
        check("cost", v, true)?;
    }
    for class in &mut cluster.classes {
        add_properties(&mut class.properties, &extra);
        if let Some(v) = &raw.spec {
            class.spec_per_core = Some(v.value);
            class.speed = v.value;
        }
        if let Some(v) = &raw.speed {
            class.speed = v.value;
        }
        if let Some(v) = &raw.cost {
            class.cost = v.value;
        }
    }
    Ok(())
}

fn class(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawNodeClass,
    loc: &Location,
    default_name: String,
) -> Result<NodeClassSpec, ManifestError> {
    if raw.count == 0 {
        return Err(ctx.error(
            &format!("{path}.count"),
            "expected a positive number of nodes, found 0",
            loc,
        ));
    }
    if raw.cores == 0 {
        return Err(ctx.error(
            &format!("{path}.cores"),
            "expected a positive number of cores per node, found 0",
            loc,
        ));
    }
    if u64::from(raw.cores) > crate::sim::topology::MAX_CORES_PER_NODE {
        return Err(ctx
            .error(
                &format!("{path}.cores"),
                format!(
                    "{} cores per node; at most {} are supported",
                    raw.cores,
                    crate::sim::topology::MAX_CORES_PER_NODE
                ),
                loc,
            )
            .hint("the simulator keeps a counter per free-core count of a node class"));
    }
    let memory_kb = match &raw.memory {
        Some(m) => parse_memory_kb(&m.0).map_err(|e| {
            ctx.error(&format!("{path}.memory"), e, loc).hint(
                "write memory per node with a unit, e.g. `memory: 16 GiB` (GB = GiB = 2^30 bytes)",
            )
        })?,
        None => 0,
    };
    for (key, v, zero_ok) in [
        ("speed", raw.speed, false),
        ("spec", raw.spec, false),
        ("cost", raw.cost, true),
    ] {
        if let Some(v) = v {
            positive_number(ctx, &format!("{path}.{key}"), v, zero_ok, loc)?;
        }
    }
    let mut properties = raw.properties.clone().unwrap_or_default();
    properties.sort();
    properties.dedup();
    Ok(NodeClassSpec {
        name: raw.name.clone().unwrap_or(default_name),
        count: raw.count,
        cores: raw.cores,
        memory_kb,
        gpus: raw.gpus.unwrap_or(0),
        speed: raw.speed.or(raw.spec).unwrap_or(1.0),
        spec_per_core: raw.spec,
        properties,
        cost: raw.cost.unwrap_or(1.0),
    })
}

fn positive_number(
    ctx: &Ctx<'_>,
    path: &str,
    v: f64,
    zero_ok: bool,
    loc: &Location,
) -> Result<(), ManifestError> {
    if v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) {
        Ok(())
    } else {
        let what = if zero_ok {
            "a non-negative number"
        } else {
            "a positive number"
        };
        Err(ctx.error(path, format!("expected {what}, found {v}"), loc))
    }
}

fn add_properties(properties: &mut Vec<String>, extra: &[String]) {
    properties.extend(extra.iter().cloned());
    properties.sort();
    properties.dedup();
}

/// Speeds only matter as ratios: a system whose speeds mix SPEC ratings with plain relative
/// speeds (default 1) would scale runtimes by nonsense ratios.
fn check_speeds(
    ctx: &Ctx<'_>,
    path: &str,
    clusters: &[TopologyClusterSpec],
) -> Result<(), ManifestError> {
    let classes: Vec<(&str, &NodeClassSpec)> = clusters
        .iter()
        .flat_map(|c| c.classes.iter().map(move |k| (c.name.as_str(), k)))
        .collect();
    let from_spec = classes
        .iter()
        .find(|(_, k)| k.spec_per_core.is_some_and(|s| s == k.speed));
    let plain = classes
        .iter()
        .find(|(_, k)| k.spec_per_core.is_none() && k.speed == 1.0);
    if let (Some((a, ka)), Some((b, kb))) = (from_spec, plain) {
        return Err(ctx
            .key_error(path, path.rsplit('.').next().unwrap_or(path), format!(
                "class `{}` of cluster `{a}` takes its speed from its SPEC rating, but class `{}` of cluster `{b}` has neither `spec` nor `speed`",
                ka.name, kb.name
            ))
            .hint("give every class a `spec` (or every class a `speed`): speeds are compared as ratios"));
    }
    Ok(())
}
