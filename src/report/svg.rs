//! Minimal SVG charts written by hand: deterministic bytes, no fonts or scripts to load, readable
//! in print (black axes, labelled units, distinct dash patterns as well as colours).

use std::fmt::Write;

pub const WIDTH: f64 = 720.0;
pub const HEIGHT: f64 = 360.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 215.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 56.0;

/// Colour and dash pattern of series `i`.
pub fn style(i: usize) -> (&'static str, &'static str) {
    const COLORS: [&str; 8] = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    ];
    const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];
    (
        COLORS[i % COLORS.len()],
        DASHES[(i / COLORS.len() + i) % DASHES.len()],
    )
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Also catches NaN bounds.
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

pub fn label(v: f64) -> String {
    let trim = |t: String| t.trim_end_matches('0').trim_end_matches('.').to_string();
    let a = v.abs();
    if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        trim(format!("{v:.3}"))
    }
}

/// A plot area with axes, in data coordinates [x0, x1] × [y0, y1].
pub struct Frame {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Frame {
    pub fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0).max(f64::MIN_POSITIVE) * (WIDTH - LEFT - RIGHT)
    }

    pub fn y(&self, v: f64) -> f64 {
        HEIGHT
            - BOTTOM
            - (v - self.y0) / (self.y1 - self.y0).max(f64::MIN_POSITIVE) * (HEIGHT - TOP - BOTTOM)
    }

    pub fn plot_width(&self) -> f64 {
        WIDTH - LEFT - RIGHT
    }
}

/// Opens an SVG with a title and the axes of `frame`; `x_ticks` may replace numeric x ticks by
/// category labels.
pub fn open(
    out: &mut String,
    title: &str,
    x_label: &str,
    y_label: &str,
    frame: &Frame,
    categories: Option<&[String]>,
) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12" role="img"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="{cx}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(title),
        cx = WIDTH / 2.0
    );
    let (bx, by) = (LEFT, HEIGHT - BOTTOM);
    let _ = write!(
        out,
        r#"<g stroke="black" fill="none"><line x1="{bx}" y1="{TOP}" x2="{bx}" y2="{by}"/><line x1="{bx}" y1="{by}" x2="{}" y2="{by}"/></g>"#,
        WIDTH - RIGHT
    );
    for t in ticks(frame.y0, frame.y1) {
        let y = frame.y(t);
        let _ = write!(
            out,
            r##"<line x1="{}" y1="{y:.1}" x2="{bx}" y2="{y:.1}" stroke="black"/><line x1="{bx}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            bx - 4.0,
            WIDTH - RIGHT,
            bx - 6.0,
            y + 4.0,
            label(t)
        );
    }
    match categories {
        Some(cats) => {
            let w = frame.plot_width() / cats.len().max(1) as f64;
            for (i, c) in cats.iter().enumerate() {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                    LEFT + w * (i as f64 + 0.5),
                    by + 16.0,
                    escape(c)
                );
            }
        }
        None => {
            for t in ticks(frame.x0, frame.x1) {
                let x = frame.x(t);
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" y1="{by}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
                    by + 4.0,
                    by + 16.0,
                    label(t)
                );
            }
        }
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        LEFT + frame.plot_width() / 2.0,
        HEIGHT - 14.0,
        escape(x_label),
        TOP + (HEIGHT - TOP - BOTTOM) / 2.0,
        escape(y_label)
    );
}

/// A legend entry in the right margin.
pub fn legend(out: &mut String, i: usize, name: &str, as_bar: bool) {
    let (color, dash) = style(i);
    let x = WIDTH - RIGHT + 12.0;
    let y = TOP + 10.0 + 16.0 * i as f64;
    if as_bar {
        let _ = write!(
            out,
            r#"<rect x="{x}" y="{}" width="14" height="10" fill="{color}"/>"#,
            y - 9.0
        );
    } else {
        let _ = write!(
            out,
            r#"<line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            y - 4.0,
            x + 14.0,
            y - 4.0
        );
    }
    let short: String = name.chars().take(30).collect();
    let _ = write!(
        out,
        r#"<text x="{}" y="{y}">{}</text>"#,
        x + 18.0,
        escape(&short)
    );
}

pub fn close(out: &mut String) {
    out.push_str("</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(0.0, 1.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(ticks(0.0, 600.0), vec![0.0, 200.0, 400.0, 600.0]);
        assert_eq!(ticks(5.0, 5.0), vec![5.0]);
        assert_eq!(ticks(f64::NAN, 1.0).len(), 1);
        assert_eq!(label(15000.0), "15k");
        assert_eq!(label(2_500_000.0), "2.5M");
        assert_eq!(label(0.25), "0.25");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
