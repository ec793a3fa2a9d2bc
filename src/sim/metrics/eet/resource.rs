//! The resources an expected share is measured in: CPUs, memory and GPUs (Tóth & Klusáček,
//! section 3.2: "extending this algorithm for multiple resources … is relatively
//! straightforward"; the EET is the latest over them).

use std::ops::{Index, IndexMut};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// Processors (cores), the paper's "1 block equals 1 second × 1 CPU".
    Cpu,
    /// Memory in KB, per job (not per processor or node).
    Memory,
    /// GPUs.
    Gpu,
}

impl Resource {
    pub const ALL: [Resource; 3] = [Resource::Cpu, Resource::Memory, Resource::Gpu];

    /// The name used in outputs and command-line specifications.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu",
            Resource::Memory => "memory",
            Resource::Gpu => "gpu",
        }
    }

    /// The unit of an amount of it.
    pub fn unit(self) -> &'static str {
        match self {
            Resource::Cpu => "CPUs",
            Resource::Memory => "KB",
            Resource::Gpu => "GPUs",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One value per resource, indexed by [`Resource`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PerResource<T>(pub [T; 3]);

impl<T> PerResource<T> {
    pub fn new(cpu: T, memory: T, gpu: T) -> Self {
        PerResource([cpu, memory, gpu])
    }

    /// `(resource, value)` pairs in the order of [`Resource::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = (Resource, &T)> {
        Resource::ALL.into_iter().zip(self.0.iter())
    }
}

impl<T> Index<Resource> for PerResource<T> {
    type Output = T;
    fn index(&self, r: Resource) -> &T {
        &self.0[r.index()]
    }
}

impl<T> IndexMut<Resource> for PerResource<T> {
    fn index_mut(&mut self, r: Resource) -> &mut T {
        &mut self.0[r.index()]
    }
}
