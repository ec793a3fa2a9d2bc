//! The `metrics.expected_capacity` section: the users' expected share of the machine for the
//! expected-end-time metrics (Tóth & Klusáček, section 3.1; docs/manifest.md, "Expected
//! capacity"), resolved into the metric's [`ExpectedCapacity`]. A metric setting: it changes
//! no schedule.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::units::parse_memory_kb;
use crate::sim::metrics::eet::{ExpectedCapacity, PerResource, Ratio, Resource, Split};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExpectedCapacity {
    /// `equal` (default: the machine split equally among the users with a job) or `shares`
    /// (in proportion to the users' fairshare shares).
    #[schemars(with = "Option<String>")]
    pub split: Option<Spanned<String>>,
    /// Multiplies every split capacity (default 1; grid axis `capacity_scale`).
    #[schemars(with = "Option<f64>")]
    pub scale: Option<Spanned<f64>>,
    /// Also measure memory when the machine has any (default true).
    pub memory: Option<bool>,
    /// Explicit capacities by user id, overriding the split: `{cpu: 8, memory: 64 GiB}`.
    #[serde(default)]
    pub users: BTreeMap<String, RawCapacity>,
    /// Explicit capacities for each user of a group, by group id.
    #[serde(default)]
    pub groups: BTreeMap<String, RawCapacity>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCapacity {
    /// CPUs (cores), a positive number.
    #[schemars(with = "Option<f64>")]
    pub cpu: Option<Spanned<f64>>,
    /// Memory: a size such as `64 GiB`.
    #[schemars(with = "Option<String>")]
    pub memory: Option<Spanned<String>>,
}

/// A positive finite number as an exact ratio (its shortest decimal form).
pub fn positive_ratio(x: f64) -> Option<Ratio> {
    if !(x.is_finite() && x > 0.0) {
        return None;
    }
    Ratio::parse_decimal(&x.to_string())
        .ok()
        .filter(|r| !r.is_zero())
}

pub fn resolve(
    ctx: &Ctx<'_>,
    raw: Option<&RawExpectedCapacity>,
) -> Result<ExpectedCapacity, ManifestError> {
    let Some(raw) = raw else {
        return Ok(ExpectedCapacity::default());
    };
    const PATH: &str = "metrics.expected_capacity";
    let split = match &raw.split {
        None => Split::Equal,
        Some(s) => match s.value.as_str() {
            "equal" => Split::Equal,
            "shares" => Split::Shares,
            other => {
                return Err(ctx
                    .error(
                        &format!("{PATH}.split"),
                        format!("expected `equal` or `shares`, found `{other}`"),
                        &s.referenced,
                    )
                    .hint("`shares` splits the machine in proportion to the fairshare shares"));
            }
        },
    };
    let scale = match &raw.scale {
        None => Ratio::ONE,
        Some(s) => positive_ratio(s.value).ok_or_else(|| {
            ctx.error(
                &format!("{PATH}.scale"),
                format!(
                    "expected a positive number such as 0.5 or 2, found {}",
                    s.value
                ),
                &s.referenced,
            )
        })?,
    };
    let explicit = |section: &str,
                    map: &BTreeMap<String, RawCapacity>|
     -> Result<BTreeMap<i32, PerResource<Option<Ratio>>>, ManifestError> {
        let mut out = BTreeMap::new();
        for (key, caps) in map {
            let path = format!("{PATH}.{section}.{key}");
            let id: i32 = key.trim().parse().map_err(|_| {
                ctx.key_error(
                    &path,
                    key,
                    format!(
                        "expected a {} id (an integer), found `{key}`",
                        &section[..section.len() - 1]
                    ),
                )
            })?;
            let mut c = PerResource::new(None, None, None);
            if let Some(cpu) = &caps.cpu {
                c[Resource::Cpu] = Some(positive_ratio(cpu.value).ok_or_else(|| {
                    ctx.error(
                        &format!("{path}.cpu"),
                        format!("expected a positive number of CPUs, found {}", cpu.value),
                        &cpu.referenced,
                    )
                })?);
            }
            if let Some(memory) = &caps.memory {
                let kb = parse_memory_kb(&memory.value)
                    .and_then(|kb| {
                        (kb > 0)
                            .then_some(kb)
                            .ok_or_else(|| "a capacity must be above 0".to_string())
                    })
                    .map_err(|e| ctx.error(&format!("{path}.memory"), e, &memory.referenced))?;
                c[Resource::Memory] = Some(Ratio::integer(kb));
            }
            if c.iter().all(|(_, v)| v.is_none()) {
                return Err(ctx.key_error(&path, key, "give `cpu`, `memory` or both"));
            }
            out.insert(id, c);
        }
        Ok(out)
    };
    Ok(ExpectedCapacity {
        split,
        scale,
        memory: raw.memory.unwrap_or(true),
        users: explicit("users", &raw.users)?,
        groups: explicit("groups", &raw.groups)?,
        configured: true,
    })
}
