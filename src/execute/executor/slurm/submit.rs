//! Submission: the nodes to compute are packed into tasks (`pack.rs`), recorded as a batch
//! (`batch.rs`) before anything is submitted, then handed to Slurm — as job arrays of at most
//! MaxArraySize − 1 tasks each, one `sbatch` call per array; or, inside an allocation, as
//! `srun` steps started here as slots free up.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::batch::{self, ArrayJob, Batch, Mode, TaskNode};
use super::pack::{self, Item};
use super::task_state::{StateSource, TaskState};
use super::{COST_UNITS_PER_SECOND, Slurm, SlurmError, commands, in_allocation};
use crate::cache::{Digest, EntryStore, ResultsLock};
use crate::execute::executor::Context;
use crate::execute::pipeline::{self, Prepared};
use crate::plan::NodeKind;

/// Packs, records and submits `nodes` (plan indices); returns the batch and, inside an
/// allocation, the runner of its steps.
pub fn submit(
    slurm: &Slurm,
    context: &Context<'_>,
    nodes: &[usize],
) -> Result<(Batch, Option<StepRunner>), SlurmError> {
    let steps = in_allocation();
    let slots = if steps {
        allocation_slots()
    } else {
        slurm
            .config
            .max_parallel
            .map(u64::from)
            .or_else(|| commands::partition_cpus(slurm.config.partition.as_deref()))
            .unwrap_or(1)
    };
    let mut batch = plan_batch(slurm, context, nodes, slots, steps)?;
    batch.save()?;
    if steps {
        let runner = StepRunner::new(slurm, &batch, slots as usize);
        return Ok((batch, Some(runner)));
    }
    submit_arrays(slurm, &mut batch)?;
    Ok((batch, None))
}

/// Parallel step slots in the current allocation: its tasks (`salloc -n N`), else its CPUs.
fn allocation_slots() -> u64 {
    ["SLURM_NTASKS", "SLURM_CPUS_ON_NODE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<u64>().ok())
        .unwrap_or(1)
        .max(1)
}

/// The batch record of `nodes`: tasks packed by estimated cost, costliest first.
fn plan_batch(
    slurm: &Slurm,
    context: &Context<'_>,
    nodes: &[usize],
    slots: u64,
    steps: bool,
) -> Result<Batch, SlurmError> {
    let prepared = context.prepared;
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| SlurmError::io(p, e));
    let state_dir = absolute(context.state_dir)?;
    let results = state_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let manifests = prepared
        .manifests
        .iter()
        .map(|m| absolute(&m.path))
        .collect::<Result<Vec<_>, _>>()?;

    let mut described = BTreeMap::new();
    let mut items = Vec::with_capacity(nodes.len());
    for &i in nodes {
        let node = &prepared.plan.nodes[i];
        let NodeKind::Simulate { cell: (e, c) } = node.kind else {
            continue;
        };
        let trace: Option<Digest> = prepared.plan.trace_digest(&prepared.manifests, i).cloned();
        // Nodes reading one trace share a group (parsed once per task); others stand alone.
        let group = match &trace {
            Some(d) => u64::from_str_radix(&d.blake3[..15.min(d.blake3.len())], 16).unwrap_or(0),
            None => u64::MAX - i as u64,
        };
        items.push(Item {
            node: i,
            cost: context.nodes[i].cost,
            group,
        });
        described.insert(
            i,
            TaskNode {
                key: node.key.0.clone(),
                label: node.label.clone(),
                manifest: e,
                cell: prepared.manifests[e].cells[c].id.clone(),
                trace,
            },
        );
    }
    let total: u64 = items.iter().map(|i| i.cost).sum();
    let by_cost = total.div_ceil(COST_UNITS_PER_SECOND * slurm.config.pack_seconds.max(1));
    let wanted = by_cost
        .max(slots.min(items.len() as u64))
        .min(u64::from(slurm.config.max_tasks)) as usize;
    let tasks: Vec<Vec<TaskNode>> = pack::pack(&items, wanted)
        .into_iter()
        .map(|bin| bin.iter().map(|i| described[i].clone()).collect())
        .collect();
    Ok(Batch {
        id: batch::new_id(),
        mode: if steps { Mode::Steps } else { Mode::Array },
        results,
        manifests,
        task_count: tasks.len(),
        tasks,
        arrays: Vec::new(),
        finished: false,
    })
}

/// `'text'` for sh.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One `sbatch --array` per MaxArraySize − 1 tasks, each recorded as soon as it is accepted.
fn submit_arrays(slurm: &Slurm, batch: &mut Batch) -> Result<(), SlurmError> {
    let per_array = slurm
        .config
        .max_array_size
        .or_else(|| commands::max_array_size().map(|m| m.saturating_sub(1)))
        .unwrap_or(1000)
        .max(1) as usize;
    let cwd = std::env::current_dir().map_err(|e| SlurmError::io(Path::new("."), e))?;
    let total = batch.tasks.len();
    let chunks = total.div_ceil(per_array);
    for (k, first) in (0..total).step_by(per_array).enumerate() {
        let count = per_array.min(total - first);
        let throttle = slurm
            .config
            .max_parallel
            .map_or(String::new(), |p| format!("%{p}"));
        let mut options = slurm.config.sbatch_options();
        options.extend([
            format!("--job-name=schedlab-{}", batch.id),
            format!("--array=0-{}{throttle}", count - 1),
            format!("--output={}/%A_%a.log", batch.logs_dir().display()),
            format!("--chdir={}", cwd.display()),
            "--ntasks=1".into(),
            "--cpus-per-task=1".into(),
        ]);
        let script = format!(
            "#!/bin/sh\n# schedlab batch {id}: tasks {first}..{last} of {total}\nexec {exe}{args} worker {dir} --offset {first}\n",
            id = batch.id,
            last = first + count - 1,
            exe = shell_quote(&slurm.exe.to_string_lossy()),
            args = slurm
                .exe_args
                .iter()
                .map(|a| format!(" {}", shell_quote(a)))
                .collect::<String>(),
            dir = shell_quote(&batch.dir().to_string_lossy()),
        );
        match commands::sbatch(&options, &script) {
            Ok(job) => {
                batch.arrays.push(ArrayJob {
                    job,
                    first_task: first,
                    count,
                });
                batch.save()?;
            }
            Err(e) if batch.arrays.is_empty() => {
                batch.remove()?;
                return Err(e);
            }
            Err(e) => {
                return Err(SlurmError::PartlySubmitted {
                    message: format!(
                        "submitted {k} of {chunks} arrays (job {}), then: {e}",
                        batch.job_ids().join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

/// One line saying what was submitted.
pub fn describe(batch: &Batch, steps: bool) -> String {
    if steps {
        format!(
            "slurm: {} nodes in {} srun steps on allocation {} (batch {})",
            batch.node_count(),
            batch.tasks.len(),
            std::env::var("SLURM_JOB_ID").unwrap_or_default(),
            batch.id
        )
    } else {
        format!(
            "slurm: submitted {} nodes as {} array tasks in {} sbatch call{} (job {}; batch {})",
            batch.node_count(),
            batch.tasks.len(),
            batch.arrays.len(),
            if batch.arrays.len() == 1 { "" } else { "s" },
            batch.job_ids().join(", "),
            batch.id
        )
    }
}

/// What `run --detach` did.
pub struct Detached {
    /// The new batch, when anything was submitted.
    pub batch: Option<Batch>,
    /// Nodes already queued or running in earlier batches (not submitted again).
    pub in_flight: usize,
    pub cached: usize,
    pub total: usize,
}

/// `run --detach`: submits the simulate nodes that are neither cached nor in flight, records
/// the batch and returns; a later `run` waits for it, aggregates and publishes.
pub fn detach(
    slurm: &Slurm,
    prepared: &Prepared,
    state_dir: &Path,
    wait_for_lock: bool,
) -> Result<Detached, SlurmError> {
    if in_allocation() {
        return Err(SlurmError::DetachInAllocation);
    }
    let _lock = ResultsLock::acquire(state_dir, wait_for_lock)?;
    let entries = EntryStore::new(state_dir);
    let nodes = pipeline::dag_nodes(prepared, &entries);
    let context = Context {
        prepared,
        nodes: &nodes,
        state_dir,
        // --detach submits and returns: nothing waits that a signal could stop.
        interrupt: &crate::execute::Interrupt::default(),
    };
    let remote = super::remote_nodes(&context);
    // Keys of tasks still queued or running in earlier batches.
    let mut in_flight_keys = std::collections::BTreeSet::new();
    for batch in Batch::list(state_dir)
        .into_iter()
        .filter(|b| !b.finished && b.mode == Mode::Array)
    {
        let rows = commands::squeue(&batch.job_ids())?;
        for row in rows.iter().filter(|r| r.state.is_active()) {
            for &index in &row.tasks {
                if let Some(t) = batch.task_of(&row.array_job, index) {
                    in_flight_keys.extend(batch.tasks[t].iter().map(|n| n.key.clone()));
                }
            }
        }
    }
    let to_submit: Vec<usize> = remote
        .iter()
        .copied()
        .filter(|&i| !in_flight_keys.contains(nodes[i].key.as_str()))
        .collect();
    let batch = if to_submit.is_empty() {
        None
    } else {
        Some(submit(slurm, &context, &to_submit)?.0)
    };
    Ok(Detached {
        batch,
        in_flight: remote.len() - to_submit.len(),
        cached: nodes.iter().filter(|n| n.cached).count(),
        total: nodes.len(),
    })
}

/// `srun` steps inside the current allocation, started as slots free up.
pub struct StepRunner {
    exe: PathBuf,
    exe_args: Vec<String>,
    mem: Option<String>,
    slots: usize,
    next: usize,
    running: BTreeMap<usize, Child>,
    ended: BTreeMap<usize, TaskState>,
}

impl StepRunner {
    fn new(slurm: &Slurm, _batch: &Batch, slots: usize) -> StepRunner {
        let slots = match slurm.config.max_parallel {
            Some(p) => slots.min(p as usize),
            None => slots,
        };
        StepRunner {
            exe: slurm.exe.clone(),
            exe_args: slurm.exe_args.clone(),
            mem: slurm.config.mem.clone(),
            slots: slots.max(1),
            next: 0,
            running: BTreeMap::new(),
            ended: BTreeMap::new(),
        }
    }

    /// Reaps ended steps, starts new ones, and returns every task's state.
    pub fn poll(
        &mut self,
        batch: &Batch,
    ) -> Result<BTreeMap<usize, (TaskState, StateSource)>, SlurmError> {
        let mut reaped = Vec::new();
        for (&t, child) in self.running.iter_mut() {
            if let Some(status) = child.try_wait().map_err(|e| SlurmError::Missing {
                program: "srun".into(),
                error: e.to_string(),
            })? {
                let state = match status.code() {
                    Some(0) => TaskState::Completed,
                    Some(_) => TaskState::Failed,
                    None => TaskState::Cancelled,
                };
                reaped.push((t, state));
            }
        }
        for (t, state) in reaped {
            self.running.remove(&t);
            self.ended.insert(t, state);
        }
        while self.running.len() < self.slots && self.next < batch.tasks.len() {
            let t = self.next;
            self.next += 1;
            match self.start(batch, t) {
                Ok(child) => {
                    self.running.insert(t, child);
                }
                Err(e) => {
                    let _ = std::fs::write(
                        batch.log_path(t),
                        format!("{} error: {e}\n", super::worker::PREFIX),
                    );
                    self.ended.insert(t, TaskState::Failed);
                }
            }
        }
        Ok((0..batch.tasks.len())
            .map(|t| {
                let state = if let Some(s) = self.ended.get(&t) {
                    s.clone()
                } else if self.running.contains_key(&t) {
                    TaskState::Running
                } else {
                    TaskState::Pending
                };
                (t, (state, StateSource::Srun))
            })
            .collect())
    }

    fn start(&self, batch: &Batch, task: usize) -> Result<Child, SlurmError> {
        let log_path = batch.log_path(task);
        let log = File::create(&log_path).map_err(|e| SlurmError::io(&log_path, e))?;
        let log2 = log.try_clone().map_err(|e| SlurmError::io(&log_path, e))?;
        let mut command = Command::new("srun");
        command.args([
            "--ntasks=1",
            "--cpus-per-task=1",
            "--exact",
            &format!("--job-name=schedlab-{}", batch.id),
        ]);
        if let Some(mem) = &self.mem {
            command.arg(format!("--mem={mem}"));
        }
        command
            .arg(&self.exe)
            .args(&self.exe_args)
            .arg("worker")
            .arg(batch.dir())
            .args(["--task", &task.to_string()])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        command.spawn().map_err(|e| SlurmError::Missing {
            program: "srun".into(),
            error: e.to_string(),
        })
    }

    /// Stops the running steps (srun kills a step on two SIGINTs within a second); returns how
    /// many there were.
    pub fn cancel(&mut self) -> usize {
        let n = self.running.len();
        for child in self.running.values() {
            for _ in 0..2 {
                let _ = Command::new("kill")
                    .args(["-INT", &child.id().to_string()])
                    .status();
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        for child in self.running.values_mut() {
            while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.next = usize::MAX;
        n
    }
}
