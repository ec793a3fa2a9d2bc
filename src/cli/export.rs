//! `schedlab export`: a simulated schedule — one cell of an experiment's `jobs.parquet`, or a
//! `simulate --jobs-out` file — written as SWF with the simulated waits filled in, for tools
//! that read the Parallel Workloads Archive's format (docs/swf.md, "Exporting a schedule"), or
//! as Batsim's `jobs.csv` for evalys (`--format batsim`, docs/sources.md). Reads stored results
//! only; SWF streams them batch by batch, Batsim holds the cell's jobs to place them.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_array::{Array, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::CliError;
use super::output::TextOutput;
use crate::manifest::did_you_mean;
use crate::swf::{ScheduleHeader, ScheduledJob, write_schedule_header, write_scheduled_job};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  schedlab export results/easy-vs-fcfs/jobs.parquet --cell sdsc-sp2.easy.interval-event -o sp2-easy.swf
  schedlab simulate trace.swf.gz -s easy --jobs-out jobs.parquet && schedlab export jobs.parquet -o easy.swf
  schedlab export jobs.parquet -o - | head -20
  schedlab export jobs.parquet --format batsim -o jobs.csv    Batsim's jobs.csv, for evalys

Exit codes: 0 written; 1 the file could not be written; 2 bad input (no such file or cell).")]
pub struct Args {
    /// A `jobs.parquet`: an experiment's (results/<experiment>/jobs.parquet) or from
    /// `simulate --jobs-out`.
    pub jobs: PathBuf,
    /// The cell to export (required when the file holds several).
    #[arg(long)]
    pub cell: Option<String>,
    /// Where to write the file (`-`: standard output).
    #[arg(short, long)]
    pub output: PathBuf,
    /// swf: the SWF with simulated waits; batsim: Batsim's jobs.csv (evalys reads it).
    #[arg(long, value_enum, default_value = "swf")]
    pub format: ExportFormat,
}

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Swf,
    Batsim,
}

pub fn run(args: Args) -> Result<(), CliError> {
    super::output::check_folders(&[("-o", Some(&args.output))])?;
    let input = JobsFile::open(&args.jobs).map_err(CliError::input)?;
    let cell = match (&args.cell, input.cells.as_slice()) {
        (Some(c), cells) if cells.is_empty() || cells.contains(c) => Some(c.clone()),
        (Some(c), cells) => {
            let err = CliError::input(format!("no cell `{c}` in {}", args.jobs.display()));
            return Err(match did_you_mean(c, cells.iter().map(String::as_str)) {
                Some(s) => err.with_hint(format!("did you mean `{s}`?")),
                None => err.with_hint(format!("cells: {}", preview(cells))),
            });
        }
        (None, []) => None,
        (None, [only]) => Some(only.clone()),
        (None, cells) => {
            return Err(CliError::input(format!(
                "{} holds {} cells; say which with --cell",
                args.jobs.display(),
                cells.len()
            ))
            .with_hint(format!("cells: {}", preview(cells))));
        }
    };
    let machine = input.machine(cell.as_deref()).map_err(CliError::input)?;
    if args.format == ExportFormat::Batsim {
        return export_batsim(&args, &input, cell.as_deref(), &machine);
    }
    let jobs = input.count(cell.as_deref()).map_err(CliError::input)?;
    let mut notes = vec![format!(
        "simulated schedule from {}{}",
        args.jobs.display(),
        cell.as_ref()
            .map_or(String::new(), |c| format!(", cell {c}"))
    )];
    if let Some(e) = input.metadata("schedlab.experiment") {
        notes.push(format!("experiment {e}"));
    }
    notes.push(
        "field 3 is the simulated wait; status 0 marks a job killed at its requested time".into(),
    );
    let header = ScheduleHeader {
        notes,
        jobs,
        max_procs: machine.procs,
        max_nodes: machine
            .node_size
            .zip(machine.procs)
            .map(|(k, p)| p / k.max(1)),
    };
    let output = TextOutput::create(&args.output)?;
    let io_err = |e: std::io::Error| output.write_error(e);
    let mut out = output.writer()?;
    write_schedule_header(&mut out, &header).map_err(io_err)?;
    let mut rows = Vec::new();
    let mut written = Ok(());
    input
        .for_each_batch(cell.as_deref(), |batch| {
            rows.clear();
            batch_jobs(batch, machine.node_size, &mut rows)?;
            for job in &rows {
                if written.is_ok() {
                    written = write_scheduled_job(&mut out, job);
                }
            }
            Ok(())
        })
        .map_err(CliError::input)?;
    written.map_err(io_err)?;
    out.flush().map_err(io_err)?;
    drop(out);
    let name = output.name();
    output.commit()?;
    eprintln!("wrote {jobs} jobs to {name}");
    Ok(())
}

/// Writes the cell's schedule as Batsim's `jobs.csv`: the jobs held, placed on resource
/// numbers (`batsim::jobs_csv::allocate`), written in the file's order.
fn export_batsim(
    args: &Args,
    input: &JobsFile,
    cell: Option<&str>,
    machine: &Machine,
) -> Result<(), CliError> {
    use crate::batsim::jobs_csv;
    let mut jobs = Vec::new();
    let mut topology = false;
    input
        .for_each_batch(cell, |batch| {
            if let Some(c) = batch.column_by_name("cluster") {
                topology |= c.null_count() < c.len();
            }
            let id = ints(batch, "job_id")?;
            let submit = ints(batch, "submit")?;
            let start = ints(batch, "start")?;
            let end = ints(batch, "end")?;
            let requested = ints(batch, "requested_time")?;
            let units = ints(batch, "units")?;
            let killed: &BooleanArray = column(batch, "killed")?;
            for i in 0..batch.num_rows() {
                jobs.push(jobs_csv::ScheduledJob {
                    id: id.value(i),
                    submit: submit.value(i),
                    start: start.value(i),
                    end: end.value(i),
                    requested_time: requested.value(i),
                    units: units.value(i).max(0) as u64,
                    killed: killed.value(i),
                });
            }
            Ok(())
        })
        .map_err(CliError::input)?;
    // A uniform machine's allocation units; a topology's units are not one numbered pool.
    let capacity = match (topology, machine.procs, machine.node_size) {
        (true, _, _) => None,
        (false, Some(p), Some(k)) => Some(p / k.max(1)),
        (false, p, None) => p,
        (false, None, Some(_)) => None,
    };
    let resources = jobs_csv::allocate(&jobs, capacity).map_err(|e| {
        CliError::input(format!(
            "cannot place the schedule of {} on its machine: {e}",
            args.jobs.display()
        ))
    })?;
    let workload = cell.unwrap_or("w0");
    let output = TextOutput::create(&args.output)?;
    let io_err = |e: std::io::Error| output.write_error(e);
    let mut out = output.writer()?;
    jobs_csv::write_header(&mut out).map_err(io_err)?;
    for (job, held) in jobs.iter().zip(&resources) {
        jobs_csv::write_row(&mut out, workload, job, held).map_err(io_err)?;
    }
    out.flush().map_err(io_err)?;
    drop(out);
    let name = output.name();
    output.commit()?;
    eprintln!(
        "wrote {} jobs to {name} (Batsim's jobs.csv{})",
        jobs.len(),
        if topology {
            "; resources numbered per allocation unit, not per topology node"
        } else {
            ""
        }
    );
    Ok(())
}

fn preview(cells: &[String]) -> String {
    let mut shown: Vec<&str> = cells.iter().take(8).map(String::as_str).collect();
    if cells.len() > 8 {
        shown.push("…");
    }
    shown.join(", ")
}

/// The machine a schedule ran on, for the header and the allocated processors.
struct Machine {
    procs: Option<u64>,
    node_size: Option<u64>,
}

/// A `jobs.parquet` being exported.
struct JobsFile {
    path: PathBuf,
    metadata: Vec<(String, String)>,
    /// Distinct cells in file order (empty without a `cell` column).
    cells: Vec<String>,
}

fn open_reader(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>, String> {
    let file = File::open(path).map_err(|e| format!("failed to open {}: {e}", path.display()))?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| format!("{} is not a Parquet file: {e}", path.display()))
}

impl JobsFile {
    fn open(path: &Path) -> Result<JobsFile, String> {
        let builder = open_reader(path)?;
        let metadata = builder
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .map(|kv| {
                kv.iter()
                    .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        let schema = builder.schema().clone();
        for needed in [
            "job_id", "submit", "wait", "run", "procs", "units", "killed",
        ] {
            if schema.field_with_name(needed).is_err() {
                return Err(format!(
                    "{} is not a schedlab jobs.parquet (no `{needed}` column)",
                    path.display()
                ));
            }
        }
        let mut cells: Vec<String> = Vec::new();
        if let Ok(index) = schema.index_of("cell") {
            let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), [index]);
            let reader = builder
                .with_projection(mask)
                .build()
                .map_err(|e| e.to_string())?;
            for batch in reader {
                let batch = batch.map_err(|e| e.to_string())?;
                let column = strings(&batch, "cell")?;
                for i in 0..column.len() {
                    if cells.last().map(String::as_str) != Some(column.value(i)) {
                        cells.push(column.value(i).to_string());
                    }
                }
            }
        }
        Ok(JobsFile {
            path: path.to_path_buf(),
            metadata,
            cells,
        })
    }

    fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The machine of `cell`: from the metadata of a `simulate --jobs-out` file, else from the
    /// experiment's `summary.parquet` next to the file (absent: unknown).
    fn machine(&self, cell: Option<&str>) -> Result<Machine, String> {
        let number = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok());
        if self.metadata("schedlab.procs").is_some() {
            return Ok(Machine {
                procs: number(self.metadata("schedlab.procs")),
                node_size: number(self.metadata("schedlab.node_size")),
            });
        }
        let summary = self.path.with_file_name("summary.parquet");
        let (Some(cell), true) = (cell, summary.is_file()) else {
            return Ok(Machine {
                procs: None,
                node_size: None,
            });
        };
        let reader = open_reader(&summary)?.build().map_err(|e| e.to_string())?;
        for batch in reader {
            let batch = batch.map_err(|e| e.to_string())?;
            let cells = strings(&batch, "cell")?;
            let procs = ints(&batch, "procs")?;
            let node_size = ints(&batch, "node_size")?;
            for row in 0..batch.num_rows() {
                if cells.value(row) == cell {
                    let get = |a: &Int64Array| (!a.is_null(row)).then(|| a.value(row) as u64);
                    return Ok(Machine {
                        procs: get(procs),
                        node_size: get(node_size),
                    });
                }
            }
        }
        Ok(Machine {
            procs: None,
            node_size: None,
        })
    }

    /// The jobs of `cell` (all jobs when `None`).
    fn count(&self, cell: Option<&str>) -> Result<u64, String> {
        let mut n = 0;
        self.for_each_batch(cell, |batch| {
            n += batch.num_rows() as u64;
            Ok(())
        })?;
        Ok(n)
    }

    /// Calls `f` with each batch of the rows of `cell`.
    fn for_each_batch(
        &self,
        cell: Option<&str>,
        mut f: impl FnMut(&RecordBatch) -> Result<(), String>,
    ) -> Result<(), String> {
        let reader = open_reader(&self.path)?
            .build()
            .map_err(|e| e.to_string())?;
        for batch in reader {
            let batch = batch.map_err(|e| format!("{}: {e}", self.path.display()))?;
            let batch = match cell {
                Some(c) if batch.column_by_name("cell").is_some() => {
                    let ids = strings(&batch, "cell")?;
                    let keep: BooleanArray =
                        (0..ids.len()).map(|i| Some(ids.value(i) == c)).collect();
                    arrow_select::filter::filter_record_batch(&batch, &keep)
                        .map_err(|e| e.to_string())?
                }
                _ => batch,
            };
            if batch.num_rows() > 0 {
                f(&batch)?;
            }
        }
        Ok(())
    }
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, String> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| format!("column `{name}` is missing or of another type"))
}

fn strings<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray, String> {
    column(batch, name)
}

fn ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array, String> {
    column(batch, name)
}

/// The jobs of `batch`; on exclusive nodes a job holds `units × node_size` processors.
fn batch_jobs(
    batch: &RecordBatch,
    node_size: Option<u64>,
    out: &mut Vec<ScheduledJob>,
) -> Result<(), String> {
    let id = ints(batch, "job_id")?;
    let submit = ints(batch, "submit")?;
    let wait = ints(batch, "wait")?;
    let run = ints(batch, "run")?;
    let procs = ints(batch, "procs")?;
    let units = ints(batch, "units")?;
    let requested = ints(batch, "requested_time")?;
    let killed: &BooleanArray = column(batch, "killed")?;
    let user: &Int32Array = column(batch, "user")?;
    let group: &Int32Array = column(batch, "group")?;
    let queue: &Int32Array = column(batch, "queue")?;
    for i in 0..batch.num_rows() {
        let allocated = match node_size {
            Some(k) => units.value(i) * k as i64,
            None => procs.value(i),
        };
        out.push(ScheduledJob {
            id: id.value(i),
            submit: submit.value(i),
            wait: wait.value(i),
            run: run.value(i),
            allocated,
            requested_procs: procs.value(i),
            requested_time: requested.value(i),
            killed: killed.value(i),
            user: user.value(i),
            group: group.value(i),
            queue: queue.value(i),
        });
    }
    Ok(())
}
