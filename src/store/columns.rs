//! Units and descriptions of every column, attached to the Parquet schema as field metadata
//! (`unit`, `description`) so that a reader of `summary.parquet` sees that `wait_mean` is in
//! seconds. The source is the contract itself: the column tables of docs/outputs.md, compiled
//! in, so the metadata can never disagree with the documentation (check_parquet.py reads both).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use arrow_schema::{Field, Schema, SchemaRef};

/// The Parquet files schedlab writes, by the heading of their table in docs/outputs.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFile {
    Jobs,
    Summary,
    Timeseries,
    Reservations,
    Users,
    UserTimeseries,
    Clusters,
    ClusterTimeseries,
    Queues,
    Stats,
    Penalties,
    JobPenalties,
    EetJobs,
    EetUsers,
    EetHeatmap,
    EetUsage,
}

impl OutputFile {
    /// Files of `results/<experiment>/` (which carry the experiment columns), as opposed to
    /// the files of the trace commands.
    fn is_experiment_result(self) -> bool {
        matches!(
            self,
            OutputFile::Jobs
                | OutputFile::Summary
                | OutputFile::Timeseries
                | OutputFile::Reservations
                | OutputFile::Users
                | OutputFile::UserTimeseries
                | OutputFile::Clusters
                | OutputFile::ClusterTimeseries
                | OutputFile::Queues
                | OutputFile::JobPenalties
                | OutputFile::EetHeatmap
                | OutputFile::EetUsage
        )
    }

    fn heading(self) -> &'static str {
        match self {
            OutputFile::Jobs => "## jobs.parquet",
            OutputFile::Summary => "### summary.parquet",
            OutputFile::Timeseries => "### timeseries.parquet",
            OutputFile::Reservations => "### reservations.parquet",
            OutputFile::Users => "### users.parquet",
            OutputFile::UserTimeseries => "### user_timeseries.parquet",
            OutputFile::Clusters => "### clusters.parquet",
            OutputFile::ClusterTimeseries => "### cluster_timeseries.parquet",
            OutputFile::Queues => "### queues.parquet",
            OutputFile::JobPenalties => "### job_penalties.parquet",
            OutputFile::Stats => "## stats.parquet (`schedlab trace stats -o`)",
            OutputFile::Penalties => "## penalties.parquet (`schedlab trace penalties -o`)",
            OutputFile::EetJobs => "## eet_jobs.parquet (`schedlab trace eet --jobs-out`)",
            OutputFile::EetUsers => "## eet_users.parquet (`schedlab trace eet --users-out`)",
            OutputFile::EetHeatmap => "## eet_heatmap.parquet (`schedlab trace eet --heatmap-out`)",
            OutputFile::EetUsage => "## eet_usage.parquet (`schedlab trace eet --usage-out`)",
        }
    }
}

const OUTPUTS_MD: &str = include_str!("../../docs/outputs.md");

/// The heading of the two leading columns of experiment result files.
const EXPERIMENT_COLUMNS: &str = "## Experiment result sets: `results/<experiment>/`";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// `None` for dimensionless columns (written `–` in the docs).
    pub unit: Option<String>,
    pub description: String,
}

type Tables = HashMap<&'static str, HashMap<String, Column>>;

/// Heading → column → description, parsed once.
fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let headings = [
            OutputFile::Jobs,
            OutputFile::Summary,
            OutputFile::Timeseries,
            OutputFile::Reservations,
            OutputFile::Users,
            OutputFile::UserTimeseries,
            OutputFile::Clusters,
            OutputFile::ClusterTimeseries,
            OutputFile::Queues,
            OutputFile::Stats,
            OutputFile::Penalties,
            OutputFile::JobPenalties,
            OutputFile::EetJobs,
            OutputFile::EetUsers,
            OutputFile::EetHeatmap,
            OutputFile::EetUsage,
        ]
        .map(OutputFile::heading);
        let headings: Vec<&'static str> =
            headings.into_iter().chain([EXPERIMENT_COLUMNS]).collect();
        parse_tables(OUTPUTS_MD, &headings)
    })
}

/// For each of `headings`, the rows `| column | type | unit | definition |` of the first table
/// after its first occurrence as a line of `text` (none: no rows), all read in one pass over
/// `text` (issue 36: a pass per heading was a tenth of a small `simulate`'s instructions).
fn parse_tables(text: &str, headings: &[&'static str]) -> Tables {
    let mut tables: Tables = headings.iter().map(|&h| (h, HashMap::new())).collect();
    let mut seen = vec![false; headings.len()];
    // The table being read: its heading's index, and whether its first row was met.
    let mut reading: Option<(usize, bool)> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            reading = None;
            if let Some(i) = headings.iter().position(|&h| h == line.trim_end())
                && !seen[i]
            {
                seen[i] = true;
                reading = Some((i, false));
            }
            continue;
        }
        let Some((i, in_table)) = reading else {
            continue;
        };
        let line = line.trim();
        if !line.starts_with('|') {
            if in_table {
                reading = None;
            }
            continue;
        }
        reading = Some((i, true));
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 4 || cells[0] == "column" || cells[0].starts_with("---") {
            continue;
        }
        let unit = match cells[2] {
            "–" | "-" | "" => None,
            u => Some(plain(u)),
        };
        let description = plain(&cells[3..].join("|"));
        let rows = tables
            .get_mut(headings[i])
            .expect("every heading has a table");
        rows.insert(plain(cells[0]), Column { unit, description });
    }
    tables
}

/// Markdown to plain text: `[text](link)` → `text`; backticks kept (they mark names).
fn plain(markdown: &str) -> String {
    let mut out = String::new();
    let mut rest = markdown;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// The documented description of `column` of `file`. Columns named after a size class take the
/// description of the documented default class (`small_wait_mean` for `tiny_wait_mean`).
pub fn describe(file: OutputFile, column: &str) -> Option<Column> {
    let tables = tables();
    let table = &tables[file.heading()];
    if let Some(c) = table.get(column).filter(|c| !c.description.is_empty()) {
        return Some(c.clone());
    }
    if let Some(c) = tables[EXPERIMENT_COLUMNS].get(column)
        && file.is_experiment_result()
    {
        return Some(c.clone());
    }
    let class_pattern = match file {
        OutputFile::Summary => ["jobs", "wait_mean", "expansion_factor_weighted"]
            .iter()
            .chain(&["bounded_slowdown_mean", "queue_mean"])
            .find_map(|suffix| {
                column
                    .strip_suffix(suffix)
                    .filter(|p| p.ends_with('_'))
                    .map(|_| format!("small_{suffix}"))
            }),
        OutputFile::Timeseries => column
            .strip_prefix("queue_mean_")
            .map(|_| "queue_mean_small".to_string()),
        _ => None,
    }?;
    let c = table.get(&class_pattern)?;
    Some(Column {
        unit: c.unit.clone(),
        description: c.description.clone(),
    })
}

/// `field` with its unit and description as field metadata.
pub fn described_field(file: OutputFile, field: &Field) -> Field {
    let Some(column) = describe(file, field.name()) else {
        return field.clone();
    };
    let mut metadata = field.metadata().clone();
    if let Some(unit) = column.unit {
        metadata.insert("unit".to_string(), unit);
    }
    metadata.insert("description".to_string(), column.description);
    field.clone().with_metadata(metadata)
}

/// `schema` with every documented field described.
pub fn described(file: OutputFile, schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new_with_metadata(
        schema
            .fields()
            .iter()
            .map(|f| described_field(file, f))
            .collect::<Vec<_>>(),
        schema.metadata().clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_carry_the_documented_unit_and_definition() {
        let wait = describe(OutputFile::Summary, "wait_mean").unwrap();
        assert_eq!(wait.unit.as_deref(), Some("s"));
        assert_eq!(wait.description, "mean wait");
        let jobs_wait = describe(OutputFile::Jobs, "wait").unwrap();
        assert_eq!(jobs_wait.description, "start − submit");
        assert_eq!(describe(OutputFile::Jobs, "slowdown").unwrap().unit, None);
        // A custom size class takes the documented default class's meaning.
        let tiny = describe(OutputFile::Summary, "tiny_wait_mean").unwrap();
        assert_eq!(tiny.description, "mean wait of the class");
        assert!(describe(OutputFile::Timeseries, "queue_mean_tiny").is_some());
        assert_eq!(
            describe(OutputFile::Summary, "experiment")
                .unwrap()
                .description,
            "the experiment's name (the manifest's `name`)"
        );
        // Every file's table is found in the compiled-in docs.
        for file in [OutputFile::Jobs, OutputFile::Stats, OutputFile::EetUsage] {
            assert!(!tables()[file.heading()].is_empty(), "{file:?}");
        }
        // Links become their text.
        assert_eq!(
            plain("see [reservations.md](reservations.md)"),
            "see reservations.md"
        );
    }

    #[test]
    fn one_pass_reads_the_first_table_after_each_heading_and_nothing_else() {
        let text = "\
# Title
## a
intro
| column | type | unit | definition |
|---|---|---|---|
| `x` | int | s | the [x](x.md) |
| y | int | – | why \\| not |
after
| z | int | s | a second table, not read |
## b (`cmd`)
| w | f64 | KB | w's |
### not wanted
| v | f64 | s | v's |
## a
| u | f64 | s | a repeated heading is not read again |
## empty
text only
";
        let tables = parse_tables(text, &["## a", "## b (`cmd`)", "## empty", "## absent"]);
        let col = |h: &str, c: &str| tables[h].get(c).cloned();
        let a = &tables["## a"];
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(
            col("## a", "`x`"),
            Some(Column {
                unit: Some("s".into()),
                description: "the x".into()
            })
        );
        assert_eq!(col("## a", "y").unwrap().unit, None);
        assert_eq!(tables["## b (`cmd`)"].len(), 1);
        assert_eq!(
            col("## b (`cmd`)", "w").unwrap().unit.as_deref(),
            Some("KB")
        );
        assert!(tables["## empty"].is_empty());
        assert!(tables["## absent"].is_empty());
    }
}
