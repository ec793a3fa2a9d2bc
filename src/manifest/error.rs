//! Manifest errors: the file, line and column, the key path, what was expected, a snippet of the
//! YAML and a `hint:` when the fix is known (e.g. a did-you-mean for a misspelt key or name).

use std::fmt;

/// A position in a manifest (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

#[derive(Debug)]
pub struct ManifestError {
    /// The manifest path as the user gave it.
    pub file: String,
    pub position: Option<Position>,
    /// Key path such as `grid.axes.scheduler[1]`; empty for the whole document.
    pub key_path: String,
    pub message: String,
    pub hint: Option<String>,
    /// The manifest text, for the snippet (absent when the file could not be read).
    pub source_text: Option<String>,
    /// What failed: `load` (reading and resolving the manifest) or `plan` (a check against
    /// its inputs, such as a window that keeps no job of its trace).
    pub stage: &'static str,
}

impl ManifestError {
    pub fn new(file: &str, key_path: impl Into<String>, message: impl Into<String>) -> Self {
        ManifestError {
            file: file.to_string(),
            position: None,
            key_path: key_path.into(),
            message: message.into(),
            hint: None,
            source_text: None,
            stage: "load",
        }
    }

    /// The error of a plan-time check of the manifest against its inputs.
    pub fn planning(mut self) -> Self {
        self.stage = "plan";
        self
    }

    pub fn at(mut self, line: u64, column: u64) -> Self {
        if line > 0 {
            self.position = Some(Position { line, column });
        }
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_source(mut self, text: &str) -> Self {
        self.source_text = Some(text.to_string());
        self
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "failed to {} {}", self.stage, self.file)?;
        match self.position {
            Some(p) => writeln!(f, "  --> {}:{}:{}", self.file, p.line, p.column)?,
            None => writeln!(f, "  --> {}", self.file)?,
        }
        if let (Some(p), Some(text)) = (self.position, &self.source_text) {
            snippet(f, text, p)?;
        }
        if self.key_path.is_empty() {
            write!(f, "  {}", self.message)?;
        } else {
            write!(f, "  at {}: {}", self.key_path, self.message)?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

/// Up to two lines of context above the error line, and a caret under its column.
fn snippet(f: &mut fmt::Formatter<'_>, text: &str, p: Position) -> fmt::Result {
    let lines: Vec<&str> = text.lines().collect();
    let last = (p.line as usize).min(lines.len());
    if last == 0 {
        return Ok(());
    }
    let first = last.saturating_sub(2).max(1);
    let width = last.to_string().len();
    writeln!(f, "  {:width$} |", "")?;
    for n in first..=last {
        writeln!(f, "  {n:width$} | {}", lines[n - 1])?;
    }
    let caret_pad = " ".repeat(p.column.saturating_sub(1) as usize);
    writeln!(f, "  {:width$} | {caret_pad}^", "")
}

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_matches_only() {
        assert_eq!(
            did_you_mean("schedulr", ["scheduler", "workload"]),
            Some("scheduler")
        );
        assert_eq!(
            did_you_mean("nodesize", ["node_size", "procs"]),
            Some("node_size")
        );
        assert_eq!(did_you_mean("xyz", ["scheduler", "workload"]), None);
    }
}
