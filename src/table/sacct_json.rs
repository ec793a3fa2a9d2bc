//! Slurm accounting as `sacct --json` prints it (Slurm 21.08 and later; docs/sources.md,
//! "`sacct --json`"): a document `{"jobs": [...]}` of one object per allocation (job, array
//! task or heterogeneous component) with its steps nested in `steps`, times in epoch seconds,
//! the time limit in minutes, and TRES as lists of `{type, name, count}`.
//!
//! Each job becomes the row the shipped mapping `slurm` reads from `sacct --parsable2`, under
//! the same column names ([`COLUMNS`]), so both forms go through one reader with one set of
//! rules (steps counted, jobs that never started counted, TRES giving GPUs and their type) and
//! give the same jobs. The fields read, as Slurm's own description of the output names them
//! (the `openapi/dbv0.0.38` plugin of Slurm 22.05, whose `sacct --json` the local test cluster
//! runs, and the `data_parser` plugins of 23.02 and later):
//!
//! | JSON | column |
//! |---|---|
//! | `job_id` | `JobIDRaw` |
//! | `time.submission`, `time.start`, `time.end` (0: none) | `Submit`, `Start`, `End` |
//! | `time.limit` (minutes; `null` or `{"infinite": true}`: none) | `Timelimit` |
//! | `tres.allocated` `cpu`, else `required.CPUs` | `AllocCPUS` |
//! | `allocation_nodes`, else `tres.allocated` `node` | `NNodes` |
//! | `tres.requested` `mem` (MB, the job's total) | `ReqMem` |
//! | `tres.allocated` as `type[/name]=count` | `AllocTRES` |
//! | `user`, `account`, `partition` | `User`, `Account`, `Partition` |
//! | `state.current` (a string; a list from 23.11: its first) | `State` |
//! | `steps` (each one counted as a step row) | — |
//!
//! Numbers may be plain or, from Slurm 23.02, `{"set": …, "infinite": …, "number": …}`.
//! Errors name the file, the line and column of the value and its path (`jobs[3].time.start`).
//!
//! The document is read one job at a time ([`stream`]), so a dump of millions of jobs needs the
//! memory of one; a document with anything amiss is read again whole ([`Document`]), which
//! locates the problem in the text.

use std::path::Path;

use serde_json::Value;

use super::cells::Cell;
use crate::batsim::locate::{Seg, Shown, line_column, locate, syntax};
use crate::swf::{ErrorKind, JsonValueError, SwfError};

/// The `sacct --parsable2` columns a JSON job gives, in the order of [`JobRow::cells`].
pub const COLUMNS: [&str; 13] = [
    "JobIDRaw",
    "Submit",
    "Start",
    "End",
    "Timelimit",
    "AllocCPUS",
    "NNodes",
    "ReqMem",
    "AllocTRES",
    "User",
    "Account",
    "Partition",
    "State",
];

/// A cell of a JSON job, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Owned {
    Null,
    Num(f64),
    Text(String),
}

impl Owned {
    pub fn cell(&self) -> Cell<'_> {
        match self {
            Owned::Null => Cell::Null,
            Owned::Num(v) => Cell::Num(*v),
            Owned::Text(t) => Cell::Text(t),
        }
    }
}

/// One job of the document as the row `sacct --parsable2` would print for it.
#[derive(Debug)]
pub struct JobRow {
    /// By [`COLUMNS`].
    pub cells: Vec<Owned>,
    /// Its steps (rows of their own in `--parsable2`, counted as such).
    pub steps: u64,
}

/// Whether the file at `path` is `sacct --json` output rather than `--parsable2` text: its name
/// ends in `.json` (or `.json.gz`), or its first byte past white space is `{`.
pub fn is_json(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        return true;
    }
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let text = head[..n]
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&head[..n]);
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// A parsed `sacct --json` document.
pub struct Document<'a> {
    text: &'a [u8],
    source: &'a str,
    jobs: Vec<Value>,
}

impl<'a> Document<'a> {
    /// Parses `text`: a JSON object whose `jobs` is an array.
    pub fn parse(text: &'a [u8], source: &'a str) -> Result<Document<'a>, SwfError> {
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        let doc: Value = serde_json::from_slice(text).map_err(|e| {
            let (line, column, message) = syntax(&e);
            SwfError {
                source_name: source.to_string(),
                line,
                kind: ErrorKind::Json(Box::new(JsonValueError {
                    path: "the document".into(),
                    column,
                    expected: "`sacct --json` output (a JSON object with `jobs`)".into(),
                    found: format!("not valid JSON: {message}"),
                    job: false,
                    hint: None,
                })),
            }
        })?;
        let mut root = match doc {
            Value::Object(root) => root,
            other => {
                return Err(error(
                    text,
                    source,
                    &[],
                    "`sacct --json` output: a JSON object with `jobs`",
                    shown(Some(&other)),
                    false,
                ));
            }
        };
        let jobs = match root.remove("jobs") {
            Some(Value::Array(jobs)) => jobs,
            other => {
                return Err(error(
                    text,
                    source,
                    &[Seg::Key("jobs")],
                    "an array of jobs",
                    shown(other.as_ref()),
                    false,
                ));
            }
        };
        Ok(Document { text, source, jobs })
    }

    /// The number of jobs.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Job `i` as its `--parsable2` row; a value of the wrong kind is a located error (skipping
    /// the job gets past it).
    pub fn job(&self, i: usize) -> Result<JobRow, SwfError> {
        job_row(&self.jobs[i], i, self.text, self.source)
    }
}

/// Job `i` of a document as its `--parsable2` row; an error is located in `text`.
fn job_row(job: &Value, i: usize, doc_text: &[u8], source: &str) -> Result<JobRow, SwfError> {
    let err = |path: &[Seg<'_>], expected: &str, found: Option<&Value>| {
        let mut full = vec![Seg::Key("jobs"), Seg::Index(i)];
        full.extend_from_slice(path);
        error(doc_text, source, &full, expected, shown(found), true)
    };
    if !job.is_object() {
        return Err(err(&[], "a job: a JSON object", Some(job)));
    }
    let at = |path: &[&str]| value_at(job, path);
    let segs = |path: &'static [&'static str]| -> Vec<Seg<'static>> {
        path.iter().map(|k| Seg::Key(k)).collect()
    };
    // A number, plain or Slurm 23.02's `{set, infinite, number}`; `None` when absent, null,
    // not set or infinite.
    let number = |path: &'static [&'static str], what: &str| -> Result<Option<f64>, SwfError> {
        let Some(v) = at(path) else { return Ok(None) };
        match v {
            Value::Number(n) => n
                .as_f64()
                .map(Some)
                .ok_or_else(|| err(&segs(path), what, Some(v))),
            Value::Object(o) if o.contains_key("number") || o.contains_key("set") => {
                let set = o.get("set").and_then(Value::as_bool).unwrap_or(true);
                let infinite = o.get("infinite").and_then(Value::as_bool).unwrap_or(false);
                if !set || infinite {
                    return Ok(None);
                }
                match o.get("number") {
                    Some(Value::Number(n)) => Ok(n.as_f64()),
                    other => Err(err(&segs(path), what, other)),
                }
            }
            other => Err(err(&segs(path), what, Some(other))),
        }
    };
    let text = |path: &'static [&'static str]| -> Result<Owned, SwfError> {
        match at(path) {
            None => Ok(Owned::Null),
            Some(Value::String(s)) if s.is_empty() => Ok(Owned::Null),
            Some(Value::String(s)) => Ok(Owned::Text(s.clone())),
            Some(other) => Err(err(&segs(path), "a string", Some(other))),
        }
    };
    let whole = "a whole number ≥ 0";
    let id = match number(&["job_id"], whole)? {
        Some(v) if v >= 0.0 && v.fract() == 0.0 => Owned::Num(v),
        _ => {
            return Err(err(
                &[Seg::Key("job_id")],
                "the job id: a whole number",
                at(&["job_id"]),
            ));
        }
    };
    if at(&["time"]).is_none_or(|t| !t.is_object()) {
        return Err(err(
            &[Seg::Key("time")],
            "the job's times: an object with `submission`, `start`, `end` and `limit`",
            at(&["time"]),
        ));
    }
    let epoch = "epoch seconds (0: none)";
    // Slurm writes 0 for a time that has not come (a pending job's start and end).
    let instant = |path: &'static [&'static str]| -> Result<Owned, SwfError> {
        Ok(match number(path, epoch)? {
            Some(v) if v > 0.0 => Owned::Num(v),
            Some(v) if v < 0.0 => return Err(err(&segs(path), epoch, at(path))),
            _ => Owned::Null,
        })
    };
    let limit_path = &["time", "limit"];
    let limit = match number(limit_path, "minutes ≥ 0, or null for none")? {
        Some(m) if m < 0.0 => {
            return Err(err(&segs(limit_path), "minutes ≥ 0", at(limit_path)));
        }
        // Slurm's INFINITE and NO_VAL in 32 bits (UNLIMITED, Partition_Limit).
        Some(m) if m >= f64::from(u32::MAX - 1) => Owned::Text("UNLIMITED".into()),
        Some(m) => Owned::Num(m * 60.0),
        None => Owned::Text("UNLIMITED".into()),
    };
    let allocated = tres_list(at(&["tres", "allocated"])).ok_or_else(|| {
        err(
            &segs(&["tres", "allocated"]),
            TRES,
            at(&["tres", "allocated"]),
        )
    })?;
    let requested = tres_list(at(&["tres", "requested"])).ok_or_else(|| {
        err(
            &segs(&["tres", "requested"]),
            TRES,
            at(&["tres", "requested"]),
        )
    })?;
    let tres_count =
        |list: &[(String, f64)], key: &str| list.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let cpus = match tres_count(&allocated, "cpu") {
        Some(c) => Some(c),
        None => number(&["required", "CPUs"], whole)?,
    };
    let nodes = match number(&["allocation_nodes"], whole)? {
        Some(n) if n > 0.0 => Some(n),
        _ => tres_count(&allocated, "node"),
    };
    let memory = tres_count(&requested, "mem").map(|mb| Owned::Text(format!("{mb}M")));
    let alloc_tres = if allocated.is_empty() {
        Owned::Null
    } else {
        Owned::Text(
            allocated
                .iter()
                .map(|(k, v)| {
                    if k == "mem" {
                        format!("{k}={v}M")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
        )
    };
    let state = match at(&["state", "current"]) {
        Some(Value::String(s)) => Owned::Text(s.clone()),
        // From Slurm 23.11 a list: the state, then flags.
        Some(Value::Array(a)) if a.first().is_some_and(Value::is_string) => {
            Owned::Text(a[0].as_str().unwrap_or_default().to_string())
        }
        other => {
            return Err(err(
                &segs(&["state", "current"]),
                "the job's state: a string such as \"COMPLETED\" (or a list of them)",
                other,
            ));
        }
    };
    let steps = match at(&["steps"]) {
        None => 0,
        Some(Value::Array(s)) => s.len() as u64,
        Some(other) => return Err(err(&[Seg::Key("steps")], "an array of steps", Some(other))),
    };
    let num = |v: Option<f64>| v.map_or(Owned::Null, Owned::Num);
    Ok(JobRow {
        cells: vec![
            id,
            instant(&["time", "submission"])?,
            instant(&["time", "start"])?,
            instant(&["time", "end"])?,
            limit,
            num(cpus),
            num(nodes),
            memory.unwrap_or(Owned::Null),
            alloc_tres,
            text(&["user"])?,
            text(&["account"])?,
            text(&["partition"])?,
            state,
        ],
        steps,
    })
}

/// The value at `path` (keys) in `job`; `None` when absent or null.
fn value_at<'v>(job: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter()
        .try_fold(job, |v, k| v.get(*k))
        .filter(|v| !v.is_null())
}

const TRES: &str = "a list of TRES: objects with `type`, `name` and `count`";

/// A TRES list as `(key, count)`: the key `type` or `type/name` (`gres/gpu:v100`), entries
/// without a count left out; `None` when it is not such a list. Absent: empty.
fn tres_list(value: Option<&Value>) -> Option<Vec<(String, f64)>> {
    let Some(value) = value else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    for entry in value.as_array()? {
        let kind = entry.get("type")?.as_str()?;
        let Some(count) = entry.get("count").filter(|c| !c.is_null()) else {
            continue;
        };
        let count = count.as_f64().filter(|c| *c >= 0.0)?;
        let key = match entry.get("name") {
            Some(Value::String(n)) if !n.is_empty() => format!("{kind}/{n}"),
            None | Some(Value::Null) | Some(Value::String(_)) => kind.to_string(),
            Some(_) => return None,
        };
        out.push((key, count));
    }
    Some(out)
}

/// A value as an error shows it, shortened.
fn shown(value: Option<&Value>) -> String {
    match value {
        None => "nothing (no such key)".into(),
        Some(v) => {
            let t = v.to_string();
            if t.chars().count() > 60 {
                format!("{}…", t.chars().take(60).collect::<String>())
            } else {
                t
            }
        }
    }
}

fn error(
    text: &[u8],
    source: &str,
    path: &[Seg<'_>],
    expected: &str,
    found: String,
    job: bool,
) -> SwfError {
    let (line, column) = line_column(text, locate(text, path));
    SwfError {
        source_name: source.to_string(),
        line,
        kind: ErrorKind::Json(Box::new(JsonValueError {
            path: Shown(path).to_string(),
            column,
            expected: expected.to_string(),
            found,
            job,
            hint: None,
        })),
    }
}

/// The bytes of the file at `path`, gunzipped when compressed.
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::MultiGzDecoder::new(bytes.as_slice()),
            &mut plain,
        )?;
        return Ok(plain);
    }
    Ok(bytes)
}

/// Reads the `sacct --json` document at `path` one job at a time, handing each job's row to
/// `each` in the document's order, without holding the document: memory is that of one job,
/// whatever the dump's size. True when the whole document was read and every job given.
///
/// False when anything is amiss — the file cannot be read, text that is not JSON, no `jobs`
/// array (or two), a job that does not convert, or `each` failed: nothing is located here, and
/// the caller reads the document whole ([`Document`]), which says where, in the order the
/// whole reading finds it (a syntax error anywhere before any job's error).
pub fn stream(path: &Path, each: &mut dyn FnMut(JobRow) -> Result<(), SwfError>) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    let gzip = input
        .fill_buf()
        .is_ok_and(|head| head.starts_with(&[0x1f, 0x8b]));
    // Each reader its own type: serde_json reads byte by byte, which a `dyn` reader would make
    // a call through a pointer each.
    if gzip {
        let plain =
            std::io::BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(input));
        stream_from(plain, each)
    } else {
        stream_from(input, each)
    }
}

/// [`stream`] from a buffered reader of the document's text.
fn stream_from<R: std::io::BufRead>(
    mut input: R,
    each: &mut dyn FnMut(JobRow) -> Result<(), SwfError>,
) -> bool {
    if input
        .fill_buf()
        .is_ok_and(|head| head.starts_with(b"\xEF\xBB\xBF"))
    {
        input.consume(3);
    }
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut root = Root { each, jobs: 0 };
    serde::de::DeserializeSeed::deserialize(&mut root, &mut de).is_ok()
        && de.end().is_ok()
        && root.jobs == 1
}

/// The document's top level: `jobs` streamed, every other key skipped unread.
struct Root<'a> {
    each: &'a mut dyn FnMut(JobRow) -> Result<(), SwfError>,
    /// `jobs` arrays met (a document with two is read whole: the last one counts there).
    jobs: u32,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Root<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Root<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object with `jobs`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "jobs" && self.jobs == 0 {
                self.jobs += 1;
                map.next_value_seed(Jobs {
                    each: &mut *self.each,
                })?;
            } else if key == "jobs" {
                return Err(serde::de::Error::custom("two `jobs`"));
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `jobs` array, one job in memory at a time.
struct Jobs<'a> {
    each: &'a mut dyn FnMut(JobRow) -> Result<(), SwfError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Jobs<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Jobs<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of jobs")
    }

    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        let mut i = 0;
        while let Some(job) = seq.next_element::<Value>()? {
            // No text to locate an error in: the caller reads the document again for that.
            let row = job_row(&job, i, b"", "").map_err(|_| {
                <S::Error as serde::de::Error>::custom("a job that does not convert")
            })?;
            (self.each)(row)
                .map_err(|_| <S::Error as serde::de::Error>::custom("a row that does not read"))?;
            i += 1;
        }
        Ok(())
    }
}
