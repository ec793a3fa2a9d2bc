//! Slurm's own ways of writing values, as `sacct --parsable2` prints them (docs/sources.md,
//! "Slurm accounting"): durations `[D-]HH:MM:SS`, job ids of steps, arrays and heterogeneous
//! jobs, states with a note (`CANCELLED by 0`), memory with a unit and an old per-CPU or
//! per-node suffix (`4000Mc`, `16Gn`), and TRES lists (`cpu=4,mem=8G,gres/gpu:v100=2`).
//!
//! Pure functions of one cell's text; the table reader decides what a value means for a job.

use super::cells::trim;
use super::mapping::Per;
use super::number::number;

/// A duration as Slurm writes it: `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`,
/// each part a whole number, with an optional `.fraction` of a second. `None` for anything
/// else (numbers without a colon or a dash are the caller's, in the column's unit).
pub fn parse_clock(text: &str) -> Option<f64> {
    let t = trim(text);
    let (days, rest) = match split_once(t, b'-') {
        Some((d, rest)) => (Some(whole(d)?), rest),
        None => (None, t),
    };
    let (rest, frac) = match split_once(rest, b'.') {
        Some((r, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            (r, format!("0.{f}").parse::<f64>().ok()?)
        }
        Some(_) => return None,
        None => (rest, 0.0),
    };
    // At most three parts, held in place: a million time limits cost no allocation.
    let mut parts = [0u64; 3];
    let mut n = 0;
    for part in split(rest, b':') {
        *parts.get_mut(n)? = whole(part)?;
        n += 1;
    }
    let secs = match (days, &parts[..n]) {
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

/// `text` split at the first ASCII `byte`, as `str::split_once` does: a plain loop over the
/// few bytes of a cell, with no searcher to set up (ASCII bytes never occur inside a UTF-8
/// character, so both sides are whole characters).
fn split_once(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == byte)?;
    Some((&text[..at], &text[at + 1..]))
}

/// `text`'s parts between ASCII `byte`s, as `str::split` gives them.
fn split(text: &str, byte: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        Some(match split_once(r, byte) {
            Some((part, after)) => {
                rest = Some(after);
                part
            }
            None => {
                rest = None;
                r
            }
        })
    })
}

/// Whether `text` holds the ASCII `byte`.
fn has(text: &str, byte: u8) -> bool {
    text.bytes().any(|b| b == byte)
}

/// A whole number of 1 to 12 digits (no sign): at most 10¹² − 1, well inside `u64`.
fn whole(s: &str) -> Option<u64> {
    (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.bytes().fold(0, |n, b| n * 10 + u64::from(b - b'0')))
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
    let t = trim(text);
    if has(t, b'.') {
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
    // Most states are one plain word (`COMPLETED`): nothing to cut.
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return text;
    }
    let first = text.split_whitespace().next().unwrap_or("");
    first.trim_end_matches('+')
}

/// An amount of memory as Slurm writes it, in KB: a number with an optional unit letter
/// (`K`, `M`, `G`, `T`, `P`; none is megabytes, Slurm's default unit) and, before Slurm
/// 21.08, a suffix `c` (per CPU) or `n` (per node). Returns the KB and the suffix's scope.
pub fn parse_memory(text: &str) -> Option<(f64, Option<Per>)> {
    let mut t = trim(text);
    let mut per = None;
    if let Some(rest) = t.strip_suffix(['c', 'C']) {
        per = Some(Per::Core);
        t = rest;
    } else if let Some(rest) = t.strip_suffix(['n', 'N']) {
        per = Some(Per::Node);
        t = rest;
    }
    let (digits, factor) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 1.0),
        b'M' | b'm' => (&t[..t.len() - 1], 1024.0),
        b'G' | b'g' => (&t[..t.len() - 1], 1024.0 * 1024.0),
        b'T' | b't' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
        b'P' | b'p' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => (t, 1024.0),
    };
    let v = number(digits)?;
    (v.is_finite() && v >= 0.0).then_some((v * factor, per))
}

/// Whether a cell is a TRES list (`cpu=4,mem=8G,node=1`) rather than a plain value.
pub fn is_tres(text: &str) -> bool {
    has(text, b'=')
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

/// What a TRES list says of a job, read in one pass over its entries: the fields that
/// [`tres`], [`tres_gpus`] and [`tres_gpu_type`] each find with a pass of their own (a dump's
/// `AllocTRES` gives both the GPUs and their type).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tres<'a> {
    /// The first `cpu`, `node` and `mem` entries' values.
    pub cpu: Option<&'a str>,
    pub node: Option<&'a str>,
    pub mem: Option<&'a str>,
    /// The first `gres/gpu` entry's value: the total, when listed.
    gpu_total: Option<&'a str>,
    /// The sum of the `gres/gpu:TYPE` entries, in their order; `None` once one is not a
    /// number.
    gpu_typed: Option<f64>,
    /// The first `gres/gpu:TYPE` entry's TYPE (empty if it names none).
    first_type: Option<&'a str>,
}

impl<'a> Tres<'a> {
    pub fn parse(text: &'a str) -> Self {
        let mut t = Tres {
            gpu_typed: Some(0.0),
            ..Tres::default()
        };
        // The entries of `tres_entries`, each part trimmed as there.
        for entry in split(text, b',') {
            let Some((k, v)) = split_once(entry, b'=') else {
                continue;
            };
            let (k, v) = (trim(k), trim(v));
            let slot = match k {
                "cpu" => &mut t.cpu,
                "node" => &mut t.node,
                "mem" => &mut t.mem,
                "gres/gpu" => &mut t.gpu_total,
                _ => {
                    if let Some(kind) = k.strip_prefix("gres/gpu:") {
                        t.first_type.get_or_insert(kind);
                        t.gpu_typed = t.gpu_typed.zip(number(v)).map(|(sum, n)| sum + n);
                    }
                    continue;
                }
            };
            slot.get_or_insert(v);
        }
        t
    }

    /// As [`tres_gpus`].
    pub fn gpus(&self) -> Option<f64> {
        match self.gpu_total {
            Some(v) => number(v),
            None => self.gpu_typed,
        }
    }

    /// As [`tres_gpu_type`].
    pub fn gpu_type(&self) -> Option<&'a str> {
        self.first_type.filter(|t| !t.is_empty())
    }
}

/// Whether a time cell says "no time": Slurm writes `Unknown` for an end not yet reached and
/// `None` (or `Unknown`) for a start that never came.
pub fn is_no_time(text: &str) -> bool {
    let t = trim(text);
    t.eq_ignore_ascii_case("unknown") || t.eq_ignore_ascii_case("none")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// TRES lists from pieces that reach every rule: known and other keys, GPU totals and
    /// types (empty, repeated), values that are not numbers, white space, entries without `=`.
    fn tres_list() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "cpu",
            "node",
            "mem",
            "billing",
            "gres/gpu",
            "gres/gpu:v100",
            "gres/gpu:a100",
            "gres/gpu:",
            "gres/gpux",
            " cpu ",
            "gres/gpu ",
            "energy",
        ]);
        let value = prop::sample::select(vec![
            "4", "0", "2.5", "x", "", "8G", " 3 ", "1e3", "-1", "nan", "007",
        ]);
        let entry = prop_oneof![
            4 => (key, value).prop_map(|(k, v)| format!("{k}={v}")),
            1 => Just("noequals".to_string()),
            1 => Just("gres/gpu:t4=1=2".to_string()),
        ];
        prop::collection::vec(entry, 0..8).prop_map(|e| e.join(","))
    }

    proptest! {
        /// The one pass against the kept pass-per-field functions (the reference).
        #[test]
        fn one_pass_over_a_tres_list_finds_what_a_pass_per_field_finds(text in tres_list()) {
            let t = Tres::parse(&text);
            prop_assert_eq!(t.cpu, tres(&text, "cpu"));
            prop_assert_eq!(t.node, tres(&text, "node"));
            prop_assert_eq!(t.mem, tres(&text, "mem"));
            // Bits, so that a NaN (`nan`) equals itself.
            prop_assert_eq!(t.gpus().map(f64::to_bits), tres_gpus(&text).map(f64::to_bits));
            prop_assert_eq!(t.gpu_type(), tres_gpu_type(&text));
        }
    }

    #[test]
    fn one_pass_over_a_tres_list_hand_worked() {
        // The total wins over the types; without it the types add up; the first type names.
        let t = Tres::parse(
            "billing=8,cpu=8,gres/gpu=4,gres/gpu:v100=2,gres/gpu:a100=2,mem=16G,node=2",
        );
        assert_eq!((t.cpu, t.node, t.mem), (Some("8"), Some("2"), Some("16G")));
        assert_eq!((t.gpus(), t.gpu_type()), (Some(4.0), Some("v100")));
        let t = Tres::parse("gres/gpu:v100=2,gres/gpu:a100=3,cpu=1");
        assert_eq!((t.gpus(), t.gpu_type()), (Some(5.0), Some("v100")));
        // A type that is not a number spoils the sum, not a listed total.
        assert_eq!(Tres::parse("gres/gpu:v100=x").gpus(), None);
        assert_eq!(Tres::parse("gres/gpu=1,gres/gpu:v100=x").gpus(), Some(1.0));
        assert_eq!(Tres::parse("cpu=4").gpus(), Some(0.0));
        // An empty first type names none, even if a later one does.
        assert_eq!(Tres::parse("gres/gpu:=1,gres/gpu:k80=1").gpu_type(), None);
    }
}
