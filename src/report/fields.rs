//! A summary row's named values, with the names shared by every row read from one batch of
//! summary.parquet. A grid of 10,000 cells has ~90 columns: a map per row kept ~1 M copies of
//! the same names and their tree nodes (~130 MB of a report's peak, issue 36), where one sorted
//! list of names and a vector of values per row give the same lookups.

use std::sync::Arc;

/// Values by name, names in sorted order (a `BTreeMap`'s iteration order), found by binary
/// search. Rows of one batch share `names`; inserting a new name copies them for this row only.
#[derive(Clone, Debug)]
pub struct Fields<V> {
    names: Arc<Vec<String>>,
    values: Vec<V>,
}

impl<V> Default for Fields<V> {
    fn default() -> Self {
        Fields {
            names: Arc::default(),
            values: Vec::new(),
        }
    }
}

impl<V> Fields<V> {
    /// A row of `values`, one per name of `names` (sorted, unique), in that order.
    pub fn with_names(names: Arc<Vec<String>>, values: Vec<V>) -> Self {
        debug_assert!(names.windows(2).all(|w| w[0] < w[1]));
        debug_assert_eq!(names.len(), values.len());
        Fields { names, values }
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.names.binary_search_by(|n| n.as_str().cmp(name))
    }

    pub fn get(&self, name: &str) -> Option<&V> {
        self.position(name).ok().map(|i| &self.values[i])
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets `name` to `value`, giving back the value it replaced.
    pub fn insert(&mut self, name: String, value: V) -> Option<V> {
        match self.position(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i], value)),
            Err(i) => {
                Arc::make_mut(&mut self.names).insert(i, name);
                self.values.insert(i, value);
                None
            }
        }
    }

    /// (name, value) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.names.iter().zip(&self.values)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.names.iter()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<V> FromIterator<(String, V)> for Fields<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(items: I) -> Self {
        let mut fields = Fields::default();
        for (name, value) in items {
            fields.insert(name, value);
        }
        fields
    }
}

/// `fields["name"]`, as on a map: panics when the name is missing.
impl<V> std::ops::Index<&str> for Fields<V> {
    type Output = V;

    fn index(&self, name: &str) -> &V {
        self.get(name)
            .unwrap_or_else(|| panic!("no field named {name:?}"))
    }
}

impl<'a, V> IntoIterator for &'a Fields<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = std::iter::Zip<std::slice::Iter<'a, String>, std::slice::Iter<'a, V>>;

    fn into_iter(self) -> Self::IntoIter {
        self.names.iter().zip(&self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Lookups, replacement and iteration order are those of a `BTreeMap` given the same
    /// inserts, and a row inserting a name leaves the rows it shared names with unchanged.
    #[test]
    fn behaves_as_a_sorted_map() {
        let inserts = [
            ("wait", 1.0),
            ("b", 2.0),
            ("a", 3.0),
            ("wait", 4.0),
            ("z", 5.0),
        ];
        let mut map = BTreeMap::new();
        let mut fields = Fields::default();
        for (k, v) in inserts {
            assert_eq!(
                fields.insert(k.to_string(), v),
                map.insert(k.to_string(), v)
            );
        }
        assert_eq!(
            fields.iter().collect::<Vec<_>>(),
            map.iter().collect::<Vec<_>>()
        );
        assert_eq!(fields.get("wait"), Some(&4.0));
        assert_eq!(fields.get("c"), None);
        assert!(fields.contains_key("a") && !fields.contains_key("y"));
        assert_eq!(fields.len(), 4);

        let names = Arc::new(vec!["a".to_string(), "b".to_string()]);
        let first = Fields::with_names(names.clone(), vec![1, 2]);
        let mut second = Fields::with_names(names, vec![3, 4]);
        second.insert("c".to_string(), 5);
        assert_eq!(first.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(second.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(second.get("c"), Some(&5));
    }
}
