//! A Parquet file written batch by batch with bounded memory: batches are gathered (merged every
//! few dozen, so that many small parts do not each keep their own buffers) until a row group's
//! worth of rows or bytes (or the end), then the row group's columns are encoded in parallel and
//! appended. Row groups fill by a fixed rule, so the same batches always give the same bytes;
//! and a file of many small parts (40,000 cells of 200 jobs) has a few large row groups rather
//! than one per part, whose metadata would otherwise grow with every part until the file closes.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowWriterOptions, compute_leaves};
use rayon::prelude::*;

use super::{AtomicFile, StoreError, footer, writer_properties};

/// Rows gathered before a row group is written.
pub const ROW_GROUP_ROWS: usize = 1 << 17;

/// Bytes of gathered rows after which a row group is written even if it holds fewer rows: a
/// file of many small parts (a few rows per cell) stops growing after this much.
pub const ROW_GROUP_BYTES: usize = 8 << 20;

/// Gathered batches merged into one when there are this many: each batch costs its columns'
/// buffers and headers beside its rows (a kilobyte or more for a one-row batch of 20 columns),
/// which would otherwise grow with every cell until the row group is written.
const MERGE_BATCHES: usize = 64;

/// Row-group metadata kept in memory before it goes to a temporary file (see [`footer`]).
const FOOTER_BUFFER_BYTES: usize = 256 << 10;

/// Zeros standing for the bytes already in the file ahead of a row group (never read: see
/// [`Splice`]).
static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

pub struct ParquetSink {
    file: AtomicFile,
    out: BufWriter<File>,
    /// Bytes written to `out` (the magic and the row groups so far).
    written: usize,
    /// The row groups' entries for the footer: in memory up to [`FOOTER_BUFFER_BYTES`], then
    /// in `footer_spill`.
    footer: Vec<u8>,
    footer_spill: Option<BufWriter<File>>,
    schema: SchemaRef,
    metadata: Vec<(String, String)>,
    appended: Vec<(String, String)>,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    /// Memory of the gathered batches' arrays.
    pending_bytes: usize,
    rows: i64,
    row_groups: usize,
    path: PathBuf,
}

/// What a row group's own writer writes: the bytes standing for what precedes the row group in
/// the file (that writer's magic and zeros) are dropped, the rest (the row group, its own
/// footer) kept, so that every offset in it is the row group's final one.
struct Splice {
    skip: usize,
    bytes: Vec<u8>,
}

impl std::io::Write for Splice {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let skipped = self.skip.min(buf.len());
        self.skip -= skipped;
        self.bytes.extend_from_slice(&buf[skipped..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ParquetSink {
    /// Starts `path` (appearing only on [`ParquetSink::finish`]) with `schema` and key-value
    /// `metadata`.
    pub fn create(
        path: &Path,
        schema: SchemaRef,
        metadata: &[(String, String)],
    ) -> Result<ParquetSink, StoreError> {
        let file = AtomicFile::create(path)?;
        let mut out = BufWriter::new(file.file()?);
        out.write_all(MAGIC).map_err(|e| io_error(path, e))?;
        Ok(ParquetSink {
            file,
            out,
            written: MAGIC.len(),
            footer: Vec::new(),
            footer_spill: None,
            schema,
            metadata: metadata.to_vec(),
            appended: Vec::new(),
            pending: Vec::new(),
            pending_rows: 0,
            pending_bytes: 0,
            rows: 0,
            row_groups: 0,
            path: path.to_path_buf(),
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Memory of the rows gathered and not yet written.
    pub fn pending_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Writes the gathered rows now as a row group (a writer of many files keeping their
    /// buffers within one budget: the aggregate node).
    pub fn write_row_group(&mut self) -> Result<(), StoreError> {
        self.flush()
    }

    /// Appends the rows of `columns` (in the order of the schema's fields).
    pub fn push_columns(&mut self, columns: Vec<ArrayRef>) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| super::jobs::parquet_error(&self.path, e))?;
        self.push(batch)
    }

    /// Appends the rows of `batch`, whose columns follow the sink's schema.
    pub fn push(&mut self, batch: RecordBatch) -> Result<(), StoreError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.pending_rows += batch.num_rows();
        self.pending_bytes += batch.get_array_memory_size();
        self.pending.push(batch);
        if self.pending_rows >= ROW_GROUP_ROWS || self.pending_bytes >= ROW_GROUP_BYTES {
            return self.flush();
        }
        if self.pending.len() >= MERGE_BATCHES {
            let merged = arrow_select::concat::concat_batches(&self.schema, &self.pending)
                .map_err(|e| super::jobs::parquet_error(&self.path, e))?;
            self.pending_bytes = merged.get_array_memory_size();
            self.pending = vec![merged];
        }
        Ok(())
    }

    /// Writes the gathered rows as one row group, its columns encoded in parallel.
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| super::jobs::parquet_error(&path, e);
        let batches = std::mem::take(&mut self.pending);
        self.pending_rows = 0;
        self.pending_bytes = 0;
        let width = self.schema.fields().len();
        let columns: Vec<ArrayRef> = (0..width)
            .map(|c| {
                let parts: Vec<&dyn arrow_array::Array> =
                    batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::concat::concat(&parts)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        drop(batches);
        let rows = columns.first().map_or(0, |c| c.len());
        let ordinal = i16::try_from(self.row_groups)
            .map_err(|_| err(&"more than 32,767 row groups in one file"))?;
        // The row group's own writer, positioned where the row group goes in the file.
        let splice = Splice {
            skip: self.written,
            bytes: Vec::new(),
        };
        let options = ArrowWriterOptions::new()
            .with_properties(writer_properties(&[]))
            .with_skip_arrow_metadata(true);
        let (mut writer, factory) =
            ArrowWriter::try_new_with_options(splice, self.schema.clone(), options)
                .and_then(ArrowWriter::into_serialized_writer)
                .map_err(|e| err(&e))?;
        let mut padding = self.written - MAGIC.len();
        while padding > 0 {
            let n = padding.min(ZEROS.len());
            writer.write_all(&ZEROS[..n]).map_err(|e| err(&e))?;
            padding -= n;
        }
        let writers = factory.create_column_writers(0).map_err(|e| err(&e))?;
        let chunks: Vec<_> = writers
            .into_par_iter()
            .zip(columns.par_iter().zip(self.schema.fields().par_iter()))
            .map(|(mut w, (column, field))| {
                for leaf in compute_leaves(field, column)? {
                    w.write(&leaf)?;
                }
                w.close()
            })
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        drop(columns);
        let mut group = writer.next_row_group().map_err(|e| err(&e))?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group).map_err(|e| err(&e))?;
        }
        group.close().map_err(|e| err(&e))?;
        let bytes = writer.into_inner().map_err(|e| err(&e))?.bytes;
        // `bytes`: the row group, then its footer, the footer's length and the magic.
        let tail = bytes
            .len()
            .checked_sub(8)
            .ok_or_else(|| err(&"no footer"))?;
        let footer_len = u32::from_le_bytes(bytes[tail..tail + 4].try_into().unwrap()) as usize;
        let footer_start = tail
            .checked_sub(footer_len)
            .ok_or_else(|| err(&"footer longer than the file"))?;
        self.out
            .write_all(&bytes[..footer_start])
            .map_err(|e| io_error(&path, e))?;
        self.written += footer_start;
        footer::row_group(&bytes[footer_start..tail], ordinal, &mut self.footer)
            .map_err(|e| err(&e))?;
        self.row_groups += 1;
        self.rows += rows as i64;
        if self.footer.len() >= FOOTER_BUFFER_BYTES {
            self.spill_footer()?;
        }
        Ok(())
    }

    /// Moves the row groups' footer entries gathered in memory to the temporary file.
    fn spill_footer(&mut self) -> Result<(), StoreError> {
        let io = |e| io_error(&self.path, e);
        if self.footer_spill.is_none() {
            let dir = self
                .file
                .path()
                .parent()
                .filter(|p| !p.as_os_str().is_empty());
            let spill = tempfile::tempfile_in(dir.unwrap_or(Path::new("."))).map_err(io)?;
            self.footer_spill = Some(BufWriter::new(spill));
        }
        let spill = self.footer_spill.as_mut().expect("created above");
        spill.write_all(&self.footer).map_err(io)?;
        self.footer.clear();
        Ok(())
    }

    /// Adds a key-value pair to the file's metadata (known only once the rows are written).
    pub fn append_metadata(&mut self, key: &str, value: &str) {
        self.appended.push((key.to_string(), value.to_string()));
    }

    /// Writes what is left, the footer, and moves the file into place.
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.flush()?;
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| super::jobs::parquet_error(&path, e);
        let io = |e| io_error(&path, e);
        // The footer of this file with no rows, as arrow-rs writes it: schema (with the Arrow
        // schema in the key-value metadata), key-value metadata, column orders.
        let (mut empty, _) = ArrowWriter::try_new(
            Vec::new(),
            self.schema.clone(),
            Some(writer_properties(&self.metadata)),
        )
        .and_then(ArrowWriter::into_serialized_writer)
        .map_err(|e| err(&e))?;
        for (key, value) in &self.appended {
            empty.append_key_value_metadata(parquet::file::metadata::KeyValue {
                key: key.clone(),
                value: Some(value.clone()),
            });
        }
        let empty = empty.into_inner().map_err(|e| err(&e))?;
        let template = &empty[MAGIC.len()..empty.len() - 8];
        let spilled: Box<dyn std::io::Read> = match self.footer_spill.take() {
            Some(spill) => {
                let mut spill = spill.into_inner().map_err(|e| io(e.into_error()))?;
                spill.seek(SeekFrom::Start(0)).map_err(io)?;
                Box::new(std::io::BufReader::new(spill))
            }
            None => Box::new(std::io::empty()),
        };
        let mut entries = std::io::Read::chain(spilled, self.footer.as_slice());
        let footer_len = footer::write_footer(
            template,
            self.rows,
            self.row_groups,
            &mut entries,
            &mut self.out,
        )
        .map_err(|e| match e {
            footer::FooterError::Io(e) => io(e),
            footer::FooterError::Format(e) => err(&e),
        })?;
        let footer_len = u32::try_from(footer_len).map_err(|_| err(&"footer over 4 GiB"))?;
        self.out
            .write_all(&footer_len.to_le_bytes())
            .and_then(|()| self.out.write_all(MAGIC))
            .and_then(|()| self.out.flush())
            .map_err(io)?;
        drop(self.out);
        self.file.commit()
    }
}

const MAGIC: &[u8; 4] = b"PAR1";

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}
