//! A scheduler's queue order in manifests (docs/manifest.md, "Queue order and fairshare"): the
//! raw `order`, `reorder`, `fairshare` and `priority` keys of a scheduler, resolved into the
//! simulator's [`OrderSpec`]. The backfilling rule stays the scheduler's `policy` (or its
//! synonym `backfill`, where `none` is `fcfs`), checked here too.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::raw::RawReorder;
use crate::sim::SchedulerKind;
use crate::sim::fairshare::{
    Charging, Decay, FairshareSpec, Hierarchy, Normalization, PenaltyModel, PenaltySpec,
    SharesSpec, StandardJob,
};
use crate::sim::scheduler::order::{OrderKind, OrderSpec, PriorityWeights, Reorder};

/// `schedulers.<name>.fairshare`: how usage is priced, charged, decayed and shared.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFairshare {
    /// Penalty model P(j): cpu (default), standard_job, pe_global, pe_local or pe_min.
    #[schemars(with = "Option<String>")]
    pub penalty: Option<PenaltyModel>,
    /// The standard job of `standard_job` (default: 1 core, 1 GiB).
    pub standard_job: Option<RawStandardJob>,
    /// GPUs as a further resource of the penalty (default false).
    pub gpus: Option<bool>,
    /// Walltime normalisation: none (default), spec or speed.
    #[schemars(with = "Option<String>")]
    pub normalization: Option<Normalization>,
    /// Cost per SWF queue number, multiplying the penalty (default 1).
    pub queue_costs: Option<BTreeMap<i32, f64>>,
    /// When usage is charged: estimate (default; §3.4: requested time at start, corrected at
    /// the end) or continuous.
    #[schemars(with = "Option<String>")]
    pub charging: Option<Charging>,
    /// Usage decay: `{factor, every}` (seconds), `{half_life}` (seconds); absent: none.
    pub decay: Option<RawDecay>,
    /// Shares per user and group (default 1 each).
    pub shares: Option<RawShares>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStandardJob {
    pub cores: f64,
    /// KiB.
    pub memory_kb: f64,
    #[serde(default)]
    pub gpus: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDecay {
    /// Usage multiplier applied at the end of every `every` seconds (PBS/AleaNG: 0.75).
    #[schemars(with = "Option<f64>")]
    pub factor: Option<Spanned<f64>>,
    #[schemars(with = "Option<i64>")]
    pub every: Option<Spanned<i64>>,
    /// Seconds in which usage halves, continuously (Slurm's PriorityDecayHalfLife).
    #[schemars(with = "Option<i64>")]
    pub half_life: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawShares {
    /// flat (default: users against all users) or groups (users within groups, groups
    /// against groups).
    #[schemars(with = "Option<String>")]
    pub hierarchy: Option<Hierarchy>,
    /// User id → share.
    pub users: Option<BTreeMap<i32, f64>>,
    /// Group id → share.
    pub groups: Option<BTreeMap<i32, f64>>,
}

/// `schedlab.<name>.priority`: the weights of `order: priority`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPriority {
    pub age: Option<f64>,
    pub fairshare: Option<f64>,
    pub size: Option<f64>,
    pub queue: Option<f64>,
    /// Seconds of waiting at which the age factor reaches 1 (default 7 days).
    pub max_age: Option<i64>,
    pub favor_small: Option<bool>,
    /// SWF queue number → priority.
    pub queue_priority: Option<BTreeMap<i32, f64>>,
    /// With a queue setup whose queues differ in priority: queue priority as the leading key
    /// over this order (true, default) or only as the weighted `queue` factor (false).
    pub queue_tiers: Option<bool>,
}

/// The raw keys of a scheduler that define its queue order.
pub struct RawOrderKeys<'a> {
    pub order: Option<OrderKind>,
    pub reorder: Option<&'a Spanned<RawReorder>>,
    pub fairshare: Option<&'a RawFairshare>,
    pub priority: Option<&'a RawPriority>,
}

/// Resolves scheduler `name`'s order keys; `path` is `schedulers.<name>`.
pub fn resolve(
    ctx: &Ctx<'_>,
    path: &str,
    raw: RawOrderKeys<'_>,
) -> Result<OrderSpec, ManifestError> {
    let kind = raw.order.unwrap_or_default();
    let reorder = match raw.reorder.map(|r| (&r.value, r)) {
        None => Reorder::Call,
        Some((RawReorder::Seconds(n), _)) if *n > 0 => Reorder::Every(*n),
        Some((RawReorder::Word(w), _)) if w == "start" => Reorder::Start,
        Some((value, r)) => {
            let found = match value {
                RawReorder::Seconds(n) => n.to_string(),
                RawReorder::Word(w) => format!("{w:?}"),
            };
            return Err(ctx
                .error(
                    &format!("{path}.reorder"),
                    format!("expected a positive number of seconds or `start`, found {found}"),
                    &r.referenced,
                )
                .hint(
                    "leave `reorder` out to re-order at every scheduler call; `start` \
                     re-orders after every single start",
                ));
        }
    };
    let fairshare = match raw.fairshare {
        Some(f) => fairshare(ctx, &format!("{path}.fairshare"), f)?,
        None => FairshareSpec::default(),
    };
    let priority = match raw.priority {
        Some(p) => priority(ctx, &format!("{path}.priority"), p)?,
        None => PriorityWeights::default(),
    };
    // Weights are kept whatever the order: the `order` axis may turn them on per cell.
    Ok(OrderSpec {
        kind,
        reorder,
        fairshare,
        priority,
        candidates: Default::default(),
        compat: Default::default(),
    })
}

fn fairshare(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawFairshare,
) -> Result<FairshareSpec, ManifestError> {
    let mut penalty = PenaltySpec::of(raw.penalty.unwrap_or_default());
    if let Some(s) = &raw.standard_job {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(s.cores) && ok(s.memory_kb) && s.gpus.is_finite() && s.gpus >= 0.0) {
            return Err(ctx.key_error(
                &format!("{path}.standard_job"),
                "standard_job",
                "the standard job needs positive `cores` and `memory_kb` and non-negative `gpus`",
            ));
        }
        penalty.standard_job = StandardJob {
            cores: s.cores,
            memory_kb: s.memory_kb,
            gpus: s.gpus,
        };
    }
    penalty.gpus = raw.gpus.unwrap_or(false);
    penalty.normalization = raw.normalization.unwrap_or_default();
    if let Some(costs) = &raw.queue_costs {
        if let Some((q, c)) = costs.iter().find(|(_, c)| !(c.is_finite() && **c >= 0.0)) {
            return Err(ctx.key_error(
                &format!("{path}.queue_costs.{q}"),
                "queue_costs",
                format!("queue {q}: a cost must be a non-negative number, found {c}"),
            ));
        }
        penalty.queue_costs = costs.clone();
    }
    let decay = match &raw.decay {
        None => Decay::None,
        Some(d) => decay(ctx, &format!("{path}.decay"), d)?,
    };
    let shares = match &raw.shares {
        None => SharesSpec::default(),
        Some(s) => {
            let spec = SharesSpec {
                hierarchy: s.hierarchy.unwrap_or_default(),
                users: s.users.clone().unwrap_or_default(),
                groups: s.groups.clone().unwrap_or_default(),
            };
            if let Err(e) = spec.validate() {
                return Err(ctx.key_error(&format!("{path}.shares"), "shares", e.to_string()));
            }
            if spec.hierarchy == Hierarchy::Flat && !spec.groups.is_empty() {
                return Err(ctx
                    .key_error(
                        &format!("{path}.shares.groups"),
                        "groups",
                        "group shares need `hierarchy: groups`",
                    )
                    .hint("add `hierarchy: groups` to the shares"));
            }
            spec
        }
    };
    Ok(FairshareSpec {
        penalty,
        charging: raw.charging.unwrap_or_default(),
        decay,
        shares,
    })
}

fn decay(ctx: &Ctx<'_>, path: &str, raw: &RawDecay) -> Result<Decay, ManifestError> {
    let hint = "write `decay: {factor: 0.75, every: 172800}` or `decay: {half_life: 604800}`";
    match (&raw.factor, &raw.every, &raw.half_life) {
        (Some(f), Some(e), None) => {
            if !(f.value > 0.0 && f.value <= 1.0) {
                return Err(ctx.error(
                    &format!("{path}.factor"),
                    format!("expected a number in (0, 1], found {}", f.value),
                    &f.referenced,
                ));
            }
            if e.value <= 0 {
                return Err(ctx.error(
                    &format!("{path}.every"),
                    format!("expected a positive number of seconds, found {}", e.value),
                    &e.referenced,
                ));
            }
            Ok(Decay::Factor {
                factor: f.value,
                every: e.value,
            })
        }
        (None, None, Some(h)) => {
            if h.value <= 0 {
                return Err(ctx.error(
                    &format!("{path}.half_life"),
                    format!("expected a positive number of seconds, found {}", h.value),
                    &h.referenced,
                ));
            }
            Ok(Decay::HalfLife { half_life: h.value })
        }
        _ => Err(ctx
            .key_error(
                path,
                "decay",
                "a decay is either `factor` with `every`, or `half_life`",
            )
            .hint(hint)),
    }
}

fn priority(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawPriority,
) -> Result<PriorityWeights, ManifestError> {
    let d = PriorityWeights::default();
    let w = PriorityWeights {
        age: raw.age.unwrap_or(d.age),
        fairshare: raw.fairshare.unwrap_or(d.fairshare),
        size: raw.size.unwrap_or(d.size),
        queue: raw.queue.unwrap_or(d.queue),
        max_age: raw.max_age.unwrap_or(d.max_age),
        favor_small: raw.favor_small.unwrap_or(d.favor_small),
        queue_priority: raw.queue_priority.clone().unwrap_or_default(),
        queue_tiers: raw.queue_tiers.unwrap_or(d.queue_tiers),
    };
    w.validate()
        .map_err(|e| ctx.key_error(path, "priority", e.to_string()))?;
    if !w.queue_tiers && w.queue <= 0.0 {
        return Err(ctx
            .key_error(
                &format!("{path}.queue_tiers"),
                "queue_tiers",
                "`queue_tiers: false` weighs queue priority by the `queue` weight, which is 0",
            )
            .hint("give `queue` a positive weight, or keep queue priority as tiers"));
    }
    Ok(w)
}

/// A scheduler's backfilling rule: `policy`, or `backfill` (`none` is `fcfs`), exactly one.
pub fn backfill_rule(
    ctx: &Ctx<'_>,
    path: &str,
    s: &super::raw::RawScheduler,
) -> Result<SchedulerKind, ManifestError> {
    match (&s.policy, &s.backfill) {
        (Some(p), None) => p.value.parse::<SchedulerKind>().map_err(|_| {
            let names = ["fcfs", "easy", "conservative", "aggressive", "python"];
            let err = ctx.error(
                &format!("{path}.policy"),
                format!(
                    "unknown policy `{}`, expected one of fcfs, easy, conservative, aggressive, python",
                    p.value
                ),
                &p.referenced,
            );
            match super::error::did_you_mean(&p.value, names) {
                Some(s) => err.hint(format!("did you mean `{s}`?")),
                None => err,
            }
        }),
        (None, Some(b)) => parse_backfill(&b.value).map_err(|m| {
            ctx.error(&format!("{path}.backfill"), m, &b.referenced)
        }),
        (Some(_), Some(b)) => Err(ctx
            .error(
                &format!("{path}.backfill"),
                "`policy` and `backfill` both name the backfilling rule",
                &b.referenced,
            )
            .hint("keep one of them")),
        (None, None) => Err(ctx
            .key_error(path, path.rsplit('.').next().unwrap_or(path), "a scheduler needs a backfilling rule")
            .hint("add `policy: easy` (or fcfs, conservative, aggressive), or `backfill: none|easy|conservative|aggressive`")),
    }
}

/// A value of `backfill` (key or axis): none, easy, conservative or aggressive.
pub fn parse_backfill(s: &str) -> Result<SchedulerKind, String> {
    if s == "fcfs" {
        return Err(
            "`fcfs` is an order; the backfilling rule without backfilling is `none`".into(),
        );
    }
    SchedulerKind::from_backfill(s)
}
