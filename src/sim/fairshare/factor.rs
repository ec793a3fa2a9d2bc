//! Shares and the fairshare factor FF = 2^(−U/S), as PBS, AleaNG and Slurm's classic algorithm
//! compute it.
//!
//! U is a user's (effective) usage as a fraction of all usage, S their normalised share:
//!
//! - [`Hierarchy::Flat`] (AleaNG, PBS with one level): S_u = s_u / Σ s and U_u = usage_u / Σ
//!   usage, so FF_u = 2^(−(U_u/ΣU)/(S_u/ΣS)).
//! - [`Hierarchy::Groups`] (two levels, Slurm's classic algorithm with groups as accounts):
//!   S_u = (s_g / Σ_groups s) × (s_u / Σ_{users of g} s), and the effective usage mixes the user's
//!   own usage with their group's: UE_u = U_u + (U_g − U_u) × s_u / Σ_{users of g} s, where
//!   U_g = Σ_{users of g} U (for a group directly under the root, its effective usage is its
//!   usage, as in Slurm).
//!
//! Choices, each documented in docs/fairshare.md:
//! - **Who is in the sums.** ΣS is over every account of the workload ([`super::Accounts`]): the
//!   users who submit jobs, whether or not they have usage yet; in two-level mode the groups
//!   they belong to. ΣU is over the same users, at the time of the question.
//! - **No usage at all** (ΣU = 0, at the start): U/ΣU is taken as 0, so every factor is 1 and
//!   the order falls back to submission order.
//! - **Users without usage** have FF = 1 − in two-level mode less than 1 when their group has
//!   used its share (their effective usage inherits part of the group's).
//! - **Shares** default to 1 for users and groups the specification does not list; they must be
//!   positive.
//!
//! Since ΣU and ΣS are common to all users, the factor orders users exactly as the key
//! UE_u / S_u (unnormalised usage over normalised share) does, smallest first: the queue order
//! needs only the key ([`ShareTree::key`]), and the factor is for outputs.

use std::collections::BTreeMap;

use super::accounts::Accounts;

/// How shares are arranged.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Hierarchy {
    /// Users only (AleaNG).
    #[default]
    Flat,
    /// Groups, then users within a group (Slurm classic).
    Groups,
}

impl Hierarchy {
    pub fn name(self) -> &'static str {
        match self {
            Hierarchy::Flat => "flat",
            Hierarchy::Groups => "groups",
        }
    }
}

/// Raw shares by user and group id (1 when absent).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharesSpec {
    pub hierarchy: Hierarchy,
    pub users: BTreeMap<i32, f64>,
    pub groups: BTreeMap<i32, f64>,
}

/// A share that is not a positive number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    #[error("user {0}: shares must be a positive number")]
    User(i32),
    #[error("group {0}: shares must be a positive number")]
    Group(i32),
}

impl SharesSpec {
    pub fn validate(&self) -> Result<(), ShareError> {
        let bad = |s: &f64| !(s.is_finite() && *s > 0.0);
        if let Some((&u, _)) = self.users.iter().find(|(_, s)| bad(s)) {
            return Err(ShareError::User(u));
        }
        if let Some((&g, _)) = self.groups.iter().find(|(_, s)| bad(s)) {
            return Err(ShareError::Group(g));
        }
        Ok(())
    }
}

/// The shares of a workload's accounts, normalised.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareTree {
    hierarchy: Hierarchy,
    /// Per user: S_u.
    normalized: Vec<f64>,
    /// Per user: s_u / Σ s of their group's users (Groups), 0 (Flat).
    sibling: Vec<f64>,
    /// Per user: dense group index.
    group: Vec<u32>,
    groups: usize,
}

impl ShareTree {
    pub fn new(accounts: &Accounts, spec: &SharesSpec) -> Result<Self, ShareError> {
        spec.validate()?;
        let users = accounts.user_count();
        let raw: Vec<f64> = accounts
            .users()
            .iter()
            .map(|u| spec.users.get(u).copied().unwrap_or(1.0))
            .collect();
        let group: Vec<u32> = (0..users as u32).map(|u| accounts.group_of(u)).collect();
        let groups = accounts.group_count();
        let (normalized, sibling) = match spec.hierarchy {
            Hierarchy::Flat => {
                let total: f64 = raw.iter().sum();
                (raw.iter().map(|s| s / total).collect(), vec![0.0; users])
            }
            Hierarchy::Groups => {
                let group_raw: Vec<f64> = accounts
                    .groups()
                    .iter()
                    .map(|g| spec.groups.get(g).copied().unwrap_or(1.0))
                    .collect();
                let group_total: f64 = group_raw.iter().sum();
                let mut within = vec![0.0; groups];
                for (u, s) in raw.iter().enumerate() {
                    within[group[u] as usize] += s;
                }
                let sibling: Vec<f64> = raw
                    .iter()
                    .enumerate()
                    .map(|(u, s)| s / within[group[u] as usize])
                    .collect();
                let normalized = sibling
                    .iter()
                    .enumerate()
                    .map(|(u, r)| group_raw[group[u] as usize] / group_total * r)
                    .collect();
                (normalized, sibling)
            }
        };
        Ok(ShareTree {
            hierarchy: spec.hierarchy,
            normalized,
            sibling,
            group,
            groups,
        })
    }

    pub fn hierarchy(&self) -> Hierarchy {
        self.hierarchy
    }

    /// S_u: the user's normalised share (they sum to 1 over all users).
    pub fn share(&self, user: u32) -> f64 {
        self.normalized[user as usize]
    }

    /// Per group: the sum of its users' usage, into `out` (Groups only; cleared first).
    pub fn group_usage(&self, usage: &[f64], out: &mut Vec<f64>) {
        out.clear();
        if self.hierarchy == Hierarchy::Groups {
            out.resize(self.groups, 0.0);
            for (u, x) in usage.iter().enumerate() {
                out[self.group[u] as usize] += x;
            }
        }
    }

    /// The user's effective usage, unnormalised (in usage units): their own usage (Flat), or
    /// U_u + (U_g − U_u) × s_u / Σ siblings (Groups; `group_usage` from
    /// [`ShareTree::group_usage`]).
    pub fn effective(&self, user: u32, usage: &[f64], group_usage: &[f64]) -> f64 {
        let u = user as usize;
        match self.hierarchy {
            Hierarchy::Flat => usage[u],
            Hierarchy::Groups => {
                let g = group_usage[self.group[u] as usize];
                usage[u] + (g - usage[u]) * self.sibling[u]
            }
        }
    }

    /// The ordering key: effective usage over normalised share. Smaller keys have higher
    /// factors; equal keys equal factors.
    pub fn key(&self, user: u32, usage: &[f64], group_usage: &[f64]) -> f64 {
        self.effective(user, usage, group_usage) / self.share(user)
    }

    /// FF_u = 2^(−(UE_u / ΣU) / S_u), with `total` = ΣU over all users.
    pub fn factor(&self, user: u32, usage: &[f64], group_usage: &[f64], total: f64) -> f64 {
        fairshare_factor(self.key(user, usage, group_usage), total)
    }
}

/// 2^(−key / ΣU), with `key` = UE_u / S_u; 1 when nobody has used anything yet (ΣU = 0).
pub fn fairshare_factor(key: f64, total_usage: f64) -> f64 {
    if total_usage <= 0.0 {
        return 1.0;
    }
    (-(key / total_usage)).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::job::{Job, Workload};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Users 0..4 in groups 0, 0, 1, 1 (AleaNG Example1's urgent and normal users).
    fn accounts() -> Accounts {
        let job = |user, group| Job {
            user,
            group,
            ..Job::default()
        };
        Accounts::of(&Workload::new(vec![
            job(0, 0),
            job(1, 0),
            job(2, 1),
            job(3, 1),
        ]))
    }

    fn flat(shares: &[(i32, f64)]) -> SharesSpec {
        SharesSpec {
            hierarchy: Hierarchy::Flat,
            users: shares.iter().copied().collect(),
            groups: BTreeMap::new(),
        }
    }

    #[test]
    fn equal_usage_of_equal_shares_gives_one_half() {
        // Two users, equal shares, equal usage: U/ΣU = S = 1/2, FF = 2^−1.
        let job = |user| Job {
            user,
            ..Job::default()
        };
        let a = Accounts::of(&Workload::new(vec![job(1), job(2)]));
        let t = ShareTree::new(&a, &SharesSpec::default()).unwrap();
        let usage = [10.0, 10.0];
        assert!(close(t.factor(0, &usage, &[], 20.0), 0.5));
        assert!(close(t.factor(1, &usage, &[], 20.0), 0.5));
    }

    #[test]
    fn hand_worked_flat_factors() {
        // Shares 2/2/1/1 → S = 1/3, 1/3, 1/6, 1/6. Usage 30, 0, 10, 60 of 100:
        // FF_0 = 2^−(0.3/(1/3)) = 2^−0.9; FF_1 = 1; FF_2 = 2^−(0.1·6) = 2^−0.6;
        // FF_3 = 2^−(0.6·6) = 2^−3.6.
        let t = ShareTree::new(
            &accounts(),
            &flat(&[(0, 2.0), (1, 2.0), (2, 1.0), (3, 1.0)]),
        )
        .unwrap();
        assert!(close(t.share(0), 1.0 / 3.0));
        assert!(close(t.share(3), 1.0 / 6.0));
        let usage = [30.0, 0.0, 10.0, 60.0];
        let ff: Vec<f64> = (0..4).map(|u| t.factor(u, &usage, &[], 100.0)).collect();
        assert!(close(ff[0], 2f64.powf(-0.9)));
        assert!(close(ff[1], 1.0));
        assert!(close(ff[2], 2f64.powf(-0.6)));
        assert!(close(ff[3], 2f64.powf(-3.6)));
        // The keys order users as the factors do.
        let mut by_key: Vec<u32> = (0..4).collect();
        by_key.sort_by(|&a, &b| t.key(a, &usage, &[]).total_cmp(&t.key(b, &usage, &[])));
        assert_eq!(by_key, [1, 2, 0, 3]);
    }

    #[test]
    fn nobody_has_used_anything_yet() {
        let t = ShareTree::new(&accounts(), &SharesSpec::default()).unwrap();
        for u in 0..4 {
            assert_eq!(t.factor(u, &[0.0; 4], &[], 0.0), 1.0);
        }
    }

    #[test]
    fn hand_worked_two_level_factors() {
        // Groups 0 and 1 with shares 2 and 1; users with equal shares inside: S = 1/3, 1/3,
        // 1/6, 1/6 (the same as the flat 2/2/1/1). Usage 30, 0, 10, 60 → group usage 30, 70.
        // UE_1 = 0 + (30 − 0) × 1/2 = 15: user 1 inherits half of its group's usage, so
        // FF_1 = 2^−(0.15·3) = 2^−0.45 (not 1 as in flat mode). UE_0 = 30 + 0 = 30 → 2^−0.9.
        // UE_2 = 10 + (70 − 10)/2 = 40 → 2^−(0.4·6) = 2^−2.4; UE_3 = 60 + (70 − 60)/2 = 65 → 2^−3.9.
        let spec = SharesSpec {
            hierarchy: Hierarchy::Groups,
            users: BTreeMap::new(),
            groups: [(0, 2.0), (1, 1.0)].into_iter().collect(),
        };
        let t = ShareTree::new(&accounts(), &spec).unwrap();
        for (u, s) in [
            (0, 1.0 / 3.0),
            (1, 1.0 / 3.0),
            (2, 1.0 / 6.0),
            (3, 1.0 / 6.0),
        ] {
            assert!(close(t.share(u), s));
        }
        let usage = [30.0, 0.0, 10.0, 60.0];
        let mut groups = Vec::new();
        t.group_usage(&usage, &mut groups);
        assert_eq!(groups, [30.0, 70.0]);
        let ff = |u| t.factor(u, &usage, &groups, 100.0);
        assert!(close(ff(0), 2f64.powf(-0.9)));
        assert!(close(ff(1), 2f64.powf(-0.45)));
        assert!(close(ff(2), 2f64.powf(-2.4)));
        assert!(close(ff(3), 2f64.powf(-3.9)));
    }

    #[test]
    fn unequal_shares_within_a_group() {
        // Group 0 holds users 0 (share 3) and 1 (share 1): sibling ratios 3/4 and 1/4.
        let spec = SharesSpec {
            hierarchy: Hierarchy::Groups,
            users: [(0, 3.0), (1, 1.0)].into_iter().collect(),
            groups: BTreeMap::new(),
        };
        let t = ShareTree::new(&accounts(), &spec).unwrap();
        // Groups have equal shares: S_0 = 1/2 × 3/4, S_1 = 1/2 × 1/4.
        assert!(close(t.share(0), 0.375));
        assert!(close(t.share(1), 0.125));
        assert!(close(
            t.effective(1, &[40.0, 0.0, 0.0, 0.0], &[40.0, 0.0]),
            10.0
        ));
    }

    #[test]
    fn shares_must_be_positive() {
        let spec = flat(&[(2, 0.0)]);
        assert_eq!(
            ShareTree::new(&accounts(), &spec).unwrap_err(),
            ShareError::User(2)
        );
        let spec = SharesSpec {
            groups: [(1, f64::NAN)].into_iter().collect(),
            ..SharesSpec::default()
        };
        assert_eq!(spec.validate(), Err(ShareError::Group(1)));
    }

    #[test]
    fn a_factor_never_rises_while_its_user_consumes_alone() {
        // With nothing decaying and only user 0 consuming, U_0/ΣU rises to 1 and FF_0 falls.
        let t = ShareTree::new(&accounts(), &SharesSpec::default()).unwrap();
        let mut usage = [0.0, 5.0, 5.0, 5.0];
        let mut last = f64::INFINITY;
        for _ in 0..50 {
            usage[0] += 3.0;
            let total: f64 = usage.iter().sum();
            let ff = t.factor(0, &usage, &[], total);
            assert!(ff <= last);
            last = ff;
        }
    }
}
