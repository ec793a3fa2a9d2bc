//! The shape of a result set, from its summary rows and the manifest's axis names (pure): which
//! grid axes vary and over which levels, which are numeric, the configurations present (cells
//! with their replicas merged), the metric columns and the result files. Views are chosen from
//! the shape alone (`views::select`), so the choice is testable without rendering.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::data::{ReportData, SummaryRow};
use super::metric::Metric;
use super::stats::Estimate;
use super::units::WaitUnit;

/// One value of an axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Level {
    /// Not set / not applicable (an `interval` of every event, no throttle cap, a reservation
    /// rate on the baseline).
    None,
    Number(f64),
    Text(String),
}

impl Level {
    pub fn number(&self) -> Option<f64> {
        match self {
            Level::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// Parses a cell id component as rendered by the grid (`0p05`, `none`, `event`, names).
    fn parse_rendered(s: &str) -> Level {
        match s {
            "none" | "event" | "" => Level::None,
            _ => s
                .replace('p', ".")
                .parse::<f64>()
                .map_or_else(|_| Level::Text(s.to_string()), Level::Number),
        }
    }
}

/// How an axis reads in a report.
struct AxisText {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    none: &'static str,
}

const AXIS_TEXT: [AxisText; 20] = [
    AxisText {
        name: "workload",
        label: "workload",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "cluster",
        label: "cluster",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "scheduler",
        label: "scheduler",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "reservations",
        label: "reservations",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "queues",
        label: "queue setup",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "interval",
        label: "interval",
        unit: "s",
        none: "every event",
    },
    AxisText {
        name: "tau",
        label: "τ",
        unit: "s",
        none: "none",
    },
    AxisText {
        name: "capacity_scale",
        label: "expected capacity ×",
        unit: "",
        none: "1",
    },
    AxisText {
        name: "load_scale",
        label: "load scale",
        unit: "",
        none: "1",
    },
    AxisText {
        name: "first_jobs",
        label: "first jobs",
        unit: "",
        none: "all",
    },
    AxisText {
        name: "procs",
        label: "processors",
        unit: "",
        none: "trace's",
    },
    AxisText {
        name: "node_size",
        label: "node size",
        unit: "procs",
        none: "pool",
    },
    AxisText {
        name: "overrun",
        label: "overrun",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "reservation_rate",
        label: "reservations per week",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "throttle_node_hours",
        label: "cap",
        unit: "node-h",
        none: "no cap",
    },
    AxisText {
        name: "p_login",
        label: "P_login",
        unit: "",
        none: "none",
    },
    AxisText {
        name: "placement",
        label: "placement",
        unit: "",
        none: "pool",
    },
    AxisText {
        name: "ignore_memory",
        label: "memory ignored",
        unit: "",
        none: "pool",
    },
    AxisText {
        name: "scale_runtime",
        label: "runtimes scaled",
        unit: "",
        none: "pool",
    },
    AxisText {
        name: "mu",
        label: "μ",
        unit: "1/s",
        none: "none",
    },
];

/// Flag axes as a reader names their two levels: (axis, true, false).
const FLAG_WORDS: [(&str, &str, &str); 2] = [
    ("ignore_memory", "memory ignored", "memory counted"),
    (
        "scale_runtime",
        "runtimes scaled by speed",
        "runtimes as traced",
    ),
];

/// A grid axis that varies across the result set.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    /// Levels in order: numbers ascending (None first), other values in grid order.
    pub levels: Vec<Level>,
    /// At least two distinct numbers and nothing but numbers or None.
    pub numeric: bool,
}

impl Axis {
    fn text(&self) -> Option<&'static AxisText> {
        AXIS_TEXT.iter().find(|t| t.name == self.name)
    }

    /// The axis as a reader names it, with its unit ("interval (s)", "load scale").
    pub fn label(&self) -> String {
        match self.text() {
            Some(t) if !t.unit.is_empty() => format!("{} ({})", t.label, t.unit),
            Some(t) => t.label.to_string(),
            None => self.name.clone(),
        }
    }

    /// The bare name ("interval", "cap").
    pub fn short(&self) -> String {
        self.text()
            .map_or_else(|| self.name.clone(), |t| t.label.to_string())
    }

    /// A level alone ("900 s", "every event", "easy", "0.05").
    pub fn value(&self, level: &Level) -> String {
        match level {
            Level::None => self.text().map_or("none", |t| t.none).to_string(),
            Level::Text(s) => s.clone(),
            Level::Number(x) => {
                let v = super::svg::label(*x);
                match self.text().map(|t| t.unit) {
                    Some(u) if !u.is_empty() => format!("{v} {u}"),
                    _ => v,
                }
            }
        }
    }

    /// A level without its unit, for table cells under a header that has it ("900").
    pub fn bare(&self, level: &Level) -> String {
        match level {
            Level::Number(x) => super::svg::label(*x),
            _ => self.value(level),
        }
    }

    /// A level with its axis where the value alone is ambiguous ("τ 10 s", "load scale 0.8";
    /// names of workloads and schedulers stand alone).
    pub fn describe(&self, level: &Level) -> String {
        match level {
            // A flag's `true` / `false` alone says nothing: "memory ignored" / "memory counted".
            Level::Text(s) if s == "true" || s == "false" => {
                let (yes, no) = FLAG_WORDS.iter().find(|f| f.0 == self.name).map_or_else(
                    || (self.short(), format!("no {}", self.short())),
                    |f| (f.1.to_string(), f.2.to_string()),
                );
                if s == "true" { yes } else { no }
            }
            Level::Text(s) => s.clone(),
            Level::None => self.value(level),
            Level::Number(_) => format!("{} {}", self.short(), self.value(level)),
        }
    }

    /// A level with its axis named, for saying which setting a picture or a sentence holds
    /// ("order fcfs", "cap no cap", "τ 10 s", "memory ignored"); workloads and schedulers stand
    /// alone, as do levels that read alone ("every event").
    pub fn setting(&self, level: &Level) -> String {
        let alone = matches!(self.name.as_str(), "workload" | "scheduler");
        match level {
            Level::Text(s) if !alone && s != "true" && s != "false" => {
                format!("{} {s}", self.short())
            }
            Level::None if !alone && !self.value(level).contains(' ') => {
                format!("{} {}", self.short(), self.value(level))
            }
            _ => self.describe(level),
        }
    }

    /// A level with its axis named as "axis = level", for findings, where a reader must see
    /// which axis every value belongs to ("scheduler = easy", "cap = 1536 node-h",
    /// "reservations = none"; a flag as its words: "memory counted").
    pub fn named(&self, level: &Level) -> String {
        match level {
            // A flag's words name their axis already ("memory counted", not "memory ignored =
            // false").
            Level::Text(s) if s == "true" || s == "false" => self.describe(level),
            _ => format!("{} = {}", self.short(), self.value(level)),
        }
    }

    pub fn index(&self, level: &Level) -> Option<usize> {
        self.levels.iter().position(|l| l == level)
    }
}

/// What views are chosen from: the result set without its metric values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultShape {
    /// Axes with more than one level, in the manifest's canonical order.
    pub axes: Vec<Axis>,
    /// Axes with one level: (name, shown value).
    pub fixed: Vec<(String, String)>,
    /// Each configuration's levels, indexed like `axes`, in grid order.
    pub configs: Vec<Vec<Level>>,
    /// The most rows (replicas) of one configuration.
    pub replicas: usize,
    pub cells: usize,
    /// Numeric summary columns with at least one value.
    pub columns: BTreeSet<String>,
    /// Text summary columns with at least one non-empty value (`placement` on topologies).
    pub text_columns: BTreeSet<String>,
    /// Result files present (`jobs.parquet`, `timeseries.parquet`, …).
    pub files: BTreeSet<String>,
    /// Queue orders of the summary's `order` column (`fcfs`, `fairshare`, …).
    pub orders: BTreeSet<String>,
    /// The manifest asks for the user-aware section (`metrics.expected_capacity`) and its
    /// files were loaded.
    pub user_aware: bool,
}

impl ResultShape {
    pub fn axis(&self, name: &str) -> Option<&Axis> {
        self.axes.iter().find(|a| a.name == name)
    }

    pub fn axis_index(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|a| a.name == name)
    }

    /// A configuration's settings on the varying axes but those at `skip` ("backfill easy,
    /// order fcfs"), or `None` when no other axis varies.
    pub fn settings(&self, levels: &[Level], skip: &[usize]) -> Option<String> {
        self.joined(levels, skip, Axis::setting)
    }

    /// A configuration's settings on the varying axes but those at `skip`, each as
    /// "axis = level" ("workload = may-2004, scheduler = easy"), or `None` when no other axis
    /// varies.
    pub fn named(&self, levels: &[Level], skip: &[usize]) -> Option<String> {
        self.joined(levels, skip, Axis::named)
    }

    /// `word` of each varying axis's level but those at `skip`, joined by ", ".
    fn joined(
        &self,
        levels: &[Level],
        skip: &[usize],
        word: impl Fn(&Axis, &Level) -> String,
    ) -> Option<String> {
        let parts: Vec<String> = self
            .axes
            .iter()
            .zip(levels)
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(_, (a, l))| word(a, l))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    pub fn numeric_axes(&self) -> impl Iterator<Item = &Axis> {
        self.axes.iter().filter(|a| a.numeric)
    }

    /// The axis whose levels the report compares first: the scheduler if it varies, else the
    /// reservation scenario, the cluster, or any other categorical axis but the workload.
    pub fn primary(&self) -> Option<&Axis> {
        ["scheduler", "reservations", "cluster"]
            .iter()
            .find_map(|n| self.axis(n))
            .or_else(|| {
                self.axes
                    .iter()
                    .find(|a| !a.numeric && a.name != "workload")
            })
    }

    /// Distinct levels of axis `i` among the configurations that `keep`.
    pub fn levels_among(&self, i: usize, keep: impl Fn(&[Level]) -> bool) -> Vec<Level> {
        let mut out: Vec<Level> = Vec::new();
        for c in self.configs.iter().filter(|c| keep(c)) {
            if !out.contains(&c[i]) {
                out.push(c[i].clone());
            }
        }
        // In the axis's order.
        out.sort_by_key(|l| self.axes[i].index(l));
        out
    }

    /// Distinct combinations of the axes `idx` among configurations that `keep`.
    pub fn combos_among(&self, idx: &[usize], keep: impl Fn(&[Level]) -> bool) -> Vec<Vec<Level>> {
        let mut out: Vec<Vec<Level>> = Vec::new();
        for c in self.configs.iter().filter(|c| keep(c)) {
            let combo: Vec<Level> = idx.iter().map(|&i| c[i].clone()).collect();
            if !out.contains(&combo) {
                out.push(combo);
            }
        }
        out.sort_by_key(|combo| {
            idx.iter()
                .zip(combo)
                .map(|(&i, l)| self.axes[i].index(l))
                .collect::<Vec<_>>()
        });
        out
    }
}

impl fmt::Display for ResultShape {
    /// One line per axis, for snapshots: `load_scale: numeric 0.8, 1, 1.2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for a in &self.axes {
            let levels: Vec<String> = a.levels.iter().map(|l| a.value(l)).collect();
            writeln!(
                f,
                "{}: {} {}",
                a.name,
                if a.numeric { "numeric" } else { "categorical" },
                levels.join(", ")
            )?;
        }
        writeln!(
            f,
            "{} configurations × up to {} replicas, {} cells",
            self.configs.len(),
            self.replicas,
            self.cells
        )
    }
}

/// The mean of `column` × `scale` over the summary rows (replicas) that have it, with its
/// spread; `None` when none has it.
pub fn estimate(rows: &[&SummaryRow], column: &str, scale: f64) -> Option<Estimate> {
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.numbers.get(column).copied().flatten())
        .collect();
    Estimate::of(&values).map(|e| e.scaled(scale))
}

/// A configuration: the summary rows (replicas) sharing every axis level.
#[derive(Clone, Debug)]
pub struct Config<'a> {
    pub levels: Vec<Level>,
    pub rows: Vec<&'a SummaryRow>,
}

impl Config<'_> {
    /// The replicas' mean of `column` × `scale`, with its spread.
    pub fn estimate(&self, column: &str, scale: f64) -> Option<Estimate> {
        estimate(&self.rows, column, scale)
    }

    pub fn text(&self, column: &str) -> String {
        self.rows
            .first()
            .and_then(|r| r.text.get(column).cloned())
            .unwrap_or_default()
    }
}

/// The result set seen through its shape: configurations with their rows.
pub struct Grid<'a> {
    pub shape: ResultShape,
    pub configs: Vec<Config<'a>>,
    /// The unit of every wait in the report, from the configurations' mean waits.
    pub waits: WaitUnit,
}

/// An axis's level for a summary row: the typed summary column of that name, else the cell's
/// rendered grid parameter.
fn level_of(data: &ReportData, row: &SummaryRow, axis: &str) -> Level {
    if let Some(t) = row.text.get(axis) {
        return if t.is_empty() {
            Level::None
        } else {
            Level::Text(t.clone())
        };
    }
    if let Some(v) = row.numbers.get(axis) {
        return v.map_or(Level::None, Level::Number);
    }
    data.cell_params
        .get(&row.cell)
        .and_then(|p| p.get(axis))
        .map_or(Level::None, |s| Level::parse_rendered(s))
}

impl<'a> Grid<'a> {
    pub fn new(data: &'a ReportData) -> Grid<'a> {
        let names: Vec<&str> = data
            .axis_names
            .iter()
            .map(String::as_str)
            .filter(|a| *a != "seed")
            .collect();
        // Every row's level on every named axis.
        let all: Vec<Vec<Level>> = data
            .rows
            .iter()
            .map(|r| names.iter().map(|a| level_of(data, r, a)).collect())
            .collect();
        let mut axes = Vec::new();
        let mut fixed = Vec::new();
        let mut kept = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let mut levels: Vec<Level> = Vec::new();
            for row in &all {
                if !levels.contains(&row[i]) {
                    levels.push(row[i].clone());
                }
            }
            let numbers = levels.iter().filter(|l| l.number().is_some()).count();
            let numeric = numbers >= 2 && levels.iter().all(|l| !matches!(l, Level::Text(_)));
            if numeric {
                levels.sort_by(|a, b| match (a, b) {
                    (Level::Number(x), Level::Number(y)) => x.total_cmp(y),
                    (Level::None, Level::None) => std::cmp::Ordering::Equal,
                    (Level::None, _) => std::cmp::Ordering::Less,
                    _ => std::cmp::Ordering::Greater,
                });
            }
            let axis = Axis {
                name: name.to_string(),
                levels,
                numeric,
            };
            if axis.levels.len() > 1 {
                axes.push(axis);
                kept.push(i);
            } else if let Some(l) = axis.levels.first() {
                fixed.push((name.to_string(), axis.value(l)));
            }
        }
        // Rows merged by their levels, in order of first appearance (an index by the levels'
        // text keeps this linear in the rows for large grids).
        let mut configs: Vec<Config<'a>> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for (row, levels) in data.rows.iter().zip(&all) {
            let levels: Vec<Level> = kept.iter().map(|&i| levels[i].clone()).collect();
            let key = format!("{levels:?}");
            match index.get(&key) {
                Some(&i) => configs[i].rows.push(row),
                None => {
                    index.insert(key, configs.len());
                    configs.push(Config {
                        levels,
                        rows: vec![row],
                    });
                }
            }
        }
        // Every row names the same columns: a name is copied only the first time it is seen,
        // not once per row (10,000 rows × 90 columns were 40 MB of transient copies).
        let mut columns = BTreeSet::new();
        let mut text_columns = BTreeSet::new();
        for r in &data.rows {
            for (k, v) in &r.numbers {
                if v.is_some() && !columns.contains(k) {
                    columns.insert(k.clone());
                }
            }
            for (k, v) in &r.text {
                if !v.is_empty() && !text_columns.contains(k) {
                    text_columns.insert(k.clone());
                }
            }
        }
        let shape = ResultShape {
            axes,
            fixed,
            configs: configs.iter().map(|c| c.levels.clone()).collect(),
            replicas: configs.iter().map(|c| c.rows.len()).max().unwrap_or(0),
            cells: data.rows.len(),
            columns,
            text_columns,
            files: data.files.clone(),
            orders: data
                .rows
                .iter()
                .filter_map(|r| r.text.get("order"))
                .filter(|o| !o.is_empty())
                .cloned()
                .collect(),
            user_aware: !data.eet.is_empty(),
        };
        let mean_waits: Vec<f64> = configs
            .iter()
            .filter_map(|c| c.estimate("wait_mean", 1.0))
            .map(|e| e.mean)
            .collect();
        let waits = WaitUnit::for_mean_waits(&mean_waits);
        Grid {
            shape,
            configs,
            waits,
        }
    }

    /// `m` as this report shows it: a wait in the report's wait unit.
    pub fn shown(&self, m: &Metric) -> Metric {
        m.in_waits(self.waits)
    }

    /// The configurations whose levels satisfy `keep`.
    pub fn matching(&self, keep: impl Fn(&[Level]) -> bool) -> Vec<&Config<'a>> {
        self.configs.iter().filter(|c| keep(&c.levels)).collect()
    }
}
