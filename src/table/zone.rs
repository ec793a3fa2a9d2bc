//! The time zone in which a table's local times are read (`timezone:` in a mapping;
//! docs/sources.md, "Time zones"): a fixed UTC offset, or a named zone of the system's time-zone
//! database (`Europe/Prague`: the TZif file under `$TZDIR`, else `/usr/share/zoneinfo`), whose
//! daylight-saving changes apply.
//!
//! A local time names one instant, except around a change: when clocks go back an hour, the
//! hour is lived twice and its times are **ambiguous** — read as their first occurrence (the
//! offset before the change), since a dump printed in local time (`sacct` without `TZ=UTC`)
//! keeps nothing that tells them apart; when clocks go forward, the skipped hour's times
//! **do not exist**, no clock in the zone printed them, and reading one is an error (the table
//! was not written in that zone).

use std::path::PathBuf;

/// A zone: a fixed offset, or a database zone's offsets over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Seconds east of UTC.
    Fixed(i64),
    Named(Named),
}

/// A database zone, as its TZif file lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    /// The offset before the first change.
    initial: i64,
    /// `(UTC instant of a change, offset from then on)`, in time order. After the last change
    /// listed (2037 in the database's files) its offset holds: the file's rule for later years
    /// is not read.
    changes: Vec<(i64, i64)>,
}

/// A local time that no clock of the zone showed (skipped when clocks went forward).
#[derive(Debug, PartialEq, Eq)]
pub struct Skipped;

impl Zone {
    /// The zone `name` of the system's database; the error says what went wrong.
    pub fn named(name: &str) -> Result<Zone, String> {
        let ok = !name.is_empty()
            && !name.starts_with('/')
            && name.split('/').all(|p| !p.is_empty() && p != "..")
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/_-+".contains(&b));
        if !ok {
            return Err(format!(
                "{name:?} is not a zone name such as `Europe/Prague`"
            ));
        }
        let dir = std::env::var_os("TZDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/share/zoneinfo"));
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "no zone {name:?} in the time-zone database ({}: {e})",
                path.display()
            )
        })?;
        let (initial, changes) = parse_tzif(&bytes)
            .ok_or_else(|| format!("{} is not a TZif time-zone file", path.display()))?;
        Ok(Zone::Named(Named {
            name: name.to_string(),
            initial,
            changes,
        }))
    }

    /// The offset in force at the UTC instant `utc`.
    pub fn offset_at(&self, utc: i64) -> i64 {
        match self {
            Zone::Fixed(o) => *o,
            Zone::Named(z) => z.period(utc).1,
        }
    }

    /// The UTC instant of the local time `local` (seconds as if the local clock were UTC): the
    /// first occurrence of an ambiguous time, an error for a skipped one.
    pub fn utc(&self, local: i64) -> Result<i64, Skipped> {
        let z = match self {
            Zone::Fixed(o) => return Ok(local - o),
            Zone::Named(z) => z,
        };
        // The periods around `local` read as UTC hold every candidate: offsets are under a
        // day, changes months apart.
        let i = z.changes.partition_point(|(t, _)| *t <= local);
        let lo = i.saturating_sub(2);
        let hi = (i + 2).min(z.changes.len());
        (lo..=hi)
            .filter_map(|p| {
                let (start, offset, end) = z.bounds(p);
                let u = local - offset;
                (start.is_none_or(|s| s <= u) && end.is_none_or(|e| u < e)).then_some(u)
            })
            .min()
            .ok_or(Skipped)
    }

    /// How the zone is named in a trace's header: `Europe/Prague`, `UTC+08:00`.
    pub fn name(&self) -> String {
        match self {
            Zone::Fixed(o) => offset_name(*o),
            Zone::Named(z) => z.name.clone(),
        }
    }
}

impl Named {
    /// Period `p` (0: before the first change; `p`: from change `p - 1`): its UTC start, offset
    /// and UTC end.
    fn bounds(&self, p: usize) -> (Option<i64>, i64, Option<i64>) {
        let start = p.checked_sub(1).map(|k| self.changes[k].0);
        let offset = p.checked_sub(1).map_or(self.initial, |k| self.changes[k].1);
        let end = self.changes.get(p).map(|c| c.0);
        (start, offset, end)
    }

    /// The period holding the UTC instant `utc`: its index and offset.
    fn period(&self, utc: i64) -> (usize, i64) {
        let p = self.changes.partition_point(|(t, _)| *t <= utc);
        (p, self.bounds(p).1)
    }
}

/// A UTC offset as `UTC+08:00`.
pub fn offset_name(offset: i64) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.abs();
    format!("UTC{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// The initial offset and the changes of a TZif file (RFC 8536), from its 64-bit part (version
/// 2 and later; the 32-bit part of a version-1 file otherwise).
fn parse_tzif(b: &[u8]) -> Option<(i64, Vec<(i64, i64)>)> {
    fn be(b: &[u8], at: usize, n: usize) -> Option<i64> {
        let s = b.get(at..at + n)?;
        let v = s.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
        // Sign-extend from n bytes.
        let shift = 64 - 8 * n as u32;
        Some(((v << shift) as i64) >> shift)
    }
    let header = |at: usize| -> Option<[usize; 6]> {
        if b.get(at..at + 4)? != b"TZif" {
            return None;
        }
        let mut c = [0usize; 6];
        for (k, slot) in c.iter_mut().enumerate() {
            *slot = usize::try_from(be(b, at + 20 + 4 * k, 4)?).ok()?;
        }
        Some(c)
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = header(0)?;
    let version = *b.get(4)?;
    let (at, size) = if version >= b'2' {
        let v1 = 44 + timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
        (v1, 8)
    } else {
        (0, 4)
    };
    let [_, _, _, timecnt, typecnt, _] = header(at)?;
    if typecnt == 0 {
        return None;
    }
    let times = at + 44;
    let indices = times + timecnt * size;
    let types = indices + timecnt;
    let utoff = |t: usize| -> Option<i64> {
        (t < typecnt).then_some(())?;
        be(b, types + 6 * t, 4)
    };
    let mut changes = Vec::with_capacity(timecnt);
    for k in 0..timecnt {
        let t = be(b, times + k * size, size)?;
        let offset = utoff(usize::from(*b.get(indices + k)?))?;
        changes.push((t, offset));
    }
    Some((utoff(0)?, changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-2 TZif file of a made-up zone: +1 h, +2 h from t = 1000, +1 h from t = 5000.
    fn tzif() -> Vec<u8> {
        let mut v1 = b"TZif2".to_vec();
        v1.extend([0u8; 15]);
        // No 32-bit data.
        v1.extend([0u8; 24]);
        let mut b = v1;
        b.extend(b"TZif2");
        b.extend([0u8; 15]);
        for c in [0u32, 0, 0, 2, 2, 8] {
            b.extend(c.to_be_bytes());
        }
        b.extend(1000i64.to_be_bytes());
        b.extend(5000i64.to_be_bytes());
        b.extend([1u8, 0]);
        for (off, dst, idx) in [(3600i32, 0u8, 0u8), (7200, 1, 4)] {
            b.extend(off.to_be_bytes());
            b.extend([dst, idx]);
        }
        b.extend(b"CET\0CES\0");
        b
    }

    #[test]
    fn a_tzif_file_gives_its_changes() {
        let (initial, changes) = parse_tzif(&tzif()).expect("parsed");
        assert_eq!(initial, 3600);
        assert_eq!(changes, vec![(1000, 7200), (5000, 3600)]);
        let z = Zone::Named(Named {
            name: "Test/Zone".into(),
            initial,
            changes,
        });
        // Before the first change: +1 h. Local 0 is UTC −3600.
        assert_eq!(z.utc(0), Ok(-3600));
        // Clocks go forward at UTC 1000 (local 4600 → 8200): local 4599 is UTC 999, local
        // 8200 is UTC 1000, local 6000 never showed.
        assert_eq!(z.utc(4599), Ok(999));
        assert_eq!(z.utc(8200), Ok(1000));
        assert_eq!(z.utc(6000), Err(Skipped));
        // Clocks go back at UTC 5000 (local 12200 → 8600): local 9000 showed at UTC 1800
        // (+2 h) and again at UTC 5400 (+1 h); the first is taken.
        assert_eq!(z.utc(9000), Ok(1800));
        assert_eq!(z.utc(12200), Ok(8600));
        assert_eq!(z.offset_at(999), 3600);
        assert_eq!(z.offset_at(1000), 7200);
        assert_eq!(z.offset_at(5000), 3600);
        assert!(parse_tzif(b"not a zone").is_none());
    }

    #[test]
    fn names_are_checked_before_any_file_is_opened() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "Europe//Prague",
            "Europe/Pra gue",
        ] {
            assert!(Zone::named(bad).is_err(), "{bad}");
        }
        assert_eq!(Zone::Fixed(-7 * 3600).utc(0), Ok(7 * 3600));
        assert_eq!(Zone::Fixed(8 * 3600).name(), "UTC+08:00");
    }
}
