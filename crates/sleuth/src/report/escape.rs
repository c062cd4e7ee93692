//! The one escaping function for untrusted text in HTML and SVG, and the one way a
//! file path becomes a link.
//!
//! Paragraphs, questions and model output come from benchmarks and models we do not
//! control; every piece of it goes through [`escape_html`] before it is written into a
//! page, whether as element text or as a quoted attribute value. Run directories are
//! named by whoever made them, so a link to one goes through [`link_path`]: a directory
//! called `javascript:alert(1)` must stay a relative path, never become a scheme.

/// Escapes `&`, `<`, `>`, `"` and `'` so the text is safe both as element content and
/// inside a double- or single-quoted attribute. Bidirectional embeddings, overrides
/// and isolates (U+202A–U+202E, U+2066–U+2069), which would make the page read other
/// than it is, are shown as visible escapes (`\u{202e}`), as on the terminal; so are
/// control characters other than tab, line feed and carriage return (NUL among them:
/// an HTML parse error, and not allowed in SVG's XML at all; hardening III).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// A relative link from path segments (`..`, a directory name, `trace.html`): every
/// byte but the unreserved ASCII ones (letters, digits, `-._~`) is percent-encoded in
/// each segment, so no segment can open a scheme (`javascript:`), a query, a fragment
/// or a network path, and the link still names exactly that file.
pub fn link_path<S: AsRef<str>>(segments: &[S]) -> String {
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in segment.as_ref().bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape_html(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape_html("plain é text"), "plain é text");
        assert_eq!(escape_html("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape_html("a\0b\u{7}\u{85}c"), "a\\u{0}b\\u{7}\\u{85}c");
        assert_eq!(escape_html("tab\tline\r\n"), "tab\tline\r\n");
    }

    #[test]
    fn links_are_relative_and_percent_encoded() {
        assert_eq!(link_path(&["..", "run", "trace.html"]), "../run/trace.html");
        assert_eq!(
            link_path(&["javascript:alert(1)", "trace.html"]),
            "javascript%3Aalert%281%29/trace.html"
        );
        assert_eq!(link_path(&["a b#c?d%é"]), "a%20b%23c%3Fd%25%C3%A9");
    }
}
