//! A Parquet footer assembled from row groups written one at a time, so that a file's writer
//! holds no per-row-group metadata in memory (arrow-rs's `SerializedFileWriter` keeps every
//! row group's decoded metadata, about 1 KB per column chunk, until the file closes).
//!
//! [`super::ParquetSink`] writes each row group with a writer of its own whose footer describes
//! that row group alone, at its final offsets; [`row_group`] cuts the row group's entry out of
//! that footer (renumbering its ordinal) for the sink to keep on disk, and [`write_footer`] puts
//! the file's footer together: the footer of the same file with no rows (schema, key-value
//! metadata, column orders, as arrow-rs writes them) with the row count and the row groups
//! streamed in.
//!
//! Only the framing of the Thrift compact protocol, in which Parquet encodes its footer
//! (parquet-format's `parquet.thrift`, `FileMetaData`), is read here, and only three fields are
//! touched: `FileMetaData.num_rows` (3) and `FileMetaData.row_groups` (4), `RowGroup.ordinal`
//! (7). Everything else is copied byte for byte.

use std::io::{self, Read, Write};
use std::ops::Range;

/// Compact-protocol type codes (Thrift's `TCompactProtocol`).
const STOP: u8 = 0;
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

const FILE_NUM_ROWS: i16 = 3;
const FILE_ROW_GROUPS: i16 = 4;
const ROW_GROUP_ORDINAL: i16 = 7;

/// A field of a struct: its id, its type code and where its value lies.
struct Field {
    id: i16,
    kind: u8,
    value: Range<usize>,
}

fn malformed(what: &str) -> String {
    format!("malformed Parquet footer written by arrow-rs: {what}")
}

fn byte(b: &[u8], pos: &mut usize) -> Result<u8, String> {
    let v = *b.get(*pos).ok_or_else(|| malformed("truncated"))?;
    *pos += 1;
    Ok(v)
}

fn varint(b: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = byte(b, pos)?;
        v |= u64::from(x & 0x7f) << shift;
        if x & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(malformed("varint too long"))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn advance(b: &[u8], pos: &mut usize, n: usize) -> Result<(), String> {
    *pos = pos
        .checked_add(n)
        .filter(|&end| end <= b.len())
        .ok_or_else(|| malformed("truncated"))?;
    Ok(())
}

/// A list's (or set's) element count and element type.
fn list_header(b: &[u8], pos: &mut usize) -> Result<(usize, u8), String> {
    let h = byte(b, pos)?;
    let size = match h >> 4 {
        15 => varint(b, pos)? as usize,
        n => usize::from(n),
    };
    Ok((size, h & 0x0f))
}

fn put_list_header(out: &mut Vec<u8>, size: usize, kind: u8) {
    if size < 15 {
        out.push(((size as u8) << 4) | kind);
    } else {
        out.push(0xf0 | kind);
        put_varint(out, size as u64);
    }
}

/// Moves past one value of type `kind`; `element` for a list's, set's or map's values, where a
/// boolean is a byte of its own (a field's boolean is in its type code).
fn skip(b: &[u8], pos: &mut usize, kind: u8, element: bool) -> Result<(), String> {
    match kind {
        BOOL_TRUE | BOOL_FALSE if element => advance(b, pos, 1),
        BOOL_TRUE | BOOL_FALSE => Ok(()),
        BYTE => advance(b, pos, 1),
        I16 | I32 | I64 => varint(b, pos).map(drop),
        DOUBLE => advance(b, pos, 8),
        BINARY => {
            let n = varint(b, pos)? as usize;
            advance(b, pos, n)
        }
        LIST | SET => {
            let (n, elem) = list_header(b, pos)?;
            (0..n).try_for_each(|_| skip(b, pos, elem, true))
        }
        MAP => {
            let n = varint(b, pos)? as usize;
            if n > 0 {
                let kinds = byte(b, pos)?;
                for _ in 0..n {
                    skip(b, pos, kinds >> 4, true)?;
                    skip(b, pos, kinds & 0x0f, true)?;
                }
            }
            Ok(())
        }
        STRUCT => fields(b, pos).map(drop),
        _ => Err(malformed("unknown type code")),
    }
}

/// The fields of the struct starting at `pos`, leaving `pos` after its stop byte.
fn fields(b: &[u8], pos: &mut usize) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    let mut last = 0i16;
    loop {
        let h = byte(b, pos)?;
        if h == STOP {
            return Ok(out);
        }
        let kind = h & 0x0f;
        let id = match h >> 4 {
            0 => i16::try_from(unzigzag(varint(b, pos)?)).map_err(|_| malformed("field id"))?,
            delta => last + i16::from(delta),
        };
        last = id;
        let start = *pos;
        skip(b, pos, kind, false)?;
        out.push(Field {
            id,
            kind,
            value: start..*pos,
        });
    }
}

fn put_field_header(out: &mut Vec<u8>, last: &mut i16, id: i16, kind: u8) {
    match id - *last {
        delta @ 1..=15 => out.push(((delta as u8) << 4) | kind),
        _ => {
            out.push(kind);
            put_varint(out, zigzag(i64::from(id)));
        }
    }
    *last = id;
}

/// Appends to `out` the one row group of the file footer `footer` (a `FileMetaData`, without
/// the length and magic that follow it), its ordinal set to `ordinal`.
pub fn row_group(footer: &[u8], ordinal: i16, out: &mut Vec<u8>) -> Result<(), String> {
    let mut pos = 0;
    let file = fields(footer, &mut pos)?;
    let groups = file
        .iter()
        .find(|f| f.id == FILE_ROW_GROUPS && f.kind == LIST)
        .ok_or_else(|| malformed("no row groups"))?;
    let mut pos = groups.value.start;
    let (n, kind) = list_header(footer, &mut pos)?;
    if n != 1 || kind != STRUCT {
        return Err(malformed("expected one row group"));
    }
    let group = fields(footer, &mut pos)?;
    let mut last = 0;
    for field in group.iter().filter(|f| f.id != ROW_GROUP_ORDINAL) {
        put_field_header(out, &mut last, field.id, field.kind);
        out.extend_from_slice(&footer[field.value.clone()]);
    }
    // The ordinal is the last field of `RowGroup`, so it goes last and the ids stay ascending.
    put_field_header(out, &mut last, ROW_GROUP_ORDINAL, I16);
    put_varint(out, zigzag(i64::from(ordinal)));
    out.push(STOP);
    Ok(())
}

/// Writes to `out` the footer `template` (an empty file's `FileMetaData`) with `num_rows` rows
/// and the `count` row groups read from `row_groups` (as [`row_group`] wrote them, in order);
/// returns the footer's length.
pub fn write_footer(
    template: &[u8],
    num_rows: i64,
    count: usize,
    row_groups: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<u64, FooterError> {
    let mut pos = 0;
    let file = fields(template, &mut pos).map_err(FooterError::Format)?;
    let mut head = Vec::new();
    let mut last = 0;
    let mut streamed = 0;
    for field in &file {
        put_field_header(&mut head, &mut last, field.id, field.kind);
        match field.id {
            FILE_NUM_ROWS => put_varint(&mut head, zigzag(num_rows)),
            FILE_ROW_GROUPS => {
                put_list_header(&mut head, count, STRUCT);
                out.write_all(&head)?;
                streamed = head.len() as u64 + io::copy(row_groups, out)?;
                head.clear();
            }
            _ => head.extend_from_slice(&template[field.value.clone()]),
        }
    }
    head.push(STOP);
    out.write_all(&head)?;
    Ok(streamed + head.len() as u64)
}

#[derive(Debug, thiserror::Error)]
pub enum FooterError {
    #[error("{0}")]
    Format(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_headers_round_trip_short_and_long_deltas() {
        let mut b = Vec::new();
        let mut last = 0;
        put_field_header(&mut b, &mut last, 1, I32);
        put_varint(&mut b, zigzag(-3));
        put_field_header(&mut b, &mut last, 40, BINARY);
        put_varint(&mut b, 2);
        b.extend_from_slice(b"hi");
        put_field_header(&mut b, &mut last, 41, BOOL_TRUE);
        put_field_header(&mut b, &mut last, 42, LIST);
        put_list_header(&mut b, 20, BOOL_FALSE);
        b.extend(std::iter::repeat_n(2u8, 20));
        b.push(STOP);
        let mut pos = 0;
        let f = fields(&b, &mut pos).unwrap();
        assert_eq!(pos, b.len());
        let ids: Vec<_> = f.iter().map(|f| (f.id, f.kind)).collect();
        assert_eq!(ids, [(1, I32), (40, BINARY), (41, BOOL_TRUE), (42, LIST)]);
        let mut p = f[0].value.start;
        assert_eq!(unzigzag(varint(&b, &mut p).unwrap()), -3);
        assert_eq!(&b[f[1].value.clone()][1..], b"hi");
        assert!(f[2].value.is_empty());
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let b = [0x15u8, 0x80];
        assert!(fields(&b, &mut 0).is_err());
        assert!(fields(&[0x18, 0x05, b'a'], &mut 0).is_err());
    }
}
