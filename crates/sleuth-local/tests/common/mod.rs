//! Shared by the integration tests: finding the real model, loading it, running requests.
#![allow(dead_code)]

use sleuth::llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
use sleuth_local::{LocalModel, LocalOptions};
use std::path::PathBuf;

/// The GGUF the tests run on: `$SLEUTH_TEST_MODEL`, else the installed default model.
/// When it is absent the test is skipped loudly, unless `SLEUTH_REQUIRE_MODEL` is set
/// (CI sets it), in which case absence is a failure.
pub fn model_path() -> Option<PathBuf> {
    let path = std::env::var_os("SLEUTH_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let known = sleuth_local::store::known(sleuth_local::DEFAULT_MODEL).unwrap();
            sleuth_local::store::model_path(known)
        });
    if path.is_file() {
        return Some(path);
    }
    let required = std::env::var("SLEUTH_REQUIRE_MODEL").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "SLEUTH_REQUIRE_MODEL is set but the model is missing at {}: run `sleuth model pull`",
        path.display()
    );
    eprintln!(
        "\n*** SKIPPED: no model at {} -- run `cargo run -p sleuth-cli -- model pull` \
         (set SLEUTH_REQUIRE_MODEL=1 to fail instead) ***\n",
        path.display()
    );
    None
}

/// Two threads: tests run in parallel on small machines.
pub fn opts() -> LocalOptions {
    LocalOptions::default().threads(2).ctx_size(2048)
}

pub fn load(opts: LocalOptions) -> Option<LocalModel> {
    let path = model_path()?;
    Some(LocalModel::load("local:test", &path, opts).expect("the model loads"))
}

pub fn complete(model: &LocalModel, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(model.complete(request))
}

pub fn check_grammar(model: &LocalModel, grammar: &str, sample: Option<&str>) -> bool {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(model.check_grammar(grammar, sample))
        .expect("the grammar loads")
}
