//! The Slurm command-line tools as schedlab calls them (`sbatch`, `squeue`, `scancel`, `sacct`,
//! `scontrol`, `sinfo`), found on `PATH`, with their output parsed. Every failure becomes a
//! [`SlurmError`] naming the command and what it said.

use std::io::Write;
use std::process::{Command, Stdio};

use super::SlurmError;
use super::task_state::TaskState;

/// One line of `squeue -o '%F|%K|%T|%r'`: an array job's task (or range of pending tasks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueRow {
    pub array_job: String,
    /// The task indices the row covers.
    pub tasks: Vec<u32>,
    pub state: TaskState,
    pub reason: String,
}

/// Runs `program args` with `stdin`, returning stdout, or an error with its stderr.
fn run(program: &str, args: &[String], stdin: Option<&str>) -> Result<String, SlurmError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| SlurmError::Missing {
        program: program.to_string(),
        error: e.to_string(),
    })?;
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        // A command that exits without reading its input is reported by its status below.
        let _ = pipe.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| SlurmError::Missing {
        program: program.to_string(),
        error: e.to_string(),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(SlurmError::Command {
            command: format!("{program} {}", args.join(" ")),
            status: out.status.code(),
            stderr: if stderr.is_empty() {
                stdout.trim().to_string()
            } else {
                stderr
            },
        })
    }
}

/// Submits `script` (read by sbatch from stdin) with `options`; returns the job id.
pub fn sbatch(options: &[String], script: &str) -> Result<String, SlurmError> {
    let mut args = vec!["--parsable".to_string()];
    args.extend(options.iter().cloned());
    let out = run("sbatch", &args, Some(script)).map_err(|e| match e {
        SlurmError::Command { stderr, .. } => SlurmError::Refused { message: stderr },
        other => other,
    })?;
    // `--parsable` prints `jobid` or `jobid;cluster`.
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SlurmError::Refused {
            message: format!("sbatch printed no job id (it printed `{}`)", out.trim()),
        });
    }
    Ok(id)
}

/// The rows of `jobs` that Slurm still knows (finished ones for MinJobAge).
pub fn squeue(jobs: &[String]) -> Result<Vec<QueueRow>, SlurmError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let args = vec![
        "--noheader".to_string(),
        "--states=all".to_string(),
        "--format=%F|%K|%T|%r".to_string(),
        format!("--jobs={}", jobs.join(",")),
    ];
    match run("squeue", &args, None) {
        Ok(out) => Ok(parse_squeue(&out)),
        // Every job has left the controller's memory: none is known any more.
        Err(SlurmError::Command { stderr, .. }) if stderr.contains("Invalid job id") => {
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

pub fn parse_squeue(text: &str) -> Vec<QueueRow> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.trim().splitn(4, '|');
            let array_job = parts.next()?.trim().to_string();
            let tasks = parse_task_indices(parts.next()?.trim())?;
            let state = TaskState::parse(parts.next()?.trim());
            let reason = parts.next().unwrap_or_default().trim().to_string();
            Some(QueueRow {
                array_job,
                tasks,
                state,
                reason,
            })
        })
        .collect()
}

/// `7`, `1-5`, `[1-3,7,9-11%4]` → the indices; `N/A` (not an array) → none.
pub fn parse_task_indices(text: &str) -> Option<Vec<u32>> {
    let text = text.trim_start_matches('[').trim_end_matches(']');
    let text = text.split('%').next().unwrap_or_default();
    if text == "N/A" {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                // Bounded by MaxArraySize on any real cluster; refuse nonsense.
                if b < a || b - a > 10_000_000 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// Cancels `jobs` (whole arrays).
pub fn scancel(jobs: &[String]) -> Result<(), SlurmError> {
    if jobs.is_empty() {
        return Ok(());
    }
    run("scancel", jobs, None).map(|_| ())
}

/// Terminal states of the tasks of `jobs` from accounting: `(array job, task, state)`, or
/// `None` when the cluster keeps no accounting (sacct missing or disabled).
pub fn sacct(jobs: &[String]) -> Option<Vec<(String, u32, TaskState)>> {
    let args = vec![
        "--noheader".to_string(),
        "--parsable2".to_string(),
        "--allocations".to_string(),
        "--format=JobID,State".to_string(),
        format!("--jobs={}", jobs.join(",")),
    ];
    let out = run("sacct", &args, None).ok()?;
    let mut rows = Vec::new();
    for line in out.lines() {
        let Some((id, state)) = line.split_once('|') else {
            continue;
        };
        // `123_4`; pending ranges (`123_[5-9]`) have no terminal state yet.
        let Some((job, task)) = id.split_once('_') else {
            continue;
        };
        if let Ok(task) = task.parse() {
            rows.push((job.to_string(), task, TaskState::parse(state)));
        }
    }
    Some(rows)
}

/// `JobState` of one array task from `scontrol show job`, while the controller remembers it.
pub fn scontrol_state(job: &str, task: u32) -> Option<TaskState> {
    let args = vec![
        "show".to_string(),
        "job".to_string(),
        format!("{job}_{task}"),
    ];
    let out = run("scontrol", &args, None).ok()?;
    out.split_whitespace()
        .find_map(|w| w.strip_prefix("JobState="))
        .map(TaskState::parse)
}

/// The cluster's MaxArraySize (`scontrol show config`); array indices go up to one less.
pub fn max_array_size() -> Option<u32> {
    let out = run("scontrol", &["show".into(), "config".into()], None).ok()?;
    parse_config_value(&out, "MaxArraySize")?.parse().ok()
}

pub fn parse_config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// CPUs of `partition` (or of every partition), from `sinfo -o %C` (allocated/idle/other/total).
pub fn partition_cpus(partition: Option<&str>) -> Option<u64> {
    let mut args = vec!["--noheader".to_string(), "--format=%C".to_string()];
    if let Some(p) = partition {
        args.push(format!("--partition={p}"));
    }
    let out = run("sinfo", &args, None).ok()?;
    let total: u64 = out
        .lines()
        .filter_map(|l| l.trim().rsplit('/').next()?.parse::<u64>().ok())
        .sum();
    (total > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_rows_expand_pending_ranges() {
        let rows = parse_squeue(
            "5|1-3,7%2|PENDING|JobArrayTaskLimit\n5|0|RUNNING|None\n9|N/A|COMPLETED|None\n",
        );
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].tasks, vec![1, 2, 3, 7]);
        assert_eq!(rows[0].state, TaskState::Pending);
        assert_eq!(rows[0].reason, "JobArrayTaskLimit");
        assert_eq!(rows[1].tasks, vec![0]);
        assert!(rows[2].tasks.is_empty());
        assert_eq!(parse_task_indices("[0-2]"), Some(vec![0, 1, 2]));
        assert_eq!(parse_task_indices("x"), None);
        assert_eq!(parse_task_indices("3-1"), None);
    }

    #[test]
    fn config_values_are_read_from_scontrol_output() {
        let text = "MaxArraySize            = 1001\nMaxJobCount             = 10000\n";
        assert_eq!(parse_config_value(text, "MaxArraySize"), Some("1001"));
        assert_eq!(parse_config_value(text, "MinJobAge"), None);
    }
}
