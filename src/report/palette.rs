//! One look per series value across every chart of a report, and the same look for the same
//! setting in every report (issue 35): a level's colour is chosen from its value alone — the
//! built-in policy and order names have fixed colours, any other value one from a hash of its
//! name — so `easy` is the same red in every report that has it. Within a report, a level whose
//! colour another level already took (primary axis first, then the others) takes the next free
//! one, so that values on screen together differ while there are enough colours. Each level
//! also has a marker shape; dash patterns tell a second axis apart. Black and grey are kept for
//! baselines and reference lines.

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

/// Fixed colours (indexes into [`COLORS`]) of the built-in policies and queue orders, so that
/// the settings most reports share look alike everywhere.
const NAMED: [(&str, usize); 8] = [
    ("fcfs", 0),
    ("easy", 1),
    ("conservative", 2),
    ("aggressive", 3),
    ("fairshare", 4),
    ("priority", 5),
    ("sjf", 6),
    ("none", 7),
];

/// The colour a value asks for, whatever else the report shows: its fixed colour, else one from
/// a hash of its name (FNV-1a: stable across builds and platforms).
pub fn preferred(value: &str) -> usize {
    if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == value) {
        return *c;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in value.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % COLORS.len() as u64) as usize
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
        let mut taken = [false; COLORS.len()];
        for axis in order {
            for (i, level) in axis.levels.iter().enumerate() {
                let want = preferred(&axis.bare(level));
                // The wanted colour, or the next free one; once all are taken, the wanted one.
                let c = (0..COLORS.len())
                    .map(|k| (want + k) % COLORS.len())
                    .find(|&c| !taken[c])
                    .unwrap_or(want);
                taken[c] = true;
                colors.insert((axis.name.clone(), i), c);
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
        let colours: Vec<String> = shape
            .axes
            .iter()
            .flat_map(|a| a.levels.iter().map(|l| p.look(a, l).color))
            .collect();
        let mut distinct = colours.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), colours.len(), "{colours:?}");
        // Same value, same look, every time.
        let s = &shape.axes[1];
        assert_eq!(p.look(s, &s.levels[1]), p.look(s, &s.levels[1]));
    }

    #[test]
    fn built_in_policies_have_fixed_colours_and_other_names_a_stable_one() {
        assert_eq!(COLORS[preferred("fcfs")], "#1f77b4");
        assert_eq!(COLORS[preferred("easy")], "#d62728");
        assert_eq!(COLORS[preferred("conservative")], "#2ca02c");
        // FNV-1a of "a" is 0xaf63dc4c8601ec8c (the published test vector); mod 9 = 7.
        assert_eq!(preferred("a"), 7);
    }
}
