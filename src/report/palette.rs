//! One look per series value across every chart of a report: each level of each varying axis
//! gets a colour (the primary axis first, then the others, so that different axes use
//! different colours while there are enough) and a marker shape; dash patterns tell a second
//! axis apart. Black and grey are kept for baselines and reference lines.

use std::collections::BTreeMap;

use super::shape::{Axis, Level, ResultShape};
use super::svg::{DASHES, Look};

/// Colour-blind-friendly enough and distinct in print (Tableau/D3 category colours without
/// their grey).
pub const COLORS: [&str; 9] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22",
];

/// Looks of reference lines (baselines), in order.
pub const REFERENCE: [&str; 3] = ["#222222", "#777777", "#aaaaaa"];

#[derive(Clone, Debug, Default)]
pub struct Palette {
    /// (axis, level index) → colour index.
    colors: BTreeMap<(String, usize), usize>,
}

impl Palette {
    pub fn new(shape: &ResultShape) -> Palette {
        let mut order: Vec<&Axis> = Vec::new();
        if let Some(p) = shape.primary() {
            order.push(p);
        }
        let primary = order.first().map(|a| a.name.clone());
        order.extend(
            shape
                .axes
                .iter()
                .filter(|a| Some(&a.name) != primary.as_ref()),
        );
        let mut colors = BTreeMap::new();
        let mut next = 0;
        for axis in order {
            for i in 0..axis.levels.len() {
                colors.insert((axis.name.clone(), i), next % COLORS.len());
                next += 1;
            }
        }
        Palette { colors }
    }

    /// The look of `level` of `axis`: its colour and a marker shape by level.
    pub fn look(&self, axis: &Axis, level: &Level) -> Look {
        let i = axis.index(level).unwrap_or(0);
        let c = self
            .colors
            .get(&(axis.name.clone(), i))
            .copied()
            .unwrap_or(i % COLORS.len());
        Look {
            color: COLORS[c].to_string(),
            dash: "",
            marker: i,
        }
    }

    /// The look of a series keyed by `colour` and told apart by a dash pattern from `dash`.
    pub fn look_with_dash(
        &self,
        colour: Option<(&Axis, &Level)>,
        dash: Option<(&Axis, &Level)>,
    ) -> Look {
        let mut look = colour.map_or_else(|| reference(0), |(a, l)| self.look(a, l));
        if let Some((a, l)) = dash {
            let i = a.index(l).unwrap_or(0);
            look.dash = DASHES[i % DASHES.len()];
            if colour.is_none() {
                look.marker = i;
            }
        }
        look
    }
}

/// The look of the `i`-th reference line.
pub fn reference(i: usize) -> Look {
    Look {
        color: REFERENCE[i % REFERENCE.len()].to_string(),
        dash: "5 3",
        marker: 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, n: usize) -> Axis {
        Axis {
            name: name.into(),
            levels: (0..n).map(|i| Level::Text(format!("{name}{i}"))).collect(),
            numeric: false,
        }
    }

    #[test]
    fn each_value_has_one_colour_and_axes_do_not_share_while_colours_last() {
        let shape = ResultShape {
            axes: vec![axis("workload", 2), axis("scheduler", 3)],
            ..ResultShape::default()
        };
        let p = Palette::new(&shape);
        let s = &shape.axes[1];
        let w = &shape.axes[0];
        // The primary axis (scheduler) takes the first colours.
        assert_eq!(p.look(s, &s.levels[0]).color, COLORS[0]);
        assert_eq!(p.look(s, &s.levels[2]).color, COLORS[2]);
        assert_eq!(p.look(w, &w.levels[0]).color, COLORS[3]);
        // Same value, same look, every time.
        assert_eq!(p.look(s, &s.levels[1]), p.look(s, &s.levels[1]));
    }
}
