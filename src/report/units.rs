//! The one unit a report gives waits in — every table, chart, sentence and paper figure of it —
//! chosen from the magnitude of the data (docs/reports.md, "Units"), so that a reader never
//! compares 0.0396 h in one section with 142 s in another.

use super::text;

/// Decimals a table's wait column keeps at least (more where its values need them for three
/// significant digits: `text::column`), as the configurations table's mean wait.
pub const WAIT_DECIMALS: usize = 2;

/// The unit of every wait (and held time, response time) in one report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitUnit {
    Seconds,
    Minutes,
    Hours,
}

impl WaitUnit {
    /// The unit for a report whose configurations have these mean waits (seconds): hours when
    /// their median is at least an hour, minutes when it is at least a minute, else seconds.
    /// Hours when there is none (the unit of the papers' tables).
    pub fn for_mean_waits(means: &[f64]) -> WaitUnit {
        let mut v: Vec<f64> = means.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return WaitUnit::Hours;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        if median >= 3600.0 {
            WaitUnit::Hours
        } else if median >= 60.0 {
            WaitUnit::Minutes
        } else {
            WaitUnit::Seconds
        }
    }

    /// Seconds in one unit.
    pub fn seconds(self) -> f64 {
        match self {
            WaitUnit::Seconds => 1.0,
            WaitUnit::Minutes => 60.0,
            WaitUnit::Hours => 3600.0,
        }
    }

    /// Stored seconds × scale = shown value.
    pub fn scale(self) -> f64 {
        1.0 / self.seconds()
    }

    /// The symbol after a value and in headers ("h" as in "mean wait (h)").
    pub fn symbol(self) -> &'static str {
        match self {
            WaitUnit::Seconds => "s",
            WaitUnit::Minutes => "min",
            WaitUnit::Hours => "h",
        }
    }

    /// The unit in words, for captions ("Waits in hours").
    pub fn plural(self) -> &'static str {
        match self {
            WaitUnit::Seconds => "seconds",
            WaitUnit::Minutes => "minutes",
            WaitUnit::Hours => "hours",
        }
    }

    /// `seconds` in this unit.
    pub fn of(self, seconds: f64) -> f64 {
        seconds * self.scale()
    }

    /// `seconds` in this unit, three significant digits, with the symbol ("2.37 min").
    pub fn text(self, seconds: f64) -> String {
        format!("{} {}", text::number(self.of(seconds)), self.symbol())
    }

    /// A signed difference of `seconds` in this unit ("+0.550 h").
    pub fn signed(self, seconds: f64) -> String {
        format!("{} {}", text::signed(self.of(seconds)), self.symbol())
    }
}

/// A duration as the terminal prints it (`simulate`, `diff`, `trace stats`): in the unit a
/// report would choose for it alone (hours from an hour, minutes from a minute, else seconds),
/// followed by the exact seconds: "1.90 h (6,837 s)", "42 s".
pub fn duration_text(seconds: f64) -> String {
    let unit = WaitUnit::for_mean_waits(&[seconds.abs()]);
    if !seconds.is_finite() || unit == WaitUnit::Seconds && seconds.fract() != 0.0 {
        format!("{} s", text::number(seconds))
    } else if unit == WaitUnit::Seconds {
        format!("{} s", text::fixed(seconds, 0))
    } else {
        format!("{} ({} s)", unit.text(seconds), text::fixed(seconds, 0))
    }
}

/// A signed difference of durations as the terminal prints it: "+0.550 h (+1,980 s)".
pub fn signed_duration_text(seconds: f64) -> String {
    let unit = WaitUnit::for_mean_waits(&[seconds.abs()]);
    let exact = text::signed(seconds.round());
    if unit == WaitUnit::Seconds || !seconds.is_finite() {
        format!("{} s", text::signed(seconds))
    } else {
        format!("{} ({exact} s)", unit.signed(seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::WaitUnit::{self, Hours, Minutes, Seconds};

    #[test]
    fn terminal_durations_carry_their_unit_and_the_exact_seconds() {
        assert_eq!(super::duration_text(6228.0), "1.73 h (6,228 s)");
        assert_eq!(super::duration_text(142.4), "2.37 min (142 s)");
        assert_eq!(super::duration_text(42.0), "42 s");
        assert_eq!(super::duration_text(4.25), "4.25 s");
        assert_eq!(super::signed_duration_text(1980.0), "+33.0 min (+1,980 s)");
        assert_eq!(super::signed_duration_text(-7200.0), "−2.00 h (−7,200 s)");
    }

    #[test]
    fn the_median_mean_wait_picks_the_unit() {
        // LPC-EGEE's four queue setups wait 142, 132, 213 and 143 s on average: median 142.5 s,
        // over a minute and under an hour.
        assert_eq!(
            WaitUnit::for_mean_waits(&[142.0, 132.0, 213.0, 143.0]),
            Minutes
        );
        // One long-waiting configuration among short ones does not decide: median 30 s.
        assert_eq!(WaitUnit::for_mean_waits(&[20.0, 30.0, 90_000.0]), Seconds);
        assert_eq!(WaitUnit::for_mean_waits(&[3600.0, 50.0]), Minutes);
        assert_eq!(WaitUnit::for_mean_waits(&[3600.0]), Hours);
        assert_eq!(WaitUnit::for_mean_waits(&[59.9]), Seconds);
        assert_eq!(WaitUnit::for_mean_waits(&[]), Hours);
        assert_eq!(WaitUnit::for_mean_waits(&[f64::NAN, 120.0]), Minutes);
    }

    #[test]
    fn values_in_the_unit() {
        assert_eq!(Minutes.text(142.2), "2.37 min");
        assert_eq!(Hours.text(142.5), "0.0396 h");
        assert_eq!(Seconds.text(33_336.0), "33,336 s");
        assert_eq!(Minutes.text(33_336.0), "556 min");
        assert_eq!(Hours.signed(1980.0), "+0.550 h");
        assert_eq!(Minutes.signed(-90.0), "−1.50 min");
    }
}
