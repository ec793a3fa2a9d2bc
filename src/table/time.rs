//! Times as job tables write them: epoch numbers (in the column's unit) or date-times
//! (`2020-06-09 18:41:01`, `2020-06-09T18:41:01.5+08:00`, `…Z`). A date-time without an offset
//! is read in the mapping's `timezone` (a fixed UTC offset). No time-zone database: named zones
//! and their daylight-saving changes are the user's to turn into an offset (docs/sources.md).

use crate::calendar::{days_from_civil, days_in_month};

/// A fixed-width unsigned number of `n` digits at the start of `s`.
fn digits(s: &[u8], n: usize) -> Option<i64> {
    let d = s.get(..n)?;
    d.iter()
        .all(u8::is_ascii_digit)
        .then(|| d.iter().fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0')))
}

/// A date-time as epoch seconds (with its fraction); `offset` (seconds east of UTC) applies
/// when the text names none.
pub fn parse_datetime(text: &str, offset: i64) -> Option<f64> {
    let s = text.trim().as_bytes();
    let (y, m, d) = (
        digits(s, 4)?,
        digits(s.get(5..)?, 2)?,
        digits(s.get(8..)?, 2)?,
    );
    if s[4] != b'-' || s[7] != b'-' || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
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
    let rest = std::str::from_utf8(rest).ok()?.trim();
    let offset = if rest.is_empty() {
        offset
    } else {
        super::mapping::parse_offset(rest)?
    };
    let secs = days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss - offset;
    Some(secs as f64 + frac)
}

/// A filter's time: a date-time, or epoch seconds; whole seconds.
pub fn parse_instant(text: &str, offset: i64) -> Option<i64> {
    if let Ok(v) = text.trim().parse::<i64>() {
        return Some(v);
    }
    parse_datetime(text, offset).map(|t| t.floor() as i64)
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
        assert_eq!(parse_instant("1591699261", 0), Some(1_591_699_261));
    }
}
