//! The state of an array task as Slurm reports it, and the causes of death it can name: from
//! `sacct` when the cluster keeps accounting, else from `squeue`/`scontrol` (which remember a
//! finished job for MinJobAge, 300 s by default), else from the messages `slurmstepd` writes
//! into the task's log.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskState {
    Pending,
    Running,
    Completed,
    /// Exited non-zero (for schedlab's worker: some of its nodes failed).
    Failed,
    Cancelled,
    Timeout,
    OutOfMemory,
    Preempted,
    NodeFail,
    /// Any other terminal state Slurm names (BOOT_FAIL, DEADLINE, …).
    Other(String),
}

impl TaskState {
    /// Parses a state as `squeue %T`, `sacct State` or `scontrol JobState` print it
    /// (`CANCELLED by 0` included).
    pub fn parse(text: &str) -> TaskState {
        let word = text.split_whitespace().next().unwrap_or_default();
        match word.trim_end_matches('+') {
            "PENDING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED" | "RESV_DEL_HOLD"
            | "SUSPENDED" | "CONFIGURING" | "RESIZING" => TaskState::Pending,
            "RUNNING" | "COMPLETING" | "SIGNALING" | "STAGE_OUT" | "STOPPED" => TaskState::Running,
            "COMPLETED" => TaskState::Completed,
            "FAILED" => TaskState::Failed,
            "CANCELLED" => TaskState::Cancelled,
            "TIMEOUT" => TaskState::Timeout,
            "OUT_OF_MEMORY" => TaskState::OutOfMemory,
            "PREEMPTED" => TaskState::Preempted,
            "NODE_FAIL" => TaskState::NodeFail,
            other => TaskState::Other(other.to_string()),
        }
    }

    /// The task is queued or running: its nodes are in flight.
    pub fn is_active(&self) -> bool {
        matches!(self, TaskState::Pending | TaskState::Running)
    }

    /// Slurm's own name of the state.
    pub fn name(&self) -> &str {
        match self {
            TaskState::Pending => "PENDING",
            TaskState::Running => "RUNNING",
            TaskState::Completed => "COMPLETED",
            TaskState::Failed => "FAILED",
            TaskState::Cancelled => "CANCELLED",
            TaskState::Timeout => "TIMEOUT",
            TaskState::OutOfMemory => "OUT_OF_MEMORY",
            TaskState::Preempted => "PREEMPTED",
            TaskState::NodeFail => "NODE_FAIL",
            TaskState::Other(name) => name,
        }
    }

    /// Why a task in this state left nodes undone, for users; `None` when the state names no
    /// cause (completed, or failed: then the worker's own messages say why).
    pub fn cause(&self) -> Option<String> {
        let text = match self {
            TaskState::Timeout => {
                "killed by Slurm at its time limit (TIMEOUT); raise `slurm.time` or lower \
                 `slurm.pack_seconds`"
            }
            TaskState::OutOfMemory => {
                "killed by Slurm for exceeding its memory (OUT_OF_MEMORY); raise `slurm.mem`"
            }
            TaskState::Preempted => {
                "preempted by Slurm for a higher-priority job (PREEMPTED); run again to resubmit"
            }
            TaskState::NodeFail => "lost with its compute node (NODE_FAIL); run again to resubmit",
            TaskState::Cancelled => "cancelled (CANCELLED)",
            TaskState::Other(name) => return Some(format!("ended by Slurm in state {name}")),
            _ => return None,
        };
        Some(text.to_string())
    }

    /// The state a task's log reveals: `slurmstepd`'s kill notices (`*** JOB 12 ON n1
    /// CANCELLED AT … DUE TO TIME LIMIT ***`, `oom-kill`), for when Slurm has forgotten it.
    pub fn from_log(log: &str) -> Option<TaskState> {
        let mut found = None;
        for line in log.lines() {
            let state = if line.contains("DUE TO TIME LIMIT") {
                TaskState::Timeout
            } else if line.contains("DUE TO PREEMPTION") {
                TaskState::Preempted
            } else if line.contains("DUE TO NODE FAILURE") {
                TaskState::NodeFail
            } else if line.contains("oom-kill") || line.contains("Exceeded job memory limit") {
                TaskState::OutOfMemory
            } else if line.contains("slurmstepd") && line.contains(" CANCELLED AT ") {
                TaskState::Cancelled
            } else {
                continue;
            };
            found = Some(state);
        }
        found
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a terminal state was learnt (said in messages: users must know how sure it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateSource {
    Sacct,
    Squeue,
    Scontrol,
    Log,
    /// An `srun` step's exit status (inside an allocation).
    Srun,
}

impl StateSource {
    pub fn name(self) -> &'static str {
        match self {
            StateSource::Sacct => "sacct",
            StateSource::Squeue => "squeue",
            StateSource::Scontrol => "scontrol",
            StateSource::Log => "the task log",
            StateSource::Srun => "srun",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_as_every_tool_prints_them() {
        assert_eq!(TaskState::parse("CANCELLED by 0"), TaskState::Cancelled);
        assert_eq!(TaskState::parse("OUT_OF_MEMORY"), TaskState::OutOfMemory);
        assert_eq!(TaskState::parse("COMPLETING"), TaskState::Running);
        assert_eq!(TaskState::parse("CANCELLED+"), TaskState::Cancelled);
        assert_eq!(
            TaskState::parse("BOOT_FAIL"),
            TaskState::Other("BOOT_FAIL".into())
        );
        assert!(TaskState::Timeout.cause().unwrap().contains("slurm.time"));
        assert!(TaskState::Completed.cause().is_none());
    }

    #[test]
    fn slurmstepd_notices_in_a_log_name_the_cause() {
        let log = "schedlab-worker: done a\n\
                   slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***\n";
        assert_eq!(TaskState::from_log(log), Some(TaskState::Timeout));
        let log = "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.batch.\n";
        assert_eq!(TaskState::from_log(log), Some(TaskState::OutOfMemory));
        let log = "slurmstepd-vm: error: *** JOB 6 ON vm CANCELLED AT 2026-11-23T20:36:02 ***\n";
        assert_eq!(TaskState::from_log(log), Some(TaskState::Cancelled));
        assert_eq!(TaskState::from_log("all fine\n"), None);
    }
}
