//! Where the schedule picture's window goes when the manifest does not say: a quarter into the
//! cell's measurement window, unless the cell is idle or nearly so there (a trace's outage, such
//! as LPC-EGEE's four idle days in November 2004, and the trickle of jobs after it), in which
//! case the window moves on to the first job start from which it shows a typical load.

use super::gantt::GanttJob;

/// Why the default window moved: the load it would have shown, the load shown instead and the
/// cell's mean load over its measurement window (busy units on average), and the idle span when
/// no job ran at the default start (trace seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moved {
    pub from: f64,
    pub default_load: f64,
    pub load: f64,
    pub mean_load: f64,
    pub idle: Option<(f64, f64)>,
}

/// The busy units over time of a set of jobs, integrated: `integral(a, b)` is the unit-seconds
/// the jobs hold within `[a, b]`, in O(log n).
struct BusyIntegral {
    /// (time, unit-seconds before it, busy units from it on), by time.
    steps: Vec<(f64, f64, f64)>,
}

impl BusyIntegral {
    fn new(jobs: &[GanttJob]) -> Self {
        let mut events: Vec<(f64, f64)> = jobs
            .iter()
            .filter(|j| j.end > j.start)
            .flat_map(|j| [(j.start, j.units as f64), (j.end, -(j.units as f64))])
            .collect();
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut steps: Vec<(f64, f64, f64)> = Vec::with_capacity(events.len());
        let (mut area, mut level, mut last) = (0.0, 0.0, f64::NEG_INFINITY);
        for (t, delta) in events {
            if last.is_finite() {
                area += level * (t - last);
            }
            level += delta;
            last = t;
            match steps.last_mut() {
                Some(s) if s.0 == t => s.2 = level,
                _ => steps.push((t, area, level)),
            }
        }
        BusyIntegral { steps }
    }

    /// Unit-seconds held up to `x`.
    fn upto(&self, x: f64) -> f64 {
        let i = self.steps.partition_point(|s| s.0 <= x);
        match i.checked_sub(1).map(|i| self.steps[i]) {
            Some((t, area, level)) => area + level * (x - t),
            None => 0.0,
        }
    }

    /// Busy units on average over `[a, b]`.
    fn mean(&self, a: f64, b: f64) -> f64 {
        if b > a {
            (self.upto(b) - self.upto(a)) / (b - a)
        } else {
            0.0
        }
    }
}

/// The Gantt window of `seconds`: from `start` when the manifest sets it (kept as it is), else
/// from `quarter` (a quarter into the measurement window `measured`) — unless no job runs there
/// or the load there is under a quarter of the cell's mean load over `measured`, in which case
/// the window starts at the first job start after `quarter` from which it holds half that mean, so the default picture shows a
/// schedule rather than an empty or near-empty frame. When no later window gets there, a window
/// without any job moves to the next job start, and one with jobs stays. Returns the window and,
/// when moved, why.
pub fn choose(
    jobs: &[GanttJob],
    start: Option<i64>,
    measured: (f64, f64),
    seconds: f64,
) -> ((f64, f64), Option<Moved>) {
    let quarter = (measured.0 + (measured.1 - measured.0) / 4.0).floor();
    if let Some(s) = start {
        return ((s as f64, s as f64 + seconds), None);
    }
    let busy = BusyIntegral::new(jobs);
    let mean_load = busy.mean(measured.0, measured.1);
    let default_load = busy.mean(quarter, quarter + seconds);
    let overlaps = |a: f64| jobs.iter().any(|j| j.end > a && j.start < a + seconds);
    let idle = (!overlaps(quarter)).then(|| {
        // The idle span: from the last job end before the quarter point to the next start.
        let from = jobs
            .iter()
            .map(|j| j.end)
            .filter(|&t| t <= quarter)
            .fold(f64::NEG_INFINITY, f64::max);
        let to = jobs
            .iter()
            .map(|j| j.start)
            .filter(|&t| t >= quarter)
            .fold(f64::INFINITY, f64::min);
        (if from.is_finite() { from } else { quarter }, to)
    });
    // Nearly idle: under a quarter of the mean load; the new window needs half of it, so a
    // window that moved is clearly busier than one that stayed.
    let enough = mean_load / 2.0;
    if default_load >= mean_load / 4.0 && idle.is_none() {
        return ((quarter, quarter + seconds), None);
    }
    let mut starts: Vec<f64> = jobs
        .iter()
        .map(|j| j.start.floor())
        .filter(|&t| t > quarter)
        .collect();
    starts.sort_by(f64::total_cmp);
    starts.dedup();
    let moved_to = |s: f64, load: f64| {
        let idle = idle.filter(|(_, to)| to.is_finite());
        let moved = Moved {
            from: quarter,
            default_load,
            load,
            mean_load,
            idle,
        };
        ((s, s + seconds), Some(moved))
    };
    if let Some(&s) = starts
        .iter()
        .find(|&&s| busy.mean(s, s + seconds) >= enough)
    {
        return moved_to(s, busy.mean(s, s + seconds));
    }
    match (idle, starts.first()) {
        (Some(_), Some(&s)) => moved_to(s, busy.mean(s, s + seconds)),
        _ => ((quarter, quarter + seconds), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(start: f64, end: f64, units: u64) -> GanttJob {
        GanttJob {
            start,
            end,
            units,
            backfilled: false,
        }
    }

    #[test]
    fn the_busy_integral_counts_unit_seconds_within_a_span() {
        // 2 units over [0, 10), 3 more over [5, 20): by hand, [0, 20] holds 20 + 45 = 65.
        let busy = BusyIntegral::new(&[job(0.0, 10.0, 2), job(5.0, 20.0, 3)]);
        assert_eq!(busy.upto(20.0), 65.0);
        assert_eq!(busy.upto(7.0), 14.0 + 6.0);
        assert_eq!(busy.mean(10.0, 20.0), 3.0);
        assert_eq!(busy.upto(-1.0), 0.0);
    }

    #[test]
    fn a_loaded_default_window_stays_a_quarter_in() {
        // Measured [0, 400): the quarter point 100 has the steady load the whole run has.
        let jobs: Vec<_> = (0..40)
            .map(|k| job(10.0 * k as f64, 10.0 * k as f64 + 10.0, 1))
            .collect();
        assert_eq!(
            choose(&jobs, None, (0.0, 400.0), 50.0),
            ((100.0, 150.0), None)
        );
        // A start the manifest gives is kept, loaded or not.
        assert_eq!(
            choose(&jobs, Some(1000), (0.0, 400.0), 50.0),
            ((1000.0, 1050.0), None)
        );
    }

    #[test]
    fn a_default_window_under_a_quarter_of_the_mean_load_moves_and_one_over_it_stays() {
        // Measured [0, 400): `quiet` units over [100, 150), 6 units over the rest. With 1 unit
        // the mean is (600 + 50 + 1500) / 400 = 5.375, a quarter of it 1.34 > 1: the window
        // moves to the next start, 150, where 6 ≥ half the mean. With 2 units the mean is 5.5,
        // a quarter of it 1.375 ≤ 2: the window stays.
        let run = |quiet: u64| {
            let jobs = [
                job(0.0, 100.0, 6),
                job(100.0, 150.0, quiet),
                job(150.0, 400.0, 6),
            ];
            choose(&jobs, None, (0.0, 400.0), 50.0)
        };
        let (window, moved) = run(1);
        assert_eq!(window, (150.0, 200.0));
        let moved = moved.expect("moved");
        assert_eq!(
            (moved.default_load, moved.load, moved.idle),
            (1.0, 6.0, None)
        );
        assert_eq!(run(2), ((100.0, 150.0), None));
    }

    #[test]
    fn after_an_outage_the_window_skips_the_trickle_to_a_typical_load() {
        // Busy [0, 100) with 8 units; outage [100, 200); a trickle of 1-unit jobs every 10 s of
        // 1 s each over [200, 300) (load 0.1); busy again with 8 units from 300 to 400.
        // Mean over [0, 400): (800 + 10 + 800) / 400 ≈ 4.0; half of it is 2.0.
        let mut jobs = vec![job(0.0, 100.0, 8)];
        jobs.extend((0..10).map(|k| job(200.0 + 10.0 * k as f64, 201.0 + 10.0 * k as f64, 1)));
        jobs.push(job(300.0, 400.0, 8));
        let (window, moved) = choose(&jobs, None, (0.0, 400.0), 50.0);
        // The next job start (200) would show the trickle (5 / 50 = 0.1). From 260 the window
        // holds 4 trickle seconds + 8 × 10 = 84 / 50 = 1.68 < 2.0125; from 270 it holds
        // 3 + 8 × 20 = 163 / 50 = 3.26: the first start with half the mean load.
        assert_eq!(window, (270.0, 320.0));
        let moved = moved.expect("the window moved");
        assert_eq!(moved.from, 100.0);
        assert_eq!(moved.idle, Some((100.0, 200.0)));
        assert_eq!(moved.default_load, 0.0);
        assert!((moved.mean_load - 1610.0 / 400.0).abs() < 1e-9, "{moved:?}");
        assert!((moved.load - 163.0 / 50.0).abs() < 1e-9, "{moved:?}");
    }

    #[test]
    fn with_no_loaded_window_later_an_empty_default_moves_to_the_next_job() {
        // Busy early, then a single small job after the quarter point: no later window reaches
        // half the mean load, so the window only leaves the empty frame for that job.
        let jobs = vec![job(0.0, 90.0, 8), job(300.0, 301.0, 1)];
        let (window, moved) = choose(&jobs, None, (0.0, 400.0), 50.0);
        assert_eq!(window, (300.0, 350.0));
        assert_eq!(moved.and_then(|m| m.idle), Some((90.0, 300.0)));
    }
}
