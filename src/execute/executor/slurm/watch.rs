//! Following Slurm work to its end: pick up batches still queued or running, submit what is
//! missing, then poll — `squeue` at most once per interval (1 s, doubling up to
//! `slurm.poll_seconds`), the cache only at the next unfinished node of each task (one `stat`
//! per task per poll, whatever the batch size) — until every task has ended. Each node then
//! either has its entry, or fails with the cause: the worker's own error from the task log, or
//! what Slurm says killed the task (from sacct, squeue, scontrol or the log; which one is said).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::batch::{Batch, Mode};
use super::commands;
use super::submit::{self, StepRunner};
use super::task_state::{StateSource, TaskState};
use super::worker::{NodeFailure, PREFIX};
use super::{Slurm, SlurmError};
use crate::cache::EntryStore;
use crate::execute::dag::{DagNode, Event, Observer, Outcome};
use crate::execute::executor::Context;

/// Per remote node: `Ok(seconds waited)` once its entry exists, or the error.
pub type Outcomes = BTreeMap<usize, Result<f64, String>>;

/// The event of a remote node.
pub fn remote_event(node: &DagNode, outcome: &Result<f64, String>) -> Event {
    Event {
        label: node.label.clone(),
        key: node.key.0.clone(),
        outcome: match outcome {
            Ok(_) => Outcome::Ran,
            Err(error) => Outcome::Failed {
                error: error.clone(),
            },
        },
        seconds: *outcome.as_ref().unwrap_or(&0.0),
        cost: node.cost,
    }
}

/// A task being followed.
struct TaskWatch {
    task: usize,
    /// Plan indices of the task's nodes this run waits for, in the task's order.
    nodes: Vec<usize>,
    /// Nodes before this one are resolved.
    next: usize,
    state: Option<(TaskState, StateSource)>,
    settled: bool,
}

/// A batch being followed; `own` when this run submitted it (Ctrl-C cancels only those).
struct BatchWatch {
    batch: Batch,
    own: bool,
    /// Every task still active is watched: once they end, the batch is over.
    complete: bool,
    steps: Option<StepRunner>,
    tasks: Vec<TaskWatch>,
}

/// Runs the `remote` nodes on Slurm and waits for them; see the module comment.
pub fn compute_remote(
    slurm: &Slurm,
    context: &Context<'_>,
    remote: &[usize],
    observer: &dyn Observer,
) -> Result<Outcomes, SlurmError> {
    let mut outcomes = Outcomes::new();
    // Batches whose outcome an earlier run reported are superseded by this one.
    let (finished, existing): (Vec<Batch>, Vec<Batch>) = Batch::list(context.state_dir)
        .into_iter()
        .partition(|b| b.finished);
    for batch in finished {
        batch.remove()?;
    }
    if remote.is_empty() && existing.is_empty() {
        return Ok(outcomes);
    }
    let interrupt = context.interrupt;
    let index_of: BTreeMap<&str, usize> = remote
        .iter()
        .map(|&i| (context.nodes[i].key.as_str(), i))
        .collect();

    // Pick up batches submitted earlier: nodes of their queued or running tasks are in flight.
    let mut watches = Vec::new();
    let mut in_flight = BTreeSet::new();
    let states = array_states(existing.iter().filter(|b| b.mode == Mode::Array))?;
    for batch in existing {
        let active: Vec<usize> = (0..batch.tasks.len())
            .filter(|&t| {
                batch.mode == Mode::Array
                    && states
                        .get(&(batch.id.clone(), t))
                        .is_some_and(|s| s.0.is_active())
            })
            .collect();
        if active.is_empty() {
            // Over: whatever it left undone is submitted again below.
            batch.remove()?;
            continue;
        }
        let tasks: Vec<TaskWatch> = active
            .iter()
            .map(|&t| TaskWatch {
                task: t,
                nodes: batch.tasks[t]
                    .iter()
                    .filter_map(|n| index_of.get(n.key.as_str()).copied())
                    .collect(),
                next: 0,
                state: states.get(&(batch.id.clone(), t)).cloned(),
                settled: false,
            })
            // Tasks with none of this run's nodes are not waited for.
            .filter(|t| !t.nodes.is_empty())
            .collect();
        if tasks.is_empty() {
            continue;
        }
        in_flight.extend(tasks.iter().flat_map(|t| t.nodes.iter().copied()));
        observer.note(&format!(
            "slurm: waiting for batch {} submitted earlier (job {})",
            batch.id,
            batch.job_ids().join(", ")
        ));
        watches.push(BatchWatch {
            complete: tasks.len() == active.len(),
            batch,
            own: false,
            steps: None,
            tasks,
        });
    }

    let to_submit: Vec<usize> = remote
        .iter()
        .copied()
        .filter(|i| !in_flight.contains(i))
        .collect();
    if !to_submit.is_empty() {
        let (batch, steps) = submit::submit(slurm, context, &to_submit)?;
        observer.note(&submit::describe(&batch, steps.is_some()));
        let tasks = batch
            .tasks
            .iter()
            .enumerate()
            .map(|(t, nodes)| TaskWatch {
                task: t,
                nodes: nodes
                    .iter()
                    .filter_map(|n| index_of.get(n.key.as_str()).copied())
                    .collect(),
                next: 0,
                state: None,
                settled: false,
            })
            .collect();
        watches.push(BatchWatch {
            batch,
            own: true,
            complete: true,
            steps,
            tasks,
        });
    }

    let entries = EntryStore::new(context.state_dir);
    let started = Instant::now();
    let mut interval = Duration::from_secs(1);
    let max_interval = Duration::from_secs(slurm.config.poll_seconds.max(1));
    let mut sacct_available: Option<bool> = None;
    let mut last_note = String::new();
    loop {
        if interrupt.requested() {
            return Err(cancel(&mut watches, &outcomes, remote.len()));
        }
        let states = array_states(
            watches
                .iter()
                .filter(|w| w.steps.is_none())
                .map(|w| &w.batch),
        )?;
        for w in &mut watches {
            let step_states = match &mut w.steps {
                Some(runner) => Some(runner.poll(&w.batch)?),
                None => None,
            };
            for t in w.tasks.iter_mut().filter(|t| !t.settled) {
                t.state = match &step_states {
                    Some(s) => s.get(&t.task).cloned(),
                    None => states.get(&(w.batch.id.clone(), t.task)).cloned(),
                };
                // Nodes finish in the task's order: look at the next one only.
                while let Some(&i) = t.nodes.get(t.next) {
                    if !entries.contains(context.nodes[i].key.as_str()) {
                        break;
                    }
                    resolve(&mut outcomes, context, observer, i, Ok(started));
                    t.next += 1;
                }
                let ended = t.state.as_ref().is_none_or(|s| !s.0.is_active());
                if ended {
                    t.settled = true;
                    for &i in &t.nodes[t.next..] {
                        let outcome = if entries.contains(context.nodes[i].key.as_str()) {
                            Ok(started)
                        } else {
                            Err(failure_cause(
                                &w.batch,
                                t,
                                context.nodes[i].key.as_str(),
                                &mut sacct_available,
                            ))
                        };
                        resolve(&mut outcomes, context, observer, i, outcome);
                    }
                    t.next = t.nodes.len();
                }
            }
        }
        let note = progress_note(&watches, outcomes.len(), remote.len());
        if note != last_note {
            observer.note(&note);
            last_note = note;
        }
        if watches.iter().all(|w| w.tasks.iter().all(|t| t.settled)) {
            break;
        }
        // Sleep in small steps so that Ctrl-C is seen at once.
        let wake = Instant::now() + interval;
        while Instant::now() < wake && !interrupt.requested() {
            std::thread::sleep(Duration::from_millis(100));
        }
        interval = (interval * 2).min(max_interval);
    }

    // Every watched task has ended: keep the record (and logs) of a batch with failures until
    // the next run supersedes it; forget a clean one. A batch with tasks this run did not wait
    // for (other manifests' nodes) is left to the run that needs them.
    for w in watches.into_iter().filter(|w| w.complete) {
        let failed = w
            .tasks
            .iter()
            .flat_map(|t| &t.nodes)
            .any(|i| matches!(outcomes.get(i), Some(Err(_))));
        if failed {
            let mut batch = w.batch;
            batch.finished = true;
            batch.save()?;
        } else {
            w.batch.remove()?;
        }
    }
    // Remote nodes no task covered (none, unless a batch record was edited by hand).
    for &i in remote {
        outcomes
            .entry(i)
            .or_insert_with(|| Err("no Slurm task computed this node; run again".into()));
    }
    Ok(outcomes)
}

fn resolve(
    outcomes: &mut Outcomes,
    context: &Context<'_>,
    observer: &dyn Observer,
    i: usize,
    outcome: Result<Instant, String>,
) {
    let outcome = outcome.map(|t| t.elapsed().as_secs_f64());
    observer.event(&remote_event(&context.nodes[i], &outcome));
    outcomes.insert(i, outcome);
}

/// Task states by (batch id, task).
type TaskStates = BTreeMap<(String, usize), (TaskState, StateSource)>;

/// State of every task of the array `batches` that Slurm still knows, by (batch id, task).
fn array_states<'a>(batches: impl Iterator<Item = &'a Batch>) -> Result<TaskStates, SlurmError> {
    let batches: Vec<&Batch> = batches.collect();
    let jobs: Vec<String> = batches.iter().flat_map(|b| b.job_ids()).collect();
    let mut states = BTreeMap::new();
    for row in commands::squeue(&jobs)? {
        for b in &batches {
            for &index in &row.tasks {
                if let Some(t) = b.task_of(&row.array_job, index) {
                    states.insert((b.id.clone(), t), (row.state.clone(), StateSource::Squeue));
                }
            }
        }
    }
    Ok(states)
}

fn task_name(batch: &Batch, task: usize) -> String {
    match batch.array_of(task) {
        Some((array, index)) => format!("array task {}_{index}", array.job),
        None => format!("srun step {task} of batch {}", batch.id),
    }
}

/// Why task `t` of `batch` left the node `key` undone.
fn failure_cause(
    batch: &Batch,
    t: &TaskWatch,
    key: &str,
    sacct_available: &mut Option<bool>,
) -> String {
    let name = task_name(batch, t.task);
    let log_path = batch.log_path(t.task);
    let log = std::fs::read_to_string(&log_path).ok();
    if let Some(failure) = log
        .as_deref()
        .and_then(|l| NodeFailure::from_log(l).remove(key))
    {
        return format!("{} ({name}, log {})", failure.error, log_path.display());
    }
    // The task's final state: as last seen, else from accounting, scontrol or the log.
    let mut state = t.state.clone().filter(|s| !s.0.is_active());
    if state.is_none()
        && let Some((array, index)) = batch.array_of(t.task)
    {
        if *sacct_available != Some(false) {
            let rows = commands::sacct(std::slice::from_ref(&array.job));
            *sacct_available = Some(rows.is_some());
            state = rows
                .into_iter()
                .flatten()
                .find(|(_, i, _)| *i == index)
                .map(|(_, _, s)| (s, StateSource::Sacct));
        }
        if state.is_none() {
            state = commands::scontrol_state(&array.job, index).map(|s| (s, StateSource::Scontrol));
        }
    }
    // slurmstepd's notice in the log is more specific than FAILED, or than nothing.
    state = match (state, log.as_deref().and_then(TaskState::from_log)) {
        (None, Some(noticed)) => Some((noticed, StateSource::Log)),
        (Some((TaskState::Failed | TaskState::Cancelled, _)), Some(noticed))
            if noticed != TaskState::Cancelled =>
        {
            Some((noticed, StateSource::Log))
        }
        (state, _) => state,
    };
    let Some(log) = log else {
        // A task cancelled while pending never ran, so it wrote no log: that is the cancel,
        // not a results directory the nodes cannot see.
        if let Some((TaskState::Cancelled, source)) = &state {
            return format!(
                "{name} was cancelled before it started (CANCELLED, from {}), so it wrote no \
                 log; run again to resubmit",
                source.name()
            );
        }
        let state = state.map_or("state unknown".into(), |(s, src)| {
            format!("{s}, from {}", src.name())
        });
        return format!(
            "{name} ended ({state}) and its log {} cannot be read here: the results directory \
             must be on a file system the compute nodes see (docs/slurm.md)",
            log_path.display()
        );
    };
    if let Some(error) = log
        .lines()
        .find_map(|l| l.strip_prefix(PREFIX)?.trim().strip_prefix("error: "))
    {
        return format!(
            "{name} could not start its work: {error} (log {})",
            log_path.display()
        );
    }
    match state {
        Some((s, source)) => match s.cause() {
            Some(cause) => format!(
                "{name} was {cause} [state from {}] (log {})",
                source.name(),
                log_path.display()
            ),
            None => format!(
                "{name} ended ({s}, from {}) without computing this node; its log {} ends: {}",
                source.name(),
                log_path.display(),
                last_lines(&log)
            ),
        },
        None => format!(
            "{name} ended without computing this node (Slurm no longer knows the task and \
             keeps no accounting); its log {} ends: {}",
            log_path.display(),
            last_lines(&log)
        ),
    }
}

fn last_lines(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail.join(" | ")
    }
}

/// One status line: tasks by state, nodes done.
fn progress_note(watches: &[BatchWatch], resolved: usize, total: usize) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in watches.iter().flat_map(|w| &w.tasks) {
        let what = match &t.state {
            _ if t.settled => "ended",
            Some((TaskState::Running, _)) => "running",
            Some((TaskState::Pending, _)) => "pending",
            _ => "ended",
        };
        *counts.entry(what).or_default() += 1;
    }
    let tasks: Vec<String> = ["running", "pending", "ended"]
        .iter()
        .filter_map(|k| counts.get(k).map(|n| format!("{n} {k}")))
        .collect();
    format!(
        "slurm: tasks {}; {resolved} of {total} nodes resolved",
        tasks.join(", ")
    )
}

/// Ctrl-C: cancels what this run submitted and says what keeps running.
fn cancel(watches: &mut [BatchWatch], outcomes: &Outcomes, total: usize) -> SlurmError {
    let mut said = Vec::new();
    let mut jobs = Vec::new();
    for w in watches.iter_mut() {
        if let Some(runner) = &mut w.steps {
            let n = runner.cancel();
            said.push(format!("stopped {n} running srun steps"));
        } else if w.own {
            let ids = w.batch.job_ids();
            said.push(format!(
                "cancelled Slurm job {} ({} array tasks)",
                ids.join(", "),
                w.batch.tasks.len()
            ));
            jobs.extend(ids);
        } else {
            said.push(format!(
                "job {} (submitted earlier) keeps running; `scancel {}` stops it",
                w.batch.job_ids().join(", "),
                w.batch.job_ids().join(" ")
            ));
        }
    }
    if let Err(e) = commands::scancel(&jobs) {
        said.push(format!("scancel failed: {e}"));
    }
    let done = outcomes.values().filter(|o| o.is_ok()).count();
    SlurmError::Interrupted {
        done,
        total,
        cancelled: said.join("; "),
    }
}
