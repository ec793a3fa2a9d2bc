//! SWF header directives: `; Key: value` comment lines before (or among) the jobs.

use serde::Serialize;

use super::error::ErrorKind;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Header {
    pub max_procs: Option<u32>,
    pub max_nodes: Option<u32>,
    pub unix_start_time: Option<i64>,
    pub time_zone_string: Option<String>,
    /// `TimeZone`: seconds to add to UTC for local time (-28800 for US/Pacific).
    pub time_zone: Option<i64>,
    /// `Queue:`/`Queues:` notes, in file order.
    pub queues: Vec<String>,
    /// `Partition:`/`Partitions:` notes, in file order.
    pub partitions: Vec<String>,
    /// Every other comment line (without the leading `;`), in file order.
    pub notes: Vec<String>,
}

impl Header {
    /// Takes in one comment line (the text after `;`). A machine size the simulation could not
    /// use — not a number, 0, or beyond [`MAX_PROCS`] — is an error, never silently dropped;
    /// `-1` (the SWF's "unknown") leaves the size unknown.
    pub fn absorb(&mut self, comment: &str) -> Result<(), ErrorKind> {
        let text = comment.trim();
        let Some((key, value)) = text.split_once(':') else {
            self.notes.push(text.to_string());
            return Ok(());
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "maxprocs" => self.max_procs = machine_size("MaxProcs", value)?,
            "maxnodes" => self.max_nodes = machine_size("MaxNodes", value)?,
            "unixstarttime" => self.unix_start_time = leading_int(value),
            "timezonestring" => self.time_zone_string = Some(value.to_string()),
            "timezone" => self.time_zone = leading_int(value),
            "queue" | "queues" => self.queues.push(value.to_string()),
            "partition" | "partitions" => self.partitions.push(value.to_string()),
            _ => self.notes.push(text.to_string()),
        }
        Ok(())
    }
}

/// The largest machine accepted, in processors (or nodes): far beyond any machine built, and
/// small enough that per-node state fits in memory.
pub const MAX_PROCS: u32 = 100_000_000;

/// A `MaxProcs`/`MaxNodes` value: `None` for -1, else 1 to [`MAX_PROCS`].
fn machine_size(directive: &'static str, value: &str) -> Result<Option<u32>, ErrorKind> {
    match leading_int(value) {
        Some(-1) => Ok(None),
        Some(n) if (1..=i64::from(MAX_PROCS)).contains(&n) => Ok(Some(n as u32)),
        _ => Err(ErrorKind::BadHeader {
            directive,
            expected: "a count from 1 to 100000000 (or -1: unknown)",
            found: value.to_string(),
        }),
    }
}

/// The integer a directive starts with: `1664 (72, 1368, 224)` → 1664.
fn leading_int(value: &str) -> Option<i64> {
    let end = value
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(value.len(), |(i, _)| i);
    value[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_with_spacing_and_trailing_notes() {
        let mut h = Header::default();
        for line in [
            " MaxProcs: 1664 (72, 1368, 224)",
            "        MaxNodes: 70  (dual)",
            "   UnixStartTime: 1091615532",
            "  TimeZoneString: Europe/Paris",
            " Queue: 1 batch",
            " Partitions: 2",
            " Computer: IBM SP2",
            " just words",
        ] {
            h.absorb(line).unwrap();
        }
        assert_eq!(h.max_procs, Some(1664));
        assert_eq!(h.max_nodes, Some(70));
        assert_eq!(h.unix_start_time, Some(1091615532));
        assert_eq!(h.time_zone_string.as_deref(), Some("Europe/Paris"));
        assert_eq!(h.queues, vec!["1 batch"]);
        assert_eq!(h.partitions, vec!["2"]);
        assert_eq!(h.notes, vec!["Computer: IBM SP2", "just words"]);
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn absurd_machine_sizes_are_errors_and_minus_one_is_unknown() {
        let mut h = Header::default();
        for bad in [
            " MaxProcs: 99999999999",
            " MaxProcs: 0",
            " MaxNodes: many",
            " MaxProcs: -5",
        ] {
            assert!(
                matches!(h.absorb(bad), Err(ErrorKind::BadHeader { .. })),
                "{bad}"
            );
        }
        h.absorb(" MaxProcs: -1").unwrap();
        assert_eq!(h.max_procs, None);
        h.absorb(" MaxProcs: 100000000").unwrap();
        assert_eq!(h.max_procs, Some(100_000_000));
    }
}
