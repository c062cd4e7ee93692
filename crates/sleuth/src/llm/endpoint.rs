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

/// The chat-completions URL under an OpenAI-style base.
pub(crate) fn openai_chat_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    format!("{base}/chat/completions")
}

/// The Messages URL under an Anthropic-style base (host root, or root plus `/v1`).
pub(crate) fn anthropic_messages_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/messages").unwrap_or(base);
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/v1/messages")
}

#[cfg(test)]
mod tests {
    use super::*;

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
