//! Options shared by `simulate` and `trace info`: how to read a trace's memory and extended
//! fields, and a topology imported from an Alea/AleaNG machine file (docs/cli.md).

use std::path::PathBuf;

use super::CliError;
use crate::sim::topology::Topology;
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
}

impl ReadArgs {
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            memory: self.memory,
            used_memory_fallback: self.used_memory_fallback,
            extended: self.extended_fields,
        }
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
