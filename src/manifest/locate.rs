//! Finding where a key path (`reports.gantt.cell`) is written in a manifest's text, for errors
//! about keys, which the parser does not locate. Keys are found in block style (`cell:` at the
//! start of a line) and in flow style (`{cell: …}`, `, cell: …`), each searched for after the
//! one before it.

/// The (line, column) of the last key of `path`, 1-based; `None` when it cannot be found.
pub fn key_path(text: &str, path: &str) -> Option<(u64, u64)> {
    let mut from = 0;
    let mut found = None;
    for segment in path.split('.') {
        // `scheduler[1]`: the key is `scheduler`.
        let key = segment.split('[').next().unwrap_or(segment);
        if key.is_empty() {
            continue;
        }
        let at = find_key(text, key, from)?;
        found = Some(at);
        from = at + key.len();
    }
    found.map(|at| position(text, at))
}

/// The byte offset of the first `key` at or after `from` written as a mapping key.
fn find_key(text: &str, key: &str, from: usize) -> Option<usize> {
    let mut start = from;
    while let Some(i) = text.get(start..)?.find(key) {
        let at = start + i;
        if is_key_at(text, at, key) {
            return Some(at);
        }
        start = at + key.len();
    }
    None
}

/// True when `key` at `at` is a whole mapping key: preceded (past spaces and an optional quote)
/// by the start of a line, `{`, `,` or a list dash, and followed by `:`.
fn is_key_at(text: &str, at: usize, key: &str) -> bool {
    let bytes = text.as_bytes();
    let mut end = at + key.len();
    if bytes.get(end).is_some_and(|&b| b == b'"' || b == b'\'') {
        end += 1;
    }
    while bytes.get(end) == Some(&b' ') {
        end += 1;
    }
    if bytes.get(end) != Some(&b':') {
        return false;
    }
    let mut before = at;
    if before > 0 && (bytes[before - 1] == b'"' || bytes[before - 1] == b'\'') {
        before -= 1;
    }
    while before > 0 && (bytes[before - 1] == b' ' || bytes[before - 1] == b'\t') {
        before -= 1;
    }
    before == 0 || matches!(bytes[before - 1], b'\n' | b'{' | b',' | b'-')
}

fn position(text: &str, at: usize) -> (u64, u64) {
    let before = &text[..at];
    let line = before.matches('\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..at].chars().count() as u64 + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_in_block_and_flow_style() {
        let text = "reports:\n  gantt: {hours: 2, cell: nope}\nworkloads:\n  kth:\n    window: {start: 1}\n";
        assert_eq!(key_path(text, "reports.gantt.cell"), Some((2, 21)));
        assert_eq!(key_path(text, "workloads.kth.window"), Some((5, 5)));
        // A key inside a value is not a key.
        assert_eq!(key_path("a: {b: xcell: 1}\n", "a.cell"), None);
        assert_eq!(key_path(text, "reports.nothing"), None);
    }
}
