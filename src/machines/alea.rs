//! Alea's machine files: `id name nodes cpus_per_node rating [ram_per_node_KB]`.
//!
//! One line is one cluster of identical nodes (Alea's `MachineLoader`). The fifth column is
//! Alea's per-CPU rating (its GridSim MIPS); in MetaCentrum's `mc.swf.machines` it counts
//! 1..20 like an index, so it is **not** read as a speed: every class gets speed 1 (set speeds
//! in the manifest). RAM is KB per node (0 when the column is absent). Each cluster's nodes get
//! the property `cl_<name>`, the form Alea's traces use to ask for a cluster
//! (`1:ppn=64:cl_zewura`).

use super::{MachinesError, cores, count, integer};
use crate::sim::Allocation;
use crate::sim::topology::{Cluster, NodeClass};

pub(super) fn cluster(line: u64, fields: &[&str]) -> Result<Cluster, MachinesError> {
    integer(line, fields, 0, "id")?;
    let name = fields[1];
    let nodes = count(line, fields, 2, "nodes")?;
    let cores = cores(line, fields, 3, "cpus per node")?;
    integer(line, fields, 4, "rating")?;
    let memory_kb = match fields.get(5) {
        Some(_) => integer(line, fields, 5, "RAM per node, KB")?,
        None => 0,
    };
    let class =
        NodeClass::new(name, nodes, cores, memory_kb).with_properties([format!("cl_{name}")]);
    Ok(Cluster::new(name, Allocation::Shared, vec![class]))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    #[test]
    fn wagap_machines_as_written() {
        // The two lines of workloads/wagap-2013.swf.machines (Alea's file, bundled).
        let text = "0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n";
        let file = parse(text).unwrap();
        let [zewura, zegox] = file.clusters.as_slice() else {
            panic!("two clusters")
        };
        assert_eq!(
            (zewura.name.as_str(), zewura.allocation),
            ("zewura", Allocation::Shared)
        );
        let c = &zewura.classes[0];
        assert_eq!(
            (c.count, c.cores, c.memory_kb, c.gpus),
            (20, 80, 529_426_432, 0)
        );
        assert_eq!(c.speed, 1.0);
        assert_eq!(c.properties, ["cl_zewura"]);
        let c = &zegox.classes[0];
        assert_eq!((c.count, c.cores, c.memory_kb), (48, 12, 94_035_968));
    }

    #[test]
    fn ram_is_optional_and_numbers_are_checked() {
        let file = parse("3 hermes 11 8 8\n").unwrap();
        assert_eq!(file.clusters[0].classes[0].memory_kb, 0);
        let err = parse("3 hermes 0 8 8 1\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: column 3 (nodes): expected a positive count, found `0`"
        );
        let err = parse("3 hermes 1 8 8 12GB\n").unwrap_err();
        assert!(err.message.contains("column 6 (RAM per node, KB)"), "{err}");
    }
}
