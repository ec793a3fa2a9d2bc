//! The `queues` section: named queue setups (queues, routing, caps on queues, users and groups,
//! or AleaNG's limit files) → the simulator's [`Limits`] (docs/queues.md). Every check that the
//! simulator would make is made here first, with the key path and line of the offending value.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_saphyr::{Location, Spanned};

use super::ctx::Ctx;
use super::error::{ManifestError, did_you_mean};
use super::raw::{RawAccounts, RawCaps, RawDuration, RawQueue, RawQueueSetup};
use crate::sim::Time;
use crate::sim::limits::{AccountTable, Caps, Limits, OverLimit, Queue, Routing};

/// A resolved queue setup: its name (for cell ids) and what the simulator applies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSetup {
    #[serde(skip)]
    pub name: String,
    pub limits: Limits,
}

/// The scenario of a grid without queue setups: one queue, no limits.
pub const NO_QUEUES: &str = "none";

const ROUTINGS: [&str; 3] = ["swf_queue", "queue_name", "requested_time"];

pub fn resolve(
    ctx: &Ctx<'_>,
    name: &str,
    raw: &RawQueueSetup,
) -> Result<QueueSetup, ManifestError> {
    let path = format!("queues.{name}");
    let routing_name = match &raw.routing {
        None => "swf_queue",
        Some(r) => ROUTINGS
            .iter()
            .copied()
            .find(|k| *k == r.value)
            .ok_or_else(|| {
                let err = ctx.error(
                    &format!("{path}.routing"),
                    format!("unknown routing `{}`", r.value),
                    &r.referenced,
                );
                match did_you_mean(&r.value, ROUTINGS) {
                    Some(s) => err.hint(format!("did you mean `{s}`?")),
                    None => err.hint("expected swf_queue, queue_name or requested_time"),
                }
            })?,
    };
    let over_walltime = match &raw.over_walltime {
        None => OverLimit::Kill,
        Some(v) => match v.value.as_str() {
            "kill" => OverLimit::Kill,
            "reject" => OverLimit::Reject,
            other => {
                return Err(ctx
                    .error(
                        &format!("{path}.over_walltime"),
                        format!("unknown choice `{other}`"),
                        &v.referenced,
                    )
                    .hint("expected kill (cut the request, kill at the limit) or reject"));
            }
        },
    };

    let (queues, mut users, mut groups, routes) = match (&raw.queues, &raw.aleang) {
        (Some(_), Some(file)) => {
            return Err(ctx
                .error(
                    &format!("{path}.aleang"),
                    "`aleang` and `queues` both define the queues",
                    &file.referenced,
                )
                .hint("import AleaNG's files, or list the queues, not both"));
        }
        (None, None) => {
            return Err(ctx
                .key_error(
                    &path,
                    name,
                    format!("queue setup `{name}` defines no queue"),
                )
                .hint("give `queues: [{name: ..., ...}]` or `aleang: <workload file>`"));
        }
        (Some(list), None) => listed(ctx, &path, routing_name, list)?,
        (None, Some(file)) => imported(ctx, &path, routing_name, file)?,
    };

    let names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
    let default = match &raw.default_queue {
        None => None,
        Some(d) => Some(
            names
                .iter()
                .position(|n| *n == d.value)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    let err = ctx.error(
                        &format!("{path}.default_queue"),
                        format!("no queue is named `{}`", d.value),
                        &d.referenced,
                    );
                    match did_you_mean(&d.value, names.iter().copied()) {
                        Some(s) => err.hint(format!("did you mean `{s}`?")),
                        None => err.hint(format!("queues: {}", names.join(", "))),
                    }
                })?,
        ),
    };
    let routing = match (routing_name, routes) {
        ("requested_time", _) => {
            if default.is_some() {
                return Err(ctx
                    .key_error(
                        &format!("{path}.default_queue"),
                        "default_queue",
                        "routing by requested time sends every job to a queue: `default_queue` has no use",
                    )
                    .hint("remove `default_queue`, or route by swf_queue or queue_name"));
            }
            Routing::RequestedTime
        }
        ("queue_name", Routes::Names(map)) => Routing::QueueName { map, default },
        (_, Routes::Numbers(map)) => Routing::SwfQueue { map, default },
        (_, Routes::Names(_)) => unreachable!("names are collected only for queue_name routing"),
    };
    if let Some(raw_users) = &raw.users {
        accounts(ctx, &format!("{path}.users"), raw_users, &mut users)?;
    }
    if let Some(raw_groups) = &raw.groups {
        accounts(ctx, &format!("{path}.groups"), raw_groups, &mut groups)?;
    }
    let limits = Limits {
        queues,
        routing,
        over_walltime,
        users,
        groups,
    };
    // Everything the simulator checks has been checked above, with locations.
    limits
        .validate()
        .map_err(|e| ctx.key_error(&path, name, e.to_string()))?;
    Ok(QueueSetup {
        name: name.to_string(),
        limits,
    })
}

enum Routes {
    Numbers(BTreeMap<i32, u32>),
    Names(BTreeMap<String, u32>),
}

type Resolved = (Vec<Queue>, AccountTable, AccountTable, Routes);

fn listed(
    ctx: &Ctx<'_>,
    path: &str,
    routing: &str,
    list: &Spanned<Vec<RawQueue>>,
) -> Result<Resolved, ManifestError> {
    if list.value.is_empty() {
        return Err(ctx.error(
            &format!("{path}.queues"),
            "expected at least one queue",
            &list.referenced,
        ));
    }
    let mut queues = Vec::new();
    let mut numbers = BTreeMap::new();
    let mut names = BTreeMap::new();
    for (i, q) in list.value.iter().enumerate() {
        let qpath = format!("{path}.queues[{i}]");
        let name = &q.name.value;
        if !super::ctx::valid_name(name) {
            return Err(ctx
                .error(
                    &format!("{qpath}.name"),
                    format!("`{name}` is not a valid queue name"),
                    &q.name.referenced,
                )
                .hint("names may use letters, digits, `-` and `_` (they appear in outputs)"));
        }
        if queues.iter().any(|o: &Queue| &o.name == name) {
            return Err(ctx.error(
                &format!("{qpath}.name"),
                format!("queue `{name}` is defined twice"),
                &q.name.referenced,
            ));
        }
        let located = |key: &str| format!("{qpath}.{key}");
        if let Some(numbers_here) = &q.swf_queue {
            if routing != "swf_queue" {
                return Err(ctx
                    .error(
                        &located("swf_queue"),
                        format!("`swf_queue` routes jobs only with `routing: swf_queue` (this setup routes by {routing})"),
                        &q.name.referenced,
                    )
                    .hint("remove it, or set `routing: swf_queue`"));
            }
            for &n in numbers_here {
                if let Some(prev) = numbers.insert(n, i as u32) {
                    return Err(ctx.error(
                        &located("swf_queue"),
                        format!(
                            "SWF queue {n} is routed to `{}` already",
                            list.value[prev as usize].name.value
                        ),
                        &q.name.referenced,
                    ));
                }
            }
        }
        if let Some(names_here) = &q.trace_names {
            if routing != "queue_name" {
                return Err(ctx
                    .error(
                        &located("trace_names"),
                        format!("`trace_names` routes jobs only with `routing: queue_name` (this setup routes by {routing})"),
                        &q.name.referenced,
                    )
                    .hint("remove it, or set `routing: queue_name`"));
            }
            for n in names_here {
                if let Some(prev) = names.insert(n.clone(), i as u32) {
                    return Err(ctx.error(
                        &located("trace_names"),
                        format!(
                            "trace queue `{n}` is routed to `{}` already",
                            list.value[prev as usize].name.value
                        ),
                        &q.name.referenced,
                    ));
                }
            }
        }
        queues.push(Queue {
            name: name.clone(),
            priority: q.priority.unwrap_or(0),
            max_walltime: q
                .max_walltime
                .as_ref()
                .map(|d| duration(ctx, &located("max_walltime"), d))
                .transpose()?,
            max_cputime: q
                .max_cputime
                .as_ref()
                .map(|d| duration(ctx, &located("max_cputime"), d))
                .transpose()?,
            caps: Caps {
                max_running: count(ctx, &located("max_running"), q.max_running.as_ref())?,
                max_queued: count(ctx, &located("max_queued"), q.max_queued.as_ref())?,
                cpu_quota: count(ctx, &located("cpu_quota"), q.cpu_quota.as_ref())?.map(u64::from),
            },
            per_user: match &q.per_user {
                Some(c) => caps(ctx, &located("per_user"), c)?,
                None => Caps::default(),
            },
            per_group: match &q.per_group {
                Some(c) => caps(ctx, &located("per_group"), c)?,
                None => Caps::default(),
            },
        });
    }
    if routing == "requested_time" && queues.iter().all(|q| q.max_walltime.is_none()) {
        return Err(ctx
            .error(
                &format!("{path}.queues"),
                "routing by requested time needs queues with `max_walltime`",
                &list.referenced,
            )
            .hint("give each queue its maximum walltime, shortest first"));
    }
    let routes = if routing == "queue_name" {
        Routes::Names(names)
    } else {
        Routes::Numbers(numbers)
    };
    Ok((
        queues,
        AccountTable::default(),
        AccountTable::default(),
        routes,
    ))
}

fn imported(
    ctx: &Ctx<'_>,
    path: &str,
    routing: &str,
    file: &Spanned<String>,
) -> Result<Resolved, ManifestError> {
    let kpath = format!("{path}.aleang");
    if routing != "swf_queue" {
        return Err(ctx
            .error(
                &kpath,
                "AleaNG's queues are routed by SWF queue number",
                &file.referenced,
            )
            .hint("remove `routing`, or set `routing: swf_queue`"));
    }
    let full = ctx.base_dir.join(&file.value);
    let parsed = crate::machines::aleang_limits::read_beside(&full).map_err(|e| {
        ctx.error(&kpath, format!("failed to import AleaNG's limits: {e}"), &file.referenced)
            .hint("`aleang` names the workload file; its `.queues` (id queue_name CPU_quota priority) must be beside it, `.users` and `.groups` (id name shares CPU_quota) may be")
    })?;
    let mut numbers = BTreeMap::new();
    let queues = parsed
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            numbers.insert(q.id, i as u32);
            Queue {
                name: q.name.clone(),
                priority: q.priority,
                caps: Caps {
                    cpu_quota: Some(q.cpu_quota),
                    ..Caps::default()
                },
                ..Queue::default()
            }
        })
        .collect();
    let table = |accounts: &[crate::machines::aleang_limits::AleaAccount]| AccountTable {
        default: Caps::default(),
        by_id: accounts
            .iter()
            .map(|a| {
                (
                    a.id,
                    Caps {
                        cpu_quota: Some(a.cpu_quota),
                        ..Caps::default()
                    },
                )
            })
            .collect(),
    };
    Ok((
        queues,
        table(&parsed.users),
        table(&parsed.groups),
        Routes::Numbers(numbers),
    ))
}

/// Adds the manifest's caps to `table` (per id, over what was imported).
fn accounts(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawAccounts,
    table: &mut AccountTable,
) -> Result<(), ManifestError> {
    if let Some(d) = &raw.default {
        table.default = merge(table.default, caps(ctx, &format!("{path}.default"), d)?);
    }
    for (id, c) in raw.by_id.iter().flatten() {
        let given = caps(ctx, &format!("{path}.by_id.{id}"), c)?;
        let base = table.by_id.get(id).copied().unwrap_or(table.default);
        table.by_id.insert(*id, merge(base, given));
    }
    Ok(())
}

fn merge(base: Caps, over: Caps) -> Caps {
    Caps {
        max_running: over.max_running.or(base.max_running),
        max_queued: over.max_queued.or(base.max_queued),
        cpu_quota: over.cpu_quota.or(base.cpu_quota),
    }
}

fn caps(ctx: &Ctx<'_>, path: &str, raw: &RawCaps) -> Result<Caps, ManifestError> {
    Ok(Caps {
        max_running: count(
            ctx,
            &format!("{path}.max_running"),
            raw.max_running.as_ref(),
        )?,
        max_queued: count(ctx, &format!("{path}.max_queued"), raw.max_queued.as_ref())?,
        cpu_quota: count(ctx, &format!("{path}.cpu_quota"), raw.cpu_quota.as_ref())?.map(u64::from),
    })
}

fn count(
    ctx: &Ctx<'_>,
    path: &str,
    v: Option<&Spanned<i64>>,
) -> Result<Option<u32>, ManifestError> {
    let Some(v) = v else { return Ok(None) };
    match u32::try_from(v.value) {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(ctx
            .error(
                path,
                format!("expected a positive integer, found {}", v.value),
                &v.referenced,
            )
            .hint("leave the key out for no cap")),
    }
}

/// Seconds, or "H:MM" / "H:MM:SS" (Medernach's table gives "H:M").
fn duration(ctx: &Ctx<'_>, path: &str, v: &Spanned<RawDuration>) -> Result<Time, ManifestError> {
    let bad = |loc: &Location, found: String| {
        ctx.error(
            path,
            format!("expected a positive duration, found {found}"),
            loc,
        )
        .hint("give seconds (900) or hours and minutes (\"0:15\", \"72:00\", \"1:30:00\")")
    };
    let seconds = match &v.value {
        RawDuration::Seconds(s) => Some(*s),
        RawDuration::Text(t) => parse_hms(t),
    };
    match seconds {
        Some(s) if s > 0 => Ok(s),
        _ => Err(bad(
            &v.referenced,
            match &v.value {
                RawDuration::Seconds(s) => s.to_string(),
                RawDuration::Text(t) => format!("{t:?}"),
            },
        )),
    }
}

/// "H:MM" or "H:MM:SS" → seconds.
pub fn parse_hms(text: &str) -> Option<Time> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if !(2..=3).contains(&parts.len())
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let n: Vec<i64> = parts
        .iter()
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if n[1] >= 60 || n.get(2).is_some_and(|&s| s >= 60) || n[0] > 1_000_000 {
        return None;
    }
    Some(n[0] * 3600 + n[1] * 60 + n.get(2).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::parse_hms;

    #[test]
    fn hours_and_minutes() {
        assert_eq!(parse_hms("00:05"), Some(300));
        assert_eq!(parse_hms("72:00"), Some(259_200));
        assert_eq!(parse_hms("1:30:15"), Some(5415));
        assert_eq!(parse_hms("1:60"), None);
        assert_eq!(parse_hms("15m"), None);
        assert_eq!(parse_hms(":30"), None);
    }
}
