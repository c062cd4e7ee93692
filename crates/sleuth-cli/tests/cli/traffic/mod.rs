//! The conformance suite: the binary, through `openai:` and `anthropic:`, against the
//! responses those APIs really sent (or, where no recording exists, their documented
//! bodies), replayed by the testkit's [`Cassette`] server. Each test checks what the
//! recording says: usage and cache tokens, the reply text (thinking kept out), tool
//! calls, stop reasons, errors and retries, and that the canary key reaches no file.
//!
//! The cassettes and their sources: `crates/sleuth-testkit/cassettes/README.md`.

mod anthropic;
mod openai;

use crate::golden::fixture;
use crate::util::{stderr, Eval};
use serde_json::Value;
use sleuth_testkit::{Cassette, MockServer};
use std::path::Path;

pub const OPENAI_CANARY: &str = "sk-canary-openai-4b7d1e9f2a6c";
pub const ANTHROPIC_CANARY: &str = "sk-ant-canary-8c3f5a0e7d21";

/// One finished `sleuth eval` run.
pub struct Run {
    pub records: Vec<Value>,
    pub stderr: String,
    pub success: bool,
    _dir: tempfile::TempDir,
}

impl Run {
    /// The run's output directory.
    pub fn out(&self) -> std::path::PathBuf {
        self._dir.path().join("run")
    }

    /// The only record.
    pub fn one(&self) -> &Value {
        assert_eq!(self.records.len(), 1, "{}", self.stderr);
        &self.records[0]
    }
}

/// Runs `react` (one turn unless `settings` say otherwise) on the first `limit`
/// HotpotQA fixture questions with `model`, both APIs pointed at `server` with canary
/// keys; checks that neither key appears in any file the run wrote or in its output.
pub fn run(server: &MockServer, model: &str, limit: usize, settings: &[&str]) -> Run {
    run_opts(server, model, limit, settings, &[])
}

/// [`run`] with more `--name value` options.
pub fn run_opts(
    server: &MockServer,
    model: &str,
    limit: usize,
    settings: &[&str],
    opts: &[(&str, String)],
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut eval = Eval::new("hotpotqa", fixture("hotpotqa"), "react", model, &out)
        .opt("--limit", limit)
        .opt("--concurrency", 1)
        .env("OPENAI_BASE_URL", server.url())
        .env("OPENAI_API_KEY", OPENAI_CANARY)
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", ANTHROPIC_CANARY);
    if !settings.iter().any(|s| s.starts_with("turns=")) {
        eval = eval.set("turns=1");
    }
    for s in settings {
        eval = eval.set(s);
    }
    for (name, value) in opts {
        eval = eval.opt(name, value);
    }
    let o = eval.output();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    for canary in [OPENAI_CANARY, ANTHROPIC_CANARY] {
        assert!(!text.contains(canary), "the key is in the output:\n{text}");
        assert_no_key(dir.path(), canary);
    }
    let records = if out.join("records.jsonl").exists() {
        crate::agents::read_records(&out)
    } else {
        Vec::new()
    };
    Run {
        records,
        stderr: stderr(&o),
        success: o.status.success(),
        _dir: dir,
    }
}

/// Fails when `key` is in any file below `dir`.
fn assert_no_key(dir: &Path, key: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_no_key(&path, key);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(key), "the key is in {}", path.display());
        }
    }
}

/// A server replaying `name` in order.
pub fn replay(name: &str) -> MockServer {
    MockServer::replay(&Cassette::load(name))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The first turn's reply.
pub fn reply(record: &Value) -> &str {
    record["trace"][0]["response"].as_str().unwrap()
}

/// Every message of a request body, as (role, text) with text blocks joined.
pub fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap_or_default().to_string(), text)
        })
        .collect()
}

/// Every cassette has a test here and a row in the README; the README names a source
/// for each.
#[test]
fn every_cassette_is_cited_and_tested() {
    let readme = std::fs::read_to_string(Cassette::dir().join("README.md")).unwrap();
    let suite: String = ["openai.rs", "anthropic.rs"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/cli/traffic")
                    .join(f),
            )
            .unwrap()
        })
        .collect();
    let names = Cassette::names();
    assert!(names.len() >= 20, "{} cassettes", names.len());
    for name in names {
        let c = Cassette::load(&name);
        assert!(
            readme.contains(&format!("`{name}`")),
            "{name} has no row in the README"
        );
        assert!(
            suite.contains(&format!("\"{name}\"")),
            "{name} is not replayed by any test"
        );
        assert!(
            ["recorded", "documented"].contains(&c.origin.as_str()),
            "{name}"
        );
        assert!(name.starts_with(&c.provider), "{name}");
        assert!(!c.responses.is_empty(), "{name}");
    }
}
