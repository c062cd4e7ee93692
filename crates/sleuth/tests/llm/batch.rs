//! The batch clients against the testkit's emulation of both providers' batch APIs over
//! real HTTP: the bodies they submit are the ones a plain call posts, the results come
//! back by `custom_id` whatever their order, and a failed or expired request is told
//! apart from an answer.

use sleuth::llm::batch::{
    wait, AnthropicBatches, Backoff, BatchApi, BatchItem, BatchProgress, ItemOutcome, OpenAiBatches,
};
use sleuth::llm::{
    AnthropicClient, AnthropicConfig, ApiKey, ChatModel, ChatRequest, LlmError, Message,
    OpenAiClient, OpenAiConfig, Quirks,
};
use sleuth_testkit::{BatchPlan, MockServer, ReceivedRequest, Reply};
use std::time::Duration;

fn handler(req: &ReceivedRequest) -> Reply {
    match req.last_message().unwrap_or_default() {
        "bad" => Reply::openai_error(400, "invalid_request_error", "bad prompt"),
        "late" => Reply::Expired,
        text => Reply::text(format!("answer to {text}")),
    }
}

fn items() -> Vec<BatchItem> {
    ["first", "bad", "late", "second"]
        .iter()
        .map(|p| BatchItem {
            custom_id: format!("q-{p}"),
            request: ChatRequest::new(vec![Message::system("Be brief."), Message::user(*p)])
                .max_tokens(32),
        })
        .collect()
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(5),
        longest: Duration::from_millis(20),
    }
}

async fn server() -> MockServer {
    tokio::task::spawn_blocking(|| {
        MockServer::spawn_with_batches(
            BatchPlan {
                polls_before_done: 2,
            },
            handler,
        )
    })
    .await
    .unwrap()
}

/// Submits, waits (recording every status seen), fetches the results.
async fn run(api: &dyn BatchApi) -> (Vec<String>, std::collections::HashMap<String, ItemOutcome>) {
    let items = items();
    let handle = api.submit(&items).await.unwrap();
    assert_eq!(handle.requests, 4);
    let mut seen = Vec::new();
    let end = wait(api, &handle, quick(), &mut |p| seen.push(format!("{p:?}")))
        .await
        .unwrap();
    assert!(matches!(end, BatchProgress::Ended { .. }), "{end:?}");
    let ids: Vec<String> = items.iter().map(|i| i.custom_id.clone()).collect();
    (seen, api.results(&handle, &ids).await.unwrap())
}

fn text(outcome: &ItemOutcome) -> &str {
    match outcome {
        ItemOutcome::Done(r) => &r.text,
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_batches_submit_the_plain_calls_bodies_and_match_results_by_id() {
    let server = server().await;
    let config = OpenAiConfig::new(server.url(), "gpt-test")
        .api_key(Some(ApiKey::new("sk-batch-secret")))
        .quirks(Quirks::openai());
    let api = OpenAiBatches::new(config.clone()).unwrap();
    let (seen, results) = run(&api).await;
    assert!(
        seen[0].contains("validating") && seen[1].contains("in_progress"),
        "{seen:?}"
    );
    assert_eq!(text(&results["q-first"]), "answer to first");
    assert_eq!(text(&results["q-second"]), "answer to second");
    match &results["q-bad"] {
        ItemOutcome::Failed(LlmError::Http {
            status, message, ..
        }) => {
            assert_eq!(*status, 400);
            assert!(message.contains("bad prompt"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(results["q-late"], ItemOutcome::Expired));

    // The batched body is exactly what the plain client posts for the same request,
    // and the plain call's answer is the batched one.
    let batched = server
        .requests()
        .into_iter()
        .find(|r| r.header("x-batch-id").is_some());
    let plain = OpenAiClient::new(config).unwrap();
    let answer = plain.complete(&items()[0].request).await.unwrap();
    let sent = server.requests().last().unwrap().body.clone();
    assert_eq!(batched.unwrap().body, sent);
    assert_eq!(answer.text, "answer to first");
    // The upload and every poll carried the key; no body or result holds it.
    let upload = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/files")
        .unwrap();
    assert_eq!(upload.bearer(), Some("sk-batch-secret"));
    assert!(!upload.raw_body.contains("sk-batch-secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_message_batches_keep_the_cache_marks_and_read_every_result_type() {
    let server = server().await;
    let config = AnthropicConfig::new("claude-test")
        .base_url(server.url())
        .api_key(Some(ApiKey::new("sk-ant-batch")));
    let api = AnthropicBatches::new(config.clone()).unwrap();
    let (seen, results) = run(&api).await;
    assert!(
        seen.iter().filter(|s| s.contains("in_progress")).count() >= 1,
        "{seen:?}"
    );
    assert_eq!(text(&results["q-first"]), "answer to first");
    assert!(matches!(
        &results["q-bad"],
        ItemOutcome::Failed(LlmError::Http { status: 400, .. })
    ));
    assert!(matches!(results["q-late"], ItemOutcome::Expired));
    let create = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/messages/batches")
        .unwrap();
    assert_eq!(create.header("x-api-key"), Some("sk-ant-batch"));
    assert_eq!(create.header("anthropic-version"), Some("2023-06-01"));
    let plain = AnthropicClient::new(config).unwrap();
    assert_eq!(
        create.body["requests"][0]["params"],
        plain.request_body(&items()[0].request),
        "params are the Messages body, prompt-cache marks and all"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_missing_from_the_results_counts_as_never_run() {
    let server = server().await;
    let api = OpenAiBatches::new(OpenAiConfig::new(server.url(), "m")).unwrap();
    let handle = api.submit(&items()[..1]).await.unwrap();
    wait(&api, &handle, quick(), &mut |_| {}).await.unwrap();
    let asked = vec!["q-first".to_string(), "q-unknown".to_string()];
    let results = api.results(&handle, &asked).await.unwrap();
    assert_eq!(text(&results["q-first"]), "answer to first");
    assert!(matches!(results["q-unknown"], ItemOutcome::Expired));
}
