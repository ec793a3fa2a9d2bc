//! The rows of a per-cell result file that names a part of each cell (a cluster in
//! clusters.parquet, a queue in queues.parquet), grouped by that name within one configuration
//! and averaged over its replicas. The clusters and queues views both read their tables this way.

use std::collections::BTreeMap;

use crate::report::shape::Config;

/// A row's numeric columns.
type Numbers = BTreeMap<String, Option<f64>>;

/// One named part of a configuration (a cluster, a queue), its replicas' rows averaged.
pub(super) struct NamedMeans {
    pub name: String,
    values: Numbers,
}

impl NamedMeans {
    pub fn get(&self, column: &str) -> Option<f64> {
        self.values.get(column).copied().flatten()
    }
}

/// The parts of configuration `c` in the order the rows first name them, each column averaged
/// over the replicas that have a value. `fields` gives a row's cell, part name and numbers.
pub(super) fn named_means<'r, R>(
    rows: &'r [R],
    c: &Config<'_>,
    fields: impl Fn(&'r R) -> (&'r str, &'r str, &'r Numbers),
) -> Vec<NamedMeans> {
    let cells: Vec<&str> = c.rows.iter().map(|r| r.cell.as_str()).collect();
    let mut parts: Vec<(&str, Vec<&Numbers>)> = Vec::new();
    for (cell, name, numbers) in rows.iter().map(&fields) {
        if !cells.contains(&cell) {
            continue;
        }
        match parts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(numbers),
            None => parts.push((name, vec![numbers])),
        }
    }
    parts
        .into_iter()
        .map(|(name, replicas)| {
            let mut values = BTreeMap::new();
            for column in replicas.iter().flat_map(|r| r.keys()) {
                let v: Vec<f64> = replicas
                    .iter()
                    .filter_map(|r| r.get(column).copied().flatten())
                    .collect();
                let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
                values.insert(column.clone(), mean);
            }
            NamedMeans {
                name: name.to_string(),
                values,
            }
        })
        .collect()
}
