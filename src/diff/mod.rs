//! `schedlab diff`: compare two result sets (STYLE.md item 10: two loads and a pure comparison,
//! rendered separately). Reads only stored results — `summary.parquet` files — never simulates.

mod compare;
mod load;
mod render;
mod threshold;

pub use compare::{CellDiff, Diff, METRICS, MetricDelta, Side, compare};
pub use load::{ResultSet, load};
pub use render::{render_json, render_markdown, render_table};
pub use threshold::{Threshold, Violation, parse_threshold};
