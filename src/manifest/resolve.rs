//! Resolve: raw manifest → validated [`Manifest`]. Units and defaults applied, names checked,
//! paths resolved against the manifest's folder, trace files checked to exist, grid expanded.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::ctx::{Ctx, check_name, positive, valid_name};
use super::error::ManifestError;
use super::grid::{self, Sections};
use super::model::{
    Limits, Manifest, MetricsSpec, ReportSpec, SchedulerSpec, TransformSpec, WorkloadSource,
    WorkloadSpec,
};
use super::raw::{RawLimits, RawManifest, RawSizeClass, RawWorkload};
use crate::sim::metrics::{DEFAULT_TAU, SizeClass, SizeClasses, Warmup};
use crate::swf::{ReadOptions, TraceFormat};

/// Default bin width of timeseries.parquet, seconds.
pub const DEFAULT_TIMESERIES_STEP: i64 = 3600;

/// Checks `metrics.size_classes`: valid distinct names, bounds increasing, only the last open.
fn size_classes(ctx: &Ctx<'_>, list: &[RawSizeClass]) -> Result<SizeClasses, ManifestError> {
    let path = "metrics.size_classes";
    let err = |m: String| ctx.key_error(path, "size_classes", m);
    if list.is_empty() {
        return Err(err("give at least one class".into()));
    }
    let mut previous = 0;
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in list.iter().enumerate() {
        if !valid_name(&c.name) || !names.insert(c.name.clone()) {
            return Err(err(format!(
                "class name `{}` is not a valid, distinct name",
                c.name
            ))
            .hint("names become column names: letters, digits, `-` and `_`"));
        }
        let last = i + 1 == list.len();
        match (c.up_to, last) {
            (None, true) => {}
            (None, false) => {
                return Err(err(format!(
                    "class `{}` has no `up_to`, but only the last class may be open-ended",
                    c.name
                )));
            }
            (Some(_), true) => {
                return Err(err(format!(
                    "the last class, `{}`, must have no `up_to`: it holds every wider job",
                    c.name
                )));
            }
            (Some(n), false) if n <= previous => {
                return Err(err(format!(
                    "class `{}`: `up_to` must grow from class to class (found {n} after {previous})",
                    c.name
                )));
            }
            (Some(n), false) => previous = n,
        }
    }
    Ok(SizeClasses(
        list.iter()
            .map(|c| SizeClass {
                name: c.name.clone(),
                up_to: c.up_to,
            })
            .collect(),
    ))
}

/// A trace's reading options (docs/swf.md); synthetic workloads have no fields to read, Batsim
/// workloads no SWF fields.
fn reading(
    ctx: &Ctx<'_>,
    path: &str,
    w: &RawWorkload,
    source: &WorkloadSource,
    format: TraceFormat,
) -> Result<ReadOptions, ManifestError> {
    let format = &format;
    // SWF reading options on a workload that has no SWF fields: why they do not apply, and
    // where that workload's fields are described.
    let misplaced = if !format.is_swf() {
        let (what, hint) = match format {
            TraceFormat::Batsim => (
                "a Batsim workload",
                "a Batsim workload's jobs give `res`, `subtime`, `walltime` and a profile: see docs/sources.md",
            ),
            _ => (
                "a job table",
                "a job table's mapping says how its columns are read: see docs/sources.md, \"Job tables\"",
            ),
        };
        Some((
            format!("says how to read SWF fields, but this workload is {what}"),
            hint,
        ))
    } else if matches!(source, WorkloadSource::Synthetic(_)) {
        Some((
            "says how to read a trace, but this workload is synthetic".to_string(),
            "synthetic users give `memory_kb` per processor",
        ))
    } else {
        None
    };
    if let Some((why, hint)) = misplaced {
        for (key, set) in [
            ("memory", w.memory.is_some()),
            ("used_memory_fallback", w.used_memory_fallback.is_some()),
            ("extended_fields", w.extended_fields.is_some()),
        ] {
            if set {
                return Err(ctx
                    .key_error(&format!("{path}.{key}"), key, format!("`{key}` {why}"))
                    .hint(hint));
            }
        }
    }
    Ok(ReadOptions {
        memory: w.memory.unwrap_or_default(),
        used_memory_fallback: w.used_memory_fallback.unwrap_or(false),
        extended: w.extended_fields.unwrap_or_default(),
        format: format.clone(),
    })
}

/// A job table's mapping (shipped, from a file, or inline) with the workload's `keep`,
/// validated; errors point at the mapping's key.
fn table_reading(
    ctx: &Ctx<'_>,
    path: &str,
    w: &RawWorkload,
    mapping_ref: Option<&crate::table::MappingRef>,
) -> Result<crate::table::TableReading, ManifestError> {
    use crate::table::{MappingRef, mapping};
    let at = format!("{path}.mapping");
    let (raw, name) = match mapping_ref {
        None => {
            return Err(ctx
                .key_error(path, "table", "a `table` needs a `mapping`: how its columns become job fields")
                .hint(format!(
                    "name a shipped mapping ({}), a mapping file, or write the mapping (docs/sources.md, \"Job tables\")",
                    mapping::shipped_names()
                )));
        }
        Some(MappingRef::Inline(m)) => ((**m).clone(), "custom".to_string()),
        Some(MappingRef::Named(n)) if n.ends_with(".yaml") || n.ends_with(".yml") => {
            let file = ctx.base_dir.join(n);
            let text = std::fs::read_to_string(&file).map_err(|e| {
                ctx.key_error(
                    &at,
                    "mapping",
                    format!("failed to read the mapping file {}: {e}", file.display()),
                )
                .hint("relative paths are relative to the manifest's folder")
            })?;
            let m = mapping::parse(&text, &file.display().to_string())
                .map_err(|e| ctx.key_error(&at, "mapping", e))?;
            (m, format!("file {n}"))
        }
        Some(MappingRef::Named(n)) => match mapping::shipped(n) {
            Some(m) => (m, n.clone()),
            None => {
                return Err(ctx
                    .key_error(&at, "mapping", format!("no shipped mapping named `{n}`"))
                    .hint(format!(
                        "shipped: {}; a mapping file's name ends in .yaml",
                        mapping::shipped_names()
                    )));
            }
        },
    };
    raw.with_keep(w.keep.clone())
        .resolve(&name)
        .map_err(|(key, message)| {
            let (full, last) = if key.starts_with("keep") && w.keep.is_some() {
                (
                    format!("{path}.{key}"),
                    key.rsplit('.').next().unwrap_or("keep").to_string(),
                )
            } else {
                (
                    format!("{at}.{key}"),
                    key.rsplit('.').next().unwrap_or("mapping").to_string(),
                )
            };
            ctx.key_error(&full, &last, format!("mapping `{name}`: {message}"))
        })
}

/// What a workload without exactly one source is told.
const ONE_SOURCE: &str = "a workload needs a `trace`, a `batsim` workload, a `table`, a `slurm` dump or a `synthetic` model (one of them)";

/// The longest experiment name: it becomes `results/<name>/`, `reports/<name>.html` and
/// staging names with a prefix and suffix, within the 255 bytes file systems allow a name.
pub const MAX_EXPERIMENT_NAME: usize = 200;

pub fn resolve(
    raw: RawManifest,
    ctx: &Ctx<'_>,
    hash: String,
    stem: &str,
) -> Result<Manifest, ManifestError> {
    let name = raw.name.clone().unwrap_or_else(|| stem.to_string());
    if !valid_name(&name) {
        return Err(ctx
            .key_error(
                "name",
                "name",
                format!("`{name}` is not a valid experiment name"),
            )
            .hint("use letters, digits, `-` and `_`: it names the folder results/<name>/"));
    }
    if name.len() > MAX_EXPERIMENT_NAME {
        return Err(ctx
            .key_error(
                "name",
                "name",
                format!(
                    "the experiment name is {} bytes long; at most {MAX_EXPERIMENT_NAME} are allowed",
                    name.len()
                ),
            )
            .hint("it names the folder results/<name>/ (and a report file): file systems allow 255 bytes a name"));
    }
    if raw.workloads.is_empty() {
        return Err(ctx.key_error("workloads", "workloads", "at least one workload is needed"));
    }
    if raw.schedulers.is_empty() {
        return Err(ctx.key_error(
            "schedulers",
            "schedulers",
            "at least one scheduler is needed",
        ));
    }

    let clusters = super::clusters::resolve(ctx, raw.clusters.as_ref())?;

    let mut workloads = BTreeMap::new();
    for (wname, w) in &raw.workloads {
        check_name(ctx, "workloads", wname)?;
        let path = format!("workloads.{wname}");
        let mut format = TraceFormat::Swf;
        let sources = [
            w.trace.is_some(),
            w.batsim.is_some(),
            w.table.is_some(),
            w.slurm.is_some(),
            w.synthetic.is_some(),
        ];
        if sources.iter().filter(|&&s| s).count() > 1 {
            return Err(ctx
                .key_error(&path, wname, ONE_SOURCE)
                .hint("e.g. `trace: ../workloads/KTH-SP2-1996-2.1-cln.swf.gz`"));
        }
        if let (Some(_), Some(_)) = (&w.slurm, &w.mapping) {
            return Err(ctx
                .key_error(
                    &format!("{path}.mapping"),
                    "mapping",
                    "`slurm` reads a dump with the shipped mapping `slurm`; `mapping` is for a `table`",
                )
                .hint("to read a dump with a mapping of your own (another timezone, other columns), write `table: DUMP` with `mapping: FILE.yaml` (docs/sources.md, \"Slurm accounting\")"));
        }
        if let Some(s) = &w.slurm {
            ctx.existing_file(&format!("{path}.slurm"), "slurm", s)?;
            let slurm = crate::table::MappingRef::Named("slurm".into());
            format = TraceFormat::Table(std::sync::Arc::new(table_reading(
                ctx,
                &path,
                w,
                Some(&slurm),
            )?));
        }
        if w.table.is_none() && w.slurm.is_none() {
            for (key, set) in [("mapping", w.mapping.is_some()), ("keep", w.keep.is_some())] {
                if set {
                    return Err(ctx
                        .key_error(
                            &format!("{path}.{key}"),
                            key,
                            format!("`{key}` says how to read a job table, but this workload has no `table`"),
                        )
                        .hint("e.g. `table: ../workloads/samples/helios/cluster_log.csv` with `mapping: helios` (docs/sources.md)"));
                }
            }
        }
        if let Some(t) = &w.table {
            ctx.existing_file(&format!("{path}.table"), "table", t)?;
            format = TraceFormat::Table(std::sync::Arc::new(table_reading(
                ctx,
                &path,
                w,
                w.mapping.as_ref(),
            )?));
        }
        let source = match (&w.trace, &w.batsim, &w.synthetic) {
            (None, None, None) if w.table.is_some() || w.slurm.is_some() => {
                let file = w.table.as_ref().or(w.slurm.as_ref()).expect("checked");
                WorkloadSource::Trace(ctx.base_dir.join(&file.value))
            }
            (Some(t), None, None) | (None, Some(t), None) => {
                let key = if w.trace.is_some() { "trace" } else { "batsim" };
                let trace = ctx.existing_file(&format!("{path}.{key}"), key, t)?;
                if w.batsim.is_some() {
                    format = TraceFormat::Batsim;
                }
                WorkloadSource::Trace(trace)
            }
            (None, None, Some(s)) => {
                let procs = |name: &str| -> Result<u64, String> {
                    match clusters.get(name) {
                        Some(c) => match (&c.topology, c.procs) {
                            (Some(t), _) => Ok(t.cores()),
                            (None, Some(p)) => Ok(u64::from(p)),
                            (None, None) => Err(format!(
                                "cluster `{name}` takes its size from a trace; give it `procs` to target a load"
                            )),
                        },
                        None => {
                            let defined: Vec<&str> = raw
                                .clusters
                                .iter()
                                .flat_map(|c| c.keys().map(String::as_str))
                                .collect();
                            Err(format!(
                                "no cluster named `{name}` in `clusters` (defined: {})",
                                if defined.is_empty() {
                                    "none".to_string()
                                } else {
                                    defined.join(", ")
                                }
                            ))
                        }
                    }
                };
                WorkloadSource::Synthetic(super::synthetic::resolve(
                    ctx,
                    &format!("{path}.synthetic"),
                    s,
                    &procs,
                )?)
            }
            _ => {
                return Err(ctx
                    .key_error(&path, wname, ONE_SOURCE)
                    .hint("e.g. `trace: ../workloads/KTH-SP2-1996-2.1-cln.swf.gz`"));
            }
        };
        let (window_start, window_end, window) = match &w.window {
            None => (None, None, None),
            Some(raw) => {
                match super::window::resolve(ctx, &format!("{path}.window"), raw)? {
                    super::window::Resolved::Seconds(s, e) => (s, e, None),
                    super::window::Resolved::Relative(r) => {
                        if matches!(source, WorkloadSource::Synthetic(_)) {
                            return Err(ctx
                            .key_error(
                                &format!("{path}.window"),
                                "window",
                                "a synthetic workload has no trace to place `from`/`to`/`first` on",
                            )
                            .hint("its time line starts at 0: give `{start: S, end: E}` in seconds"));
                        }
                        (None, None, Some(r))
                    }
                }
            }
        };
        if w.users.is_some() && w.exclude_users.is_some() {
            return Err(ctx.key_error(
                &format!("{path}.exclude_users"),
                "exclude_users",
                "give `users` or `exclude_users`, not both",
            ));
        }
        if let Some(n) = &w.first_jobs
            && n.value == 0
        {
            return Err(ctx.error(
                &format!("{path}.first_jobs"),
                "expected a positive number of jobs, found 0",
                &n.referenced,
            ));
        }
        if let Some(f) = &w.load_scale
            && !super::axis::valid_load_scale(f.value)
        {
            return Err(ctx.error(
                &format!("{path}.load_scale"),
                format!("expected a factor from 0.001 to 1000, found {}", f.value),
                &f.referenced,
            ));
        }
        let reading = reading(ctx, &path, w, &source, format)?;
        workloads.insert(
            wname.clone(),
            WorkloadSpec {
                name: wname.clone(),
                source,
                transforms: TransformSpec {
                    window_start,
                    window_end,
                    window,
                    placed_window: None,
                    users: w.users.clone(),
                    exclude_users: w.exclude_users.clone(),
                    partitions: w.partitions.clone(),
                    first_jobs: w.first_jobs.as_ref().map(|n| n.value),
                    load_scale: w.load_scale.as_ref().map(|f| f.value),
                },
                lenient: w.lenient.unwrap_or(false),
                reading,
            },
        );
    }

    let mut schedulers = BTreeMap::new();
    for (sname, s) in &raw.schedulers {
        check_name(ctx, "schedulers", sname)?;
        let interval = match &s.interval {
            Some(n) => Some(positive(ctx, &format!("schedulers.{sname}.interval"), n)?),
            None => None,
        };
        let path = format!("schedulers.{sname}");
        if s.policy.as_ref().is_some_and(|p| p.value == "python") {
            let python = super::python_policy::resolve(ctx, &path, s)?;
            schedulers.insert(
                sname.clone(),
                SchedulerSpec {
                    name: sname.clone(),
                    // Unused: the Python policy decides (kept for the results' `policy` column).
                    policy: crate::sim::SchedulerKind::Fcfs,
                    order: Default::default(),
                    interval,
                    overrun: s.overrun.unwrap_or_default(),
                    placement: s.placement.unwrap_or_default(),
                    python: Some(Arc::new(python)),
                },
            );
            continue;
        }
        for (given, key) in [
            (s.path.is_some(), "path"),
            (s.class.is_some(), "class"),
            (s.params.is_some(), "params"),
            (s.files.is_some(), "files"),
        ] {
            if given {
                return Err(ctx
                    .key_error(
                        &format!("{path}.{key}"),
                        key,
                        format!("`{key}` belongs to a Python policy"),
                    )
                    .hint("add `policy: python`, or leave it out"));
            }
        }
        let policy = super::order::backfill_rule(ctx, &path, s)?;
        let mut order = super::order::resolve(
            ctx,
            &path,
            super::order::RawOrderKeys {
                order: s.order,
                reorder: s.reorder.as_ref(),
                fairshare: s.fairshare.as_ref(),
                priority: s.priority.as_ref(),
            },
        )?;
        order.candidates = s.backfill_order.unwrap_or_default();
        order.compat = s.compat.unwrap_or_default();
        schedulers.insert(
            sname.clone(),
            SchedulerSpec {
                name: sname.clone(),
                policy,
                order,
                interval,
                overrun: s.overrun.unwrap_or_default(),
                placement: s.placement.unwrap_or_default(),
                python: None,
            },
        );
    }

    let metrics = match &raw.metrics {
        None => MetricsSpec {
            tau: DEFAULT_TAU,
            warmup: Warmup::None,
            timeseries_step: DEFAULT_TIMESERIES_STEP,
            size_classes: SizeClasses::default(),
            expected_capacity: Default::default(),
        },
        Some(m) => {
            let tau = match &m.bounded_slowdown_tau {
                Some(t) => positive(ctx, "metrics.bounded_slowdown_tau", t)?,
                None => DEFAULT_TAU,
            };
            let step = match &m.timeseries_step {
                Some(t) => positive(ctx, "metrics.timeseries_step", t)?,
                None => DEFAULT_TIMESERIES_STEP,
            };
            let warmup = match m.warmup.as_ref().map(|w| (w.jobs, w.seconds)) {
                None | Some((None, None)) => Warmup::None,
                Some((Some(n), None)) => Warmup::Jobs(n),
                Some((None, Some(t))) if t >= 0 => Warmup::Seconds(t),
                Some((None, Some(t))) => {
                    return Err(ctx.key_error(
                        "metrics.warmup.seconds",
                        "seconds",
                        format!("expected a non-negative number of seconds, found {t}"),
                    ));
                }
                Some((Some(_), Some(_))) => {
                    return Err(ctx.key_error(
                        "metrics.warmup",
                        "warmup",
                        "give `jobs` or `seconds`, not both",
                    ));
                }
            };
            let size_classes = match &m.size_classes {
                Some(list) => size_classes(ctx, list)?,
                None => SizeClasses::default(),
            };
            MetricsSpec {
                tau,
                warmup,
                timeseries_step: step,
                size_classes,
                expected_capacity: super::expected_capacity::resolve(
                    ctx,
                    m.expected_capacity.as_ref(),
                )?,
            }
        }
    };

    let limits = limits(ctx, raw.limits.as_ref())?;
    for (wname, w) in &workloads {
        if let WorkloadSource::Synthetic(spec) = &w.source {
            check_synthetic_size(ctx, wname, spec, &limits)?;
        }
    }

    let base_seed = raw.seed.unwrap_or(0);
    let seeds: Vec<u64> = match (raw.replicas, &raw.seeds) {
        (Some(_), Some(_)) => {
            return Err(ctx.key_error("seeds", "seeds", "give `replicas` or `seeds`, not both"));
        }
        (Some(0), None) => {
            return Err(ctx.key_error(
                "replicas",
                "replicas",
                "expected at least 1 replica, found 0",
            ));
        }
        (Some(n), None) if u64::from(n) > limits.max_cells => {
            return Err(too_many_cells(
                ctx.key_error(
                    "replicas",
                    "replicas",
                    format!(
                        "{n} replicas make more cells than `limits.max_cells` ({})",
                        limits.max_cells
                    ),
                ),
                u64::from(n),
            ));
        }
        (Some(n), None) => (0..u64::from(n))
            .map(|i| base_seed.wrapping_add(i))
            .collect(),
        (None, Some(list)) => {
            let unique: std::collections::BTreeSet<_> = list.iter().collect();
            if list.is_empty() || unique.len() != list.len() {
                return Err(ctx.key_error(
                    "seeds",
                    "seeds",
                    "expected a non-empty list of distinct seeds",
                ));
            }
            list.clone()
        }
        (None, None) => vec![base_seed],
    };

    let mut reservations = BTreeMap::new();
    for (rname, spec) in raw.reservations.iter().flatten() {
        check_name(ctx, "reservations", rname)?;
        if rname == super::axis::NO_RESERVATIONS {
            return Err(ctx
                .key_error(
                    &format!("reservations.{rname}"),
                    rname,
                    "`none` names the scenario without reservations",
                )
                .hint("choose another name"));
        }
        reservations.insert(
            rname.clone(),
            super::reservations::resolve(ctx, rname, spec)?,
        );
    }

    let mut queue_setups = BTreeMap::new();
    for (qname, spec) in raw.queues.iter().flatten() {
        check_name(ctx, "queues", qname)?;
        if qname == super::queues::NO_QUEUES {
            return Err(ctx
                .key_error(
                    &format!("queues.{qname}"),
                    qname,
                    "`none` names the setup without queues and limits",
                )
                .hint("choose another name"));
        }
        queue_setups.insert(qname.clone(), super::queues::resolve(ctx, qname, spec)?);
    }

    let sections = Sections {
        workloads: &workloads,
        clusters: &clusters,
        schedulers: &schedulers,
        reservations: &reservations,
        queues: &queue_setups,
        metrics: &metrics,
        seeds: &seeds,
        limits: &limits,
    };
    let (axes, cells) = grid::expand(raw.grid.as_ref(), &sections, ctx)?;

    let report = ReportSpec {
        formats: raw
            .reports
            .as_ref()
            .and_then(|r| r.formats.clone())
            .unwrap_or_else(|| vec!["html".into(), "md".into()]),
        template: raw
            .reports
            .as_ref()
            .and_then(|r| r.template.as_ref())
            .map(|t| ctx.base_dir.join(t)),
        markdown_template: raw
            .reports
            .as_ref()
            .and_then(|r| r.markdown_template.as_ref())
            .map(|t| ctx.base_dir.join(t)),
        reproduces: raw.reports.as_ref().and_then(|r| r.reproduces.clone()),
        gantt_cell: raw
            .reports
            .as_ref()
            .and_then(|r| r.gantt.as_ref())
            .and_then(|g| g.cell.clone()),
        gantt_start: raw
            .reports
            .as_ref()
            .and_then(|r| r.gantt.as_ref())
            .and_then(|g| g.start),
        gantt_seconds: raw
            .reports
            .as_ref()
            .and_then(|r| r.gantt.as_ref())
            .and_then(|g| g.hours)
            .map_or(86_400, |h| (h * 3600.0).round() as i64),
    };
    if let Some(cell) = &report.gantt_cell
        && !cells.iter().any(|c| &c.id == cell)
    {
        let ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
        let err = ctx.key_error(
            "reports.gantt.cell",
            "cell",
            format!("no cell `{cell}` in the grid"),
        );
        return Err(
            match super::error::did_you_mean(cell, ids.iter().copied()) {
                Some(s) => err.hint(format!("did you mean `{s}`?")),
                None => err.hint(format!("cells: {}", ids.join(", "))),
            },
        );
    }
    if let Some(paper) = &report.reproduces
        && !super::model::PAPERS.contains(&paper.as_str())
    {
        let err = ctx.key_error(
            "reports.reproduces",
            "reproduces",
            format!("unknown paper `{paper}`"),
        );
        return Err(
            match super::error::did_you_mean(paper, super::model::PAPERS.iter().copied()) {
                Some(s) => err.hint(format!("did you mean `{s}`?")),
                None => err.hint(format!(
                    "papers a report can compare with: {}",
                    super::model::PAPERS.join(", ")
                )),
            },
        );
    }
    if report.gantt_seconds <= 0 {
        return Err(ctx.key_error(
            "reports.gantt.hours",
            "hours",
            "expected a positive number of hours",
        ));
    }
    for f in &report.formats {
        if f != "html" && f != "md" {
            return Err(ctx.key_error(
                "reports.formats",
                "formats",
                format!("unknown report format `{f}` (expected html or md)"),
            ));
        }
    }
    Ok(Manifest {
        name,
        description: raw.description,
        path: Path::new(ctx.file).to_path_buf(),
        hash,
        text: ctx.text.to_string(),
        axes,
        cells,
        report,
        limits,
    })
}

/// The `limits` section, with defaults.
fn limits(ctx: &Ctx<'_>, raw: Option<&RawLimits>) -> Result<Limits, ManifestError> {
    let mut limits = Limits::default();
    let Some(raw) = raw else {
        return Ok(limits);
    };
    for (key, given, slot) in [
        ("max_cells", raw.max_cells, &mut limits.max_cells),
        ("max_jobs", raw.max_jobs, &mut limits.max_jobs),
        (
            "max_timeseries_bins",
            raw.max_timeseries_bins,
            &mut limits.max_timeseries_bins,
        ),
    ] {
        match given {
            Some(0) => {
                return Err(ctx.key_error(
                    &format!("limits.{key}"),
                    key,
                    "expected a positive bound, found 0",
                ));
            }
            Some(n) => *slot = n,
            None => {}
        }
    }
    Ok(limits)
}

/// The hint of every "too many cells" error.
pub fn too_many_cells(err: ManifestError, cells: u64) -> ManifestError {
    err.hint(format!(
        "if you mean it, raise the bound: `limits: {{max_cells: {cells}}}` (planning takes a few hundred bytes per cell; each cell is one simulation)"
    ))
}

/// Refuses a synthetic workload expected to generate more than `limits.max_jobs` jobs.
pub fn check_synthetic_size(
    ctx: &Ctx<'_>,
    wname: &str,
    spec: &super::synthetic::SyntheticSpec,
    limits: &Limits,
) -> Result<(), ManifestError> {
    let Some(expected) = spec.expected_jobs() else {
        return Ok(());
    };
    if expected <= limits.max_jobs as f64 {
        return Ok(());
    }
    Err(ctx
        .key_error(
            &format!("workloads.{wname}.synthetic.length"),
            "length",
            format!(
                "workload `{wname}` would generate about {expected:.0} jobs, more than `limits.max_jobs` ({})",
                limits.max_jobs
            ),
        )
        .hint(format!(
            "shorten the length, or raise the bound: `limits: {{max_jobs: {}}}` (a job takes a few hundred bytes in memory while it is simulated)",
            (expected * 1.1).ceil() as u64
        )))
}
