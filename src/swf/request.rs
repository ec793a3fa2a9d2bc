//! What a job asks of a topology, from its SWF line: the memory fields read as the
//! [`ReadOptions`] say, and the extended fields of Alea and AleaNG (docs/swf.md, "Job
//! requests"). Builds the workload's constraint table and queue-name table as lines come.
//!
//! - With a node spec (Alea field 21, AleaNG's `NxP`, or AleaNG's nodes = processors): the job
//!   asks for `nodes` nodes of `ppn` processors, the memory per node and GPUs per node
//!   (AleaNG's field 19 is a total, spread evenly, rounded up).
//! - Without one: a flexible request of the job's processors with memory per processor (the
//!   standard); a per-node memory reading makes it one node of all its processors, as Alea reads
//!   such jobs.

use std::collections::{BTreeMap, HashMap};

use super::nodespec::{self, NodeSpec};
use super::options::{Extended, MemoryReading, ReadOptions};
use super::reader::Anomalies;
use crate::sim::Job;
use crate::sim::topology::{
    Constraint, ConstraintId, ConstraintTable, JobRequest, NodeDemand, RequestInterner,
};

/// The fields of a line that shape a request (values as read; -1 unknown).
pub(super) struct RequestFields<'a> {
    pub requested_memory: i64,
    pub used_memory: i64,
    /// Fields after the 18th (at most the first three are used).
    pub extra: &'a [&'a [u8]],
}

/// Which dialect a line's extra fields are in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    None,
    Alea,
    AleaNg,
}

/// Turns lines into requests; owns the tables the workload will carry.
#[derive(Default)]
pub(super) struct RequestBuilder {
    options: ReadOptions,
    pub constraints: ConstraintTable,
    pub requests: RequestInterner,
    pub queue_names: BTreeMap<i32, String>,
    queue_ids: HashMap<Vec<u8>, i32>,
    alea_specs: HashMap<Vec<u8>, (NodeSpec, ConstraintId)>,
    aleang_specs: HashMap<Vec<u8>, (NodeSpec, ConstraintId)>,
}

/// A value of an extended field the strict reader rejects: (field number, what was expected).
pub(super) type BadExtra = (usize, &'static str);

impl RequestBuilder {
    pub fn new(options: ReadOptions) -> Self {
        RequestBuilder {
            options,
            ..Default::default()
        }
    }

    /// Sets `job.request` (interned in `requests`) and, with Alea's queue names, `job.queue`.
    pub fn apply(
        &mut self,
        job: &mut Job,
        fields: &RequestFields<'_>,
        anomalies: &mut Anomalies,
    ) -> Result<(), BadExtra> {
        let memory = self.memory(fields, anomalies);
        let dialect = self.dialect(fields.extra, anomalies);
        let mut gpus_total = 0u64;
        let spec = match dialect {
            Dialect::None => None,
            Dialect::Alea => {
                if let Some(name) = fields.extra.get(1) {
                    job.queue = self.queue_id(name);
                }
                fields.extra.get(2).map(|s| {
                    Self::spec(
                        &mut self.alea_specs,
                        &mut self.constraints,
                        s,
                        nodespec::parse_alea,
                    )
                })
            }
            Dialect::AleaNg => {
                let gpus = fields.extra[0];
                gpus_total = std::str::from_utf8(gpus)
                    .ok()
                    .and_then(|g| g.parse::<u64>().ok())
                    .ok_or((19, "a non-negative number of GPUs"))?;
                let (mut spec, constraint) = match fields.extra.get(2) {
                    Some(s) => Self::spec(
                        &mut self.aleang_specs,
                        &mut self.constraints,
                        s,
                        nodespec::parse_aleang,
                    ),
                    None => (NodeSpec::default(), ConstraintId::NONE),
                };
                // AleaNG's whole-node reading: the processor count counts nodes of one.
                if spec.nodes.is_none() {
                    spec.nodes = Some(job.procs);
                    spec.ppn = Some(1);
                }
                Some((spec, constraint))
            }
        };
        let request = match spec {
            Some((spec, constraint)) if spec.nodes.is_some() => {
                let nodes = spec.nodes.unwrap_or(1);
                let ppn = spec.ppn.unwrap_or(1);
                count_spec(&spec, job.procs, nodes, ppn, anomalies);
                let memory_per_node = match self.options.memory {
                    m if m.per_node() => m.to_kb(memory),
                    MemoryReading::KbPerProc => memory.saturating_mul(u64::from(ppn)),
                    _ => 0,
                };
                let per_node = NodeDemand {
                    cores: ppn,
                    memory_kb: memory_per_node,
                    gpus: u32::try_from(gpus_total.div_ceil(u64::from(nodes.max(1))))
                        .unwrap_or(u32::MAX),
                };
                JobRequest {
                    memory_kb: memory_per_node / u64::from(ppn.max(1)),
                    constraint,
                    exclusive: spec.exclusive,
                    ..JobRequest::nodes(nodes, per_node)
                }
            }
            Some((spec, constraint)) => {
                // A spec of properties only: the amounts as without one.
                count_spec(&spec, job.procs, 1, job.procs, anomalies);
                JobRequest {
                    constraint,
                    exclusive: spec.exclusive,
                    ..self.plain(job.procs, memory)
                }
            }
            None => self.plain(job.procs, memory),
        };
        job.request = self.requests.intern(request);
        Ok(())
    }

    /// The request of a job of `procs` processors without a node spec.
    fn plain(&self, procs: u32, memory: u64) -> JobRequest {
        let reading = self.options.memory;
        if reading.per_node() {
            let per_node = reading.to_kb(memory);
            JobRequest {
                memory_kb: per_node / u64::from(procs.max(1)),
                ..JobRequest::nodes(
                    1,
                    NodeDemand {
                        cores: procs,
                        memory_kb: per_node,
                        gpus: 0,
                    },
                )
            }
        } else {
            JobRequest {
                memory_kb: reading.to_kb(memory),
                ..JobRequest::default()
            }
        }
    }

    /// The memory field value (> 0, else 0) the reading uses: field 10, else field 7 when the
    /// fallback is on.
    fn memory(&self, fields: &RequestFields<'_>, anomalies: &mut Anomalies) -> u64 {
        if self.options.memory == MemoryReading::Ignore {
            return 0;
        }
        if fields.requested_memory > 0 {
            return fields.requested_memory as u64;
        }
        if self.options.used_memory_fallback && fields.used_memory > 0 {
            anomalies.memory_from_used += 1;
            return fields.used_memory as u64;
        }
        0
    }

    fn dialect(&self, extra: &[&[u8]], anomalies: &mut Anomalies) -> Dialect {
        let Some(first) = extra.first() else {
            return Dialect::None;
        };
        match self.options.extended {
            Extended::Ignore => Dialect::None,
            Extended::Alea => Dialect::Alea,
            Extended::AleaNg => Dialect::AleaNg,
            Extended::Auto if first.starts_with(b"{") => Dialect::Alea,
            Extended::Auto if !first.is_empty() && first.iter().all(u8::is_ascii_digit) => {
                Dialect::AleaNg
            }
            Extended::Auto => {
                anomalies.extended_unrecognized += 1;
                Dialect::None
            }
        }
    }

    /// The id of an Alea queue name, in order of first appearance from 0.
    fn queue_id(&mut self, name: &[u8]) -> i32 {
        if let Some(&id) = self.queue_ids.get(name) {
            return id;
        }
        let id = self.queue_ids.len() as i32;
        self.queue_ids.insert(name.to_vec(), id);
        self.queue_names
            .insert(id, String::from_utf8_lossy(name).into_owned());
        id
    }

    /// A spec parsed once per distinct text, with its interned constraint.
    fn spec(
        cache: &mut HashMap<Vec<u8>, (NodeSpec, ConstraintId)>,
        constraints: &mut ConstraintTable,
        text: &[u8],
        parse: fn(&str) -> NodeSpec,
    ) -> (NodeSpec, ConstraintId) {
        if let Some(hit) = cache.get(text) {
            return hit.clone();
        }
        let spec = parse(&String::from_utf8_lossy(text));
        let constraint = if spec.properties.is_empty() {
            ConstraintId::NONE
        } else {
            constraints.intern(Constraint::properties(spec.properties.iter().cloned()))
        };
        cache.insert(text.to_vec(), (spec.clone(), constraint));
        (spec, constraint)
    }
}

/// Counts what a spec could not express.
fn count_spec(spec: &NodeSpec, procs: u32, nodes: u32, ppn: u32, anomalies: &mut Anomalies) {
    anomalies.node_spec_ignored_tokens += u64::from(spec.ignored);
    anomalies.node_spec_fractional_ppn += u64::from(spec.fractional_ppn);
    anomalies.node_spec_multi_part += u64::from(spec.multi_part);
    if u64::from(nodes) * u64::from(ppn) != u64::from(procs) && !spec.multi_part {
        anomalies.node_spec_procs_mismatch += 1;
    }
}
