//! Golden transcripts: the exact requests every method sends and the records it writes,
//! pinned byte for byte.
//!
//! Each [`Case`] runs `sleuth eval` on the repository's fixture questions against a local
//! OpenAI-compatible server (preset `llama-cpp`, so grammars and JSON schemas travel in
//! the request too) whose replies are a pure function of the request ([`script`]). The
//! transcript (the command, every request body the server received, `run.json` and the
//! records) is compared with `crates/sleuth-cli/tests/golden/case-<case>.json`.
//!
//! A transcript changes only on purpose: a fix that changes what a method sends or
//! records regenerates the files it touches with
//!
//! ```text
//! SLEUTH_BLESS=1 cargo test -p sleuth-cli --test cli golden::
//! ```
//!
//! and the commit says which rule moved. A missing transcript fails (it is never written
//! without `SLEUTH_BLESS=1`), so CI cannot pass on a case nobody reviewed.

mod cases;
mod encode;
pub mod script;

use crate::util::sleuth_with_env;
use cases::{Case, Setup, CASES};
use serde_json::{json, Value};
use sleuth_testkit::MockServer;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed fixture questions of `dataset` (fixtures/README.md).
pub fn fixture(dataset: &str) -> PathBuf {
    let file = match dataset {
        "musique" => "musique/dev_sample.jsonl",
        "hotpotqa" => "hotpotqa/dev_distractor_sample.jsonl",
        "2wiki" => "2wiki/dev_sample.jsonl",
        other => panic!("no fixture for {other}"),
    };
    repo().join("fixtures/benchmarks").join(file)
}

/// The transcript file of a case. The `case-` prefix keeps a transcript named after a
/// benchmark (`2wiki-eir`) from looking like a committed benchmark file to the checks
/// that look for those.
fn golden_file(case: &str) -> PathBuf {
    golden_dir().join(format!("case-{case}.json"))
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn bless() -> bool {
    std::env::var_os("SLEUTH_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `sleuth ARGS`, asserting success.
fn run_ok(args: &[String]) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = sleuth_with_env(&refs, &[]);
    assert!(
        o.status.success(),
        "sleuth {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The `eval` command line of a case (paths as they are on this machine).
fn eval_args(case: &Case, model: &str, out: &Path, work: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "eval".into(),
        "--dataset".into(),
        case.dataset.into(),
        "--data".into(),
        fixture(case.dataset).display().to_string(),
        "--methods".into(),
        case.methods.into(),
        "--model".into(),
        model.into(),
        "--concurrency".into(),
        "1".into(),
        "--limit".into(),
        case.limit.to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    for s in case.settings {
        a.push("--set".into());
        a.push(s.replace("$WORK", &work.display().to_string()));
    }
    match case.setup {
        Setup::Pool => {}
        Setup::Corpus => {
            a.extend([
                "--env".into(),
                "corpus".into(),
                "--index".into(),
                work.join("index").display().to_string(),
            ]);
        }
        Setup::RecoverFrom => {
            a.extend([
                "--failures-of".into(),
                work.join("earlier").display().to_string(),
            ]);
        }
    }
    a
}

/// What a case needs before its run: a corpus index, or an earlier EIR run.
fn prepare(case: &Case, model: &str, work: &Path) {
    match case.setup {
        Setup::Pool => {}
        Setup::Corpus => {
            let corpus = work.join("corpus.jsonl");
            run_ok(&[
                "data".into(),
                "corpus".into(),
                "--dataset".into(),
                case.dataset.into(),
                "--data".into(),
                fixture(case.dataset).display().to_string(),
                "--out".into(),
                corpus.display().to_string(),
            ]);
            run_ok(&[
                "index".into(),
                "build".into(),
                "--corpus".into(),
                corpus.display().to_string(),
                "--out".into(),
                work.join("index").display().to_string(),
            ]);
        }
        Setup::RecoverFrom => {
            // The earlier run eir-recover reads: plain EIR on the same questions.
            let earlier = Case {
                methods: "eir",
                settings: &[],
                setup: Setup::Pool,
                ..*case
            };
            run_ok(&eval_args(&earlier, model, &work.join("earlier"), work));
        }
    }
}

/// Runs a case and returns its transcript.
fn transcript(case: &Case) -> Value {
    let script = script::Script::new(&[fixture("musique"), fixture("hotpotqa"), fixture("2wiki")]);
    let server = MockServer::spawn(move |req| script.reply(req));
    let model = format!("openai-compat:{}#golden?preset=llama-cpp", server.url());
    let work = tempfile::tempdir().unwrap();
    prepare(case, &model, work.path());
    let skip = server.request_count();
    let out = work.path().join("run");
    let args = eval_args(case, &model, &out, work.path());
    run_ok(&args);

    let norm = encode::Normalizer {
        server: server.url(),
        work: work.path().display().to_string(),
        repo: repo()
            .canonicalize()
            .unwrap_or_else(|_| repo())
            .display()
            .to_string(),
        repo_raw: repo().display().to_string(),
    };
    let requests: Vec<Value> = server
        .requests()
        .into_iter()
        .skip(skip)
        .map(|r| r.body)
        .collect();
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    // Digests over every prompt template change with any template's wording, which the
    // requests already pin: shown as `$DIGEST`, so a wording change touches only the
    // transcripts whose requests it changes.
    let digest = Value::String("$DIGEST".into());
    let records: Vec<Value> = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            if let Some(c) = r.get_mut("conditions") {
                *c = digest.clone();
            }
            r
        })
        .collect();
    let mut run_json = run_json;
    if let Some(obj) = run_json.as_object_mut() {
        // Changes with every release; not behaviour.
        obj.remove("sleuth_version");
    }
    if let Some(d) = run_json.pointer_mut("/conditions/prompts/digest") {
        *d = digest;
    }
    json!({
        "case": case.name,
        "about": case.about,
        "command": norm.args(&args),
        "requests": encode::requests(&requests, &norm),
        "run": norm.value(&run_json),
        "records": records.iter().map(|r| encode::multiline(&norm.value(r))).collect::<Vec<_>>(),
    })
}

fn check(case: &Case) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&transcript(case)).unwrap() + "\n";
    let path = golden_file(case.name);
    if bless() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return Ok(());
    }
    let Ok(want) = std::fs::read_to_string(&path) else {
        return Err(format!(
            "{}: no golden transcript; review the case and write it with SLEUTH_BLESS=1",
            path.display()
        ));
    };
    if want == text {
        return Ok(());
    }
    let got = path.with_extension("got.json");
    std::fs::write(&got, &text).unwrap();
    let first = want
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(text.lines().count()));
    Err(format!(
        "{}: the transcript changed (first difference at line {}); this run's is in {} \
         (diff them; if the change is meant, rerun with SLEUTH_BLESS=1 and say why in the commit)",
        path.display(),
        first + 1,
        got.display()
    ))
}

/// Every case, one after another (each is a fraction of a second); all differences are
/// reported together.
#[test]
fn every_method_sends_and_records_exactly_its_golden_transcript() {
    let failures: Vec<String> = CASES.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden transcripts differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// No transcript file is left over from a case that no longer exists.
#[test]
fn every_golden_file_belongs_to_a_case() {
    let Ok(entries) = std::fs::read_dir(golden_dir()) else {
        return;
    };
    for entry in entries {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".got.json") || !name.ends_with(".json") {
            continue;
        }
        assert!(
            CASES
                .iter()
                .any(|c| golden_file(c.name).file_name() == Some(name.as_ref())),
            "tests/golden/{name} has no case in golden/cases.rs: delete it"
        );
    }
}

/// Every registry method has at least one case.
#[test]
fn every_registry_method_has_a_golden_case() {
    let list = crate::util::ok(&["methods"]);
    for line in list.lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if !line.starts_with(name) || name.is_empty() || name.contains(':') {
            continue;
        }
        if sleuth::methods::registry::spec(name).is_err() {
            continue;
        }
        assert!(
            CASES
                .iter()
                .any(|c| c.methods.split(',').any(|m| m == name)),
            "method {name} has no golden case in golden/cases.rs"
        );
    }
}
