//! The one escaping function for untrusted text in HTML and SVG.
//!
//! Paragraphs, questions and model output come from benchmarks and models we do not
//! control; every piece of it goes through [`escape_html`] before it is written into a
//! page, whether as element text or as a quoted attribute value.

/// Escapes `&`, `<`, `>`, `"` and `'` so the text is safe both as element content and
/// inside a double- or single-quoted attribute.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
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
    }
}
