//! Machine files of the Alea and AleaNG simulators → [`Cluster`]s, so that published set-ups
//! run as they are (docs/manifest.md, "Importing machine files").
//!
//! - [`MachineFormat::Alea`] (`*.swf.machines` of Alea 3/4): one cluster per line,
//!   `id name nodes cpus_per_node rating [ram_per_node_KB]`, tab or space separated.
//! - [`MachineFormat::AleaNg`]: `cl_id name nodes CPUs speed GB_RAM properties GPUs`, with `;`
//!   comment lines.
//!
//! The format is recognised from the number of columns (6 or 5: Alea, 8: AleaNG); every data
//! line must have the same form. Text in, clusters out: reading the file is [`read_path`]'s only
//! I/O, and the simulator never sees a file.

mod alea;
mod aleang;
pub mod aleang_limits;

use std::path::Path;

use crate::sim::topology::Cluster;

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
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
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
    let mut clusters = Vec::with_capacity(lines.len());
    for (line, fields) in &lines {
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
        clusters.push(cluster);
    }
    Ok(MachineFile { format, clusters })
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
    fn cluster_names_are_unique() {
        let err = parse("0 a 1 1 1 1\n1 a 2 2 1 1\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: a second cluster named `a`");
    }
}
