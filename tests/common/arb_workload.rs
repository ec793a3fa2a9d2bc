//! Random overloaded workloads and fairshare settings shared by the property tests that check
//! a fast scheduling path against a kept reference (`easy_index`, `easy_fairshare`,
//! `fairshare_lazy`): one builder each, the ranges a parameter so every test keeps its own
//! distribution.

use proptest::prelude::*;
use schedlab::sim::fairshare::{Charging, Decay, FairshareSpec, Hierarchy, SharesSpec};
use schedlab::sim::scheduler::order::Reorder;
use schedlab::sim::{Job, Time};
use std::ops::Range;

/// The ranges an overloaded workload is drawn from: submit times, widths as powers of two
/// `1 << log_width` (mixed with any width up to past the machine, and single processors),
/// runtimes, the extra seconds a request adds to a multiple (0–3) of the runtime, and the
/// number of jobs.
#[derive(Clone, Debug)]
pub struct JobRanges {
    pub submit: Range<Time>,
    pub log_width: Range<u32>,
    pub runtime: Range<Time>,
    pub extra: Range<Time>,
    pub jobs: Range<usize>,
}

/// Jobs numbered from 1 with fields drawn from `ranges` on a machine of `max_procs`: requested
/// times from exact to far too long, and some jobs running past their request (a multiple of
/// 0). With `users`, each job's user is drawn from it; without, `common::job`'s (id mod 7).
pub fn arb_overloaded_jobs(
    ranges: JobRanges,
    max_procs: u32,
    users: Option<Range<i32>>,
) -> impl Strategy<Value = Vec<Job>> {
    let user = match users {
        Some(users) => users.prop_map(Some).boxed(),
        None => Just(None).boxed(),
    };
    prop::collection::vec(
        (
            ranges.submit,
            prop_oneof![
                ranges.log_width.prop_map(|b| 1u32 << b),
                1u32..=max_procs + 2,
                Just(1u32),
            ],
            ranges.runtime,
            0i64..4,
            ranges.extra,
            user,
        ),
        ranges.jobs,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (submit, procs, runtime, mult, extra, user))| {
                // mult 0: a request shorter than the runtime (killed or overrunning).
                let requested = (runtime * mult + extra).max(1);
                let job = super::job(i as u64 + 1, submit, procs, runtime, requested);
                Job {
                    user: user.unwrap_or(job.user),
                    ..job
                }
            })
            .collect()
    })
}

/// Fairshare settings: charging at the start or as jobs run, no decay, a half-life or a
/// factor, shares for the four users numbered from `first_user` (or none), two levels of
/// shares (groups, then users) with probability `groups`, and the re-ordering period (every
/// call, one start per pass, every 50 s).
pub fn arb_fairshare(
    first_user: i32,
    groups: f64,
) -> impl Strategy<Value = (FairshareSpec, Reorder)> {
    (
        prop::bool::ANY,
        0..3u8,
        prop::option::of(prop::collection::vec(1..4u8, 4)),
        0..3u8,
        prop::bool::weighted(groups),
    )
        .prop_map(move |(continuous, decay, shares, reorder, groups)| {
            let spec = FairshareSpec {
                charging: if continuous {
                    Charging::Continuous
                } else {
                    Charging::Estimate
                },
                decay: match decay {
                    0 => Decay::None,
                    1 => Decay::HalfLife { half_life: 100 },
                    _ => Decay::Factor {
                        factor: 0.5,
                        every: 60,
                    },
                },
                shares: SharesSpec {
                    hierarchy: if groups {
                        Hierarchy::Groups
                    } else {
                        Hierarchy::Flat
                    },
                    users: shares
                        .map(|s| {
                            (first_user..first_user + 4)
                                .zip(s.into_iter().map(f64::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                    ..SharesSpec::default()
                },
                ..FairshareSpec::default()
            };
            let reorder = match reorder {
                0 => Reorder::Call,
                1 => Reorder::Start,
                _ => Reorder::Every(50),
            };
            (spec, reorder)
        })
}
