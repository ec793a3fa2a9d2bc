//! Loading a result set for `diff`: a results directory, one experiment's directory, a git
//! revision, or a recorded run (`@name`, `@latest`, `@~N`) — the last two looked up in the
//! runs `results/.schedlab/runs.json` records (docs/diff.md).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::{Array, Float64Array, Int64Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::cache;
use crate::execute::pipeline::{RunRecord, recorded_runs};

/// Experiment → cell id → metric → value (`None` when the statistic is undefined).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultSet {
    /// What the user named (a path or a revision), for headings.
    pub label: String,
    pub experiments: BTreeMap<String, BTreeMap<String, BTreeMap<String, Option<f64>>>>,
}

/// Loads `what`: a directory holding `summary.parquet`, a directory of such directories, or a
/// git revision looked up in `results`' run records.
pub fn load(what: &str, results: &Path) -> Result<ResultSet, String> {
    let path = Path::new(what);
    let mut set = ResultSet {
        label: what.to_string(),
        ..ResultSet::default()
    };
    if path.join("summary.parquet").is_file() {
        let name = path
            .file_name()
            .map_or("experiment".into(), |n| n.to_string_lossy().into_owned());
        set.experiments
            .insert(name, read_summary(&path.join("summary.parquet"))?);
        return Ok(set);
    }
    if path.is_dir() {
        for entry in std::fs::read_dir(path)
            .map_err(|e| format!("failed to read {what}: {e}"))?
            .flatten()
        {
            let summary = entry.path().join("summary.parquet");
            if summary.is_file() {
                let name = entry.file_name().to_string_lossy().into_owned();
                set.experiments.insert(name, read_summary(&summary)?);
            }
        }
        if set.experiments.is_empty() {
            return Err(format!(
                "{what} holds no result set (no summary.parquet in it or its folders)"
            ));
        }
        return Ok(set);
    }
    let records = recorded_runs(results);
    let runs = match what.strip_prefix('@') {
        Some(run) => recorded_run(&records, run, results)?,
        None => {
            let commit = resolve_revision(what)?;
            let at_commit: Vec<&RunRecord> = records
                .iter()
                .filter(|r| r.commit.as_deref().is_some_and(|c| c == commit))
                .collect();
            if at_commit.is_empty() {
                return Err(format!(
                    "no results recorded for {what} (commit {}) in {}; run `make all` (or `schedlab run`) at that commit first",
                    &commit[..12.min(commit.len())],
                    results.display()
                ));
            }
            // The latest run of each experiment at that commit.
            latest_by_experiment(at_commit)
        }
    };
    let entries = cache::EntryStore::new(&cache::state_dir(results));
    for run in runs {
        let dir: PathBuf = entries.open(&run.key).map_err(|e| {
            format!(
                "the results of {what} for {} are no longer in the cache ({e}); `schedlab gc` keeps only named runs and what the manifests reach",
                run.experiment
            )
        })?;
        set.experiments.insert(
            run.experiment.clone(),
            read_summary(&dir.join("summary.parquet"))?,
        );
    }
    Ok(set)
}

/// Each experiment's last record among `records` (which are oldest first).
fn latest_by_experiment(records: Vec<&RunRecord>) -> Vec<&RunRecord> {
    let mut latest: BTreeMap<&str, &RunRecord> = BTreeMap::new();
    for r in records {
        latest.insert(&r.experiment, r);
    }
    latest.into_values().collect()
}

/// The runs `@<run>` names: `@<name>` the run given that name (`run --name`), `@latest` each
/// experiment's latest run, `@~N` each experiment's N-th run before its latest (`@~1`: the
/// previous one), whatever the commit.
fn recorded_run<'r>(
    records: &'r [RunRecord],
    run: &str,
    results: &Path,
) -> Result<Vec<&'r RunRecord>, String> {
    let back = if run == "latest" {
        Some(0)
    } else if let Some(n) = run.strip_prefix('~') {
        Some(n.parse::<usize>().map_err(|_| {
            format!("@{run}: expected @~N with N a whole number of runs back, e.g. @~1 for the previous run")
        })?)
    } else {
        None
    };
    let runs: Vec<&RunRecord> = match back {
        Some(n) => {
            let mut by_experiment: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
            for r in records {
                by_experiment.entry(&r.experiment).or_default().push(r);
            }
            by_experiment
                .into_values()
                .filter_map(|runs| runs.len().checked_sub(n + 1).map(|i| runs[i]))
                .collect()
        }
        None => records
            .iter()
            .filter(|r| r.name.as_deref() == Some(run))
            .collect(),
    };
    if !runs.is_empty() {
        return Ok(runs);
    }
    let names: std::collections::BTreeSet<&str> =
        records.iter().filter_map(|r| r.name.as_deref()).collect();
    let named = if names.is_empty() {
        "no run has a name (`schedlab run --name NAME` gives one)".to_string()
    } else {
        format!(
            "the named runs are {}",
            names
                .iter()
                .map(|n| format!("@{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(match back {
        Some(n) => format!(
            "@{run}: no experiment in {} has {} recorded runs; {named}",
            results.display(),
            n + 1
        ),
        None => format!(
            "@{run}: no run named {run:?} in {}; {named}",
            results.display()
        ),
    })
}

/// The full commit hash of a git revision, or an error saying it is neither a path nor one.
fn resolve_revision(rev: &str) -> Result<String, String> {
    let out = Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
        .output()
        .map_err(|e| format!("{rev} is not a result directory, and git could not be run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{rev} is neither a result directory nor a git revision"
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Cell id → numeric columns of a summary.parquet.
fn read_summary(path: &Path) -> Result<BTreeMap<String, BTreeMap<String, Option<f64>>>, String> {
    let err = |e: &dyn std::fmt::Display| format!("failed to read {}: {e}", path.display());
    let file = File::open(path).map_err(|e| err(&e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| err(&e))?;
    let mut cells = BTreeMap::new();
    for batch in reader {
        let batch = batch.map_err(|e| err(&e))?;
        let ids = batch
            .column_by_name("cell")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
            .ok_or_else(|| err(&"no `cell` column"))?;
        for row in 0..batch.num_rows() {
            let mut metrics = BTreeMap::new();
            for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                let value = if let Some(a) = column.as_any().downcast_ref::<Float64Array>() {
                    (!a.is_null(row)).then(|| a.value(row))
                } else if let Some(a) = column.as_any().downcast_ref::<Int64Array>() {
                    (!a.is_null(row)).then(|| a.value(row) as f64)
                } else {
                    continue;
                };
                metrics.insert(field.name().clone(), value);
            }
            cells.insert(ids.value(row).to_string(), metrics);
        }
    }
    Ok(cells)
}
