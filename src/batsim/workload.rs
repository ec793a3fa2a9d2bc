//! A Batsim JSON workload read as a trace (docs/sources.md, "Batsim workloads"): each job's
//! `id`, `subtime`, `res`, `walltime` and the `delay` of its profile become an SWF-like job;
//! `nb_res` is the machine size. The SWF reader's rules and anomaly counts apply (a zero
//! delay is skipped as a zero run time, a missing walltime is the run time), so a Batsim
//! workload and the same jobs in SWF give the same workload.
//!
//! A profile of another type (`parallel_homogeneous`, `smpi`, …) has no run time without a
//! platform to run it on: strict reading fails on the first such job, naming the file, line,
//! column and JSON path; lenient reading skips it and counts it as malformed, as SWF lines are.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::locate::{Seg, Shown, line_column, locate};
use crate::sim::{Job, Workload};
use crate::swf::{Anomalies, ErrorKind, Header, JsonValueError, Malformed, Mode, SwfError, Trace};

/// The largest time accepted, in seconds (as the SWF reader's).
const MAX_SECONDS: f64 = 1e12;
/// The largest machine accepted (`nb_res`), as SWF's `MaxProcs`.
const MAX_RESOURCES: u64 = 100_000_000;
/// Malformed jobs whose messages are kept in lenient mode.
const KEEP_MALFORMED: usize = 5;

/// Reads the Batsim workload at `path` (plain or gzip, sniffed from the magic bytes).
pub fn read_path(path: &Path, mode: Mode) -> Result<Trace, SwfError> {
    let source = path.display().to_string();
    let io_err = |e| SwfError {
        source_name: source.clone(),
        line: 0,
        kind: ErrorKind::Io(e),
    };
    let mut bytes = std::fs::read(path).map_err(io_err)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut plain)
            .map_err(io_err)?;
        bytes = plain;
    }
    read_bytes(&bytes, &source, mode)
}

/// Reads a Batsim workload held in memory; `source` names it in errors.
pub fn read_bytes(bytes: &[u8], source: &str, mode: Mode) -> Result<Trace, SwfError> {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let doc: Value = serde_json::from_slice(text).map_err(|e| {
        let (line, column, message) = super::locate::syntax(&e);
        SwfError {
            source_name: source.to_string(),
            line,
            kind: ErrorKind::JsonSyntax { column, message },
        }
    })?;
    Reader { text, source, mode }.read(&doc)
}

struct Reader<'a> {
    text: &'a [u8],
    source: &'a str,
    mode: Mode,
}

/// A value as an error shows it: compact JSON, shortened.
fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "nothing (no such key)".to_string();
    };
    let text = value.to_string();
    if text.chars().count() > 60 {
        let head: String = text.chars().take(57).collect();
        format!("{head}…")
    } else {
        text
    }
}

/// What reading one job gave.
enum Outcome {
    Kept(Job),
    /// Left out and counted by reason in the anomalies (a zero delay).
    Skipped,
}

/// A number that must be a time: finite, 0 to [`MAX_SECONDS`].
fn time(value: Option<&Value>) -> Option<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite() && (0.0..=MAX_SECONDS).contains(v))
}

/// A number that must be a whole count (`4` or `4.0`).
fn whole(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|v| v.fract() == 0.0 && *v >= 0.0 && *v < 1.8e19)
            .map(|v| v as u64)
    })
}

/// An identifier: a whole number, or a string of digits (Batsim's ids are strings).
fn number_or_digits(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()
        }
        other => whole(Some(other)),
    }
}

impl Reader<'_> {
    fn error(
        &self,
        path: &[Seg<'_>],
        expected: impl Into<String>,
        found: String,
        job: bool,
    ) -> SwfError {
        let (line, column) = line_column(self.text, locate(self.text, path));
        SwfError {
            source_name: self.source.to_string(),
            line,
            kind: ErrorKind::Json(Box::new(JsonValueError {
                path: Shown(path).to_string(),
                column,
                expected: expected.into(),
                found,
                job,
                hint: None,
            })),
        }
    }

    fn read(&self, doc: &Value) -> Result<Trace, SwfError> {
        let Some(root) = doc.as_object() else {
            return Err(self.error(
                &[],
                "a JSON object with `jobs` and `profiles`",
                shown(Some(doc)),
                false,
            ));
        };
        let jobs = match root.get("jobs") {
            Some(Value::Array(jobs)) => jobs,
            other => {
                return Err(self.error(
                    &[Seg::Key("jobs")],
                    "an array of jobs",
                    shown(other),
                    false,
                ));
            }
        };
        let empty = Map::new();
        let profiles = match root.get("profiles") {
            Some(Value::Object(p)) => p,
            None => &empty,
            other => {
                return Err(self.error(
                    &[Seg::Key("profiles")],
                    "an object of profiles by name",
                    shown(other),
                    false,
                ));
            }
        };
        let mut header = Header::default();
        match root.get("nb_res") {
            None | Some(Value::Null) => {}
            Some(v) => match whole(Some(v)).filter(|n| (1..=MAX_RESOURCES).contains(n)) {
                Some(n) => header.max_procs = Some(n as u32),
                None => {
                    return Err(self.error(
                        &[Seg::Key("nb_res")],
                        "a number of resources from 1 to 100000000",
                        shown(Some(v)),
                        false,
                    ));
                }
            },
        }
        if let Some(Value::String(d)) = root.get("description") {
            header.notes.push(d.clone());
        }

        let mut trace = Trace {
            source: self.source.to_string(),
            header,
            workload: Workload::default(),
            recorded_waits: Vec::new(),
            records: 0,
            anomalies: Anomalies::default(),
            malformed: Malformed::default(),
        };
        // Each profile's run time, worked out once however many jobs share it.
        let mut delays: HashMap<&str, Result<f64, SwfError>> = HashMap::new();
        let mut kept = Vec::with_capacity(jobs.len());
        let mut previous_submit = i64::MIN;
        for (i, value) in jobs.iter().enumerate() {
            match self.job(i, value, profiles, &mut delays, &mut trace.anomalies) {
                Ok(read) => {
                    trace.records += 1;
                    if let Outcome::Kept(job) = read {
                        if job.submit < previous_submit {
                            trace.anomalies.out_of_order += 1;
                        }
                        previous_submit = job.submit;
                        kept.push(job);
                    }
                }
                Err(e) if self.mode == Mode::Lenient && e.is_malformed_line() => {
                    trace.malformed.count += 1;
                    if trace.malformed.first.len() < KEEP_MALFORMED {
                        trace.malformed.first.push(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        if kept.is_empty() {
            let found = if jobs.is_empty() {
                "an empty array".to_string()
            } else {
                format!(
                    "{} jobs, none that can run ({} skipped, {} malformed)",
                    jobs.len(),
                    trace.anomalies.skipped(),
                    trace.malformed.count
                )
            };
            let mut error = self.error(&[Seg::Key("jobs")], "at least one job", found, false);
            if let ErrorKind::Json(e) = &mut error.kind {
                e.hint = Some(
                    "a source that yields no job is an error: is this the workload you meant?",
                );
            }
            return Err(error);
        }
        trace.recorded_waits = vec![-1; kept.len()];
        trace.workload = Workload::new(kept);
        Ok(trace)
    }

    /// Job `i` of the `jobs` array.
    fn job<'p>(
        &self,
        i: usize,
        value: &Value,
        profiles: &'p Map<String, Value>,
        delays: &mut HashMap<&'p str, Result<f64, SwfError>>,
        anomalies: &mut Anomalies,
    ) -> Result<Outcome, SwfError> {
        let at = |key| [Seg::Key("jobs"), Seg::Index(i), Seg::Key(key)];
        let Some(job) = value.as_object() else {
            return Err(self.error(
                &[Seg::Key("jobs"), Seg::Index(i)],
                "a job object",
                shown(Some(value)),
                true,
            ));
        };
        let id = number_or_digits(job.get("id")).ok_or_else(|| {
            self.error(
                &at("id"),
                "a job number (a whole number, or a string of digits)",
                shown(job.get("id")),
                true,
            )
        })?;
        let subtime = time(job.get("subtime")).ok_or_else(|| {
            self.error(
                &at("subtime"),
                "a submission time in seconds, 0 to 10^12",
                shown(job.get("subtime")),
                true,
            )
        })?;
        let res = whole(job.get("res"))
            .filter(|n| (1..=u64::from(u32::MAX)).contains(n))
            .ok_or_else(|| {
                self.error(
                    &at("res"),
                    "a positive whole number of resources",
                    shown(job.get("res")),
                    true,
                )
            })?;
        let walltime = match job.get("walltime") {
            None | Some(Value::Null) => None,
            Some(v) if v.as_f64() == Some(-1.0) => None,
            Some(v) => Some(time(Some(v)).filter(|w| *w > 0.0).ok_or_else(|| {
                self.error(
                    &at("walltime"),
                    "a positive number of seconds up to 10^12, or -1 (none)",
                    shown(Some(v)),
                    true,
                )
            })?),
        };
        let user = match job.get("user") {
            None | Some(Value::Null) => -1,
            Some(v) => number_or_digits(Some(v))
                .and_then(|u| i32::try_from(u).ok())
                .ok_or_else(|| {
                    self.error(
                        &at("user"),
                        "a user number (a whole number, or a string of digits)",
                        shown(Some(v)),
                        true,
                    )
                })?,
        };
        let Some((name, profile)) = job
            .get("profile")
            .and_then(Value::as_str)
            .and_then(|name| profiles.get_key_value(name))
        else {
            return Err(self.error(
                &at("profile"),
                "the name of a profile in `profiles`",
                shown(job.get("profile")),
                true,
            ));
        };
        let delay = match delays
            .entry(name.as_str())
            .or_insert_with(|| self.delay(name, profile))
        {
            Ok(d) => *d,
            Err(e) => return Err(self.for_job(e, i)),
        };

        let fractional = [Some(subtime), Some(delay), walltime]
            .into_iter()
            .flatten()
            .any(|t| t.fract() != 0.0);
        if fractional {
            anomalies.fractional_times += 1;
        }
        // Durations round up (a job never runs or asks for less than the file says, and a
        // positive delay never becomes 0); the submission time rounds to the nearest second.
        let runtime = delay.ceil() as i64;
        if runtime == 0 {
            anomalies.zero_runtime += 1;
            return Ok(Outcome::Skipped);
        }
        let requested_time = match walltime {
            Some(w) => {
                let w = w.ceil() as i64;
                if runtime > w {
                    anomalies.runtime_exceeds_request += 1;
                }
                w
            }
            None => {
                anomalies.missing_request += 1;
                runtime
            }
        };
        Ok(Outcome::Kept(Job {
            id,
            submit: subtime.round() as i64,
            runtime,
            requested_time,
            procs: res as u32,
            user,
            ..Job::default()
        }))
    }

    /// The run time a profile gives: its `delay` when it is a delay profile.
    fn delay(&self, name: &str, profile: &Value) -> Result<f64, SwfError> {
        let at = |key| [Seg::Key("profiles"), Seg::Key(name), Seg::Key(key)];
        let kind = profile.get("type");
        match kind.and_then(Value::as_str) {
            Some("delay") => time(profile.get("delay")).ok_or_else(|| {
                self.error(
                    &at("delay"),
                    "a delay in seconds, 0 to 10^12",
                    shown(profile.get("delay")),
                    true,
                )
            }),
            _ => {
                let mut error = self.error(
                    &at("type"),
                    "\"delay\" (the only profile type with a run time of its own)",
                    shown(kind),
                    true,
                );
                if let ErrorKind::Json(e) = &mut error.kind {
                    e.hint = Some(
                        "schedlab simulates no platform, so only `delay` profiles give a run time; \
                         read leniently (--lenient; `lenient: true` in a manifest) to skip the jobs \
                         of other profiles (counted as malformed)",
                    );
                }
                Err(error)
            }
        }
    }

    /// A profile's error, as the error of job `i` that uses it.
    fn for_job(&self, e: &SwfError, i: usize) -> SwfError {
        let ErrorKind::Json(json) = &e.kind else {
            unreachable!("profile errors are located JSON errors");
        };
        SwfError {
            source_name: e.source_name.clone(),
            line: e.line,
            kind: ErrorKind::Json(Box::new(JsonValueError {
                path: json.path.clone(),
                column: json.column,
                expected: json.expected.clone(),
                found: format!("{} (the profile of jobs[{i}])", json.found),
                job: json.job,
                hint: json.hint,
            })),
        }
    }
}
