//! Job penalties P(j): how much of the machine one second of a job's walltime is charged as
//! (Klusáček & Rudová, "Multi-Resource Aware Fairsharing for Heterogeneous Systems", §2–3;
//! `papers/klusacek-rudova-multi-resource-fairshare.txt`). A user's fairshare usage is
//! F_u = Σ walltime_j × N_j × P(j) (Formula 1, with the walltime normalisation N_j of Formulas 6
//! and 9), accumulated by [`super::Ledger`].
//!
//! Every model of the paper, by name ([`PenaltyModel`]):
//!
//! | name | formula | P(j) |
//! |---|---|---|
//! | `cpu` | §2.1 | requested cores |
//! | `standard_job` | F2 | max(cores / std cores, memory / std memory [, GPUs / std GPUs]) |
//! | `pe_global` | F3 (Maui/Moab processor equivalent) | max(cores / all cores, memory / all memory [, GPUs / all GPUs]) × all cores |
//! | `pe_local` | F4 | PE of the job on the class that ran it, × node cost |
//! | `pe_min` | F5, F7–F8 | min over the classes able to run the job of its local PE |
//!
//! The local processor equivalent of a job on class i (Formulas 4 and 7) is summed over the nodes
//! the job takes there (Formula 8):
//! PE(j, i) = cost_i × Σ_k max(cores_k / cores_i, memory_k / memory_i [, GPUs_k / GPUs_i]) × cores_i,
//! with the amounts the job is *allocated* on node k (footnote 3: what is reserved for a job is
//! what it is charged for), so a job with whole nodes (an `#excl` request, an exclusive cluster)
//! pays for whole nodes.
//!
//! Choices where the paper leaves room, each named in docs/fairshare.md:
//! - **One class per job.** Our jobs run on nodes of one class, so the classes able to run job j
//!   (M_j) are those where its whole request fits on an empty system, and F8's sum of per-node
//!   minima is the minimum over those classes of the per-class sum. For the paper's uniform node
//!   specs (`8:ppn=8`) this is F8 exactly; a class with too few nodes for the whole job is not in
//!   M_j (the paper would let each node pick the cheapest machine even when there are not that
//!   many of them).
//! - **Flexible requests** (plain SWF: cores and memory per core) have no node spec: on each
//!   class they take the nodes the topology's request rule gives ([`JobRequest::on_class`]), and
//!   `pe_min` is the cheapest class.
//! - **The queue cost multiplies every model** (F5 has it explicitly; for the other models it is
//!   the analogue of Slurm's per-QOS usage factor). It defaults to 1, which leaves every formula
//!   exactly as printed.
//! - **GPUs** are a further resource in the max only when [`PenaltySpec::gpus`] is on (the paper
//!   leaves GPUs to future work, §5); a node class with no GPUs adds no GPU term.
//! - **Memory-blind machines.** With [`TopologyMachine::ignore_memory`] and on uniform machines
//!   (which model no memory) every memory amount is 0, so the PE models count cores only.
//!
//! Walltime normalisation (F6, F9) multiplies a job's walltime by the rating of the slowest node
//! it used — its class's, since a job's nodes are all of one class: [`Normalization::Spec`] uses
//! the SPEC rating per core ([`NodeClass::spec_per_core`]), [`Normalization::Speed`] the relative
//! speed.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::sim::job::Job;
use crate::sim::machine::{Infeasible, Machine, TopologyMachine};
use crate::sim::resources::ResourceVec;
use crate::sim::topology::{
    Cluster, ConstraintTable, JobRequest, Layout, NodeClass, NodeShape, Placement, RequestTable,
    Shape, Topology,
};

/// A penalty model, by the name manifests and outputs use.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum PenaltyModel {
    /// Requested cores (§2.1: the classic single-resource fairshare).
    #[default]
    Cpu,
    /// Formula 2: the number of "standard jobs" the job's request amounts to.
    StandardJob,
    /// Formula 3: Maui/Moab's processor equivalent over the whole system.
    PeGlobal,
    /// Formula 4: the processor equivalent on the class that ran the job, times its node cost.
    PeLocal,
    /// Formulas 5 and 8: the cheapest local processor equivalent over the classes able to run
    /// the job, times the queue cost.
    PeMin,
}

impl PenaltyModel {
    pub const ALL: [PenaltyModel; 5] = [
        PenaltyModel::Cpu,
        PenaltyModel::StandardJob,
        PenaltyModel::PeGlobal,
        PenaltyModel::PeLocal,
        PenaltyModel::PeMin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PenaltyModel::Cpu => "cpu",
            PenaltyModel::StandardJob => "standard_job",
            PenaltyModel::PeGlobal => "pe_global",
            PenaltyModel::PeLocal => "pe_local",
            PenaltyModel::PeMin => "pe_min",
        }
    }

    /// Whether the penalty depends on where the job ran (only `pe_local`: the paper's "sensitive
    /// to scheduler decisions").
    pub fn depends_on_placement(self) -> bool {
        self == PenaltyModel::PeLocal
    }
}

impl std::fmt::Display for PenaltyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PenaltyModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PenaltyModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown penalty model {s:?} (expected cpu, standard_job, pe_global, pe_local or pe_min)"
                )
            })
    }
}

/// The "standard job" of Formula 2: what one unit of penalty stands for.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StandardJob {
    /// Cores (> 0).
    pub cores: f64,
    /// Memory in KB (> 0).
    pub memory_kb: f64,
    /// GPUs; 0 leaves GPUs out of the max even with [`PenaltySpec::gpus`] on.
    pub gpus: f64,
}

impl Default for StandardJob {
    /// The paper's example: 1 CPU and 1 GB of RAM.
    fn default() -> Self {
        StandardJob {
            cores: 1.0,
            memory_kb: (1u64 << 20) as f64,
            gpus: 0.0,
        }
    }
}

/// Walltime normalisation (Formulas 6 and 9): what a second of walltime is multiplied by.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    /// Walltime as it is (the paper's scheduling experiment, §4).
    #[default]
    None,
    /// × the SPEC rating per core of the job's class (F6/F9); every class needs one.
    Spec,
    /// × the relative speed of the job's class.
    Speed,
}

impl Normalization {
    pub fn name(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::Spec => "spec",
            Normalization::Speed => "speed",
        }
    }
}

/// Everything that defines P(j) and the walltime normalisation.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PenaltySpec {
    pub model: PenaltyModel,
    /// The standard job of `standard_job` (ignored by the other models).
    pub standard_job: StandardJob,
    /// GPUs as a further resource in the max of the PE models and of `standard_job`.
    pub gpus: bool,
    pub normalization: Normalization,
    /// Cost per queue (SWF queue number), multiplying every model's penalty; 1 when absent.
    pub queue_costs: BTreeMap<i32, f64>,
}

impl PenaltySpec {
    pub fn of(model: PenaltyModel) -> Self {
        PenaltySpec {
            model,
            ..PenaltySpec::default()
        }
    }
}

/// A penalty specification the system cannot price jobs with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PenaltyError {
    #[error(
        "walltime normalisation by SPEC needs a SPEC rating for every node class; cluster {cluster:?}, class {class:?} has none"
    )]
    MissingSpec { cluster: String, class: String },
    #[error("the standard job's {what} must be a positive number")]
    BadStandardJob { what: &'static str },
    #[error("queue {queue}: its cost must be a non-negative number")]
    BadQueueCost { queue: i32 },
    #[error("{0}")]
    Topology(String),
}

/// The system a workload's jobs are priced on: the topology flattened, system totals, and the
/// classes each constraint admits. Built once per simulation (or per trace analysis).
#[derive(Clone, Debug)]
pub struct Pricing {
    spec: PenaltySpec,
    layout: Layout,
    /// Per class: node cost and walltime factor.
    cost: Vec<f64>,
    walltime_factor: Vec<f64>,
    /// All cores, memory (KB) and GPUs of the system.
    total: [f64; 3],
    /// Per constraint id: the classes whose nodes satisfy it (empty: none).
    eligible: Vec<Vec<u32>>,
    /// The workload's requests (`Job::request`).
    requests: RequestTable,
    /// Uniform machines ignore constraints: every class is eligible.
    uniform: bool,
}

impl Pricing {
    /// Prices jobs of a workload with constraint table `constraints` and request table
    /// `requests` on `machine`.
    pub fn new(
        machine: &Machine,
        (constraints, requests): (&ConstraintTable, &RequestTable),
        spec: &PenaltySpec,
    ) -> Result<Self, PenaltyError> {
        let (topology_machine, uniform) = match machine {
            Machine::Topology(t) => (t.clone(), false),
            Machine::Uniform(u) => {
                let class = NodeClass::new("nodes", u.nodes, u.procs_per_node, 0);
                let t = Topology::new(vec![Cluster::new("machine", u.allocation, vec![class])]);
                let mut tm = TopologyMachine::new(t);
                tm.ignore_memory = true;
                (tm, true)
            }
        };
        Self::on_topology(&topology_machine, (constraints, requests), spec, uniform)
    }

    fn on_topology(
        machine: &TopologyMachine,
        (constraints, requests): (&ConstraintTable, &RequestTable),
        spec: &PenaltySpec,
        uniform: bool,
    ) -> Result<Self, PenaltyError> {
        let s = &spec.standard_job;
        for (what, v, strict) in [
            ("cores", s.cores, true),
            ("memory", s.memory_kb, true),
            ("GPUs", s.gpus, false),
        ] {
            if !v.is_finite() || v < 0.0 || (strict && v == 0.0) {
                return Err(PenaltyError::BadStandardJob { what });
            }
        }
        if let Some((&queue, _)) = spec
            .queue_costs
            .iter()
            .find(|(_, c)| !(c.is_finite() && **c >= 0.0))
        {
            return Err(PenaltyError::BadQueueCost { queue });
        }
        let layout = Layout::new(machine).map_err(|e| PenaltyError::Topology(e.to_string()))?;
        let topology: &Arc<Topology> = &machine.topology;
        let mut cost = Vec::new();
        let mut walltime_factor = Vec::new();
        let mut total = [0.0f64; 3];
        for (cluster, class) in topology.classes() {
            cost.push(class.cost);
            walltime_factor.push(match spec.normalization {
                Normalization::None => 1.0,
                Normalization::Speed => class.speed,
                Normalization::Spec => {
                    class
                        .spec_per_core
                        .ok_or_else(|| PenaltyError::MissingSpec {
                            cluster: cluster.name.clone(),
                            class: class.name.clone(),
                        })?
                }
            });
            let n = f64::from(class.count);
            let memory = if machine.ignore_memory {
                0
            } else {
                class.memory_kb
            };
            total[0] += n * f64::from(class.cores);
            total[1] += n * memory as f64;
            total[2] += n * f64::from(class.gpus);
        }
        let eligible = constraints
            .iter()
            .map(|c| {
                if uniform {
                    (0..layout.classes().len() as u32).collect()
                } else {
                    layout.eligible(c, Placement::FirstFit).unwrap_or_default()
                }
            })
            .collect();
        Ok(Pricing {
            spec: spec.clone(),
            layout,
            cost,
            walltime_factor,
            total,
            eligible,
            requests: requests.clone(),
            uniform,
        })
    }

    pub fn spec(&self) -> &PenaltySpec {
        &self.spec
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether the machine priced on is a uniform one (one class standing for it).
    pub fn is_uniform(&self) -> bool {
        self.uniform
    }

    /// The queue cost of `job` (1 unless the spec sets one for its queue).
    pub fn queue_cost(&self, job: &Job) -> f64 {
        self.spec
            .queue_costs
            .get(&job.queue)
            .copied()
            .unwrap_or(1.0)
    }

    /// The walltime normalisation factor of a job that ran on `class` (1 without
    /// normalisation).
    pub fn walltime_factor(&self, class: u32) -> f64 {
        self.walltime_factor[class as usize]
    }

    /// What `job` asks of the topology.
    pub fn request(&self, job: &Job) -> &JobRequest {
        self.requests.get(job.request)
    }

    /// The job's requested totals (cores, memory KB, GPUs), as the global models read them.
    pub fn requested(&self, job: &Job) -> [f64; 3] {
        let ignore_memory = self.layout.ignores_memory();
        let request = self.request(job);
        let [cores, memory, gpus] = match request.shape {
            Shape::Flexible => [
                u64::from(job.procs),
                u64::from(job.procs) * request.memory_kb,
                0,
            ],
            Shape::Nodes { count, per_node } => {
                let n = u64::from(count);
                [
                    n * u64::from(per_node.cores),
                    n * per_node.memory_kb,
                    n * u64::from(per_node.gpus),
                ]
            }
        };
        let memory = if ignore_memory { 0 } else { memory };
        [cores as f64, memory as f64, gpus as f64]
    }

    /// The classes able to run `job` (M_j): eligible by its constraint, and its whole request
    /// fits there on an empty system.
    pub fn able<'a>(&'a self, job: &'a Job) -> impl Iterator<Item = (u32, NodeShape)> + 'a {
        let request = self.request(job);
        let eligible = self
            .eligible
            .get(request.constraint.0 as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        eligible.iter().filter_map(move |&c| {
            let shape = self.layout.shape(request, job.procs, c).ok()?;
            Some((c, shape))
        })
    }

    /// Why `job` can run nowhere, if so.
    pub fn infeasible(&self, job: &Job) -> Option<Infeasible> {
        let request = self.request(job);
        let eligible = self
            .eligible
            .get(request.constraint.0 as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if eligible.is_empty() {
            return Some(Infeasible::NoNodeWithProperties);
        }
        self.layout.admit(request, job.procs, eligible).err()
    }

    /// §2.1: requested cores (× queue cost).
    pub fn cpu(&self, job: &Job) -> f64 {
        self.queue_cost(job) * self.requested(job)[0]
    }

    /// Formula 2 (× queue cost).
    pub fn standard_job(&self, job: &Job) -> f64 {
        let [cores, memory, gpus] = self.requested(job);
        let s = &self.spec.standard_job;
        let mut p = (cores / s.cores).max(memory / s.memory_kb);
        if self.spec.gpus && s.gpus > 0.0 {
            p = p.max(gpus / s.gpus);
        }
        self.queue_cost(job) * p
    }

    /// Formula 3 (× queue cost): the processor equivalent over the whole system.
    pub fn pe_global(&self, job: &Job) -> f64 {
        let req = self.requested(job);
        let shares = [
            share(req[0], self.total[0]),
            share(req[1], self.total[1]),
            if self.spec.gpus {
                share(req[2], self.total[2])
            } else {
                0.0
            },
        ];
        self.queue_cost(job) * processor_equivalent(&shares, self.total[0])
    }

    /// Formulas 4 and 7 summed over the job's nodes on `class` (× node cost, without the queue
    /// cost); `None` if the job does not fit there.
    pub fn local_pe(&self, job: &Job, class: u32) -> Option<f64> {
        let shape = self
            .layout
            .shape(self.request(job), job.procs, class)
            .ok()?;
        Some(self.shape_pe(&shape, class))
    }

    fn shape_pe(&self, shape: &NodeShape, class: u32) -> f64 {
        let capacity = self.layout.class(class).capacity.per_node;
        let gpus = self.spec.gpus;
        let mut pe = f64::from(shape.full()) * node_pe(shape.per_node, capacity, gpus);
        if let Some(last) = shape.last {
            pe += node_pe(last, capacity, gpus);
        }
        pe * self.cost[class as usize]
    }

    /// Formula 4 (× queue cost): the job's PE on the class it ran on.
    pub fn pe_local(&self, job: &Job, class: u32) -> Option<f64> {
        Some(self.queue_cost(job) * self.local_pe(job, class)?)
    }

    /// Formulas 5 and 8: the cheapest local PE over the classes able to run the job, × queue
    /// cost; `None` if no class can.
    pub fn pe_min(&self, job: &Job) -> Option<f64> {
        let min = self
            .able(job)
            .map(|(c, shape)| self.shape_pe(&shape, c))
            .fold(None, |m: Option<f64>, pe| Some(m.map_or(pe, |m| m.min(pe))))?;
        Some(self.queue_cost(job) * min)
    }

    /// The most expensive local PE (× queue cost) over the classes able to run the job: with
    /// [`Pricing::pe_min`], the range `pe_local` may land in depending on the scheduler.
    pub fn pe_local_max(&self, job: &Job) -> Option<f64> {
        let max = self
            .able(job)
            .map(|(c, shape)| self.shape_pe(&shape, c))
            .fold(None, |m: Option<f64>, pe| Some(m.map_or(pe, |m| m.max(pe))))?;
        Some(self.queue_cost(job) * max)
    }

    /// P(j) under the spec's model. `ran_on` is the class the job ran on, needed by `pe_local`
    /// only. `None` when the job cannot run on this system (or `pe_local` without a class).
    pub fn penalty(&self, job: &Job, ran_on: Option<u32>) -> Option<f64> {
        self.penalty_under(self.spec.model, job, ran_on)
    }

    /// P(j) under `model` (with this spec's other settings).
    pub fn penalty_under(
        &self,
        model: PenaltyModel,
        job: &Job,
        ran_on: Option<u32>,
    ) -> Option<f64> {
        match model {
            PenaltyModel::Cpu => Some(self.cpu(job)),
            PenaltyModel::StandardJob => Some(self.standard_job(job)),
            PenaltyModel::PeGlobal => Some(self.pe_global(job)),
            PenaltyModel::PeLocal => self.pe_local(job, ran_on?),
            PenaltyModel::PeMin => self.pe_min(job),
        }
    }

    /// What one second of the job's walltime adds to its owner's usage on `class`:
    /// P(j) × the walltime factor (Formulas 1, 6, 9).
    pub fn rate(&self, job: &Job, class: u32) -> Option<f64> {
        Some(self.penalty(job, Some(class))? * self.walltime_factor(class))
    }
}

/// `part / whole`, 0 when the system has none of a resource (then no job asks for it).
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// The processor equivalent of Formula 3: the largest fraction of any resource, in processors.
/// Example 2 (Moab's): 20 % of the CPUs and 50 % of the memory of a 128-processor system → 64.
pub fn processor_equivalent(shares: &[f64], processors: f64) -> f64 {
    shares.iter().copied().fold(0.0, f64::max) * processors
}

/// One node's processor equivalent: its largest share of the node's cores, memory (and GPUs)
/// times the node's cores.
fn node_pe(amount: ResourceVec, capacity: ResourceVec, gpus: bool) -> f64 {
    let mut s = share(amount.0[0] as f64, capacity.0[0] as f64)
        .max(share(amount.0[1] as f64, capacity.0[1] as f64));
    if gpus {
        s = s.max(share(amount.0[2] as f64, capacity.0[2] as f64));
    }
    s * capacity.0[0] as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::machine::Allocation;
    use crate::sim::topology::{Constraint, JobRequest, NodeDemand};

    const GIB: u64 = 1 << 20;

    /// Examples 3–5: ten 8-CPU/16 GB nodes (class 0) and one 80-CPU/512 GB node (class 1).
    fn example_system(spec: &PenaltySpec) -> Pricing {
        Pricing::new(
            &Machine::topology(Topology::example_3()),
            (&ConstraintTable::default(), &RequestTable::default()),
            spec,
        )
        .unwrap()
    }

    /// A job of `count` nodes × (`cores`, `memory_gib`), its request added to `p`'s table.
    fn node_job(p: &mut Pricing, count: u32, cores: u32, memory_gib: u64) -> Job {
        job_with(p, count * cores, node_request(count, cores, memory_gib))
    }

    fn node_request(count: u32, cores: u32, memory_gib: u64) -> JobRequest {
        JobRequest::nodes(
            count,
            NodeDemand {
                cores,
                memory_kb: memory_gib * GIB,
                gpus: 0,
            },
        )
    }

    /// A job of `procs` processors asking `request`, added to `p`'s table.
    fn job_with(p: &mut Pricing, procs: u32, request: JobRequest) -> Job {
        Job {
            procs,
            request: p.requests.push(request),
            ..Job::default()
        }
    }

    /// A flexible job of `procs` processors with `memory_kb` per processor.
    fn memory_job(p: &mut Pricing, procs: u32, memory_kb: u64) -> Job {
        let request = JobRequest {
            memory_kb,
            ..JobRequest::default()
        };
        job_with(p, procs, request)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn example_2_processor_equivalent_is_64() {
        // "a job requires 20% of all CPUs and 50% of the total memory of a 128-processor
        // system ... PE = 64".
        assert!(close(processor_equivalent(&[0.2, 0.5], 128.0), 64.0));
        // The same through a job: 25 of 128 CPUs (about 20 %) and 128 of 256 GB (50 %).
        let system = Topology::new(vec![Cluster::new(
            "moab",
            Allocation::Shared,
            vec![NodeClass::new("n", 1, 128, 256 * GIB)],
        )]);
        let mut p = Pricing::new(
            &Machine::topology(system),
            (&ConstraintTable::default(), &RequestTable::default()),
            &PenaltySpec::of(PenaltyModel::PeGlobal),
        )
        .unwrap();
        let job = node_job(&mut p, 1, 25, 128);
        assert!(close(p.pe_global(&job), 64.0));
    }

    #[test]
    fn example_3_ram_constrained_job() {
        // 1 CPU and 512 GB per node: F3 = max(1/160, 512/672) × 160 = 121.9; it can only run on
        // the big node, whose 80 CPUs it occupies: F4 = F5 = 80.
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let job = node_job(&mut p, 1, 1, 512);
        assert!(close(p.pe_global(&job), 512.0 / 672.0 * 160.0));
        assert_eq!((p.pe_global(&job) * 10.0).round() / 10.0, 121.9);
        assert_eq!(p.pe_local(&job, 0), None, "does not fit a small node");
        assert!(close(p.pe_local(&job, 1).unwrap(), 80.0));
        assert!(close(p.pe_min(&job).unwrap(), 80.0));
        assert!(close(p.penalty(&job, None).unwrap(), 80.0));
    }

    #[test]
    fn example_4_cpu_constrained_job_equals_example_3_under_f5_only() {
        // 80 CPUs and 80 GB: F3 = max(80/160, 80/672) × 160 = 80, F5 = 80 on the big node.
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let ex4 = node_job(&mut p, 1, 80, 80);
        let ex3 = node_job(&mut p, 1, 1, 512);
        assert!(close(p.pe_global(&ex4), 80.0));
        assert!(close(p.pe_min(&ex4).unwrap(), 80.0));
        // Both occupy the same node: equal under F5, not under F3.
        assert_eq!(p.pe_min(&ex3), p.pe_min(&ex4));
        assert!(p.pe_global(&ex3) > p.pe_global(&ex4) + 40.0);
    }

    #[test]
    fn example_5_local_pe_depends_on_the_node_and_f5_takes_the_cheapest() {
        // 1 CPU and 16 GB: PE 8 on a small node (all its memory), 2.5 on the big one.
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeLocal));
        let job = node_job(&mut p, 1, 1, 16);
        assert!(close(p.pe_local(&job, 0).unwrap(), 8.0));
        assert!(close(p.pe_local(&job, 1).unwrap(), 2.5));
        assert!(close(p.pe_min(&job).unwrap(), 2.5));
        assert!(close(p.pe_local_max(&job).unwrap(), 8.0));
        // pe_local charges where it ran; pe_min wherever it runs.
        assert!(close(p.penalty(&job, Some(0)).unwrap(), 8.0));
        assert!(close(p.penalty(&job, Some(1)).unwrap(), 2.5));
        assert_eq!(p.penalty(&job, None), None);
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let job = node_job(&mut p, 1, 1, 16);
        for class in [0, 1] {
            assert!(close(p.penalty(&job, Some(class)).unwrap(), 2.5));
        }
    }

    #[test]
    fn the_same_job_as_a_flexible_request() {
        // 1 processor with 16 GB per processor: the same as one node of (1 CPU, 16 GB).
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let job = memory_job(&mut p, 1, 16 * GIB);
        assert!(close(p.pe_min(&job).unwrap(), 2.5));
        assert!(close(p.cpu(&job), 1.0));
    }

    #[test]
    fn multi_node_jobs_sum_the_per_node_price() {
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        // 2 nodes × (8 CPU, 16 GB): only small nodes hold two such nodes; each costs
        // max(8/8, 16/16) × 8 = 8, so P = 16 (F8: Σ_k min_i PE_k).
        let job = node_job(&mut p, 2, 8, 16);
        assert!(close(p.pe_min(&job).unwrap(), 16.0));
        // 1 node × (8 CPU, 16 GB) may also run on the big node: max(8/80, 16/512) × 80 = 8.
        let job = node_job(&mut p, 1, 8, 16);
        assert!(close(p.pe_min(&job).unwrap(), 8.0));
        // 3 nodes × (1 CPU, 16 GB): 2.5 each on the big node, but there is one big node and a
        // job's nodes are of one class, so only small nodes can run it: 3 × 8 = 24 (the paper's
        // per-node minimum would say 7.5, more cheaply than any placement could run it).
        let job = node_job(&mut p, 3, 1, 16);
        assert!(close(p.pe_min(&job).unwrap(), 24.0));
        // 2 nodes × (1 CPU, 4 GB): max(1/8, 4/16) × 8 = 2 per small node: P = 4; cpu = 2.
        let job = node_job(&mut p, 2, 1, 4);
        assert!(close(p.pe_min(&job).unwrap(), 4.0));
        assert!(close(p.cpu(&job), 2.0));
        // A flexible 20-processor job with 1 GB per processor lands on 8 + 8 + 4 cores of small
        // nodes (PE 8 + 8 + 4 = 20) or on the big node (max(20/80, 20/512) × 80 = 20): P = 20.
        let job = memory_job(&mut p, 20, GIB);
        assert!(close(p.local_pe(&job, 0).unwrap(), 20.0));
        assert!(close(p.pe_min(&job).unwrap(), 20.0));
        // With 4 GB per processor a small node takes 4 of them (memory bound): 5 nodes, each
        // charged all 8 CPUs → 40; the big node charges max(20/80, 80/512) × 80 = 20.
        let job = memory_job(&mut p, 20, 4 * GIB);
        assert!(close(p.local_pe(&job, 0).unwrap(), 40.0));
        assert!(close(p.pe_min(&job).unwrap(), 20.0));
    }

    #[test]
    fn whole_nodes_are_charged_whole() {
        // An #excl job of 1 CPU on the big node pays for all of it.
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let excl = JobRequest {
            exclusive: true,
            ..node_request(1, 1, 1)
        };
        let job = job_with(&mut p, 1, excl);
        assert!(close(p.local_pe(&job, 0).unwrap(), 8.0));
        assert!(close(p.local_pe(&job, 1).unwrap(), 80.0));
        assert!(close(p.pe_min(&job).unwrap(), 8.0));
        // On exclusive uniform nodes a 9-processor job takes two 8-processor nodes: PE 16.
        let p = Pricing::new(
            &Machine::exclusive_nodes(4, 8),
            (&ConstraintTable::default(), &RequestTable::default()),
            &PenaltySpec::of(PenaltyModel::PeMin),
        )
        .unwrap();
        let job = Job {
            procs: 9,
            ..Job::default()
        };
        assert!(close(p.pe_min(&job).unwrap(), 16.0));
        assert!(close(p.cpu(&job), 9.0));
    }

    #[test]
    fn a_pool_has_no_memory_so_pe_is_cores() {
        let mut p = Pricing::new(
            &Machine::pool(128),
            (&ConstraintTable::default(), &RequestTable::default()),
            &PenaltySpec::of(PenaltyModel::PeMin),
        )
        .unwrap();
        let job = memory_job(&mut p, 10, 100 * GIB);
        assert!(close(p.pe_min(&job).unwrap(), 10.0));
        assert!(close(p.pe_global(&job), 10.0));
        assert!(close(p.standard_job(&job), 10.0));
    }

    #[test]
    fn standard_job_is_the_largest_ratio() {
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::StandardJob));
        // 1 CPU/1 GB standard: a (2 CPU, 16 GB) job is 16 standard jobs, a (32 CPU, 1 GB) one 32.
        let job = node_job(&mut p, 1, 2, 16);
        assert!(close(p.standard_job(&job), 16.0));
        let job = node_job(&mut p, 1, 32, 1);
        assert!(close(p.standard_job(&job), 32.0));
        let mut spec = PenaltySpec::of(PenaltyModel::StandardJob);
        spec.standard_job = StandardJob {
            cores: 4.0,
            memory_kb: (8 * GIB) as f64,
            gpus: 0.0,
        };
        let mut p = example_system(&spec);
        let job = node_job(&mut p, 1, 2, 16);
        assert!(close(p.standard_job(&job), 2.0));
        spec.standard_job.cores = 0.0;
        assert_eq!(
            Pricing::new(
                &Machine::pool(1),
                (&ConstraintTable::default(), &RequestTable::default()),
                &spec
            )
            .unwrap_err(),
            PenaltyError::BadStandardJob { what: "cores" }
        );
    }

    #[test]
    fn node_cost_and_queue_cost_scale_the_price() {
        let mut t = Topology::example_3();
        t.clusters[0].classes[1].cost = 2.0;
        let mut spec = PenaltySpec::of(PenaltyModel::PeMin);
        spec.queue_costs.insert(3, 1.5);
        let mut p = Pricing::new(
            &Machine::topology(t),
            (&ConstraintTable::default(), &RequestTable::default()),
            &spec,
        )
        .unwrap();
        // Example 5's job now costs 5 on the big node, still the cheapest.
        let mut job = node_job(&mut p, 1, 1, 16);
        assert!(close(p.pe_min(&job).unwrap(), 5.0));
        job.queue = 3;
        assert!(close(p.pe_min(&job).unwrap(), 7.5));
        assert!(close(p.cpu(&job), 1.5));
        // A (1 CPU, 2 GB) job: 1 on a small node, max(1/80, 2/512) × 80 × 2 = 2 on the big one.
        let job = node_job(&mut p, 1, 1, 2);
        assert!(close(p.pe_min(&job).unwrap(), 1.0));
        assert!(close(p.pe_local_max(&job).unwrap(), 2.0));
    }

    #[test]
    fn gpus_count_only_when_asked() {
        let t = Topology::new(vec![Cluster::new(
            "g",
            Allocation::Shared,
            vec![
                NodeClass::new("gpu", 2, 16, 64 * GIB).with_gpus(4),
                NodeClass::new("cpu", 2, 16, 64 * GIB),
            ],
        )]);
        let mut requests = RequestTable::default();
        let job = Job {
            procs: 1,
            request: requests.push(JobRequest::nodes(
                1,
                NodeDemand {
                    cores: 1,
                    memory_kb: GIB,
                    gpus: 4,
                },
            )),
            ..Job::default()
        };
        let machine = Machine::topology(t);
        let mut spec = PenaltySpec::of(PenaltyModel::PeMin);
        let p = Pricing::new(&machine, (&ConstraintTable::default(), &requests), &spec).unwrap();
        // Without GPUs in the max: max(1/16, 1/64) × 16 = 1 on the only class it fits.
        assert!(close(p.pe_min(&job).unwrap(), 1.0));
        spec.gpus = true;
        let p = Pricing::new(&machine, (&ConstraintTable::default(), &requests), &spec).unwrap();
        // All four GPUs of the node: the whole node, 16.
        assert!(close(p.pe_min(&job).unwrap(), 16.0));
        // F3: 4 of the system's 8 GPUs is half of it, i.e. half of its 64 cores.
        assert!(close(p.pe_global(&job), 32.0));
    }

    #[test]
    fn constraints_restrict_the_classes_able_to_run_a_job() {
        let mut t = Topology::example_3();
        t.clusters[0].classes[0] = t.clusters[0].classes[0].clone().with_properties(["small"]);
        let mut table = ConstraintTable::default();
        let small = table.intern(Constraint::properties(["small"]));
        let mut p = Pricing::new(
            &Machine::topology(t),
            (&table, &RequestTable::default()),
            &PenaltySpec::of(PenaltyModel::PeMin),
        )
        .unwrap();
        // Example 5's job restricted to small nodes costs 8, not 2.5.
        let on_small = |count, cores, memory_gib| JobRequest {
            constraint: small,
            ..node_request(count, cores, memory_gib)
        };
        let job = job_with(&mut p, 1, on_small(1, 1, 16));
        assert!(close(p.pe_min(&job).unwrap(), 8.0));
        // Example 3's job cannot run on a small node at all.
        let job = job_with(&mut p, 1, on_small(1, 1, 512));
        assert_eq!(p.pe_min(&job), None);
        assert_eq!(p.infeasible(&job), Some(Infeasible::TooMuchMemoryPerNode));
    }

    /// docs/fairshare.md, "One class per job": where we differ from F8 on purpose. Three nodes
    /// × (1 CPU, 16 GB) on the Examples 3–5 system: F8 prices each node on the big node (2.5,
    /// 7.5 in all), but there is one big node, so the job runs on small nodes only: 3 × 8 = 24.
    #[test]
    fn a_job_wider_than_its_cheapest_class_is_priced_on_a_class_that_can_hold_it() {
        let mut p = example_system(&PenaltySpec::of(PenaltyModel::PeMin));
        let one = node_job(&mut p, 1, 1, 16);
        assert!(
            close(p.pe_min(&one).unwrap(), 2.5),
            "one node: the big node"
        );
        let three = node_job(&mut p, 3, 1, 16);
        assert!(close(p.pe_min(&three).unwrap(), 24.0));
    }

    #[test]
    fn walltime_factors() {
        let mut t = Topology::example_3();
        t.clusters[0].classes[0].spec_per_core = Some(10.0);
        t.clusters[0].classes[1] = t.clusters[0].classes[1].clone().with_speed(2.0);
        let machine = Machine::topology(t);
        let mut spec = PenaltySpec::of(PenaltyModel::PeMin);
        spec.normalization = Normalization::Spec;
        assert_eq!(
            Pricing::new(
                &machine,
                (&ConstraintTable::default(), &RequestTable::default()),
                &spec
            )
            .unwrap_err(),
            PenaltyError::MissingSpec {
                cluster: "example".into(),
                class: "big".into()
            }
        );
        spec.normalization = Normalization::Speed;
        let mut p = Pricing::new(
            &machine,
            (&ConstraintTable::default(), &RequestTable::default()),
            &spec,
        )
        .unwrap();
        assert_eq!((p.walltime_factor(0), p.walltime_factor(1)), (1.0, 2.0));
        // Example 5's job on the big node: 2.5 per second × speed 2.
        let job = node_job(&mut p, 1, 1, 16);
        assert!(close(p.rate(&job, 1).unwrap(), 5.0));
    }

    #[test]
    fn names_round_trip() {
        for m in PenaltyModel::ALL {
            assert_eq!(m.name().parse::<PenaltyModel>(), Ok(m));
        }
        assert!("pe".parse::<PenaltyModel>().is_err());
        assert!(PenaltyModel::PeLocal.depends_on_placement());
        assert!(!PenaltyModel::PeMin.depends_on_placement());
    }
}
