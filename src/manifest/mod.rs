//! Experiment manifests (`experiments/*.yaml`): parse exactly, then resolve once into validated
//! types (docs/manifest.md). Pure apart from reading the manifest and checking that the traces
//! it names exist.

// A manifest error carries its snippet and hint; it is built once, on a cold path.
#![allow(clippy::result_large_err)]

mod axis;
mod clusters;
mod ctx;
mod error;
mod expected_capacity;
mod grid;
mod locate;
pub mod model;
mod order;
pub mod python_policy;
pub mod queues;
pub mod raw;
pub mod reservations;
mod resolve;
pub mod synthetic;
mod topology;
pub mod trust;
mod units;
pub mod window;

pub use error::{ManifestError, did_you_mean};
pub use model::{
    Cell, ClusterSpec, Limits, Manifest, MetricsSpec, NodeClassSpec, SchedulerSpec,
    TopologyClusterSpec, TopologySpec, TransformSpec, WorkloadSource, WorkloadSpec,
};
pub use raw::RawManifest;
pub use reservations::{ReservationSpec, Width};
pub use units::parse_memory_kb;

use std::cell::RefCell;
use std::path::Path;

use ctx::Ctx;

/// Reads, parses and resolves the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| ManifestError::new(&file, "", format!("cannot read the file: {e}")))?;
    let text = String::from_utf8(bytes.clone()).map_err(|e| not_utf8(&file, &bytes, &e))?;
    let base_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".yaml").unwrap_or(&stem).to_string();
    load_str(&text, &file, base_dir, &stem)
}

/// Parses and resolves manifest text that is not a file (`file` names it in messages; paths
/// in it are relative to `base_dir`; `stem` stands for the file name): how the Python
/// package's `simulate` reads a workload mapping with the manifest's own code.
pub fn load_str(
    text: &str,
    file: &str,
    base_dir: &Path,
    stem: &str,
) -> Result<Manifest, ManifestError> {
    let raw = parse_str(text, file)?;
    let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
    resolve::resolve(
        raw,
        &Ctx {
            file,
            text,
            base_dir,
        },
        hash,
        stem,
    )
}

/// An error at key path `path` (ending in `key`) of the loaded manifest `m`, located in its
/// text: for checks made after loading (`execute::selection`).
pub fn key_error_in(m: &Manifest, path: &str, key: &str, message: String) -> ManifestError {
    let file = m.path.display().to_string();
    Ctx {
        file: &file,
        text: &m.text,
        base_dir: Path::new("."),
    }
    .key_error(path, key, message)
}

/// The error for a manifest that is not UTF-8, at the first byte that is not.
fn not_utf8(file: &str, bytes: &[u8], e: &std::string::FromUtf8Error) -> ManifestError {
    let valid = &bytes[..e.utf8_error().valid_up_to()];
    let line = valid.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&valid[line_start..])
        .chars()
        .count() as u64
        + 1;
    let bad = bytes[valid.len()];
    ManifestError::new(
        file,
        "",
        format!("the file is not valid UTF-8 (byte 0x{bad:02x})"),
    )
    .at(line, column)
    .with_source(&String::from_utf8_lossy(bytes))
    .hint("save the manifest as UTF-8 (it may have been written in Latin-1 or UTF-16)")
}

/// Parses manifest text (`file` names it in messages). Unknown keys, wrong types, duplicate keys
/// and YAML syntax errors are reported with their location and key path.
pub fn parse_str(text: &str, file: &str) -> Result<RawManifest, ManifestError> {
    // The whole document is checked as YAML first: deserializing stops at the first value it
    // cannot use, so an unclosed `{` whose continuation folds into a value would otherwise be
    // reported as a bad value instead of the syntax error it is.
    if let Err(e) = serde_saphyr::from_str::<serde::de::IgnoredAny>(text)
        // Duplicate keys are reported below, with their key path.
        && !plain_message(&e.to_string()).starts_with("duplicate mapping key")
    {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        return Err(ManifestError::new(
            file,
            "",
            format!("YAML syntax error: {}", plain_message(&e.to_string())),
        )
        .at(line, column)
        .with_source(text)
        .hint("check the brackets, quotes and indentation up to this point"));
    }
    let key_path = RefCell::new(String::new());
    let parsed = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            *key_path.borrow_mut() = e.path().to_string();
            e.into_inner()
        })
    });
    parsed.map_err(|e| {
        let path = key_path.into_inner();
        // `.value` is the inside of a located (Spanned) value: not a key the user wrote.
        let path = if path == "." {
            String::new()
        } else {
            path.replace(".?", "").replace(".value", "")
        };
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let (message, mut hint) = reword(&plain_message(&e.to_string()), text, line, column);
        if hint.is_none() {
            hint = suggestion(&message);
        }
        let err = ManifestError::new(file, path, message)
            .at(line, column)
            .with_source(text);
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    })
}

/// serde-saphyr's message without its own `error: line L column C:` prefix and snippet.
fn plain_message(display: &str) -> String {
    let first = display.lines().next().unwrap_or(display);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest = match first.strip_prefix("line ") {
        Some(r) => r.split_once(": ").map_or(first, |(_, m)| m),
        None => first,
    };
    rest.to_string()
}

/// Rewords parser messages meant for programmers into ones meant for manifest authors.
fn reword(message: &str, text: &str, line: u64, column: u64) -> (String, Option<String>) {
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set ").next().unwrap_or(rest);
        return (
            format!("`{key}` is defined twice"),
            Some("each key and name may appear once in a mapping".into()),
        );
    }
    let expected = match message {
        "invalid u32" | "invalid u64" => Some("a non-negative integer"),
        "invalid i32" | "invalid i64" => Some("an integer"),
        "invalid f64" => Some("a number"),
        _ => None,
    };
    match expected {
        Some(what) => (
            format!("expected {what}, found {}", token_at(text, line, column)),
            None,
        ),
        None => (message.to_string(), None),
    }
}

/// The scalar written at (line, column), for messages.
fn token_at(text: &str, line: u64, column: u64) -> String {
    let Some(l) = text.lines().nth(line.saturating_sub(1) as usize) else {
        return "?".into();
    };
    let rest: String = l.chars().skip(column.saturating_sub(1) as usize).collect();
    let token: String = rest
        .chars()
        .take_while(|c| !matches!(c, ',' | '}' | ']' | '#'))
        .collect();
    format!("`{}`", token.trim())
}

/// A did-you-mean for serde's "unknown field `x`, expected one of a, b" and "unknown variant"
/// messages.
fn suggestion(message: &str) -> Option<String> {
    let (word, candidates) = if let Some(r) = message.strip_prefix("unknown field `") {
        r.split_once('`')?
    } else if let Some(r) = message.strip_prefix("unknown variant `") {
        r.split_once('`')?
    } else {
        return None;
    };
    let list = candidates.split_once("expected ").map(|(_, l)| l)?;
    let list = list.strip_prefix("one of ").unwrap_or(list);
    let names: Vec<String> = list
        .split(',')
        .map(|c| c.trim().trim_matches('`').to_string())
        .collect();
    did_you_mean(word, names.iter().map(String::as_str)).map(|s| format!("did you mean `{s}`?"))
}

/// The JSON Schema of manifests (committed as docs/manifest.schema.json).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(RawManifest);
    serde_json::to_string_pretty(&schema).expect("schema serializes") + "\n"
}
