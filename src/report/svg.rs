//! SVG primitives written by hand: deterministic bytes, no fonts or scripts to load. Text is
//! measured with a per-character width table close to Arial/Helvetica (what `sans-serif`
//! resolves to in browsers), so titles and labels can be wrapped or shortened to fit their box
//! instead of being clipped. Scales are linear or logarithmic with "nice" ticks.

use std::fmt::Write;

/// Width of every chart's view box, in SVG units (the HTML page scales it to its column).
pub const WIDTH: f64 = 720.0;
/// Font sizes: chart title, labels, tick labels.
pub const TITLE_SIZE: f64 = 14.0;
pub const LABEL_SIZE: f64 = 12.0;
pub const TICK_SIZE: f64 = 11.0;

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Advance width of `c` in ems, after Arial's metrics (rounded to a few classes).
fn char_width(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '!' | '|' | '.' | ',' | ':' | ';' | '\'' | 'I' | ' ' => 0.28,
        'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' | '\\' => 0.34,
        'm' | 'w' => 0.83,
        'M' | 'W' => 0.89,
        '0'..='9' | '+' | '=' | '<' | '>' | '_' | '$' | '#' | '*' => 0.56,
        'A'..='Z' => 0.68,
        'a'..='z' => 0.54,
        '—' | '×' | '…' => 0.9,
        _ => 0.6,
    }
}

/// Estimated width of `text` at `size` px.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().map(char_width).sum::<f64>() * size
}

/// `text` shortened with an ellipsis to fit `width` at `size`.
pub fn fit(text: &str, width: f64, size: f64) -> String {
    if text_width(text, size) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        if text_width(&out, size) + (char_width(c) + 0.9) * size > width {
            break;
        }
        out.push(c);
    }
    out.trim_end().to_string() + "…"
}

/// Bold text is this much wider than regular text (Arial Bold against Arial, rounded up).
pub const BOLD: f64 = 1.1;

/// `text` broken at spaces into lines of at most `width` at `size`, as many lines as it takes:
/// titles are never shortened, so a reader sees every setting they name. A word wider than the
/// line on its own is broken between characters.
pub fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_string()
        } else {
            format!("{current} {word}")
        };
        if text_width(&candidate, size) <= width {
            current = candidate;
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        for c in word.chars() {
            if !current.is_empty() && text_width(&current, size) + char_width(c) * size > width {
                lines.push(std::mem::take(&mut current));
            }
            current.push(c);
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// "Nice" tick values covering [lo, hi] (about five).
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Also catches NaN bounds.
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let step = nice_step(lo, hi);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn nice_step(lo: f64, hi: f64) -> f64 {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999_999)
        .unwrap_or(10.0 * mag)
}

/// [lo, hi] widened to the nearest ticks, so the frame ends on a labelled value.
pub fn nice_bounds(lo: f64, hi: f64) -> (f64, f64) {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return (lo, lo + 1.0);
    }
    let step = nice_step(lo, hi);
    // k × step, exact for decimal steps below 1 (12 × 0.05 would be 0.6000000000000001).
    let times = |k: f64| {
        if step < 1.0 {
            k / (1.0 / step).round()
        } else {
            k * step
        }
    };
    (times((lo / step).floor()), times((hi / step).ceil()))
}

/// Ticks of a log scale over [lo, hi] (lo > 0): powers of ten, with 2 and 5 between them when
/// the range spans under three decades.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mantissas: &[f64] = if (hi / lo).log10() < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for e in a..=b {
        for m in mantissas {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999_999 && v <= hi * 1.000_001 {
                out.push(v);
            }
        }
    }
    // A narrow range (1.01 to 1.6: the enlarged end of a log axis) holds at most one 1-2-5
    // value: linear ticks inside it instead, which on so short a stretch of a log axis read
    // alike and leave no axis unlabelled (issue 35).
    if out.len() < 2 {
        return ticks(lo, hi)
            .into_iter()
            .filter(|v| *v >= lo * 0.999_999 && *v <= hi * 1.000_001 && *v > 0.0)
            .collect();
    }
    out
}

/// A tick label, a legend value or a colour-scale edge: written as the text writes numbers
/// (`text::number`: three significant digits, thousands separated, a true minus sign) with
/// trailing zeros dropped, since a tick needs no precision beyond its value: "1,000", "15,000",
/// "2,500,000", "0.25", "0.002", "−1.5". E-notation only below 0.001, where decimals would run
/// long ("2.78e-4", "5e-4").
pub fn label(v: f64) -> String {
    let a = v.abs();
    // NaN and the infinities go to `number` too, which writes them as "–".
    if a == 0.0 || a >= 1e-3 || a.is_nan() {
        return without_trailing_zeros(super::text::number(v));
    }
    let mut e = a.log10().floor() as i32;
    // 9.996e-4 rounds to "10.00": one decade up.
    if (a / 10f64.powi(e) * 100.0).round() >= 1000.0 {
        e += 1;
    }
    let m = without_trailing_zeros(format!("{:.2}", a / 10f64.powi(e)));
    let sign = if v < 0.0 { "−" } else { "" };
    format!("{sign}{m}e{e}")
}

/// `t` without the zeros ending its decimals, nor a bare decimal point ("2.50" → "2.5",
/// "3.00" → "3"); a whole number keeps its zeros ("1,000").
fn without_trailing_zeros(t: String) -> String {
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// Labels for a run of ticks: each as [`label`] writes it, unless two neighbours would then
/// read the same (a narrow range at large values: 1,000.2 and 1,000.4 are both "1,000" at three
/// significant digits); then every one with as few decimals as tell them apart, thousands still
/// separated and trailing zeros dropped ("1,000", "1,000.2", "1,000.4").
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let distinct = |labels: &[String]| labels.windows(2).all(|w| w[0] != w[1]);
    let plain: Vec<String> = ticks.iter().map(|&t| label(t)).collect();
    if distinct(&plain) {
        return plain;
    }
    (1..=12)
        .map(|decimals| {
            ticks
                .iter()
                .map(|&t| without_trailing_zeros(super::text::fixed(t, decimals)))
                .collect::<Vec<_>>()
        })
        .find(|labels| distinct(labels))
        .unwrap_or(plain)
}

/// A value shown on a bar or a point: three significant digits, zeros kept, as the findings
/// and the tables write them (0.870 beside 0.491, not 0.87), thousands separated; e-notation
/// only below 0.001, where decimals would run long.
pub fn value_label(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        label(v)
    } else {
        super::text::number(v)
    }
}

/// A mapping from data to pixels along one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    /// Pixel positions of lo and hi.
    pub from: f64,
    pub to: f64,
}

impl Scale {
    pub fn map(&self, v: f64) -> f64 {
        let (v, lo, hi) = if self.log {
            (
                v.max(self.lo * 1e-3).log10(),
                self.lo.log10(),
                self.hi.log10(),
            )
        } else {
            (v, self.lo, self.hi)
        };
        let span = hi - lo;
        let f = if span.abs() > f64::MIN_POSITIVE {
            (v - lo) / span
        } else {
            0.5
        };
        self.from + f * (self.to - self.from)
    }

    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            ticks(self.lo, self.hi)
        }
    }
}

/// Line dash patterns, marker shapes and colours of series.
pub const DASHES: [&str; 4] = ["", "7 3", "2 2", "8 3 2 3"];
pub const MARKERS: usize = 6;

/// A series' look: colour, dash pattern, marker shape index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Look {
    pub color: String,
    pub dash: &'static str,
    pub marker: usize,
}

/// A marker of shape `kind` centred at (x, y).
pub fn marker(out: &mut String, kind: usize, x: f64, y: f64, color: &str) {
    let r = 3.6;
    let _ = match kind % MARKERS {
        0 => write!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{color}"/>"#
        ),
        1 => write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
            x - r * 0.9,
            y - r * 0.9,
            r * 1.8,
            r * 1.8
        ),
        2 => write!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{color}"/>"#,
            y - r * 1.15,
            x + r,
            y + r * 0.75,
            x - r,
            y + r * 0.75
        ),
        3 => write!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} Z" fill="{color}"/>"#,
            y - r * 1.2,
            x + r * 1.2,
            y + r * 1.2,
            x - r * 1.2
        ),
        4 => write!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{color}"/>"#,
            y + r * 1.15,
            x + r,
            y - r * 0.75,
            x - r,
            y - r * 0.75
        ),
        _ => write!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="white" stroke="{color}" stroke-width="1.8"/>"#
        ),
    };
}

/// Opens an SVG of `height` with a white background and an accessible title.
pub fn open(out: &mut String, title: &str, height: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0}" width="{WIDTH}" height="{height:.0}" font-family="sans-serif" font-size="{LABEL_SIZE}" role="img"><title>{}</title><rect width="100%" height="100%" fill="white"/>"#,
        escape(title)
    );
}

/// Text at (x, y); `anchor` is start, middle or end.
pub fn text(out: &mut String, x: f64, y: f64, size: f64, anchor: &str, body: &str) {
    let _ = write!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}">{}</text>"#,
        escape(body)
    );
}

/// The chart title, wrapped to the width, centred; returns the height used.
pub fn title(out: &mut String, title: &str) -> f64 {
    let lines = wrap(title, WIDTH - 24.0, TITLE_SIZE * BOLD);
    for (i, line) in lines.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="{TITLE_SIZE}" font-weight="bold" text-anchor="middle">{}</text>"#,
            WIDTH / 2.0,
            18.0 + 17.0 * i as f64,
            escape(line)
        );
    }
    10.0 + 17.0 * lines.len() as f64
}

/// What a legend entry shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swatch {
    /// A line with its marker.
    Line,
    /// A line without a marker.
    Plain,
    /// A filled box.
    Box,
    /// A marker alone.
    Marker,
}

/// A legend entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub look: Look,
    pub swatch: Swatch,
    pub name: String,
}

/// Lays out `entries` in rows across the chart under an optional heading (e.g. the axis the
/// colours stand for), starting at `y`; returns the height used. Entries that do not fit on
/// a row wrap to the next.
pub fn legend(out: &mut String, heading: Option<&str>, entries: &[Entry], y: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let size = LABEL_SIZE;
    let (left, right) = (14.0, WIDTH - 14.0);
    let mut x = left;
    let mut row_y = y + 12.0;
    if let Some(h) = heading {
        let h = format!("{h}:");
        text(out, x, row_y, size, "start", &h);
        x += text_width(&h, size) + 10.0;
    }
    for e in entries {
        // A name is shortened only when it would not fit a whole legend row.
        let name = fit(&e.name, right - left - 40.0, size);
        let w = 26.0 + text_width(&name, size) + 14.0;
        if x + w > right && x > left + 1.0 {
            x = left;
            row_y += 17.0;
        }
        let mid = row_y - 4.0;
        let color = &e.look.color;
        match e.swatch {
            Swatch::Box => {
                // A dashed look marks the light variant of a colour (bars).
                let light = if e.look.dash.is_empty() {
                    String::new()
                } else {
                    format!(r#" fill-opacity="0.4" stroke="{color}" stroke-width="1.5""#)
                };
                let _ = write!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="18" height="10" fill="{color}"{light}/>"#,
                    x + 2.0,
                    mid - 5.0
                );
            }
            Swatch::Marker => marker(out, e.look.marker, x + 11.0, mid, color),
            Swatch::Line | Swatch::Plain => {
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" y1="{mid:.1}" x2="{:.1}" y2="{mid:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>"#,
                    x + 22.0,
                    e.look.dash
                );
                if e.swatch == Swatch::Line {
                    marker(out, e.look.marker, x + 11.0, mid, color);
                }
            }
        }
        text(out, x + 26.0, row_y, size, "start", &name);
        x += w;
    }
    row_y - y + 8.0
}

pub fn close(out: &mut String) {
    out.push_str("</svg>");
}

/// What a reader sees in a rendered chart, for the chart modules' tests.
#[cfg(test)]
pub mod reading {
    /// Every `<text>` element's content in `svg`.
    pub fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::to_string))
            .collect()
    }

    /// Whether `s` holds a run of four digits: a number written without separators.
    pub fn has_four_digits(s: &str) -> bool {
        s.as_bytes()
            .windows(4)
            .any(|w| w.iter().all(u8::is_ascii_digit))
    }
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
        assert_eq!(nice_bounds(0.61, 0.83), (0.6, 0.85));
        assert_eq!(
            log_ticks(3.0, 500.0),
            vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        assert_eq!(log_ticks(0.5, 5000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        // 1.01 to 1.6 holds no 1-2-5 value but 1 (outside): linear steps of 0.2 instead.
        let narrow: Vec<String> = log_ticks(1.01, 1.6).into_iter().map(label).collect();
        assert_eq!(narrow, ["1.2", "1.4", "1.6"]);
        assert_eq!(label(15000.0), "15,000");
        assert_eq!(label(2_500_000.0), "2,500,000");
        assert_eq!(label(-0.25), "−0.25");
        assert_eq!(label(-0.000_278), "−2.78e-4");
        assert_eq!(label(0.000_999_6), "1e-3");
        assert_eq!(label(f64::NAN), "–");
        assert_eq!(label(0.25), "0.25");
        assert_eq!(label(0.000_278), "2.78e-4");
        assert_eq!(label(0.002_78), "0.00278");
        assert_eq!(label(0.002), "0.002");
        assert_eq!(label(0.000_5), "5e-4");
        // Values on bars keep their zeros, so one chart's labels agree in precision.
        assert_eq!(value_label(0.87), "0.870");
        assert_eq!(value_label(0.491), "0.491");
        assert_eq!(value_label(12.1), "12.1");
        assert_eq!(value_label(21_100.0), "21,100");
        assert_eq!(value_label(0.000_278), "2.78e-4");
        assert_eq!(value_label(0.0), "0");
        assert_eq!(label(0.0278), "0.0278");
        assert_eq!(label(426.8), "427");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    /// Ticks from 1,000 up are thousands separated as the text writes counts (`text::whole`),
    /// on linear and log axes alike: never "1000" beside a report that writes "1,306".
    #[test]
    fn neighbouring_ticks_never_read_the_same() {
        // Five ticks 0.2 apart at a thousand: three significant digits would print each as
        // "1,000".
        let ticks = ticks(1000.0, 1001.0);
        assert_eq!(
            tick_labels(&ticks),
            ["1,000", "1,000.2", "1,000.4", "1,000.6", "1,000.8", "1,001"]
        );
        // A range where the plain labels differ keeps them as they are.
        assert_eq!(tick_labels(&[0.0, 2500.0, 5000.0]), ["0", "2,500", "5,000"]);
        assert_eq!(tick_labels(&[-1.5, 0.0, 1.5]), ["−1.5", "0", "1.5"]);
    }

    #[test]
    fn tick_labels_separate_thousands_as_the_text_does() {
        assert_eq!(label(1000.0), "1,000");
        assert_eq!(label(1500.0), "1,500");
        assert_eq!(label(2500.0), "2,500");
        assert_eq!(label(9999.0), "9,999");
        assert_eq!(label(999.7), "1,000");
        assert_eq!(label(-4000.0), "−4,000");
        assert_eq!(label(12_345.0), "12,345");
        assert_eq!(label(1e9), "1,000,000,000");
        for n in [1000usize, 1306, 9999, 17_897, 1_543_738] {
            assert_eq!(label(n as f64), crate::report::text::whole(n));
        }
        // Every tick of axes from a thousand to ten million, linear and log: no run of four
        // digits, and the separators where `whole` puts them.
        for hi in [1200.0, 5000.0, 9999.0, 20_000.0, 3.7e6, 1e7] {
            for t in ticks(0.0, hi).into_iter().chain(log_ticks(1.0, hi)) {
                let l = label(t);
                assert!(!reading::has_four_digits(&l), "{t} → {l}");
                if t >= 1.0 && t.fract() == 0.0 {
                    assert_eq!(l, crate::report::text::whole(t as usize), "{t}");
                }
            }
        }
    }

    #[test]
    fn scales_map_linear_and_log() {
        let s = Scale {
            lo: 1.0,
            hi: 100.0,
            log: true,
            from: 0.0,
            to: 200.0,
        };
        assert!((s.map(10.0) - 100.0).abs() < 1e-9);
        let l = Scale { log: false, ..s };
        assert!((l.map(50.5) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn long_text_is_wrapped_whole_never_shortened() {
        let text = "one two three four five six";
        let lines = wrap(text, 60.0, 12.0);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(
            lines.iter().all(|l| text_width(l, 12.0) <= 60.0),
            "{lines:?}"
        );
        // Every word is kept, in order, and nothing is elided.
        assert_eq!(lines.join(" "), text);
        assert!(lines.iter().all(|l| !l.contains('…')));
        assert_eq!(wrap("short", 100.0, 12.0), vec!["short"]);
        // A word wider than the line is split, not cut.
        let long = wrap("abcdefghijklmnopqrstuvwxyz", 60.0, 12.0);
        assert!(long.len() > 1);
        assert_eq!(long.concat(), "abcdefghijklmnopqrstuvwxyz");
    }
}
