//! A job table's column mapping (docs/sources.md, "Job tables"): which column gives each job
//! field, in which unit and scope, and which rows to keep. Parsed exactly from YAML (a shipped
//! mapping, a mapping file, or inline in a manifest), then resolved into [`TableReading`], the
//! validated form the reader uses and the cache key holds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::zone::Zone;

/// Whether a table is CSV text, a Parquet file, or Slurm accounting as `sacct --parsable2`
/// prints it (delimited text read with Slurm's rules: docs/sources.md, "Slurm accounting").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableFormat {
    Csv,
    Parquet,
    Sacct,
}

impl TableFormat {
    /// The format a file name names: `.parquet`/`.pq` is Parquet, `.csv`/`.csv.gz`/`.tsv` CSV.
    pub fn of_path(path: &std::path::Path) -> Option<TableFormat> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".parquet") || name.ends_with(".pq") {
            Some(TableFormat::Parquet)
        } else if [".csv", ".csv.gz", ".tsv", ".tsv.gz"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            Some(TableFormat::Csv)
        } else {
            None
        }
    }
}

/// The unit of a numeric column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Seconds (times and durations), or the count itself (processors, GPUs, nodes), or KB
    /// (memory): the default.
    #[default]
    #[serde(alias = "s", alias = "kb", alias = "count")]
    Base,
    #[serde(rename = "ms")]
    Millis,
    #[serde(rename = "us")]
    Micros,
    #[serde(rename = "ns")]
    Nanos,
    #[serde(rename = "min")]
    Minutes,
    #[serde(rename = "h")]
    Hours,
    #[serde(rename = "b")]
    Bytes,
    #[serde(rename = "mb")]
    Megabytes,
    #[serde(rename = "gb")]
    Gigabytes,
    /// Hundredths: Alibaba's `plan_cpu` and `plan_gpu` (600 is 6 cores, 50 half a GPU).
    #[serde(rename = "percent")]
    Percent,
}

impl Unit {
    /// Multiplier to the base unit (seconds, count, KB).
    pub fn factor(self) -> f64 {
        match self {
            Unit::Base => 1.0,
            Unit::Millis => 1e-3,
            Unit::Micros => 1e-6,
            Unit::Nanos => 1e-9,
            Unit::Minutes => 60.0,
            Unit::Hours => 3600.0,
            Unit::Bytes => 1.0 / 1024.0,
            Unit::Megabytes => 1024.0,
            Unit::Gigabytes => 1024.0 * 1024.0,
            Unit::Percent => 0.01,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Base => "base",
            Unit::Millis => "ms",
            Unit::Micros => "us",
            Unit::Nanos => "ns",
            Unit::Minutes => "min",
            Unit::Hours => "h",
            Unit::Bytes => "b",
            Unit::Megabytes => "mb",
            Unit::Gigabytes => "gb",
            Unit::Percent => "percent",
        }
    }
}

/// What an amount (processors, memory, GPUs) counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// The whole job (the default).
    #[default]
    Job,
    /// Each of the job's nodes (Alibaba's instances): the job's total is this × nodes.
    Node,
    /// Each processor (memory only).
    Core,
}

/// A column as a mapping names it: its name, or `{column, unit, per}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawColumn {
    Name(String),
    Spec(ColumnSpec),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub column: String,
    #[serde(default)]
    pub unit: Unit,
    #[serde(default)]
    pub per: Per,
}

impl RawColumn {
    fn spec(&self) -> ColumnSpec {
        match self {
            RawColumn::Name(n) => ColumnSpec {
                column: n.clone(),
                unit: Unit::Base,
                per: Per::Job,
            },
            RawColumn::Spec(s) => s.clone(),
        }
    }
}

/// The job fields a table may give, each from one column.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Columns {
    pub id: Option<RawColumn>,
    pub submit: Option<RawColumn>,
    pub start: Option<RawColumn>,
    pub end: Option<RawColumn>,
    pub duration: Option<RawColumn>,
    pub requested_time: Option<RawColumn>,
    pub procs: Option<RawColumn>,
    pub nodes: Option<RawColumn>,
    pub memory: Option<RawColumn>,
    pub gpus: Option<RawColumn>,
    pub gpu_type: Option<RawColumn>,
    pub user: Option<RawColumn>,
    pub group: Option<RawColumn>,
    pub queue: Option<RawColumn>,
    pub status: Option<RawColumn>,
}

/// A mapping as written: `columns`, and how the file and its times are read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMapping {
    /// What the mapping is for (shown by `trace info`).
    pub description: Option<String>,
    /// csv or parquet; by default from the file name.
    pub format: Option<TableFormat>,
    /// The column names of a CSV file without a header line (Alibaba's tables, and dumps of
    /// `sacct --noheader`), in order.
    pub header: Option<Vec<String>>,
    /// The field separator (one byte; default `,`, and `|` for `format: sacct`).
    pub delimiter: Option<String>,
    /// The zone of times written without an offset: a UTC offset (`+08:00`, `-07:00`, `UTC`;
    /// default UTC) or a zone of the time-zone database (`Europe/Prague`), whose
    /// daylight-saving changes apply.
    pub timezone: Option<String>,
    pub columns: Columns,
    /// Rows to keep (more in a manifest's `keep`).
    pub keep: Option<Keep>,
}

/// Which rows to keep; every row left out is counted by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keep {
    /// Statuses to keep (compared ignoring case); others are left out.
    pub status: Option<Vec<String>>,
    /// Queue or partition names to keep.
    pub partitions: Option<Vec<String>>,
    /// Keep rows submitted at or after this time (a date-time, or epoch seconds).
    pub since: Option<String>,
    /// Keep rows submitted before this time.
    pub until: Option<String>,
}

/// A resolved column: its name, the factor to the base unit and what it counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub unit: Unit,
    pub per: Per,
}

impl Column {
    pub fn factor(&self) -> f64 {
        self.unit.factor()
    }
}

/// A validated mapping with its filters: what the reader uses, and what keys a workload.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TableReading {
    /// The shipped mapping's name, or `custom`.
    pub name: String,
    pub format: Option<TableFormat>,
    pub header: Option<Vec<String>>,
    pub delimiter: u8,
    /// Seconds to add to UTC for local time, for times written without an offset (0 with a
    /// named `zone`).
    pub utc_offset: i64,
    /// A zone of the time-zone database (`Europe/Prague`) instead of a fixed offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    pub id: Option<Column>,
    pub submit: Column,
    pub start: Option<Column>,
    pub end: Option<Column>,
    pub duration: Option<Column>,
    pub requested_time: Option<Column>,
    pub procs: Option<Column>,
    pub nodes: Option<Column>,
    pub memory: Option<Column>,
    pub gpus: Option<Column>,
    pub gpu_type: Option<Column>,
    pub user: Option<Column>,
    pub group: Option<Column>,
    pub queue: Option<Column>,
    pub status: Option<Column>,
    /// Statuses kept, upper-cased; `None` keeps every status.
    pub keep_status: Option<Vec<String>>,
    pub keep_partitions: Option<Vec<String>>,
    /// Epoch seconds.
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// A manifest's `mapping`: a shipped mapping's name, a mapping file (`.yaml`, relative to the
/// manifest's folder), or the mapping itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MappingRef {
    Named(String),
    Inline(Box<RawMapping>),
}

/// The mappings schedlab ships (docs/sources.md), by name.
pub const SHIPPED: [(&str, &str); 5] = [
    ("pm100", include_str!("mappings/pm100.yaml")),
    ("philly", include_str!("mappings/philly.yaml")),
    ("helios", include_str!("mappings/helios.yaml")),
    ("alibaba_pai", include_str!("mappings/alibaba_pai.yaml")),
    ("slurm", include_str!("mappings/slurm.yaml")),
];

/// The shipped mapping `name`, parsed.
pub fn shipped(name: &str) -> Option<RawMapping> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| serde_saphyr::from_str(text).expect("shipped mappings parse"))
}

/// The names of the shipped mappings, for messages.
pub fn shipped_names() -> String {
    SHIPPED.map(|(n, _)| n).join(", ")
}

/// A mapping as the command line and Python name it — a shipped mapping, or a mapping file
/// (`.yaml`, `.yml`) — with `keep` over its filters, resolved. The error is a message and, where
/// the fix is known, a hint.
pub fn by_name_or_file(
    m: &str,
    keep: Option<Keep>,
) -> Result<TableReading, (String, Option<String>)> {
    let (raw, name) = match shipped(m) {
        Some(raw) => (raw, m.to_string()),
        None if m.ends_with(".yaml") || m.ends_with(".yml") => {
            let text = std::fs::read_to_string(m)
                .map_err(|e| (format!("failed to read the mapping file {m}: {e}"), None))?;
            (parse(&text, m).map_err(|e| (e, None))?, format!("file {m}"))
        }
        None => {
            return Err((
                format!("no shipped mapping named `{m}`"),
                Some(format!(
                    "shipped: {}; a mapping file's name ends in .yaml",
                    shipped_names()
                )),
            ));
        }
    };
    raw.with_keep(keep)
        .resolve(&name)
        .map_err(|(key, e)| (format!("mapping `{name}`: {key}: {e}"), None))
}

/// Parses a mapping file's text; `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<RawMapping, String> {
    serde_saphyr::from_str(text).map_err(|e| format!("{source}: not a valid mapping: {e}"))
}

/// A UTC offset: `UTC`, `Z`, `+08:00`, `-0700`, `+8`.
pub fn parse_offset(text: &str) -> Option<i64> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("utc") || t == "Z" {
        return Some(0);
    }
    let (sign, rest) = match t.as_bytes().first()? {
        b'+' => (1, &t[1..]),
        b'-' => (-1, &t[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    (h <= 14 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

impl RawMapping {
    /// Overlays `keep` (a manifest's or the command line's) on the mapping's own filters.
    pub fn with_keep(mut self, keep: Option<Keep>) -> RawMapping {
        if let Some(k) = keep {
            let mine = self.keep.get_or_insert_with(Keep::default);
            mine.status = k.status.or(mine.status.take());
            mine.partitions = k.partitions.or(mine.partitions.take());
            mine.since = k.since.or(mine.since.take());
            mine.until = k.until.or(mine.until.take());
        }
        self
    }

    /// Validates the mapping: a submit column, a run time (start and end, or a duration),
    /// units that fit their fields, a readable offset and filter times. Errors name the key.
    pub fn resolve(&self, name: &str) -> Result<TableReading, (String, String)> {
        let c = &self.columns;
        let column = |key: &str,
                      raw: &Option<RawColumn>,
                      units: &[Unit],
                      pers: &[Per]|
         -> Result<Option<Column>, (String, String)> {
            let Some(raw) = raw else { return Ok(None) };
            let s = raw.spec();
            if s.column.is_empty() {
                return Err((format!("columns.{key}"), "an empty column name".into()));
            }
            if !units.contains(&s.unit) {
                return Err((
                    format!("columns.{key}.unit"),
                    format!(
                        "unit `{}` does not fit `{key}` (expected one of: {})",
                        s.unit.name(),
                        units
                            .iter()
                            .map(|u| if *u == Unit::Base {
                                "the default"
                            } else {
                                u.name()
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if !pers.contains(&s.per) {
                return Err((
                    format!("columns.{key}.per"),
                    format!("`{key}` cannot be given per {:?}", s.per).to_lowercase(),
                ));
            }
            Ok(Some(Column {
                name: s.column,
                unit: s.unit,
                per: s.per,
            }))
        };
        use Unit::*;
        let time = [Base, Millis, Micros, Nanos];
        let span = [Base, Millis, Minutes, Hours];
        let count = [Base, Percent];
        let mem = [Base, Bytes, Megabytes, Gigabytes];
        let job = [Per::Job];
        let amount = [Per::Job, Per::Node];
        let text = [Base];
        let Some(submit) = column("submit", &c.submit, &time, &job)? else {
            return Err((
                "columns.submit".into(),
                "a job table needs the column of submit times (`columns.submit`)".into(),
            ));
        };
        let start = column("start", &c.start, &time, &job)?;
        let end = column("end", &c.end, &time, &job)?;
        let duration = column("duration", &c.duration, &span, &job)?;
        if duration.is_none() && (start.is_none() || end.is_none()) {
            return Err((
                "columns".into(),
                "a job table needs a run time: `columns.duration`, or `columns.start` and `columns.end`".into(),
            ));
        }
        if self.format == Some(TableFormat::Sacct) && c.id.is_none() {
            return Err((
                "columns.id".into(),
                "Slurm accounting needs the job id column (`columns.id`: JobIDRaw or JobID) to tell jobs from their steps".into(),
            ));
        }
        let delimiter = match self.delimiter.as_deref() {
            None if self.format == Some(TableFormat::Sacct) => b'|',
            None => b',',
            Some("\\t") | Some("\t") => b'\t',
            Some(d) if d.len() == 1 => d.as_bytes()[0],
            Some(d) => {
                return Err((
                    "delimiter".into(),
                    format!("expected one character, found {d:?}"),
                ));
            }
        };
        let (utc_offset, zone) = match &self.timezone {
            None => (0, None),
            Some(t) => match parse_offset(t) {
                Some(offset) => (offset, None),
                None => {
                    let zone = Zone::named(t.trim()).map_err(|e| {
                        (
                            "timezone".to_string(),
                            format!(
                                "expected a UTC offset such as `+08:00`, `-07:00` or `UTC`, or a zone of the time-zone database such as `Europe/Prague`, found {t:?} ({e})"
                            ),
                        )
                    })?;
                    (0, Some(zone))
                }
            },
        };
        let zone_of_times = zone.clone().unwrap_or(Zone::Fixed(utc_offset));
        let keep = self.keep.clone().unwrap_or_default();
        let instant = |key: &str, v: &Option<String>| -> Result<Option<i64>, (String, String)> {
            match v {
                None => Ok(None),
                Some(t) => super::time::parse_instant(t, &zone_of_times)
                    .map(Some)
                    .ok_or_else(|| {
                        (
                            format!("keep.{key}"),
                            format!("expected a date-time (`2020-05-01T00:00:00+02:00`) or epoch seconds, found {t:?}"),
                        )
                    }),
            }
        };
        let since = instant("since", &keep.since)?;
        let until = instant("until", &keep.until)?;
        if let (Some(s), Some(u)) = (since, until)
            && s >= u
        {
            return Err((
                "keep.until".into(),
                format!("`until` ({u}) is not after `since` ({s})"),
            ));
        }
        let status = column("status", &c.status, &text, &job)?;
        if keep.status.is_some() && status.is_none() {
            return Err((
                "keep.status".into(),
                "keeping rows by status needs `columns.status`".into(),
            ));
        }
        let queue = column("queue", &c.queue, &text, &job)?;
        if keep.partitions.is_some() && queue.is_none() {
            return Err((
                "keep.partitions".into(),
                "keeping rows by partition needs `columns.queue`".into(),
            ));
        }
        Ok(TableReading {
            name: name.to_string(),
            format: self.format,
            header: self.header.clone(),
            delimiter,
            utc_offset,
            zone: zone.map(|z| z.name()),
            id: column("id", &c.id, &text, &job)?,
            submit,
            start,
            end,
            duration,
            requested_time: column("requested_time", &c.requested_time, &span, &job)?,
            procs: column("procs", &c.procs, &count, &amount)?,
            nodes: column("nodes", &c.nodes, &text, &job)?,
            memory: column("memory", &c.memory, &mem, &[Per::Job, Per::Node, Per::Core])?,
            gpus: column("gpus", &c.gpus, &count, &amount)?,
            gpu_type: column("gpu_type", &c.gpu_type, &text, &job)?,
            user: column("user", &c.user, &text, &job)?,
            group: column("group", &c.group, &text, &job)?,
            queue,
            status,
            keep_status: keep
                .status
                .map(|s| s.iter().map(|v| v.to_ascii_uppercase()).collect()),
            keep_partitions: keep.partitions,
            since,
            until,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_mapping_resolves() {
        for (name, _) in SHIPPED {
            let m = shipped(name).unwrap();
            m.resolve(name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
    }

    #[test]
    fn offsets_parse() {
        assert_eq!(parse_offset("UTC"), Some(0));
        assert_eq!(parse_offset("+08:00"), Some(8 * 3600));
        assert_eq!(parse_offset("-0700"), Some(-7 * 3600));
        assert_eq!(parse_offset("+5:30"), Some(5 * 3600 + 1800));
        assert_eq!(parse_offset("8"), None);
        assert_eq!(parse_offset("+25:00"), None);
    }
}
