//! The mock server really speaks HTTP: exercised with a real client.

use serde_json::{json, Value};
use sleuth_testkit::{sequence, MockServer, PromptCache, Reply};
use std::time::Duration;

fn chat_body() -> Value {
    json!({"model": "m1", "messages": [{"role": "user", "content": "two words"}]})
}

#[tokio::test]
async fn text_reply_is_a_complete_openai_completion_and_requests_are_logged() {
    let server = MockServer::start(|req| Reply::text(format!("reply {}", req.index))).await;
    let client = reqwest::Client::new();
    for i in 0..2 {
        let resp = client
            .post(format!("{}/chat/completions", server.url()))
            .bearer_auth("sk-test")
            .json(&chat_body())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], format!("reply {i}"));
        assert_eq!(v["model"], "m1");
        assert_eq!(v["usage"]["prompt_tokens"], 2);
        assert_eq!(v["usage"]["completion_tokens"], 2);
    }
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[1].index, 1);
    assert_eq!(log[0].path, "/v1/chat/completions");
    assert_eq!(log[0].bearer(), Some("sk-test"));
    assert_eq!(log[0].last_message(), Some("two words"));
}

#[tokio::test]
async fn anthropic_path_gets_a_messages_shaped_reply() {
    let server = MockServer::start(|_| Reply::text("hi there")).await;
    let v: Value = reqwest::Client::new()
        .post(format!("{}/messages", server.url()))
        .json(&json!({"model": "claude", "system": "be brief", "messages": [{"role": "user", "content": "x"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["content"][0]["text"], "hi there");
    assert_eq!(v["usage"]["input_tokens"], 3);
    assert_eq!(v["stop_reason"], "end_turn");
}

#[tokio::test]
async fn status_carries_retry_after_and_body() {
    let server = MockServer::start(sequence(vec![Reply::rate_limited(7), Reply::text("ok")])).await;
    let client = reqwest::Client::new();
    let url = format!("{}/chat/completions", server.url());
    let resp = client.post(&url).json(&chat_body()).send().await.unwrap();
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "7");
    assert!(resp.text().await.unwrap().contains("rate_limit_exceeded"));
    let resp = client.post(&url).json(&chat_body()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn misbehaviours_fail_the_client_the_way_a_broken_server_would() {
    let server = MockServer::start(sequence(vec![
        Reply::CloseConnection,
        Reply::Truncated,
        Reply::Malformed("{not json".into()),
        Reply::Hang(Duration::from_secs(5)),
    ]))
    .await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let url = format!("{}/chat/completions", server.url());
    let closed = client.post(&url).json(&chat_body()).send().await;
    assert!(closed.is_err(), "closed connection must fail: {closed:?}");

    let truncated = client.post(&url).json(&chat_body()).send().await.unwrap();
    assert!(truncated.bytes().await.is_err(), "truncated body must fail");

    let malformed = client.post(&url).json(&chat_body()).send().await.unwrap();
    assert_eq!(malformed.text().await.unwrap(), "{not json");

    let hang = client.post(&url).json(&chat_body()).send().await;
    assert!(hang.unwrap_err().is_timeout());
    assert_eq!(server.request_count(), 4);
}

#[test]
fn spawned_server_works_from_a_plain_test_and_unknown_paths_are_404() {
    let server = MockServer::spawn(|_| Reply::text("sync"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = reqwest::Client::new();
        let ok = client
            .post(format!("{}/chat/completions", server.origin()))
            .json(&chat_body())
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), 200);
        let missing = client
            .post(format!("{}/nope", server.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        let doubled = client
            .post(format!("{}/v1/messages", server.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(doubled.status(), 404, "/v1/v1/messages is no route");
    });
    assert_eq!(server.request_count(), 3);
    drop(server); // joins the server thread
}

/// `n` distinct words.
fn words(n: usize) -> String {
    (0..n).map(|i| format!("w{i} ")).collect()
}

#[tokio::test]
async fn the_cache_emulation_reports_each_providers_fields() {
    let cache = PromptCache {
        openai_min: 8,
        openai_step: 4,
        anthropic_min: 8,
        anthropic_lookback: 20,
    };
    let server = MockServer::start_with_cache(cache, |_| Reply::text("ok")).await;
    let client = reqwest::Client::new();
    let post = |path: &'static str, body: Value| {
        let client = client.clone();
        let url = format!("{}/{path}", server.url());
        async move {
            let v: Value = client
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            v["usage"].clone()
        }
    };
    // OpenAI: 10 words, then the same 10 and 3 more: 8 + (10 - 8) / 4 * 4 = 8 cached.
    let first = json!({"model": "m", "messages": [{"role": "user", "content": words(10)}]});
    let u = post("chat/completions", first).await;
    assert_eq!(u["prompt_tokens"], 10);
    assert_eq!(u["prompt_tokens_details"]["cached_tokens"], 0);
    let second = json!({"model": "m", "messages": [
        {"role": "user", "content": words(10)},
        {"role": "assistant", "content": "a b c"}]});
    let u = post("chat/completions", second).await;
    assert_eq!(u["prompt_tokens"], 13);
    assert_eq!(u["prompt_tokens_details"]["cached_tokens"], 8);

    // Anthropic: a marked 10-word system prompt is written, then read, and the words
    // after the last breakpoint are the plain input.
    let system =
        json!([{"type": "text", "text": words(10), "cache_control": {"type": "ephemeral"}}]);
    let body = json!({"model": "c", "system": system, "messages": [{"role": "user", "content": "hi there"}]});
    let u = post("messages", body.clone()).await;
    assert_eq!(
        (
            &u["input_tokens"],
            &u["cache_creation_input_tokens"],
            &u["cache_read_input_tokens"]
        ),
        (&json!(2), &json!(10), &json!(0))
    );
    let u = post("messages", body).await;
    assert_eq!(
        (
            &u["input_tokens"],
            &u["cache_creation_input_tokens"],
            &u["cache_read_input_tokens"]
        ),
        (&json!(2), &json!(0), &json!(10))
    );
    // Without the emulation, no cache fields at all, and blocks are counted as text.
    let plain = MockServer::start(|_| Reply::text("ok")).await;
    let v: Value = client
        .post(format!("{}/messages", plain.url()))
        .json(&json!({"model": "c", "system": system, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi there"}]}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["usage"], json!({"input_tokens": 12, "output_tokens": 1}));
    assert_eq!(plain.requests()[0].last_message(), Some("hi there"));
}
