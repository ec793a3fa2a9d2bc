//! The streaming reader: one reused line buffer, fields split on ASCII whitespace, integers
//! parsed from bytes. Gzip is detected from the magic bytes `1f 8b`, never from the file name.
//! Lines end with `\n`, `\r\n` or a lone `\r` (old Mac files); a UTF-8 byte-order mark at the
//! start is skipped; a line longer than [`MAX_LINE`] bytes is an error (no SWF line comes close:
//! such a file is not a trace, and reading it whole would exhaust memory).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
use serde::Serialize;

use super::error::{ErrorKind, SwfError};
use super::fields::{FIELD_COUNT, is_number, parse_int};
use super::header::Header;
use super::names::{NameReader, named_slot};
use super::options::ReadOptions;
use super::request::{RequestBuilder, RequestFields};
use crate::sim::{Job, Workload};

/// What to do with a malformed job line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Stop at the first malformed line with an error naming it (the default).
    #[default]
    Strict,
    /// Skip malformed lines, counting them and keeping the first few messages.
    Lenient,
}

/// Per-reason counts of job lines that were read but are unusual. The first four reasons leave
/// the job out of the workload; the others keep it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Anomalies {
    /// Run time -1: skipped.
    pub unknown_runtime: u64,
    /// Run time 0: skipped (a zero-length job never occupies the machine).
    pub zero_runtime: u64,
    /// Requested (field 8) and allocated (field 5) processors both unknown or 0: skipped.
    pub unknown_procs: u64,
    /// Submit time -1: skipped.
    pub unknown_submit: u64,
    /// Run time larger than the requested time: kept (killed or let run, by setting).
    pub runtime_exceeds_request: u64,
    /// No requested time (field 9): kept, requested time = run time.
    pub missing_request: u64,
    /// Submit time earlier than the previous line's: kept (the workload is sorted stably).
    pub out_of_order: u64,
    /// Memory taken from field 7 (used memory) because field 10 is unknown
    /// (`used_memory_fallback`).
    #[serde(default)]
    pub memory_from_used: u64,
    /// Fields after the 18th in no dialect schedlab knows (with `extended: auto`): ignored.
    #[serde(default)]
    pub extended_unrecognized: u64,
    /// Node specs with negated properties, host names or resources (`mem=2gb`), left out.
    #[serde(default)]
    pub node_spec_ignored_tokens: u64,
    /// Node specs with a fractional `ppn` (rounded down, at least 1).
    #[serde(default)]
    pub node_spec_fractional_ppn: u64,
    /// Node specs of several `+` parts, merged into one uniform request.
    #[serde(default)]
    pub node_spec_multi_part: u64,
    /// Node specs whose nodes × ppn differ from the requested processors (the spec is used).
    #[serde(default)]
    pub node_spec_procs_mismatch: u64,
    /// Jobs with a time given in fractions of a second (Batsim workloads), rounded to whole
    /// seconds (docs/sources.md).
    #[serde(default)]
    pub fractional_times: u64,
    /// Job-table rows left out by the mapping's status filter (`keep.status`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub filtered_status: u64,
    /// Job-table rows left out by the partition filter (`keep.partitions`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub filtered_partition: u64,
    /// Job-table rows submitted outside `keep.since`/`keep.until`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub filtered_time: u64,
    /// Job-table rows with a fractional processor or GPU count, rounded up (kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fractional_amounts: u64,
    /// Slurm accounting rows of job steps (`123.batch`, `123.0`): their job's row holds the
    /// allocation (docs/sources.md, "Slurm accounting").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub job_steps: u64,
    /// Slurm accounting jobs that never started: pending at the dump, or cancelled while
    /// pending (their submission is counted here, not simulated).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub never_started: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Anomalies {
    /// The reasons a job line is left out of the workload, each with its count (in
    /// [`Anomalies::skipped`]'s order; they sum to it).
    pub fn skipped_by_reason(&self) -> [(&'static str, u64); 9] {
        [
            ("unknown_runtime", self.unknown_runtime),
            ("zero_runtime", self.zero_runtime),
            ("unknown_procs", self.unknown_procs),
            ("unknown_submit", self.unknown_submit),
            ("filtered_status", self.filtered_status),
            ("filtered_partition", self.filtered_partition),
            ("filtered_time", self.filtered_time),
            ("job_steps", self.job_steps),
            ("never_started", self.never_started),
        ]
    }

    /// Job lines left out of the workload.
    pub fn skipped(&self) -> u64 {
        self.unknown_runtime
            + self.zero_runtime
            + self.unknown_procs
            + self.unknown_submit
            + self.filtered_status
            + self.filtered_partition
            + self.filtered_time
            + self.job_steps
            + self.never_started
    }
}

/// Malformed lines skipped in lenient mode.
#[derive(Debug, Default)]
pub struct Malformed {
    pub count: u64,
    /// The first few errors, for the report.
    pub first: Vec<SwfError>,
}

const KEEP_MALFORMED: usize = 5;

#[derive(Debug)]
pub struct Trace {
    /// The input's name as given (a path, or a label).
    pub source: String,
    pub header: Header,
    pub workload: Workload,
    /// SWF field 3 (the wait recorded in the log) of each job of `workload`, in the same order;
    /// -1 when unknown. The simulator never uses it; `trace stats` does.
    pub recorded_waits: Vec<i64>,
    /// Job lines read (kept + skipped; malformed lines excluded).
    pub records: u64,
    pub anomalies: Anomalies,
    pub malformed: Malformed,
}

impl Trace {
    /// Jobs of the workload asking for more than `procs` processors (they will be skipped by
    /// any simulation on a machine of that size).
    pub fn larger_than(&self, procs: u64) -> u64 {
        self.workload
            .jobs
            .iter()
            .filter(|j| u64::from(j.procs) > procs)
            .count() as u64
    }
}

/// The header of the SWF file at `path` (plain or gzip): its comment lines before the first job
/// line, where the standard puts them — what `plan` checks without reading the jobs. Directives
/// with values the reader would refuse are left out (reading the trace reports them).
pub fn read_header_path(path: &Path) -> Result<Header, SwfError> {
    let source = path.display().to_string();
    let io_err = |line, e| SwfError {
        source_name: source.clone(),
        line,
        kind: ErrorKind::Io(e),
    };
    let mut input = BufReader::new(File::open(path).map_err(|e| io_err(0, e))?);
    let gzip = input
        .fill_buf()
        .map_err(|e| io_err(0, e))?
        .starts_with(&[0x1f, 0x8b]);
    let mut lines: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::new(MultiGzDecoder::new(input)))
    } else {
        Box::new(input)
    };
    let mut header = Header::default();
    let mut line = Vec::new();
    let mut number = 0;
    while next_line(&mut lines, &mut line).map_err(|e| io_err(number + 1, e))? {
        number += 1;
        let mut text = trim(&line);
        if number == 1 {
            text = trim(text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text));
        }
        if text.is_empty() {
            continue;
        }
        if text[0] != b';' {
            break;
        }
        let _ = header.absorb(&String::from_utf8_lossy(&text[1..]));
    }
    Ok(header)
}

/// Reads an SWF file, plain or gzip-compressed, as the SWF standard says.
pub fn read_path(path: &Path, mode: Mode) -> Result<Trace, SwfError> {
    read_path_with(path, mode, &ReadOptions::default())
}

/// Reads an SWF file with explicit [`ReadOptions`].
pub fn read_path_with(path: &Path, mode: Mode, options: &ReadOptions) -> Result<Trace, SwfError> {
    let source = path.display().to_string();
    let io_err = |e| SwfError {
        source_name: source.clone(),
        line: 0,
        kind: ErrorKind::Io(e),
    };
    let file = File::open(path).map_err(io_err)?;
    read(
        BufReader::with_capacity(1 << 16, file),
        &source,
        mode,
        options,
    )
}

/// Reads SWF text from any reader, decompressing it when it starts with the gzip magic bytes.
pub fn read<R: BufRead>(
    mut input: R,
    source: &str,
    mode: Mode,
    options: &ReadOptions,
) -> Result<Trace, SwfError> {
    let io_err = |e| SwfError {
        source_name: source.to_string(),
        line: 0,
        kind: ErrorKind::Io(e),
    };
    let gzip = input.fill_buf().map_err(io_err)?.starts_with(&[0x1f, 0x8b]);
    if gzip {
        let decoder = MultiGzDecoder::new(input);
        parse(
            BufReader::with_capacity(1 << 18, decoder),
            source,
            mode,
            options,
        )
    } else {
        parse(input, source, mode, options)
    }
}

/// The longest line accepted, in bytes.
pub const MAX_LINE: usize = 1 << 20;

/// Reads the next line into `line` (without its end), accepting `\n`, `\r\n` and `\r` as line
/// ends. Returns false at the end of the input. Fails when a line exceeds [`MAX_LINE`].
fn next_line<R: BufRead>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        match buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(end) => {
                let cr = buf[end] == b'\r';
                line.extend_from_slice(&buf[..end]);
                input.consume(end + 1);
                if cr && input.fill_buf()?.first() == Some(&b'\n') {
                    input.consume(1);
                }
                return Ok(true);
            }
            None => {
                let n = buf.len();
                line.extend_from_slice(buf);
                input.consume(n);
            }
        }
        if line.len() > MAX_LINE {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                LineTooLong,
            ));
        }
    }
}

/// The error of a line longer than [`MAX_LINE`].
#[derive(Debug)]
struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a line longer than {MAX_LINE} bytes")
    }
}

impl std::error::Error for LineTooLong {}

fn parse<R: BufRead>(
    mut input: R,
    source: &str,
    mode: Mode,
    options: &ReadOptions,
) -> Result<Trace, SwfError> {
    let mut trace = Trace {
        source: source.to_string(),
        header: Header::default(),
        workload: Workload::default(),
        recorded_waits: Vec::new(),
        records: 0,
        anomalies: Anomalies::default(),
        malformed: Malformed::default(),
    };
    // Jobs and their recorded waits in parallel vectors: no (job, wait) pairs to copy apart.
    let mut jobs: Vec<Job> = Vec::new();
    let mut waits: Vec<i64> = Vec::new();
    let mut requests = RequestBuilder::new(options.clone());
    let mut named = NameReader::default();
    let mut line = Vec::with_capacity(256);
    let mut number = 0u64;
    let mut previous_submit = i64::MIN;
    loop {
        let more = next_line(&mut input, &mut line).map_err(|e| {
            let kind = if e.get_ref().is_some_and(|inner| inner.is::<LineTooLong>()) {
                ErrorKind::LineTooLong { limit: MAX_LINE }
            } else {
                ErrorKind::Io(e)
            };
            SwfError {
                source_name: source.to_string(),
                line: number + 1,
                kind,
            }
        })?;
        if !more {
            break;
        }
        number += 1;
        let mut text = trim(&line);
        if number == 1 {
            text = trim(text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text));
        }
        if text.is_empty() {
            continue;
        }
        let parsed = if text[0] == b';' {
            match trace.header.absorb(&String::from_utf8_lossy(&text[1..])) {
                Ok(()) => continue,
                Err(kind) => Err(kind),
            }
        } else {
            parse_job(text).and_then(|raw| {
                let Some(mut job) = classify(&raw, &mut trace.anomalies) else {
                    return Ok((raw, None));
                };
                let fields = RequestFields {
                    requested_memory: raw.requested_memory,
                    used_memory: raw.used_memory,
                    extra: &raw.extra[..raw.extra_count],
                };
                match requests.apply(&mut job, &fields, &mut trace.anomalies) {
                    Ok(()) => Ok((raw, Some(job))),
                    Err((field, expected)) => {
                        Err(bad(field - 1, expected, raw.extra[field - FIELD_COUNT - 1]))
                    }
                }
            })
        };
        match parsed {
            Ok((raw, job)) => {
                trace.records += 1;
                if raw.submit < previous_submit && raw.submit >= 0 {
                    trace.anomalies.out_of_order += 1;
                }
                if raw.submit >= 0 {
                    previous_submit = raw.submit;
                }
                if let Some(job) = job {
                    for (slot, name) in raw.names.iter().enumerate() {
                        if let Some(name) = name {
                            named.note(jobs.len(), slot, name);
                        }
                    }
                    jobs.push(job);
                    waits.push(raw.wait);
                }
            }
            Err(kind) => {
                let error = SwfError {
                    source_name: source.to_string(),
                    line: number,
                    kind,
                };
                match mode {
                    Mode::Strict => return Err(error),
                    Mode::Lenient => {
                        trace.malformed.count += 1;
                        if trace.malformed.first.len() < KEEP_MALFORMED {
                            trace.malformed.first.push(error);
                        }
                    }
                }
            }
        }
    }
    if trace.records == 0 && trace.malformed.count == 0 {
        return Err(SwfError {
            source_name: source.to_string(),
            line: 0,
            kind: ErrorKind::Empty { lines: number },
        });
    }
    let mut queue_names = requests.queue_names;
    let names = if named.is_empty() {
        Default::default()
    } else {
        named.resolve(&mut jobs, &mut queue_names)
    };
    // The order of Workload::new: stable by submit time. Traces are almost always in submit
    // order already: then nothing moves and no sort buffer (half the jobs) is allocated.
    if !jobs.is_sorted_by_key(|job| job.submit) {
        let mut order: Vec<u32> = (0..jobs.len() as u32).collect();
        order.sort_by_key(|&i| jobs[i as usize].submit);
        permute(&mut jobs, &mut waits, order);
    }
    jobs.shrink_to_fit();
    waits.shrink_to_fit();
    trace.recorded_waits = waits;
    trace.workload = Workload {
        jobs,
        constraints: requests.constraints,
        requests: requests.requests.finish(),
        queue_names,
        names,
    };
    Ok(trace)
}

/// Puts `jobs[order[i]]` (and its wait) at position `i`, in place: a second vector of jobs would
/// double the peak memory of reading an unsorted trace.
fn permute(jobs: &mut [Job], waits: &mut [i64], mut order: Vec<u32>) {
    const DONE: u32 = u32::MAX;
    for start in 0..order.len() {
        // Follow the cycle through `start`: each swap puts one job where it belongs.
        let mut at = start;
        while order[at] != DONE {
            let from = order[at] as usize;
            order[at] = DONE;
            if from == start {
                break;
            }
            jobs.swap(at, from);
            waits.swap(at, from);
            at = from;
        }
    }
}

/// Extended fields kept per line (Alea and AleaNG use the 19th to 21st).
const EXTRA_FIELDS: usize = 3;

/// The fields of one job line, as read.
struct RawJob<'a> {
    id: i64,
    submit: i64,
    wait: i64,
    runtime: i64,
    allocated_procs: i64,
    requested_procs: i64,
    requested_time: i64,
    requested_memory: i64,
    used_memory: i64,
    /// Field 6 (average CPU time per processor), rounded; -1 when unknown or not a number.
    cpu_time: i64,
    user: i64,
    group: i64,
    queue: i64,
    partition: i64,
    /// Fields 19 to 21, when present (`extra_count` of them).
    extra: [&'a [u8]; EXTRA_FIELDS],
    extra_count: usize,
    /// Names given in the user, group and queue fields (their values then read -1).
    names: [Option<&'a [u8]>; 3],
}

/// Fields the simulator uses must be integers; the others need only be numeric. Field 14
/// (executable) is an application number, numeric as well.
const INTEGER_FIELDS: [bool; FIELD_COUNT] = [
    true, true, false, true, true, false, false, true, true, false, false, true, true, false, true,
    true, false, false,
];

/// The largest time (submit, run or requested) accepted, in seconds.
const MAX_SECONDS: i64 = 1_000_000_000_000;

fn parse_job(text: &[u8]) -> Result<RawJob<'_>, ErrorKind> {
    let mut fields: [&[u8]; FIELD_COUNT] = [&[]; FIELD_COUNT];
    let mut extra: [&[u8]; EXTRA_FIELDS] = [&[]; EXTRA_FIELDS];
    let mut values = [0i64; FIELD_COUNT];
    let mut found = 0;
    for token in text
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
    {
        if found < FIELD_COUNT {
            fields[found] = token;
        } else if found < FIELD_COUNT + EXTRA_FIELDS {
            // Extended SWF (Alea, AleaNG): read by `request`, beyond the third ignored.
            extra[found - FIELD_COUNT] = token;
        } else {
            break;
        }
        found += 1;
    }
    if found < FIELD_COUNT {
        return Err(ErrorKind::TooFewFields { found });
    }
    let mut names: [Option<&[u8]>; 3] = [None; 3];
    for (i, token) in fields.iter().enumerate() {
        if INTEGER_FIELDS[i] {
            values[i] = match (parse_int(token), named_slot(i)) {
                (Some(v), _) => v,
                // A user, group or queue *name* (not a number): mapped to an id later.
                (None, Some(slot)) if !is_number(token) => {
                    names[slot] = Some(token);
                    -1
                }
                (None, Some(_)) => return Err(bad(i, "an integer or a name", token)),
                (None, None) => return Err(bad(i, "an integer", token)),
            };
            // Times beyond ~31,700 years would overflow simulated time arithmetic.
            if matches!(i, 1 | 3 | 8) && values[i] > MAX_SECONDS {
                return Err(bad(i, "at most 10^12 seconds", token));
            }
            if matches!(i, 4 | 7) && values[i] > i64::from(u32::MAX) {
                return Err(bad(i, "at most 4294967295 processors", token));
            }
        } else if parse_int(token).is_none() && !is_number(token) {
            return Err(bad(i, "a number", token));
        }
    }
    let memory = parse_int(fields[9]).unwrap_or(-1);
    Ok(RawJob {
        used_memory: parse_int(fields[6]).unwrap_or(-1),
        cpu_time: parse_cpu_time(fields[5]),
        extra,
        extra_count: found.saturating_sub(FIELD_COUNT),
        names,
        id: values[0],
        submit: values[1],
        // Not used by the simulator, so a non-integer wait is merely unknown.
        wait: parse_int(fields[2]).unwrap_or(-1),
        runtime: values[3],
        allocated_procs: values[4],
        requested_procs: values[7],
        requested_time: values[8],
        requested_memory: memory,
        user: values[11],
        group: values[12],
        queue: values[14],
        partition: values[15],
    })
}

fn bad(index: usize, expected: &'static str, token: &[u8]) -> ErrorKind {
    ErrorKind::BadField {
        field: index + 1,
        expected,
        found: String::from_utf8_lossy(token).into_owned(),
    }
}

/// Applies the SWF rules and counts anomalies; `None` for a job that cannot be simulated.
fn classify(raw: &RawJob<'_>, anomalies: &mut Anomalies) -> Option<Job> {
    if raw.submit < 0 {
        anomalies.unknown_submit += 1;
        return None;
    }
    if raw.runtime < 0 {
        anomalies.unknown_runtime += 1;
        return None;
    }
    if raw.runtime == 0 {
        anomalies.zero_runtime += 1;
        return None;
    }
    let procs = if raw.requested_procs > 0 {
        raw.requested_procs
    } else {
        raw.allocated_procs
    };
    if procs <= 0 {
        anomalies.unknown_procs += 1;
        return None;
    }
    let requested_time = if raw.requested_time > 0 {
        if raw.runtime > raw.requested_time {
            anomalies.runtime_exceeds_request += 1;
        }
        raw.requested_time
    } else {
        anomalies.missing_request += 1;
        raw.runtime
    };
    let small = |v: i64| i32::try_from(v).unwrap_or(-1);
    Some(Job {
        id: raw.id.max(0) as u64,
        submit: raw.submit,
        runtime: raw.runtime,
        requested_time,
        procs: u32::try_from(procs).unwrap_or(u32::MAX),
        cpu_time: raw.cpu_time,
        user: small(raw.user),
        group: small(raw.group),
        queue: small(raw.queue),
        partition: small(raw.partition),
        // Set with the memory fields by `request::RequestBuilder`, as the reading options say.
        request: Default::default(),
    })
}

/// SWF field 6 may be fractional (an average): rounded to whole seconds; -1 when unknown.
fn parse_cpu_time(token: &[u8]) -> i64 {
    if let Some(v) = parse_int(token) {
        return if v >= 0 { v } else { -1 };
    }
    std::str::from_utf8(token)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15)
        .map_or(-1, |v| v.round() as i64)
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &line[start..end]
}

impl Mode {
    pub fn from_lenient(lenient: bool) -> Mode {
        if lenient { Mode::Lenient } else { Mode::Strict }
    }
}

/// Reads SWF bytes held in memory, as the SWF standard says.
pub fn read_bytes(bytes: &[u8], source: &str, mode: Mode) -> Result<Trace, SwfError> {
    read_bytes_with(bytes, source, mode, &ReadOptions::default())
}

/// Reads SWF bytes held in memory with explicit [`ReadOptions`].
pub fn read_bytes_with(
    bytes: &[u8],
    source: &str,
    mode: Mode,
    options: &ReadOptions,
) -> Result<Trace, SwfError> {
    read(BufReader::new(bytes), source, mode, options)
}
