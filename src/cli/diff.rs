//! `schedlab diff A B`: compare two result sets (directories or git revisions).

use std::path::PathBuf;

use super::CliError;
use crate::diff;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab diff HEAD~1 HEAD                      two commits' runs (recorded in results/)
  schedlab diff @~1 @latest                      the last two runs, committed or not
  schedlab diff @baseline @latest                against the run named by `run --name baseline`
  schedlab diff results-old/ results/ --fail-on 'wait_mean>5%' --format markdown

Exit codes: 0 compared (no threshold crossed); 1 a --fail-on threshold was crossed;
2 bad input (neither a result directory, a git revision with recorded runs, nor a recorded
run).")]
pub struct Args {
    /// Result set A: a results directory, an experiment's directory, a git revision, or a
    /// recorded run: `@latest`, `@~N` (N runs before the latest), `@NAME` (`run --name`).
    pub a: String,
    /// Result set B (same forms).
    pub b: String,
    /// Results directory where runs of git revisions are looked up.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Exit with code 1 when a change crosses this threshold: `wait_mean>5%`, `utilization<-1%`,
    /// `makespan>3600` (repeatable).
    #[arg(long = "fail-on", value_name = "THRESHOLD")]
    pub fail_on: Vec<String>,
    /// Output format: an aligned table, Markdown (for a pull request) or JSON.
    #[arg(long, default_value = "table")]
    pub format: DiffFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Table,
    Markdown,
    Json,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let thresholds: Vec<_> = args
        .fail_on
        .iter()
        .map(|t| diff::parse_threshold(t))
        .collect::<Result<_, _>>()
        .map_err(CliError::input)?;
    let a = diff::load(&args.a, &args.results).map_err(CliError::input)?;
    let b = diff::load(&args.b, &args.results).map_err(CliError::input)?;
    let result = diff::compare(&a, &b);
    let text = match args.format {
        DiffFormat::Table => diff::render_table(&result),
        DiffFormat::Markdown => diff::render_markdown(&result),
        DiffFormat::Json => diff::render_json(&result),
    };
    print!("{text}");
    let violations: Vec<_> = thresholds
        .iter()
        .flat_map(|t| t.violations(&result))
        .collect();
    for v in &violations {
        eprintln!(
            "threshold crossed: {} in {} ({})",
            v.threshold, v.cell, v.change
        );
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "{} threshold violations",
            violations.len()
        )))
    }
}
