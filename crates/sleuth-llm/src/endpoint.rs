//! Base URLs taken the way the official SDKs take them, so a variable set for an SDK
//! works here unchanged:
//! - OpenAI (`OPENAI_BASE_URL`, the `openai-compat:` spec URL): the base includes the
//!   API version, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
//! - Anthropic (`ANTHROPIC_BASE_URL`): the host root, e.g. `https://api.anthropic.com`;
//!   `/v1/messages` is appended.
//!
//! Forms that are unambiguous but not the SDK's are accepted too rather than doubled
//! into a path no server has: an Anthropic base ending in `/v1` (sleuth's own earlier
//! convention), and either base given as the full endpoint.

/// `url` without the `user[:password]@` of its authority, when it has one. A key in a
/// base URL would travel with the model's name into records, `run.json`, the cache and
/// error messages, so such URLs are refused (naming where the key goes instead).
pub(crate) fn without_credentials(url: &str) -> Option<String> {
    let shown = crate::middleware::redact(url);
    (shown != url).then_some(shown)
}

/// Refuses a base URL taken from the variable `var` that carries credentials, without
/// echoing them: the key belongs in `key_var`.
pub(crate) fn refuse_credentials(
    url: &str,
    var: &str,
    key_var: &str,
) -> Result<(), super::LlmError> {
    match without_credentials(url) {
        None => Ok(()),
        Some(shown) => Err(super::LlmError::Config(format!(
            "{var} carries credentials (user:password@), which sleuth does not store or send from a URL: put the key in {key_var} and set {var}={shown} (or use openai-compat:BASE_URL#MODEL?key_env=VAR)"
        ))),
    }
}

/// `url` with the value of every query parameter replaced by `[redacted]`. Gateways
/// take keys there (`https://gw/v1?api-key=…`), so a message, record or trace that
/// shows a URL shows this form (hardening III, item 4).
pub(crate) fn redact_query(url: &str) -> String {
    let Some((path, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) => format!("{name}={}", super::secret::REDACTED),
            None => pair.to_string(),
        })
        .collect();
    let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
    format!("{path}?{}{fragment}", pairs.join("&"))
}

/// `base` split into the part a path is appended to and its query (with the `?`), so
/// that a gateway's `…/v1?api-key=K` becomes `…/v1/chat/completions?api-key=K`.
fn split_query(base: &str) -> (&str, &str) {
    match base.find('?') {
        Some(at) => (&base[..at], &base[at..]),
        None => (base, ""),
    }
}

/// The chat-completions URL under an OpenAI-style base (its query string kept last).
pub(crate) fn openai_chat_url(base: &str) -> String {
    let (base, query) = split_query(base);
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    format!("{base}/chat/completions{query}")
}

/// The Messages URL under an Anthropic-style base (host root, or root plus `/v1`; its
/// query string kept last).
pub(crate) fn anthropic_messages_url(base: &str) -> String {
    let (base, query) = split_query(base);
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/messages").unwrap_or(base);
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/v1/messages{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_redacted_and_kept_after_the_path() {
        assert_eq!(
            redact_query("https://gw/v1?api-key=sk-123&v=2"),
            "https://gw/v1?api-key=[redacted]&v=[redacted]"
        );
        assert_eq!(redact_query("https://gw/v1"), "https://gw/v1");
        assert_eq!(
            openai_chat_url("https://gw/v1/?api-key=K"),
            "https://gw/v1/chat/completions?api-key=K"
        );
        assert_eq!(
            anthropic_messages_url("https://gw/v1?k=K"),
            "https://gw/v1/messages?k=K"
        );
    }

    #[test]
    fn credentials_are_found_and_never_shown() {
        assert_eq!(
            without_credentials("http://u:pw@h:1/v1").as_deref(),
            Some("http://h:1/v1")
        );
        assert_eq!(without_credentials("http://h:1/v1?a=b@c"), None);
        let e = refuse_credentials("https://sk-x@h/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY")
            .unwrap_err()
            .to_string();
        assert!(e.contains("OPENAI_API_KEY") && e.contains("https://h/v1") && !e.contains("sk-x"));
    }

    #[test]
    fn openai_bases_include_the_version() {
        for base in [
            "https://api.openai.com/v1",
            "https://api.openai.com/v1/",
            "https://api.openai.com/v1/chat/completions",
        ] {
            assert_eq!(
                openai_chat_url(base),
                "https://api.openai.com/v1/chat/completions"
            );
        }
        // A server at its root (llama.cpp serves both) is called where the SDK calls it.
        assert_eq!(
            openai_chat_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/chat/completions"
        );
    }

    #[test]
    fn anthropic_bases_are_host_roots_and_old_forms_are_not_doubled() {
        for base in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/",
            "https://api.anthropic.com/v1",
            "https://api.anthropic.com/v1/",
            "https://api.anthropic.com/v1/messages",
        ] {
            assert_eq!(
                anthropic_messages_url(base),
                "https://api.anthropic.com/v1/messages",
                "{base}"
            );
        }
        // A gateway's route prefix is kept, as the SDK keeps it.
        assert_eq!(
            anthropic_messages_url("http://127.0.0.1:4000/anthropic"),
            "http://127.0.0.1:4000/anthropic/v1/messages"
        );
    }
}
