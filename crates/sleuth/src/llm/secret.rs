//! API keys as a type that cannot leak by accident: no `Display`, no `Serialize`, and a
//! `Debug` that prints only that a key is present. The raw value is reachable only
//! through [`ApiKey::expose`], used when building request headers.

use std::fmt;

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
    /// in an error message) so it cannot reach logs, records or error strings.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            // Too short to be a real key; replacing it would mangle ordinary text.
            return text.to_string();
        }
        text.replace(&self.0, "[redacted]")
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
}
