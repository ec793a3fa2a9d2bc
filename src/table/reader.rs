//! A job table read as a trace (docs/sources.md, "Job tables"): each row, through the
//! mapping, becomes an SWF-like job with its request (processors, nodes, memory, GPUs and a
//! GPU type as a required node property). The SWF reader's rules and counts apply: rows that
//! cannot be simulated (no submit time, no run time, a zero run time, no processors) and rows
//! the filters leave out are skipped and counted by reason; a bad value fails strict reading
//! with the file, line, row and column, and is skipped and counted with `--lenient`.
//!
//! Slurm accounting (`format: sacct`) is the same reading with Slurm's rules on top: rows of
//! job steps are left out (counted), states lose their notes (`CANCELLED by 0`), `Unknown` and
//! `None` times are missing, jobs that never started are counted apart, memory carries its
//! unit (and, before Slurm 21.08, its scope), and TRES lists give processors, nodes, GPUs and
//! the GPU type (`super::slurm`). `sacct --json` output is read job by job as the rows
//! `--parsable2` would print (`super::sacct_json`), under the same rules.

use std::borrow::Cow;
use std::path::Path;

use super::cells::{Cell, CsvTable, OpenError, ParquetTable};
use super::mapping::{Column, Per, TableFormat, TableReading};
use super::number::number;
use super::time::{DayCache, parse_datetime_in};
use super::zone::Zone;
use super::{sacct_json, slurm};
use crate::sim::topology::{
    Constraint, ConstraintId, ConstraintTable, JobRequest, NodeDemand, RequestInterner,
};
use crate::sim::{Job, Workload};
use crate::swf::names::NameReader;
use crate::swf::{Anomalies, ErrorKind, Header, Malformed, Mode, SwfError, TableValueError, Trace};

/// The largest time accepted, in seconds from the epoch or as a duration (as SWF's).
const MAX_SECONDS: f64 = 1e12;
/// The largest count accepted (processors, GPUs, nodes).
const MAX_COUNT: f64 = u32::MAX as f64;
/// Malformed rows whose messages are kept in lenient mode.
const KEEP_MALFORMED: usize = 5;

/// Reads the job table at `path` with `reading`'s mapping and filters.
pub fn read_path(path: &Path, mode: Mode, reading: &TableReading) -> Result<Trace, SwfError> {
    let source = path.display().to_string();
    let format = reading
        .format
        .or_else(|| TableFormat::of_path(path))
        .ok_or_else(|| SwfError {
            source_name: source.clone(),
            line: 0,
            kind: ErrorKind::Table(Box::new(TableValueError {
                row: None,
                column: "(file)".into(),
                expected: "a file ending in .csv, .csv.gz, .tsv or .parquet".into(),
                found: format!("{:?}", path.file_name().unwrap_or_default()),
                hint: Some("say `format: csv` or `format: parquet` in the mapping"),
            })),
        })?;
    let open_err = |e: OpenError| SwfError {
        source_name: source.clone(),
        line: 0,
        kind: match e {
            OpenError::Io(e) => ErrorKind::Io(e),
            OpenError::Format(line, message) => ErrorKind::Table(Box::new(TableValueError {
                row: None,
                column: "(file)".into(),
                expected: match format {
                    TableFormat::Csv => "CSV text".into(),
                    TableFormat::Parquet => "a Parquet file".into(),
                    TableFormat::Sacct => "`sacct --parsable2` text".into(),
                },
                found: if line > 0 {
                    format!("{message} at line {line}")
                } else {
                    message
                },
                hint: None,
            })),
        },
    };
    let zone = match &reading.zone {
        None => Zone::Fixed(reading.utc_offset),
        Some(name) => Zone::named(name).map_err(|e| SwfError {
            source_name: source.clone(),
            line: 0,
            kind: ErrorKind::Table(Box::new(TableValueError {
                row: None,
                column: "(timezone)".into(),
                expected: "a zone of the time-zone database".into(),
                found: e,
                hint: None,
            })),
        })?,
    };
    let mut reader = Reader::new(&source, mode, reading, zone.clone());
    reader.sacct = format == TableFormat::Sacct;
    if reader.sacct && sacct_json::is_json(path) {
        let columns = sacct_json::COLUMNS.map(String::from);
        // One job at a time, so that memory does not grow with the dump; a document with
        // anything amiss is read again whole below, which locates it.
        if let Ok(index) = reader.index(&columns) {
            let streamed = sacct_json::stream(path, &mut |job| {
                // Its steps are rows of their own in `--parsable2`: counted the same.
                reader.records += job.steps;
                reader.anomalies.job_steps += job.steps;
                let row = Row {
                    line: 0,
                    cells: &|c| job.cells[c].cell(),
                };
                reader.row(&row, &index)
            });
            if streamed {
                return reader.finish();
            }
        }
        let mut reader = Reader::new(&source, mode, reading, zone);
        reader.sacct = true;
        let bytes = sacct_json::read_bytes(path).map_err(|e| open_err(OpenError::Io(e)))?;
        let doc = sacct_json::Document::parse(&bytes, &source)?;
        let index = reader.index(&columns)?;
        for i in 0..doc.len() {
            match doc.job(i) {
                Ok(job) => {
                    // Its steps are rows of their own in `--parsable2`: counted the same.
                    reader.records += job.steps;
                    reader.anomalies.job_steps += job.steps;
                    let row = Row {
                        line: 0,
                        cells: &|c| job.cells[c].cell(),
                    };
                    reader.row(&row, &index)?;
                }
                Err(e) => {
                    reader.row += 1;
                    reader.malformed(e)?;
                }
            }
        }
        return reader.finish();
    }
    match format {
        TableFormat::Csv | TableFormat::Sacct => {
            let mut table = CsvTable::open(
                path,
                reading.delimiter,
                reading.header.as_deref(),
                !reader.sacct,
            )
            .map_err(open_err)?;
            let index = reader.index(&table.columns)?;
            let width = table.columns.len();
            while let Some(line) = table.next().map_err(open_err)? {
                let found = table.len();
                let row = Row {
                    line,
                    cells: &|i| table.cell(i),
                };
                if found != width {
                    reader.bad_width(&row, width, found)?;
                    continue;
                }
                reader.row(&row, &index)?;
            }
        }
        TableFormat::Parquet => {
            let wanted = reading_columns(reading);
            let mut table = ParquetTable::open(path, &wanted).map_err(open_err)?;
            let index = reader.index(&table.columns)?;
            while table.next().map_err(open_err)? {
                let row = Row {
                    line: 0,
                    cells: &|i| table.cell(i),
                };
                reader.row(&row, &index)?;
            }
        }
    }
    reader.finish()
}

/// The column names a reading uses.
fn reading_columns(r: &TableReading) -> Vec<&str> {
    fields(r)
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect()
}

/// The mapped columns in field order (see [`Index`]).
fn fields(r: &TableReading) -> [Option<&Column>; 15] {
    [
        r.id.as_ref(),
        Some(&r.submit),
        r.start.as_ref(),
        r.end.as_ref(),
        r.duration.as_ref(),
        r.requested_time.as_ref(),
        r.procs.as_ref(),
        r.nodes.as_ref(),
        r.memory.as_ref(),
        r.gpus.as_ref(),
        r.gpu_type.as_ref(),
        r.user.as_ref(),
        r.group.as_ref(),
        r.queue.as_ref(),
        r.status.as_ref(),
    ]
}

const ID: usize = 0;
const SUBMIT: usize = 1;
const START: usize = 2;
const END: usize = 3;
const DURATION: usize = 4;
const REQUESTED: usize = 5;
const PROCS: usize = 6;
const NODES: usize = 7;
const MEMORY: usize = 8;
const GPUS: usize = 9;
const GPU_TYPE: usize = 10;
const USER: usize = 11;
const GROUP: usize = 12;
const QUEUE: usize = 13;
const STATUS: usize = 14;

/// The table column of each mapped field.
type Index = [Option<usize>; 15];

/// One row: its line in a CSV file (0 in Parquet) and its cells by table column.
struct Row<'a> {
    line: u64,
    cells: &'a dyn Fn(usize) -> Cell<'a>,
}

struct Reader<'a> {
    source: &'a str,
    mode: Mode,
    r: &'a TableReading,
    /// Slurm accounting: read with Slurm's rules (the module's doc).
    sacct: bool,
    /// Data rows met (1-based number of the current one).
    row: u64,
    records: u64,
    anomalies: Anomalies,
    malformed: Malformed,
    /// Kept jobs, with absolute submit times until `finish`.
    jobs: Vec<Job>,
    names: NameReader,
    requests: RequestInterner,
    constraints: ConstraintTable,
    gpu_types: std::collections::HashMap<String, ConstraintId>,
    previous_submit: i64,
    /// The day of the last date-time cell read.
    days: DayCache,
    /// The zone of local times (the mapping's `timezone`).
    zone: Zone,
}

/// What reading one row gave.
enum Outcome {
    /// Kept; its names (user, group, queue) are already noted at its position.
    Kept(Job),
    Skipped,
}

impl<'a> Reader<'a> {
    fn new(source: &'a str, mode: Mode, r: &'a TableReading, zone: Zone) -> Self {
        Reader {
            source,
            mode,
            r,
            sacct: false,
            row: 0,
            records: 0,
            anomalies: Anomalies::default(),
            malformed: Malformed::default(),
            jobs: Vec::new(),
            names: NameReader::default(),
            requests: RequestInterner::default(),
            constraints: ConstraintTable::default(),
            gpu_types: std::collections::HashMap::new(),
            previous_submit: i64::MIN,
            days: DayCache::default(),
            zone,
        }
    }

    fn error(
        &self,
        line: u64,
        row: Option<u64>,
        column: &str,
        expected: String,
        found: String,
    ) -> SwfError {
        SwfError {
            source_name: self.source.to_string(),
            line,
            kind: ErrorKind::Table(Box::new(TableValueError {
                row,
                column: column.to_string(),
                expected,
                found,
                hint: None,
            })),
        }
    }

    /// Each mapped field's table column; a name the table lacks is an error listing them.
    fn index(&self, columns: &[String]) -> Result<Index, SwfError> {
        let mut index = [None; 15];
        for (slot, column) in fields(self.r).iter().enumerate() {
            let Some(column) = column else { continue };
            match columns.iter().position(|c| *c == column.name) {
                Some(i) => index[slot] = Some(i),
                None => {
                    let mut shown: Vec<&str> =
                        columns.iter().map(String::as_str).take(40).collect();
                    if columns.len() > 40 {
                        shown.push("…");
                    }
                    let mut e = self.error(
                        0,
                        None,
                        &column.name,
                        format!("a column of that name (mapping `{}`)", self.r.name),
                        format!("the columns {}", shown.join(", ")),
                    );
                    if let ErrorKind::Table(t) = &mut e.kind {
                        t.hint = Some(
                            "is this the table the mapping is for? Name the file's columns in the mapping (docs/sources.md, \"Job tables\")",
                        );
                    }
                    return Err(e);
                }
            }
        }
        Ok(index)
    }

    /// A CSV record with another field count than the header's.
    fn bad_width(&mut self, row: &Row<'_>, width: usize, found: usize) -> Result<(), SwfError> {
        self.row += 1;
        let e = self.error(
            row.line,
            Some(self.row),
            "(row)",
            format!("{width} fields, as the header has"),
            format!("{found}"),
        );
        self.malformed(e)
    }

    fn malformed(&mut self, e: SwfError) -> Result<(), SwfError> {
        if self.mode == Mode::Lenient {
            self.malformed.count += 1;
            if self.malformed.first.len() < KEEP_MALFORMED {
                self.malformed.first.push(e);
            }
            Ok(())
        } else {
            Err(e)
        }
    }

    fn row(&mut self, row: &Row<'_>, index: &Index) -> Result<(), SwfError> {
        self.row += 1;
        match self.job(row, index) {
            Ok(Outcome::Kept(job)) => {
                self.records += 1;
                if job.submit < self.previous_submit {
                    self.anomalies.out_of_order += 1;
                }
                self.previous_submit = job.submit;
                self.jobs.push(job);
                Ok(())
            }
            Ok(Outcome::Skipped) => {
                self.records += 1;
                Ok(())
            }
            Err(e) => self.malformed(e),
        }
    }

    fn job(&mut self, row: &Row<'_>, index: &Index) -> Result<Outcome, SwfError> {
        let r = self.r;
        let (source, row_number) = (self.source, self.row);
        let fetch = |slot: usize| index[slot].map_or(Cell::Null, |i| (row.cells)(i));
        let sacct = self.sacct;
        // A step of a Slurm job is not an allocation: its job's row is (and the step's other
        // cells are not read).
        let slurm_id = sacct.then(|| match fetch(ID) {
            Cell::Text(t) => slurm::job_id(t),
            Cell::Num(v) if v >= 0.0 && v.fract() == 0.0 => Some(slurm::JobId::Number(v as u64)),
            _ => None,
        });
        if let Some(Some(slurm::JobId::Step)) = slurm_id {
            self.anomalies.job_steps += 1;
            return Ok(Outcome::Skipped);
        }
        // Each mapped cell fetched once: the rules below read some of them several times.
        let cells: [Cell<'_>; 15] = std::array::from_fn(fetch);
        let cell = |slot: usize| cells[slot];
        let columns = fields(r);
        let col = |slot: usize| columns[slot].expect("mapped");
        let bad = |slot: usize, expected: &str| SwfError {
            source_name: source.to_string(),
            line: row.line,
            kind: ErrorKind::Table(Box::new(TableValueError {
                row: Some(row_number),
                column: col(slot).name.clone(),
                expected: expected.to_string(),
                found: cell(slot).shown(),
                hint: None,
            })),
        };
        if let Some(None) = slurm_id {
            return Err(bad(
                ID,
                "a Slurm job id: 123, 123_4 (array task), 123+1 (heterogeneous component) or a step such as 123.batch",
            ));
        }
        // TRES lists (`cpu=4,mem=8G,gres/gpu:v100=2`) read once, whichever fields read them:
        // the `slurm` mapping takes both the GPUs and their type from `AllocTRES`.
        let mut tres: [Option<slurm::Tres<'_>>; 15] = [None; 15];
        if sacct {
            for slot in [PROCS, NODES, MEMORY, GPUS, GPU_TYPE] {
                let Cell::Text(t) = cells[slot] else { continue };
                if !slurm::is_tres(t) {
                    continue;
                }
                let read = (0..slot).find(|&s| tres[s].is_some() && index[s] == index[slot]);
                tres[slot] = Some(
                    read.and_then(|s| tres[s])
                        .unwrap_or_else(|| slurm::Tres::parse(t)),
                );
            }
        }
        // `CANCELLED by 0` is `CANCELLED`; borrowed from the cell unless it must change.
        let status = text(cell(STATUS)).map(|s| {
            let s = match s {
                Cow::Borrowed(t) if sacct => Cow::Borrowed(slurm::state(t)),
                Cow::Owned(t) if sacct => Cow::Owned(slurm::state(&t).to_string()),
                s => s,
            };
            upper(s)
        });
        // Filters first: a row left out is never judged.
        if let Some(keep) = &r.keep_status {
            let status = status.as_deref().unwrap_or_default();
            if !keep.iter().any(|k| k == status) {
                self.anomalies.filtered_status += 1;
                return Ok(Outcome::Skipped);
            }
        }
        if let Some(keep) = &r.keep_partitions {
            let queue = text(cell(QUEUE)).unwrap_or_default();
            if !keep.iter().any(|k| *k == queue) {
                self.anomalies.filtered_partition += 1;
                return Ok(Outcome::Skipped);
            }
        }
        let (days, zone) = (&self.days, &self.zone);
        // A local time the zone skipped (clocks went forward): the table was not written there.
        let skipped = |slot: usize| {
            bad(
                slot,
                &format!(
                    "a local time of {}: this one does not exist there (skipped when clocks went forward), so the table was not written in that zone; dump with TZ=UTC, or name the zone that wrote it",
                    zone.name()
                ),
            )
        };
        let date_time = |slot: usize, t: &str| -> Result<Option<f64>, SwfError> {
            match parse_datetime_in(t, zone, days) {
                Some(Err(_)) => Err(skipped(slot)),
                v => Ok(v.and_then(Result::ok)),
            }
        };
        let instant = |slot: usize| -> Result<Option<f64>, SwfError> {
            let c = cell(slot);
            let v = match c {
                Cell::Null => return Ok(None),
                Cell::Text(t) if sacct && slurm::is_no_time(t) => return Ok(None),
                Cell::Num(v) => Some(v * col(slot).factor()),
                Cell::Time { secs, utc: true } => Some(secs),
                Cell::Time { secs, utc: false } => match zone {
                    Zone::Fixed(offset) => Some(secs - *offset as f64),
                    Zone::Named(_) => {
                        let whole = secs.floor();
                        match zone.utc(whole as i64) {
                            Ok(utc) => Some(utc as f64 + (secs - whole)),
                            Err(_) => return Err(skipped(slot)),
                        }
                    }
                },
                // A date (`-` at bytes 4 and 7) is never a number, which has at most a sign
                // and an exponent's sign: no number parse first.
                Cell::Text(t)
                    if t.as_bytes().get(4) == Some(&b'-') && t.as_bytes().get(7) == Some(&b'-') =>
                {
                    date_time(slot, t)?
                }
                Cell::Text(t) => match number(t) {
                    Some(v) => Some(v * col(slot).factor()),
                    None => date_time(slot, t)?,
                },
            };
            v.filter(|v| v.is_finite() && v.abs() <= MAX_SECONDS)
                .map(Some)
                .ok_or_else(|| {
                    bad(
                        slot,
                        "a time: epoch seconds (in the column's unit) or a date-time such as 2020-06-09 18:41:01",
                    )
                })
        };
        let span = |slot: usize| -> Result<Option<f64>, SwfError> {
            let c = cell(slot);
            // A clock (`1-02:03:04`) says its own unit; a number is in the column's.
            let v = match c {
                Cell::Null => return Ok(None),
                Cell::Num(v) => Some(v * col(slot).factor()),
                Cell::Text(t) if is_unlimited(t) => return Ok(None),
                // No number has a colon: a clock is not read as one first.
                Cell::Text(t) if t.contains(':') => slurm::parse_clock(t),
                Cell::Text(t) => match number(t) {
                    Some(v) => Some(v * col(slot).factor()),
                    None => slurm::parse_clock(t),
                },
                Cell::Time { .. } => None,
            };
            v.filter(|v| v.is_finite() && (0.0..=MAX_SECONDS).contains(v))
                .map(Some)
                .ok_or_else(|| {
                    bad(
                        slot,
                        "a duration: a number ≥ 0 in the column's unit, [D-]HH:MM:SS, UNLIMITED or Partition_Limit",
                    )
                })
        };
        let count = |slot: usize| -> Result<Option<f64>, SwfError> {
            let c = cell(slot);
            let v = match c {
                Cell::Null => return Ok(None),
                Cell::Num(v) => Some(v),
                // A TRES list (`cpu=4,node=1,gres/gpu=2`): the entry of the field.
                Cell::Text(_) if let Some(list) = &tres[slot] => {
                    let entry = match slot {
                        PROCS => list.cpu,
                        NODES => list.node,
                        GPUS => {
                            return list.gpus().map(Some).ok_or_else(|| {
                                bad(slot, "a TRES list with whole GPU counts (gres/gpu=2)")
                            });
                        }
                        _ => None,
                    };
                    match entry {
                        None => return Ok(None),
                        Some(e) => number(e),
                    }
                }
                Cell::Text(t) => number(t),
                Cell::Time { .. } => None,
            };
            v.map(|v| v * col(slot).factor())
                .filter(|v| v.is_finite() && (0.0..=MAX_COUNT).contains(v))
                .map(Some)
                .ok_or_else(|| bad(slot, "a number ≥ 0 (in the column's unit)"))
        };

        let Some(submit) = instant(SUBMIT)? else {
            self.anomalies.unknown_submit += 1;
            return Ok(Outcome::Skipped);
        };
        if r.since.is_some_and(|s| submit < s as f64) || r.until.is_some_and(|u| submit >= u as f64)
        {
            self.anomalies.filtered_time += 1;
            return Ok(Outcome::Skipped);
        }
        // Slurm jobs that never ran: no start (`None`, `Unknown`), or cancelled while pending
        // (Slurm then writes the cancel time as both start and end).
        // Start and end, read once where both rules need them.
        let mut start_end = None;
        if sacct && r.start.is_some() {
            let start = instant(START)?;
            let end = if r.end.is_some() { instant(END)? } else { None };
            let cancelled = status.as_deref() == Some("CANCELLED");
            if start.is_none() || (cancelled && start == end) {
                self.anomalies.never_started += 1;
                return Ok(Outcome::Skipped);
            }
            start_end = Some((start, end));
        }
        let duration = if r.duration.is_some() {
            span(DURATION)?
        } else {
            None
        };
        let runtime = match duration {
            Some(d) => Some(d),
            None if r.start.is_some() && r.end.is_some() => {
                let (start, end) = match start_end {
                    Some(read) => read,
                    None => (instant(START)?, instant(END)?),
                };
                match (start, end) {
                    (Some(s), Some(e)) if e < s => {
                        return Err(bad(END, "an end at or after the row's start"));
                    }
                    (Some(s), Some(e)) => Some(e - s),
                    _ => None,
                }
            }
            None => None,
        };
        let Some(runtime) = runtime else {
            self.anomalies.unknown_runtime += 1;
            return Ok(Outcome::Skipped);
        };
        let requested = if r.requested_time.is_some() {
            span(REQUESTED)?
        } else {
            None
        };
        if [Some(submit), Some(runtime), requested]
            .into_iter()
            .flatten()
            .any(|t| t.fract() != 0.0)
        {
            self.anomalies.fractional_times += 1;
        }
        let runtime = runtime.ceil() as i64;
        if runtime == 0 {
            self.anomalies.zero_runtime += 1;
            return Ok(Outcome::Skipped);
        }
        let requested_time = match requested.map(|w| w.ceil() as i64) {
            Some(w) if w > 0 => {
                if runtime > w {
                    self.anomalies.runtime_exceeds_request += 1;
                }
                w
            }
            _ => {
                self.anomalies.missing_request += 1;
                runtime
            }
        };

        let nodes = if r.nodes.is_some() {
            count(NODES)?
                .map(f64::ceil)
                .filter(|n| *n >= 1.0)
                .map(|n| n as u32)
        } else {
            None
        };
        let mut fractional = false;
        let mut amount = |slot: usize, c: &Option<Column>| -> Result<Option<f64>, SwfError> {
            if c.is_none() {
                return Ok(None);
            }
            let per_node = c.as_ref().is_some_and(|c| c.per == Per::Node);
            // A per-node amount is rounded per node, then multiplied: half a GPU on each of
            // two nodes holds a GPU on each.
            Ok(count(slot)?.map(|v| {
                if v.fract() != 0.0 {
                    fractional = true;
                }
                if per_node {
                    v.ceil() * f64::from(nodes.unwrap_or(1))
                } else {
                    v.ceil()
                }
            }))
        };
        let procs = match &r.procs {
            // Without a processor column, one per node.
            None => Some(f64::from(nodes.unwrap_or(1))),
            Some(_) => amount(PROCS, &r.procs)?,
        };
        let gpus = amount(GPUS, &r.gpus)?.unwrap_or(0.0);
        if fractional {
            self.anomalies.fractional_amounts += 1;
        }
        let procs = match procs {
            Some(p) if (1.0..=MAX_COUNT).contains(&p) => p as u32,
            _ => {
                self.anomalies.unknown_procs += 1;
                return Ok(Outcome::Skipped);
            }
        };
        let gpus = gpus.min(MAX_COUNT) as u32;
        let mut memory_per = r.memory.as_ref().map_or(Per::Job, |m| m.per);
        let memory_kb = match (&r.memory, cell(MEMORY)) {
            (None, _) => 0.0,
            // Slurm writes the unit (none is MB) and, before 21.08, the scope.
            (Some(_), Cell::Text(t)) if sacct => {
                let parsed = match &tres[MEMORY] {
                    Some(list) => list.mem.and_then(slurm::parse_memory),
                    None => slurm::parse_memory(t),
                };
                let Some((kb, per)) = parsed.filter(|(kb, _)| *kb <= 1e15) else {
                    return Err(bad(
                        MEMORY,
                        "memory as Slurm writes it: a number with a unit K, M, G or T (none is M), and `c` (per CPU) or `n` (per node) in dumps before Slurm 21.08",
                    ));
                };
                if let Some(per) = per {
                    memory_per = per;
                }
                kb.ceil()
            }
            (Some(m), _) => {
                let v = match cell(MEMORY) {
                    Cell::Null => 0.0,
                    Cell::Num(v) => v,
                    Cell::Text(t) => t
                        .trim_end_matches(['M', 'G', 'K', 'm', 'g', 'k'])
                        .parse::<f64>()
                        .map_err(|_| {
                            bad(MEMORY, "an amount of memory ≥ 0, in the column's unit")
                        })?,
                    Cell::Time { .. } => -1.0,
                } * m.factor();
                if !v.is_finite() || !(0.0..=1e15).contains(&v) {
                    return Err(bad(MEMORY, "an amount of memory ≥ 0, in the column's unit"));
                }
                v.ceil()
            }
        };
        let gpu_type = if gpus > 0 && r.gpu_type.is_some() {
            match (cell(GPU_TYPE), &tres[GPU_TYPE]) {
                (Cell::Text(_), Some(list)) => list.gpu_type().map(Cow::Borrowed),
                (c, _) => text(c),
            }
        } else {
            None
        };
        let constraint = match gpu_type {
            None => ConstraintId::NONE,
            Some(t) => match self.gpu_types.get(&*t) {
                Some(&id) => id,
                None => {
                    let t = t.into_owned();
                    let id = self.constraints.intern(Constraint::properties([t.clone()]));
                    self.gpu_types.insert(t, id);
                    id
                }
            },
        };
        let by_node = gpus > 0
            || nodes.is_some()
            || constraint != ConstraintId::NONE
            || (memory_per == Per::Node && memory_kb > 0.0);
        let request = if by_node {
            let n = nodes.unwrap_or(1);
            let cores = procs.div_ceil(n);
            if u64::from(cores) * u64::from(n) != u64::from(procs) {
                self.anomalies.node_spec_procs_mismatch += 1;
            }
            let per_node_kb = match memory_per {
                Per::Job => (memory_kb / f64::from(n)).ceil(),
                Per::Node => memory_kb,
                Per::Core => memory_kb * f64::from(cores),
            } as u64;
            JobRequest {
                memory_kb: per_node_kb / u64::from(cores.max(1)),
                constraint,
                ..JobRequest::nodes(
                    n,
                    NodeDemand {
                        cores,
                        memory_kb: per_node_kb,
                        gpus: gpus.div_ceil(n),
                    },
                )
            }
        } else {
            JobRequest {
                memory_kb: match memory_per {
                    Per::Core => memory_kb as u64,
                    _ => (memory_kb / f64::from(procs)).ceil() as u64,
                },
                ..JobRequest::default()
            }
        };

        let id = match cell(ID) {
            Cell::Num(v) if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 => v as u64,
            Cell::Text(t) => t.parse().unwrap_or(self.row),
            _ => self.row,
        };
        // Numbers stay ids; a name is noted at the position the job is about to take.
        let pos = self.jobs.len();
        let names = &mut self.names;
        let mut number = |slot: usize, name_slot: usize| -> i32 {
            match cell(slot) {
                Cell::Num(v) if v.fract() == 0.0 && (0.0..=f64::from(i32::MAX)).contains(&v) => {
                    v as i32
                }
                Cell::Text(t) => match t.parse::<i32>() {
                    Ok(v) if v >= 0 => v,
                    _ => {
                        names.note(pos, name_slot, t.as_bytes());
                        -1
                    }
                },
                _ => -1,
            }
        };
        let user = number(USER, 0);
        let group = number(GROUP, 1);
        let queue = number(QUEUE, 2);
        let job = Job {
            id,
            submit: submit.round() as i64,
            runtime,
            requested_time,
            procs,
            user,
            group,
            queue,
            request: self.requests.intern(request),
            ..Job::default()
        };
        Ok(Outcome::Kept(job))
    }

    /// The trace: submit times from the earliest kept submission, names resolved.
    fn finish(self) -> Result<Trace, SwfError> {
        if self.jobs.is_empty() {
            let mut e = self.error(
                0,
                None,
                &self.r.submit.name,
                "at least one job that can run".into(),
                format!(
                    "{} rows, none kept ({} skipped: {} by the filters; {} malformed)",
                    self.row,
                    self.anomalies.skipped(),
                    self.anomalies.filtered_status
                        + self.anomalies.filtered_partition
                        + self.anomalies.filtered_time,
                    self.malformed.count
                ),
            );
            if let ErrorKind::Table(t) = &mut e.kind {
                t.hint = Some(
                    "a source that yields no job is an error: check the mapping's filters (`keep`) and `trace info --lenient`",
                );
            }
            return Err(e);
        }
        let mut jobs = self.jobs;
        let origin = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
        for j in &mut jobs {
            j.submit -= origin;
        }
        let mut queue_names = std::collections::BTreeMap::new();
        let names = if self.names.is_empty() {
            Default::default()
        } else {
            self.names.resolve(&mut jobs, &mut queue_names)
        };
        let header = Header {
            unix_start_time: Some(origin),
            time_zone: Some(self.zone.offset_at(origin)),
            time_zone_string: Some(self.zone.name()),
            notes: vec![format!("job table read with the mapping `{}`", self.r.name)],
            ..Header::default()
        };
        let recorded_waits = vec![-1; jobs.len()];
        let mut workload = Workload::with_requests(jobs, self.requests.finish(), self.constraints);
        workload.queue_names = queue_names;
        workload.names = names;
        Ok(Trace {
            source: self.source.to_string(),
            header,
            workload,
            recorded_waits,
            records: self.records,
            anomalies: self.anomalies,
            malformed: self.malformed,
        })
    }
}

/// A text cell's value (numbers written as text, or as numbers: `7`, not `7.0`), borrowed
/// from a text cell.
fn text(c: Cell<'_>) -> Option<Cow<'_, str>> {
    match c {
        Cell::Text(t) => Some(Cow::Borrowed(t)),
        Cell::Num(v) if v.fract() == 0.0 && v.abs() < 1e15 => {
            Some(Cow::Owned(format!("{}", v as i64)))
        }
        Cell::Num(v) => Some(Cow::Owned(format!("{v}"))),
        _ => None,
    }
}

/// `s` in upper case, copied only when it has a lower-case letter (states seldom do).
fn upper(s: Cow<'_, str>) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_lowercase()) {
        Cow::Owned(s.to_ascii_uppercase())
    } else {
        s
    }
}

/// How Slurm and others write "no limit".
fn is_unlimited(t: &str) -> bool {
    ["unlimited", "infinite", "partition_limit"]
        .iter()
        .any(|u| t.eq_ignore_ascii_case(u))
}
