//! How to read what archives store differently: the unit and scope of the memory fields and the
//! dialect of the fields after the 18th (docs/swf.md, "Reading options"). The SWF standard is
//! the default; every option is recorded in the outputs.

use serde::{Deserialize, Serialize};

/// The unit and scope of SWF field 10 (requested memory) and, as a fallback, field 7.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryReading {
    /// KB per processor: the SWF standard.
    #[default]
    KbPerProc,
    /// KB per node (Alea's and AleaNG's traces).
    KbPerNode,
    /// Bytes per node (MetaCentrum's `wagap-2013`).
    BytesPerNode,
    /// No memory request: the fields are not read.
    Ignore,
}

impl MemoryReading {
    pub const ALL: [MemoryReading; 4] = [
        MemoryReading::KbPerProc,
        MemoryReading::KbPerNode,
        MemoryReading::BytesPerNode,
        MemoryReading::Ignore,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MemoryReading::KbPerProc => "kb_per_proc",
            MemoryReading::KbPerNode => "kb_per_node",
            MemoryReading::BytesPerNode => "bytes_per_node",
            MemoryReading::Ignore => "ignore",
        }
    }

    /// Whether the value describes one node (rather than one processor).
    pub fn per_node(self) -> bool {
        matches!(self, MemoryReading::KbPerNode | MemoryReading::BytesPerNode)
    }

    /// A field value (> 0) in KB, rounded up: per processor or per node as the reading says.
    pub fn to_kb(self, value: u64) -> u64 {
        match self {
            MemoryReading::KbPerProc | MemoryReading::KbPerNode => value,
            MemoryReading::BytesPerNode => value.div_ceil(1024),
            MemoryReading::Ignore => 0,
        }
    }
}

impl std::str::FromStr for MemoryReading {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown memory reading {s:?} (expected kb_per_proc, kb_per_node, \
                 bytes_per_node or ignore)"
                )
            })
    }
}

/// Which dialect the fields after the 18th follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extended {
    /// Recognised per line: field 19 in braces is Alea's, an integer is AleaNG's; other extra
    /// fields are counted and ignored.
    #[default]
    Auto,
    /// Alea: 19 per-CPU node ids in braces, 20 the queue name, 21 a PBS node spec.
    Alea,
    /// AleaNG: 19 GPUs in total, 21 properties (with an optional `NxP` node spec).
    #[serde(rename = "aleang")]
    AleaNg,
    /// Fields after the 18th are not read.
    Ignore,
}

impl Extended {
    pub const ALL: [Extended; 4] = [
        Extended::Auto,
        Extended::Alea,
        Extended::AleaNg,
        Extended::Ignore,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Extended::Auto => "auto",
            Extended::Alea => "alea",
            Extended::AleaNg => "aleang",
            Extended::Ignore => "ignore",
        }
    }
}

impl std::str::FromStr for Extended {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown extended-field dialect {s:?} (expected auto, alea, aleang or ignore)"
                )
            })
    }
}

/// The format of a trace file (docs/sources.md): SWF text, a Batsim JSON workload, or a job
/// table (CSV or Parquet) read through a column mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// The Standard Workload Format (plain or gzip).
    #[default]
    Swf,
    /// A Batsim JSON workload: jobs with `delay` profiles (`crate::batsim`).
    Batsim,
    /// A job table with its mapping and filters (`crate::table`); the resolved mapping is part
    /// of the workload's cache key.
    Table(std::sync::Arc<crate::table::TableReading>),
}

impl TraceFormat {
    pub fn is_swf(&self) -> bool {
        *self == TraceFormat::Swf
    }

    /// The format a command-line path names when no mapping is given: `.json` (or
    /// `.json.gz`) is a Batsim workload, anything else SWF (a job table needs `--mapping`).
    pub fn of_path(path: &std::path::Path) -> TraceFormat {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".json") || name.ends_with(".json.gz") {
            TraceFormat::Batsim
        } else {
            TraceFormat::Swf
        }
    }
}

/// Everything that changes how a trace's lines become jobs. The default reads the standard.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadOptions {
    pub memory: MemoryReading,
    /// When field 10 is unknown (≤ 0), read field 7 (used memory) in the same unit and scope.
    pub used_memory_fallback: bool,
    pub extended: Extended,
    /// The file's format; left out of the serialized options when SWF, so the cache keys of
    /// SWF workloads are what they were before Batsim workloads existed.
    #[serde(default, skip_serializing_if = "TraceFormat::is_swf")]
    pub format: TraceFormat,
}

impl ReadOptions {
    /// These options with the format `path` names when they name none (SWF, the default):
    /// what the command line and the Python package read a path with.
    pub fn for_path(self, path: &std::path::Path) -> ReadOptions {
        match self.format {
            TraceFormat::Swf => ReadOptions {
                format: TraceFormat::of_path(path),
                ..self
            },
            _ => self,
        }
    }

    /// The SWF reading options alone (the format left at SWF): what must stay at the
    /// defaults for a source that has no SWF fields.
    pub fn swf_fields(&self) -> ReadOptions {
        ReadOptions {
            format: TraceFormat::Swf,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_units_convert() {
        for m in MemoryReading::ALL {
            assert_eq!(m.name().parse::<MemoryReading>(), Ok(m));
        }
        for e in Extended::ALL {
            assert_eq!(e.name().parse::<Extended>(), Ok(e));
        }
        // wagap-2013's 64 GiB per node, in bytes.
        assert_eq!(MemoryReading::BytesPerNode.to_kb(68_719_476_736), 64 << 20);
        assert_eq!(MemoryReading::BytesPerNode.to_kb(1), 1);
        assert_eq!(MemoryReading::KbPerProc.to_kb(1024), 1024);
        assert!("kb".parse::<MemoryReading>().is_err());
    }
}
