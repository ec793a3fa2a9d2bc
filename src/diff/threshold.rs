//! `--fail-on` thresholds: `METRIC>N%` (relative increase beyond N percent), `METRIC>N`
//! (absolute increase beyond N), and `<` for decreases (`utilization<-1%`: fail if utilization
//! drops by more than 1%). Only changes that are real (beyond noise, with replicates) count.

use super::compare::{Diff, METRICS};
use crate::manifest::did_you_mean;

#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    pub metric: String,
    /// `true` for `>` (fail when the change exceeds the limit), `false` for `<`.
    pub above: bool,
    pub limit: f64,
    pub relative: bool,
    text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub threshold: String,
    pub cell: String,
    pub change: String,
}

pub fn parse_threshold(text: &str) -> Result<Threshold, String> {
    let (metric, above, rest) = if let Some((m, r)) = text.split_once('>') {
        (m, true, r)
    } else if let Some((m, r)) = text.split_once('<') {
        (m, false, r)
    } else {
        return Err(format!(
            "threshold `{text}` has no `>` or `<` (e.g. `wait_mean>5%`)"
        ));
    };
    let metric = metric.trim();
    if !METRICS.contains(&metric) {
        let hint = did_you_mean(metric, METRICS)
            .map_or(String::new(), |m| format!(" (did you mean `{m}`?)"));
        return Err(format!(
            "threshold `{text}`: unknown metric `{metric}`{hint}"
        ));
    }
    let rest = rest.trim();
    let (number, relative) = match rest.strip_suffix('%') {
        Some(n) => (n, true),
        None => (rest, false),
    };
    let limit: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("threshold `{text}`: `{rest}` is not a number"))?;
    Ok(Threshold {
        metric: metric.to_string(),
        above,
        limit,
        relative,
        text: text.to_string(),
    })
}

impl Threshold {
    /// Every cell of `diff` whose real change in this metric crosses the threshold.
    pub fn violations(&self, diff: &Diff) -> Vec<Violation> {
        let mut out = Vec::new();
        for cell in &diff.cells {
            let Some(m) = cell.metrics.iter().find(|m| m.metric == self.metric) else {
                continue;
            };
            if !m.changed {
                continue;
            }
            let value = if self.relative {
                m.rel.map(|r| r * 100.0)
            } else {
                m.abs
            };
            let Some(v) = value else { continue };
            let crossed = if self.above {
                v > self.limit
            } else {
                v < self.limit
            };
            if crossed {
                let unit = if self.relative { "%" } else { "" };
                out.push(Violation {
                    threshold: self.text.clone(),
                    cell: format!("{}/{}", cell.experiment, cell.cell),
                    change: format!("{v:+.2}{unit}"),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_relative_absolute_and_direction() {
        let t = parse_threshold("wait_mean>5%").unwrap();
        assert!(t.above && t.relative && t.limit == 5.0);
        let t = parse_threshold("utilization<-0.01").unwrap();
        assert!(!t.above && !t.relative && t.limit == -0.01);
        assert!(
            parse_threshold("wait_man>5%")
                .unwrap_err()
                .contains("did you mean `wait_mean`")
        );
        assert!(parse_threshold("wait_mean=5").is_err());
        assert!(parse_threshold("wait_mean>five").is_err());
    }
}
