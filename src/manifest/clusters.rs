//! The `clusters` section: named machines of the grid's `cluster` axis. A machine is a
//! processor pool (`procs`), exclusive whole nodes (`procs` + `node_size`), the trace's own size
//! (`from_trace`), or a topology (`topology` and/or `machines`, resolved in [`super::topology`]).

use std::collections::BTreeMap;

use super::ctx::{Ctx, check_name};
use super::error::ManifestError;
use super::model::ClusterSpec;
use super::raw::RawCluster;

/// The cluster every trace workload runs on when the manifest defines none.
pub const DEFAULT_CLUSTER: &str = "trace";

pub fn resolve(
    ctx: &Ctx<'_>,
    raw: Option<&BTreeMap<String, RawCluster>>,
) -> Result<BTreeMap<String, ClusterSpec>, ManifestError> {
    let mut clusters = BTreeMap::new();
    let Some(defined) = raw else {
        clusters.insert(
            DEFAULT_CLUSTER.to_string(),
            ClusterSpec {
                name: DEFAULT_CLUSTER.into(),
                procs: None,
                node_size: None,
                topology: None,
            },
        );
        return Ok(clusters);
    };
    if defined.is_empty() {
        return Err(ctx.key_error(
            "clusters",
            "clusters",
            "at least one cluster is needed (or leave `clusters` out to use each trace's MaxProcs)",
        ));
    }
    for (name, c) in defined {
        check_name(ctx, "clusters", name)?;
        let path = format!("clusters.{name}");
        let spec = if c.topology.is_some() || c.machines.is_some() {
            ClusterSpec {
                name: name.clone(),
                procs: None,
                node_size: None,
                topology: Some(super::topology::resolve(ctx, &path, name, c)?),
            }
        } else {
            uniform(ctx, &path, name, c)?
        };
        clusters.insert(name.clone(), spec);
    }
    Ok(clusters)
}

/// A processor pool, exclusive nodes, or the trace's MaxProcs.
fn uniform(
    ctx: &Ctx<'_>,
    path: &str,
    name: &str,
    c: &RawCluster,
) -> Result<ClusterSpec, ManifestError> {
    let topology_only = [
        ("allocation", c.allocation.is_some()),
        ("properties", c.properties.is_some()),
        ("ignore_memory", c.ignore_memory.is_some()),
        ("scale_runtime", c.scale_runtime.is_some()),
    ];
    if let Some((key, _)) = topology_only.iter().find(|(_, set)| *set) {
        return Err(ctx
            .key_error(
                &format!("{path}.{key}"),
                key,
                format!("`{key}` applies to topologies, but cluster `{name}` is a processor pool"),
            )
            .hint("define the nodes under `topology` (or import `machines`); `node_size` gives whole nodes of a pool"));
    }
    let from_trace = c.from_trace.unwrap_or(false);
    let procs = match (&c.procs, from_trace) {
        (Some(p), true) => {
            return Err(ctx.error(
                &format!("{path}.procs"),
                "give `procs` or `from_trace: true`, not both",
                &p.referenced,
            ));
        }
        (Some(p), false) if p.value == 0 => {
            return Err(ctx.error(
                &format!("{path}.procs"),
                "expected a positive number of processors, found 0",
                &p.referenced,
            ));
        }
        (Some(p), false) => Some(p.value),
        (None, true) => None,
        (None, false) => {
            return Err(ctx
                .key_error(
                    path,
                    name,
                    "a cluster needs `procs: N`, `from_trace: true`, a `topology` or `machines`",
                )
                .hint(format!("e.g. `{name}: {{procs: 128}}`")));
        }
    };
    let node_size = match &c.node_size {
        Some(k) if k.value == 0 => {
            return Err(ctx.error(
                &format!("{path}.node_size"),
                "expected a positive node size, found 0",
                &k.referenced,
            ));
        }
        Some(k) => {
            if let Some(p) = procs.filter(|p| p % k.value != 0) {
                return Err(ctx
                    .error(
                        &format!("{path}.node_size"),
                        format!("{p} processors do not divide into nodes of {}", k.value),
                        &k.referenced,
                    )
                    .hint(format!("use procs: {}", p / k.value * k.value)));
            }
            Some(k.value)
        }
        None => None,
    };
    Ok(ClusterSpec {
        name: name.to_string(),
        procs,
        node_size,
        topology: None,
    })
}
