//! `schedlab report`: HTML and Markdown reports of an experiment, rendered with minijinja from
//! its stored result set (never by simulating), with SVG charts generated in Rust. The views are
//! chosen from the result set's shape (`shape.rs`, `views/`): findings in words, metrics against
//! every swept axis, time series, distributions, the schedule, the configurations table, and the
//! reservation and burstiness sections when they apply. HTML reports are single self-contained
//! files (inline CSS and SVG: no network, open offline); Markdown reports reference the charts
//! as sibling SVG files. Same results and date → byte-identical reports.

pub mod boxplot;
pub mod charts;
pub mod data;
pub mod dates;
pub mod fields;
pub mod gantt;
pub mod gantt_window;
pub mod heatmap;
pub mod markdown;
pub mod metric;
pub mod palette;
pub mod penalties;
mod render;
pub mod shape;
pub mod stats;
pub mod svg;
pub mod text;
pub mod units;
pub mod user_aware;
pub mod users;
pub mod views;

pub use render::{Rendered, render};

/// The built-in templates (`reports/templates/`), compiled into the binary.
pub const HTML_TEMPLATE: &str = include_str!("../../reports/templates/report.html.j2");
pub const MD_TEMPLATE: &str = include_str!("../../reports/templates/report.md.j2");
