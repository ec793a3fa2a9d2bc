//! Submit-time windows as users write them (docs/manifest.md, "Windows"): in trace seconds
//! (`{start, end}`, the original form), relative to the trace's first submission
//! (`{first: 60d}`, `{from: 30d, to: 90d}`) or as dates (`{from: 2004-03-01, to:
//! 2004-05-01}`, UTC, placed on the trace's time line by its `UnixStartTime` header).
//!
//! Resolving the manifest ([`resolve`]) only parses and checks what can be checked without the
//! trace; a relative or dated window becomes trace seconds when the trace is known
//! ([`RelativeWindow::seconds`]), at plan time for the check that a selection keeps a job
//! (`execute::selection`) and again wherever the workload is read.

use serde::Serialize;
use serde_saphyr::{Location, Spanned};

use super::ctx::Ctx;
use super::error::ManifestError;
use super::raw::{RawDuration, RawWindow};
use crate::calendar::{civil_from_days, days_from_civil, days_in_month};
use crate::sim::Time;

/// One end of a relative or dated window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Seconds after the trace's first submission.
    AfterFirst(Time),
    /// An instant, in Unix seconds (UTC).
    Unix(i64),
}

/// The unit a window was written in: the unit its messages use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowUnit {
    /// `start`/`end`: trace seconds.
    #[default]
    TraceSeconds,
    /// Seconds after the first submission (a bare number in `from`/`to`/`first`).
    Seconds,
    Minutes,
    Hours,
    Days,
    Weeks,
    /// Dates and times (UTC).
    Date,
}

impl WindowUnit {
    /// Seconds per unit and its symbol, for durations.
    fn scale(self) -> Option<(f64, &'static str)> {
        match self {
            WindowUnit::Seconds => Some((1.0, "s")),
            WindowUnit::Minutes => Some((60.0, "min")),
            WindowUnit::Hours => Some((3600.0, "h")),
            WindowUnit::Days => Some((86_400.0, "d")),
            WindowUnit::Weeks => Some((604_800.0, "w")),
            WindowUnit::TraceSeconds | WindowUnit::Date => None,
        }
    }
}

/// A window relative to the first submission or between dates. Only the bounds enter cache
/// keys; how they were written serves messages.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RelativeWindow {
    pub from: Option<Bound>,
    pub to: Option<Bound>,
    #[serde(skip)]
    pub unit: WindowUnit,
    /// The window as written (`{first: 60d}`), for messages.
    #[serde(skip)]
    pub written: String,
}

/// What a trace tells about its time line: where a relative window starts and where a date
/// falls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceOrigin {
    /// The first submit time (trace seconds) of the jobs as read; `None` without jobs.
    pub first_submit: Option<Time>,
    /// The SWF `UnixStartTime` header: the Unix time of trace second 0.
    pub unix_start: Option<i64>,
}

impl RelativeWindow {
    /// The window in trace seconds, `[start, end)`, on a trace with `origin`; an error (the
    /// message, without location) when a date has no start time to be placed by or the
    /// resolved window is empty.
    pub fn seconds(&self, origin: &TraceOrigin) -> Result<(Option<Time>, Option<Time>), String> {
        let at = |b: Option<Bound>| -> Result<Option<Time>, String> {
            Ok(match b {
                None => None,
                Some(Bound::AfterFirst(s)) => {
                    Some(origin.first_submit.unwrap_or(0).saturating_add(s))
                }
                Some(Bound::Unix(u)) => match origin.unix_start {
                    Some(start) => Some(u.saturating_sub(start)),
                    None => {
                        return Err(format!(
                            "the window {} gives a date, but the trace has no UnixStartTime \
                             header to place it on its time line",
                            self.written
                        ));
                    }
                },
            })
        };
        let (start, end) = (at(self.from)?, at(self.to)?);
        if let (Some(s), Some(e)) = (start, end)
            && s >= e
        {
            return Err(format!(
                "the window {} starts at trace second {s}, not before its end {e}",
                self.written
            ));
        }
        Ok((start, end))
    }

    /// `seconds` (a span, in seconds) in the window's unit: `412.3 d`.
    pub fn duration_text(&self, seconds: Time) -> String {
        let (scale, symbol) = self.unit.scale().unwrap_or((1.0, "s"));
        format!("{} {symbol}", trim_number(seconds as f64 / scale))
    }
}

/// A number with at most one decimal, without a trailing `.0`.
fn trim_number(x: f64) -> String {
    let t = format!("{x:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

/// What `window` resolves to: trace seconds as written, or a relative/dated window.
pub enum Resolved {
    Seconds(Option<Time>, Option<Time>),
    Relative(RelativeWindow),
}

const HINT: &str = "write `{start: S, end: E}` in trace seconds, `{first: 60d}` or `{from: 30d, \
                    to: 90d}` from the first submission (s, min, h, d, w), or dates `{from: \
                    2004-03-01, to: 2004-05-01}` (UTC)";

/// Checks and resolves `workloads.<name>.window` (at `path`).
pub fn resolve(ctx: &Ctx<'_>, path: &str, w: &RawWindow) -> Result<Resolved, ManifestError> {
    let seconds_form = w.start.is_some() || w.end.is_some();
    let relative_form = w.from.is_some() || w.to.is_some() || w.first.is_some();
    if seconds_form && relative_form {
        return Err(ctx
            .key_error(
                path,
                "window",
                "`start`/`end` (trace seconds) cannot be mixed with `from`/`to`/`first`",
            )
            .hint(HINT));
    }
    if !relative_form {
        if let (Some(s), Some(e)) = (w.start, w.end)
            && s >= e
        {
            return Err(ctx.key_error(
                path,
                "window",
                format!("window start {s} is not before its end {e}"),
            ));
        }
        return Ok(Resolved::Seconds(w.start, w.end));
    }
    if w.first.is_some() && (w.from.is_some() || w.to.is_some()) {
        return Err(ctx
            .key_error(
                path,
                "window",
                "`first` selects from the first submission; it cannot be combined with `from` \
                 or `to`",
            )
            .hint(
                "`{first: 60d}` is `{from: 0d, to: 60d}`; for another span give `from` and `to`",
            ));
    }
    let mut units = Vec::new();
    let mut written = Vec::new();
    let mut bound = |key: &str, v: &Spanned<RawDuration>| -> Result<Bound, ManifestError> {
        let (b, unit) = parse_bound(&v.value).map_err(|found| {
            ctx.error(
                &format!("{path}.{key}"),
                format!(
                    "expected a duration after the first submission (`30d`, `12h`) or a date \
                     (`2004-03-01`), found {found}"
                ),
                &v.referenced,
            )
            .hint(HINT)
        })?;
        if key == "first" && matches!(b, Bound::Unix(_)) {
            return Err(ctx
                .error(
                    &format!("{path}.first"),
                    "expected a duration (`60d`), found a date",
                    &v.referenced,
                )
                .hint("`first` is a length; between dates write `{from: <date>, to: <date>}`"));
        }
        if let Bound::AfterFirst(s) = b
            && s < 0
        {
            return Err(negative(ctx, &format!("{path}.{key}"), &v.referenced));
        }
        units.push(unit);
        written.push(format!("{key}: {}", raw_text(&v.value)));
        Ok(b)
    };
    let first = w.first.as_ref().map(|v| bound("first", v)).transpose()?;
    let from = w.from.as_ref().map(|v| bound("from", v)).transpose()?;
    let to = w.to.as_ref().map(|v| bound("to", v)).transpose()?;
    let (from, to) = match first {
        Some(len) => (None, Some(len)),
        None => (from, to),
    };
    if first == Some(Bound::AfterFirst(0)) {
        return Err(ctx.error(
            &format!("{path}.first"),
            "expected a positive duration, found 0",
            &w.first.as_ref().expect("given").referenced,
        ));
    }
    if let (Some(a), Some(b)) = (from, to) {
        let ordered = match (a, b) {
            (Bound::AfterFirst(a), Bound::AfterFirst(b)) | (Bound::Unix(a), Bound::Unix(b)) => {
                a < b
            }
            // Placed on the trace's time line only when it is read.
            _ => true,
        };
        if !ordered {
            return Err(ctx.key_error(
                path,
                "window",
                format!(
                    "the window {{{}}} is empty: `from` is not before `to`",
                    written.join(", ")
                ),
            ));
        }
    }
    // Messages speak the unit of the window's first bound (all of them when they agree).
    let unit = units[0];
    Ok(Resolved::Relative(RelativeWindow {
        from,
        to,
        unit,
        written: format!("{{{}}}", written.join(", ")),
    }))
}

fn negative(ctx: &Ctx<'_>, path: &str, loc: &Location) -> ManifestError {
    ctx.error(
        path,
        "expected a duration of 0 or more, found a negative one",
        loc,
    )
    .hint(
        "windows count from the trace's first submission; a date (`2004-03-01`) selects elsewhere",
    )
}

fn raw_text(v: &RawDuration) -> String {
    match v {
        RawDuration::Seconds(s) => s.to_string(),
        RawDuration::Text(t) => t.trim().to_string(),
    }
}

/// A bound as written: a number (seconds), a duration with a unit, or a date; `Err` is the
/// value as found, for the message.
fn parse_bound(v: &RawDuration) -> Result<(Bound, WindowUnit), String> {
    match v {
        RawDuration::Seconds(s) => Ok((Bound::AfterFirst(*s), WindowUnit::Seconds)),
        RawDuration::Text(t) => {
            let t = t.trim();
            if let Some(unix) = parse_date(t) {
                return Ok((Bound::Unix(unix), WindowUnit::Date));
            }
            parse_duration(t)
                .map(|(s, u)| (Bound::AfterFirst(s), u))
                .ok_or_else(|| format!("{t:?}"))
        }
    }
}

/// `60d`, `1.5 h`, `90min`, `3600s`, `2w` → whole seconds and the unit.
pub fn parse_duration(text: &str) -> Option<(Time, WindowUnit)> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))?;
    let (number, unit) = (text[..split].trim(), text[split..].trim());
    let value: f64 = number.parse().ok().filter(|v: &f64| v.is_finite())?;
    let unit = match unit.to_ascii_lowercase().as_str() {
        "s" | "sec" | "second" | "seconds" => WindowUnit::Seconds,
        "min" | "minute" | "minutes" => WindowUnit::Minutes,
        "h" | "hour" | "hours" => WindowUnit::Hours,
        "d" | "day" | "days" => WindowUnit::Days,
        "w" | "week" | "weeks" => WindowUnit::Weeks,
        _ => return None,
    };
    let seconds = value * unit.scale()?.0;
    // Ten thousand years is no window; the bound keeps `as` below exact and in range.
    (seconds.abs() < 3.2e11).then_some((seconds.round() as Time, unit))
}

/// `YYYY-MM-DD`, optionally with a time `THH:MM[:SS]` (or a space before it) and a trailing
/// `Z` or ` UTC`: the Unix time of that instant in UTC.
pub fn parse_date(text: &str) -> Option<i64> {
    let t = text
        .strip_suffix(" UTC")
        .or_else(|| text.strip_suffix('Z'))
        .unwrap_or(text);
    let (date, time) = match t.find(['T', ' ']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let d: Vec<&str> = date.split('-').collect();
    if d.len() != 3 || d[0].len() != 4 || d[1].len() != 2 || d[2].len() != 2 {
        return None;
    }
    let num = |s: &str| -> Option<i64> {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, m, day) = (num(d[0])?, num(d[1])?, num(d[2])?);
    if !(1..=12).contains(&m) || day < 1 || day > days_in_month(y, m) {
        return None;
    }
    let mut seconds = 0;
    if let Some(time) = time {
        let p: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&p.len()) || p.iter().any(|x| x.len() != 2) {
            return None;
        }
        let (h, min, s) = (
            num(p[0])?,
            num(p[1])?,
            p.get(2).map_or(Some(0), |x| num(x))?,
        );
        if h > 23 || min > 59 || s > 59 {
            return None;
        }
        seconds = h * 3600 + min * 60 + s;
    }
    Some(days_from_civil(y, m, day) * 86_400 + seconds)
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC` (the inverse of [`parse_date`], to the minute).
pub fn format_unix(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_unix_times() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2004-03-01"), Some(1_078_099_200));
        assert_eq!(parse_date("2004-03-01T12:30"), Some(1_078_099_200 + 45_000));
        assert_eq!(
            parse_date("2004-03-01 12:30:15Z"),
            Some(1_078_099_200 + 45_015)
        );
        assert_eq!(parse_date("2004-02-29"), Some(1_078_012_800));
        assert_eq!(parse_date("2003-02-29"), None);
        assert_eq!(parse_date("2004-13-01"), None);
        assert_eq!(parse_date("2004-3-1"), None);
        assert_eq!(parse_date("2004-03-01T25:00"), None);
        assert_eq!(parse_date("30d"), None);
        assert_eq!(format_unix(1_078_099_200 + 45_015), "2004-03-01 12:30 UTC");
        assert_eq!(format_unix(0), "1970-01-01 00:00 UTC");
        for unix in [-86_400 * 400, 951_782_400, 4_102_444_800] {
            let text = format_unix(unix);
            assert_eq!(parse_date(&text), Some(unix), "{text}");
        }
    }

    #[test]
    fn durations_carry_their_unit() {
        assert_eq!(parse_duration("60d"), Some((5_184_000, WindowUnit::Days)));
        assert_eq!(parse_duration("1.5 h"), Some((5_400, WindowUnit::Hours)));
        assert_eq!(parse_duration("90min"), Some((5_400, WindowUnit::Minutes)));
        assert_eq!(parse_duration("3600s"), Some((3_600, WindowUnit::Seconds)));
        assert_eq!(
            parse_duration("2 weeks"),
            Some((1_209_600, WindowUnit::Weeks))
        );
        assert_eq!(parse_duration("60"), None);
        assert_eq!(parse_duration("60 months"), None);
        assert_eq!(parse_duration("1e400d"), None);
    }

    #[test]
    fn bounds_resolve_against_the_trace() {
        let w = RelativeWindow {
            from: Some(Bound::AfterFirst(100)),
            to: Some(Bound::Unix(1_000_500)),
            unit: WindowUnit::Days,
            written: "{from: 100, to: x}".into(),
        };
        let origin = TraceOrigin {
            first_submit: Some(40),
            unix_start: Some(1_000_000),
        };
        assert_eq!(w.seconds(&origin), Ok((Some(140), Some(500))));
        let undated = TraceOrigin {
            unix_start: None,
            ..origin
        };
        assert!(w.seconds(&undated).unwrap_err().contains("UnixStartTime"));
        let late = TraceOrigin {
            first_submit: Some(450),
            ..origin
        };
        assert!(w.seconds(&late).unwrap_err().contains("not before its end"));
        assert_eq!(w.duration_text(129_600), "1.5 d");
        assert_eq!(w.duration_text(86_400), "1 d");
    }
}
