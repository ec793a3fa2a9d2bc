//! `schedlab trace import`: a trace from any source schedlab reads — a `sacct` dump, a job table
//! through its mapping, a Batsim workload, an SWF file — written as a standard SWF file for other
//! tools (docs/sources.md, "Importing to SWF"). The header says where the jobs came from (the
//! file as named, its blake3 digest, how it was read) and how many rows were left out, by
//! reason; reading the result gives the same jobs as reading the source.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CliError;
use super::machine::ReadArgs;
use super::output::TextOutput;
use crate::swf::{Trace, TraceFormat};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab trace import workloads/samples/slurm/sacct.txt --mapping slurm -o sacct.swf
  schedlab trace import cluster_log.csv --mapping helios --keep-status COMPLETED -o helios.swf
  schedlab trace import workload.json -o - | head

Exit codes: 0 written; 1 the file could not be written; 2 bad input (a malformed row: the message
names it; no job at all).")]
pub struct ImportArgs {
    /// The source: a sacct dump or job table (with --mapping), a Batsim workload (`.json`) or
    /// an SWF trace.
    pub source: PathBuf,
    /// Where to write the SWF file (`-`: standard output).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Skip malformed rows (counted in the header) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

pub fn run(args: ImportArgs) -> Result<(), CliError> {
    super::output::check_folders(&[("-o", Some(&args.output))])?;
    let options = args.read.options()?.for_path(&args.source);
    let trace = super::load_trace_with(&args.source, args.lenient, &options)?;
    let digest = digest(&args.source)
        .map_err(|e| CliError::input(format!("failed to read {}: {e}", args.source.display())))?;
    let notes = notes(&trace, &options.format, &args.source, &digest);
    let output = TextOutput::create(&args.output)?;
    let io_err = |e: std::io::Error| output.write_error(e);
    let mut out = output.writer()?;
    let inexact = crate::swf::write_trace(&mut out, &trace, &notes).map_err(io_err)?;
    out.flush().map_err(io_err)?;
    drop(out);
    let name = output.name();
    output.commit()?;
    eprintln!(
        "wrote {} jobs to {name} (source rows left out: {})",
        trace.workload.len(),
        trace.anomalies.skipped() + trace.malformed.count
    );
    if inexact.memory_rounded > 0 {
        eprintln!(
            "warning: {} jobs ask for memory per node that is not a whole number of KB per core: written rounded down",
            inexact.memory_rounded
        );
    }
    if inexact.constraints_dropped > 0 {
        eprintln!(
            "warning: {} jobs ask for whole nodes, a cluster or several properties, which SWF cannot hold: left out of their lines",
            inexact.constraints_dropped
        );
    }
    Ok(())
}

/// The source file's blake3 digest, in hex.
fn digest(path: &Path) -> std::io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// The header notes: the source, how it was read, the rows left out by reason and what was kept
/// though unusual, and the names behind the user, group and queue numbers.
fn notes(trace: &Trace, format: &TraceFormat, source: &Path, digest: &str) -> Vec<String> {
    let name = source.file_name().map_or_else(
        || source.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let how = match format {
        TraceFormat::Swf => "an SWF trace".to_string(),
        TraceFormat::Batsim => "a Batsim JSON workload".to_string(),
        TraceFormat::Table(r) => {
            let mut how = format!("a job table through the mapping `{}`", r.name);
            let mut keep = Vec::new();
            if let Some(s) = &r.keep_status {
                keep.push(format!("status {}", s.join(",")));
            }
            if let Some(p) = &r.keep_partitions {
                keep.push(format!("partitions {}", p.join(",")));
            }
            if let Some(s) = r.since {
                keep.push(format!("since {s}"));
            }
            if let Some(u) = r.until {
                keep.push(format!("until {u}"));
            }
            if !keep.is_empty() {
                how.push_str(&format!(", keeping {}", keep.join("; ")));
            }
            how
        }
    };
    let a = &trace.anomalies;
    let by_reason = |list: &[(&str, u64)]| {
        let parts: Vec<String> = list
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    };
    let mut notes = vec![
        format!(
            "Note: imported by schedlab {} from {name} (blake3 {digest}), read as {how}",
            env!("CARGO_PKG_VERSION")
        ),
        format!(
            "Note: {} records, {} jobs written; left out: {} ({}); malformed rows skipped: {}",
            trace.records,
            trace.workload.len(),
            a.skipped(),
            by_reason(&a.skipped_by_reason()),
            trace.malformed.count
        ),
        format!(
            "Note: kept as they are: {}",
            by_reason(&[
                ("runtime_exceeds_request", a.runtime_exceeds_request),
                (
                    "missing_request (requested time = run time)",
                    a.missing_request
                ),
                ("out_of_order (sorted)", a.out_of_order),
                ("fractional_times (rounded)", a.fractional_times),
                ("fractional_amounts (rounded up)", a.fractional_amounts),
                ("node_spec_procs_mismatch", a.node_spec_procs_mismatch),
            ])
        ),
    ];
    let w = &trace.workload;
    for (what, names) in [
        ("users", &w.names.users),
        ("groups", &w.names.groups),
        ("queues", &w.queue_names),
    ] {
        if !names.is_empty() {
            let list: Vec<String> = names
                .iter()
                .map(|(id, n)| format!("{id}={}", n.replace(char::is_control, " ")))
                .collect();
            notes.push(format!("Note: {what} by number: {}", list.join(" ")));
        }
    }
    notes
}
