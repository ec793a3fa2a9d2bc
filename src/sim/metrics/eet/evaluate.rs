//! The whole metric over one schedule: each user's jobs into that user's shares (one per
//! modelled resource), the EET as the latest over resources, per-job violation and tardiness,
//! per-user VEET_u and WT_u, and their spread across users.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::capacity::CapacityRule;
use super::error::EetError;
use super::job::{EetJob, JobEet};
use super::resource::{PerResource, Resource};
use super::share::{PlaceError, ShareProfile};
use super::spread::Spread;
use super::user::UserEet;
use crate::sim::job::Time;

/// The VEET_u level the paper's section 4 reads its box plots at: "75% of users have at most
/// 35% violated EETs".
pub const VEET_BENCHMARK: f64 = 35.0;

/// Results of [`evaluate`].
#[derive(Clone, Debug, PartialEq)]
pub struct EetReport {
    /// One per input job, in input order.
    pub jobs: Vec<JobEet>,
    /// One per user, by user id.
    pub users: Vec<UserEet>,
    pub summary: EetSummary,
}

/// Run-level figures: totals and the spread of the per-user metrics across users.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EetSummary {
    /// Users with at least one job (the ones the capacity is split among).
    pub users: u64,
    /// Users with at least one judged job (the ones the spreads are over).
    pub judged_users: u64,
    pub jobs: u64,
    pub judged_jobs: u64,
    pub violated_jobs: u64,
    /// violated_jobs / judged_jobs.
    pub violated_fraction: Option<f64>,
    /// VEET_u across judged users, percent.
    pub veet: Spread,
    /// WT_u across judged users, CPU-seconds.
    pub weighted_tardiness: Spread,
    /// Σ T_j per user across judged users, seconds.
    pub tardiness: Spread,
    /// Fraction of judged users with VEET_u ≤ 35 % (the paper's section 4 yardstick).
    pub users_veet_at_most_35: Option<f64>,
}

/// Computes EETs, violations and tardiness of `jobs` under the capacities of `rule`. Each user's
/// jobs enter its shares in arrival order (submit time; ties in input order). The users who
/// count for the split of the system are exactly those with a job in `jobs`.
pub fn evaluate(jobs: &[EetJob], rule: &CapacityRule) -> Result<EetReport, EetError> {
    // Each user's jobs in arrival order.
    let mut by_user: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        by_user.entry(job.user).or_default().push(i);
    }
    for members in by_user.values_mut() {
        members.sort_by_key(|&i| jobs[i].submit);
    }
    let groups: BTreeMap<i32, i32> = by_user
        .iter()
        .map(|(&u, members)| (u, jobs[members[0]].group))
        .collect();
    let capacities = rule.resolve(&groups)?;

    let mut results: Vec<JobEet> = jobs
        .iter()
        .map(|job| JobEet {
            eet: job.submit,
            by_resource: PerResource::new(None, None, None),
            latest_start: job.submit,
            completion: job.completion(),
            violated: None,
            tardiness: None,
        })
        .collect();
    for (user, members) in &by_user {
        // The user's jobs gathered once, in arrival order (the input interleaves users).
        let mine: Vec<Arrival> = members
            .iter()
            .map(|&i| Arrival {
                id: jobs[i].id,
                submit: jobs[i].submit,
                runtime: jobs[i].runtime,
                request: jobs[i].request,
            })
            .collect();
        let mut ends: Vec<PerResource<Option<Time>>> =
            vec![PerResource::new(None, None, None); mine.len()];
        for resource in Resource::ALL {
            let Some(capacity) = capacities[user][resource] else {
                continue;
            };
            let mut share = ShareProfile::new(capacity.num()).ok_or(EetError::ZeroCapacity {
                owner: format!("user {user}"),
                resource,
            })?;
            for (job, end) in mine.iter().zip(ends.iter_mut()) {
                let overflow = || EetError::Overflow {
                    job: job.id,
                    user: *user,
                    resource,
                };
                // A fractional capacity num/den: every amount of the share times den.
                let request = u128::from(job.request[resource])
                    .checked_mul(capacity.den())
                    .ok_or_else(overflow)?;
                end[resource] = Some(
                    share
                        .place(job.submit, request, job.runtime)
                        .map_err(|_: PlaceError| overflow())?,
                );
            }
        }
        for (&i, end) in members.iter().zip(ends) {
            results[i].by_resource = end;
        }
    }
    for (job, r) in jobs.iter().zip(results.iter_mut()) {
        // A job asking for some of a resource ends no earlier than arrival + runtime in that
        // share; one asking for none of any keeps its own length too (Algorithm 1 alone would
        // give it its arrival, making it late by its whole runtime).
        let own_length = job.submit.saturating_add(job.runtime.max(0));
        r.eet = r
            .by_resource
            .iter()
            .filter_map(|(_, e)| *e)
            .fold(own_length, Time::max);
        r.latest_start = r.eet.saturating_sub(job.runtime.max(0));
        if let Some(c) = r.completion {
            r.violated = Some(c > r.eet);
            r.tardiness = Some(c.saturating_sub(r.eet).max(0));
        }
    }

    let users: Vec<UserEet> = by_user
        .iter()
        .map(|(user, members)| {
            UserEet::of(
                *user,
                groups[user],
                capacities[user],
                members.iter().map(|&i| (&jobs[i], &results[i])),
            )
        })
        .collect();
    let summary = summarize(&users);
    Ok(EetReport {
        jobs: results,
        users,
        summary,
    })
}

/// What a share needs of a job, copied out of the input so that a user's jobs lie together.
struct Arrival {
    id: u64,
    submit: Time,
    runtime: Time,
    request: PerResource<u64>,
}

pub(super) fn summarize(users: &[UserEet]) -> EetSummary {
    let judged: Vec<&UserEet> = users.iter().filter(|u| u.judged > 0).collect();
    let collect = |f: fn(&UserEet) -> f64| judged.iter().map(|u| f(u)).collect::<Vec<f64>>();
    let judged_jobs: u64 = users.iter().map(|u| u.judged).sum();
    let violated_jobs: u64 = users.iter().map(|u| u.violated).sum();
    let within = judged
        .iter()
        .filter(|u| u.veet.is_some_and(|v| v <= VEET_BENCHMARK))
        .count();
    EetSummary {
        users: users.len() as u64,
        judged_users: judged.len() as u64,
        jobs: users.iter().map(|u| u.jobs).sum(),
        judged_jobs,
        violated_jobs,
        violated_fraction: (judged_jobs > 0).then(|| violated_jobs as f64 / judged_jobs as f64),
        veet: Spread::of(&mut collect(|u| u.veet.unwrap_or(0.0))),
        weighted_tardiness: Spread::of(&mut collect(|u| u.weighted_tardiness as f64)),
        tardiness: Spread::of(&mut collect(|u| u.tardiness as f64)),
        users_veet_at_most_35: (!judged.is_empty()).then(|| within as f64 / judged.len() as f64),
    }
}
