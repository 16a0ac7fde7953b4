//! Quoting input in error messages. The input may be garbage (a 10 MB line, a binary file), so a message
//! quotes a short, escaped snippet of it, never the whole.

/// How much of an offending value a scenario error quotes.
pub const QUOTED_CHARS: usize = 80;

/// `text` in double quotes with Rust's escapes, cut to its first `max_chars` characters (then "...") if longer.
pub fn quoted(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
    }
}

/// The first control character of `text` (NUL, tab, newline, ESC...: [`char::is_control`]), if any. A name
/// printed as a label (a flow's row of the results table) must have none: a newline breaks the row, an ESC
/// starts a terminal escape sequence.
pub fn first_control(text: &str) -> Option<char> {
    text.chars().find(|c| c.is_control())
}

/// `text` with each control character written as Rust's escape (`\n`, `\u{1b}`) and the rest as it is: for
/// text no one checked (a file's name) that is printed as a label.
pub fn escape_controls(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// `message` with every quoted span longer than `max_chars` cut to that: spans in double quotes (as Rust's
/// escapes write them: `\"` does not end one) and in backticks. For messages that quote input without going
/// through [`quoted`] (serde's, or a key path naming a huge key). An unclosed quote is left as it is.
pub fn clip_quotes(message: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(message.len().min(8 * max_chars));
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = if rest[open..].starts_with('"') { '"' } else { '`' };
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = span_end(rest, quote) else { break };
        let span = &rest[..close];
        match span.char_indices().nth(max_chars) {
            Some((cut, _)) => {
                out.push_str(&span[..cut]);
                out.push_str("...");
            }
            None => out.push_str(span),
        }
        out.push(quote);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the span `inside` (just after its opening `quote`) closes: a backslash escapes the next character
/// in double quotes.
fn span_end(inside: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in inside.char_indices() {
        if c == quote && !escaped {
            return Some(i);
        }
        escaped = quote == '"' && c == '\\' && !escaped;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cuts_long_text_and_escapes() {
        assert_eq!(quoted("abc", 5), "\"abc\"");
        assert_eq!(quoted("abcdef", 5), "\"abcde\"...");
        assert_eq!(quoted("a\"b\n", 5), "\"a\\\"b\\n\"");
        assert_eq!(quoted("ééééé", 5), "\"ééééé\"");
        assert_eq!(quoted("éééééé", 5), "\"ééééé\"...");
    }

    #[test]
    fn control_characters_are_found_and_escaped() {
        for text in ["a\u{1b}b", "a\nb", "\0", "tab\there", "del\u{7f}", "c1\u{9b}"] {
            assert!(first_control(text).is_some(), "{text:?}");
            let escaped = escape_controls(text);
            assert_eq!(first_control(&escaped), None, "{escaped}");
        }
        assert_eq!(escape_controls("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\n");
        assert_eq!(first_control("reader-é 1"), None);
        assert_eq!(escape_controls("reader-é 1"), "reader-é 1");
    }

    #[test]
    fn clip_quotes_cuts_only_long_spans() {
        let long = "x".repeat(1000);
        assert_eq!(clip_quotes("found \"abc\", expected `u32`", 5), "found \"abc\", expected `u32`");
        assert_eq!(
            clip_quotes(&format!("key `{long}`: found \"{long}\" and `{long}`"), 3),
            "key `xxx...`: found \"xxx...\" and `xxx...`"
        );
        // An escaped quote does not end the span; an unclosed one is left whole.
        assert_eq!(clip_quotes("a \"b\\\"cdef\" z", 4), "a \"b\\\"c...\" z");
        assert_eq!(clip_quotes(&format!("a \"{long}"), 2), format!("a \"{long}"));
    }
}
