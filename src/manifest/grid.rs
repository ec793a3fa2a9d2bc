//! Grid expansion: cartesian product of axes, zip groups varied together, include and exclude
//! lists, replica seeds; and the stable cell ids (docs/manifest.md, "Grid").
//!
//! Canonical axis order — workload, cluster, scheduler, then parameter axes by name — makes ids
//! independent of the order axes are written in. An axis appears in ids when it has more than
//! one value; the second and later axes of a zip group never do (the first determines them).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::axis::NO_RESERVATIONS;
use super::axis::{self, NAME_AXES};
use super::ctx::Ctx;
use super::error::ManifestError;
use super::model::{
    Cell, ClusterSpec, MetricsSpec, ParamTable, Params, SchedulerSpec, WorkloadSpec,
};
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
    pub limits: &'a super::model::Limits,
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

    // Bound the grid before building it: a product of long axes, or many replicas, must get a
    // located error, never an allocation failure.
    check_size(grid, &factors, &values, sections, ctx)?;

    // Cartesian product over factors. A combination is one index per axis of `order` into
    // `table` (the axes' values, then the values included cells bring).
    let mut table: Vec<Vec<Value>> = order.iter().map(|a| values[a].clone()).collect();
    let position = |a: &str| order.iter().position(|o| o == a).expect("an axis of order");
    let mut combos: Vec<Vec<u32>> = vec![vec![0; order.len()]];
    for factor in &factors {
        let rows = values[&factor[0]].len();
        let slots: Vec<usize> = factor.iter().map(|a| position(a)).collect();
        let mut next = Vec::with_capacity(combos.len() * rows);
        for combo in &combos {
            // Row r of a factor takes value r of each of its (zipped) axes.
            for r in 0..rows {
                let mut c = combo.clone();
                for &slot in &slots {
                    c[slot] = r as u32;
                }
                next.push(c);
            }
        }
        combos = next;
    }
    if let Some(grid) = grid {
        for (i, inc) in grid.include.iter().enumerate() {
            let path = format!("grid.include[{i}]");
            let mut combo = Vec::with_capacity(order.len());
            for (slot, a) in order.iter().enumerate() {
                match inc.value.get(a) {
                    Some(v) => {
                        check_value(a, v, sections, ctx, &format!("{path}.{a}"), &inc.referenced)?;
                        let index = match table[slot].iter().position(|x| x == v) {
                            Some(k) => k,
                            None => {
                                table[slot].push(v.clone());
                                table[slot].len() - 1
                            }
                        };
                        combo.push(index as u32);
                    }
                    None if values[a].len() == 1 => combo.push(0),
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
            let filter: Vec<(usize, &Value)> =
                exc.value.iter().map(|(k, v)| (position(k), v)).collect();
            combos.retain(|c| {
                !filter
                    .iter()
                    .all(|&(slot, v)| table[slot][c[slot] as usize] == *v)
            });
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

    // Every value as ids and parameter columns show it, rendered once.
    let rendered: Vec<Vec<String>> = order
        .iter()
        .zip(&table)
        .map(|(a, vs)| vs.iter().map(|v| axis::render(a, v)).collect())
        .collect();
    let shown_slots: Vec<usize> = shown.iter().map(|a| position(a)).collect();
    let mut synthetic_checked = std::collections::HashSet::new();
    // Settings shared by reference; a parameter axis copies the setting it changes, and equal
    // copies are merged again (interned by base name and the axis values applied to them).
    let base = Shared {
        workloads: share(sections.workloads),
        clusters: share(sections.clusters),
        schedulers: share(sections.schedulers),
        reservations: share(sections.reservations),
        queues: share(sections.queues),
        metrics: Arc::new(sections.metrics.clone()),
    };
    let mut interned = Interned::default();
    let param_table = Arc::new(ParamTable::new(order.clone(), rendered.clone()));
    let mut cells = Vec::with_capacity(combos.len() * sections.seeds.len());
    for combo in &combos {
        let value = |slot: usize| &table[slot][combo[slot] as usize];
        let text = |slot: usize| rendered[slot][combo[slot] as usize].as_str();
        let name = |a: &str| value(position(a)).as_str().unwrap_or_default().to_string();
        let id_of = |seed: u64| {
            let mut parts: Vec<String> = shown_slots
                .iter()
                .map(|&slot| {
                    let a = &order[slot];
                    if NAME_AXES.contains(&a.as_str()) {
                        text(slot).to_string()
                    } else {
                        format!("{a}-{}", text(slot))
                    }
                })
                .collect();
            if sections.seeds.len() > 1 {
                parts.push(format!("seed-{seed}"));
            }
            if parts.is_empty() {
                name("workload")
            } else {
                parts.join(".")
            }
        };
        let params = Params::new(param_table.clone(), combo.as_slice().into());
        let first_seed = sections.seeds[0];
        let id = id_of(first_seed);
        let mut cell = Cell {
            id: id.clone(),
            params,
            workload: base.workloads[&name("workload")].clone(),
            cluster: base.clusters[&name("cluster")].clone(),
            scheduler: base.schedulers[&name("scheduler")].clone(),
            metrics: base.metrics.clone(),
            reservations: base.reservations.get(&name("reservations")).cloned(),
            // The queues axis exists only when the manifest defines queue setups.
            queues: order
                .iter()
                .position(|o| o == "queues")
                .and_then(|slot| value(slot).as_str())
                .and_then(|q| base.queues.get(q))
                .cloned(),
            seed: first_seed,
        };
        let mut changed = Changed::default();
        for (slot, a) in order.iter().enumerate() {
            if !NAME_AXES.contains(&a.as_str()) {
                let before = Settings::of(&cell);
                axis::apply_param(&mut cell, a, value(slot));
                changed.record(&before, &Settings::of(&cell), (slot, combo[slot]));
            }
        }
        interned.merge(&mut cell, &changed);
        if let super::model::WorkloadSource::Synthetic(spec) = &cell.workload.source {
            let rates: Vec<String> = ["p_login", "mu"]
                .iter()
                .filter(|a| order.iter().any(|o| o == *a))
                .map(|a| value(position(a)).to_string())
                .collect();
            if !rates.is_empty() && synthetic_checked.insert((cell.workload.name.clone(), rates)) {
                super::resolve::check_synthetic_size(
                    ctx,
                    &cell.workload.name,
                    spec,
                    sections.limits,
                )?;
            }
        }
        if let (Some(p), Some(k)) = (cell.cluster.procs, cell.cluster.node_size)
            && !p.is_multiple_of(k)
        {
            // At the axis that set the size, else at the cluster's own key.
            let axis = ["node_size", "procs"]
                .into_iter()
                .find(|a| order.iter().any(|o| o == a));
            let err = match axis {
                Some(axis) => ctx.key_error(
                    &format!("grid.axes.{axis}"),
                    axis,
                    format!("cell {id}: {p} processors do not divide into nodes of {k}"),
                ),
                None => ctx.key_error(
                    &format!("clusters.{}.node_size", cell.cluster.name),
                    "node_size",
                    format!("cell {id}: {p} processors do not divide into nodes of {k}"),
                ),
            };
            return Err(err.hint(format!(
                "use procs: {}, or exclude these combinations",
                p / k * k
            )));
        }
        if let (Some(p), Some(k)) = (cell.cluster.procs, cell.cluster.node_size)
            && u64::from(p / k) > crate::sim::topology::MAX_NODES
        {
            return Err(ctx
                .key_error(
                    &format!("clusters.{}.node_size", cell.cluster.name),
                    "node_size",
                    format!(
                        "cell {id}: {p} processors in nodes of {k} are {} nodes; at most {} are supported",
                        p / k,
                        crate::sim::topology::MAX_NODES
                    ),
                )
                .hint("use larger nodes (`node_size`), or a processor pool (no `node_size`)"));
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
        if cell.cluster.topology.is_some() && !cell.scheduler.order.candidates.is_queue() {
            let name = &cell.scheduler.name;
            return Err(ctx
                .key_error(
                    &format!("schedulers.{name}.backfill_order"),
                    "backfill_order",
                    format!(
                        "cell {id}: scheduler `{name}` sets `backfill_order`, which the node-level rules on topology `{}` do not apply yet",
                        cell.cluster.name
                    ),
                )
                .hint("run it on a processor pool, or exclude these combinations"));
        }
        if cell.scheduler.order.compat == crate::sim::compat::Compat::Aleang {
            let name = &cell.scheduler.name;
            let problem = if cell.cluster.topology.is_none() {
                Some(format!(
                    "AleaNG's scheduler places jobs on clusters of nodes, but cluster `{}` is a processor pool",
                    cell.cluster.name
                ))
            } else if cell.scheduler.policy != crate::sim::SchedulerKind::Aggressive
                || cell.scheduler.order.kind != crate::sim::scheduler::order::OrderKind::Fairshare
            {
                Some(format!(
                    "it reproduces AleaNG's FairshareAggressiveBackfilling, but this cell's scheduler is `{}` backfilling over `order: {}`",
                    cell.scheduler.policy.name(),
                    cell.scheduler.order.kind.name()
                ))
            } else if cell.scheduler.order.reorder == crate::sim::scheduler::order::Reorder::Start {
                Some(
                    "it re-sorts after every start by itself; its `reorder` is AleaNG's \
                     fairshare_update_interval, in seconds, not `start`"
                        .to_string(),
                )
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(ctx
                    .key_error(
                        &format!("schedulers.{name}.compat"),
                        "compat",
                        format!("cell {id}: scheduler `{name}` sets `compat: aleang`: {problem}"),
                    )
                    .hint("compat: aleang needs a topology (`machines:` or `topology:`), `backfill: aggressive`, `order: fairshare` and `reorder` in seconds or absent; exclude the other combinations"));
            }
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
            && cell.scheduler.overrun == crate::sim::Overrun::Continue
        {
            // The engine refuses it when the run starts; say so when the manifest is read.
            return Err(ctx
                .key_error(
                    &format!("schedulers.{}.overrun", cell.scheduler.name),
                    "overrun",
                    format!(
                        "cell {id}: reservations (scenario `{}`) need `overrun: kill`: a job running past its requested time could hold reserved capacity",
                        r.name
                    ),
                )
                .hint("set `overrun: kill` for cells with reservations, or exclude these combinations"));
        }
        if let Some(r) = &cell.reservations {
            match &cell.cluster.topology {
                Some(topology) => {
                    if let Err((path, message)) = r.check_on_topology(&topology.topology()) {
                        return Err(ctx
                            .key_error(&path, &r.name, format!("cell {id}: {message}"))
                            .hint("see docs/reservations.md, \"On topologies\""));
                    }
                }
                None if r.names_clusters() => {
                    return Err(ctx
                        .key_error(
                            &format!("reservations.{}", r.name),
                            &r.name,
                            format!(
                                "cell {id}: scenario `{}` names a cluster, but cluster `{}` is a processor pool",
                                r.name, cell.cluster.name
                            ),
                        )
                        .hint("`cluster` picks a cluster of a topology; drop it for pools"));
                }
                None => {}
            }
        }
        if let Some(r) = &cell.reservations
            && r.uses_nodes()
            && cell.cluster.node_size.is_none()
            && cell.cluster.topology.is_none()
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
        for &seed in sections.seeds {
            let mut c = cell.clone();
            if seed != first_seed {
                c.id = id_of(seed);
                c.seed = seed;
            }
            cells.push(c);
        }
    }
    // Ids must be unique: sort (indices, not copies) and compare neighbours.
    let mut by_id: Vec<u32> = (0..cells.len() as u32).collect();
    by_id.sort_unstable_by(|&a, &b| cells[a as usize].id.cmp(&cells[b as usize].id));
    if let Some(pair) = by_id
        .windows(2)
        .find(|w| cells[w[0] as usize].id == cells[w[1] as usize].id)
    {
        let id = &cells[pair[0] as usize].id;
        return Err(ManifestError::new(
            ctx.file,
            "grid",
            format!("two cells have the same id `{id}`"),
        )
        .hint("an included cell repeats one of the grid, or two axes values render alike"));
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

/// Refuses a grid of more than `limits.max_cells` cells (before exclusions), counting without
/// building it, with the error located at what makes it too large: the replicas, or the axes.
fn check_size(
    grid: Option<&RawGrid>,
    factors: &[Vec<String>],
    values: &BTreeMap<String, Vec<Value>>,
    sections: &Sections<'_>,
    ctx: &Ctx<'_>,
) -> Result<(), ManifestError> {
    let max = sections.limits.max_cells;
    let combinations = factors
        .iter()
        .try_fold(1u64, |n, f| n.checked_mul(values[&f[0]].len() as u64))
        .and_then(|n| n.checked_add(grid.map_or(0, |g| g.include.len() as u64)));
    let seeds = sections.seeds.len() as u64;
    let cells = combinations.and_then(|n| n.checked_mul(seeds));
    if cells.is_some_and(|c| c <= max) {
        return Ok(());
    }
    let shown = |n: Option<u64>| n.map_or("more than 2^64".to_string(), |n| n.to_string());
    let message = format!(
        "the grid expands to {} cells ({} combinations of axis values × {seeds} {}, before exclusions), more than `limits.max_cells` ({max})",
        shown(cells),
        shown(combinations),
        if seeds == 1 { "seed" } else { "seeds" }
    );
    let err = if seeds > 1 && combinations.is_some_and(|c| c <= max) {
        let key = if ctx.text.lines().any(|l| l.starts_with("replicas")) {
            "replicas"
        } else {
            "seeds"
        };
        ctx.key_error(key, key, message)
    } else {
        ctx.key_error("grid", "grid", message)
    };
    Err(super::resolve::too_many_cells(
        err,
        cells.unwrap_or(u64::MAX),
    ))
}

/// Each named setting behind an `Arc`.
fn share<T: Clone>(section: &BTreeMap<String, T>) -> BTreeMap<String, Arc<T>> {
    section
        .iter()
        .map(|(k, v)| (k.clone(), Arc::new(v.clone())))
        .collect()
}

/// The settings cells start from.
struct Shared {
    workloads: BTreeMap<String, Arc<WorkloadSpec>>,
    clusters: BTreeMap<String, Arc<ClusterSpec>>,
    schedulers: BTreeMap<String, Arc<SchedulerSpec>>,
    reservations: BTreeMap<String, Arc<ReservationSpec>>,
    queues: BTreeMap<String, Arc<QueueSetup>>,
    metrics: Arc<MetricsSpec>,
}

/// References to the settings of a cell.
struct Settings {
    workload: Arc<WorkloadSpec>,
    cluster: Arc<ClusterSpec>,
    scheduler: Arc<SchedulerSpec>,
    metrics: Arc<MetricsSpec>,
    reservations: Option<Arc<ReservationSpec>>,
}

impl Settings {
    fn of(cell: &Cell) -> Settings {
        Settings {
            workload: cell.workload.clone(),
            cluster: cell.cluster.clone(),
            scheduler: cell.scheduler.clone(),
            metrics: cell.metrics.clone(),
            reservations: cell.reservations.clone(),
        }
    }
}

/// Which parameter axes (slot, value index) changed each setting of a cell.
#[derive(Default)]
struct Changed {
    workload: Vec<(usize, u32)>,
    cluster: Vec<(usize, u32)>,
    scheduler: Vec<(usize, u32)>,
    metrics: Vec<(usize, u32)>,
    reservations: Vec<(usize, u32)>,
}

impl Changed {
    /// Compares the settings' pointers: `before` holds a reference to each, so a change made
    /// through `Arc::make_mut` always copies and shows as a new pointer.
    fn record(&mut self, before: &Settings, after: &Settings, axis: (usize, u32)) {
        if !Arc::ptr_eq(&before.workload, &after.workload) {
            self.workload.push(axis);
        }
        if !Arc::ptr_eq(&before.cluster, &after.cluster) {
            self.cluster.push(axis);
        }
        if !Arc::ptr_eq(&before.scheduler, &after.scheduler) {
            self.scheduler.push(axis);
        }
        if !Arc::ptr_eq(&before.metrics, &after.metrics) {
            self.metrics.push(axis);
        }
        let same = match (&before.reservations, &after.reservations) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same {
            self.reservations.push(axis);
        }
    }
}

type InternKey = (String, Vec<(usize, u32)>);

/// Changed settings seen so far, by base name and the axis values that changed them.
#[derive(Default)]
struct Interned {
    workloads: HashMap<InternKey, Arc<WorkloadSpec>>,
    clusters: HashMap<InternKey, Arc<ClusterSpec>>,
    schedulers: HashMap<InternKey, Arc<SchedulerSpec>>,
    metrics: HashMap<InternKey, Arc<MetricsSpec>>,
    reservations: HashMap<InternKey, Arc<ReservationSpec>>,
}

fn intern<T>(
    map: &mut HashMap<InternKey, Arc<T>>,
    name: &str,
    axes: &[(usize, u32)],
    value: &mut Arc<T>,
) {
    if axes.is_empty() {
        return;
    }
    let shared = map
        .entry((name.to_string(), axes.to_vec()))
        .or_insert_with(|| value.clone());
    *value = shared.clone();
}

impl Interned {
    /// Replaces each changed setting of `cell` by an equal one seen before, if any.
    fn merge(&mut self, cell: &mut Cell, changed: &Changed) {
        let workload = cell.workload.name.clone();
        intern(
            &mut self.workloads,
            &workload,
            &changed.workload,
            &mut cell.workload,
        );
        let cluster = cell.cluster.name.clone();
        intern(
            &mut self.clusters,
            &cluster,
            &changed.cluster,
            &mut cell.cluster,
        );
        let scheduler = cell.scheduler.name.clone();
        intern(
            &mut self.schedulers,
            &scheduler,
            &changed.scheduler,
            &mut cell.scheduler,
        );
        intern(&mut self.metrics, "", &changed.metrics, &mut cell.metrics);
        if let Some(r) = cell.reservations.as_mut() {
            let name = r.name.clone();
            intern(&mut self.reservations, &name, &changed.reservations, r);
        }
    }
}
