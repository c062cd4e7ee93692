//! Text from data or a model, made safe to print on a terminal.
//!
//! A question id, a paragraph or a model's reply can hold escape sequences that clear
//! the screen, move the cursor, rewrite earlier lines, set the window title or, on some
//! terminals, write to the clipboard; bidirectional overrides can make text read
//! differently from what it is. Everything the binary prints that came from outside
//! goes through [`terminal_safe`] (one line) or [`terminal_safe_lines`] (a block whose
//! line breaks are kept). Control characters are not dropped but shown as visible
//! escapes (`\u{1b}`), so a person can still see that something was there.
//!
//! JSON output needs none of this: serde_json escapes every C0 control itself, and a
//! program, not a terminal, is its reader.

use std::borrow::Cow;
use std::fmt::Write;

/// True for characters a terminal may act on rather than display: the C0 controls
/// (tab and line feed included), DEL, the C1 controls (U+0080–U+009F, which some
/// terminals read as ESC sequences even in UTF-8), and the bidirectional embeddings,
/// overrides and isolates.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` on one line: every control character, line breaks included, shown as `\u{..}`
/// (a tab as `\t`, a line feed as `\n`, a carriage return as `\r`). Borrowed when
/// there is nothing to escape, which is almost always.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` with its line breaks kept and everything else escaped as [`terminal_safe`]
/// does, for multi-line blocks (a model's reply, a table). A tab is kept too: it only
/// moves the cursor forward.
pub fn terminal_safe_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(s);
    }
    let lines: Vec<String> = s
        .split('\n')
        .map(|line| {
            line.split('\t')
                .map(|part| terminal_safe(part).into_owned())
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let s = "Who directed “Jaws”? Ünïcode, emoji 🎬 and CJK 映画 are fine.";
        assert!(matches!(terminal_safe(s), Cow::Borrowed(t) if t == s));
        assert!(matches!(terminal_safe_lines("a\nb\tc"), Cow::Borrowed(_)));
    }

    #[test]
    fn escape_sequences_become_visible() {
        // Clear screen, set the window title, a C1 CSI, a bidi override, DEL, BEL.
        let hostile = "id\x1b[2J\x1b]0;pwned\x07\u{9b}31m\u{202e}gnp.exe\x7f";
        let safe = terminal_safe(hostile);
        assert!(!safe.chars().any(unsafe_char), "{safe}");
        assert_eq!(
            safe,
            "id\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\u{202e}gnp.exe\\u{7f}"
        );
    }

    #[test]
    fn one_line_form_escapes_line_breaks_and_block_form_keeps_them() {
        assert_eq!(
            terminal_safe("a\nb\r\tc"),
            "a\\nb\\r\\tc",
            "a forged second line stays on the first"
        );
        assert_eq!(
            terminal_safe_lines("a\x1b[1m\nb\tc\r"),
            "a\\u{1b}[1m\nb\tc\\r"
        );
    }
}
