//! Trace seconds as calendar dates, for the Gantt window and the heatmaps' time axis: a trace's
//! header gives the Unix time of its start (`UnixStartTime`) and a fixed offset from UTC
//! (`TimeZone`, seconds; daylight saving time is not modelled, so the report says "standard
//! time"). A trace without a start time whose submit times are Unix times (Alea's wagap-2013)
//! is dated in UTC, saying so ([`TraceClock::of_trace`]).

use crate::calendar::civil_from_days as civil;

/// A trace's clock: Unix time of trace second 0 and the offset of its local standard time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceClock {
    pub unix_start: i64,
    pub utc_offset: i64,
    /// The header's `TimeZoneString` (e.g. US/Pacific), if any.
    pub zone: Option<String>,
    /// The trace's own times are Unix times (no `UnixStartTime`, submit times from 1980 on):
    /// named so wherever the zone is.
    pub unix_times: bool,
}

/// 1980-01-01 00:00 UTC. A trace without `UnixStartTime` whose first job is submitted at this
/// trace second or later keeps Unix times: no log starts ten years after its own time 0, and
/// Alea's wagap-2013 submits its first job at 1356996147 (2012-12-31 23:22 UTC).
pub const UNIX_TIMES_FROM: i64 = 315_532_800;

impl TraceClock {
    /// The clock of a trace: its header's start time (`UnixStartTime`) and offset (`TimeZone`,
    /// with `TimeZoneString`); without a start time, UTC Unix times when the first submission
    /// (`first_submit`, trace seconds) is one ([`UNIX_TIMES_FROM`]); else none.
    pub fn of_trace(
        unix_start: Option<i64>,
        utc_offset: Option<i64>,
        zone: Option<String>,
        first_submit: Option<i64>,
    ) -> Option<TraceClock> {
        match unix_start {
            Some(unix_start) => Some(TraceClock {
                unix_start,
                utc_offset: utc_offset.unwrap_or(0),
                zone,
                unix_times: false,
            }),
            None => first_submit
                .filter(|t| *t >= UNIX_TIMES_FROM)
                .map(|_| TraceClock {
                    unix_start: 0,
                    utc_offset: 0,
                    zone: None,
                    unix_times: true,
                }),
        }
    }

    /// Local seconds since 1970 of trace second `t`.
    fn local(&self, t: f64) -> i64 {
        self.unix_start + t.floor() as i64 + self.utc_offset
    }

    /// "2004-05-20 06:00".
    pub fn date_time(&self, t: f64) -> String {
        let s = self.local(t);
        let (y, m, d) = civil(s.div_euclid(86_400));
        let sec = s.rem_euclid(86_400);
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}",
            sec / 3600,
            sec % 3600 / 60
        )
    }

    /// "05-20 06:00" (a tick label).
    pub fn short(&self, t: f64) -> String {
        self.date_time(t)[5..].to_string()
    }

    /// Trace seconds at local midnights and every `step_hours` in [from, to].
    pub fn ticks(&self, from: f64, to: f64, step_hours: i64) -> Vec<f64> {
        let step = step_hours * 3600;
        let first = self.local(from);
        let aligned =
            first.div_euclid(step) * step + if first.rem_euclid(step) == 0 { 0 } else { step };
        let mut out = Vec::new();
        let mut s = aligned;
        while (s - self.unix_start - self.utc_offset) as f64 <= to {
            out.push((s - self.unix_start - self.utc_offset) as f64);
            s += step;
        }
        out
    }

    /// "UTC−8, US/Pacific standard time"; "UTC, the trace's times are Unix times".
    pub fn zone_text(&self) -> String {
        if self.unix_times {
            return "UTC, the trace's times are Unix times".to_string();
        }
        let h = self.utc_offset as f64 / 3600.0;
        let sign = if h < 0.0 { "−" } else { "+" };
        let hours = super::svg::label(h.abs());
        match &self.zone {
            Some(z) => format!("UTC{sign}{hours}, {z} standard time"),
            None => format!("UTC{sign}{hours}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_by_hand() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(-1), (1969, 12, 31));
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(civil(15_706), (2013, 1, 1));
        // wagap-2013's first submission, in UTC.
        let utc = |unix_start| TraceClock {
            unix_start,
            utc_offset: 0,
            zone: None,
            unix_times: false,
        };
        assert_eq!(utc(1_356_996_147).date_time(0.0), "2012-12-31 23:22");
        assert_eq!(utc(-86_400).date_time(0.0), "1969-12-31 00:00");
        // 34 × 365 + 8 leap days to 2004-01-01, then 31 + 29 (a leap February).
        assert_eq!(civil(12_477), (2004, 2, 29));
        assert_eq!(civil(12_478), (2004, 3, 1));
        // SDSC-DS-2004: UnixStartTime 1078605840 is Sat Mar 06 12:44:00 PST 2004.
        let clock = TraceClock {
            unix_start: 1_078_605_840,
            utc_offset: -28_800,
            zone: Some("US/Pacific".into()),
            unix_times: false,
        };
        assert_eq!(clock.date_time(0.0), "2004-03-06 12:44");
        // Day 60 of the log, 2004-05-05 12:44.
        assert_eq!(clock.date_time(5_184_000.0), "2004-05-05 12:44");
        assert_eq!(clock.zone_text(), "UTC−8, US/Pacific standard time");
        // Ticks at local midnight and noon.
        let t = clock.ticks(0.0, 86_400.0, 12);
        assert_eq!(clock.date_time(t[0]), "2004-03-07 00:00");
        assert_eq!(clock.date_time(t[1]), "2004-03-07 12:00");
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn a_trace_in_unix_times_is_dated_in_utc_and_says_so() {
        // wagap-2013: no header, its first job submitted at 1356996147.
        let clock = TraceClock::of_trace(None, None, None, Some(1_356_996_147)).unwrap();
        assert_eq!(clock.date_time(1_356_996_147.0), "2012-12-31 23:22");
        assert_eq!(clock.zone_text(), "UTC, the trace's times are Unix times");
        // Trace seconds from the start of the log: no dates without a start time.
        assert_eq!(
            TraceClock::of_trace(None, None, None, Some(3_585_977)),
            None
        );
        assert_eq!(TraceClock::of_trace(None, None, None, None), None);
        assert_eq!(
            TraceClock::of_trace(None, None, None, Some(UNIX_TIMES_FROM - 1)),
            None
        );
        // The header's start time wins, with its zone.
        let header =
            TraceClock::of_trace(Some(843_480_031), Some(3600), None, Some(1_356_996_147)).unwrap();
        assert_eq!((header.unix_start, header.utc_offset), (843_480_031, 3600));
        assert!(!header.unix_times);
    }
}
