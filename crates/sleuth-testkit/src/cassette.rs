//! Recorded provider traffic, replayed: the responses OpenAI and Anthropic really sent
//! (taken from other projects' VCR cassettes, trimmed to what a client reads), or,
//! where no recording exists, the provider's documented body; each file says which in
//! its `origin`, and `cassettes/README.md` names every source.
//!
//! A cassette is one JSON file, `cassettes/<name>.json`:
//!
//! ```json
//! {"provider": "openai", "origin": "recorded",
//!  "responses": [{"status": 429, "headers": {"retry-after": "1"}, "body": {"error": {}}}]}
//! ```
//!
//! `body` is the JSON the server sent (a string is sent as it is, for bodies that are
//! not JSON). Requests are not kept: the tests check what the client sent themselves.

use crate::{ReceivedRequest, Reply};
use serde_json::Value;
use std::path::PathBuf;

/// One recorded response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A named list of recorded responses.
#[derive(Debug, Clone)]
pub struct Cassette {
    pub name: String,
    /// `openai` or `anthropic`.
    pub provider: String,
    /// `recorded` (real traffic) or `documented` (the provider's documented body).
    pub origin: String,
    pub responses: Vec<Recorded>,
}

impl Cassette {
    /// The folder of the cassettes (`crates/sleuth-testkit/cassettes`) of the clone
    /// being tested. Cargo does not rebuild a crate whose clone moved, so in a build
    /// folder shared between clones (CI's cache) the path `env!` compiled in can name
    /// another clone, or one since deleted; the running test's package (cargo sets
    /// `CARGO_MANIFEST_DIR` when it runs one) sits beside this crate, so that is
    /// looked at first.
    pub fn dir() -> PathBuf {
        let running = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(|d| PathBuf::from(d).join("../sleuth-testkit/cassettes"))
            .filter(|d| d.is_dir());
        running.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cassettes"))
    }

    /// The names of every cassette, sorted.
    pub fn names() -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(Self::dir())
            .expect("the cassettes folder")
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".json").map(str::to_string)
            })
            .collect();
        names.sort();
        names
    }

    /// Loads `cassettes/<name>.json`; panics (a test fixture error) when it is missing
    /// or malformed.
    pub fn load(name: &str) -> Cassette {
        let path = Self::dir().join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cassette {}: {e}", path.display()));
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("cassette {}: {e}", path.display()));
        let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        let responses = v["responses"]
            .as_array()
            .unwrap_or_else(|| panic!("cassette {name}: no responses"))
            .iter()
            .map(recorded)
            .collect();
        Cassette {
            name: name.to_string(),
            provider: field("provider"),
            origin: field("origin"),
            responses,
        }
    }

    /// The `i`-th response as a server reply.
    pub fn reply(&self, i: usize) -> Reply {
        Reply::Recorded(self.responses[i].clone())
    }

    /// A handler answering the `i`-th request with the `i`-th response; past the end,
    /// a 500 saying the cassette ran out (so an unexpected extra request fails loudly).
    pub fn replay(&self) -> impl Fn(&ReceivedRequest) -> Reply + Send + Sync {
        let responses = self.responses.clone();
        let name = self.name.clone();
        move |req| match responses.get(req.index) {
            Some(r) => Reply::Recorded(r.clone()),
            None => Reply::Status {
                code: 500,
                retry_after: None,
                body: format!("cassette {name} has no response {}", req.index + 1),
            },
        }
    }
}

fn recorded(v: &Value) -> Recorded {
    let headers = v["headers"]
        .as_object()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let body = match &v["body"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Recorded {
        status: v["status"].as_u64().unwrap_or(200) as u16,
        headers,
        body,
    }
}
