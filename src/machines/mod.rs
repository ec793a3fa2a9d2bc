//! Machine files of the Alea and AleaNG simulators → [`Cluster`]s, so that published set-ups
//! run as they are (docs/manifest.md, "Importing machine files").
//!
//! - [`MachineFormat::Alea`] (`*.swf.machines` of Alea 3/4): one cluster per line,
//!   `id name nodes cpus_per_node rating [ram_per_node_KB]`, tab or space separated.
//! - [`MachineFormat::AleaNg`]: `cl_id name nodes CPUs speed GB_RAM properties GPUs`, with `;`
//!   comment lines.
//!
//! The format is recognised from the number of columns of the first data line (6 or 5: Alea,
//! 8: AleaNG); every later line must have that dialect's form, or it is an error at its line
//! (never a panic, never a line read in the other dialect with columns dropped). Sizes are
//! bounded here, before anything is allocated for them ([`MAX_CORES_PER_NODE`], the
//! topology's [`MAX_NODES`]). Text in, clusters out: reading the file is [`read_path`]'s only
//! I/O, and the simulator never sees a file.

mod alea;
mod aleang;
pub mod aleang_limits;

use std::path::Path;

use crate::sim::topology::{Cluster, MAX_CORES_PER_NODE, MAX_NODES};

/// The machine-file dialects schedlab imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MachineFormat {
    Alea,
    AleaNg,
}

impl MachineFormat {
    pub fn name(self) -> &'static str {
        match self {
            MachineFormat::Alea => "alea",
            MachineFormat::AleaNg => "aleang",
        }
    }
}

/// A machine file that cannot be imported: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map_or(String::new(), |l| format!("line {l}: ")))]
pub struct MachinesError {
    /// 1-based line of the problem; `None` for the whole file.
    pub line: Option<u64>,
    pub message: String,
}

impl MachinesError {
    fn at(line: u64, message: impl Into<String>) -> Self {
        MachinesError {
            line: Some(line),
            message: message.into(),
        }
    }
}

/// An imported machine file: its dialect and its clusters, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineFile {
    pub format: MachineFormat,
    pub clusters: Vec<Cluster>,
}

/// Reads and parses the machine file at `path`; errors name the file.
pub fn read_path(path: &Path) -> Result<MachineFile, String> {
    let text = read_text(path)?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The text of a machine or limit file; a file that is not UTF-8 is an error at the line and
/// byte where it stops being text, naming the file.
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text(bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `bytes` as text, or where they stop being UTF-8.
pub fn text(bytes: Vec<u8>) -> Result<String, MachinesError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = &bytes[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        MachinesError::at(
            line,
            format!(
                "byte {} is not valid UTF-8 (0x{:02x}); machine and limit files are text",
                valid.len() - line_start + 1,
                bytes[valid.len()]
            ),
        )
    })
}

/// Parses machine-file text, recognising its dialect.
pub fn parse(text: &str) -> Result<MachineFile, MachinesError> {
    let lines: Vec<(u64, Vec<&str>)> = data_lines(text).collect();
    let Some((first, fields)) = lines.first() else {
        return Err(MachinesError {
            line: None,
            message: "no machine lines (only blank or `;` comment lines)".into(),
        });
    };
    let format = match fields.len() {
        5 | 6 => MachineFormat::Alea,
        8 => MachineFormat::AleaNg,
        n => {
            return Err(MachinesError::at(
                *first,
                format!(
                    "expected 6 columns (Alea: id name nodes cpus_per_node rating ram_KB) or 8 \
                     (AleaNG: cl_id name nodes CPUs speed GB_RAM properties GPUs), found {n}"
                ),
            ));
        }
    };
    let first_columns = fields.len();
    let mut clusters = Vec::with_capacity(lines.len());
    let mut nodes = 0u64;
    for (line, fields) in &lines {
        columns(format, (*first, first_columns), *line, fields.len())?;
        let cluster = match format {
            MachineFormat::Alea => alea::cluster(*line, fields)?,
            MachineFormat::AleaNg => aleang::cluster(*line, fields)?,
        };
        if clusters.iter().any(|c: &Cluster| c.name == cluster.name) {
            return Err(MachinesError::at(
                *line,
                format!("a second cluster named `{}`", cluster.name),
            ));
        }
        nodes += cluster.nodes();
        if nodes > MAX_NODES {
            return Err(MachinesError::at(
                *line,
                format!(
                    "the clusters up to this line have {nodes} nodes; at most {MAX_NODES} are \
                     supported"
                ),
            ));
        }
        clusters.push(cluster);
    }
    Ok(MachineFile { format, clusters })
}

/// Checks that a later line has the form of the file's dialect (which its first data line set).
fn columns(
    format: MachineFormat,
    (first, first_columns): (u64, usize),
    line: u64,
    found: usize,
) -> Result<(), MachinesError> {
    let (ok, expected) = match format {
        MachineFormat::Alea => (
            matches!(found, 5 | 6),
            "6 columns `id name nodes cpus_per_node rating ram_KB` (Alea; ram_KB may be left out)",
        ),
        MachineFormat::AleaNg => (
            found == 8,
            "8 columns `cl_id name nodes CPUs speed GB_RAM properties GPUs` (AleaNG)",
        ),
    };
    if ok {
        return Ok(());
    }
    let other = match (format, found) {
        (MachineFormat::Alea, 8) => " — an AleaNG line in an Alea file",
        (MachineFormat::AleaNg, 5 | 6) => " — an Alea line in an AleaNG file",
        _ => "",
    };
    Err(MachinesError::at(
        line,
        format!(
            "expected {expected}, as line {first} ({first_columns} columns) set the dialect, \
             found {found}{other}"
        ),
    ))
}

/// Non-blank lines that are not `;` comments, with their 1-based numbers, split on whitespace.
fn data_lines(text: &str) -> impl Iterator<Item = (u64, Vec<&str>)> + '_ {
    text.lines().enumerate().filter_map(|(i, line)| {
        let line = line.trim();
        (!line.is_empty() && !line.starts_with(';'))
            .then(|| (i as u64 + 1, line.split_whitespace().collect()))
    })
}

/// A non-negative integer column.
fn integer(line: u64, fields: &[&str], index: usize, what: &str) -> Result<u64, MachinesError> {
    fields[index].parse::<u64>().map_err(|_| {
        MachinesError::at(
            line,
            format!(
                "column {} ({what}): expected a non-negative integer, found `{}`",
                index + 1,
                fields[index]
            ),
        )
    })
}

/// A count that must be positive and fit a `u32`.
fn count(line: u64, fields: &[&str], index: usize, what: &str) -> Result<u32, MachinesError> {
    let n = integer(line, fields, index, what)?;
    u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
        MachinesError::at(
            line,
            format!(
                "column {} ({what}): expected a positive count, found `{}`",
                index + 1,
                fields[index]
            ),
        )
    })
}

/// Cores per node: a positive count of at most [`MAX_CORES_PER_NODE`].
fn cores(line: u64, fields: &[&str], index: usize, what: &str) -> Result<u32, MachinesError> {
    let n = count(line, fields, index, what)?;
    if u64::from(n) > MAX_CORES_PER_NODE {
        return Err(MachinesError::at(
            line,
            format!(
                "column {} ({what}): {n} cores per node; at most {MAX_CORES_PER_NODE} are \
                 supported",
                index + 1
            ),
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialect_follows_the_column_count() {
        assert_eq!(
            parse("0\ta\t2\t4\t1\t1024\n").unwrap().format,
            MachineFormat::Alea
        );
        let ng = "; header\n0 cl_a 1 1 1 256 normal 4\n";
        assert_eq!(parse(ng).unwrap().format, MachineFormat::AleaNg);
        let err = parse("\n0 a 1 1\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("found 4"), "{err}");
        assert_eq!(parse("; only comments\n").unwrap_err().line, None);
    }

    #[test]
    fn later_lines_keep_the_first_lines_dialect() {
        let err = parse("0 a 1 1 1 1\n1 b 2\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("found 3"), "{err}");
        let err = parse("0 a 1 1 1 1\n1 b 2 2 1 16 gpu 4\n").unwrap_err();
        assert!(
            err.message.contains("an AleaNG line in an Alea file"),
            "{err}"
        );
        let err = parse("0 a 1 1 1 16 - 0\n1 b 2 2 1\n").unwrap_err();
        assert!(
            err.message.contains("an Alea line in an AleaNG file"),
            "{err}"
        );
        assert!(parse("0 a 1 1 1 1\n1 b 2 2 1\n").is_ok());
    }

    #[test]
    fn not_utf8_is_located() {
        let err = text(b"0 a 1 1 1 1\n1 b\xe9 2 2 1\n".to_vec()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: byte 4 is not valid UTF-8 (0xe9); machine and limit files are text"
        );
    }

    #[test]
    fn cluster_names_are_unique() {
        let err = parse("0 a 1 1 1 1\n1 a 2 2 1 1\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: a second cluster named `a`");
    }
}
