//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A file of the benchmark subsets: `../shared/data` beside the repository, or
/// `SLEUTH_SHARED_DATA` (see `build.rs`). Tests that call this carry
/// `#[cfg_attr(not(shared_data), ignore = ...)]`, so a clone without the folder skips them.
pub fn shared_data(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("SLEUTH_SHARED_DATA_DIR")).join(rel);
    assert!(
        p.exists(),
        "benchmark file missing: {} (is ../shared/data present? SLEUTH_SHARED_DATA points elsewhere)",
        p.display()
    );
    p
}

pub fn hotpot() -> PathBuf {
    shared_data("hotpotqa/hotpot_dev_distractor_subset.jsonl")
}
pub fn musique() -> PathBuf {
    shared_data("musique/musique_ans_dev_subset200_with_paragraphs.jsonl")
}
pub fn twowiki() -> PathBuf {
    shared_data("2wikimultihopqa/2wiki_dev_subset_with_context.jsonl")
}

/// Runs `sleuth ARGS` with no API keys and no response cache unless a test asks for
/// one with `--cache DIR` (tests must not share state through the user's cache).
pub fn sleuth(args: &[&str]) -> Output {
    sleuth_with_env(args, &[])
}

/// [`sleuth`] with these environment variables set (keys, base URLs).
pub fn sleuth_with_env(args: &[&str], env: &[(String, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("SLEUTH_CACHE");
    if !args.contains(&"--cache") {
        cmd.env("SLEUTH_NO_CACHE", "true");
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.output().expect("run sleuth")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and asserts success, returning stdout.
pub fn ok(args: &[&str]) -> String {
    ok_with_env(args, &[])
}

/// [`ok`] with these environment variables set.
pub fn ok_with_env(args: &[&str], env: &[(String, String)]) -> String {
    let o = sleuth_with_env(args, env);
    assert!(
        o.status.success(),
        "sleuth {args:?} failed:\nstdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// A `sleuth eval` command line: the five required arguments up front, options by name.
pub struct Eval {
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Eval {
    pub fn new(
        dataset: &str,
        data: impl AsRef<Path>,
        methods: &str,
        model: &str,
        out: impl AsRef<Path>,
    ) -> Self {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        Eval {
            args: vec![
                "eval".into(),
                "--dataset".into(),
                dataset.into(),
                "--data".into(),
                path(data.as_ref()),
                "--methods".into(),
                methods.into(),
                "--model".into(),
                model.into(),
                "--out".into(),
                path(out.as_ref()),
            ],
            env: Vec::new(),
        }
    }

    /// An environment variable for the run (a key, a base URL).
    pub fn env(mut self, name: &str, value: impl ToString) -> Self {
        self.env.push((name.into(), value.to_string()));
        self
    }

    /// `--name value`.
    pub fn opt(mut self, name: &str, value: impl ToString) -> Self {
        self.args.push(name.into());
        self.args.push(value.to_string());
        self
    }

    /// `--set key=value`.
    pub fn set(self, key_value: &str) -> Self {
        self.opt("--set", key_value)
    }

    /// Arguments copied verbatim.
    pub fn extra(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn args(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    pub fn output(&self) -> Output {
        sleuth_with_env(&self.args(), &self.env)
    }

    /// Runs and asserts success, returning stdout.
    pub fn ok(&self) -> String {
        ok_with_env(&self.args(), &self.env)
    }
}

/// `--data DATASET=FILE` pairs that point a recipe's datasets at the shared subsets
/// (recipes read the fetched full dev sets by default).
pub fn recipe_data() -> [String; 6] {
    let pair = |name: &str, p: PathBuf| format!("{name}={}", p.display());
    [
        "--data".into(),
        pair("hotpotqa", hotpot()),
        "--data".into(),
        pair("musique", musique()),
        "--data".into(),
        pair("2wiki", twowiki()),
    ]
}

/// Every record in every `records.jsonl` below `dir`.
pub fn records_under(dir: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(records_under(&path));
        } else if path.file_name().is_some_and(|n| n == "records.jsonl") {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                out.push(serde_json::from_str(line).unwrap());
            }
        }
    }
    out
}

/// The replay index a request is for: the assistant turns it carries, plus the
/// exchanges compaction removed (its note says how many), so every arm of a replay
/// hears the same reply at the same turn.
pub fn replay_turn(req: &sleuth_testkit::ReceivedRequest) -> usize {
    let messages = req.body["messages"].as_array();
    let assistants = messages.map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
    // Anywhere in the body: the system text is a message of its own in OpenAI's shape,
    // a top-level field in Anthropic's.
    let removed: usize = req
        .raw_body
        .split("the merged state; ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assistants + removed
}

/// A replay server's answer: EIR's final call (of `sleuth-eir`) gets a JSON answer,
/// every other request [`replay_reply`] for its [`replay_turn`].
pub fn replay_answer(req: &sleuth_testkit::ReceivedRequest) -> sleuth_testkit::Reply {
    let last = req.last_message().unwrap_or("");
    if last.contains("Answer the question from the evidence below") {
        return sleuth_testkit::Reply::text(r#"{"answer": "a candidate", "evidence": []}"#);
    }
    sleuth_testkit::Reply::text(replay_reply(replay_turn(req)))
}

/// One SLEUTH reply of a 20-turn replay: facts arrive every third turn (up to five),
/// one hypothesis, one open question, and a search on a word every pool has in it.
pub fn replay_reply(turn: usize) -> String {
    const WORDS: [&str; 10] = [
        "born",
        "city",
        "country",
        "founded",
        "capital",
        "river",
        "president",
        "album",
        "war",
        "university",
    ];
    let facts = (turn / 3).min(5);
    let mut s = String::from("Confirmed Facts:\n");
    for i in 1..=facts {
        s.push_str(&format!(
            "- [F{i}] established link number {i} (source: Link {i})\n"
        ));
    }
    if facts == 0 {
        s.push_str("- none\n");
    }
    s.push_str("Active Hypotheses:\n- [H1] a candidate | confidence: medium | supports: F1 | contradicts: -\n");
    s.push_str("Open Questions:\n- [Q1] the next hop | action: next hop | priority: high\n");
    s.push_str(&format!("Action: search[{}]", WORDS[turn % WORDS.len()]));
    s
}

/// A file of scripted replies in `dir`, as a model spec (`scripted:FILE` repeats the
/// last reply forever).
pub fn replies(dir: &Path, name: &str, replies: &[String]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(replies).unwrap()).unwrap();
    format!("scripted:{}", path.display())
}

/// Builds a corpus and a BM25 index from the MuSiQue dev file under `dir`.
pub fn musique_index(dir: &Path) -> PathBuf {
    build_index(
        &musique(),
        "musique",
        &dir.join("corpus.jsonl"),
        &dir.join("index"),
    )
}

/// `sleuth data corpus` of `data` into `corpus`, then `sleuth index build` into `index`.
pub fn build_index(data: &Path, dataset: &str, corpus: &Path, index: &Path) -> PathBuf {
    ok(&[
        "data",
        "corpus",
        "--dataset",
        dataset,
        "--data",
        data.to_str().unwrap(),
        "--out",
        corpus.to_str().unwrap(),
    ]);
    ok(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        index.to_str().unwrap(),
    ]);
    index.to_path_buf()
}

/// The report commands an experiment wrote into `root/experiment.json` (generated from
/// its recipe's `[[reports]]` and conventions): each one's `about` and its words after
/// `sleuth`, reading `root`.
pub fn recipe_reports(root: &std::path::Path) -> Vec<(String, Vec<String>)> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("experiment.json")).unwrap())
            .unwrap();
    manifest["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let argv = r["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect();
            (r["about"].as_str().unwrap().to_string(), argv)
        })
        .collect()
}
