//! `schedlab trace …`: look at a trace without simulating it.

use std::path::PathBuf;

use super::machine::{ReadArgs, TopologyArgs};
use super::{CliError, Format, load_trace_with};
use crate::swf::{TraceInfo, render_info};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Jobs, time span, machine size, users, offered load and anomaly counts.
    Info(InfoArgs),
    /// Per-group runtime, wait and interarrival statistics, ŴT, daily cycle and R0(t).
    Stats(super::stats::StatsArgs),
    /// Expected end times on the recorded schedule: violated EETs, VEET_u, WT_u, heatmap.
    Eet(Box<super::eet::EetArgs>),
    /// Every job's penalty under each fairshare model on a system, and who pays more under
    /// pe_min than under cpu (Klusáček & Rudová §4).
    Penalties(Box<super::penalties::PenaltiesArgs>),
    /// Write a trace from any source (a sacct dump or job table with --mapping, a Batsim
    /// workload) as an SWF file for other tools, its header saying where the jobs came from and
    /// how many rows were left out, by reason.
    Import(Box<super::import::ImportArgs>),
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
    #[command(flatten)]
    pub read: ReadArgs,
    /// Count the jobs that fit no node of a pool of this many processors.
    #[arg(long)]
    pub procs: Option<u32>,
    /// With --procs: whole nodes of this many processors.
    #[arg(long, value_name = "K", requires = "procs")]
    pub node_size: Option<u32>,
    #[command(flatten)]
    pub topology: TopologyArgs,
    /// Output format: an aligned table or JSON.
    #[arg(long, default_value = "table")]
    pub format: Format,
}

pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Stats(args) => super::stats::run(args),
        Command::Eet(args) => super::eet::run(*args),
        Command::Penalties(args) => super::penalties::run(*args),
        Command::Import(args) => super::import::run(*args),
        Command::Info(args) => {
            if args.topology.machines.is_some() && args.procs.is_some() {
                return Err(CliError::input("give --machines or --procs, not both"));
            }
            let trace = load_trace_with(&args.trace, args.lenient, &args.read.options()?)?;
            let mut info = TraceInfo::from_trace(&trace);
            let machine = match (args.topology.machine()?, args.procs) {
                (Some(m), _) => Some(m),
                (None, Some(p)) => Some(super::simulate::machine(p, args.node_size)?),
                (None, None) => None,
            };
            if let Some(machine) = &machine {
                info.check_machine(&trace, machine)
                    .map_err(CliError::input)?;
            }
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
