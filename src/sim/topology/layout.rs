//! A topology flattened for simulation: global class and node indices, each class's capacity,
//! the classes each constraint admits, and the feasibility check of a job.
//!
//! Classes are numbered in topology order (clusters as listed, classes within each as listed)
//! and nodes consecutively by class, so class `c` owns nodes `first_node(c)..first_node(c+1)`.

use std::ops::Range;
use std::sync::Arc;

use super::cluster::{Topology, TopologyError};
use super::constraint::{Constraint, ConstraintTable};
use super::placement::Placement;
use super::request::{ClassCapacity, JobRequest, Misfit, NodeShape};
use crate::sim::job::Time;
use crate::sim::machine::{Allocation, Infeasible, TopologyMachine};
use crate::sim::resources::ResourceVec;

/// One class as the simulator sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassInfo {
    /// Index of its cluster in the topology.
    pub cluster: u32,
    /// Its nodes: `nodes.start..nodes.end` in global node indices.
    pub nodes: Range<u32>,
    pub capacity: ClassCapacity,
    pub speed: f64,
}

#[derive(Clone, Debug)]
pub struct Layout {
    topology: Arc<Topology>,
    classes: Vec<ClassInfo>,
    /// Per node: its class.
    node_class: Vec<u32>,
    ignore_memory: bool,
    scale_runtime: bool,
    fastest: f64,
}

impl Layout {
    /// Flattens `machine`'s topology after validating it.
    pub fn new(machine: &TopologyMachine) -> Result<Self, TopologyError> {
        let topology = &machine.topology;
        topology.validate()?;
        let mut classes = Vec::new();
        let mut node_class = Vec::with_capacity(topology.nodes() as usize);
        for (ci, cluster) in topology.clusters.iter().enumerate() {
            for class in &cluster.classes {
                let first = node_class.len() as u32;
                let index = classes.len() as u32;
                node_class.extend(std::iter::repeat_n(index, class.count as usize));
                classes.push(ClassInfo {
                    cluster: ci as u32,
                    nodes: first..first + class.count,
                    capacity: ClassCapacity {
                        per_node: ResourceVec([
                            u64::from(class.cores),
                            class.memory_kb,
                            u64::from(class.gpus),
                        ]),
                        nodes: class.count,
                        whole_nodes: cluster.allocation == Allocation::ExclusiveNodes,
                    },
                    speed: class.speed,
                });
            }
        }
        let fastest = classes.iter().map(|c| c.speed).fold(0.0, f64::max);
        Ok(Layout {
            topology: Arc::clone(topology),
            classes,
            node_class,
            ignore_memory: machine.ignore_memory,
            scale_runtime: machine.scale_runtime,
            fastest,
        })
    }

    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    pub fn classes(&self) -> &[ClassInfo] {
        &self.classes
    }

    #[inline]
    pub fn class(&self, class: u32) -> &ClassInfo {
        &self.classes[class as usize]
    }

    #[inline]
    pub fn class_of(&self, node: u32) -> u32 {
        self.node_class[node as usize]
    }

    /// Nodes in all.
    pub fn node_count(&self) -> u32 {
        self.node_class.len() as u32
    }

    /// A node's capacity (cores, memory KB, GPUs).
    #[inline]
    pub fn capacity_of(&self, node: u32) -> ResourceVec {
        self.class(self.class_of(node)).capacity.per_node
    }

    /// Whether memory requests are ignored ([`TopologyMachine::ignore_memory`]).
    pub fn ignores_memory(&self) -> bool {
        self.ignore_memory
    }

    /// The classes whose nodes satisfy `constraint` (cluster and properties), in the order
    /// `placement` tries them; or why there are none.
    pub fn eligible(
        &self,
        constraint: &Constraint,
        placement: Placement,
    ) -> Result<Vec<u32>, Infeasible> {
        let topology = &*self.topology;
        let cluster = match &constraint.cluster {
            Some(name) => Some(
                topology
                    .cluster_index(name)
                    .ok_or(Infeasible::NoSuchCluster)? as u32,
            ),
            None => None,
        };
        let mut out: Vec<u32> = Vec::new();
        let mut index = 0u32;
        for (ci, cl) in topology.clusters.iter().enumerate() {
            for class in &cl.classes {
                let in_cluster = cluster.is_none_or(|c| c == ci as u32);
                let has_all = constraint
                    .properties
                    .iter()
                    .all(|p| *p == cl.name || class.has_property(p));
                if in_cluster && has_all {
                    out.push(index);
                }
                index += 1;
            }
        }
        if out.is_empty() {
            return Err(Infeasible::NoNodeWithProperties);
        }
        placement.order_classes(&mut out, |c| self.class(c).capacity.per_node);
        Ok(out)
    }

    /// The eligible classes of every constraint of a workload, by constraint id.
    pub fn eligibility(
        &self,
        constraints: &ConstraintTable,
        placement: Placement,
    ) -> Vec<Result<Vec<u32>, Infeasible>> {
        constraints
            .iter()
            .map(|c| self.eligible(c, placement))
            .collect()
    }

    /// The request of a job of `procs` processors resolved on `class`.
    #[inline]
    pub fn shape(&self, request: &JobRequest, procs: u32, class: u32) -> Result<NodeShape, Misfit> {
        request.on_class(
            procs,
            request.memory_kb,
            &self.class(class).capacity,
            self.ignore_memory,
        )
    }

    /// Ok if the request of a job of `procs` processors fits some class of `eligible` on an
    /// empty system, else the furthest reason any class got to (cores, then memory, then GPUs,
    /// then the number of nodes).
    pub fn admit(
        &self,
        request: &JobRequest,
        procs: u32,
        eligible: &[u32],
    ) -> Result<(), Infeasible> {
        let mut furthest = None;
        for &class in eligible {
            match self.shape(request, procs, class) {
                Ok(_) => return Ok(()),
                Err(m) => furthest = furthest.max(Some(m)),
            }
        }
        Err(match furthest {
            Some(Misfit::NoNodes) => Infeasible::EmptyRequest,
            Some(Misfit::Cores) => Infeasible::TooManyCoresPerNode,
            Some(Misfit::Memory) => Infeasible::TooMuchMemoryPerNode,
            Some(Misfit::Gpus) => Infeasible::TooManyGpusPerNode,
            Some(Misfit::Nodes) => Infeasible::TooManyNodes,
            None => Infeasible::NoNodeWithProperties,
        })
    }

    /// How long a job of trace runtime `runtime` runs on nodes whose slowest class is `class`:
    /// `ceil(runtime × fastest / speed)` with runtime scaling on, else `runtime`.
    pub fn runtime_on(&self, runtime: Time, class: u32) -> Time {
        if !self.scale_runtime {
            return runtime;
        }
        let factor = self.fastest / self.class(class).speed;
        let scaled = (runtime as f64 * factor).ceil();
        if scaled >= Time::MAX as f64 {
            Time::MAX / 4
        } else {
            (scaled as Time).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cluster::{Cluster, NodeClass};
    use super::super::request::{JobRequest, NodeDemand};
    use super::*;

    const GIB: u64 = 1 << 20;

    fn mc_like() -> TopologyMachine {
        TopologyMachine::new(Topology::new(vec![
            Cluster::new(
                "zewura",
                Allocation::Shared,
                vec![
                    NodeClass::new("n", 20, 80, 504 * GIB)
                        .with_properties(["x86_64", "cl_zewura"])
                        .with_speed(2.0),
                ],
            ),
            Cluster::new(
                "zegox",
                Allocation::ExclusiveNodes,
                vec![NodeClass::new("n", 48, 12, 90 * GIB).with_properties(["x86_64"])],
            ),
        ]))
    }

    fn node_job(count: u32, cores: u32, memory_kb: u64, gpus: u32) -> JobRequest {
        JobRequest::nodes(
            count,
            NodeDemand {
                cores,
                memory_kb,
                gpus,
            },
        )
    }

    #[test]
    fn classes_and_nodes_are_numbered_in_topology_order() {
        let l = Layout::new(&mc_like()).unwrap();
        assert_eq!(l.node_count(), 68);
        assert_eq!(l.class(1).nodes, 20..68);
        assert_eq!((l.class_of(19), l.class_of(20)), (0, 1));
        assert!(l.class(1).capacity.whole_nodes && !l.class(0).capacity.whole_nodes);
        assert_eq!(l.capacity_of(67), ResourceVec([12, 90 * GIB, 0]));
    }

    #[test]
    fn constraints_select_classes_by_cluster_and_properties() {
        let l = Layout::new(&mc_like()).unwrap();
        let ff = Placement::FirstFit;
        assert_eq!(l.eligible(&Constraint::default(), ff), Ok(vec![0, 1]));
        assert_eq!(
            l.eligible(&Constraint::properties(["x86_64"]), ff),
            Ok(vec![0, 1])
        );
        assert_eq!(
            l.eligible(&Constraint::properties(["x86_64", "cl_zewura"]), ff),
            Ok(vec![0])
        );
        // The cluster's name is a property of its nodes.
        assert_eq!(
            l.eligible(&Constraint::properties(["zegox"]), ff),
            Ok(vec![1])
        );
        assert_eq!(l.eligible(&Constraint::cluster("zegox"), ff), Ok(vec![1]));
        assert_eq!(
            l.eligible(&Constraint::properties(["brno"]), ff),
            Err(Infeasible::NoNodeWithProperties)
        );
        assert_eq!(
            l.eligible(&Constraint::cluster("skirit"), ff),
            Err(Infeasible::NoSuchCluster)
        );
        // Best fit tries the smaller nodes first.
        assert_eq!(
            l.eligible(&Constraint::default(), Placement::BestFit),
            Ok(vec![1, 0])
        );
    }

    #[test]
    fn infeasible_jobs_get_the_furthest_reason() {
        let l = Layout::new(&mc_like()).unwrap();
        let all = [0, 1];
        assert_eq!(l.admit(&node_job(1, 64, 64 * GIB, 0), 1, &all), Ok(()));
        assert_eq!(
            l.admit(&node_job(1, 81, 0, 0), 1, &all),
            Err(Infeasible::TooManyCoresPerNode)
        );
        assert_eq!(
            l.admit(&node_job(1, 1, 600 * GIB, 0), 1, &all),
            Err(Infeasible::TooMuchMemoryPerNode)
        );
        assert_eq!(
            l.admit(&node_job(1, 1, 1, 1), 1, &all),
            Err(Infeasible::TooManyGpusPerNode)
        );
        assert_eq!(
            l.admit(&node_job(49, 1, 1, 0), 1, &all),
            Err(Infeasible::TooManyNodes)
        );
        assert_eq!(
            l.admit(&node_job(0, 1, 1, 0), 1, &all),
            Err(Infeasible::EmptyRequest)
        );
        // 30 nodes: only zegox (48 nodes) has that many.
        assert_eq!(l.admit(&node_job(30, 12, 0, 0), 1, &all), Ok(()));
        assert_eq!(
            l.admit(&node_job(30, 12, 0, 0), 1, &[0]),
            Err(Infeasible::TooManyNodes)
        );
    }

    #[test]
    fn runtime_scaling_is_relative_to_the_fastest_class() {
        let mut m = mc_like();
        assert_eq!(Layout::new(&m).unwrap().runtime_on(100, 1), 100);
        m.scale_runtime = true;
        let l = Layout::new(&m).unwrap();
        assert_eq!((l.runtime_on(100, 0), l.runtime_on(100, 1)), (100, 200));
        assert_eq!(l.runtime_on(1, 1), 2);
    }
}
