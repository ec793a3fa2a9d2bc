//! Box plots of a per-user metric across users, one box per schedule (Tóth & Klusáček, Fig. 6:
//! VEET_u in percent on a linear axis, WT_u in seconds on a logarithmic one). Pure: plain
//! values in, self-contained SVG out.
//!
//! A box spans the lower to the upper quartile with the median across it (nearest-rank
//! quartiles, as `Spread` and docs/metrics.md); whiskers reach the most extreme values within
//! 1.5 × IQR of the box (Tukey), values beyond are dots, and the mean is a small diamond. On
//! a log axis, values below its floor (zeros, typically) are drawn on the floor, labelled
//! `≤ floor`.

use std::fmt::Write;

use super::svg::{escape, label};
use crate::sim::metrics::eet::Spread;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// One box: a name (the schedule) and the values (one per user).
#[derive(Clone, Debug, PartialEq)]
pub struct BoxGroup {
    pub name: String,
    pub values: Vec<f64>,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 380.0;
/// The least room left of the axis; more when a tick label needs it.
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The five numbers of a box and its outliers.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxStats {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub mean: f64,
    pub outliers: Vec<f64>,
}

/// The box of `values`; `None` when there are none (NaNs are left out).
pub fn box_stats(values: &[f64]) -> Option<BoxStats> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    let s = Spread::of(&mut v);
    let (q1, median, q3, mean) = (s.q1?, s.median?, s.q3?, s.mean?);
    let reach = 1.5 * (q3 - q1);
    let inside = |x: &f64| *x >= q1 - reach && *x <= q3 + reach;
    Some(BoxStats {
        q1,
        median,
        q3,
        whisker_low: v.iter().copied().find(inside).unwrap_or(q1),
        whisker_high: v.iter().rev().copied().find(inside).unwrap_or(q3),
        mean,
        outliers: v.iter().copied().filter(|x| !inside(x)).collect(),
    })
}

/// Box plots of `groups` side by side.
pub fn boxplot_svg(title: &str, y_label: &str, groups: &[BoxGroup], scale: Scale) -> String {
    let stats: Vec<Option<BoxStats>> = groups.iter().map(|g| box_stats(&g.values)).collect();
    let all = || {
        groups
            .iter()
            .flat_map(|g| g.values.iter().copied())
            .filter(|x| x.is_finite())
    };
    let max = all().fold(0.0f64, f64::max);
    let (y0, y1, ticks): (f64, f64, Vec<f64>) = match scale {
        Scale::Linear => {
            let top = if max > 0.0 { max } else { 1.0 };
            let ticks = super::svg::ticks(0.0, top);
            (0.0, ticks.last().copied().unwrap_or(top).max(top), ticks)
        }
        Scale::Log => {
            let min_pos = all().filter(|x| *x > 0.0).fold(f64::INFINITY, f64::min);
            let lo = if min_pos.is_finite() {
                10f64.powf(min_pos.log10().floor()).max(1.0)
            } else {
                1.0
            };
            let hi = 10f64.powf(max.max(lo * 10.0).log10().ceil());
            let decades = (hi / lo).log10().round() as i32;
            let every = (decades / 8 + 1).max(1);
            let ticks = (0..=decades)
                .step_by(every as usize)
                .map(|k| lo * 10f64.powi(k))
                .collect();
            (lo.log10(), hi.log10(), ticks)
        }
    };
    let y_of = |v: f64| {
        let t = match scale {
            Scale::Linear => v,
            Scale::Log => v.max(10f64.powf(y0)).log10(),
        };
        HEIGHT - BOTTOM - (t - y0) / (y1 - y0).max(f64::MIN_POSITIVE) * (HEIGHT - TOP - BOTTOM)
    };
    let tick_text: Vec<String> = super::svg::tick_labels(&ticks)
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            if scale == Scale::Log && k == 0 {
                format!("≤ {t}")
            } else {
                t
            }
        })
        .collect();
    // Room for the widest tick label (thousands separated: "1,000,000"), its gap to the axis
    // and the rotated axis title.
    let left = tick_text
        .iter()
        .map(|t| super::svg::text_width(t, 12.0) + 36.0)
        .fold(LEFT, f64::max);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12" role="img"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="{cx}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(title),
        cx = WIDTH / 2.0
    );
    for (t, text) in ticks.iter().zip(&tick_text) {
        let y = y_of(*t);
        let _ = write!(
            out,
            r##"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            left - 6.0,
            y + 4.0,
            escape(text)
        );
    }
    let _ = write!(
        out,
        r#"<g stroke="black" fill="none"><line x1="{left:.1}" y1="{TOP}" x2="{left:.1}" y2="{b}"/><line x1="{left:.1}" y1="{b}" x2="{r}" y2="{b}"/></g><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + (HEIGHT - TOP - BOTTOM) / 2.0,
        escape(y_label),
        b = HEIGHT - BOTTOM,
        r = WIDTH - RIGHT,
    );
    let slot = (WIDTH - left - RIGHT) / groups.len().max(1) as f64;
    for (i, (group, stats)) in groups.iter().zip(&stats).enumerate() {
        let cx = left + slot * (i as f64 + 0.5);
        let half = (slot * 0.3).min(40.0);
        let _ = write!(
            out,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="10">n = {}</text>"#,
            HEIGHT - BOTTOM + 18.0,
            escape(&group.name),
            HEIGHT - BOTTOM + 32.0,
            super::text::whole(group.values.len())
        );
        let Some(s) = stats else { continue };
        let (yq1, yq3, ymed) = (y_of(s.q1), y_of(s.q3), y_of(s.median));
        let _ = write!(
            out,
            r##"<g stroke="black"><line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{yq1:.1}"/><line x1="{cx:.1}" y1="{yq3:.1}" x2="{cx:.1}" y2="{:.1}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><rect x="{:.1}" y="{yq3:.1}" width="{:.1}" height="{:.1}" fill="#9ecae1"/><line x1="{:.1}" y1="{ymed:.1}" x2="{:.1}" y2="{ymed:.1}" stroke-width="2.5"/></g>"##,
            y_of(s.whisker_low),
            y_of(s.whisker_high),
            cx - half / 2.0,
            y_of(s.whisker_low),
            cx + half / 2.0,
            y_of(s.whisker_low),
            cx - half / 2.0,
            y_of(s.whisker_high),
            cx + half / 2.0,
            y_of(s.whisker_high),
            cx - half,
            2.0 * half,
            (yq1 - yq3).max(0.5),
            cx - half,
            cx + half,
        );
        let ym = y_of(s.mean);
        let _ = write!(
            out,
            r#"<path d="M{:.1},{ym:.1}l4,-4l4,4l-4,4z" fill="white" stroke="black"><title>mean {}</title></path>"#,
            cx - 4.0,
            label(s.mean)
        );
        for o in &s.outliers {
            let _ = write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{:.1}" r="2.5" fill="none" stroke="black"/>"#,
                y_of(*o)
            );
        }
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tukey_boxes_by_hand() {
        // 1..=8 and 100: nearest-rank quartiles of nine values are ranks 3, 5 and 7 → 3, 5, 7;
        // IQR 4, whiskers within [−3, 13]: 1 and 8; 100 is an outlier.
        let mut v: Vec<f64> = (1..=8).map(f64::from).collect();
        v.push(100.0);
        let s = box_stats(&v).unwrap();
        assert_eq!((s.q1, s.median, s.q3), (3.0, 5.0, 7.0));
        assert_eq!((s.whisker_low, s.whisker_high), (1.0, 8.0));
        assert_eq!(s.outliers, vec![100.0]);
        assert_eq!(s.mean, 136.0 / 9.0);
        assert_eq!(box_stats(&[]), None);
    }

    #[test]
    fn linear_and_log_plots_are_wellformed() {
        let groups = vec![
            BoxGroup {
                name: "fifo".into(),
                values: vec![0.0, 10.0, 35.0, 100.0],
            },
            BoxGroup {
                name: "easy & co".into(),
                values: vec![],
            },
        ];
        for scale in [Scale::Linear, Scale::Log] {
            let svg = boxplot_svg("VEET_u", "%", &groups, scale);
            let doc = roxmltree::Document::parse(&svg).unwrap();
            // One box drawn (the empty group has only its label).
            assert_eq!(
                doc.descendants()
                    .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#9ecae1"))
                    .count(),
                1
            );
            assert!(svg.contains("easy &amp; co"));
        }
        let log = boxplot_svg("WT_u", "CPU·s", &groups, Scale::Log);
        assert!(log.contains("≤ 1"));
    }

    /// Tardiness in CPU-seconds spans decades: the log axis's ticks from 1,000 up are
    /// thousands separated as the report's text writes numbers, and so is a group's count;
    /// the margin grows to hold the widest label.
    #[test]
    fn log_ticks_and_counts_separate_thousands() {
        let groups = vec![BoxGroup {
            name: "easy".into(),
            values: (1..=1500).map(|i| f64::from(i) * 2000.0).collect(),
        }];
        let svg = boxplot_svg("WT_u", "CPU·s", &groups, Scale::Log);
        let texts = crate::report::svg::reading::texts(&svg);
        for tick in ["≤ 1,000", "10,000", "100,000", "1,000,000", "10,000,000"] {
            assert!(texts.iter().any(|t| t == tick), "{tick} in {texts:?}");
        }
        assert!(texts.iter().any(|t| t == "n = 1,500"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.contains("1000")), "{texts:?}");
        // "10,000,000" ends 6 px left of the axis and starts right of the rotated title.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let tick = doc
            .descendants()
            .find(|n| n.text() == Some("10,000,000"))
            .unwrap();
        let x: f64 = tick.attribute("x").unwrap().parse().unwrap();
        assert!(
            x - crate::report::svg::text_width("10,000,000", 12.0) > 24.0,
            "{x}"
        );
    }
}
