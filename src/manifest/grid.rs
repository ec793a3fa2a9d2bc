//! Grid expansion: cartesian product of axes, zip groups varied together, include and exclude
//! lists, replica seeds; and the stable cell ids (docs/manifest.md, "Grid").
//!
//! Canonical axis order — workload, cluster, scheduler, then parameter axes by name — makes ids
//! independent of the order axes are written in. An axis appears in ids when it has more than
//! one value; the second and later axes of a zip group never do (the first determines them).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::axis::NO_RESERVATIONS;
use super::axis::{self, NAME_AXES};
use super::ctx::Ctx;
use super::error::ManifestError;
use super::model::{Cell, ClusterSpec, MetricsSpec, SchedulerSpec, WorkloadSpec};
use super::queues::{NO_QUEUES, QueueSetup};
use super::raw::RawGrid;
use super::reservations::ReservationSpec;

/// The named entries a grid can pick from.
pub struct Sections<'a> {
    pub workloads: &'a BTreeMap<String, WorkloadSpec>,
    pub clusters: &'a BTreeMap<String, ClusterSpec>,
    pub schedulers: &'a BTreeMap<String, SchedulerSpec>,
    pub reservations: &'a BTreeMap<String, ReservationSpec>,
    pub queues: &'a BTreeMap<String, QueueSetup>,
    pub metrics: &'a MetricsSpec,
    pub seeds: &'a [u64],
}

impl Sections<'_> {
    fn names(&self, axis: &str) -> Vec<String> {
        match axis {
            "workload" => self.workloads.keys().cloned().collect(),
            "cluster" => self.clusters.keys().cloned().collect(),
            "reservations" => std::iter::once(NO_RESERVATIONS.to_string())
                .chain(self.reservations.keys().cloned())
                .collect(),
            "queues" => std::iter::once(NO_QUEUES.to_string())
                .chain(self.queues.keys().cloned())
                .collect(),
            _ => self.schedulers.keys().cloned().collect(),
        }
    }

    /// The values of a name axis the grid does not list: every entry of the section; for
    /// reservations, every scenario defined, or `none` when there are none.
    fn defaults(&self, axis: &str) -> Vec<String> {
        if axis == "reservations" && !self.reservations.is_empty() {
            return self.reservations.keys().cloned().collect();
        }
        if axis == "reservations" {
            return vec![NO_RESERVATIONS.to_string()];
        }
        if axis == "queues" {
            return self.queues.keys().cloned().collect();
        }
        self.names(axis)
    }
}

/// The section a name axis picks from, for messages.
fn section(axis: &str) -> String {
    if axis == "reservations" || axis == "queues" {
        axis.to_string()
    } else {
        format!("{axis}s")
    }
}

fn rank(axis: &str) -> (usize, String) {
    (
        NAME_AXES
            .iter()
            .position(|a| *a == axis)
            .unwrap_or(NAME_AXES.len()),
        axis.to_string(),
    )
}

/// Expands the grid into cells; returns the canonical axis order and the cells.
pub fn expand(
    grid: Option<&RawGrid>,
    sections: &Sections<'_>,
    ctx: &Ctx<'_>,
) -> Result<(Vec<String>, Vec<Cell>), ManifestError> {
    // Axis → values (explicit from the grid, implicit for missing name axes).
    let mut values: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    if let Some(grid) = grid {
        for (name, list) in &grid.axes {
            let path = format!("grid.axes.{name}");
            if !axis::is_known(name) {
                let err = ctx.error(&path, format!("unknown axis `{name}`"), &list.referenced);
                return Err(match super::error::did_you_mean(name, axis::known_axes()) {
                    Some(s) => err.hint(format!("did you mean `{s}`?")),
                    None => err.hint(format!(
                        "known axes: {}",
                        axis::known_axes().collect::<Vec<_>>().join(", ")
                    )),
                });
            }
            if list.value.is_empty() {
                return Err(ctx.error(&path, "an axis needs at least one value", &list.referenced));
            }
            let mut seen = BTreeSet::new();
            for (i, v) in list.value.iter().enumerate() {
                let item = format!("{path}[{i}]");
                check_value(name, &v.value, sections, ctx, &item, &v.referenced)?;
                if !seen.insert(v.value.to_string()) {
                    return Err(ctx.error(
                        &item,
                        format!("duplicate value {}", v.value),
                        &v.referenced,
                    ));
                }
            }
            values.insert(
                name.clone(),
                list.value.iter().map(|v| v.value.clone()).collect(),
            );
        }
    }
    for name in NAME_AXES {
        // Without queue setups the `queues` axis does not exist (cells and ids stay as they
        // were before queues).
        if name == "queues" && sections.queues.is_empty() {
            continue;
        }
        values.entry(name.to_string()).or_insert_with(|| {
            sections
                .defaults(name)
                .into_iter()
                .map(Value::String)
                .collect()
        });
    }
    // Factors: zip groups first claim their axes; every other axis is a factor of its own.
    let mut factors: Vec<Vec<String>> = Vec::new();
    let mut zipped = BTreeSet::new();
    for (g, group) in grid
        .map(|g| g.zip.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let path = format!("grid.zip[{g}]");
        if group.value.len() < 2 {
            return Err(ctx.error(
                &path,
                "a zip group needs at least two axes",
                &group.referenced,
            ));
        }
        let explicit = grid.map(|g| &g.axes);
        let mut len = None;
        for name in &group.value {
            let Some(list) = explicit.and_then(|a| a.get(name)) else {
                return Err(ctx
                    .error(
                        &path,
                        format!("zip names `{name}`, which is not an axis of grid.axes"),
                        &group.referenced,
                    )
                    .hint("list the axis and its values under grid.axes first"));
            };
            if !zipped.insert(name.clone()) {
                return Err(ctx.error(
                    &path,
                    format!("axis `{name}` is in more than one zip group"),
                    &group.referenced,
                ));
            }
            let n = list.value.len();
            if *len.get_or_insert(n) != n {
                return Err(ctx.error(
                    &path,
                    format!(
                        "zipped axes must have equal lengths; `{}` has {} values, `{name}` has {n}",
                        group.value[0],
                        len.unwrap_or(0)
                    ),
                    &group.referenced,
                ));
            }
        }
        let mut members = group.value.clone();
        members.sort_by_key(|a| rank(a));
        factors.push(members);
    }
    for name in values.keys() {
        if !zipped.contains(name) {
            factors.push(vec![name.clone()]);
        }
    }
    factors.sort_by_key(|f| rank(&f[0]));
    let mut order: Vec<String> = factors.iter().flatten().cloned().collect();
    order.sort_by_key(|a| rank(a));
    // Axes shown in ids: more than one value, and not a zip partner.
    let partners: BTreeSet<&String> = factors.iter().flat_map(|f| f.iter().skip(1)).collect();
    let shown: Vec<&String> = order
        .iter()
        .filter(|a| values[*a].len() > 1 && !partners.contains(a))
        .collect();

    // Cartesian product over factors.
    let mut combos: Vec<BTreeMap<String, Value>> = vec![BTreeMap::new()];
    for factor in &factors {
        let rows = values[&factor[0]].len();
        let mut next = Vec::with_capacity(combos.len() * rows);
        for combo in &combos {
            // Row r of a factor takes value r of each of its (zipped) axes.
            let columns: Vec<&Vec<Value>> = factor.iter().map(|a| &values[a]).collect();
            for r in 0..rows {
                let mut c = combo.clone();
                c.extend(
                    factor
                        .iter()
                        .zip(&columns)
                        .map(|(a, col)| (a.clone(), col[r].clone())),
                );
                next.push(c);
            }
        }
        combos = next;
    }
    if let Some(grid) = grid {
        for (i, inc) in grid.include.iter().enumerate() {
            let path = format!("grid.include[{i}]");
            let mut combo = BTreeMap::new();
            for a in &order {
                match inc.value.get(a) {
                    Some(v) => {
                        check_value(a, v, sections, ctx, &format!("{path}.{a}"), &inc.referenced)?;
                        combo.insert(a.clone(), v.clone());
                    }
                    None if values[a].len() == 1 => {
                        combo.insert(a.clone(), values[a][0].clone());
                    }
                    None => {
                        return Err(ctx.error(
                            &path,
                            format!("an included cell must give a value for axis `{a}`"),
                            &inc.referenced,
                        ));
                    }
                }
            }
            for k in inc.value.keys() {
                if !order.contains(k) {
                    return Err(unknown_axis_in(ctx, &path, k, &order, &inc.referenced));
                }
            }
            combos.push(combo);
        }
        for (i, exc) in grid.exclude.iter().enumerate() {
            let path = format!("grid.exclude[{i}]");
            for k in exc.value.keys() {
                if !order.contains(k) {
                    return Err(unknown_axis_in(ctx, &path, k, &order, &exc.referenced));
                }
            }
            combos.retain(|c| !exc.value.iter().all(|(k, v)| c.get(k) == Some(v)));
        }
    }
    if combos.is_empty() {
        let loc = grid.and_then(|g| g.exclude.first()).map(|e| e.referenced);
        let err = ManifestError::new(
            ctx.file,
            "grid",
            "the grid has no cells left after exclusions",
        );
        return Err(match loc {
            Some(l) => ctx.locate(err, &l),
            None => err,
        });
    }

    let mut cells = Vec::with_capacity(combos.len() * sections.seeds.len());
    let mut ids = BTreeSet::new();
    for combo in &combos {
        for &seed in sections.seeds {
            let mut parts: Vec<String> = shown
                .iter()
                .map(|a| {
                    let v = axis::render(a, &combo[*a]);
                    if NAME_AXES.contains(&a.as_str()) {
                        v
                    } else {
                        format!("{a}-{v}")
                    }
                })
                .collect();
            if sections.seeds.len() > 1 {
                parts.push(format!("seed-{seed}"));
            }
            let name = |a: &str| combo[a].as_str().unwrap_or_default().to_string();
            let id = if parts.is_empty() {
                name("workload")
            } else {
                parts.join(".")
            };
            let mut cell = Cell {
                id: id.clone(),
                params: order
                    .iter()
                    .map(|a| (a.clone(), axis::render(a, &combo[a])))
                    .collect(),
                workload: sections.workloads[&name("workload")].clone(),
                cluster: sections.clusters[&name("cluster")].clone(),
                scheduler: sections.schedulers[&name("scheduler")].clone(),
                metrics: sections.metrics.clone(),
                reservations: sections.reservations.get(&name("reservations")).cloned(),
                queues: combo
                    .get("queues")
                    .and_then(Value::as_str)
                    .and_then(|q| sections.queues.get(q))
                    .cloned(),
                seed,
            };
            for (a, v) in combo {
                if !NAME_AXES.contains(&a.as_str()) {
                    axis::apply_param(&mut cell, a, v);
                }
            }
            if let (Some(p), Some(k)) = (cell.cluster.procs, cell.cluster.node_size)
                && !p.is_multiple_of(k)
            {
                return Err(ManifestError::new(
                    ctx.file,
                    "grid",
                    format!("cell {id}: {p} processors do not divide into nodes of {k}"),
                ));
            }
            if cell.cluster.topology.is_some()
                && (cell.cluster.procs.is_some() || cell.cluster.node_size.is_some())
            {
                let axis = if cell.cluster.procs.is_some() {
                    "procs"
                } else {
                    "node_size"
                };
                return Err(ctx.key_error(
                    &format!("grid.axes.{axis}"),
                    axis,
                    format!(
                        "cell {id}: the `procs` and `node_size` axes size processor pools, but cluster `{}` is a topology",
                        cell.cluster.name
                    ),
                )
                .hint("exclude these combinations, or size the topology by its nodes"));
            }
            if matches!(
                cell.workload.source,
                super::model::WorkloadSource::Synthetic(_)
            ) && cell.cluster.procs.is_none()
                && cell.cluster.topology.is_none()
            {
                return Err(ctx
                    .key_error(
                        &format!("clusters.{}", cell.cluster.name),
                        &cell.cluster.name,
                        format!(
                            "cell {id}: cluster `{}` takes its size from the trace, but workload `{}` is synthetic",
                            cell.cluster.name, cell.workload.name
                        ),
                    )
                    .hint("give the cluster `procs: N`"));
            }
            if let Some(r) = &cell.reservations
                && cell.cluster.topology.is_some()
            {
                return Err(ctx
                    .key_error(
                        &format!("reservations.{}", r.name),
                        &r.name,
                        format!(
                            "cell {id}: advance reservations are not supported on topologies yet (cluster `{}`)",
                            cell.cluster.name
                        ),
                    )
                    .hint("use the `none` scenario with topology clusters"));
            }
            if let Some(r) = &cell.reservations
                && r.uses_nodes()
                && cell.cluster.node_size.is_none()
            {
                return Err(ctx
                    .key_error(
                        &format!("reservations.{}", r.name),
                        &r.name,
                        format!(
                            "cell {id}: scenario `{}` counts nodes but cluster `{}` is a processor pool",
                            r.name, cell.cluster.name
                        ),
                    )
                .hint("give the cluster a `node_size`, or widths and caps in processors (`procs`, `max_proc_hours`)"));
            }
            if !ids.insert(id.clone()) {
                return Err(ManifestError::new(
                    ctx.file,
                    "grid",
                    format!("two cells have the same id `{id}`"),
                )
                .hint(
                    "an included cell repeats one of the grid, or two axes values render alike",
                ));
            }
            cells.push(cell);
        }
    }
    Ok((order, cells))
}

fn unknown_axis_in(
    ctx: &Ctx<'_>,
    path: &str,
    k: &str,
    order: &[String],
    loc: &serde_saphyr::Location,
) -> ManifestError {
    let err = ctx.error(path, format!("`{k}` is not an axis of this grid"), loc);
    match super::error::did_you_mean(k, order.iter().map(String::as_str)) {
        Some(s) => err.hint(format!("did you mean `{s}`?")),
        None => err.hint(format!("the axes are: {}", order.join(", "))),
    }
}

fn check_value(
    axis_name: &str,
    v: &Value,
    sections: &Sections<'_>,
    ctx: &Ctx<'_>,
    path: &str,
    loc: &serde_saphyr::Location,
) -> Result<(), ManifestError> {
    if NAME_AXES.contains(&axis_name) {
        let names = sections.names(axis_name);
        let Some(s) = v.as_str() else {
            return Err(ctx.error(
                path,
                format!("expected the name of a {axis_name}, found {v}"),
                loc,
            ));
        };
        if !names.iter().any(|n| n == s) {
            let section = section(axis_name);
            let err = ctx.error(
                path,
                format!("no {axis_name} named `{s}` in `{section}`"),
                loc,
            );
            return Err(
                match super::error::did_you_mean(s, names.iter().map(String::as_str)) {
                    Some(m) => err.hint(format!("did you mean `{m}`?")),
                    None => err.hint(format!("defined: {}", names.join(", "))),
                },
            );
        }
        Ok(())
    } else {
        axis::check_param(axis_name, v).map_err(|m| ctx.error(path, m, loc))
    }
}
