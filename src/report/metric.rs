//! The summary metrics the report plots, tabulates and writes sentences about: which column,
//! its name and unit as a reader sees them, the scale from stored units (seconds → the report's
//! wait unit, `units::WaitUnit`), and which direction is better. Views take their metrics from here, so a metric added to
//! `METRICS` (say, a per-resource utilization column) appears in every view that applies.

use super::shape::ResultShape;
use super::units::{WAIT_DECIMALS, WaitUnit};

/// Which direction of a metric a user prefers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    /// Column of summary.parquet.
    pub column: &'static str,
    /// Name in sentences and titles ("mean wait").
    pub name: &'static str,
    /// Unit after scaling ("h"; empty for ratios). A wait's is the report's wait unit: views
    /// read waits through [`Metric::in_waits`] (`Grid::shown`).
    pub unit: &'static str,
    /// Stored value × scale = shown value.
    pub scale: f64,
    /// Decimals in tables.
    pub decimals: usize,
    pub better: Better,
    /// Plotted against every axis and compared in the findings.
    pub headline: bool,
    /// Only when the experiment has reservation scenarios (the paper's metric).
    pub reservations_only: bool,
    /// The largest possible value (1 for fractions); every metric is at least 0.
    pub upper: f64,
    /// A wait in seconds, shown in the report's wait unit.
    pub wait: bool,
}

impl Metric {
    /// The metric as a report with waits in `unit` shows it (itself unless it is a wait).
    pub fn in_waits(&self, unit: WaitUnit) -> Metric {
        if self.wait {
            Metric {
                unit: unit.symbol(),
                scale: unit.scale(),
                ..*self
            }
        } else {
            *self
        }
    }

    /// "mean wait (h)", or the name alone without a unit.
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }

    /// A confidence band clipped to the metric's possible values (a mean wait is never
    /// negative, a utilization never above 1), for drawing.
    pub fn clip(&self, band: (f64, f64)) -> (f64, f64) {
        (band.0.max(0.0), band.1.min(self.upper))
    }

    /// A sentence-case title ("Mean wait").
    pub fn title(&self) -> String {
        let mut c = self.name.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    }

    /// A shown value with its unit ("5.71 h", "0.825").
    pub fn with_unit(&self, shown: f64) -> String {
        let n = super::text::number(shown);
        if self.unit.is_empty() {
            n
        } else {
            format!("{n} {}", self.unit)
        }
    }
}

const fn metric(
    column: &'static str,
    name: &'static str,
    unit: &'static str,
    scale: f64,
    decimals: usize,
    better: Better,
) -> Metric {
    Metric {
        column,
        name,
        unit,
        scale,
        decimals,
        better,
        headline: false,
        reservations_only: false,
        upper: f64::INFINITY,
        wait: false,
    }
}

const fn wait(m: Metric) -> Metric {
    Metric { wait: true, ..m }
}

const fn fraction(m: Metric) -> Metric {
    Metric { upper: 1.0, ..m }
}

const fn headline(m: Metric) -> Metric {
    Metric {
        headline: true,
        ..m
    }
}

/// The least decimals of a column of bounded slowdowns (the configurations table's; every table
/// with such a column uses it through `text::column`).
pub const SLOWDOWN_DECIMALS: usize = 2;

/// Every metric the report knows, in the order views show them.
pub const METRICS: [Metric; 8] = [
    headline(wait(metric(
        "wait_mean",
        "mean wait",
        "h",
        1.0 / 3600.0,
        WAIT_DECIMALS,
        Better::Lower,
    ))),
    wait(metric(
        "wait_p95",
        "p95 wait",
        "h",
        1.0 / 3600.0,
        WAIT_DECIMALS,
        Better::Lower,
    )),
    headline(metric(
        "bounded_slowdown_mean",
        "mean bounded slowdown",
        "",
        1.0,
        SLOWDOWN_DECIMALS,
        Better::Lower,
    )),
    headline(fraction(metric(
        "utilization",
        "utilization",
        "",
        1.0,
        4,
        Better::Higher,
    ))),
    headline(metric(
        "queue_length_sampled",
        "queue length at scheduler calls",
        "",
        1.0,
        2,
        Better::Lower,
    )),
    headline(fraction(metric(
        "backfilled_fraction",
        "fraction backfilled",
        "",
        1.0,
        4,
        Better::Higher,
    ))),
    Metric {
        headline: true,
        reservations_only: true,
        ..metric(
            "expansion_factor_weighted",
            "expansion factor (Eq. 2)",
            "",
            1.0,
            3,
            Better::Lower,
        )
    },
    metric("jobs", "jobs", "", 1.0, 0, Better::Higher),
];

/// Looks a metric up by column.
pub fn by_column(column: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.column == column)
}

/// Whether the result set has reservation scenarios besides the baseline.
pub fn has_reservations(shape: &ResultShape) -> bool {
    shape
        .axis("reservations")
        .is_some_and(|a| a.levels.len() > 1)
}

/// The headline metrics this result set has values for.
pub fn headline_metrics(shape: &ResultShape) -> Vec<&'static Metric> {
    let reservations = has_reservations(shape);
    METRICS
        .iter()
        .filter(|m| m.headline && shape.columns.contains(m.column))
        .filter(|m| reservations || !m.reservations_only)
        .collect()
}

/// The metrics the findings compare: wait, slowdown, utilization (and the expansion factor
/// with reservations) — the ones a reader decides on; the rest are in the charts.
pub fn finding_metrics(shape: &ResultShape) -> Vec<&'static Metric> {
    headline_metrics(shape)
        .into_iter()
        .filter(|m| {
            matches!(
                m.column,
                "wait_mean" | "bounded_slowdown_mean" | "utilization" | "expansion_factor_weighted"
            )
        })
        .collect()
}

/// A grid axis that is a metric setting — keyed only in the metrics node, it changes no schedule
/// (ARCHITECTURE.md, "Invariants") — with the stored columns it can change. Every other value
/// of a cell is the same at each of its levels, so views neither plot nor compare those values
/// along it (docs/reports.md, "Metric settings").
pub struct MetricSetting {
    pub axis: &'static str,
    /// The setting in sentences, capitalized ("The expected-capacity scale").
    pub name: &'static str,
    /// What it changes, for sentences ("bounded slowdowns").
    pub changes: &'static str,
    /// Whether the column (summary, jobs or users) depends on it.
    pub affects: fn(&str) -> bool,
}

/// The metric settings a grid can sweep (`manifest::axis::PARAM_AXES`): τ, the bounded-slowdown
/// threshold, and the expected-capacity scale of the EET metrics. (Warm-up, size classes and the
/// time-series step are metric settings too, but not grid axes.)
pub const METRIC_SETTINGS: [MetricSetting; 2] = [
    MetricSetting {
        axis: "tau",
        name: "τ (the bounded-slowdown threshold)",
        changes: "bounded slowdowns",
        affects: |column| column.contains("bounded_slowdown"),
    },
    MetricSetting {
        axis: "capacity_scale",
        name: "The expected-capacity scale",
        changes: "the expected-end-time (EET) metrics",
        affects: |column| column.contains("eet") || column.contains("tardiness"),
    },
];

/// Whether the grid axis `axis` can change the value in `column`: every axis can, except a
/// metric setting that does not read it.
pub fn can_change(axis: &str, column: &str) -> bool {
    METRIC_SETTINGS
        .iter()
        .find(|s| s.axis == axis)
        .is_none_or(|s| (s.affects)(column))
}

/// Indexes of the axes of `shape` that are metric settings (they change no schedule).
pub fn setting_axes(shape: &ResultShape) -> Vec<usize> {
    (0..shape.axes.len())
        .filter(|&i| METRIC_SETTINGS.iter().any(|s| s.axis == shape.axes[i].name))
        .collect()
}

/// "the expected-capacity scale" or "τ (…) and the expected-capacity scale": the metric
/// settings among the axes `indexes` of `shape`, in words, or `None` without any.
pub fn settings_named(shape: &ResultShape, indexes: &[usize]) -> Option<String> {
    let names: Vec<String> = METRIC_SETTINGS
        .iter()
        .filter(|s| indexes.iter().any(|&i| shape.axes[i].name == s.axis))
        .map(|s| lowercase_first(s.name))
        .collect();
    (!names.is_empty()).then(|| super::text::list(&names))
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or(String::new(), |c| {
        c.to_lowercase().chain(chars).collect::<String>()
    })
}

/// Indexes of the axes of `shape` that cannot change any of `columns`.
pub fn blind_axes(shape: &ResultShape, columns: &[&str]) -> Vec<usize> {
    (0..shape.axes.len())
        .filter(|&i| !columns.iter().any(|c| can_change(&shape.axes[i].name, c)))
        .collect()
}

/// The configurations a section about `columns` describes, once per setting that can change
/// them: at the first level of each metric setting that changes none of `columns` (`blind`,
/// left out of the labels), with a sentence saying so — not the same sentence once per level.
pub struct OncePerSetting<'g, 'a> {
    pub configs: Vec<&'g super::shape::Config<'a>>,
    pub blind: Vec<usize>,
    pub note: Option<String>,
}

pub fn once_per_setting<'g, 'a>(
    grid: &'g super::shape::Grid<'a>,
    columns: &[&str],
) -> OncePerSetting<'g, 'a> {
    let shape = &grid.shape;
    let blind = blind_axes(shape, columns);
    let configs = grid
        .configs
        .iter()
        .filter(|c| at_first_levels(shape, &blind, &c.levels))
        .collect();
    let note = settings_named(shape, &blind).map(|names| {
        format!(
            "Each configuration is described once for every level of {names}: a metric setting, which cannot change these figures."
        )
    });
    OncePerSetting {
        configs,
        blind,
        note,
    }
}

/// Whether a configuration sits at the first level of each of the axes `held` (the one view of
/// values those axes cannot change).
pub fn at_first_levels(
    shape: &ResultShape,
    held: &[usize],
    levels: &[super::shape::Level],
) -> bool {
    held.iter()
        .all(|&i| shape.axes[i].levels.first() == Some(&levels[i]))
}

/// A sentence naming the metric settings of `shape` that cannot change any of `metrics`, or
/// nothing: "τ (the bounded-slowdown threshold) is a metric setting: it changes bounded slowdowns
/// only, never a schedule, so mean wait and utilization are not followed along it (…)."
pub fn blind_note(shape: &ResultShape, metrics: &[&Metric], what: &str) -> Option<String> {
    let mut sentences = Vec::new();
    for s in &METRIC_SETTINGS {
        if shape.axis(s.axis).is_none() {
            continue;
        }
        let blind: Vec<String> = metrics
            .iter()
            .filter(|m| !(s.affects)(m.column))
            .map(|m| m.name.to_string())
            .collect();
        if blind.is_empty() {
            continue;
        }
        sentences.push(format!(
            "{} is a metric setting: it changes {} only, never a schedule, so {} {what} (they are the same at each of its levels).",
            s.name,
            s.changes,
            super::text::list(&blind),
        ));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}
