//! Small typed tables (one row per cell, or per time bin) written to Parquet. Columns keep the
//! order in which they are first seen. A column's type follows from the kind of its values —
//! typed nulls included, so a column has the same type whatever the data: Utf8 if any value is a
//! string, Boolean if any is a boolean, Float64 if any is a float (an untyped null counts as
//! one), else Int64. Every column is nullable; a missing value is a null.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::columns::{OutputFile, described};
use super::{StoreError, write_columns};

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A null of no particular type (read as a float null).
    Null,
    NullInt,
    NullStr,
    NullBool,
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl From<&serde_json::Value> for Value {
    fn from(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) if !n.is_f64() => Value::Int(i),
                _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Str(s.clone()),
            other => Value::Str(other.to_string()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<(usize, Value)>>,
}

impl Table {
    /// Starts a new row.
    pub fn row(&mut self) -> &mut Self {
        self.rows.push(Vec::new());
        self
    }

    /// Sets `column` of the current row.
    pub fn set(&mut self, column: &str, value: Value) -> &mut Self {
        let index = match self.columns.iter().position(|c| c == column) {
            Some(i) => i,
            None => {
                self.columns.push(column.to_string());
                self.columns.len() - 1
            }
        };
        self.rows
            .last_mut()
            .expect("call row() first")
            .push((index, value));
        self
    }

    /// Sets one column per field of a serializable struct (a flat one, such as `RunSummary`).
    pub fn set_fields<T: serde::Serialize>(&mut self, value: &T) -> &mut Self {
        let json = serde_json::to_value(value).expect("row serializes");
        if let serde_json::Value::Object(map) = json {
            // serde_json maps are sorted; follow the struct's declaration order instead.
            let ordered = serde_json::to_string(value).expect("row serializes");
            let mut keys: Vec<(usize, &String)> = map
                .keys()
                .map(|k| (ordered.find(&format!("\"{k}\":")).unwrap_or(usize::MAX), k))
                .collect();
            keys.sort();
            for (_, k) in keys {
                self.set(k, Value::from(&map[k]));
            }
        }
        self
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table to `path` (columns described as `file` documents them).
    pub fn write<'a>(
        &self,
        to: impl Into<super::Target<'a>>,
        metadata: &[(String, String)],
        file: OutputFile,
    ) -> Result<(), StoreError> {
        let (schema, arrays) = self.to_arrays(file);
        write_columns(to, schema, arrays, metadata)
    }

    /// The table as a described schema and Arrow arrays, types inferred from the values.
    pub fn to_arrays(&self, file: OutputFile) -> (SchemaRef, Vec<ArrayRef>) {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for c in 0..self.columns.len() {
            let (ty, array) = column(&self.cells(c), None);
            fields.push(Field::new(&self.columns[c], ty, true));
            arrays.push(array);
        }
        (described(file, &Schema::new(fields)), arrays)
    }

    /// The table's arrays typed as `schema` says (a later part of a file written in parts, whose
    /// schema came from the first part). The result is what [`Table::to_arrays`] would give for
    /// all parts at once: an error names the first column that differs from the schema or holds
    /// a value of a kind that would have given it another type (module documentation).
    pub fn arrays_as(&self, schema: &Schema) -> Result<Vec<ArrayRef>, String> {
        let expected: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let found: Vec<&str> = self.columns.iter().map(String::as_str).collect();
        if found != expected {
            let c = (0..)
                .find(|&c| found.get(c) != expected.get(c))
                .unwrap_or(0);
            return Err(match (found.get(c), expected.get(c)) {
                (Some(f), Some(e)) => {
                    format!("column {} is `{f}` where earlier rows have `{e}`", c + 1)
                }
                (Some(f), None) => format!("column `{f}` is not in earlier rows"),
                (None, Some(e)) => format!("column `{e}` is missing"),
                (None, None) => unreachable!("the lists differ at c"),
            });
        }
        schema
            .fields()
            .iter()
            .enumerate()
            .map(|(c, f)| {
                let cells = self.cells(c);
                let rank = type_rank(f.data_type());
                if let Some(v) = cells.iter().find(|v| value_rank(v) > rank) {
                    return Err(format!(
                        "column `{}` is {} in earlier rows but holds {v:?}",
                        f.name(),
                        f.data_type()
                    ));
                }
                Ok(column(&cells, Some(f.data_type())).1)
            })
            .collect()
    }

    /// Column `c` of every row (a missing value is a null).
    fn cells(&self, c: usize) -> Vec<&Value> {
        self.rows
            .iter()
            .map(|row| {
                row.iter()
                    .rev()
                    .find(|(i, _)| *i == c)
                    .map_or(&Value::Null, |(_, v)| v)
            })
            .collect()
    }
}

/// The precedence of a value's kind in type inference: a column takes the type of its
/// highest-ranked value (Int64 < Float64 < Boolean < Utf8; an untyped null counts as a float).
fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::NullInt => 0,
        Value::Float(_) | Value::Null => 1,
        Value::Bool(_) | Value::NullBool => 2,
        Value::Str(_) | Value::NullStr => 3,
    }
}

/// The rank of the values a column of type `ty` was inferred from, at most.
fn type_rank(ty: &DataType) -> u8 {
    match ty {
        DataType::Int64 => 0,
        DataType::Float64 => 1,
        DataType::Boolean => 2,
        _ => 3,
    }
}

/// A column of `cells`, of type `ty` when given, else inferred (module documentation).
fn column(cells: &[&Value], ty: Option<&DataType>) -> (DataType, ArrayRef) {
    let any = |f: fn(&Value) -> bool| cells.iter().any(|v| f(v));
    let is = |t: DataType| ty == Some(&t);
    let inferred = ty.is_none();
    if is(DataType::Utf8) || (inferred && any(|v| matches!(v, Value::Str(_) | Value::NullStr))) {
        // Exact capacities: a part's memory is what its sink counts against its budget.
        let bytes = cells
            .iter()
            .map(|v| match v {
                Value::Str(s) => s.len(),
                _ => 8,
            })
            .sum();
        let mut b = StringBuilder::with_capacity(cells.len(), bytes);
        for v in cells {
            match v {
                Value::Null | Value::NullInt | Value::NullStr | Value::NullBool => b.append_null(),
                Value::Str(s) => b.append_value(s),
                Value::Int(i) => b.append_value(i.to_string()),
                Value::Float(f) => b.append_value(f.to_string()),
                Value::Bool(x) => b.append_value(x.to_string()),
            }
        }
        (DataType::Utf8, Arc::new(b.finish()))
    } else if is(DataType::Boolean)
        || (inferred && any(|v| matches!(v, Value::Bool(_) | Value::NullBool)))
    {
        let mut b = BooleanBuilder::with_capacity(cells.len());
        for v in cells {
            match v {
                Value::Bool(x) => b.append_value(*x),
                _ => b.append_null(),
            }
        }
        (DataType::Boolean, Arc::new(b.finish()))
    } else if is(DataType::Float64)
        || (inferred && any(|v| matches!(v, Value::Float(_) | Value::Null)))
    {
        let mut b = Float64Builder::with_capacity(cells.len());
        for v in cells {
            match v {
                Value::Float(f) => b.append_value(*f),
                Value::Int(i) => b.append_value(*i as f64),
                _ => b.append_null(),
            }
        }
        (DataType::Float64, Arc::new(b.finish()))
    } else {
        let mut b = Int64Builder::with_capacity(cells.len());
        for v in cells {
            match v {
                Value::Int(i) => b.append_value(*i),
                _ => b.append_null(),
            }
        }
        (DataType::Int64, Arc::new(b.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(values: &[Vec<(&str, Value)>]) -> Table {
        let mut t = Table::default();
        for row in values {
            t.row();
            for (k, v) in row {
                t.set(k, v.clone());
            }
        }
        t
    }

    /// A table written in parts, the schema from the first, gives the arrays of the whole.
    #[test]
    fn parts_typed_as_the_first_equal_the_whole() {
        let all = vec![
            vec![
                ("a", Value::Int(1)),
                ("b", Value::Null),
                ("c", Value::NullStr),
            ],
            vec![
                ("a", Value::NullInt),
                ("b", Value::Float(2.5)),
                ("c", Value::Str("x".into())),
            ],
            vec![
                ("a", Value::Int(3)),
                ("b", Value::Int(4)),
                ("c", Value::NullStr),
            ],
        ];
        let (schema, whole) = rows(&all).to_arrays(OutputFile::Summary);
        let (first_schema, first) = rows(&all[..1]).to_arrays(OutputFile::Summary);
        assert_eq!(first_schema, schema);
        let rest = rows(&all[1..]).arrays_as(&schema).unwrap();
        for (c, w) in whole.iter().enumerate() {
            let parts =
                arrow_select::concat::concat(&[first[c].as_ref(), rest[c].as_ref()]).unwrap();
            assert_eq!(&parts, w, "column {c}");
        }
    }

    /// A later part that the whole would have typed differently is an error, not a silent
    /// conversion: an untyped null in an integer column, a string in a float column, a column
    /// more or less.
    #[test]
    fn a_part_that_would_change_a_type_is_refused() {
        let first = rows(&[vec![("a", Value::Int(1)), ("b", Value::Float(1.0))]]);
        let (schema, _) = first.to_arrays(OutputFile::Summary);
        let null_int = rows(&[vec![("a", Value::Null), ("b", Value::Float(1.0))]]);
        assert!(null_int.arrays_as(&schema).unwrap_err().contains("`a`"));
        let string = rows(&[vec![("a", Value::Int(1)), ("b", Value::Str("x".into()))]]);
        assert!(string.arrays_as(&schema).unwrap_err().contains("`b`"));
        let more = rows(&[vec![
            ("a", Value::Int(1)),
            ("b", Value::Null),
            ("c", Value::Null),
        ]]);
        assert!(more.arrays_as(&schema).unwrap_err().contains("`c`"));
        let fewer = rows(&[vec![("a", Value::Int(1))]]);
        assert!(
            fewer
                .arrays_as(&schema)
                .unwrap_err()
                .contains("`b` is missing")
        );
        let typed_nulls = rows(&[vec![("a", Value::NullInt), ("b", Value::Null)]]);
        assert!(typed_nulls.arrays_as(&schema).is_ok());
    }
}
