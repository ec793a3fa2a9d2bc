//! `schedlab trace …`: look at a trace without simulating it.

use std::path::PathBuf;

use super::{CliError, Format, load_trace};
use crate::swf::{TraceInfo, render_info};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Jobs, time span, machine size, users, offered load and anomaly counts.
    Info(InfoArgs),
    /// Per-group runtime, wait and interarrival statistics, ŴT, daily cycle and R0(t).
    Stats(super::stats::StatsArgs),
    /// Expected end times on the recorded schedule: violated EETs, VEET_u, WT_u, heatmap.
    Eet(Box<super::eet::EetArgs>),
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab trace info workloads/SDSC-SP2-1998-4.2-cln.swf.gz
  schedlab trace info trace.swf --lenient --format json

Exit codes: 0 read; 2 bad input (a malformed line: the message names it; a damaged file).")]
pub struct InfoArgs {
    /// SWF trace, plain or gzip-compressed.
    pub trace: PathBuf,
    /// Skip malformed lines (counted) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    #[arg(long, default_value = "table")]
    pub format: Format,
}

pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Stats(args) => super::stats::run(args),
        Command::Eet(args) => super::eet::run(*args),
        Command::Info(args) => {
            let trace = load_trace(&args.trace, args.lenient)?;
            let info = TraceInfo::from_trace(&trace);
            match args.format {
                Format::Table => print!("{}", render_info(&info)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&info).expect("info serializes")
                ),
            }
            for e in &trace.malformed.first {
                eprintln!("warning: skipped {e}");
            }
            Ok(())
        }
    }
}
