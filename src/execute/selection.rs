//! The plan-time check that every trace workload's filters keep a job: a window in the wrong
//! units or off the trace's span is refused by `plan` and `run` before anything runs, with the
//! manifest location, the trace's actual span (in the units the window was written in, and as
//! dates when the trace has a start time) and a hint — rather than every cell failing later.
//! Reads the traces of filtered workloads (once each); synthetic workloads are checked when
//! generated.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::manifest::window::{TraceOrigin, WindowUnit, format_unix};
use crate::manifest::{Manifest, ManifestError, WorkloadSpec};
use crate::report::text::fixed;
use crate::sim::Time;
use crate::swf::{Mode, ReadOptions};

/// What the check needs of a trace: its time line and the jobs' submit times.
struct Span {
    origin: TraceOrigin,
    last_submit: Option<Time>,
    jobs: usize,
}

/// Places every relative or dated window of `manifests` on its trace
/// ([`crate::manifest::TransformSpec::place_window`]) and checks every filtered trace workload:
/// the first that keeps no job (or whose dated window cannot be placed) is a located error. A
/// trace that cannot be read is left to the run, which reports it with its own message.
pub fn place_and_check(manifests: &mut [Manifest]) -> Result<(), Box<ManifestError>> {
    let mut read: HashMap<(PathBuf, bool, ReadOptions), Option<crate::swf::Trace>> = HashMap::new();
    for m in manifests.iter_mut() {
        // By the spec each cell shares (grid axes such as `first_jobs` make variants of one
        // name), with the spec itself held so that its address stays its own.
        let mut placed: HashMap<*const WorkloadSpec, (Arc<WorkloadSpec>, Arc<WorkloadSpec>)> =
            HashMap::new();
        for c in 0..m.cells.len() {
            let w = &m.cells[c].workload;
            if let Some((_, p)) = placed.get(&Arc::as_ptr(w)) {
                m.cells[c].workload = p.clone();
                continue;
            }
            let Some(path) = w.trace() else { continue };
            if !w.transforms.selects() {
                continue;
            }
            let trace = read
                .entry((path.clone(), w.lenient, w.reading.clone()))
                .or_insert_with(|| {
                    crate::source::read_path(path, Mode::from_lenient(w.lenient), &w.reading).ok()
                });
            let Some(trace) = trace else { continue };
            let jobs = &trace.workload.jobs;
            let span = Span {
                origin: TraceOrigin {
                    first_submit: jobs.first().map(|j| j.submit),
                    unix_start: trace.header.unix_start_time,
                },
                last_submit: jobs.last().map(|j| j.submit),
                jobs: jobs.len(),
            };
            let mut spec = WorkloadSpec::clone(w);
            if let Err(message) = spec.transforms.place_window(&span.origin) {
                return Err(Box::new(
                    located(
                        m,
                        w,
                        "window",
                        format!("{message}; {}", span_text(w, &span)),
                    )
                    .hint(hint(w, &span)),
                ));
            }
            if spec
                .transforms
                .to_transforms()
                .apply(&trace.workload)
                .jobs
                .is_empty()
            {
                let filters = w.transforms.filters();
                return Err(Box::new(
                    located(
                        m,
                        w,
                        first_filter_key(w),
                        format!(
                            "expected a selection that keeps at least one job, but {} keep{} \
                             none of the {} jobs of {}: {}",
                            filters.join(", "),
                            if filters.len() == 1 { "s" } else { "" },
                            fixed(span.jobs as f64, 0),
                            path.display(),
                            span_text(w, &span)
                        ),
                    )
                    .hint(hint(w, &span)),
                ));
            }
            let spec = Arc::new(spec);
            placed.insert(Arc::as_ptr(w), (w.clone(), spec.clone()));
            m.cells[c].workload = spec;
        }
    }
    Ok(())
}

/// The error at `workloads.<name>.<key>` of manifest `m`.
fn located(m: &Manifest, w: &WorkloadSpec, key: &str, message: String) -> ManifestError {
    crate::manifest::key_error_in(m, &format!("workloads.{}.{key}", w.name), key, message)
        .planning()
}

/// The key of the first filter, in the order they apply.
fn first_filter_key(w: &WorkloadSpec) -> &'static str {
    let t = &w.transforms;
    if t.window.is_some() || t.window_start.is_some() || t.window_end.is_some() {
        "window"
    } else if t.users.is_some() {
        "users"
    } else if t.exclude_users.is_some() {
        "exclude_users"
    } else if t.partitions.is_some() {
        "partitions"
    } else {
        "first_jobs"
    }
}

/// The unit the workload's window was written in (trace seconds without a window).
fn unit(w: &WorkloadSpec) -> WindowUnit {
    w.transforms
        .window
        .as_ref()
        .map_or(WindowUnit::TraceSeconds, |r| r.unit)
}

/// The trace's span in the window's units, with dates when it has a start time.
fn span_text(w: &WorkloadSpec, span: &Span) -> String {
    let (Some(first), Some(last)) = (span.origin.first_submit, span.last_submit) else {
        return "the trace has no job".to_string();
    };
    let dates = span
        .origin
        .unix_start
        .map(|u| (format_unix(u + first), format_unix(u + last)));
    let seconds = format!(
        "trace second {} to {}",
        fixed(first as f64, 0),
        fixed(last as f64, 0)
    );
    match (unit(w), &w.transforms.window, dates) {
        (WindowUnit::Date, _, Some((a, b))) => {
            format!("its jobs were submitted from {a} to {b} ({seconds})")
        }
        (WindowUnit::TraceSeconds | WindowUnit::Date, _, dates) => format!(
            "its jobs were submitted from {seconds}{}",
            dates.map_or(String::new(), |(a, b)| format!(" ({a} to {b})"))
        ),
        (_, Some(r), dates) => format!(
            "its last job was submitted {} after its first ({seconds}{})",
            r.duration_text(last - first),
            dates.map_or(String::new(), |(a, b)| format!("; {a} to {b}"))
        ),
        (_, None, _) => format!("its jobs were submitted from {seconds}"),
    }
}

fn hint(w: &WorkloadSpec, span: &Span) -> String {
    let t = &w.transforms;
    match (unit(w), &t.window) {
        (WindowUnit::TraceSeconds, _) if t.window_start.is_some() || t.window_end.is_some() => {
            "`start`/`end` are trace seconds, counted from the trace's time 0, not from its first \
             job: `window: {first: 60d}` selects the first 60 days, `{from: 30d, to: 90d}` days \
             30 to 90, and `{from: 2004-03-01, to: 2004-05-01}` dates (docs/manifest.md, \
             \"Windows\")"
                .to_string()
        }
        (WindowUnit::Date, _) if span.origin.unix_start.is_none() => {
            "the trace has no UnixStartTime header: write the window from its first submission \
             (`{from: 30d, to: 90d}`) or in trace seconds (`{start: S, end: E}`)"
                .to_string()
        }
        (WindowUnit::Date, _) => {
            "choose dates within the trace's span (UTC; docs/manifest.md, \"Windows\")".to_string()
        }
        (_, Some(_)) => "`from`, `to` and `first` count from the trace's first submission; \
                         choose a window within its span (docs/manifest.md, \"Windows\")"
            .to_string(),
        _ => "check the ids against `schedlab trace stats <trace> --by user` (or the partitions \
              the trace uses), and that the window and filters overlap"
            .to_string(),
    }
}
