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
    Empty,
}

impl fmt::Display for SwfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Io(e) if self.line == 0 => {
                write!(f, "failed to read {}: {e}", self.source_name)
            }
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
            ErrorKind::Empty => write!(f, "{}: no jobs in the trace", self.source_name),
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
