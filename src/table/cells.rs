//! The cells of a job table, whatever its file: CSV text (through the `csv` crate, gzip
//! sniffed from the magic bytes) or Parquet columns (through arrow), seen one row at a time as
//! [`Cell`]s of the columns the mapping names.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};

/// One cell as read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Num(f64),
    Text(&'a str),
    /// A typed timestamp, in epoch seconds; `utc` when the column names a time zone (else it
    /// is a local time, read in the mapping's offset).
    Time {
        secs: f64,
        utc: bool,
    },
}

impl Cell<'_> {
    /// The cell as an error shows it.
    pub fn shown(&self) -> String {
        match self {
            Cell::Null => "nothing (an empty cell)".to_string(),
            Cell::Num(v) => format!("{v}"),
            Cell::Text(t) => {
                let t: String = t.chars().take(60).collect();
                format!("{t:?}")
            }
            Cell::Time { secs, .. } => format!("the timestamp {secs} s"),
        }
    }
}

/// Whether CSV text is one of the ways tables write "no value".
fn is_null_text(t: &str) -> bool {
    let t = t.trim();
    t.is_empty()
        || ["na", "n/a", "nan", "none", "null", "nat"]
            .iter()
            .any(|n| t.eq_ignore_ascii_case(n))
}

/// A CSV table: its header and its records, read one at a time.
pub struct CsvTable {
    pub columns: Vec<String>,
    reader: csv::Reader<Box<dyn Read>>,
    record: csv::StringRecord,
}

/// What went wrong opening or reading a table, before the mapping looks at cells.
pub enum OpenError {
    Io(std::io::Error),
    /// A line of the file (0: none) and what is wrong.
    Format(u64, String),
}

impl CsvTable {
    /// Opens `path`; `quoting` reads `"…"` fields as CSV does (sacct's output has no quoting:
    /// a job name may hold a lone `"`).
    pub fn open(
        path: &Path,
        delimiter: u8,
        header: Option<&[String]>,
        quoting: bool,
    ) -> Result<Self, OpenError> {
        let mut file = std::fs::File::open(path).map_err(OpenError::Io)?;
        let mut magic = [0u8; 2];
        let n = file.read(&mut magic).map_err(OpenError::Io)?;
        let file = std::fs::File::open(path).map_err(OpenError::Io)?;
        let input: Box<dyn Read> = if n == 2 && magic == [0x1f, 0x8b] {
            Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
                file,
            )))
        } else {
            Box::new(file)
        };
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(header.is_none())
            .quoting(quoting)
            .flexible(true)
            .from_reader(input);
        let columns = match header {
            Some(h) => h.to_vec(),
            None => reader
                .headers()
                .map_err(csv_error)?
                .iter()
                .map(|c| c.trim().trim_start_matches('\u{feff}').to_string())
                .collect(),
        };
        Ok(CsvTable {
            columns,
            reader,
            record: csv::StringRecord::new(),
        })
    }

    /// Reads the next record; `Ok(None)` at the end. Returns its line.
    pub fn next(&mut self) -> Result<Option<u64>, OpenError> {
        match self.reader.read_record(&mut self.record) {
            Ok(true) => Ok(Some(self.record.position().map_or(0, |p| p.line()))),
            Ok(false) => Ok(None),
            Err(e) => Err(csv_error(e)),
        }
    }

    /// The current record's field count.
    pub fn len(&self) -> usize {
        self.record.len()
    }

    pub fn cell(&self, column: usize) -> Cell<'_> {
        match self.record.get(column) {
            None => Cell::Null,
            Some(t) if is_null_text(t) => Cell::Null,
            Some(t) => Cell::Text(t.trim()),
        }
    }
}

fn csv_error(e: csv::Error) -> OpenError {
    let line = e.position().map_or(0, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(e) => OpenError::Io(e),
        csv::ErrorKind::Utf8 { err, .. } => {
            OpenError::Format(line, format!("text that is not UTF-8 ({err})"))
        }
        other => OpenError::Format(line, format!("{other:?}")),
    }
}

/// A Parquet table, read a record batch at a time.
pub struct ParquetTable {
    pub columns: Vec<String>,
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    /// The batch's arrays by table column (only those read).
    arrays: Vec<Option<ArrayRef>>,
    row: usize,
}

impl ParquetTable {
    /// Opens the file, reading only `wanted` columns (names not in the file are reported by
    /// the caller from `columns`).
    pub fn open(path: &Path, wanted: &[&str]) -> Result<Self, OpenError> {
        use parquet::arrow::ProjectionMask;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let file = std::fs::File::open(path).map_err(OpenError::Io)?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| OpenError::Format(0, format!("not a readable Parquet file: {e}")))?;
        let schema = builder.schema().clone();
        let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let roots: Vec<usize> = columns
            .iter()
            .enumerate()
            .filter(|(_, c)| wanted.contains(&c.as_str()))
            .map(|(i, _)| i)
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(8192)
            .build()
            .map_err(|e| OpenError::Format(0, format!("not a readable Parquet file: {e}")))?;
        Ok(ParquetTable {
            arrays: vec![None; columns.len()],
            columns,
            reader,
            batch: None,
            row: 0,
        })
    }

    /// Moves to the next row; false at the end.
    pub fn next(&mut self) -> Result<bool, OpenError> {
        loop {
            if let Some(b) = &self.batch
                && self.row + 1 < b.num_rows()
            {
                self.row += 1;
                return Ok(true);
            }
            match self.reader.next() {
                None => return Ok(false),
                Some(Err(e)) => {
                    return Err(OpenError::Format(0, format!("damaged Parquet data: {e}")));
                }
                Some(Ok(batch)) => {
                    let schema = batch.schema();
                    for (i, name) in self.columns.iter().enumerate() {
                        self.arrays[i] =
                            schema.index_of(name).ok().map(|j| flatten(batch.column(j)));
                    }
                    let empty = batch.num_rows() == 0;
                    self.batch = Some(batch);
                    self.row = 0;
                    if !empty {
                        return Ok(true);
                    }
                }
            }
        }
    }

    pub fn cell(&self, column: usize) -> Cell<'_> {
        match self.arrays.get(column).and_then(Option::as_ref) {
            Some(a) => array_cell(a.as_ref(), self.row),
            None => Cell::Null,
        }
    }
}

/// Cell `i` of an arrow array of a type job tables use.
fn array_cell(a: &dyn Array, i: usize) -> Cell<'_> {
    if a.is_null(i) {
        return Cell::Null;
    }
    macro_rules! num {
        ($t:ty) => {
            Cell::Num(a.as_primitive::<$t>().value(i) as f64)
        };
    }
    let time = |v: i64, per_sec: f64, tz: &Option<Arc<str>>| Cell::Time {
        secs: v as f64 / per_sec,
        utc: tz.is_some(),
    };
    match a.data_type() {
        DataType::Int8 => num!(Int8Type),
        DataType::Int16 => num!(Int16Type),
        DataType::Int32 => num!(Int32Type),
        DataType::Int64 => num!(Int64Type),
        DataType::UInt8 => num!(UInt8Type),
        DataType::UInt16 => num!(UInt16Type),
        DataType::UInt32 => num!(UInt32Type),
        DataType::UInt64 => num!(UInt64Type),
        DataType::Float32 => num!(Float32Type),
        DataType::Float64 => {
            let v = a.as_primitive::<Float64Type>().value(i);
            if v.is_nan() { Cell::Null } else { Cell::Num(v) }
        }
        DataType::Boolean => Cell::Num(f64::from(u8::from(a.as_boolean().value(i)))),
        DataType::Utf8 => text_cell(a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => text_cell(a.as_string::<i64>().value(i)),
        DataType::Utf8View => text_cell(a.as_string_view().value(i)),
        DataType::Timestamp(unit, tz) => match unit {
            TimeUnit::Second => time(a.as_primitive::<TimestampSecondType>().value(i), 1.0, tz),
            TimeUnit::Millisecond => time(
                a.as_primitive::<TimestampMillisecondType>().value(i),
                1e3,
                tz,
            ),
            TimeUnit::Microsecond => time(
                a.as_primitive::<TimestampMicrosecondType>().value(i),
                1e6,
                tz,
            ),
            TimeUnit::Nanosecond => time(
                a.as_primitive::<TimestampNanosecondType>().value(i),
                1e9,
                tz,
            ),
        },
        _ => Cell::Text("<a value of an unsupported type>"),
    }
}

/// A dictionary-encoded column (pandas' categoricals) as the plain array of its values; any
/// other array as it is.
fn flatten(a: &ArrayRef) -> ArrayRef {
    if !matches!(a.data_type(), DataType::Dictionary(_, _)) {
        return Arc::clone(a);
    }
    let d = a.as_any_dictionary();
    let keys: arrow_array::UInt64Array = d
        .normalized_keys()
        .into_iter()
        .enumerate()
        .map(|(i, k)| (!a.is_null(i)).then_some(k as u64))
        .collect();
    arrow_select::take::take(d.values().as_ref(), &keys, None).unwrap_or_else(|_| Arc::clone(a))
}

fn text_cell(t: &str) -> Cell<'_> {
    if is_null_text(t) {
        Cell::Null
    } else {
        Cell::Text(t.trim())
    }
}
