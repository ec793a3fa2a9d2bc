//! The command line (clap derive): one file per subcommand, each a thin pipeline over the
//! library. Data goes to stdout, messages to stderr; errors print once, as `error: …` with their
//! cause chain and a `hint:` where the fix is known.

mod completions;
mod diff;
mod eet;
mod export;
mod fit;
mod gc;
mod generate;
mod import;
mod machine;
mod manifests;
mod output;
mod penalties;
mod plan;
mod provenance;
pub mod python;
mod report;
mod run;
mod simulate;
mod stats;
mod status;
mod trace;
mod worker;

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
    /// `run` stopped by SIGHUP (128 + 1), SIGINT (Ctrl-C, 128 + 2) or SIGTERM (128 + 15), as
    /// shells report a command killed by that signal; running again resumes.
    pub const HUNG_UP: u8 = 129;
    pub const INTERRUPTED: u8 = 130;
    pub const TERMINATED: u8 = 143;
}

/// Reproducible job-scheduling studies: SWF traces, FCFS / EASY / conservative backfilling,
/// cached experiment grids.
#[derive(Debug, Parser)]
#[command(
    name = "schedlab",
    version,
    about,
    long_about = None,
    max_term_width = 100,
    after_help = "\
Examples:
  schedlab run                          run every experiments/*.yaml (cached cells are reused)
  schedlab trace info trace.swf.gz      what a trace holds
  schedlab completions bash > ~/.local/share/bash-completion/completions/schedlab

Exit codes: 0 success; 1 the work ran but failed; 2 bad input (the message names the file,
line and field); 129/130/143 `run` stopped by SIGHUP/Ctrl-C/SIGTERM (run again to resume);
a closed output pipe ends any command silently (status 141). `schedlab COMMAND --help` for
each command; docs/cli.md for all."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate one trace under one scheduler and print the run summary.
    Simulate(Box<simulate::Args>),
    /// Inspect SWF traces.
    #[command(subcommand)]
    Trace(trace::Command),
    /// Run experiment manifests: simulate what is not cached, in parallel; write results/.
    Run(run::Args),
    /// Dry run: list each node as cached or to run, and why.
    Plan(plan::Args),
    /// Remove cache entries that no current manifest reaches.
    Gc(gc::Args),
    /// Compare two result sets (directories or git revisions) cell by cell.
    Diff(diff::Args),
    /// Render HTML and Markdown reports with charts from stored results.
    Report(report::Args),
    /// Write a synthetic workload of a manifest as an SWF trace.
    Generate(generate::Args),
    /// Fit the Login/Logout arrival model to a trace's most active users; write a manifest.
    Fit(fit::Args),
    /// Write a simulated schedule (a cell of a jobs.parquet) as SWF, waits filled in, or as
    /// Batsim's jobs.csv.
    Export(export::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Show the Slurm batches of a results directory and what is left to run.
    Status(status::Args),
    /// Compute the nodes of one Slurm array task (run by Slurm, not by users).
    #[command(hide = true)]
    Worker(worker::Args),
}

/// How to print a result on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Reads a trace as the SWF standard says, mapping reader errors to input errors.
pub fn load_trace(path: &std::path::Path, lenient: bool) -> Result<crate::swf::Trace, CliError> {
    load_trace_with(path, lenient, &crate::swf::ReadOptions::default())
}

/// Reads a trace with explicit reading options, mapping reader errors to input errors.
pub fn load_trace_with(
    path: &std::path::Path,
    lenient: bool,
    options: &crate::swf::ReadOptions,
) -> Result<crate::swf::Trace, CliError> {
    let trace = crate::api::trace::load(path, lenient, options)?;
    if trace.malformed.count > 0 {
        eprintln!(
            "warning: {}: skipped {} malformed lines",
            trace.source, trace.malformed.count
        );
    }
    Ok(trace)
}

/// Renders a flat serializable struct as aligned `key  value` lines, in declaration order.
pub fn render_table<T: serde::Serialize>(item: &T) -> String {
    render_table_with_units(item, |_| false)
}

/// [`render_table`] with the numbers of the keys `seconds` names printed with their unit, as
/// reports give them ("1.90 h (6,837 s)").
pub fn render_table_with_units<T: serde::Serialize>(
    item: &T,
    seconds: impl Fn(&str) -> bool,
) -> String {
    let value = serde_json::to_value(item).expect("serializes");
    let Some(map) = value.as_object() else {
        return format!("{value}\n");
    };
    let ordered = serde_json::to_string(item).expect("serializes");
    let width = map.keys().map(|k| k.len()).max().unwrap_or(0);
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| ordered.find(&format!("\"{k}\":")).unwrap_or(usize::MAX));
    let mut out = String::new();
    for k in keys {
        let v = &map[k];
        let text = match v {
            serde_json::Value::Number(n) if seconds(k) => {
                crate::report::units::duration_text(n.as_f64().unwrap_or(0.0))
            }
            serde_json::Value::Null => "-".to_string(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) if n.is_f64() => {
                format!("{:.4}", n.as_f64().unwrap_or(0.0))
            }
            other => other.to_string(),
        };
        out.push_str(&format!("{k:width$}  {text}\n"));
    }
    out
}

/// Rust ignores SIGPIPE, so writing to a closed pipe (`schedlab trace info … | head`) fails
/// with an error that `println!` turns into a panic. Restoring the default makes every command
/// end at once and silently, as `cat` or `grep` do (the shell reports status 141); a `run`
/// stopped this way resumes like any interrupted run.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any thread starts; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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

impl From<crate::api::ApiError> for CliError {
    fn from(e: crate::api::ApiError) -> Self {
        CliError {
            message: e.message,
            hint: e.hint,
            code: match e.kind {
                crate::api::error::ErrorKind::Input => exit::INPUT,
                crate::api::error::ErrorKind::Failed => exit::FAILED,
            },
        }
    }
}

pub fn main() -> ExitCode {
    restore_default_sigpipe();
    ExitCode::from(main_with(std::env::args_os()))
}

/// The command line `args` (program name first) run to its exit code, errors printed: what
/// `schedlab` does, and what `python -m schedlab` does through the Python package.
pub fn main_with(args: impl IntoIterator<Item = std::ffi::OsString>) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::INPUT
            } else {
                exit::OK
            };
        }
    };
    match dispatch(cli) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", e.message);
            if let Some(hint) = e.hint {
                eprintln!("hint: {hint}");
            }
            e.code
        }
    }
}

/// Parses `args` (program name first) as a command line.
pub fn parse(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Cli, CliError> {
    Cli::try_parse_from(args).map_err(|e| CliError::input(e.to_string().trim_end()))
}

/// Runs a parsed command.
pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Simulate(args) => simulate::run(*args),
        Command::Trace(command) => trace::run(command),
        Command::Run(args) => run::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Gc(args) => gc::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Report(args) => report::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Fit(args) => fit::run(args),
        Command::Export(args) => export::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Status(args) => status::run(args),
        Command::Worker(args) => worker::run(args),
    }
}
