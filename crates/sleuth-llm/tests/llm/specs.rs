//! Opening specs end to end: keys from the configured variables, scripted files.

use crate::support::{options, question};
use sleuth_llm::{open_model, ChatModel, ModelOptions, ModelSpec};
use sleuth_testkit::{MockServer, Reply};

#[tokio::test]
async fn openai_spec_sends_the_key_from_openai_api_key() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    let opts = ModelOptions {
        env: options()
            .env
            .set("OPENAI_API_KEY", "sk-from-env")
            .set("OPENAI_BASE_URL", server.url()),
        ..options()
    };
    let model = open_model(&ModelSpec::parse("openai:gpt-4o-mini").unwrap(), &opts).unwrap();
    assert_eq!(model.name(), "openai:gpt-4o-mini");
    model.complete(&question("q").max_tokens(10)).await.unwrap();
    let seen = &server.requests()[0];
    assert_eq!(seen.bearer(), Some("sk-from-env"));
    assert_eq!(seen.model(), Some("gpt-4o-mini"));
    assert_eq!(seen.body["max_completion_tokens"], 10, "OpenAI preset");
}

#[tokio::test]
async fn compat_spec_key_env_and_preset() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    let env = options()
        .env
        .set("OPENAI_API_KEY", "sk-wrong")
        .set("MY_GATEWAY_KEY", "gw-123");
    let opts = ModelOptions { env, ..options() };
    let spec = format!(
        "openai-compat:{}#llama?key_env=MY_GATEWAY_KEY&preset=llama-cpp",
        server.url()
    );
    let model = open_model(&ModelSpec::parse(&spec).unwrap(), &opts).unwrap();
    let req = question("q")
        .max_tokens(10)
        .constraint(sleuth_llm::OutputConstraint::Grammar(
            "root ::= \"a\"".into(),
        ));
    model.complete(&req).await.unwrap();
    let seen = &server.requests()[0];
    assert_eq!(seen.bearer(), Some("gw-123"));
    assert_eq!(seen.body["max_tokens"], 10);
    assert_eq!(seen.body["grammar"], "root ::= \"a\"");

    // SLEUTH_API_KEY_ENV names the variable when the spec does not.
    let env = options()
        .env
        .set("SLEUTH_API_KEY_ENV", "OTHER")
        .set("OTHER", "other-key");
    let opts = ModelOptions { env, ..options() };
    let spec = format!("openai-compat:{}#llama", server.url());
    open_model(&ModelSpec::parse(&spec).unwrap(), &opts)
        .unwrap()
        .complete(&question("q"))
        .await
        .unwrap();
    assert_eq!(server.requests()[1].bearer(), Some("other-key"));
}

#[tokio::test]
async fn anthropic_spec_uses_its_key_header() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    let env = options()
        .env
        .set("ANTHROPIC_API_KEY", "sk-ant")
        .set("ANTHROPIC_BASE_URL", server.url());
    let model = open_model(
        &ModelSpec::parse("anthropic:claude-haiku-4-5").unwrap(),
        &ModelOptions { env, ..options() },
    )
    .unwrap();
    assert_eq!(model.complete(&question("q")).await.unwrap().text, "ok");
    let seen = &server.requests()[0];
    assert_eq!(
        (seen.path.as_str(), seen.header("x-api-key")),
        ("/v1/messages", Some("sk-ant"))
    );
}

#[tokio::test]
async fn scripted_spec_replays_then_repeats_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replies.jsonl");
    std::fs::write(
        &path,
        "\"Action: search[Dune]\"\n\"Action: finish[Frank Herbert]\"\n",
    )
    .unwrap();
    let spec = ModelSpec::parse(&format!("scripted:{}", path.display())).unwrap();
    let model = open_model(&spec, &options()).unwrap();
    let texts: Vec<String> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            v.push(model.complete(&question("q")).await.unwrap().text);
        }
        v
    };
    assert_eq!(
        texts,
        [
            "Action: search[Dune]",
            "Action: finish[Frank Herbert]",
            "Action: finish[Frank Herbert]"
        ]
    );
}

#[test]
fn a_model_id_drops_where_the_model_is_served_but_keeps_what_changes_its_calls() {
    let id = |spec: &str| ModelSpec::parse(spec).unwrap().model_id();
    assert_eq!(
        id("openai-compat:http://a:8000/v1#qwen?key_env=K"),
        "openai-compat:qwen"
    );
    assert_eq!(
        id("openai-compat:http://b/v1#qwen?preset=vllm"),
        "openai-compat:qwen?preset=vllm"
    );
    assert_eq!(
        id("anthropic:claude?prompt_cache=off"),
        "anthropic:claude?prompt_cache=off"
    );
    assert_eq!(id("openai:gpt-4o-mini"), "openai:gpt-4o-mini");
}
