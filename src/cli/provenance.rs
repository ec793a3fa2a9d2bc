//! Provenance of the Parquet files the trace commands write (`simulate --jobs-out`, `trace stats
//! -o`, `trace eet --*-out`, `trace penalties -o`), recorded as an experiment's result files
//! record theirs (docs/outputs.md): which schedlab wrote the file, from which trace — its path
//! and its content digest, in the same `schedlab.traces` form — and the command that writes it
//! again. The command leaves out the options that only say where output goes (`-o`,
//! `--jobs-out`, …, `--format`), so the same command writes byte-identical files anywhere.

use std::ffi::OsString;
use std::path::Path;

use serde_json::json;

use crate::cache::DigestCache;

/// Options that name where output goes or how stdout looks, never what a file holds: left out
/// of `schedlab.command`, each with its value.
const OUTPUT_OPTIONS: [&str; 9] = [
    "-o",
    "--output",
    "--jobs-out",
    "--users-out",
    "--heatmap-out",
    "--usage-out",
    "--svg",
    "--boxplot-svg",
    "--format",
];

/// `schedlab.version`, `schedlab.trace` (the path as given), `schedlab.traces` (JSON: that path
/// → `{"blake3", "bytes"}` of the file's content; `null` for what is not a regular file, such
/// as a pipe, whose content is gone once read) and `schedlab.command`.
pub fn trace_metadata(trace: &Path, source: &str) -> Vec<(String, String)> {
    let digest = std::fs::metadata(trace)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| DigestCache::in_memory().digest(trace).ok());
    vec![
        (
            "schedlab.version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        ("schedlab.trace".to_string(), source.to_string()),
        (
            "schedlab.traces".to_string(),
            json!({ source: digest }).to_string(),
        ),
        (
            "schedlab.command".to_string(),
            command(std::env::args_os().skip(1)),
        ),
    ]
}

/// `schedlab` and its arguments, shell-quoted, without the output options and their values.
fn command(args: impl IntoIterator<Item = OsString>) -> String {
    let mut words = vec!["schedlab".to_string()];
    let mut skip_value = false;
    for arg in args {
        let arg = arg.to_string_lossy().into_owned();
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if OUTPUT_OPTIONS.contains(&arg.as_str()) {
            skip_value = true;
            continue;
        }
        let attached = OUTPUT_OPTIONS.iter().any(|o| {
            arg.strip_prefix(o)
                .is_some_and(|rest| rest.starts_with('=') || (*o == "-o" && !rest.is_empty()))
        });
        if !attached {
            words.push(quote(&arg));
        }
    }
    words.join(" ")
}

/// A word as a POSIX shell reads it back: bare when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(args: &[&str]) -> String {
        command(args.iter().map(OsString::from))
    }

    #[test]
    fn the_command_leaves_out_where_output_goes() {
        assert_eq!(
            line(&["simulate", "t.swf", "-s", "easy", "--jobs-out", "x.parquet"]),
            "schedlab simulate t.swf -s easy"
        );
        assert_eq!(
            line(&[
                "trace",
                "stats",
                "t.swf",
                "-ox.parquet",
                "--format=json",
                "--by",
                "user"
            ]),
            "schedlab trace stats t.swf --by user"
        );
        assert_eq!(
            line(&[
                "trace",
                "eet",
                "t.swf",
                "--svg",
                "h.svg",
                "--output=o",
                "--cpus",
                "8"
            ]),
            "schedlab trace eet t.swf --cpus 8"
        );
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(
            line(&["simulate", "my trace.swf", "it's", ""]),
            r"schedlab simulate 'my trace.swf' 'it'\''s' ''"
        );
    }
}
