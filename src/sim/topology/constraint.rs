//! What a job requires of the nodes it runs on besides amounts: properties (`x86_64`,
//! `infiniband`, `cl_zewura`) and possibly a cluster by name.
//!
//! A trace holds these as strings; jobs carry a small [`ConstraintId`] into the workload's
//! [`ConstraintTable`], where each distinct constraint is stored once, in order of first
//! appearance (deterministic). The engine matches each distinct constraint against the topology
//! once, not once per job.

use std::collections::HashMap;

/// Required properties and cluster of a job. Empty: any node will do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Constraint {
    /// The cluster the job must run in, by name.
    pub cluster: Option<String>,
    /// Properties every node of the job must have; sorted, without duplicates. A cluster's name
    /// counts as a property of its nodes, so `cl_zewura` matches the nodes of a cluster named
    /// `cl_zewura` as well as nodes labelled so.
    pub properties: Vec<String>,
}

impl Constraint {
    /// Nodes with all of `properties` (sorted and deduplicated here).
    pub fn properties<S: Into<String>>(properties: impl IntoIterator<Item = S>) -> Self {
        let mut properties: Vec<String> = properties.into_iter().map(Into::into).collect();
        properties.sort();
        properties.dedup();
        Constraint {
            cluster: None,
            properties,
        }
    }

    /// Nodes of the cluster named `name`.
    pub fn cluster(name: impl Into<String>) -> Self {
        Constraint {
            cluster: Some(name.into()),
            properties: Vec::new(),
        }
    }

    pub fn is_none(&self) -> bool {
        self.cluster.is_none() && self.properties.is_empty()
    }
}

/// Index of a [`Constraint`] in its workload's [`ConstraintTable`]; [`ConstraintId::NONE`]
/// (0, the default) is the empty constraint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConstraintId(pub u32);

impl ConstraintId {
    pub const NONE: ConstraintId = ConstraintId(0);
}

/// The distinct constraints of a workload, by [`ConstraintId`]. Entry 0 is always the empty
/// constraint.
#[derive(Clone, Debug)]
pub struct ConstraintTable {
    list: Vec<Constraint>,
    index: HashMap<Constraint, u32>,
}

impl Default for ConstraintTable {
    fn default() -> Self {
        let none = Constraint::default();
        ConstraintTable {
            index: HashMap::from([(none.clone(), 0)]),
            list: vec![none],
        }
    }
}

impl PartialEq for ConstraintTable {
    fn eq(&self, other: &Self) -> bool {
        self.list == other.list
    }
}

impl Eq for ConstraintTable {}

impl ConstraintTable {
    /// The id of `constraint`, added at the end if new.
    pub fn intern(&mut self, constraint: Constraint) -> ConstraintId {
        if let Some(&i) = self.index.get(&constraint) {
            return ConstraintId(i);
        }
        let i = self.list.len() as u32;
        self.index.insert(constraint.clone(), i);
        self.list.push(constraint);
        ConstraintId(i)
    }

    /// The constraint of `id`; the empty one for an id this table never gave out.
    pub fn get(&self, id: ConstraintId) -> &Constraint {
        self.list.get(id.0 as usize).unwrap_or(&self.list[0])
    }

    /// Every constraint, by id.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Constraint> + '_ {
        self.list.iter()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Never true: entry 0 always exists.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_by_value_in_first_appearance_order() {
        let mut t = ConstraintTable::default();
        assert_eq!(t.intern(Constraint::default()), ConstraintId::NONE);
        let a = t.intern(Constraint::properties(["x86_64", "cl_zewura"]));
        let b = t.intern(Constraint::cluster("zegox"));
        assert_eq!((a, b), (ConstraintId(1), ConstraintId(2)));
        assert_eq!(
            t.intern(Constraint::properties(["cl_zewura", "x86_64", "x86_64"])),
            a
        );
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(a).properties, ["cl_zewura", "x86_64"]);
        assert!(t.get(ConstraintId(99)).is_none());
    }
}
