//! Where a value is in a JSON document, for located errors: serde_json's tree keeps no
//! positions, so on an error the reader walks the text again to the value's path. Only error
//! paths pay for it.

use std::fmt;

/// A JSON syntax error as the readers report it: its line, its column and serde_json's message
/// without the " at line L column C" that the error's location already says.
pub fn syntax(e: &serde_json::Error) -> (u64, u64, String) {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    (e.line() as u64, e.column() as u64, message)
}

/// One step of a path into a JSON document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A path shown as users read it: `jobs[3].subtime`, `profiles["a b"].type`.
pub struct Shown<'a>(pub &'a [Seg<'a>]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "the document");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}]")?,
                Seg::Key(k) if is_identifier(k) && i == 0 => write!(f, "{k}")?,
                Seg::Key(k) if is_identifier(k) => write!(f, ".{k}")?,
                Seg::Key(k) => write!(f, "[{}]", serde_json::Value::from(*k))?,
            }
        }
        Ok(())
    }
}

fn is_identifier(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
pub fn line_column(text: &[u8], offset: usize) -> (u64, u64) {
    let before = &text[..offset.min(text.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count() as u64;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = 1 + String::from_utf8_lossy(&before[start..]).chars().count() as u64;
    (line, column)
}

/// The byte offset of the value at `path` in `text` (a valid JSON document); where a step is
/// not found (a missing key), the offset of the deepest value that was.
pub fn locate(text: &[u8], path: &[Seg<'_>]) -> usize {
    let mut s = Scanner { text, pos: 0 };
    s.space();
    let mut found = s.pos;
    for seg in path {
        let ok = match (seg, s.peek()) {
            (Seg::Key(k), Some(b'{')) => s.enter_key(k.as_bytes()),
            (Seg::Index(i), Some(b'[')) => s.enter_index(*i),
            _ => false,
        };
        if !ok {
            break;
        }
        found = s.pos;
    }
    found
}

struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// At `{`: moves to the value of member `key`; false when there is none.
    fn enter_key(&mut self, key: &[u8]) -> bool {
        self.pos += 1;
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return false;
            }
            let name = self.string();
            self.space();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            self.space();
            if name == key {
                return true;
            }
            self.value();
            self.space();
            if self.peek() != Some(b',') {
                return false;
            }
            self.pos += 1;
        }
    }

    /// At `[`: moves to element `index`; false when there is none.
    fn enter_index(&mut self, index: usize) -> bool {
        self.pos += 1;
        let mut at = 0;
        loop {
            self.space();
            if matches!(self.peek(), None | Some(b']')) {
                return false;
            }
            if at == index {
                return true;
            }
            self.value();
            self.space();
            if self.peek() != Some(b',') {
                return false;
            }
            self.pos += 1;
            at += 1;
        }
    }

    /// At `"`: skips the string, returning its raw content (escapes left as they are).
    fn string(&mut self) -> &'a [u8] {
        self.pos += 1;
        let start = self.pos;
        let text = self.text;
        while let Some(b) = self.peek() {
            match b {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return &text[start..self.pos - 1];
                }
                _ => self.pos += 1,
            }
        }
        &text[start..]
    }

    /// Skips one value of any kind.
    fn value(&mut self) {
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_values_by_path_and_shows_paths() {
        let text = br#"{"a": [1, {"b": "x,]"}, {"c": {"d": 2}}],
 "e f": {"g": [true]}}"#;
        let at = |path: &[Seg<'_>]| {
            let (line, column) = line_column(text, locate(text, path));
            (line, column)
        };
        assert_eq!(at(&[Seg::Key("a"), Seg::Index(2), Seg::Key("c")]), (1, 31));
        assert_eq!(at(&[Seg::Key("e f"), Seg::Key("g")]), (2, 15));
        // A missing step: the deepest value found.
        assert_eq!(at(&[Seg::Key("a"), Seg::Index(9)]), (1, 7));
        let path = [Seg::Key("profiles"), Seg::Key("e f"), Seg::Key("type")];
        assert_eq!(Shown(&path).to_string(), r#"profiles["e f"].type"#);
        let path = [Seg::Key("jobs"), Seg::Index(3), Seg::Key("subtime")];
        assert_eq!(Shown(&path).to_string(), "jobs[3].subtime");
    }
}
