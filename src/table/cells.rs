//! The cells of a job table, whatever its file: CSV text (through the `csv` crate, gzip
//! sniffed from the magic bytes), text without quoting such as `sacct --parsable2` (split at
//! the delimiter line by line, without the `csv` crate: a million-line dump is read in a
//! buffer per line and no copy per cell) or Parquet columns (through arrow), seen one row at a
//! time as [`Cell`]s of the columns the mapping names.

use std::io::{BufRead, Read};
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

/// `t` without white space around it, at no cost for text that has none (most cells).
pub(super) fn trim(t: &str) -> &str {
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(a), Some(b)) if a.is_ascii_graphic() && b.is_ascii_graphic() => t,
        _ => t.trim(),
    }
}

/// Whether CSV text, trimmed, is one of the ways tables write "no value".
fn is_null_text(t: &str) -> bool {
    // Every "no value" word is at most 4 letters: most cells are told apart by length alone.
    t.len() <= 4
        && (t.is_empty()
            || ["na", "n/a", "nan", "none", "null", "nat"]
                .iter()
                .any(|n| t.eq_ignore_ascii_case(n)))
}

/// A CSV table: its header and its records, read one at a time.
pub struct CsvTable {
    pub columns: Vec<String>,
    records: Records,
}

enum Records {
    /// Quoted CSV, through the `csv` crate.
    Csv {
        reader: csv::Reader<Box<dyn Read>>,
        record: csv::StringRecord,
    },
    /// Text without quoting: lines split at the delimiter.
    Lines(Lines),
}

/// Text without quoting read line by line, as the `csv` crate reads it with quoting off:
/// `\n` or `\r\n` ends a line, empty lines are skipped, a line's fields are the text between
/// delimiters; the text must be UTF-8 (the same error as the `csv` crate's).
struct Lines {
    input: std::io::BufReader<Box<dyn Read>>,
    delimiter: u8,
    /// The bytes of the line being read.
    buf: Vec<u8>,
    /// The current line, without its end (`buf` once checked to be UTF-8; its storage goes
    /// back to `buf` for the next line).
    text: String,
    /// Where each field of `buf` ends (the next starts one byte later).
    ends: Vec<usize>,
    /// Lines read (1-based number of the current one).
    line: u64,
}

impl Lines {
    /// Reads the next non-empty line; `Ok(None)` at the end. Returns its line number.
    fn next(&mut self) -> Result<Option<u64>, OpenError> {
        self.buf = std::mem::take(&mut self.text).into_bytes();
        loop {
            self.buf.clear();
            self.ends.clear();
            if self.read_line().map_err(OpenError::Io)? == 0 {
                return Ok(None);
            }
            self.line += 1;
            // A byte-order mark opening the text is no part of it (as for the `csv` crate).
            if self.line == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
                self.ends.retain(|end| *end >= 3);
                self.ends.iter_mut().for_each(|end| *end -= 3);
            }
            // The `\n` is never among the ends; a `\r` is when it is the delimiter.
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
                if self.ends.last() == Some(&self.buf.len()) {
                    self.ends.pop();
                }
            }
            if !self.buf.is_empty() {
                break;
            }
        }
        self.ends.push(self.buf.len());
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(text) => self.text = text,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let field = self.ends.iter().take_while(|end| **end < at).count();
                let start = if field == 0 {
                    0
                } else {
                    self.ends[field - 1] + 1
                };
                return Err(OpenError::Format(
                    self.line,
                    format!(
                        "text that is not UTF-8 (invalid utf-8: invalid UTF-8 in field {field} near byte index {})",
                        at - start
                    ),
                ));
            }
        }
        Ok(Some(self.line))
    }

    /// Appends the input up to and including the next `\n` (or to its end) to `buf`, as
    /// `read_until` does, and where the delimiter stands in it to `ends`, in the same pass over
    /// the bytes. Returns the count of bytes read.
    fn read_line(&mut self) -> std::io::Result<usize> {
        let mut read = 0;
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let base = self.buf.len();
            let (done, used) = match scan_line(available, self.delimiter, base, &mut self.ends) {
                Some(end) => (true, end + 1),
                None => (false, available.len()),
            };
            self.buf.extend_from_slice(&available[..used]);
            self.input.consume(used);
            read += used;
            if done || used == 0 {
                return Ok(read);
            }
        }
    }

    fn get(&self, field: usize) -> Option<&str> {
        let end = *self.ends.get(field)?;
        let start = if field == 0 {
            0
        } else {
            self.ends[field - 1] + 1
        };
        // Split at an ASCII byte: whole characters on both sides.
        self.text.get(start..end)
    }
}

/// Where the first `\n` of `bytes` stands, if anywhere; appends to `ends` where `delimiter`
/// stands before it, plus `base`. A word of 8 bytes at a time: a line of a sacct dump has ~200
/// bytes and ~20 delimiters, and finding them a byte at a time, then the line's end apart, was
/// a sixth of reading the dump.
fn scan_line(bytes: &[u8], delimiter: u8, base: usize, ends: &mut Vec<usize>) -> Option<usize> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // The high bit of each byte of `x` that is zero, exactly: no carry crosses bytes, as the
    // low 7 bits are added apart.
    let zeros = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let delimiters = u64::from_le_bytes([delimiter; 8]);
    let newlines = u64::from_le_bytes([b'\n'; 8]);
    let mut push = |mut found: u64, at: usize| {
        while found != 0 {
            ends.push(base + at + found.trailing_zeros() as usize / 8);
            found &= found - 1;
        }
    };
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let found = zeros(word ^ delimiters);
        let newline = zeros(word ^ newlines);
        if newline != 0 {
            // Only the delimiters before the line's end.
            let end = newline.trailing_zeros() as usize / 8;
            push(found & ((1u64 << (end * 8)) - 1), at);
            return Some(at + end);
        }
        push(found, at);
        at += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b'\n' {
            return Some(at + i);
        }
        if b == delimiter {
            ends.push(base + at + i);
        }
    }
    None
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
        if !quoting {
            let mut lines = Lines {
                input: std::io::BufReader::with_capacity(1 << 18, input),
                delimiter,
                buf: Vec::new(),
                text: String::new(),
                ends: Vec::new(),
                line: 0,
            };
            let columns = match header {
                Some(h) => h.to_vec(),
                None => match lines.next()? {
                    None => Vec::new(),
                    Some(_) => (0..lines.ends.len())
                        .map(|i| {
                            let c = lines.get(i).unwrap_or_default();
                            c.trim().trim_start_matches('\u{feff}').to_string()
                        })
                        .collect(),
                },
            };
            return Ok(CsvTable {
                columns,
                records: Records::Lines(lines),
            });
        }
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
            records: Records::Csv {
                reader,
                record: csv::StringRecord::new(),
            },
        })
    }

    /// Reads the next record; `Ok(None)` at the end. Returns its line.
    pub fn next(&mut self) -> Result<Option<u64>, OpenError> {
        match &mut self.records {
            Records::Csv { reader, record } => match reader.read_record(record) {
                Ok(true) => Ok(Some(record.position().map_or(0, |p| p.line()))),
                Ok(false) => Ok(None),
                Err(e) => Err(csv_error(e)),
            },
            Records::Lines(lines) => lines.next(),
        }
    }

    /// The current record's field count.
    pub fn len(&self) -> usize {
        match &self.records {
            Records::Csv { record, .. } => record.len(),
            Records::Lines(lines) => lines.ends.len(),
        }
    }

    pub fn cell(&self, column: usize) -> Cell<'_> {
        let text = match &self.records {
            Records::Csv { record, .. } => record.get(column),
            Records::Lines(lines) => lines.get(column),
        };
        match text.map(trim) {
            None => Cell::Null,
            Some(t) if is_null_text(t) => Cell::Null,
            Some(t) => Cell::Text(t),
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
    let t = trim(t);
    if is_null_text(t) {
        Cell::Null
    } else {
        Cell::Text(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_delimiters_are_found_as_a_byte_at_a_time_finds_them() {
        // What `scan_line` gives, a byte at a time.
        let naive = |line: &[u8], delimiter: u8| {
            let end = line.iter().position(|&b| b == b'\n');
            let ends: Vec<usize> = line[..end.unwrap_or(line.len())]
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == delimiter)
                .map(|(i, _)| i + 5)
                .collect();
            (end, ends)
        };
        let lines: [&[u8]; 9] = [
            b"",
            b"|",
            b"a|b",
            b"||||||||||||||||||",
            b"100|100|alice|physics|cpu|normal|2026-10-01T00:00:00|x",
            // Bytes next to the delimiter's value (| is 0x7c) and high bytes (UTF-8).
            "{}|}{|\x7d\x7b|caf\u{e9}|\u{20ac}|\u{ff5c}|".as_bytes(),
            b"\x7c\xfc\x7d\x7b\x00\xff\x7c\x7c\x80\x7c",
            b"a|b|c\r\nd|e|f\n",
            b"0123456|\n|x|\n\n|",
        ];
        for line in lines {
            for delimiter in [b'|', b',', b'\t', b'\n', b'\r', 0, 0xff] {
                let mut ends = Vec::new();
                let end = scan_line(line, delimiter, 5, &mut ends);
                assert_eq!((end, ends), naive(line, delimiter), "{line:?} {delimiter}");
            }
        }
        // Hand-worked: a delimiter and then a newline at every offset of a 17-byte line, across
        // both words and the tail.
        for at in 0..16 {
            for nl in at + 1..17 {
                let mut line = vec![b'x'; 17];
                line[at] = b'|';
                line[nl] = b'\n';
                let mut ends = Vec::new();
                assert_eq!(scan_line(&line, b'|', 0, &mut ends), Some(nl));
                assert_eq!(ends, [at]);
                let mut ends = Vec::new();
                line[at] = b'x';
                line[nl] = b'|';
                line[at] = b'\n';
                assert_eq!(scan_line(&line, b'|', 0, &mut ends), Some(at));
                assert_eq!(ends, [0usize; 0]);
            }
        }
    }
}
