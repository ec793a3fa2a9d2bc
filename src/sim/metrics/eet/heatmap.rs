//! Heatmap data (Tóth & Klusáček, section 3.3 "EET Heatmaps" and Fig. 4): users × time, the
//! number of violated EETs, and the system's CPU and memory usage on the same time axis.
//!
//! A violated job j is plotted for T_j seconds from its latest feasible start
//! x_j = EET_j − runtime_j — the paper increments T_j consecutive one-minute cells from x — so
//! over `[x_j, x_j + T_j)`, which is `[EET_j − runtime_j, start_j)`: the time it waited beyond
//! what its EET allowed. With bins of width B, a cell holds the time-weighted mean number of
//! such intervals over the bin, Σ_j |[x_j, x_j + T_j) ∩ bin| / B (at B = 60 s and whole
//! minutes, exactly the paper's counts), and the largest number at any instant of the bin.
//! Summed over a row and multiplied by B, the cells give the user's total tardiness Σ T_j.
//!
//! Users are ordered by total tardiness (largest first, ties by user id), so the users the
//! schedule treated worst are at the top. Every user with a job has a row, empty or not.

use std::collections::BTreeMap;

use serde::Serialize;

use super::evaluate::EetReport;
use super::job::EetJob;
use super::resource::Resource;
use crate::sim::job::Time;

/// Bin widths [`bin_width_for`] chooses from: one minute (the paper's) up to one week.
pub const BIN_LADDER: [Time; 13] = [
    60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800,
];
/// The most bins an automatically chosen width gives (about one per pixel of a wide chart).
pub const AUTO_BINS: i64 = 1500;
/// The most bins any heatmap may have (bounded memory whatever the span and width).
pub const MAX_BINS: i64 = 200_000;
/// The most non-empty cells a heatmap may hold (about 0.5 GB), whatever the users and bins.
pub const MAX_CELLS: usize = 20_000_000;

/// The smallest width of [`BIN_LADDER`] that covers `span` seconds in at most [`AUTO_BINS`]
/// bins; beyond the ladder, whole weeks. Five months give three-hour bins (1,200 of them).
pub fn bin_width_for(span: Time) -> Time {
    let span = span.max(1);
    BIN_LADDER
        .iter()
        .copied()
        .find(|w| ceil_div(span, *w) <= AUTO_BINS)
        .unwrap_or_else(|| ceil_div(ceil_div(span, AUTO_BINS), 604_800) * 604_800)
}

/// ⌈a / b⌉ for a ≥ 0, b > 0.
fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// The time axis: `bins` bins of `width` seconds from `start` (a multiple of the width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Axis {
    pub start: Time,
    pub width: Time,
    pub bins: usize,
}

/// Why no heatmap: a width that is not positive, or too many bins.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AxisError {
    #[error("bin width must be at least 1 s, got {0}")]
    Width(Time),
    #[error("{bins} bins of {width} s over {span} s: at most {MAX_BINS} are allowed")]
    TooManyBins { bins: i64, width: Time, span: Time },
    #[error("more than {MAX_CELLS} non-empty heatmap cells with bins of {width} s")]
    TooManyCells { width: Time },
}

impl Axis {
    /// Bins of `width` covering `[from, to]`, starting at `from` rounded down to a multiple
    /// of the width; at least one bin.
    pub fn covering(from: Time, to: Time, width: Time) -> Result<Axis, AxisError> {
        if width < 1 {
            return Err(AxisError::Width(width));
        }
        let start = from.div_euclid(width) * width;
        let span = to.max(from).saturating_sub(start);
        let bins = ceil_div(span, width).max(1);
        if bins > MAX_BINS {
            return Err(AxisError::TooManyBins { bins, width, span });
        }
        Ok(Axis {
            start,
            width,
            bins: bins as usize,
        })
    }

    /// The start of bin `b`.
    pub fn time(&self, b: usize) -> Time {
        self.start
            .saturating_add((b as Time).saturating_mul(self.width))
    }
}

/// One non-empty cell of a user's row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cell {
    pub bin: u32,
    /// Time-weighted mean number of violated EETs over the bin.
    pub mean: f64,
    /// The largest number at any instant of the bin.
    pub max: u64,
}

/// One user's row: its cells in bin order (empty bins left out).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub user: i32,
    /// Σ T_j, seconds: what the rows are ordered by.
    pub tardiness: i64,
    pub violated: u64,
    pub cells: Vec<Cell>,
}

/// The system's use of one bin: time-weighted mean amounts held by running jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Usage {
    /// CPUs.
    pub cpu: f64,
    /// Memory, KB.
    pub memory: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    pub axis: Axis,
    /// Users by total tardiness, largest first.
    pub rows: Vec<Row>,
    /// One per bin.
    pub usage: Vec<Usage>,
}

/// The heatmap of `report` (computed from `jobs`), over bins of `width` seconds (`None`:
/// [`bin_width_for`] the span from the first submit to the last completion).
pub fn heatmap(
    jobs: &[EetJob],
    report: &EetReport,
    width: Option<Time>,
) -> Result<Heatmap, AxisError> {
    let from = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let to = jobs
        .iter()
        .map(|j| j.completion().unwrap_or(j.submit))
        .max()
        .unwrap_or(from);
    let width = width.unwrap_or_else(|| bin_width_for(to - from));
    let axis = Axis::covering(from, to, width)?;

    let mut intervals: BTreeMap<i32, Vec<(Time, i128)>> = BTreeMap::new();
    for (job, r) in jobs.iter().zip(&report.jobs) {
        if let (Some(true), Some(t)) = (r.violated, r.tardiness) {
            let events = intervals.entry(job.user).or_default();
            events.push((r.latest_start, 1));
            events.push((r.latest_start.saturating_add(t), -1));
        }
    }
    let mut rows: Vec<Row> = Vec::with_capacity(report.users.len());
    let mut cells_so_far = 0;
    for u in &report.users {
        let cells: Vec<Cell> = intervals
            .get_mut(&u.user)
            .map(|events| {
                binned(events, &axis)
                    .into_iter()
                    .map(|(bin, integral, max)| Cell {
                        bin,
                        mean: integral / axis.width as f64,
                        max: max as u64,
                    })
                    .collect()
            })
            .unwrap_or_default();
        cells_so_far += cells.len();
        if cells_so_far > MAX_CELLS {
            return Err(AxisError::TooManyCells { width: axis.width });
        }
        rows.push(Row {
            user: u.user,
            tardiness: u.tardiness,
            violated: u.violated,
            cells,
        });
    }
    rows.sort_by(|a, b| b.tardiness.cmp(&a.tardiness).then(a.user.cmp(&b.user)));

    let mut usage = vec![Usage::default(); axis.bins];
    for (resource, slot) in [(Resource::Cpu, 0), (Resource::Memory, 1)] {
        let mut events: Vec<(Time, i128)> = Vec::with_capacity(jobs.len() * 2);
        for job in jobs {
            let (Some(start), Some(end)) = (job.start, job.completion()) else {
                continue;
            };
            let amount = i128::from(job.request[resource]);
            if amount > 0 && end > start {
                events.push((start, amount));
                events.push((end, -amount));
            }
        }
        for (bin, integral, _) in binned(&mut events, &axis) {
            let mean = integral / axis.width as f64;
            let u = &mut usage[bin as usize];
            if slot == 0 {
                u.cpu = mean;
            } else {
                u.memory = mean;
            }
        }
    }
    Ok(Heatmap { axis, rows, usage })
}

/// The level Σ deltas of `events` (time, change) as a step function, integrated over each bin
/// of `axis`: `(bin, ∫ level dt, max level)` for every bin where the level is ever positive,
/// in bin order. `events` are sorted in place. O(events log events + bins touched).
pub(super) fn binned(events: &mut [(Time, i128)], axis: &Axis) -> Vec<(u32, f64, i128)> {
    // Changes at one time are summed before use, so their order does not matter.
    events.sort_unstable_by_key(|e| e.0);
    let end_of_axis = axis.time(axis.bins);
    let mut out: Vec<(u32, f64, i128)> = Vec::new();
    let mut level: i128 = 0;
    let mut i = 0;
    while i < events.len() {
        let t = events[i].0;
        while i < events.len() && events[i].0 == t {
            level += events[i].1;
            i += 1;
        }
        let next = events.get(i).map_or(t, |e| e.0);
        // The level holds on [t, next).
        let (from, to) = (t.max(axis.start), next.min(end_of_axis));
        if level <= 0 || from >= to {
            continue;
        }
        let mut b = ((from - axis.start) / axis.width) as usize;
        let mut s = from;
        while s < to {
            let bin_end = axis.time(b + 1).min(to);
            let seconds = (bin_end - s) as f64;
            match out.last_mut() {
                Some(last) if last.0 as usize == b => {
                    last.1 += level as f64 * seconds;
                    last.2 = last.2.max(level);
                }
                _ => out.push((b as u32, level as f64 * seconds, level)),
            }
            s = bin_end;
            b += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_width_follows_the_span() {
        assert_eq!(bin_width_for(0), 60);
        assert_eq!(bin_width_for(1500 * 60), 60);
        assert_eq!(bin_width_for(1500 * 60 + 1), 300);
        // Five months of 30 days: 3,600 hours → three-hour bins, 1,200 of them.
        assert_eq!(bin_width_for(150 * 86_400), 10_800);
        assert_eq!(bin_width_for(89 * 86_400), 7200);
        // Thirty years: whole weeks.
        assert_eq!(bin_width_for(30 * 365 * 86_400) % 604_800, 0);
        assert!(Axis::covering(0, 1 << 40, 60).is_err());
        assert!(Axis::covering(0, 10, 0).is_err());
        let huge = Axis::covering(5, 10, i64::MAX).unwrap();
        assert_eq!((huge.start, huge.bins, huge.time(1)), (0, 1, i64::MAX));
        let a = Axis::covering(130, 250, 60).unwrap();
        assert_eq!((a.start, a.bins), (120, 3));
    }

    #[test]
    fn a_level_integrated_over_bins_by_hand() {
        // Bins of 60 s from 0. One interval [30, 150) and one [60, 90): level 1 on [30, 60),
        // 2 on [60, 90), 1 on [90, 150).
        let axis = Axis::covering(0, 200, 60).unwrap();
        let mut events = vec![(30, 1), (150, -1), (60, 1), (90, -1)];
        let got = binned(&mut events, &axis);
        assert_eq!(
            got,
            vec![(0, 30.0, 1), (1, 2.0 * 30.0 + 30.0, 2), (2, 30.0, 1)]
        );
    }
}
