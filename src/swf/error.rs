//! Reader errors: always naming the source, and for bad content the line and field.

use std::fmt;

use super::fields::{FIELD_COUNT, field_name};

#[derive(Debug)]
pub struct SwfError {
    /// The file name (as given) or another label of the input.
    pub source_name: String,
    /// 1-based line number; 0 for errors not tied to a line.
    pub line: u64,
    pub kind: ErrorKind,
}

/// A value of a JSON workload that cannot be used: `path` says where it is in the document
/// (`jobs[3].subtime`), `column` where on the error's line.
#[derive(Debug)]
pub struct JsonValueError {
    pub path: String,
    pub column: u64,
    pub expected: String,
    pub found: String,
    /// Whether skipping the job (lenient reading) gets past it.
    pub job: bool,
    pub hint: Option<&'static str>,
}

/// A value of a job table that cannot be used: `row` (1-based, data rows only) and `column`
/// say where; a whole-table problem (a missing column) has no row.
#[derive(Debug)]
pub struct TableValueError {
    pub row: Option<u64>,
    pub column: String,
    pub expected: String,
    pub found: String,
    pub hint: Option<&'static str>,
}

#[derive(Debug)]
pub enum ErrorKind {
    Io(std::io::Error),
    TooFewFields {
        found: usize,
    },
    BadField {
        field: usize,
        expected: &'static str,
        found: String,
    },
    /// No job line at all (only comments and blank lines, or nothing).
    Empty {
        lines: u64,
    },
    /// A header directive the simulation relies on, with a value it cannot use.
    BadHeader {
        directive: &'static str,
        expected: &'static str,
        found: String,
    },
    LineTooLong {
        limit: usize,
    },
    /// A value of a JSON workload (Batsim, `crate::batsim`) that cannot be used.
    Json(Box<JsonValueError>),
    /// A cell or a column of a job table (`crate::table`) that cannot be used.
    Table(Box<TableValueError>),
    /// Not JSON at all (the parser's message).
    JsonSyntax {
        column: u64,
        message: String,
    },
}

impl SwfError {
    /// True when skipping the line (`--lenient`) gets past the error: a malformed job line or
    /// header directive — not a damaged file or a read failure.
    pub fn is_malformed_line(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::TooFewFields { .. }
                | ErrorKind::BadField { .. }
                | ErrorKind::BadHeader { .. }
        ) || matches!(&self.kind, ErrorKind::Json(e) if e.job)
            || matches!(&self.kind, ErrorKind::Table(e) if e.row.is_some())
    }

    /// What to do about it, when known.
    pub fn hint(&self) -> Option<&'static str> {
        match &self.kind {
            ErrorKind::Json(e) if e.hint.is_some() => e.hint,
            ErrorKind::Json(e) if e.job => Some(
                "fix the value, or read leniently (--lenient; `lenient: true` in a manifest) to skip the job (counted)",
            ),
            ErrorKind::Table(e) if e.hint.is_some() => e.hint,
            ErrorKind::Table(e) if e.row.is_some() => Some(
                "fix the value or the mapping, or read leniently (--lenient; `lenient: true` in a manifest) to skip the row (counted)",
            ),
            ErrorKind::JsonSyntax { .. } => {
                Some("a Batsim workload is one JSON object with `jobs` and `profiles`")
            }
            _ if self.is_malformed_line() => {
                Some("fix the line, or pass --lenient to skip malformed lines (they are counted)")
            }
            ErrorKind::Io(e) if is_damaged(e) => Some(
                "the file is damaged or truncated (a broken gzip stream, or not the bytes it was meant to be); download or copy it again",
            ),
            ErrorKind::Empty { .. } => {
                Some("is this the trace you meant? An SWF trace has one job per line")
            }
            ErrorKind::LineTooLong { .. } => {
                Some("an SWF trace has one job per line of 18 numbers: is this the file you meant?")
            }
            _ => None,
        }
    }
}

/// A read error that comes from the content (corrupt compression, invalid data) rather than
/// from the system.
fn is_damaged(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::InvalidData
            | std::io::ErrorKind::InvalidInput
            | std::io::ErrorKind::UnexpectedEof
    )
}

impl fmt::Display for SwfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Io(e) if self.line == 0 => {
                write!(f, "failed to read {}: {e}", self.source_name)
            }
            ErrorKind::Io(e) if is_damaged(e) => write!(
                f,
                "failed to read {} (at line {}): the content is damaged: {e}",
                self.source_name, self.line
            ),
            ErrorKind::Io(e) => write!(f, "failed to read {}:{}: {e}", self.source_name, self.line),
            ErrorKind::TooFewFields { found } => write!(
                f,
                "{}:{}: expected {FIELD_COUNT} fields, found {found}",
                self.source_name, self.line
            ),
            ErrorKind::BadField {
                field,
                expected,
                found,
            } => write!(
                f,
                "{}:{}: field {field} ({}): expected {expected}, found {found:?}",
                self.source_name,
                self.line,
                field_name(*field)
            ),
            ErrorKind::Empty { lines: 0 } => {
                write!(f, "{}: the file is empty", self.source_name)
            }
            ErrorKind::Empty { lines } => write!(
                f,
                "{}: no job lines ({lines} lines read, all comments or blank)",
                self.source_name
            ),
            ErrorKind::BadHeader {
                directive,
                expected,
                found,
            } => write!(
                f,
                "{}:{}: header {directive}: expected {expected}, found {found:?}",
                self.source_name, self.line
            ),
            ErrorKind::Json(e) => write!(
                f,
                "{}:{}:{}: {}: expected {}, found {}",
                self.source_name, self.line, e.column, e.path, e.expected, e.found
            ),
            ErrorKind::Table(e) => {
                write!(f, "{}:", self.source_name)?;
                if self.line > 0 {
                    write!(f, "{}:", self.line)?;
                }
                if let Some(row) = e.row {
                    write!(f, " row {row},")?;
                }
                write!(
                    f,
                    " column `{}`: expected {}, found {}",
                    e.column, e.expected, e.found
                )
            }
            ErrorKind::JsonSyntax { column, message } => write!(
                f,
                "{}:{}:{column}: not valid JSON: {message}",
                self.source_name, self.line
            ),
            ErrorKind::LineTooLong { limit } => write!(
                f,
                "{}:{}: a line longer than {limit} bytes",
                self.source_name, self.line
            ),
        }
    }
}

impl std::error::Error for SwfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
