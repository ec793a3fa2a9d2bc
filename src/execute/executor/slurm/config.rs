//! Slurm settings: the `slurm:` section of the run configuration file (`schedlab.yaml`, see
//! [`crate::execute::executor::RunConfig`]), parsed exactly and then resolved into checked
//! values. Nothing here enters a node key: where and how a node runs never changes its output.

use serde::Deserialize;

/// The `slurm:` section as written (unknown keys rejected).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlurm {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Time limit of one array task, in Slurm's notation (`MM`, `MM:SS`, `HH:MM:SS`,
    /// `D-HH[:MM[:SS]]`).
    pub time: Option<String>,
    /// Memory of one array task (`--mem`): a number with an optional K/M/G/T suffix.
    pub mem: Option<String>,
    /// At most this many tasks of an array run at once (`--array=…%N`).
    pub max_parallel: Option<u32>,
    /// Estimated seconds of simulation to pack into one array task.
    pub pack_seconds: Option<u64>,
    /// Upper bound on tasks per array (default: the cluster's MaxArraySize − 1).
    pub max_array_size: Option<u32>,
    /// Upper bound on the number of array tasks of one submission (default 10,000).
    pub max_tasks: Option<u32>,
    /// Seconds between two `squeue` calls while waiting (at least 1; default 15).
    pub poll_seconds: Option<u64>,
    /// Further `sbatch` options, passed through as given (e.g. `--constraint=skylake`).
    #[serde(default)]
    pub sbatch_args: Vec<String>,
}

/// Checked Slurm settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmConfig {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub time: Option<String>,
    pub mem: Option<String>,
    pub max_parallel: Option<u32>,
    pub pack_seconds: u64,
    pub max_array_size: Option<u32>,
    pub max_tasks: u32,
    pub poll_seconds: u64,
    pub sbatch_args: Vec<String>,
}

impl Default for SlurmConfig {
    fn default() -> Self {
        SlurmConfig {
            partition: None,
            account: None,
            qos: None,
            time: None,
            mem: None,
            max_parallel: None,
            pack_seconds: 300,
            max_array_size: None,
            max_tasks: 10_000,
            poll_seconds: 15,
            sbatch_args: Vec::new(),
        }
    }
}

impl SlurmConfig {
    /// Resolves the raw section; errors name the key (`slurm.<key>`) and what was expected.
    pub fn resolve(raw: RawSlurm) -> Result<SlurmConfig, (String, String)> {
        let defaults = SlurmConfig::default();
        if let Some(time) = &raw.time
            && !is_slurm_time(time)
        {
            return Err((
                "slurm.time".into(),
                format!("`{time}` is not a Slurm time limit (MM, MM:SS, HH:MM:SS or D-HH:MM:SS)"),
            ));
        }
        if let Some(mem) = &raw.mem
            && !is_slurm_memory(mem)
        {
            return Err((
                "slurm.mem".into(),
                format!("`{mem}` is not a Slurm memory size (a number with K, M, G or T)"),
            ));
        }
        let positive = |key: &str, v: Option<u64>| match v {
            Some(0) => Err((
                format!("slurm.{key}"),
                "expected a positive number, found 0".into(),
            )),
            _ => Ok(()),
        };
        positive("max_parallel", raw.max_parallel.map(u64::from))?;
        positive("pack_seconds", raw.pack_seconds)?;
        positive("max_array_size", raw.max_array_size.map(u64::from))?;
        positive("max_tasks", raw.max_tasks.map(u64::from))?;
        positive("poll_seconds", raw.poll_seconds)?;
        Ok(SlurmConfig {
            partition: raw.partition,
            account: raw.account,
            qos: raw.qos,
            time: raw.time,
            mem: raw.mem,
            max_parallel: raw.max_parallel,
            pack_seconds: raw.pack_seconds.unwrap_or(defaults.pack_seconds),
            max_array_size: raw.max_array_size,
            max_tasks: raw.max_tasks.unwrap_or(defaults.max_tasks),
            poll_seconds: raw.poll_seconds.unwrap_or(defaults.poll_seconds),
            sbatch_args: raw.sbatch_args,
        })
    }

    /// The `sbatch` options every submission carries.
    pub fn sbatch_options(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut opt = |name: &str, v: &Option<String>| {
            if let Some(v) = v {
                args.push(format!("--{name}={v}"));
            }
        };
        opt("partition", &self.partition);
        opt("account", &self.account);
        opt("qos", &self.qos);
        opt("time", &self.time);
        opt("mem", &self.mem);
        args.extend(self.sbatch_args.iter().cloned());
        args
    }
}

/// `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS` (sbatch's `--time`).
fn is_slurm_time(text: &str) -> bool {
    let numbers = |s: &str, max_parts: usize| {
        let parts: Vec<&str> = s.split(':').collect();
        parts.len() <= max_parts
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    match text.split_once('-') {
        Some((days, rest)) => numbers(days, 1) && numbers(rest, 3),
        None => numbers(text, 3),
    }
}

/// A number with an optional K, M, G or T suffix (sbatch's `--mem`).
fn is_slurm_memory(text: &str) -> bool {
    let digits = text.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
    !digits.is_empty()
        && text.len() - digits.len() <= 1
        && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_memory_follow_sbatch_notation() {
        for ok in ["30", "30:00", "1:00:00", "2-0", "2-12:00", "2-12:00:00"] {
            assert!(is_slurm_time(ok), "{ok}");
        }
        for bad in ["", "1h", "1:2:3:4", "-1", "1-", "a:00"] {
            assert!(!is_slurm_time(bad), "{bad}");
        }
        for ok in ["2048", "2G", "512M", "1t"] {
            assert!(is_slurm_memory(ok), "{ok}");
        }
        for bad in ["", "G", "2GB", "1.5G"] {
            assert!(!is_slurm_memory(bad), "{bad}");
        }
    }

    #[test]
    fn resolve_names_the_bad_key_and_options_pass_through() {
        let err = SlurmConfig::resolve(RawSlurm {
            time: Some("1 hour".into()),
            ..RawSlurm::default()
        })
        .unwrap_err();
        assert_eq!(err.0, "slurm.time");
        let err = SlurmConfig::resolve(RawSlurm {
            poll_seconds: Some(0),
            ..RawSlurm::default()
        })
        .unwrap_err();
        assert_eq!(err.0, "slurm.poll_seconds");
        let config = SlurmConfig::resolve(RawSlurm {
            partition: Some("short".into()),
            mem: Some("2G".into()),
            sbatch_args: vec!["--constraint=x".into()],
            ..RawSlurm::default()
        })
        .unwrap();
        assert_eq!(
            config.sbatch_options(),
            ["--partition=short", "--mem=2G", "--constraint=x"]
        );
        assert_eq!(config.pack_seconds, 300);
    }
}
