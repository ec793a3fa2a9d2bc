//! Which views a report shows, chosen from the result set's shape — not per cell — and how each
//! is built. A *family* of views (the findings, the sweep charts, the time series, the
//! reservation comparison, …) looks at the [`ResultShape`] and proposes views (pure, testable
//! without rendering: [`select`]); then builds each one it proposed from the loaded data into a
//! [`Section`] of tables, charts and sentences. The template renders sections generically, so a
//! new family plugs in with one file and one line in [`FAMILIES`] (docs/reports.md, "Adding a
//! view").

mod burstiness;
mod clusters;
mod fairshare;
mod findings;
mod penalties;
mod queues;
mod replica_means;
mod reservations;
mod schedule;
mod sweep;
mod table;
mod timeline;
mod user_aware;

use std::fmt;

use super::data::ReportData;
use super::palette::Palette;
use super::shape::{Grid, ResultShape};

pub use fairshare::fairshare_findings;
pub use findings::findings_for;
pub use queues::{MEDERNACH, MEDERNACH_WAITS, queue_section};
pub use table::configurations as configurations_table;

/// A view the report will show.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewSpec {
    /// The family that proposed it and builds it.
    pub family: &'static str,
    pub kind: ViewKind,
}

/// What a view shows, in terms of the shape's axes and metric columns.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewKind {
    /// Sentences comparing the levels of `compare` and following each metric along the
    /// numeric `trends` axes.
    Findings {
        compare: Option<String>,
        trends: Vec<String>,
    },
    /// `metric` against the numeric axis `x`: a line per level of `lines`, a panel per
    /// combination of `panels`, averaged over `averaged`; `held` are metric settings that
    /// cannot change the metric, read at their first level (`metric::METRIC_SETTINGS`).
    Against {
        metric: &'static str,
        x: String,
        lines: Option<String>,
        panels: Vec<String>,
        averaged: Vec<String>,
        /// Numeric axes shown at their "without" level (no cap) only, rather than averaged.
        without: Vec<String>,
        held: Vec<String>,
    },
    /// `metric` as bars coloured by `colours`, grouped by the combinations of `groups`,
    /// averaged over `averaged`, `held` as for `Against`.
    Bars {
        metric: &'static str,
        colours: Option<String>,
        groups: Vec<String>,
        averaged: Vec<String>,
        held: Vec<String>,
    },
    /// A per-bin time series or a per-job distribution: a panel per level of `panels`, a line
    /// per configuration told apart by `colour` and `dash`, other axes held at the first
    /// configuration's levels (`held`).
    Lines {
        value: &'static str,
        panels: Option<String>,
        colour: Option<String>,
        dash: Option<String>,
        held: Vec<String>,
    },
    /// A whole section built by its family (reservations, burstiness).
    Section,
    /// One cell's schedule in a window.
    Gantt,
    /// The configurations with their axes and metrics.
    Table { axes: Vec<String> },
}

impl fmt::Display for ViewSpec {
    /// One line per view, for snapshots: `sweep: wait_mean ~ load_scale | lines scheduler |
    /// panels tau`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "–".into());
        let list = |v: &[String]| {
            if v.is_empty() {
                "–".to_string()
            } else {
                v.join(" × ")
            }
        };
        write!(f, "{}: ", self.family)?;
        match &self.kind {
            ViewKind::Findings { compare, trends } => {
                write!(f, "compare {} | trends {}", opt(compare), list(trends))
            }
            ViewKind::Against {
                metric,
                x,
                lines,
                panels,
                averaged,
                without,
                held,
            } => {
                write!(
                    f,
                    "{metric} ~ {x} | lines {} | panels {}",
                    opt(lines),
                    list(panels)
                )?;
                if !averaged.is_empty() {
                    write!(f, " | averaged {}", list(averaged))?;
                }
                if !without.is_empty() {
                    write!(f, " | without {}", list(without))?;
                }
                if !held.is_empty() {
                    write!(f, " | held {}", list(held))?;
                }
                Ok(())
            }
            ViewKind::Bars {
                metric,
                colours,
                groups,
                averaged,
                held,
            } => {
                write!(
                    f,
                    "{metric} bars | colours {} | groups {}",
                    opt(colours),
                    list(groups)
                )?;
                if !averaged.is_empty() {
                    write!(f, " | averaged {}", list(averaged))?;
                }
                if !held.is_empty() {
                    write!(f, " | held {}", list(held))?;
                }
                Ok(())
            }
            ViewKind::Lines {
                value,
                panels,
                colour,
                dash,
                held,
            } => {
                write!(
                    f,
                    "{value} | panels {} | colour {} | dash {}",
                    opt(panels),
                    opt(colour),
                    opt(dash)
                )?;
                if !held.is_empty() {
                    write!(f, " | held {}", list(held))?;
                }
                Ok(())
            }
            ViewKind::Section => write!(f, "section"),
            ViewKind::Gantt => write!(f, "gantt"),
            ViewKind::Table { axes } => write!(f, "table by {}", list(axes)),
        }
    }
}

/// A chart ready for the templates.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Unique within the report; the Markdown report's SVG file is `<experiment>-<id>.svg`.
    pub id: String,
    pub caption: String,
    pub svg: String,
}

/// A table ready for the templates.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub caption: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Leading columns holding text (left-aligned).
    pub text_columns: usize,
    /// Shown collapsed in HTML (long tables).
    pub folded: bool,
}

/// A finding: an optional bold lead and its sentences.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub title: String,
    pub text: String,
}

/// What a section of the report holds, in template order: intro paragraphs, findings, tables,
/// charts.
#[derive(Clone, Debug, Default)]
pub struct Section {
    pub id: String,
    pub heading: String,
    pub intro: Vec<String>,
    pub findings: Vec<Finding>,
    pub tables: Vec<Table>,
    pub charts: Vec<Chart>,
}

/// A configuration as a reader names it in a section's words and tables: its settings on the
/// varying axes but `skip` ("scheduler easy, memory ignored"), or its workload when nothing
/// else varies.
pub fn config_label(shape: &ResultShape, c: &super::shape::Config<'_>, skip: &[usize]) -> String {
    shape
        .settings(&c.levels, skip)
        .unwrap_or_else(|| c.text("workload"))
}

/// A configuration as a finding names it: each setting with its axis ("workload = may-2004,
/// scheduler = easy"), so a reader never has to guess which axis a bare value belongs to; its
/// workload when nothing else varies.
pub fn finding_label(shape: &ResultShape, c: &super::shape::Config<'_>, skip: &[usize]) -> String {
    shape
        .named(&c.levels, skip)
        .unwrap_or_else(|| format!("workload = {}", c.text("workload")))
}

/// What a family builds from.
pub struct Context<'a> {
    pub grid: &'a Grid<'a>,
    pub data: &'a ReportData,
    pub palette: &'a Palette,
    /// Size-class names of the experiment's metrics section.
    pub classes: &'a [String],
    /// The paper the manifest says the experiment reproduces (`reports.reproduces`): only then
    /// does a family compare with a paper (issue 35).
    pub reproduces: Option<&'a str>,
}

impl Context<'_> {
    /// Whether the experiment reproduces `paper` (a stem of `manifest::model::PAPERS`).
    pub fn reproduces(&self, paper: &str) -> bool {
        self.reproduces == Some(paper)
    }
}

/// A family of views: which it proposes for a result set, and how it builds them.
pub trait Family: Sync {
    fn name(&self) -> &'static str;
    /// Heading of the section its views go to; families sharing a heading share the section.
    fn heading(&self) -> &'static str;
    /// The views this family proposes for `shape` (pure).
    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec>;
    /// Adds the views it proposed to `section`.
    fn build(&self, views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section);
}

/// Every family, in report order.
pub static FAMILIES: [&dyn Family; 12] = [
    &findings::Findings,
    &reservations::Reservations,
    &burstiness::Burstiness,
    &fairshare::Fairshare,
    &penalties::Penalties,
    &user_aware::UserAware,
    &sweep::Sweep,
    &timeline::Timeline,
    &clusters::Clusters,
    &queues::Queues,
    &schedule::Schedule,
    &table::Configurations,
];

/// The views a result set of this shape gets (pure).
pub fn select(shape: &ResultShape) -> Vec<ViewSpec> {
    FAMILIES.iter().flat_map(|f| f.select(shape)).collect()
}

/// Builds the selected views into sections, in family order.
pub fn build(views: &[ViewSpec], ctx: &Context<'_>) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    for family in FAMILIES {
        let mine: Vec<&ViewSpec> = views.iter().filter(|v| v.family == family.name()).collect();
        if mine.is_empty() {
            continue;
        }
        let heading = family.heading();
        let index = match sections.iter().position(|s| s.heading == heading) {
            Some(i) => i,
            None => {
                sections.push(Section {
                    id: slug(heading),
                    heading: heading.to_string(),
                    ..Section::default()
                });
                sections.len() - 1
            }
        };
        family.build(&mine, ctx, &mut sections[index]);
    }
    sections.retain(|s| {
        !(s.intro.is_empty() && s.findings.is_empty() && s.tables.is_empty() && s.charts.is_empty())
    });
    sections
}

/// A file- and id-safe form of `text`: lowercase letters, digits and dashes.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}
