//! Slurm's own ways of writing values, as `sacct --parsable2` prints them (docs/sources.md,
//! "Slurm accounting"): durations `[D-]HH:MM:SS`, job ids of steps, arrays and heterogeneous
//! jobs, states with a note (`CANCELLED by 0`), memory with a unit and an old per-CPU or
//! per-node suffix (`4000Mc`, `16Gn`), and TRES lists (`cpu=4,mem=8G,gres/gpu:v100=2`).
//!
//! Pure functions of one cell's text; the table reader decides what a value means for a job.

use super::mapping::Per;

/// A duration as Slurm writes it: `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`,
/// each part a whole number, with an optional `.fraction` of a second. `None` for anything
/// else (numbers without a colon or a dash are the caller's, in the column's unit).
pub fn parse_clock(text: &str) -> Option<f64> {
    let t = text.trim();
    let (days, rest) = match t.split_once('-') {
        Some((d, rest)) => (Some(whole(d)?), rest),
        None => (None, t),
    };
    let (rest, frac) = match rest.split_once('.') {
        Some((r, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            (r, format!("0.{f}").parse::<f64>().ok()?)
        }
        Some(_) => return None,
        None => (rest, 0.0),
    };
    let parts: Vec<u64> = rest.split(':').map(whole).collect::<Option<_>>()?;
    let secs = match (days, parts.as_slice()) {
        // Without days, two parts are minutes and seconds; with days, hours and minutes.
        (None, [m, s]) if *s < 60 => m * 60 + s,
        (None, [h, m, s]) if *m < 60 && *s < 60 => h * 3600 + m * 60 + s,
        (Some(d), [h]) if *h < 24 => d * 86_400 + h * 3600,
        (Some(d), [h, m]) if *h < 24 && *m < 60 => d * 86_400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) if *h < 24 && *m < 60 && *s < 60 => d * 86_400 + h * 3600 + m * 60 + s,
        _ => return None,
    };
    Some(secs as f64 + frac)
}

fn whole(s: &str) -> Option<u64> {
    (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// What a sacct job id names.
#[derive(Debug, PartialEq, Eq)]
pub enum JobId {
    /// A job (or an array task, or a heterogeneous component) with a plain number: `123`
    /// (as `JobIDRaw` prints every allocation).
    Number(u64),
    /// An allocation written with its array task or heterogeneous offset (`123_4`, `123+1`,
    /// `123_[5-9]` for array tasks not yet started), as `JobID` prints them: no number of
    /// its own.
    Named,
    /// A step of a job (`123.batch`, `123.extern`, `123.0`, `123_4.0`, `123+1.0`): not an
    /// allocation; its job's row holds the allocation.
    Step,
}

/// Classifies a job id cell.
pub fn job_id(text: &str) -> Option<JobId> {
    let t = text.trim();
    if t.contains('.') {
        return Some(JobId::Step);
    }
    if let Some(n) = whole(t) {
        return Some(JobId::Number(n));
    }
    let base = t.split(['_', '+']).next()?;
    (whole(base).is_some() && t.len() > base.len()).then_some(JobId::Named)
}

/// A job state without its note: `CANCELLED by 0` is `CANCELLED`, a width-cut `CANCELLED+`
/// too.
pub fn state(text: &str) -> &str {
    let first = text.split_whitespace().next().unwrap_or("");
    first.trim_end_matches('+')
}

/// An amount of memory as Slurm writes it, in KB: a number with an optional unit letter
/// (`K`, `M`, `G`, `T`, `P`; none is megabytes, Slurm's default unit) and, before Slurm
/// 21.08, a suffix `c` (per CPU) or `n` (per node). Returns the KB and the suffix's scope.
pub fn parse_memory(text: &str) -> Option<(f64, Option<Per>)> {
    let mut t = text.trim();
    let mut per = None;
    if let Some(rest) = t.strip_suffix(['c', 'C']) {
        per = Some(Per::Core);
        t = rest;
    } else if let Some(rest) = t.strip_suffix(['n', 'N']) {
        per = Some(Per::Node);
        t = rest;
    }
    let (number, factor) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 1.0),
        b'M' | b'm' => (&t[..t.len() - 1], 1024.0),
        b'G' | b'g' => (&t[..t.len() - 1], 1024.0 * 1024.0),
        b'T' | b't' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
        b'P' | b'p' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => (t, 1024.0),
    };
    let v: f64 = number.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some((v * factor, per))
}

/// Whether a cell is a TRES list (`cpu=4,mem=8G,node=1`) rather than a plain value.
pub fn is_tres(text: &str) -> bool {
    text.contains('=')
}

/// The TRES entries of a list: `(name, value)`, such as `("gres/gpu:v100", "2")`.
fn tres_entries(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split(',')
        .filter_map(|e| e.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
}

/// The value of TRES `name` in a list (`cpu`, `node`, `mem`), if listed.
pub fn tres<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    tres_entries(text).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// The GPUs of a TRES list: `gres/gpu` when listed, else the sum over its types
/// (`gres/gpu:v100`), else 0. Slurm lists the total and each type's count; the total is not
/// added to them.
pub fn tres_gpus(text: &str) -> Option<f64> {
    if let Some(v) = tres(text, "gres/gpu") {
        return v.parse().ok();
    }
    let mut sum = 0.0;
    for (k, v) in tres_entries(text) {
        if k.starts_with("gres/gpu:") {
            sum += v.parse::<f64>().ok()?;
        }
    }
    Some(sum)
}

/// The GPU type of a TRES list: the first `gres/gpu:TYPE`'s TYPE.
pub fn tres_gpu_type(text: &str) -> Option<&str> {
    tres_entries(text)
        .find_map(|(k, _)| k.strip_prefix("gres/gpu:"))
        .filter(|t| !t.is_empty())
}

/// Whether a time cell says "no time": Slurm writes `Unknown` for an end not yet reached and
/// `None` (or `Unknown`) for a start that never came.
pub fn is_no_time(text: &str) -> bool {
    let t = text.trim();
    t.eq_ignore_ascii_case("unknown") || t.eq_ignore_ascii_case("none")
}
