//! The OpenAI-compatible client against the mock server.

use crate::support::growing_conversation;
use serde_json::json;
use sleuth_llm::{
    ApiKey, ChatModel, ChatRequest, LlmError, Message, OpenAiClient, OpenAiConfig, PriceTable,
    Quirks,
};
use sleuth_testkit::{MockServer, PromptCache, Reply};
use std::time::Duration;

pub fn client(server: &MockServer, key: Option<&str>, timeout: Duration) -> OpenAiClient {
    let config = OpenAiConfig::new(server.url(), "test-model")
        .api_key(key.map(ApiKey::new))
        .timeout(timeout)
        .quirks(Quirks::openai());
    OpenAiClient::new(config).unwrap()
}

pub fn question() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("You answer briefly."),
        Message::user("Who wrote Dune?"),
    ])
}

#[tokio::test]
async fn request_shape_and_usage() {
    let server = MockServer::start(|_| Reply::text("Frank Herbert")).await;
    let model = client(&server, Some("sk-test-key"), Duration::from_secs(5));
    let req = question()
        .temperature(0.7)
        .max_tokens(64)
        .stop(vec!["\nObservation:".into()]);
    let resp = model.complete(&req).await.unwrap();
    assert_eq!(resp.text, "Frank Herbert");
    assert_eq!(resp.usage.input_tokens, 6); // words in the two messages
    assert_eq!(resp.usage.output_tokens, 2);
    assert!(!resp.cached);

    let seen = &server.requests()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(seen.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(
        seen.body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You answer briefly."},
                {"role": "user", "content": "Who wrote Dune?"}
            ],
            "temperature": 0.699999988079071, // f32 0.7 widened
            "max_completion_tokens": 64,
            "stop": ["\nObservation:"]
        })
    );
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    client(&server, None, Duration::from_secs(5))
        .complete(&question())
        .await
        .unwrap();
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn minimal_body_cached_tokens_and_client_side_stop() {
    let server = MockServer::start(|_| {
        Reply::Json(json!({
            "choices": [{"message": {"content": "Thought: look\nAction: search[x]\nObservation: fake"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}
        }))
    })
    .await;
    let model = client(&server, None, Duration::from_secs(5));
    let resp = model
        .complete(&question().stop(vec!["\nObservation:".into()]))
        .await
        .unwrap();
    assert_eq!(resp.text, "Thought: look\nAction: search[x]");
    assert_eq!(
        (resp.usage.input_tokens, resp.usage.cached_input_tokens),
        (100, 64)
    );
}

#[tokio::test]
async fn errors_are_classified() {
    let server = MockServer::start(|req| match req.index {
        0 => Reply::rate_limited(3),
        1 => Reply::openai_error(401, "invalid_api_key", "Incorrect API key provided"),
        2 => Reply::openai_error(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 8192 tokens",
        ),
        3 => Reply::Malformed("<html>502 Bad Gateway</html>".into()),
        4 => Reply::CloseConnection,
        5 => Reply::Truncated,
        6 => Reply::openai_error(429, "insufficient_quota", "You exceeded your current quota"),
        _ => Reply::Hang(Duration::from_secs(10)),
    })
    .await;
    let model = client(&server, None, Duration::from_millis(300));
    let mut errors = Vec::new();
    for _ in 0..8 {
        errors.push(model.complete(&question()).await.unwrap_err());
    }
    assert!(
        matches!(&errors[0], LlmError::Http { status: 429, retry_after: Some(d), .. } if *d == Duration::from_secs(3))
    );
    assert!(errors[0].is_retryable());
    assert!(matches!(&errors[1], LlmError::Http { status: 401, .. }) && !errors[1].is_retryable());
    assert!(
        errors[1].to_string().contains("Incorrect API key provided"),
        "{}",
        errors[1]
    );
    assert!(matches!(&errors[2], LlmError::ContextOverflow { .. }));
    assert!(matches!(&errors[3], LlmError::Decode { raw, .. } if raw.contains("502")));
    assert!(
        matches!(&errors[4], LlmError::Connection { .. }),
        "{:?}",
        errors[4]
    );
    assert!(
        matches!(&errors[5], LlmError::Connection { .. }),
        "{:?}",
        errors[5]
    );
    assert!(errors[5].is_retryable());
    assert!(
        !errors[6].is_retryable(),
        "exhausted quota is not transient"
    );
    assert!(
        matches!(&errors[7], LlmError::Timeout { after, .. } if *after == Duration::from_millis(300))
    );
}

#[tokio::test]
async fn connection_refused_is_a_connection_error() {
    let url = {
        let server = MockServer::start(|_| Reply::text("x")).await;
        server.url()
    }; // server dropped: nothing listens there any more
    let model =
        OpenAiClient::new(OpenAiConfig::new(url, "m").timeout(Duration::from_secs(2))).unwrap();
    let e = model.complete(&question()).await.unwrap_err();
    assert!(matches!(e, LlmError::Connection { .. }), "{e:?}");
}

#[tokio::test]
async fn automatic_prefix_caching_is_read_and_priced_at_the_cached_rate() {
    let cache = PromptCache {
        openai_min: 8,
        openai_step: 4,
        ..PromptCache::providers()
    };
    let server =
        MockServer::start_with_cache(cache, |_| Reply::text("Action: search[Frank Herbert]")).await;
    let usages = growing_conversation(&client(&server, None, Duration::from_secs(5)), 4).await;
    // Prompts of 19, 31, 43, 55 words; each shares the previous prompt whole, counted
    // from 8 in steps of 4: 8 + (19 - 8) / 4 * 4 = 16, then 28, 40.
    let input: Vec<u64> = usages.iter().map(|u| u.input_tokens).collect();
    let read: Vec<u64> = usages.iter().map(|u| u.cached_input_tokens).collect();
    assert_eq!(input, [19, 31, 43, 55]);
    assert_eq!(read, [0, 16, 28, 40]);
    assert!(usages.iter().all(|u| u.cache_write_tokens == 0));
    // gpt-4o-mini: fresh 0.15, cached 0.075 per million.
    let prices = PriceTable::defaults();
    let billed: f64 = usages
        .iter()
        .map(|u| prices.cost_usd("gpt-4o-mini", u, false))
        .sum();
    let want = ((148.0 - 84.0) * 0.15 + 84.0 * 0.075 + 12.0 * 0.60) / 1e6;
    assert!((billed - want).abs() < 1e-12, "{billed} vs {want}");
}
