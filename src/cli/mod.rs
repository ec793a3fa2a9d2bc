//! The command line (clap derive): one file per subcommand, each a thin pipeline over the
//! library. Data goes to stdout, messages to stderr; errors print once, as `error: …` with their
//! cause chain and a `hint:` where the fix is known.

mod simulate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit codes users and scripts can rely on (docs/cli.md).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The work ran but something failed (a node, a threshold).
    pub const FAILED: u8 = 1;
    /// Bad input: arguments, files, manifests.
    pub const INPUT: u8 = 2;
}

/// Reproducible job-scheduling studies: SWF traces, FCFS / EASY / conservative backfilling,
/// cached experiment grids.
#[derive(Debug, Parser)]
#[command(name = "schedlab", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate one trace under one scheduler and print the run summary.
    Simulate(simulate::Args),
}

/// An error as the CLI reports it: a message (with its causes) and an exit code.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub hint: Option<String>,
    pub code: u8,
}

impl CliError {
    pub fn input(message: impl std::fmt::Display) -> Self {
        CliError {
            message: message.to_string(),
            hint: None,
            code: exit::INPUT,
        }
    }

    pub fn failed(message: impl std::fmt::Display) -> Self {
        CliError {
            message: message.to_string(),
            hint: None,
            code: exit::FAILED,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("error: {}", e.message);
            if let Some(hint) = e.hint {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(e.code)
        }
    }
}
