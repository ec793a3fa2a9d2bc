//! The static description of a heterogeneous system: clusters of node classes.
//!
//! A [`Topology`] is a list of [`Cluster`]s; a cluster is a list of [`NodeClass`]es, each
//! `count` identical nodes holding a resource vector (cores, memory, GPUs) plus a speed, a cost
//! and properties. Classes carry counts, so 20 clusters × 500 nodes are 20 short lines; nodes
//! exist one by one only in the engine's state ([`super::free::FreeNodes`]).
//!
//! The systems of Klusáček & Rudová (`papers/klusacek-rudova-multi-resource-fairshare.txt`,
//! Examples 3–5: ten 8-CPU/16 GB nodes and one 80-CPU/512 GB node) and MetaCentrum's
//! `alea/mc.swf.machines` are topologies of this kind: [`Topology::example_3`] builds the first.

use super::super::machine::Allocation;

/// One kind of node: `count` identical nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeClass {
    /// Shown in outputs and errors; unique within its cluster.
    pub name: String,
    /// Number of nodes (> 0).
    pub count: u32,
    /// Cores per node (> 0).
    pub cores: u32,
    /// Memory per node in KB (binary: 1 GiB = 1,048,576 KB). 0 means the class has no memory a
    /// job could ask for: only jobs requesting none fit.
    pub memory_kb: u64,
    /// GPUs per node.
    pub gpus: u32,
    /// Relative speed (> 0; 1.0 by default). With runtime scaling on
    /// ([`crate::sim::TopologyMachine::scale_runtime`]) a job runs `fastest / speed` times its
    /// trace runtime on this class.
    pub speed: f64,
    /// SPEC rating per core, if known (Klusáček & Rudová §3.2 normalise walltimes by it); kept
    /// for the fairshare penalty, unused by scheduling.
    pub spec_per_core: Option<f64>,
    /// Labels jobs may require (`infiniband`, `x86_64`, …), sorted and without duplicates. The
    /// cluster's name is an implicit property of every node in it.
    pub properties: Vec<String>,
    /// Relative cost of using a node (Klusáček & Rudová's `node_cost_i`, default 1.0).
    pub cost: f64,
}

impl NodeClass {
    /// `count` nodes of `cores` cores and `memory_kb` KB, no GPUs, speed and cost 1, no
    /// properties.
    pub fn new(name: impl Into<String>, count: u32, cores: u32, memory_kb: u64) -> Self {
        NodeClass {
            name: name.into(),
            count,
            cores,
            memory_kb,
            gpus: 0,
            speed: 1.0,
            spec_per_core: None,
            properties: Vec::new(),
            cost: 1.0,
        }
    }

    pub fn with_gpus(mut self, gpus: u32) -> Self {
        self.gpus = gpus;
        self
    }

    pub fn with_speed(mut self, speed: f64) -> Self {
        self.speed = speed;
        self
    }

    /// Sets the properties (sorted and deduplicated here).
    pub fn with_properties<S: Into<String>>(mut self, props: impl IntoIterator<Item = S>) -> Self {
        self.properties = props.into_iter().map(Into::into).collect();
        self.properties.sort();
        self.properties.dedup();
        self
    }

    pub fn has_property(&self, property: &str) -> bool {
        self.properties
            .binary_search_by(|p| p.as_str().cmp(property))
            .is_ok()
    }
}

/// Nodes managed together: one allocation rule, one name jobs and reservations may ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Unique within the topology.
    pub name: String,
    /// [`Allocation::Shared`]: jobs share a node's cores, memory and GPUs.
    /// [`Allocation::ExclusiveNodes`]: every job takes whole nodes.
    pub allocation: Allocation,
    pub classes: Vec<NodeClass>,
}

impl Cluster {
    pub fn new(name: impl Into<String>, allocation: Allocation, classes: Vec<NodeClass>) -> Self {
        Cluster {
            name: name.into(),
            allocation,
            classes,
        }
    }

    pub fn nodes(&self) -> u64 {
        self.classes.iter().map(|c| u64::from(c.count)).sum()
    }
}

/// A whole system: the clusters jobs may run on. A job runs inside one cluster, on nodes of one
/// class (docs/semantics.md, "Topologies").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub clusters: Vec<Cluster>,
}

/// A topology the simulator cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("the topology has no cluster")]
    Empty,
    #[error("cluster {cluster:?} has no node class")]
    NoClass { cluster: String },
    #[error("two clusters are named {0:?}")]
    DuplicateCluster(String),
    #[error("cluster {cluster:?} has two node classes named {class:?}")]
    DuplicateClass { cluster: String, class: String },
    #[error("cluster {cluster:?}, class {class:?}: {problem}")]
    BadClass {
        cluster: String,
        class: String,
        problem: &'static str,
    },
    #[error("the topology has {0} nodes; at most {max} are supported", max = MAX_NODES)]
    TooManyNodes(u64),
    #[error(
        "cluster {cluster:?}, class {class:?}: {cores} cores per node; at most {max} are supported",
        max = MAX_CORES_PER_NODE
    )]
    TooManyCores {
        cluster: String,
        class: String,
        cores: u32,
    },
    #[error(
        "the node classes have {0} cores per node in all; at most {max} are supported",
        max = MAX_CLASS_CORES
    )]
    TooManyClassCores(u64),
}

/// The most cores one node may have. The engine keeps, per node class, a counter per possible
/// free-core count (a histogram of `cores + 1` entries), so this bounds its memory per class.
pub const MAX_CORES_PER_NODE: u64 = 1 << 20;

/// The most cores per node summed over a topology's node classes (the histograms in all:
/// 256 MiB at most).
pub const MAX_CLASS_CORES: u64 = 1 << 26;

/// Nodes a topology may hold in all (node indices are `u32`; this keeps them far from overflow
/// and the engine's per-node state bounded).
pub const MAX_NODES: u64 = 1 << 24;

impl Topology {
    pub fn new(clusters: Vec<Cluster>) -> Self {
        Topology { clusters }
    }

    /// Klusáček & Rudová's Examples 3–5: one shared cluster of ten 8-CPU / 16 GB nodes and one
    /// 80-CPU / 512 GB node.
    pub fn example_3() -> Self {
        const GIB: u64 = 1 << 20;
        Topology::new(vec![Cluster::new(
            "example",
            Allocation::Shared,
            vec![
                NodeClass::new("small", 10, 8, 16 * GIB),
                NodeClass::new("big", 1, 80, 512 * GIB),
            ],
        )])
    }

    /// Checks what the simulator relies on: names unique, counts, cores, speeds and costs
    /// positive and finite, at most [`MAX_NODES`] nodes, [`MAX_CORES_PER_NODE`] cores a node and
    /// [`MAX_CLASS_CORES`] cores per node summed over the classes. Nothing is allocated for the
    /// topology's size before this passes.
    pub fn validate(&self) -> Result<(), TopologyError> {
        if self.clusters.is_empty() {
            return Err(TopologyError::Empty);
        }
        let mut names: Vec<&str> = self.clusters.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(TopologyError::DuplicateCluster(w[0].to_string()));
        }
        let mut total = 0u64;
        let mut class_cores = 0u64;
        for cluster in &self.clusters {
            if cluster.classes.is_empty() {
                return Err(TopologyError::NoClass {
                    cluster: cluster.name.clone(),
                });
            }
            let mut classes: Vec<&str> = cluster.classes.iter().map(|c| c.name.as_str()).collect();
            classes.sort_unstable();
            if let Some(w) = classes.windows(2).find(|w| w[0] == w[1]) {
                return Err(TopologyError::DuplicateClass {
                    cluster: cluster.name.clone(),
                    class: w[0].to_string(),
                });
            }
            for class in &cluster.classes {
                let problem = if class.count == 0 {
                    Some("it has no node (count must be positive)")
                } else if class.cores == 0 {
                    Some("its nodes have no core (cores must be positive)")
                } else if !(class.speed.is_finite() && class.speed > 0.0) {
                    Some("its speed must be a positive number")
                } else if !(class.cost.is_finite() && class.cost >= 0.0) {
                    Some("its cost must be a non-negative number")
                } else if class
                    .spec_per_core
                    .is_some_and(|s| !(s.is_finite() && s > 0.0))
                {
                    Some("its SPEC rating must be a positive number")
                } else {
                    None
                };
                if let Some(problem) = problem {
                    return Err(TopologyError::BadClass {
                        cluster: cluster.name.clone(),
                        class: class.name.clone(),
                        problem,
                    });
                }
                if u64::from(class.cores) > MAX_CORES_PER_NODE {
                    return Err(TopologyError::TooManyCores {
                        cluster: cluster.name.clone(),
                        class: class.name.clone(),
                        cores: class.cores,
                    });
                }
                total += u64::from(class.count);
                class_cores += u64::from(class.cores) + 1;
            }
        }
        if total > MAX_NODES {
            return Err(TopologyError::TooManyNodes(total));
        }
        if class_cores > MAX_CLASS_CORES {
            return Err(TopologyError::TooManyClassCores(class_cores));
        }
        Ok(())
    }

    /// Nodes in all.
    pub fn nodes(&self) -> u64 {
        self.clusters.iter().map(Cluster::nodes).sum()
    }

    /// Cores in all.
    pub fn cores(&self) -> u64 {
        self.classes()
            .map(|(_, c)| u64::from(c.count) * u64::from(c.cores))
            .sum()
    }

    /// Every class with its cluster, in topology order (the order of global class indices).
    pub fn classes(&self) -> impl Iterator<Item = (&Cluster, &NodeClass)> + '_ {
        self.clusters
            .iter()
            .flat_map(|cl| cl.classes.iter().map(move |c| (cl, c)))
    }

    /// The cluster named `name`, by index.
    pub fn cluster_index(&self, name: &str) -> Option<usize> {
        self.clusters.iter().position(|c| c.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_3_has_the_papers_totals() {
        let t = Topology::example_3();
        t.validate().unwrap();
        // "Together, the system has 160 CPUs and 672 GB of RAM."
        assert_eq!(t.cores(), 160);
        assert_eq!(t.nodes(), 11);
        let memory: u64 = t
            .classes()
            .map(|(_, c)| u64::from(c.count) * c.memory_kb)
            .sum();
        assert_eq!(memory, 672 << 20);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut t = Topology::example_3();
        t.clusters[0].classes[1].speed = 0.0;
        assert_eq!(
            t.validate().unwrap_err().to_string(),
            "cluster \"example\", class \"big\": its speed must be a positive number"
        );
        let mut t = Topology::example_3();
        t.clusters.push(t.clusters[0].clone());
        assert_eq!(
            t.validate(),
            Err(TopologyError::DuplicateCluster("example".into()))
        );
        let mut t = Topology::example_3();
        t.clusters[0].classes[0].count = 0;
        assert!(t.validate().is_err());
        assert_eq!(Topology::default().validate(), Err(TopologyError::Empty));
    }

    #[test]
    fn properties_are_sorted_sets() {
        let c = NodeClass::new("a", 1, 1, 0).with_properties(["x86_64", "infiniband", "x86_64"]);
        assert_eq!(c.properties, ["infiniband", "x86_64"]);
        assert!(c.has_property("x86_64"));
        assert!(!c.has_property("brno"));
    }
}
