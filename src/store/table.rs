//! Small typed tables (one row per cell, or per time bin) written to Parquet. Columns keep the
//! order in which they are first seen. A column's type follows from the kind of its values —
//! typed nulls included, so a column has the same type whatever the data: Utf8 if any value is a
//! string, Boolean if any is a boolean, Float64 if any is a float (an untyped null counts as
//! one), else Int64. Every column is nullable; a missing value is a null.

use std::path::Path;
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
    pub fn write(
        &self,
        path: &Path,
        metadata: &[(String, String)],
        file: OutputFile,
    ) -> Result<(), StoreError> {
        let (schema, arrays) = self.to_arrays(file);
        write_columns(path, schema, arrays, metadata)
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

    /// The table's arrays typed as `schema` says (a later part of a file written in parts);
    /// `None` when its columns are not the schema's.
    pub fn arrays_as(&self, schema: &Schema) -> Option<Vec<ArrayRef>> {
        if schema.fields().len() != self.columns.len()
            || schema
                .fields()
                .iter()
                .zip(&self.columns)
                .any(|(f, c)| f.name() != c)
        {
            return None;
        }
        Some(
            schema
                .fields()
                .iter()
                .enumerate()
                .map(|(c, f)| column(&self.cells(c), Some(f.data_type())).1)
                .collect(),
        )
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

/// A column of `cells`, of type `ty` when given, else inferred (module documentation).
fn column(cells: &[&Value], ty: Option<&DataType>) -> (DataType, ArrayRef) {
    let any = |f: fn(&Value) -> bool| cells.iter().any(|v| f(v));
    let is = |t: DataType| ty == Some(&t);
    let inferred = ty.is_none();
    if is(DataType::Utf8) || (inferred && any(|v| matches!(v, Value::Str(_) | Value::NullStr))) {
        let mut b = StringBuilder::new();
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
        let mut b = BooleanBuilder::new();
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
        let mut b = Float64Builder::new();
        for v in cells {
            match v {
                Value::Float(f) => b.append_value(*f),
                Value::Int(i) => b.append_value(*i as f64),
                _ => b.append_null(),
            }
        }
        (DataType::Float64, Arc::new(b.finish()))
    } else {
        let mut b = Int64Builder::new();
        for v in cells {
            match v {
                Value::Int(i) => b.append_value(*i),
                _ => b.append_null(),
            }
        }
        (DataType::Int64, Arc::new(b.finish()))
    }
}
