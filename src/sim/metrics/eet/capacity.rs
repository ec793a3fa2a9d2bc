//! Expected capacities: the share of each resource a user expects to have at any time
//! (Tóth & Klusáček, section 3.1 "User Expectations on Available Capacity" and section 3.2:
//! "We can assign different capacity of this resource to different users").
//!
//! The rule, per user and resource, first match wins:
//! 1. an explicit capacity for the user;
//! 2. an explicit capacity for the user's group (each user of the group expects that much);
//! 3. the split of the system: `scale × system × w_u / Σ_v w_v` over the users who count —
//!    those with at least one job in the input — where `w_u` is the user's share, else its
//!    group's, else 1. With no shares given this is the paper's default, an equal split
//!    `system / users`.
//!
//! A user's group is the group of its first job in arrival order. A resource is modelled only
//! when the system's capacity of it is given.

use std::collections::BTreeMap;

use super::error::EetError;
use super::ratio::Ratio;
use super::resource::{PerResource, Resource};

/// How a user's expected capacity is decided (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityRule {
    /// The system's capacity per resource (CPUs, KB, GPUs); `None`: not modelled.
    pub system: PerResource<Option<u64>>,
    /// Shares per user (proportional split); users without one take their group's.
    pub user_shares: BTreeMap<i32, u64>,
    /// Shares per group; users with neither share take 1.
    pub group_shares: BTreeMap<i32, u64>,
    /// Multiplies the split capacities (not explicit ones): the ×0.5 / ×1 / ×2 sweep.
    pub scale: Ratio,
    /// Explicit capacities per user, per resource.
    pub users: BTreeMap<i32, PerResource<Option<Ratio>>>,
    /// Explicit capacities for each user of a group, per resource.
    pub groups: BTreeMap<i32, PerResource<Option<Ratio>>>,
}

impl CapacityRule {
    /// The paper's default: the system split equally among the users.
    pub fn equal_split(system: PerResource<Option<u64>>) -> CapacityRule {
        CapacityRule {
            system,
            user_shares: BTreeMap::new(),
            group_shares: BTreeMap::new(),
            scale: Ratio::ONE,
            users: BTreeMap::new(),
            groups: BTreeMap::new(),
        }
    }

    /// The resources modelled: those with a system capacity.
    pub fn resources(&self) -> Vec<Resource> {
        self.system
            .iter()
            .filter(|(_, c)| c.is_some())
            .map(|(r, _)| r)
            .collect()
    }

    fn check(&self) -> Result<(), EetError> {
        if self.system.iter().all(|(_, c)| c.is_none()) {
            return Err(EetError::NoResource);
        }
        for (r, c) in self.system.iter() {
            if *c == Some(0) {
                return Err(EetError::ZeroSystemCapacity(r));
            }
        }
        let explicit = self
            .users
            .iter()
            .map(|(u, c)| (format!("user {u}"), c))
            .chain(self.groups.iter().map(|(g, c)| (format!("group {g}"), c)));
        for (owner, caps) in explicit {
            for (resource, cap) in caps.iter() {
                let Some(cap) = cap else { continue };
                if self.system[resource].is_none() {
                    return Err(EetError::UnmodelledResource { owner, resource });
                }
                if cap.is_zero() {
                    return Err(EetError::ZeroCapacity { owner, resource });
                }
            }
        }
        let shares = self
            .user_shares
            .iter()
            .map(|(u, w)| (format!("user {u}"), w))
            .chain(
                self.group_shares
                    .iter()
                    .map(|(g, w)| (format!("group {g}"), w)),
            );
        for (owner, w) in shares {
            if *w == 0 {
                return Err(EetError::ZeroShare { owner });
            }
        }
        if self.scale.is_zero() {
            return Err(EetError::ZeroScale);
        }
        Ok(())
    }

    fn weight(&self, user: i32, group: i32) -> u64 {
        self.user_shares
            .get(&user)
            .or_else(|| self.group_shares.get(&group))
            .copied()
            .unwrap_or(1)
    }

    /// The capacity of each of `users` (user → group; exactly the users who count), per
    /// resource: `None` where the resource is not modelled.
    pub fn resolve(
        &self,
        users: &BTreeMap<i32, i32>,
    ) -> Result<BTreeMap<i32, PerResource<Option<Ratio>>>, EetError> {
        self.check()?;
        let total_weight: u128 = users
            .iter()
            .map(|(&u, &g)| u128::from(self.weight(u, g)))
            .sum();
        let mut out = BTreeMap::new();
        for (&user, &group) in users {
            let mut caps = PerResource::new(None, None, None);
            for resource in Resource::ALL {
                let Some(system) = self.system[resource] else {
                    continue;
                };
                let explicit = self
                    .users
                    .get(&user)
                    .and_then(|c| c[resource])
                    .or_else(|| self.groups.get(&group).and_then(|c| c[resource]));
                let cap = match explicit {
                    Some(c) => c,
                    None => Ratio::new(u128::from(self.weight(user, group)), total_weight)
                        .and_then(|share| share.checked_mul(Ratio::integer(system)))
                        .and_then(|c| c.checked_mul(self.scale))
                        .ok_or(EetError::CapacityOverflow { user, resource })?,
                };
                caps[resource] = Some(cap);
            }
            out.insert(user, caps);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: u128, d: u128) -> Ratio {
        Ratio::new(n, d).unwrap()
    }

    #[test]
    fn equal_split_shares_overrides_and_scale() {
        let users: BTreeMap<i32, i32> = [(1, 10), (2, 10), (3, 20)].into();
        let system = PerResource::new(Some(90), Some(3000), None);
        let mut rule = CapacityRule::equal_split(system);
        let caps = rule.resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Cpu], Some(r(30, 1)));
        assert_eq!(caps[&3][Resource::Memory], Some(r(1000, 1)));
        assert_eq!(caps[&3][Resource::Gpu], None);
        // Shares: user 1 has 4, group 20 (user 3) has 2, user 2 the default 1 → 4 : 1 : 2.
        rule.user_shares.insert(1, 4);
        rule.group_shares.insert(20, 2);
        rule.scale = r(1, 2);
        let caps = rule.resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Cpu], Some(r(90 * 4, 7 * 2)));
        assert_eq!(caps[&2][Resource::Cpu], Some(r(90, 14)));
        assert_eq!(caps[&3][Resource::Cpu], Some(r(90 * 2, 14)));
        // Explicit: group 10 expects 5 CPUs each, user 2 expects 8; memory stays split.
        rule.groups
            .insert(10, PerResource::new(Some(r(5, 1)), None, None));
        rule.users
            .insert(2, PerResource::new(Some(r(8, 1)), None, None));
        let caps = rule.resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Cpu], Some(r(5, 1)));
        assert_eq!(caps[&2][Resource::Cpu], Some(r(8, 1)));
        assert_eq!(caps[&2][Resource::Memory], Some(r(3000, 14)));
    }

    #[test]
    fn nonsense_is_refused() {
        let users: BTreeMap<i32, i32> = [(1, 1)].into();
        let none = PerResource::new(None, None, None);
        assert_eq!(
            CapacityRule::equal_split(none).resolve(&users),
            Err(EetError::NoResource)
        );
        let zero = PerResource::new(Some(0), None, None);
        assert_eq!(
            CapacityRule::equal_split(zero).resolve(&users),
            Err(EetError::ZeroSystemCapacity(Resource::Cpu))
        );
        let mut rule = CapacityRule::equal_split(PerResource::new(Some(8), None, None));
        rule.users
            .insert(1, PerResource::new(None, Some(r(5, 1)), None));
        assert!(matches!(
            rule.resolve(&users),
            Err(EetError::UnmodelledResource { .. })
        ));
        rule.users
            .insert(1, PerResource::new(Some(r(0, 1)), None, None));
        assert!(matches!(
            rule.resolve(&users),
            Err(EetError::ZeroCapacity { .. })
        ));
        rule.users.clear();
        rule.user_shares.insert(1, 0);
        assert!(matches!(
            rule.resolve(&users),
            Err(EetError::ZeroShare { .. })
        ));
    }
}
