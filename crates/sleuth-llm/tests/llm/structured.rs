//! Against the test server: structured output in each server's form, the fallback that
//! drops a refused constraint, errors that are not retried, and base URLs taken the way
//! the official SDKs take them.

use crate::support::{fast_retry, options, question};
use serde_json::{json, Value};
use sleuth_llm::{open_stack, ChatModel, LlmError, ModelOptions, ModelSpec, OutputConstraint};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

fn schema() -> Value {
    json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
}

fn spec(server: &MockServer, preset: &str) -> ModelSpec {
    ModelSpec::parse(&format!("openai-compat:{}#m?preset={preset}", server.url())).unwrap()
}

/// What llama-cpp-python's server answers to a `json_schema` response format: its
/// request validation fails and it reports that as HTTP 500.
fn llama_cpp_python(req: &ReceivedRequest) -> Reply {
    match req.body["response_format"]["type"].as_str() {
        None | Some("text") | Some("json_object") => Reply::text(r#"{"a": "x"}"#),
        Some(_) => Reply::openai_error(
            500,
            "internal_server_error",
            "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]",
        ),
    }
}

#[tokio::test]
async fn the_llama_cpp_python_preset_sends_json_object_with_the_schema() {
    let server = MockServer::start(llama_cpp_python).await;
    let stack = open_stack(&spec(&server, "llama-cpp-python"), &options()).unwrap();
    let model = stack.model();
    let req = question("q").constraint(OutputConstraint::JsonSchema(schema()));
    let r = model.complete(&req).await.unwrap();
    assert!(!r.constraint_dropped);
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].body["response_format"],
        json!({"type": "json_object", "schema": schema()})
    );
    let grammar = question("q").constraint(OutputConstraint::Grammar("root ::= \"a\"".into()));
    model.complete(&grammar).await.unwrap();
    assert_eq!(server.requests()[1].body["grammar"], "root ::= \"a\"");
}

#[tokio::test]
async fn a_refused_constraint_is_dropped_once_and_recorded_on_every_reply() {
    let server = MockServer::start(llama_cpp_python).await;
    // The vLLM preset sends json_schema, which this server refuses.
    let stack = open_stack(&spec(&server, "vllm"), &options()).unwrap();
    let session = stack.session();
    let req = question("q").constraint(OutputConstraint::JsonSchema(schema()));
    let first = session.complete(&req).await.unwrap();
    assert!(first.constraint_dropped);
    assert_eq!(first.text, r#"{"a": "x"}"#);
    let seen = server.requests();
    assert_eq!(
        seen.len(),
        2,
        "the refused request, then one without the constraint"
    );
    assert!(seen[1].body.get("response_format").is_none());

    // From now on the constraint is not sent at all: one request per call.
    let second = session.complete(&req).await.unwrap();
    assert!(second.constraint_dropped);
    assert_eq!(server.request_count(), 3);
    assert!(server.requests()[2].body.get("response_format").is_none());
    // A request without a constraint is not marked.
    assert!(
        !session
            .complete(&question("q"))
            .await
            .unwrap()
            .constraint_dropped
    );

    let stats = session.stats().snapshot();
    assert_eq!(
        (
            stats.calls,
            stats.retries,
            stats.failures,
            stats.constraints_dropped
        ),
        (3, 0, 0, 2),
        "the fallback is neither a retry nor a failure"
    );
}

#[tokio::test]
async fn an_error_that_is_not_about_the_constraint_keeps_the_constraint() {
    let server = MockServer::start(|_| {
        Reply::openai_error(400, "invalid_request_error", "temperature out of range")
    })
    .await;
    let stack = open_stack(&spec(&server, "vllm"), &options()).unwrap();
    let req = question("q").constraint(OutputConstraint::JsonSchema(schema()));
    let e = stack.model().complete(&req).await.unwrap_err();
    assert!(matches!(e, LlmError::Http { status: 400, .. }), "{e}");
    assert_eq!(server.request_count(), 1, "no fallback, no retry");
}

#[tokio::test]
async fn errors_that_cannot_succeed_are_not_retried_and_say_why() {
    for (reply, why) in [
        (
            // Validation failure reported as 500 (FastAPI servers).
            Reply::openai_error(
                500,
                "internal_server_error",
                "1 validation error: Field required",
            ),
            "not retried: the server rejected the request as invalid",
        ),
        (
            Reply::openai_error(404, "not_found_error", "model 'nope' not found"),
            "not retried: the server does not know the model",
        ),
        (
            Reply::openai_error(
                400,
                "invalid_request_error",
                "Invalid model name passed in model=nope",
            ),
            "not retried: the server does not know the model",
        ),
        (
            Reply::openai_error(422, "unprocessable", "messages: wrong type"),
            "not retried: the server rejected the request as invalid",
        ),
        (Reply::status(404), "not retried: no such endpoint or model"),
    ] {
        let server = MockServer::start(move |_| reply.clone()).await;
        let stack = open_stack(&spec(&server, "generic"), &options()).unwrap();
        let session = stack.session();
        let e = session
            .complete(&question("q"))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{e}");
        assert_eq!(server.request_count(), 1, "{e}");
        assert_eq!(session.stats().snapshot().retries, 0);
    }

    // A transient failure is retried, and the final error says how long it was tried.
    let server = MockServer::start(|_| Reply::status(503)).await;
    let opts = ModelOptions {
        retry: fast_retry(3),
        ..options()
    };
    let stack = open_stack(&spec(&server, "generic"), &opts).unwrap();
    let e = stack.model().complete(&question("q")).await.unwrap_err();
    assert!(e.to_string().contains("gave up after 3 attempts"), "{e}");
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn anthropic_base_urls_follow_the_sdk_and_accept_the_old_v1_form() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    for base in [
        server.origin(),
        format!("{}/", server.origin()),
        server.url(),
    ] {
        let env = options()
            .env
            .set("ANTHROPIC_API_KEY", "sk-ant-test")
            .set("ANTHROPIC_BASE_URL", base.clone());
        let stack = open_stack(
            &ModelSpec::parse("anthropic:claude-haiku-4-5").unwrap(),
            &ModelOptions { env, ..options() },
        )
        .unwrap();
        assert_eq!(
            stack.model().complete(&question("q")).await.unwrap().text,
            "ok",
            "{base}"
        );
    }
    assert!(server.requests().iter().all(|r| r.path == "/v1/messages"));
}

#[tokio::test]
async fn openai_base_urls_include_the_version_as_in_the_sdk() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    for base in [
        server.url(),
        format!("{}/", server.url()),
        format!("{}/chat/completions", server.url()),
    ] {
        let env = options()
            .env
            .set("OPENAI_API_KEY", "sk-test")
            .set("OPENAI_BASE_URL", base.clone());
        let stack = open_stack(
            &ModelSpec::parse("openai:gpt-4o-mini").unwrap(),
            &ModelOptions { env, ..options() },
        )
        .unwrap();
        stack.model().complete(&question("q")).await.unwrap();
    }
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path == "/v1/chat/completions"));
}

#[tokio::test]
async fn a_transient_failure_of_the_fallback_request_stays_retryable() {
    let server = MockServer::start(|req| {
        if req.body.get("response_format").is_some() {
            llama_cpp_python(req)
        } else if req.index == 1 {
            Reply::status(503)
        } else {
            Reply::text(r#"{"a": "x"}"#)
        }
    })
    .await;
    let stack = open_stack(&spec(&server, "vllm"), &options()).unwrap();
    let session = stack.session();
    let req = question("q").constraint(OutputConstraint::JsonSchema(schema()));
    let r = session.complete(&req).await.unwrap();
    assert!(r.constraint_dropped);
    // refused, 503 without it, then (retry) refused again, then answered.
    assert_eq!(server.request_count(), 4);
    assert_eq!(session.stats().snapshot().retries, 1);
}
