//! `schedlab report`: HTML and Markdown reports of an experiment, rendered with minijinja from
//! its stored result set (never by simulating), with SVG charts generated in Rust. HTML reports
//! are single self-contained files (inline CSS and SVG: no network, open offline); Markdown
//! reports reference the charts as sibling SVG files.

mod burstiness;
pub mod charts;
mod clusters;
pub mod data;
mod render;
mod reservations;
pub mod svg;

pub use render::{Rendered, render};

/// The built-in templates (`reports/templates/`), compiled into the binary.
pub const HTML_TEMPLATE: &str = include_str!("../../reports/templates/report.html.j2");
pub const MD_TEMPLATE: &str = include_str!("../../reports/templates/report.md.j2");
