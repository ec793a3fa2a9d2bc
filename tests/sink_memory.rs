//! Issue 16, a cold run's memory flat in finished cells: the result files' writer
//! (`store::ParquetSink`, which the aggregate node writes every experiment file with) keeps no
//! memory per row group written. arrow-rs's own file writer keeps each row group's metadata,
//! about 1 KB per column chunk, until the file closes; a run of 40,000 cells writes thousands
//! of row groups. Heap in use is counted exactly by a counting allocator — this file holds one
//! test, so that no other test allocates beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use schedlab::store::ParquetSink;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// As wide as the experiment's `jobs.parquet` (34 columns), with strings among them.
const COLUMNS: usize = 34;
const ROWS: usize = 200;

fn schema() -> Arc<Schema> {
    let fields: Vec<Field> = (0..COLUMNS)
        .map(|c| match c % 5 {
            0 => Field::new(format!("s{c}"), DataType::Utf8, false),
            _ => Field::new(format!("i{c}"), DataType::Int64, false),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

fn batch(schema: &Arc<Schema>, group: usize) -> RecordBatch {
    let columns: Vec<ArrayRef> = (0..COLUMNS)
        .map(|c| -> ArrayRef {
            let values = (0..ROWS).map(move |r| (group * ROWS + r) as i64 * (c as i64 + 1));
            match c % 5 {
                0 => Arc::new(StringArray::from_iter_values(
                    values.map(|v| format!("cell-{v}")),
                )),
                _ => Arc::new(Int64Array::from_iter_values(values)),
            }
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns).unwrap()
}

/// Writes `groups` row groups and returns the most heap in use after any of them was written
/// (between row groups: what the writer keeps, not the transient cost of encoding one), then
/// checks the file reads back whole and in order.
fn heap_kept(groups: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.parquet");
    let schema = schema();
    let mut sink = ParquetSink::create(&path, schema.clone(), &[("k".into(), "v".into())]).unwrap();
    let mut most = 0;
    for group in 0..groups {
        sink.push(batch(&schema, group)).unwrap();
        sink.write_row_group().unwrap();
        most = most.max(LIVE.load(Ordering::Relaxed));
    }
    sink.append_metadata("after", "rows");
    sink.finish().unwrap();

    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
    let metadata = reader.metadata().clone();
    assert_eq!(metadata.num_row_groups(), groups);
    assert_eq!(metadata.file_metadata().num_rows(), (groups * ROWS) as i64);
    let kv: Vec<_> = metadata
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|kv| kv.key.clone())
        .collect();
    assert!(
        kv.contains(&"k".to_string()) && kv.contains(&"after".to_string()),
        "{kv:?}"
    );
    for (i, group) in metadata.row_groups().iter().enumerate() {
        assert_eq!(group.ordinal(), Some(i as i32));
        assert_eq!(group.num_rows(), ROWS as i64);
    }
    let mut next = 0i64;
    for b in reader.build().unwrap() {
        let b = b.unwrap();
        let ids = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let names = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        for r in 0..b.num_rows() {
            assert_eq!(ids.value(r), next * 2);
            assert_eq!(names.value(r), format!("cell-{next}"));
            next += 1;
        }
    }
    assert_eq!(next, (groups * ROWS) as i64);
    most
}

#[test]
fn the_result_writer_keeps_nothing_per_row_group() {
    let small = heap_kept(100);
    let large = heap_kept(600);
    // arrow-rs's writer kept ~0.95 KB per column chunk: 500 more row groups of 34 columns,
    // ~16 MB. The sink keeps its row groups' footer entries (~0.2 KB a chunk serialized) in
    // memory up to 256 KiB, then on disk; what remains is noise of a few kilobytes.
    let allowance = 512 << 10;
    assert!(
        large.saturating_sub(small) < allowance,
        "heap kept between row groups: {small} bytes after 100 row groups, {large} after 600 \
         (allowed growth {allowance})"
    );
}
