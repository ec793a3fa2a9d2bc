//! SWF header directives: `; Key: value` comment lines before (or among) the jobs.

use serde::Serialize;

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
    /// Takes in one comment line (the text after `;`).
    pub fn absorb(&mut self, comment: &str) {
        let text = comment.trim();
        let Some((key, value)) = text.split_once(':') else {
            self.notes.push(text.to_string());
            return;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "maxprocs" => self.max_procs = leading_int(value).and_then(|v| u32::try_from(v).ok()),
            "maxnodes" => self.max_nodes = leading_int(value).and_then(|v| u32::try_from(v).ok()),
            "unixstarttime" => self.unix_start_time = leading_int(value),
            "timezonestring" => self.time_zone_string = Some(value.to_string()),
            "timezone" => self.time_zone = leading_int(value),
            "queue" | "queues" => self.queues.push(value.to_string()),
            "partition" | "partitions" => self.partitions.push(value.to_string()),
            _ => self.notes.push(text.to_string()),
        }
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
        h.absorb(" MaxProcs: 1664 (72, 1368, 224)");
        h.absorb("        MaxNodes: 70  (dual)");
        h.absorb("   UnixStartTime: 1091615532");
        h.absorb("  TimeZoneString: Europe/Paris");
        h.absorb(" Queue: 1 batch");
        h.absorb(" Partitions: 2");
        h.absorb(" Computer: IBM SP2");
        h.absorb(" just words");
        assert_eq!(h.max_procs, Some(1664));
        assert_eq!(h.max_nodes, Some(70));
        assert_eq!(h.unix_start_time, Some(1091615532));
        assert_eq!(h.time_zone_string.as_deref(), Some("Europe/Paris"));
        assert_eq!(h.queues, vec!["1 batch"]);
        assert_eq!(h.partitions, vec!["2"]);
        assert_eq!(h.notes, vec!["Computer: IBM SP2", "just words"]);
    }
}
