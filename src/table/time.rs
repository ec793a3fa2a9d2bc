//! Times as job tables write them: epoch numbers (in the column's unit) or date-times
//! (`2020-06-09 18:41:01`, `2020-06-09T18:41:01.5+08:00`, `…Z`). A date-time without an offset
//! is read in the mapping's `timezone`: a fixed UTC offset, or a named zone with its
//! daylight-saving changes ([`super::zone`]).

use super::cells::trim;
use super::zone::{Skipped, Zone};
use crate::calendar::{days_from_civil, days_in_month};

/// A fixed-width unsigned number of `n` digits at the start of `s`.
fn digits(s: &[u8], n: usize) -> Option<i64> {
    let d = s.get(..n)?;
    d.iter()
        .all(u8::is_ascii_digit)
        .then(|| d.iter().fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0')))
}

/// The date of the last date-time read and its day number: the rows of a table sorted by
/// time mostly share their dates, so a row of the same day parses only its time of day.
#[derive(Default)]
pub struct DayCache(std::cell::Cell<Option<([u8; 10], i64)>>);

/// A date-time as epoch seconds (with its fraction); `offset` (seconds east of UTC) applies
/// when the text names none.
pub fn parse_datetime(text: &str, offset: i64) -> Option<f64> {
    parse_datetime_in(text, &Zone::Fixed(offset), &DayCache::default())?.ok()
}

/// A date-time as epoch seconds (with its fraction), read in `zone` when the text names no
/// offset (an error for a local time the zone skipped); `None` when it is not a date-time. The
/// day of a date met just before is taken from `cache`.
pub fn parse_datetime_in(
    text: &str,
    zone: &Zone,
    cache: &DayCache,
) -> Option<Result<f64, Skipped>> {
    let (local, frac, named) = parse_local(text, cache)?;
    Some(match named {
        Some(offset) => Ok((local - offset) as f64 + frac),
        None => zone.utc(local).map(|utc| utc as f64 + frac),
    })
}

/// A date-time's clock reading in whole seconds (as if it were UTC), its fraction, and the
/// offset it names, if any.
fn parse_local(text: &str, cache: &DayCache) -> Option<(i64, f64, Option<i64>)> {
    let s = trim(text).as_bytes();
    let key: [u8; 10] = s.get(..10)?.try_into().ok()?;
    let days = match cache.0.get() {
        Some((k, days)) if k == key => days,
        _ => {
            let (y, m, d) = (digits(s, 4)?, digits(&s[5..], 2)?, digits(&s[8..], 2)?);
            if s[4] != b'-'
                || s[7] != b'-'
                || !(1..=12).contains(&m)
                || d < 1
                || d > days_in_month(y, m)
            {
                return None;
            }
            let days = days_from_civil(y, m, d);
            cache.0.set(Some((key, days)));
            days
        }
    };
    let mut rest = &s[10..];
    let (mut hh, mut mm, mut ss, mut frac) = (0, 0, 0, 0.0);
    if let Some((&sep, after)) = rest.split_first()
        && (sep == b'T' || sep == b' ')
        && after.first().is_some_and(u8::is_ascii_digit)
    {
        hh = digits(after, 2)?;
        if after.get(2) != Some(&b':') {
            return None;
        }
        mm = digits(after.get(3..)?, 2)?;
        rest = &after[5..];
        if rest.first() == Some(&b':') {
            ss = digits(rest.get(1..)?, 2)?;
            rest = &rest[3..];
            if rest.first() == Some(&b'.') {
                let n = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                frac = std::str::from_utf8(&rest[..n + 1]).ok()?.parse().ok()?;
                rest = &rest[n + 1..];
            }
        }
        if hh > 23 || mm > 59 || ss > 60 {
            return None;
        }
    }
    // Most date-times end here: no offset to read.
    let rest = if rest.is_empty() {
        ""
    } else {
        trim(std::str::from_utf8(rest).ok()?)
    };
    let named = if rest.is_empty() {
        None
    } else {
        Some(super::mapping::parse_offset(rest)?)
    };
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss, frac, named))
}

/// A filter's time: a date-time (in `zone` when it names no offset), or epoch seconds; whole
/// seconds.
pub fn parse_instant(text: &str, zone: &Zone) -> Option<i64> {
    if let Ok(v) = text.trim().parse::<i64>() {
        return Some(v);
    }
    parse_datetime_in(text, zone, &DayCache::default())?
        .ok()
        .map(|t| t.floor() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_in_every_form() {
        assert_eq!(parse_datetime("1970-01-01 00:00:00", 0), Some(0.0));
        // Helios's example row, read at UTC+8.
        assert_eq!(
            parse_datetime("2020-06-09 18:41:01", 8 * 3600),
            Some(1_591_699_261.0)
        );
        assert_eq!(
            parse_datetime("2020-06-09T10:41:01Z", 8 * 3600),
            Some(1_591_699_261.0)
        );
        assert_eq!(
            parse_datetime("2020-06-09T12:41:01.5+02:00", 0),
            Some(1_591_699_261.5)
        );
        assert_eq!(parse_datetime("2020-02-29", 0), Some(1_582_934_400.0));
        for bad in [
            "2019-02-29",
            "2020-13-01",
            "2020-06-09 25:00:00",
            "yesterday",
            "2020-06-09 18:41:01 PDT",
            "",
        ] {
            assert_eq!(parse_datetime(bad, 0), None, "{bad}");
        }
        assert_eq!(
            parse_instant("1591699261", &Zone::Fixed(0)),
            Some(1_591_699_261)
        );
    }

    #[test]
    fn a_cached_day_gives_what_a_fresh_parse_gives() {
        let cache = DayCache::default();
        for text in [
            "2020-06-09 18:41:01",
            "2020-06-09 00:00:00",
            "2020-06-10T00:00:01",
            "2020-06-09 23:59:59",
            "2019-02-29 10:00:00",
            "2020-06-09 25:00:00",
            "2020-06-09T12:41:01.5+02:00",
        ] {
            assert_eq!(
                parse_datetime_in(text, &Zone::Fixed(3600), &cache).and_then(Result::ok),
                parse_datetime(text, 3600),
                "{text}"
            );
        }
        // Hand-worked: 2020-06-10 is day 18423 of the epoch (18422 × 86400 = 1591660800 is
        // 2020-06-09), so 00:00:01 at UTC+01:00 is 1591747200 + 1 − 3600.
        assert_eq!(
            parse_datetime_in("2020-06-10 00:00:01", &Zone::Fixed(3600), &cache),
            Some(Ok(1_591_743_601.0))
        );
        // An invalid date is never cached as valid.
        assert_eq!(
            parse_datetime_in("2019-02-29", &Zone::Fixed(0), &cache),
            None
        );
        assert_eq!(
            parse_datetime_in("2019-02-29", &Zone::Fixed(0), &cache),
            None
        );
    }
}
