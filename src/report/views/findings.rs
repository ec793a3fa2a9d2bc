//! Findings in words, computed from the result set: the levels of the primary axis (usually the
//! scheduler) compared with its first level in every setting of the other axes, and each
//! metric followed along every numeric axis — direction, size and, with replicas, whether the
//! difference is beyond replicate noise (Welch's 95 % interval excludes zero). Small grids get
//! a clause per setting; large ones a count, median and range over the settings; three levels
//! or more, where pairs would multiply, one sentence per workload naming each metric's lowest
//! and highest level and the spread. Every other
//! axis of named settings (a queue order beside the scheduler) gets its effect counted over the
//! settings of the rest, and every axis its interactions: where the effect of a setting on the
//! headline metrics reverses or changes size from one level of another axis to the next (issue
//! 35: "does the fairshare order help under each backfilling rule, and how does that change
//! with load").

use super::{Context, Family, Finding, Section, ViewKind, ViewSpec};
use crate::report::metric::{self, Metric};
use crate::report::shape::{Grid, Level, ResultShape};
use crate::report::stats::{Estimate, difference_interval};
use crate::report::text::{self, capitalize, number, percent};

/// Settings per workload up to which each gets its own clause.
pub const MAX_CLAUSES: usize = 4;

/// Pairwise clauses per workload (settings × levels compared with the first) up to which each
/// pair is said; beyond, with three levels or more, each metric's lowest and highest level and
/// the spread between them ([`ranking`]).
pub const MAX_PAIRS: usize = 2;

pub struct Findings;

impl Family for Findings {
    fn name(&self) -> &'static str {
        "findings"
    }

    fn heading(&self) -> &'static str {
        "Findings"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        if shape.configs.len() < 2 {
            return Vec::new();
        }
        let columns: Vec<&str> = metric::finding_metrics(shape)
            .iter()
            .map(|m| m.column)
            .collect();
        let blind = metric::blind_axes(shape, &columns);
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Findings {
                compare: shape.primary().map(|a| a.name.clone()),
                // Not along a metric setting that cannot change the metrics compared.
                trends: shape
                    .numeric_axes()
                    .filter(|a| !blind.iter().any(|&i| shape.axes[i].name == a.name))
                    .map(|a| a.name.clone())
                    .collect(),
            },
        }]
    }

    fn build(&self, views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        for v in views {
            if let ViewKind::Findings { compare, trends } = &v.kind {
                section.intro.push(intro(ctx.grid));
                let shape = &ctx.grid.shape;
                section.intro.extend(metric::blind_note(
                    shape,
                    &metric::finding_metrics(shape),
                    "are not followed along it",
                ));
                section
                    .findings
                    .extend(findings_for(ctx.grid, compare.as_deref(), trends));
            }
        }
    }
}

/// What the figures' uncertainty means in this result set.
fn intro(grid: &Grid<'_>) -> String {
    let varies = grid.configs.iter().any(|c| {
        metric::finding_metrics(&grid.shape).iter().any(|m| {
            c.estimate(m.column, m.scale)
                .and_then(|e| e.half_width())
                .is_some()
        })
    });
    if varies {
        format!(
            "Figures are means over {} replicas; ± gives the half-width of the 95 % confidence interval of a mean (Student's t). A difference is called beyond replicate noise when the 95 % Welch interval of the difference excludes zero.",
            text::whole(grid.shape.replicas)
        )
    } else {
        "Each configuration's result is deterministic (one run, or replicas that agree exactly: trace workloads without random inputs), so the differences below carry no replicate uncertainty; they describe these workloads, not a population of them.".to_string()
    }
}

/// A value with its interval: "11.0 ± 12.7 h".
fn value(m: &Metric, e: &Estimate) -> String {
    match e.half_width() {
        Some(h) => {
            let v = format!("{} ± {}", number(e.mean), number(h));
            if m.unit.is_empty() {
                v
            } else {
                format!("{v} {}", m.unit)
            }
        }
        None => m.with_unit(e.mean),
    }
}

/// "; beyond replicate noise: 95 % CI of the difference +1.93 to +3.50 h", or nothing without
/// replicas that vary.
fn noise(m: &Metric, a: &Estimate, b: &Estimate) -> String {
    match difference_interval(a, b) {
        Some((lo, hi)) => {
            let verdict = if lo > 0.0 || hi < 0.0 {
                "beyond"
            } else {
                "within"
            };
            let unit = if m.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", m.unit)
            };
            format!(
                "; {verdict} replicate noise: 95 % CI of the difference {} to {}{unit}",
                text::signed(lo),
                text::signed(hi)
            )
        }
        None => String::new(),
    }
}

/// "lowers mean wait from 427 h to 5.72 h (−98.7 %)".
fn compare_phrase(m: &Metric, a: &Estimate, b: &Estimate) -> String {
    let verb = if b.mean > a.mean {
        "raises"
    } else if b.mean < a.mean {
        "lowers"
    } else {
        return format!("leaves {} at {}", m.name, value(m, a));
    };
    // Means that differ only beyond the digits shown would read "from 0.719 to 0.719 (±0.0 %)".
    if number(a.mean) == number(b.mean) {
        return format!(
            "leaves {} at {} (to the precision shown)",
            m.name,
            value(m, a)
        );
    }
    format!(
        "{verb} {} from {} to {} ({}{})",
        m.name,
        value(m, a),
        value(m, b),
        text::change(a.mean, b.mean),
        noise(m, a, b)
    )
}

/// A relative change as a percentage, or a factor beyond doubling ("+40.0 %", "×11").
fn relative(rel: f64) -> String {
    if rel >= 1.0 {
        text::factor(1.0 + rel)
    } else {
        percent(rel)
    }
}

/// The settings `levels` of the axes `idx`, each named: "reservations = none, cap = no cap".
fn describe(shape: &ResultShape, idx: &[usize], levels: &[Level]) -> String {
    idx.iter()
        .zip(levels)
        .map(|(&i, l)| shape.axes[i].named(l))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The findings of a grid: comparisons along `compare`, trends along `trends`.
pub fn findings_for(grid: &Grid<'_>, compare: Option<&str>, trends: &[String]) -> Vec<Finding> {
    let shape = &grid.shape;
    let shown: Vec<Metric> = metric::finding_metrics(shape)
        .into_iter()
        .map(|m| grid.shown(m))
        .collect();
    let metrics: Vec<&Metric> = shown.iter().collect();
    let mut out = Vec::new();
    if let Some(ci) = compare.and_then(|c| shape.axis_index(c)) {
        out.extend(comparisons(grid, ci, &metrics));
    }
    for x in trends {
        if let Some(xi) = shape.axis_index(x) {
            out.extend(trend(grid, xi, &metrics));
        }
    }
    let compared = compare.and_then(|c| shape.axis_index(c));
    out.extend(effects(grid, compared, &metrics));
    out
}

/// A relative effect below this (either way) is "no effect" when looking for reversals.
const EFFECT_FLOOR: f64 = 0.05;

/// Metrics whose interactions are looked for: the first of the headline metrics (mean wait and
/// mean bounded slowdown when the result set has them), so that the findings stay short.
const INTERACTION_METRICS: usize = 2;

/// Levels of a conditioning axis named one by one in an interaction; beyond, the lowest and
/// highest effects.
const MAX_NAMED_LEVELS: usize = 6;

/// The effect of `level` against the axis's first level, per setting of every other axis that
/// can change `m` (each such setting once: metric settings blind to `m` at their first level):
/// (the setting's levels, reference estimate, estimate at `level`).
fn effect_pairs(
    grid: &Grid<'_>,
    ai: usize,
    level: &Level,
    m: &Metric,
) -> Vec<(Vec<Level>, Estimate, Estimate)> {
    let shape = &grid.shape;
    let blind = metric::blind_axes(shape, &[m.column]);
    let reference = &shape.axes[ai].levels[0];
    grid.configs
        .iter()
        .filter(|c| &c.levels[ai] == reference && metric::at_first_levels(shape, &blind, &c.levels))
        .filter_map(|c| {
            let other = grid.configs.iter().find(|d| {
                &d.levels[ai] == level
                    && d.levels
                        .iter()
                        .zip(&c.levels)
                        .enumerate()
                        .all(|(i, (x, y))| i == ai || x == y)
            })?;
            Some((
                c.levels.clone(),
                c.estimate(m.column, m.scale)?,
                other.estimate(m.column, m.scale)?,
            ))
        })
        .collect()
}

/// For axes of named settings other than the compared one: the effect of each level over every
/// setting of the other axes; for every such axis (the compared one too): the interactions.
fn effects(grid: &Grid<'_>, compared: Option<usize>, metrics: &[&Metric]) -> Vec<Finding> {
    let shape = &grid.shape;
    let columns: Vec<&str> = metrics.iter().map(|m| m.column).collect();
    let held = metric::blind_axes(shape, &columns);
    let mut out = Vec::new();
    for (ai, axis) in shape.axes.iter().enumerate() {
        if axis.numeric || axis.levels.len() < 2 || axis.name == "workload" || held.contains(&ai) {
            continue;
        }
        for level in &axis.levels[1..] {
            let mut sentences = Vec::new();
            let head = format!("{} vs {}", axis.named(level), axis.value(&axis.levels[0]));
            if Some(ai) != compared {
                let parts: Vec<String> = metrics
                    .iter()
                    .filter_map(|m| {
                        let pairs: Vec<(Estimate, Estimate)> = effect_pairs(grid, ai, level, m)
                            .into_iter()
                            .map(|(_, a, b)| (a, b))
                            .collect();
                        summary_phrase(m, &pairs, None)
                    })
                    .collect();
                if !parts.is_empty() {
                    sentences.push(format!(
                        "Over every setting of the other axes, {}.",
                        parts.join("; ")
                    ));
                }
            }
            for m in metrics.iter().take(INTERACTION_METRICS) {
                let pairs = effect_pairs(grid, ai, level, m);
                sentences.extend(
                    (0..shape.axes.len())
                        .filter(|&bi| bi != ai)
                        .filter_map(|bi| interaction(grid, bi, &pairs, m)),
                );
            }
            if !sentences.is_empty() {
                out.push(Finding {
                    title: if Some(ai) == compared {
                        format!("How the effect of {head} changes")
                    } else {
                        capitalize(&head)
                    },
                    text: sentences.join(" "),
                });
            }
        }
    }
    out
}

/// Whether the effect in `pairs` reverses or changes size across the levels of axis `bi`: the
/// median relative change at each level of `bi` (over the settings of the rest); a sentence
/// when some levels raise the metric and others lower it (each by over [`EFFECT_FLOOR`]), or
/// when, all one way, the largest effect is at least 10 % and three times the smallest.
fn interaction(
    grid: &Grid<'_>,
    bi: usize,
    pairs: &[(Vec<Level>, Estimate, Estimate)],
    m: &Metric,
) -> Option<String> {
    let axis = &grid.shape.axes[bi];
    let mut by_level: Vec<(Level, f64)> = Vec::new();
    for level in &axis.levels {
        let mut rel: Vec<f64> = pairs
            .iter()
            .filter(|(c, a, _)| &c[bi] == level && a.mean != 0.0)
            .map(|(_, a, b)| b.mean / a.mean - 1.0)
            .collect();
        if !rel.is_empty() {
            by_level.push((level.clone(), median(&mut rel)));
        }
    }
    if by_level.len() < 2 {
        return None;
    }
    let up = by_level.iter().any(|(_, r)| *r > EFFECT_FLOOR);
    let down = by_level.iter().any(|(_, r)| *r < -EFFECT_FLOOR);
    let sizes: Vec<f64> = by_level.iter().map(|(_, r)| r.abs()).collect();
    let (small, large) = (
        sizes.iter().copied().fold(f64::INFINITY, f64::min),
        sizes.iter().copied().fold(0.0, f64::max),
    );
    let same_sign =
        by_level.iter().all(|(_, r)| *r >= 0.0) || by_level.iter().all(|(_, r)| *r <= 0.0);
    let how = if up && down {
        "reverses"
    } else if same_sign && large >= 0.10 && large >= 3.0 * small {
        "changes size"
    } else {
        return None;
    };
    let named: Vec<&(Level, f64)> = if by_level.len() <= MAX_NAMED_LEVELS {
        by_level.iter().collect()
    } else {
        let lo = by_level.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let hi = by_level.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        vec![lo, hi]
    };
    let list: Vec<String> = named
        .iter()
        .map(|(l, r)| format!("{} at {}", relative(*r), axis.named(l)))
        .collect();
    let several = pairs.len() > by_level.len();
    Some(format!(
        "On {} the effect {how} with {}: {}{}.",
        m.name,
        axis.short(),
        text::list(&list),
        if several {
            " (the median over the other axes' settings at each)"
        } else {
            ""
        }
    ))
}

fn comparisons(grid: &Grid<'_>, ci: usize, metrics: &[&Metric]) -> Vec<Finding> {
    let shape = &grid.shape;
    let axis = &shape.axes[ci];
    let wi = shape.axis_index("workload").filter(|&w| w != ci);
    // Metric settings that change none of the metrics are no setting to compare in: read at
    // their first level.
    let columns: Vec<&str> = metrics.iter().map(|m| m.column).collect();
    let held = metric::blind_axes(shape, &columns);
    let at_held = |c: &[Level]| metric::at_first_levels(shape, &held, c);
    let context_axes: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| i != ci && Some(i) != wi && !held.contains(&i))
        .collect();
    let workloads: Vec<Option<Level>> = match wi {
        Some(w) => shape.axes[w].levels.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    let reference = &axis.levels[0];
    let mut out = Vec::new();
    for w in workloads {
        let in_workload = |c: &[Level]| {
            at_held(c)
                && match (wi, &w) {
                    (Some(i), Some(l)) => &c[i] == l,
                    _ => true,
                }
        };
        let title = match (wi, &w) {
            (Some(i), Some(l)) => shape.axes[i].named(l),
            _ => shape
                .fixed
                .iter()
                .find(|(a, _)| a == "workload")
                .map_or_else(
                    || "All configurations".to_string(),
                    |(_, v)| format!("workload = {v}"),
                ),
        };
        let contexts = shape.combos_among(&context_axes, in_workload);
        // (axes, their levels, level compared) → the two estimates of a metric; a metric
        // setting that cannot change the metric is read at its first level (τ changes no wait).
        let pair = |axes: &[usize], ctx: &[Level], level: &Level, m: &Metric| {
            let blind = metric::blind_axes(shape, &[m.column]);
            let find = |l: &Level| {
                grid.configs.iter().find(|c| {
                    in_workload(&c.levels)
                        && metric::at_first_levels(shape, &blind, &c.levels)
                        && &c.levels[ci] == l
                        && axes.iter().zip(ctx).all(|(&i, v)| &c.levels[i] == v)
                })
            };
            Some((
                find(reference)?.estimate(m.column, m.scale)?,
                find(level)?.estimate(m.column, m.scale)?,
            ))
        };
        // A metric's own settings: the context axes that can change it.
        let scope_of = |m: &Metric| -> Vec<usize> {
            context_axes
                .iter()
                .copied()
                .filter(|&i| metric::can_change(&shape.axes[i].name, m.column))
                .collect()
        };
        // A metric's settings in this workload: its own axes, the axes blind to it (held at
        // their first level) and the combinations of its axes' levels.
        let settings_of = |m: &Metric| {
            let axes = scope_of(m);
            let blind = metric::blind_axes(shape, &[m.column]);
            let contexts = shape.combos_among(&axes, |c| {
                in_workload(c) && metric::at_first_levels(shape, &blind, c)
            });
            (axes, blind, contexts)
        };
        let mut sentences = Vec::new();
        if axis.levels.len() > 2 && (axis.levels.len() - 1) * contexts.len() > MAX_PAIRS {
            // Three settings or more: a clause per pair and setting would be a wall (issue 35);
            // each metric's lowest and highest setting and the spread between them instead.
            // Where the pairs' effects change sign or size, the interactions say so.
            let lead_axes = metrics.first().map(|m| scope_of(m)).unwrap_or_default();
            let parts: Vec<String> = metrics
                .iter()
                .filter_map(|m| {
                    let (axes, blind, contexts) = settings_of(m);
                    let table: Vec<Vec<Estimate>> = contexts
                        .iter()
                        .filter_map(|ctx| {
                            axis.levels
                                .iter()
                                .map(|l| {
                                    grid.configs
                                        .iter()
                                        .find(|c| {
                                            in_workload(&c.levels)
                                                && metric::at_first_levels(shape, &blind, &c.levels)
                                                && &c.levels[ci] == l
                                                && axes
                                                    .iter()
                                                    .zip(ctx)
                                                    .all(|(&i, v)| &c.levels[i] == v)
                                        })?
                                        .estimate(m.column, m.scale)
                                })
                                .collect::<Option<Vec<Estimate>>>()
                        })
                        .collect();
                    let scope = (axes != lead_axes && !axes.is_empty()).then(|| {
                        let names: Vec<String> =
                            axes.iter().map(|&i| shape.axes[i].short()).collect();
                        format!(
                            "over the {} settings of {}",
                            text::whole(table.len()),
                            text::list(&names)
                        )
                    });
                    ranking(m, axis, &table, scope.as_deref())
                })
                .collect();
            if !parts.is_empty() {
                let names: Vec<String> = lead_axes.iter().map(|&i| shape.axes[i].short()).collect();
                let settings = shape.combos_among(&lead_axes, in_workload).len();
                let over = if settings > 1 {
                    format!(
                        ", over the {} settings of {}",
                        text::whole(settings),
                        text::list(&names)
                    )
                } else {
                    String::new()
                };
                sentences.push(format!(
                    "Of the {} settings of {}{over}: {}.",
                    text::whole(axis.levels.len()),
                    axis.short(),
                    parts.join("; ")
                ));
            }
        } else if contexts.len() <= MAX_CLAUSES {
            for ctx in &contexts {
                let clauses: Vec<String> = axis.levels[1..]
                    .iter()
                    .filter_map(|level| {
                        // A metric a setting here cannot change was stated at its first level.
                        let phrases: Vec<String> = metrics
                            .iter()
                            .filter(|m| {
                                context_axes.iter().zip(ctx).all(|(&i, l)| {
                                    metric::can_change(&shape.axes[i].name, m.column)
                                        || shape.axes[i].levels.first() == Some(l)
                                })
                            })
                            .filter_map(|m| {
                                let (a, b) = pair(&context_axes, ctx, level, m)?;
                                Some(compare_phrase(m, &a, &b))
                            })
                            .collect();
                        (!phrases.is_empty()).then(|| {
                            format!(
                                "{} vs {}: {}",
                                axis.named(level),
                                axis.value(reference),
                                text::list(&phrases)
                            )
                        })
                    })
                    .collect();
                if clauses.is_empty() {
                    continue;
                }
                let lead = format!("{}.", clauses.join("; "));
                sentences.push(if context_axes.is_empty() {
                    capitalize(&lead)
                } else {
                    format!("At {}: {lead}", describe(shape, &context_axes, ctx))
                });
            }
        } else {
            // Each metric is counted over its own settings: a metric setting (τ) multiplies
            // the settings of the metrics it changes only.
            let names = |axes: &[usize]| {
                let names: Vec<String> = axes.iter().map(|&i| shape.axes[i].short()).collect();
                text::list(&names)
            };
            let lead_axes = metrics.first().map(|m| scope_of(m)).unwrap_or_default();
            for level in &axis.levels[1..] {
                let mut lead_count = None;
                let parts: Vec<String> = metrics
                    .iter()
                    .filter_map(|m| {
                        let (axes, _, contexts) = settings_of(m);
                        let pairs: Vec<(Estimate, Estimate)> = contexts
                            .iter()
                            .filter_map(|c| pair(&axes, c, level, m))
                            .collect();
                        let scope = if axes == lead_axes {
                            lead_count.get_or_insert(contexts.len());
                            None
                        } else {
                            let settings: Vec<usize> = axes
                                .iter()
                                .copied()
                                .filter(|i| !lead_axes.contains(i))
                                .collect();
                            Some(format!(
                                "over the {} settings of {} ({} a metric setting)",
                                text::whole(contexts.len()),
                                names(&axes),
                                if settings.len() == 1 {
                                    format!("{} is", names(&settings))
                                } else {
                                    format!("{} are", names(&settings))
                                }
                            ))
                        };
                        summary_phrase(m, &pairs, scope.as_deref())
                    })
                    .collect();
                if parts.is_empty() {
                    continue;
                }
                let lead = match lead_count {
                    Some(n) if !lead_axes.is_empty() => {
                        format!(
                            "Across the {} settings of {}, ",
                            text::whole(n),
                            names(&lead_axes)
                        )
                    }
                    _ => String::new(),
                };
                sentences.push(capitalize(&format!(
                    "{lead}{} vs {} — {}.",
                    axis.named(level),
                    axis.value(reference),
                    parts.join("; ")
                )));
            }
        }
        if !sentences.is_empty() {
            out.push(Finding {
                title,
                text: sentences.join(" "),
            });
        }
    }
    out
}

/// One metric over the levels of `axis`: `table` holds, per setting of the other axes, the
/// estimate at each level (in the axis's order). The lowest and the highest level — each
/// level's values taken relative to the mean of its setting's, the median over the settings —
/// and how much higher the highest is than the lowest: "mean wait lowest at scheduler = b
/// (119 min), highest at c (137 min, +15.1 %)"; over several settings, the median and range
/// of that difference. `None` without a complete setting.
fn ranking(
    m: &Metric,
    axis: &crate::report::shape::Axis,
    table: &[Vec<Estimate>],
    scope: Option<&str>,
) -> Option<String> {
    let name = match scope {
        Some(s) => format!("{} {s}", m.name),
        None => m.name.to_string(),
    };
    let first = table.first()?;
    let n = first.len();
    let mut score = Vec::with_capacity(n);
    for li in 0..n {
        let mut rel: Vec<f64> = table
            .iter()
            .filter_map(|row| {
                let mean = row.iter().map(|e| e.mean).sum::<f64>() / n as f64;
                (mean != 0.0).then(|| row[li].mean / mean)
            })
            .collect();
        score.push(if rel.is_empty() {
            0.0
        } else {
            median(&mut rel)
        });
    }
    // The first level of the lowest (highest) score: ties keep the axis's order.
    let lo = (0..n).fold(0, |b, i| if score[i] < score[b] { i } else { b });
    let hi = (0..n).fold(0, |b, i| if score[i] > score[b] { i } else { b });
    let shown_alike = table
        .iter()
        .all(|row| row.iter().all(|e| number(e.mean) == number(row[0].mean)));
    if lo == hi || shown_alike {
        return Some(if table.len() == 1 {
            format!(
                "{name} {} at every {} (to the precision shown)",
                value(m, &first[0]),
                axis.short()
            )
        } else {
            format!(
                "{name} the same at every {} in each setting (to the precision shown)",
                axis.short()
            )
        });
    }
    let (low, high) = (&axis.levels[lo], &axis.levels[hi]);
    let tested: Vec<(f64, f64)> = table
        .iter()
        .filter_map(|row| difference_interval(&row[lo], &row[hi]))
        .collect();
    let beyond = tested.iter().filter(|(a, b)| *a > 0.0 || *b < 0.0).count();
    let beyond_noise = if tested.is_empty() {
        String::new()
    } else {
        format!(
            "; {} of {} beyond replicate noise",
            text::whole(beyond),
            text::whole(tested.len())
        )
    };
    if let [row] = table {
        return Some(format!(
            "{name} lowest at {} ({}), highest at {} ({}, {}{beyond_noise})",
            axis.named(low),
            value(m, &row[lo]),
            axis.value(high),
            value(m, &row[hi]),
            text::change(row[lo].mean, row[hi].mean),
        ));
    }
    let mut rel: Vec<f64> = table
        .iter()
        .filter(|row| row[lo].mean != 0.0)
        .map(|row| row[hi].mean / row[lo].mean - 1.0)
        .collect();
    if rel.is_empty() {
        return None;
    }
    let (min, max) = (
        rel.iter().copied().fold(f64::INFINITY, f64::min),
        rel.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let by = if relative(min) == relative(max) {
        format!("{} in each setting", relative(min))
    } else {
        format!(
            "{} in the median setting, from {} to {}",
            relative(median(&mut rel)),
            relative(min),
            relative(max)
        )
    };
    Some(format!(
        "{name} lowest at {}, highest at {} ({by}{beyond_noise})",
        axis.named(low),
        axis.value(high),
    ))
}

/// "mean wait: lower in 8 and higher in 18 of 26 (median +3.1 %, from −12.0 % to ×2.4; 5 of
/// 26 beyond replicate noise)"; with a `scope` ("over the 6 settings of …"), it follows the
/// metric's name.
fn summary_phrase(
    m: &Metric,
    pairs: &[(Estimate, Estimate)],
    scope: Option<&str>,
) -> Option<String> {
    let name = match scope {
        Some(s) => format!("{} {s}", m.name),
        None => m.name.to_string(),
    };
    if pairs.is_empty() {
        return None;
    }
    let mut rel: Vec<f64> = pairs
        .iter()
        .filter(|(a, _)| a.mean != 0.0)
        .map(|(a, b)| b.mean / a.mean - 1.0)
        .collect();
    let lower = pairs.iter().filter(|(a, b)| b.mean < a.mean).count();
    let higher = pairs.iter().filter(|(a, b)| b.mean > a.mean).count();
    let beyond = pairs
        .iter()
        .filter_map(|(a, b)| difference_interval(a, b))
        .filter(|(lo, hi)| *lo > 0.0 || *hi < 0.0)
        .count();
    let tested = pairs
        .iter()
        .filter(|(a, b)| difference_interval(a, b).is_some())
        .count();
    if lower == 0 && higher == 0 {
        return Some(format!(
            "{name}: the same in all {}",
            text::whole(pairs.len())
        ));
    }
    let mut s = format!(
        "{name}: lower in {} and higher in {} of {}",
        text::whole(lower),
        text::whole(higher),
        text::whole(pairs.len())
    );
    if !rel.is_empty() {
        let (lo, hi) = (
            rel.iter().copied().fold(f64::INFINITY, f64::min),
            rel.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        s.push_str(&format!(
            " (median {}, from {} to {}",
            relative(median(&mut rel)),
            relative(lo),
            relative(hi)
        ));
        if tested > 0 {
            s.push_str(&format!(
                "; {} of {} beyond replicate noise",
                text::whole(beyond),
                text::whole(tested)
            ));
        }
        s.push(')');
    }
    Some(s)
}

fn trend(grid: &Grid<'_>, xi: usize, metrics: &[&Metric]) -> Option<Finding> {
    let shape = &grid.shape;
    let x = &shape.axes[xi];
    let mut sentences = Vec::new();
    // Metrics summarised over many series: (series, phrase), stated together after the loop.
    let mut summaries: Vec<(usize, String)> = Vec::new();
    // A metric setting is followed only in the metrics it changes, and the series of each
    // metric are the settings of the axes that can change it.
    for m in metrics
        .iter()
        .filter(|m| metric::can_change(&x.name, m.column))
    {
        let held = metric::blind_axes(shape, &[m.column]);
        let present =
            |c: &[Level]| c[xi].number().is_some() && metric::at_first_levels(shape, &held, c);
        let others: Vec<usize> = (0..shape.axes.len())
            .filter(|&i| i != xi && !held.contains(&i) && shape.levels_among(i, present).len() > 1)
            .collect();
        let series = shape.combos_among(&others, present);
        // Per series: (description, points sorted by x).
        let lines: Vec<(String, Vec<(f64, Estimate)>)> = series
            .iter()
            .map(|s| {
                let mut pts: Vec<(f64, Estimate)> = grid
                    .configs
                    .iter()
                    .filter(|c| {
                        present(&c.levels) && others.iter().zip(s).all(|(&i, l)| &c.levels[i] == l)
                    })
                    .filter_map(|c| Some((c.levels[xi].number()?, c.estimate(m.column, m.scale)?)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (describe(shape, &others, s), pts)
            })
            .filter(|(_, p)| p.len() >= 2)
            .collect();
        if lines.is_empty() {
            continue;
        }
        if lines.len() <= MAX_CLAUSES {
            let clauses: Vec<String> = lines
                .iter()
                .map(|(desc, pts)| {
                    let (first, last) = (&pts[0], &pts[pts.len() - 1]);
                    let lead = if desc.is_empty() {
                        String::new()
                    } else {
                        format!("with {desc}, ")
                    };
                    // The axis is named with the first value only: "from 9.60 h at load scale
                    // 0.8 to 677 h at 1.2".
                    format!(
                        "{lead}from {} at {} to {} at {} ({}, {}{})",
                        value(m, &first.1),
                        x.describe(&Level::Number(first.0)),
                        value(m, &last.1),
                        x.value(&Level::Number(last.0)),
                        text::change(first.1.mean, last.1.mean),
                        shape_of(x, pts),
                        noise(m, &first.1, &last.1)
                    )
                })
                .collect();
            sentences.push(format!(
                "{} against {}: {}.",
                m.title(),
                x.short(),
                clauses.join("; ")
            ));
        } else {
            let pairs: Vec<(Estimate, Estimate)> = lines
                .iter()
                .map(|(_, p)| (p[0].1, p[p.len() - 1].1))
                .collect();
            if let Some(s) = summary_phrase(m, &pairs, None) {
                summaries.push((lines.len(), s));
            }
        }
    }
    // One sentence per count of series (metric settings can give a metric fewer), listing the
    // metrics in it, rather than the same lead once per metric (issue 35).
    let mut counts: Vec<usize> = summaries.iter().map(|(n, _)| *n).collect();
    counts.sort_unstable();
    counts.dedup();
    for n in counts {
        let parts: Vec<&str> = summaries
            .iter()
            .filter(|(k, _)| *k == n)
            .map(|(_, s)| s.as_str())
            .collect();
        sentences.push(format!(
            "From the lowest to the highest {} in each of the {} series — {}.",
            x.short(),
            text::whole(n),
            parts.join("; ")
        ));
    }
    (!sentences.is_empty()).then(|| Finding {
        title: capitalize(&x.short()),
        text: sentences.join(" "),
    })
}

/// "rising throughout", "falling throughout", or where a non-monotone series peaks.
fn shape_of(x: &crate::report::shape::Axis, pts: &[(f64, Estimate)]) -> String {
    let steps: Vec<f64> = pts.windows(2).map(|w| w[1].1.mean - w[0].1.mean).collect();
    let through = if pts.len() > 2 { " throughout" } else { "" };
    if steps.iter().all(|d| *d >= 0.0) {
        format!("rising{through}")
    } else if steps.iter().all(|d| *d <= 0.0) {
        format!("falling{through}")
    } else {
        let (top, _) =
            pts.iter()
                .map(|p| (p.0, p.1.mean))
                .fold((f64::NAN, f64::NEG_INFINITY), |acc, p| {
                    if p.1 > acc.1 { p } else { acc }
                });
        let (bottom, _) =
            pts.iter()
                .map(|p| (p.0, p.1.mean))
                .fold(
                    (f64::NAN, f64::INFINITY),
                    |acc, p| if p.1 < acc.1 { p } else { acc },
                );
        format!(
            "not monotone: highest at {}, lowest at {}",
            x.describe(&Level::Number(top)),
            x.value(&Level::Number(bottom))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(mean: f64) -> Estimate {
        Estimate::of(&[mean]).unwrap()
    }

    #[test]
    fn a_change_hidden_by_rounding_is_not_stated_as_a_change() {
        let utilization = metric::by_column("utilization").unwrap();
        // 0.71904 and 0.71898 both show as 0.719: no "lowers … from 0.719 to 0.719".
        let phrase = compare_phrase(utilization, &one(0.71904), &one(0.71898));
        assert!(
            phrase.starts_with("leaves utilization at 0.719"),
            "{phrase}"
        );
        assert!(phrase.contains("precision shown"), "{phrase}");
        // A change that shows is stated with its direction.
        let phrase = compare_phrase(utilization, &one(0.719), &one(0.6));
        assert!(
            phrase.starts_with("lowers utilization from 0.719 to 0.6"),
            "{phrase}"
        );
    }
}
