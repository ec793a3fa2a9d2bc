//! [`ApiError`]: an error of the library's front door, as both doors report it — the message
//! (with file, line and key path where the input has them), a hint when the fix is known, and
//! whether the input was at fault or the work failed (the CLI's exit codes 2 and 1; the Python
//! package's `ValueError` and `RuntimeError`).

/// What went wrong, and whose fault it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub message: String,
    pub hint: Option<String>,
    pub kind: ErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: a trace, a setting, a manifest.
    Input,
    /// The work failed: a simulation error, a policy that raised, a file that could not be
    /// written.
    Failed,
}

impl ApiError {
    pub fn input(message: impl std::fmt::Display) -> Self {
        ApiError {
            message: message.to_string(),
            hint: None,
            kind: ErrorKind::Input,
        }
    }

    pub fn failed(message: impl std::fmt::Display) -> Self {
        ApiError {
            message: message.to_string(),
            hint: None,
            kind: ErrorKind::Failed,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}
