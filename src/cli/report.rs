//! `schedlab report`: render `reports/<experiment>.html` and `.md` (with sibling SVG charts)
//! from the experiment's stored results.

use std::path::PathBuf;

use super::{CliError, manifests};
use crate::cache::write_atomic;
use crate::report::{self, data};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  schedlab report                                every experiment, into reports/
  schedlab report experiments/easy-vs-fcfs.yaml --date 2026-01-01

Exit codes: 0 written; 1 a report could not be written; 2 bad input (manifests, missing
results: run the experiment first, a template outside the project).")]
pub struct Args {
    /// Manifests whose experiments to report [default: experiments/*.yaml].
    pub manifests: Vec<PathBuf>,
    /// Results directory (run the experiments first).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Where to write the reports.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Write this date into the reports instead of today's (for reproducible reports).
    #[arg(long, value_name = "TEXT")]
    pub date: Option<String>,
    /// Let a manifest's `reports.template` name a file outside its project (docs/manifest.md,
    /// "Trust"). Only for manifests you trust.
    #[arg(long)]
    pub allow_template_outside_project: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let manifests = manifests::load_all(&args.manifests)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::failed(format!("failed to create {}: {e}", args.out.display())))?;
    let date = args.date.clone().unwrap_or_else(today);
    for m in &manifests {
        let text = std::fs::read_to_string(&m.path)
            .map_err(|e| CliError::input(format!("failed to read {}: {e}", m.path.display())))?;
        let gantt_cell = m
            .report
            .gantt_cell
            .clone()
            .unwrap_or_else(|| m.cells[0].id.clone());
        let dir = args.results.join(&m.name);
        let loaded = data::load(
            m,
            &dir,
            &gantt_cell,
            m.report.gantt_start,
            m.report.gantt_seconds,
        )
        .map_err(|e| {
            CliError::input(e).with_hint(format!("run `schedlab run {}` first", m.path.display()))
        })?;
        let allow = args.allow_template_outside_project;
        let read = |path: Option<std::path::PathBuf>, built_in: &str| match path {
            Some(path) => std::fs::read_to_string(&path).map_err(|e| {
                CliError::input(format!(
                    "failed to read report template {}: {e}",
                    path.display()
                ))
            }),
            None => Ok(built_in.to_string()),
        };
        let html_template = read(
            crate::manifest::trust::template(m, allow).map_err(CliError::input)?,
            report::HTML_TEMPLATE,
        )?;
        let md_template = read(
            crate::manifest::trust::markdown_template(m, allow).map_err(CliError::input)?,
            report::MD_TEMPLATE,
        )?;
        let rendered = report::render(m, &text, &loaded, &date, (&html_template, &md_template))
            .map_err(CliError::input)?;
        let write = |name: &str, body: &str| {
            let path = args.out.join(name);
            write_atomic(&path, body.as_bytes()).map_err(CliError::failed)
        };
        if m.report.formats.iter().any(|f| f == "html") {
            write(&format!("{}.html", m.name), &rendered.html)?;
        }
        if m.report.formats.iter().any(|f| f == "md") {
            for (file, svg) in &rendered.charts {
                write(file, svg)?;
            }
            write(&format!("{}.md", m.name), &rendered.markdown)?;
        }
        eprintln!(
            "wrote {}/{}.{{{}}}",
            args.out.display(),
            m.name,
            m.report.formats.join(",")
        );
    }
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
