//! Escaping user text for the Markdown report, as the HTML report escapes it: manifest
//! descriptions, names and trace headers must come out as text, never as HTML (`<script>`),
//! links, emphasis, table cells or headings. Used as minijinja's auto-escape for `.md`
//! templates, so every `{{ value }}` is escaped unless the code marks it safe.

/// `text` with HTML's `& < >` as entities and Markdown's punctuation backslash-escaped; line
/// breaks become spaces (a value is inline text: a newline could end a table row).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut line_start = true;
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => {
                out.push(' ');
                line_start = true;
                continue;
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            // Block markers only mean something at the start of a value.
            '-' | '+' | '=' if line_start => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        line_start = line_start && c.is_whitespace();
    }
    out
}

/// `text` as a code span: fenced with more backticks than it contains in a row, with `|`
/// escaped (GitHub tables split cells on it even in code) and line breaks as spaces.
pub fn code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_stays_text() {
        assert_eq!(
            escape("<script>alert(1)</script> & *x* [a](b) | c_d"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\*x\\* \\[a\\](b) \\| c\\_d"
        );
        assert_eq!(escape("# heading\n- item"), "\\# heading \\- item");
        assert_eq!(escape("a-b"), "a-b");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("x|y"), "`x\\|y`");
    }
}
