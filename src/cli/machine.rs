//! Options shared by `simulate` and `trace info`: how to read a trace's memory and extended
//! fields, and a topology imported from an Alea/AleaNG machine file (docs/cli.md).

use std::path::PathBuf;

use super::CliError;
use crate::sim::topology::{Cluster, Topology};
use crate::sim::{Allocation, Machine, TopologyMachine};
use crate::swf::{Extended, MemoryReading, ReadOptions};

#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// Unit and scope of the memory fields: kb_per_proc (the SWF standard), kb_per_node (Alea,
    /// AleaNG), bytes_per_node (wagap-2013) or ignore.
    #[arg(long, value_name = "READING", default_value = "kb_per_proc")]
    pub memory: MemoryReading,
    /// Read field 7 (used memory) when field 10 (requested memory) is unknown.
    #[arg(long)]
    pub used_memory_fallback: bool,
    /// Dialect of the fields after the 18th: auto, alea, aleang or ignore.
    #[arg(long, value_name = "DIALECT", default_value = "auto")]
    pub extended_fields: Extended,
    /// Read the trace as a job table (CSV or Parquet) through this mapping: a shipped one
    /// (pm100, philly, helios, alibaba_pai; slurm for sacct dumps) or a mapping YAML file
    /// (docs/sources.md).
    #[arg(long, value_name = "NAME|FILE")]
    pub mapping: Option<String>,
    /// Job tables: keep only rows of these statuses (comma-separated; ignoring case).
    #[arg(
        long,
        value_name = "STATUS,...",
        value_delimiter = ',',
        requires = "mapping"
    )]
    pub keep_status: Option<Vec<String>>,
    /// Job tables: keep only rows of these queues or partitions (comma-separated).
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        requires = "mapping"
    )]
    pub keep_partition: Option<Vec<String>>,
    /// Job tables: keep rows submitted at or after this date-time (or epoch seconds).
    #[arg(long, value_name = "TIME", requires = "mapping")]
    pub since: Option<String>,
    /// Job tables: keep rows submitted before this date-time (or epoch seconds).
    #[arg(long, value_name = "TIME", requires = "mapping")]
    pub until: Option<String>,
}

impl ReadArgs {
    /// The reading options; with `--mapping`, the job table's mapping, read and checked.
    pub fn options(&self) -> Result<ReadOptions, CliError> {
        let mut options = ReadOptions {
            memory: self.memory,
            used_memory_fallback: self.used_memory_fallback,
            extended: self.extended_fields,
            ..ReadOptions::default()
        };
        if let Some(m) = &self.mapping {
            let keep = crate::table::Keep {
                status: self.keep_status.clone(),
                partitions: self.keep_partition.clone(),
                since: self.since.clone(),
                until: self.until.clone(),
            };
            let reading = crate::table::mapping::by_name_or_file(m, Some(keep)).map_err(
                |(message, hint)| match hint {
                    Some(h) => CliError::input(message).with_hint(h),
                    None => CliError::input(message),
                },
            )?;
            options.format = crate::swf::TraceFormat::Table(std::sync::Arc::new(reading));
        }
        Ok(options)
    }
}

#[derive(Debug, clap::Args)]
pub struct TopologyArgs {
    /// Simulate on the clusters of this Alea or AleaNG machine file instead of a processor pool.
    #[arg(long, value_name = "FILE")]
    pub machines: Option<PathBuf>,
    /// With --machines: jobs take whole nodes (exclusive) or share them (shared, the default).
    #[arg(long, value_name = "shared|exclusive", requires = "machines")]
    pub allocation: Option<AllocationArg>,
    /// With --machines: treat every memory request as 0.
    #[arg(long, requires = "machines")]
    pub ignore_memory: bool,
    /// With --machines: scale runtimes by the speed of the nodes a job runs on.
    #[arg(long, requires = "machines")]
    pub scale_runtime: bool,
    /// With --machines: give every node these properties (comma-separated: `x86_64,brno`),
    /// as a manifest's cluster-level `properties:` does (machine files list none).
    #[arg(
        long,
        value_name = "LIST",
        requires = "machines",
        value_delimiter = ','
    )]
    pub properties: Vec<String>,
    /// With --machines: give the nodes of one imported cluster these properties
    /// (`zewura=nodecpus80` or `zegox=debian,linux`; repeat for several clusters).
    #[arg(long, value_name = "CLUSTER=LIST", requires = "machines")]
    pub cluster_properties: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AllocationArg {
    Shared,
    Exclusive,
}

impl TopologyArgs {
    /// The machine of `--machines`, if given.
    pub fn machine(&self) -> Result<Option<Machine>, CliError> {
        let Some(path) = &self.machines else {
            return Ok(None);
        };
        let file = crate::machines::read_path(path).map_err(|e| {
            CliError::input(format!("failed to import the machine file: {e}")).with_hint(
                "Alea lines are `id name nodes cpus_per_node rating ram_KB`; AleaNG lines \
                 `cl_id name nodes CPUs speed GB_RAM properties GPUs`",
            )
        })?;
        let mut clusters = file.clusters;
        add_properties(&mut clusters, &self.properties, &self.cluster_properties)?;
        if self.allocation == Some(AllocationArg::Exclusive) {
            for c in &mut clusters {
                c.allocation = Allocation::ExclusiveNodes;
            }
        }
        let topology = Topology::new(clusters);
        topology
            .validate()
            .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
        Ok(Some(Machine::Topology(TopologyMachine {
            ignore_memory: self.ignore_memory,
            scale_runtime: self.scale_runtime,
            ..TopologyMachine::new(topology)
        })))
    }
}

/// Adds `every` to every node class and each `cluster=a,b` of `per_cluster` to that cluster's
/// classes (sorted, without duplicates, as the manifest's `properties:` keys do).
fn add_properties(
    clusters: &mut [Cluster],
    every: &[String],
    per_cluster: &[String],
) -> Result<(), CliError> {
    let every: Vec<String> = every
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let mut extra: Vec<(usize, Vec<String>)> = Vec::new();
    for arg in per_cluster {
        let Some((name, list)) = arg.split_once('=') else {
            return Err(CliError::input(format!(
                "--cluster-properties `{arg}`: expected CLUSTER=LIST"
            ))
            .with_hint("e.g. --cluster-properties zewura=nodecpus80"));
        };
        let Some(index) = clusters.iter().position(|c| c.name == name) else {
            let known: Vec<&str> = clusters.iter().map(|c| c.name.as_str()).collect();
            return Err(CliError::input(format!(
                "--cluster-properties `{arg}`: the machine file has no cluster `{name}`"
            ))
            .with_hint(format!("its clusters: {}", known.join(", "))));
        };
        let list = list
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(String::from);
        extra.push((index, every.iter().cloned().chain(list).collect()));
    }
    for (i, cluster) in clusters.iter_mut().enumerate() {
        let mine = extra.iter().filter(|(c, _)| *c == i).flat_map(|(_, l)| l);
        let all: Vec<String> = every.iter().chain(mine).cloned().collect();
        if all.is_empty() {
            continue;
        }
        for class in &mut cluster.classes {
            class.properties.extend(all.iter().cloned());
            class.properties.sort();
            class.properties.dedup();
        }
    }
    Ok(())
}
