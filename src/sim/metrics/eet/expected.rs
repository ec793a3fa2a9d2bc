//! The expected capacity of a simulated experiment (manifest `metrics.expected_capacity`, a
//! metric setting beside τ and the warm-up): how a cell's machine is split into the users'
//! expected shares (Tóth & Klusáček, section 3.1), turned into the metric's [`CapacityRule`]
//! once the cell's machine and users are known. Options, in docs/manifest.md ("Expected
//! capacity"):
//! - `split: equal` (default): the machine split equally among the users with a job (the
//!   paper's default); `split: shares`: in proportion to the users' fairshare shares S_u (the
//!   cell's `fairshare.shares`, as users.parquet reports them);
//! - `scale`: multiplies every split capacity (the ×0.5 / ×1 / ×2 sweep; grid axis
//!   `capacity_scale`);
//! - `memory`: also measure memory when the machine has any (default true);
//! - `users` / `groups`: explicit capacities that override the split.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::capacity::CapacityRule;
use super::ratio::Ratio;
use super::resource::{PerResource, Resource};

/// How the split part of the capacities is weighted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Every user alike: system / users.
    #[default]
    Equal,
    /// In proportion to the users' normalised fairshare shares.
    Shares,
}

/// Normalised shares become whole weights at this resolution (a share below one billionth
/// counts as one billionth).
const SHARE_RESOLUTION: f64 = 1e9;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ExpectedCapacity {
    pub split: Split,
    #[serde(serialize_with = "ratio_text")]
    pub scale: Ratio,
    pub memory: bool,
    #[serde(serialize_with = "explicit_text")]
    pub users: BTreeMap<i32, PerResource<Option<Ratio>>>,
    #[serde(serialize_with = "explicit_text")]
    pub groups: BTreeMap<i32, PerResource<Option<Ratio>>>,
    /// Whether the manifest has the section (reports show the user-aware section only then);
    /// not a setting of the metric, so not part of any key.
    #[serde(skip)]
    pub configured: bool,
}

impl Default for ExpectedCapacity {
    fn default() -> Self {
        ExpectedCapacity {
            split: Split::Equal,
            scale: Ratio::ONE,
            memory: true,
            users: BTreeMap::new(),
            groups: BTreeMap::new(),
            configured: false,
        }
    }
}

fn ratio_text<S: Serializer>(r: &Ratio, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}/{}", r.num(), r.den()))
}

fn explicit_text<S: Serializer>(
    m: &BTreeMap<i32, PerResource<Option<Ratio>>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let text: BTreeMap<i32, BTreeMap<&str, String>> = m
        .iter()
        .map(|(id, caps)| {
            let caps = caps
                .iter()
                .filter_map(|(r, c)| c.map(|c| (r.name(), format!("{}/{}", c.num(), c.den()))))
                .collect();
            (*id, caps)
        })
        .collect();
    text.serialize(s)
}

impl ExpectedCapacity {
    /// The rule for a machine of `cores` and `memory_kb` (0: none) whose users have the
    /// normalised fairshare `shares` (user → S_u; used with `split: shares`).
    pub fn rule(&self, cores: u64, memory_kb: u64, shares: &[(i32, f64)]) -> CapacityRule {
        let memory = (self.memory && memory_kb > 0).then_some(memory_kb);
        let mut rule = CapacityRule::equal_split(PerResource::new(Some(cores), memory, None));
        rule.scale = self.scale;
        if self.split == Split::Shares {
            rule.user_shares = shares
                .iter()
                .map(|&(u, s)| (u, ((s * SHARE_RESOLUTION).round() as u64).max(1)))
                .collect();
        }
        // Explicit memory capacities only count where memory is measured.
        let keep = |caps: &PerResource<Option<Ratio>>| {
            let mut caps = *caps;
            if memory.is_none() {
                caps[Resource::Memory] = None;
            }
            caps
        };
        rule.users = self.users.iter().map(|(k, c)| (*k, keep(c))).collect();
        rule.groups = self.groups.iter().map(|(k, c)| (*k, keep(c))).collect();
        rule
    }

    /// The settings in words, for summaries and report captions.
    pub fn describe(&self) -> String {
        let split = match self.split {
            Split::Equal => "equal split",
            Split::Shares => "split by fairshare shares",
        };
        let mut text = format!("{split} ×{}", trim(self.scale.to_f64()));
        if !self.users.is_empty() || !self.groups.is_empty() {
            text.push_str(&format!(
                ", {} user and {} group overrides",
                self.users.len(),
                self.groups.len()
            ));
        }
        text
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_rule_follows_the_machine_and_the_settings() {
        let users: BTreeMap<i32, i32> = [(1, 0), (2, 0), (3, 0), (4, 0)].into();
        let equal = ExpectedCapacity::default();
        // 100 cores, 400 KB over four users: 25 and 100 each.
        let caps = equal.rule(100, 400, &[]).resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Cpu], Some(Ratio::integer(25)));
        assert_eq!(caps[&1][Resource::Memory], Some(Ratio::integer(100)));
        // A pool has no memory: only CPUs are measured.
        let caps = equal.rule(100, 0, &[]).resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Memory], None);
        // By shares 0.5, 0.25, 0.125, 0.125, at half scale: 25, 12.5, 6.25, 6.25 cores.
        let shares = ExpectedCapacity {
            split: Split::Shares,
            scale: Ratio::new(1, 2).unwrap(),
            memory: false,
            users: [(4, PerResource::new(None, Some(Ratio::integer(7)), None))].into(),
            ..ExpectedCapacity::default()
        };
        let s = [(1, 0.5), (2, 0.25), (3, 0.125), (4, 0.125)];
        let caps = shares.rule(100, 400, &s).resolve(&users).unwrap();
        assert_eq!(caps[&1][Resource::Cpu], Some(Ratio::integer(25)));
        assert_eq!(caps[&3][Resource::Cpu], Ratio::new(25, 4));
        // Memory is off, so user 4's explicit memory is dropped rather than refused.
        assert_eq!(caps[&4][Resource::Memory], None);
        assert_eq!(
            shares.describe(),
            "split by fairshare shares ×0.5, 1 user and 0 group overrides"
        );
    }
}
