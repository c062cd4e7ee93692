//! API keys as a type that cannot leak by accident: no `Display`, no `Serialize`, and a
//! `Debug` that prints only that a key is present. The raw value is reachable only
//! through [`ApiKey::expose`], used when building request headers.
//!
//! This is also the one place where provider text is redacted. Every string that came
//! from a server (a reply's text, its native tool calls' names and arguments, an error
//! body, a header quoted in a message) passes through [`ApiKey::redact`] before it is
//! stored or printed: the provider clients call [`redact_response`] and
//! `http::redact_error` on everything they return, and `http` redacts a body as soon as
//! it has arrived, before any part of it is parsed or cut for a quote.

use super::ChatResponse;
use std::fmt;

/// What replaces a key (or the part of one that ends a cut string).
pub const REDACTED: &str = "[redacted]";

/// The shortest key prefix that is redacted where a cut string ends in it: shorter
/// prefixes are too likely to be ordinary text (and say little about the key).
pub const MIN_PREFIX: usize = 8;

/// How a quote marks that it was cut (`http::quote`): `HEAD... (N bytes)`.
pub(crate) const CUT_MARK: &str = "... (";

#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(value: impl Into<String>) -> ApiKey {
        ApiKey(value.into())
    }

    /// The raw key, for an HTTP header and nothing else.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text` (e.g. a server that echoes the key
    /// in an error message) so it cannot reach logs, records or error strings. A prefix
    /// of the key of at least [`MIN_PREFIX`] characters that ends `text`, or ends the
    /// kept part of a cut quote (`...KEYPREF... (600 bytes)`), is redacted too: a key
    /// that straddled a cut must not leak in part.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            // Too short to be a real key; replacing it would mangle ordinary text.
            return text.to_string();
        }
        let whole = text.replace(&self.0, REDACTED);
        let mut out = String::with_capacity(whole.len());
        let mut rest = whole.as_str();
        // The kept part of every cut quote, then the end of the text.
        while let Some(at) = rest.find(CUT_MARK) {
            out.push_str(&self.redact_tail(&rest[..at]));
            out.push_str(CUT_MARK);
            rest = &rest[at + CUT_MARK.len()..];
        }
        out.push_str(&self.redact_tail(rest));
        out
    }

    /// `text` with a trailing key prefix of at least [`MIN_PREFIX`] bytes redacted.
    fn redact_tail(&self, text: &str) -> String {
        let longest = self.0.len().min(text.len());
        for n in (MIN_PREFIX..=longest).rev() {
            let start = text.len() - n;
            if text.is_char_boundary(start) && self.0.as_bytes()[..n] == text.as_bytes()[start..] {
                return format!("{}{REDACTED}", &text[..start]);
            }
        }
        text.to_string()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Redacts `key` from `text` when there is a key.
pub(crate) fn redact(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(k) => k.redact(text),
        None => text.to_string(),
    }
}

/// A reply with `key` redacted from every string the provider wrote: the text and each
/// native tool call's id, name, argument and input.
pub(crate) fn redact_response(mut response: ChatResponse, key: Option<&ApiKey>) -> ChatResponse {
    let Some(key) = key else { return response };
    response.text = key.redact(&response.text);
    for call in &mut response.tool_calls {
        call.id = key.redact(&call.id);
        call.name = key.redact(&call.name);
        call.argument = key.redact(&call.argument);
        call.input = key.redact(&call.input);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_redaction_hide_the_key() {
        let k = ApiKey::new("sk-canary-1234");
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
        assert_eq!(k.redact("bad key sk-canary-1234!"), "bad key [redacted]!");
        assert_eq!(k.expose(), "sk-canary-1234");
    }

    #[test]
    fn a_key_cut_by_a_quote_is_redacted_in_part() {
        let k = ApiKey::new("sk-Zq7xW2pLm9Vt4Rb8Kd1Nf6Hy3Jc5Gs0Ua");
        // The end of a cut string, and the kept part of a cut quote.
        assert_eq!(k.redact("echo sk-Zq7xW2pL"), "echo [redacted]");
        assert_eq!(
            k.redact("echo sk-Zq7xW2pLm9Vt... (700 bytes) and more"),
            "echo [redacted]... (700 bytes) and more"
        );
        // Seven characters are ordinary text; a prefix in the middle is left alone.
        assert_eq!(k.redact("echo sk-Zq7x"), "echo sk-Zq7x");
        assert_eq!(k.redact("sk-Zq7xW2pL then"), "sk-Zq7xW2pL then");
        // Multi-byte text before the tail is kept whole.
        assert_eq!(k.redact("é sk-Zq7xW2pLm"), "é [redacted]");
    }

    #[test]
    fn replies_are_redacted_in_text_and_tool_calls() {
        let k = ApiKey::new("sk-canary-1234");
        let mut r = ChatResponse::new("text sk-canary-1234", Default::default());
        r.tool_calls.push(super::super::ToolCall {
            input: r#"{"q": "sk-canary-1234"}"#.into(),
            ..super::super::ToolCall::new("sk-canary-1234", "q sk-canary-1234")
        });
        let r = redact_response(r, Some(&k));
        assert_eq!(r.text, "text [redacted]");
        assert_eq!(r.tool_calls[0].name, REDACTED);
        assert_eq!(r.tool_calls[0].argument, "q [redacted]");
        assert_eq!(r.tool_calls[0].input, r#"{"q": "[redacted]"}"#);
    }
}
