//! A canary key must never surface: not in errors (Display or Debug), not in Debug
//! prints of the configuration, not in the response cache's bytes.

use crate::support::{options, question};
use sleuth_llm::{open_stack, CacheSpec, ChatModel, ModelOptions, ModelSpec};
use sleuth_testkit::{sequence, MockServer, Reply};
use std::time::Duration;

const CANARY: &str = "sk-canary-7f3a9c1e5b2d";

fn assert_clean(what: &str, text: &str) {
    assert!(
        !text.contains(CANARY),
        "canary key leaked into {what}: {text}"
    );
}

#[tokio::test]
async fn canary_key_never_leaks() {
    // A server that echoes the key back in every kind of answer.
    let echo = format!("Incorrect API key provided: {CANARY}");
    let server = MockServer::start(sequence(vec![
        Reply::openai_error(401, "invalid_api_key", &echo),
        Reply::Malformed(format!("<html>{echo}</html>")),
        Reply::openai_error(
            400,
            "context_length_exceeded",
            &format!("maximum context length; {echo}"),
        ),
        Reply::Hang(Duration::from_secs(5)),
        Reply::text("fine"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let opts = ModelOptions {
        timeout: Duration::from_millis(300),
        retry: crate::support::fast_retry(1),
        cache: Some(CacheSpec::Sqlite(dir.path().to_path_buf())),
        env: options()
            .env
            .set("OPENAI_API_KEY", CANARY)
            .set("OPENAI_BASE_URL", server.url()),
        ..options()
    };
    let spec = ModelSpec::parse("openai:gpt-4o-mini").unwrap();
    let stack = open_stack(&spec, &opts).unwrap();
    let model = stack.session();
    let mut seen = Vec::new();
    for _ in 0..4 {
        let e = model.complete(&question("q")).await.unwrap_err();
        seen.push(format!("{e} / {e:?}"));
    }
    assert!(model.complete(&question("q")).await.is_ok());
    assert_eq!(
        server.requests()[0].bearer(),
        Some(CANARY),
        "the key is sent to the server"
    );

    // Connection refused, against a port nobody listens on any more.
    let dead_url = {
        let dead = MockServer::start(|_| Reply::text("x")).await;
        dead.url()
    };
    let dead_opts = ModelOptions {
        env: opts.env.clone().set("OPENAI_BASE_URL", dead_url),
        cache: None,
        ..opts.clone()
    };
    let e = open_stack(&spec, &dead_opts)
        .unwrap()
        .model()
        .complete(&question("q"))
        .await
        .unwrap_err();
    seen.push(format!("{e} / {e:?}"));

    for (i, s) in seen.iter().enumerate() {
        assert_clean(&format!("error {i}"), s);
    }
    assert!(
        seen[0].contains("[redacted]"),
        "the echoed key is replaced: {}",
        seen[0]
    );
    assert_clean("Debug of the options", &format!("{opts:?}"));
    assert_clean("Debug of the stack", &format!("{stack:?}"));
    assert_clean("Debug of the spec", &format!("{spec:?}"));

    // Every byte the cache wrote (database, WAL and shared-memory files).
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert_clean("the cache files", &String::from_utf8_lossy(&bytes));
        files += 1;
    }
    assert!(files >= 1);
}
