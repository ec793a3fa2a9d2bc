//! Reservation scenarios in manifests (docs/reservations.md): the raw `reservations` section
//! (explicit list, CSV file, generator, placement, throttle) resolved into a
//! [`ReservationSpec`], and a spec turned into the simulator's [`Reservations`] for one machine
//! and one workload period. Widths and caps may be given in nodes or processors; they become
//! allocation units of the cell's machine here.

use std::path::Path;

use serde::Serialize;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::raw::{RawDistribution, RawReservations, RawThrottle};
use crate::sim::reservation::{
    Distribution, OnConflict, Placement, ReservationGenerator, ReservationRequest, Reservations,
    Throttles, WindowCap,
};
use crate::sim::topology::Topology;
use crate::sim::{Machine, Time, Workload};

/// A width as the manifest gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Width {
    Nodes(u64),
    Procs(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WidthUnit {
    Nodes,
    Procs,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestSpec {
    pub id: u64,
    pub owner: String,
    pub created: Time,
    pub start: Time,
    pub duration: Time,
    pub width: Width,
    /// On a topology: the cluster whose nodes it holds (`None`: the scenario's, else any).
    pub cluster: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GeneratorSpec {
    pub per_week: f64,
    pub width: Distribution,
    pub width_unit: WidthUnit,
    /// Seconds.
    pub duration: Distribution,
    /// Seconds.
    pub notice: Distribution,
    pub owners: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ThrottleSpec {
    /// Sliding window of the caps, seconds.
    pub window: Time,
    pub max_node_seconds: Option<u64>,
    pub max_proc_seconds: Option<u64>,
    pub max_per_owner: Option<u64>,
    pub min_duration: Option<Time>,
    pub max_duration: Option<Time>,
    pub min_width: Option<Width>,
    pub max_width: Option<Width>,
}

/// One resolved reservation scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReservationSpec {
    pub name: String,
    pub requests: Vec<RequestSpec>,
    pub generator: Option<GeneratorSpec>,
    pub placement: Placement,
    pub on_conflict: OnConflict,
    pub throttle: ThrottleSpec,
    /// On a topology: the cluster whose nodes its requests hold unless they name one.
    pub cluster: Option<String>,
}

/// The seed of a cell's generated reservation requests: derived from the replica seed, so
/// replicas draw different requests and no other random stream shares it.
pub fn reservation_seed(seed: u64) -> u64 {
    let hash = blake3::hash(format!("schedlab/reservations/{seed}").as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
}

const HOUR: f64 = 3600.0;
const DAY: f64 = 86_400.0;

impl ReservationSpec {
    /// True if some width or cap is in nodes (the cluster then needs a node size).
    pub fn uses_nodes(&self) -> bool {
        let node = |w: &Width| matches!(w, Width::Nodes(_));
        self.requests.iter().any(|r| node(&r.width))
            || self
                .generator
                .as_ref()
                .is_some_and(|g| g.width_unit == WidthUnit::Nodes)
            || self.throttle.max_node_seconds.is_some()
            || self.throttle.min_width.as_ref().is_some_and(node)
            || self.throttle.max_width.as_ref().is_some_and(node)
    }

    /// True if the scenario or one of its requests names a cluster.
    pub fn names_clusters(&self) -> bool {
        self.cluster.is_some() || self.requests.iter().any(|r| r.cluster.is_some())
    }

    /// Whether the scenario can run on `topology` (docs/reservations.md, "On topologies"):
    /// widths and caps in nodes, named clusters that exist, and every given request (and the
    /// widest generated one) no wider than the largest node class it may use. On failure, the
    /// key path under `reservations.<name>` and the message.
    pub fn check_on_topology(&self, topology: &Topology) -> Result<(), (String, String)> {
        let path = format!("reservations.{}", self.name);
        let t = &self.throttle;
        let procs_cap = t.max_proc_seconds.is_some()
            || matches!(t.min_width, Some(Width::Procs(_)))
            || matches!(t.max_width, Some(Width::Procs(_)));
        if procs_cap {
            return Err((format!("{path}.throttle"), PROCS_ON_TOPOLOGY.into()));
        }
        let widest = |cluster: Option<&str>| -> Result<u64, String> {
            let clusters: Vec<&crate::sim::topology::Cluster> = match cluster {
                Some(name) => match topology.clusters.iter().find(|c| c.name == name) {
                    Some(c) => vec![c],
                    None => {
                        let known: Vec<&str> =
                            topology.clusters.iter().map(|c| c.name.as_str()).collect();
                        return Err(format!(
                            "the topology has no cluster `{name}` (its clusters: {})",
                            known.join(", ")
                        ));
                    }
                },
                None => topology.clusters.iter().collect(),
            };
            Ok(clusters
                .iter()
                .flat_map(|c| &c.classes)
                .map(|k| u64::from(k.count))
                .max()
                .unwrap_or(0))
        };
        if let Some(name) = &self.cluster {
            widest(Some(name)).map_err(|e| (format!("{path}.cluster"), e))?;
        }
        for (i, r) in self.requests.iter().enumerate() {
            let item = format!("{path}.requests[{i}]");
            let Width::Nodes(n) = r.width else {
                return Err((item, PROCS_ON_TOPOLOGY.into()));
            };
            let cluster = r.cluster.as_deref().or(self.cluster.as_deref());
            let most = widest(cluster).map_err(|e| (item.clone(), e))?;
            if n > most {
                return Err((
                    item,
                    format!(
                        "request {} holds {n} whole nodes of one class, but the largest class {} has {most}",
                        r.id,
                        match cluster {
                            Some(c) => format!("of cluster `{c}`"),
                            None => "of the topology".into(),
                        }
                    ),
                ));
            }
        }
        if let Some(g) = &self.generator {
            if g.width_unit == WidthUnit::Procs {
                return Err((format!("{path}.generate"), PROCS_ON_TOPOLOGY.into()));
            }
            let most = widest(self.cluster.as_deref()).map_err(|e| (path.clone(), e))?;
            let max = match &g.width {
                Distribution::Fixed(v) => *v,
                Distribution::Uniform { max, .. } | Distribution::LogUniform { max, .. } => *max,
                Distribution::Choice(values) => values.iter().copied().max().unwrap_or(0),
            };
            if max as u64 > most {
                return Err((
                    format!("{path}.generate.nodes"),
                    format!(
                        "generated requests may hold up to {max} whole nodes of one class, but the largest class has {most}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The simulator's reservations of a run of `workload` on `machine`: generated requests
    /// over the workload's submissions (first to last submit), drawn from the stream of
    /// [`reservation_seed`]`(seed)` — what a cell of replica seed `seed` simulates, and
    /// `schedlab.simulate(reservations=..., seed=seed)`.
    pub fn for_run(
        &self,
        machine: &Machine,
        workload: &Workload,
        seed: u64,
    ) -> Result<Reservations, String> {
        let first = workload.jobs.first().map_or(0, |j| j.submit);
        let last = workload.jobs.last().map_or(first, |j| j.submit);
        self.to_reservations(machine, (first, last), reservation_seed(seed))
    }

    /// The simulator's reservations on `machine` for a workload submitted over `[from, to]`,
    /// generated requests drawn from `seed`.
    pub fn to_reservations(
        &self,
        machine: &Machine,
        (from, to): (Time, Time),
        seed: u64,
    ) -> Result<Reservations, String> {
        let units = |w: Width| units_of(w, machine);
        let mut requests = Vec::with_capacity(self.requests.len());
        for r in &self.requests {
            requests.push(ReservationRequest {
                id: r.id,
                owner: r.owner.clone(),
                created: r.created,
                start: r.start,
                duration: r.duration,
                width: units(r.width)?,
                cluster: r.cluster.clone().or_else(|| self.cluster.clone()),
            });
        }
        if let Some(g) = &self.generator {
            let first_id = requests.iter().map(|r| r.id).max().unwrap_or(0);
            let generator = ReservationGenerator {
                per_week: g.per_week,
                width: g.width.clone(),
                duration: g.duration.clone(),
                notice: g.notice.clone(),
                owners: g.owners,
            };
            for mut r in generator.generate(from, to + 1, seed) {
                r.id += first_id;
                r.cluster = self.cluster.clone();
                r.width = units(match g.width_unit {
                    WidthUnit::Nodes => Width::Nodes(r.width),
                    WidthUnit::Procs => Width::Procs(r.width),
                })?;
                requests.push(r);
            }
        }
        let t = &self.throttle;
        let cap = match (t.max_node_seconds, t.max_proc_seconds) {
            (Some(n), _) => Some(units(Width::Nodes(n))?),
            (None, Some(p)) => Some(units(Width::Procs(p))?),
            (None, None) => None,
        };
        let throttles = Throttles {
            min_duration: t.min_duration,
            max_duration: t.max_duration,
            min_width: t.min_width.map(units).transpose()?,
            max_width: t.max_width.map(units).transpose()?,
            unit_seconds: cap.map(|max| WindowCap {
                window: t.window,
                max,
            }),
            per_owner: t.max_per_owner.map(|max| WindowCap {
                window: t.window,
                max,
            }),
        };
        Ok(Reservations {
            requests,
            placement: self.placement,
            on_conflict: self.on_conflict,
            throttles,
        })
    }
}

/// A width (or a per-width cap) in allocation units of `machine`: nodes on an exclusive-node
/// machine (processors round up to whole nodes), processors on a pool, whole nodes (of one
/// class) on a topology.
fn units_of(width: Width, machine: &Machine) -> Result<u64, String> {
    if let Machine::Topology(_) = machine {
        return match width {
            Width::Nodes(n) => Ok(n),
            Width::Procs(_) => Err(PROCS_ON_TOPOLOGY.into()),
        };
    }
    let per_unit = machine.procs_per_unit();
    match width {
        Width::Procs(p) => Ok(p.div_ceil(per_unit)),
        Width::Nodes(n) if per_unit > 1 || machine.node_count() > 1 => Ok(n),
        Width::Nodes(_) => Err(
            "widths in nodes need a cluster with `node_size` (this one is a processor pool)".into(),
        ),
    }
}

/// Why a width or cap in processors is refused on a topology.
pub const PROCS_ON_TOPOLOGY: &str = "on a topology a reservation holds whole nodes of one class: give widths and caps in nodes (`nodes`, `max_node_hours`, `max_nodes`), not processors";

fn hours_to_seconds(h: f64) -> Time {
    (h * HOUR).round() as Time
}

/// Resolves the scenario `name` of the `reservations` section.
pub fn resolve(
    ctx: &Ctx<'_>,
    name: &str,
    raw: &RawReservations,
) -> Result<ReservationSpec, ManifestError> {
    let path = format!("reservations.{name}");
    let mut requests = Vec::new();
    for (i, r) in raw.requests.iter().flatten().enumerate() {
        let item = format!("{path}.requests[{i}]");
        let width = match (r.nodes, r.procs) {
            (Some(n), None) if n > 0 => Width::Nodes(n),
            (None, Some(p)) if p > 0 => Width::Procs(p),
            (Some(_), Some(_)) => {
                return Err(ctx.error(
                    &item,
                    "give `nodes` or `procs`, not both",
                    &r.duration.referenced,
                ));
            }
            (None, None) => {
                return Err(ctx
                    .error(&item, "a request needs a width", &r.duration.referenced)
                    .hint("add `nodes: N` or `procs: N`"));
            }
            _ => {
                return Err(ctx.error(&item, "the width must be positive", &r.duration.referenced));
            }
        };
        if r.duration.value <= 0 {
            return Err(ctx.error(
                &format!("{item}.duration"),
                format!(
                    "expected a positive number of seconds, found {}",
                    r.duration.value
                ),
                &r.duration.referenced,
            ));
        }
        let created = r.created.unwrap_or(r.start);
        if created > r.start {
            return Err(ctx.error(
                &format!("{item}.created"),
                format!(
                    "the request is made at {created}, after its start {}",
                    r.start
                ),
                &r.duration.referenced,
            ));
        }
        requests.push(RequestSpec {
            id: r.id.unwrap_or(i as u64 + 1),
            owner: r.owner.clone().unwrap_or_else(|| "owner".into()),
            created,
            start: r.start,
            duration: r.duration.value,
            width,
            cluster: r.cluster.clone(),
        });
    }
    if let Some(csv) = &raw.csv {
        let file = ctx.base_dir.join(&csv.value);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            ctx.error(
                &format!("{path}.csv"),
                format!("cannot read {}: {e}", file.display()),
                &csv.referenced,
            )
            .hint("relative paths are relative to the manifest's folder")
        })?;
        let offset = requests.len() as u64;
        requests.extend(parse_csv(&file, &text, offset)?);
    }
    let mut ids = std::collections::BTreeSet::new();
    for r in &requests {
        if !ids.insert(r.id) {
            return Err(ctx.key_error(&path, name, format!("request id {} is used twice", r.id)));
        }
    }
    let generator = raw
        .generate
        .as_ref()
        .map(|g| -> Result<GeneratorSpec, ManifestError> {
            let gpath = format!("{path}.generate");
            if !(g.per_week.value.is_finite() && g.per_week.value >= 0.0) {
                return Err(ctx.error(
                    &format!("{gpath}.per_week"),
                    format!("expected a non-negative rate, found {}", g.per_week.value),
                    &g.per_week.referenced,
                ));
            }
            let (width, unit) = match (&g.nodes, &g.procs) {
                (Some(d), None) => (d, WidthUnit::Nodes),
                (None, Some(d)) => (d, WidthUnit::Procs),
                _ => {
                    return Err(ctx
                        .key_error(
                            &gpath,
                            "generate",
                            "give the width distribution as `nodes` or `procs` (one of them)",
                        )
                        .hint("e.g. `nodes: {uniform: [8, 128]}`"));
                }
            };
            // Located at the key the manifest wrote (`nodes` or `procs`), not the field's name.
            let width_key = match unit {
                WidthUnit::Nodes => "nodes",
                WidthUnit::Procs => "procs",
            };
            let width = distribution(ctx, &gpath, width_key, width, 1.0, 1.0)?;
            let duration = distribution(ctx, &gpath, "hours", &g.hours, HOUR, 1.0)?;
            let notice = match &g.notice_hours {
                Some(d) => distribution(ctx, &gpath, "notice_hours", d, HOUR, 0.0)?,
                None => Distribution::Fixed(0),
            };
            Ok(GeneratorSpec {
                per_week: g.per_week.value,
                width,
                width_unit: unit,
                duration,
                notice,
                owners: g.owners.unwrap_or(1).max(1),
            })
        })
        .transpose()?;
    let throttle = match &raw.throttle {
        Some(t) => throttle(ctx, &format!("{path}.throttle"), t)?,
        None => ThrottleSpec {
            window: 7 * 86_400,
            ..ThrottleSpec::default()
        },
    };
    Ok(ReservationSpec {
        name: name.to_string(),
        requests,
        generator,
        placement: raw.placement.unwrap_or_default(),
        on_conflict: raw.on_conflict.unwrap_or_default(),
        throttle,
        cluster: raw.cluster.clone(),
    })
}

/// A distribution scaled by `scale` (hours → seconds) into integers, each value ≥ `min`.
fn distribution(
    ctx: &Ctx<'_>,
    path: &str,
    key: &str,
    raw: &RawDistribution,
    scale: f64,
    min: f64,
) -> Result<Distribution, ManifestError> {
    let bad = |what: String| ctx.key_error(&format!("{path}.{key}"), key, what);
    let check = |x: f64| -> Result<i64, ManifestError> {
        if x.is_finite() && x >= min {
            Ok((x * scale).round() as i64)
        } else {
            Err(bad(format!("expected values of at least {min}, found {x}")))
        }
    };
    Ok(match raw {
        RawDistribution::Fixed(x) => Distribution::Fixed(check(*x)?),
        RawDistribution::Uniform([a, b]) | RawDistribution::LogUniform([a, b]) => {
            let (lo, hi) = (check(*a)?, check(*b)?);
            if lo > hi {
                return Err(bad(format!("the range [{a}, {b}] is empty")));
            }
            if matches!(raw, RawDistribution::Uniform(_)) {
                Distribution::Uniform { min: lo, max: hi }
            } else {
                Distribution::LogUniform {
                    min: lo.max(1),
                    max: hi.max(1),
                }
            }
        }
        RawDistribution::Choice(values) => {
            if values.is_empty() {
                return Err(bad("`choice` needs at least one value".into()));
            }
            Distribution::Choice(values.iter().map(|&x| check(x)).collect::<Result<_, _>>()?)
        }
    })
}

fn throttle(ctx: &Ctx<'_>, path: &str, t: &RawThrottle) -> Result<ThrottleSpec, ManifestError> {
    let positive = |key: &str, v: Option<f64>| -> Result<Option<f64>, ManifestError> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(ctx.key_error(
                &format!("{path}.{key}"),
                key,
                format!("expected a positive number, found {x}"),
            )),
            other => Ok(other),
        }
    };
    let width = |key_n: &str, n: Option<u64>, key_p: &str, p: Option<u64>| match (n, p) {
        (Some(_), Some(_)) => Err(ctx.key_error(
            &format!("{path}.{key_p}"),
            key_p,
            format!("give `{key_n}` or `{key_p}`, not both"),
        )),
        (Some(n), None) => Ok(Some(Width::Nodes(n))),
        (None, Some(p)) => Ok(Some(Width::Procs(p))),
        (None, None) => Ok(None),
    };
    if t.max_node_hours.is_some() && t.max_proc_hours.is_some() {
        return Err(ctx.key_error(
            &format!("{path}.max_proc_hours"),
            "max_proc_hours",
            "give `max_node_hours` or `max_proc_hours`, not both",
        ));
    }
    let window = positive("window_days", t.window_days)?.unwrap_or(7.0);
    let seconds = |h: Option<f64>| h.map(|h| (h * HOUR).round() as u64);
    Ok(ThrottleSpec {
        window: (window * DAY).round() as Time,
        max_node_seconds: seconds(positive("max_node_hours", t.max_node_hours)?),
        max_proc_seconds: seconds(positive("max_proc_hours", t.max_proc_hours)?),
        max_per_owner: t.max_per_owner,
        min_duration: positive("min_hours", t.min_hours)?.map(hours_to_seconds),
        max_duration: positive("max_hours", t.max_hours)?.map(hours_to_seconds),
        min_width: width("min_nodes", t.min_nodes, "min_procs", t.min_procs)?,
        max_width: width("max_nodes", t.max_nodes, "max_procs", t.max_procs)?,
    })
}

/// Parses a CSV file of requests: a header row, then one request per line; blank lines and
/// lines starting with `#` are skipped. Ids default to the row number after `offset`.
fn parse_csv(file: &Path, text: &str, offset: u64) -> Result<Vec<RequestSpec>, ManifestError> {
    let name = file.display().to_string();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        return Err(ManifestError::new(&name, "", "the CSV file is empty").hint(
            "the first line names the columns: start,duration,nodes (and optionally id,owner,created,cluster)",
        ));
    };
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_lowercase()).collect();
    const KNOWN: [&str; 8] = [
        "id", "owner", "created", "start", "duration", "nodes", "procs", "cluster",
    ];
    for c in &columns {
        if !KNOWN.contains(&c.as_str()) {
            let err = ManifestError::new(&name, "", format!("unknown column `{c}`"))
                .at(header_line as u64 + 1, 1)
                .with_source(text);
            return Err(match super::error::did_you_mean(c, KNOWN.iter().copied()) {
                Some(s) => err.hint(format!("did you mean `{s}`?")),
                None => err.hint(format!("known columns: {}", KNOWN.join(", "))),
            });
        }
    }
    let col = |n: &str| columns.iter().position(|c| c == n);
    for required in ["start", "duration"] {
        if col(required).is_none() {
            return Err(
                ManifestError::new(&name, "", format!("missing column `{required}`"))
                    .at(header_line as u64 + 1, 1)
                    .with_source(text),
            );
        }
    }
    if col("nodes").is_some() == col("procs").is_some() {
        return Err(ManifestError::new(
            &name,
            "",
            "give exactly one width column, `nodes` or `procs`",
        )
        .at(header_line as u64 + 1, 1)
        .with_source(text));
    }
    let mut out = Vec::new();
    for (row, (i, line)) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |msg: String| {
            ManifestError::new(&name, "", msg)
                .at(i as u64 + 1, 1)
                .with_source(text)
        };
        if fields.len() != columns.len() {
            return Err(at(format!(
                "expected {} fields, found {}",
                columns.len(),
                fields.len()
            )));
        }
        let int = |c: &str| -> Result<Option<i64>, ManifestError> {
            match col(c) {
                None => Ok(None),
                Some(k) => fields[k].parse::<i64>().map(Some).map_err(|_| {
                    at(format!(
                        "column `{c}`: expected an integer, found `{}`",
                        fields[k]
                    ))
                }),
            }
        };
        let start = int("start")?.unwrap_or_default();
        let duration = int("duration")?.unwrap_or_default();
        let created = int("created")?.unwrap_or(start);
        if duration <= 0 {
            return Err(at(format!(
                "column `duration`: expected a positive number of seconds, found {duration}"
            )));
        }
        if created > start {
            return Err(at(format!(
                "the request is made at {created}, after its start {start}"
            )));
        }
        let width = match (int("nodes")?, int("procs")?) {
            (Some(n), _) if n > 0 => Width::Nodes(n as u64),
            (_, Some(p)) if p > 0 => Width::Procs(p as u64),
            _ => return Err(at("the width must be a positive integer".into())),
        };
        let id = match int("id")? {
            Some(id) if id > 0 => id as u64,
            Some(id) => {
                return Err(at(format!(
                    "column `id`: expected a positive integer, found {id}"
                )));
            }
            None => offset + row as u64 + 1,
        };
        out.push(RequestSpec {
            id,
            owner: col("owner").map_or_else(|| "owner".to_string(), |k| fields[k].to_string()),
            created,
            start,
            duration,
            width,
            cluster: col("cluster")
                .map(|k| fields[k].trim().to_string())
                .filter(|c| !c.is_empty()),
        });
    }
    Ok(out)
}
