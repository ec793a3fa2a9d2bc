//! AleaNG's machine files: `cl_id name nodes CPUs speed GB_RAM properties GPUs`, `;` comments.
//!
//! One line is one cluster of identical nodes. RAM is GB per node with GB = 2^30 bytes (the
//! convention of AleaNG, PBS and Slurm, and of the MetaCentrum papers' "512 GB" nodes); the
//! speed is relative (> 0); the 7th column is the cluster's *partition* (AleaNG's
//! `MachineLoader` keeps it whole as the cluster's properties string; a job whose field 21 does
//! not contain `all` runs only where its first token equals it), read as the class's one
//! property (`-` or `none` for none).

use super::{MachinesError, cores, count, integer};
use crate::sim::Allocation;
use crate::sim::topology::{Cluster, NodeClass};

const KB_PER_GB: u64 = 1 << 20;

pub(super) fn cluster(line: u64, fields: &[&str]) -> Result<Cluster, MachinesError> {
    integer(line, fields, 0, "cl_id")?;
    let name = fields[1];
    let nodes = count(line, fields, 2, "nodes")?;
    let cores = cores(line, fields, 3, "CPUs")?;
    let speed = fields[4]
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| {
            MachinesError::at(
                line,
                format!(
                    "column 5 (speed): expected a positive number, found `{}`",
                    fields[4]
                ),
            )
        })?;
    let gb = integer(line, fields, 5, "GB of RAM per node")?;
    let memory_kb = gb.checked_mul(KB_PER_GB).ok_or_else(|| {
        MachinesError::at(
            line,
            format!("column 6 (GB of RAM per node): {gb} is too large"),
        )
    })?;
    // The partition (`MachineLoader`: `description = values[6]`, the cluster's properties
    // string), which a job's field 21 names as its first token: one name, commas and all.
    let properties: Vec<&str> = match fields[6] {
        "-" | "none" => Vec::new(),
        partition => vec![partition],
    };
    let gpus = u32::try_from(integer(line, fields, 7, "GPUs per node")?)
        .map_err(|_| MachinesError::at(line, "column 8 (GPUs per node): too many"))?;
    let class = NodeClass::new(name, nodes, cores, memory_kb)
        .with_speed(speed)
        .with_gpus(gpus)
        .with_properties(properties);
    Ok(Cluster::new(name, Allocation::Shared, vec![class]))
}

#[cfg(test)]
mod tests {
    use super::super::{MachineFormat, parse};

    #[test]
    fn example1_machines_as_written() {
        // workloads/aleang-example1/example1.swf.machines (AleaNG's Example1 file, bundled),
        // header and alignment included.
        let text = ";cl_id\tname\t\tnodes\tCPUs\tspeed\tGB_RAM\tproperties\tGPUs\n\
                    ;-------------------\n\
                    0\tcl_dedicated \t 4 \t 1 \t 1 \t 256 \t dedicated \t 4\n\
                    1\tcl_normal_1 \t 64 \t 1 \t 1 \t 256 \t normal \t 4\n";
        let file = parse(text).unwrap();
        assert_eq!(file.format, MachineFormat::AleaNg);
        let names: Vec<&str> = file.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["cl_dedicated", "cl_normal_1"]);
        let c = &file.clusters[1].classes[0];
        assert_eq!((c.count, c.cores, c.gpus, c.speed), (64, 1, 4, 1.0));
        assert_eq!(c.memory_kb, 256 * 1024 * 1024);
        assert_eq!(c.properties, ["normal"]);
    }

    #[test]
    fn speeds_and_partitions() {
        // The 7th column is one partition name, as AleaNG's MachineLoader keeps it: a comma is
        // part of the name, not a list.
        let file = parse("0 fast 2 8 2.5 16 ib,x86_64 0\n").unwrap();
        let c = &file.clusters[0].classes[0];
        assert_eq!(c.speed, 2.5);
        assert_eq!(c.properties, ["ib,x86_64"]);
        assert!(
            parse("0 a 1 1 1 1 - 0\n").unwrap().clusters[0].classes[0]
                .properties
                .is_empty()
        );
        let err = parse("0 slow 2 8 0 16 - 0\n").unwrap_err();
        assert!(err.message.contains("column 5 (speed)"), "{err}");
    }
}
