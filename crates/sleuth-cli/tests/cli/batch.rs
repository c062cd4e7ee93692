//! `--batch` through the binary (issue 31): the same scripted run with and without the
//! providers' batch APIs (emulated by the testkit, in their published formats) gives
//! the same records at half the billed cost, and a resumed run reads back the batches
//! an earlier run paid for instead of submitting them again.

use crate::agents::{memory, turn_of};
use crate::golden::fixture;
use crate::util::{records_under, Eval};
use serde_json::Value;
use sleuth_testkit::{BatchPlan, MockServer, ReceivedRequest, Reply};
use std::path::{Path, PathBuf};

/// 20 MuSiQue questions: the fixture's four, five times over, each copy's question
/// marked with its number so every episode's requests (and answer) are its own.
fn twenty_questions(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("musique")).unwrap();
    let originals: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut out = String::new();
    for copy in 0..5 {
        for q in &originals {
            let mut q = q.clone();
            q["id"] = format!("{}-{copy}", q["id"].as_str().unwrap()).into();
            q["question"] = format!("{} (copy {copy})", q["question"].as_str().unwrap()).into();
            out.push_str(&(q.to_string() + "\n"));
        }
    }
    let path = dir.join("twenty.jsonl");
    std::fs::write(&path, out).unwrap();
    path
}

/// Replies by what the request holds, never by arrival order: copy K searches for
/// K % 3 + 1 turns, then answers `copy K` (so episodes end at different rounds).
fn reply(req: &ReceivedRequest) -> Reply {
    let copy: usize = req
        .raw_body
        .split("(copy ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let turn = turn_of(req);
    if turn > copy % 3 + 1 {
        Reply::text(memory(2, &format!("finish[copy {copy}]")))
    } else {
        Reply::text(memory(turn.min(2), "search[born]"))
    }
}

fn server() -> MockServer {
    MockServer::spawn_with_batches(
        // Three polls a batch: the first finds none of its requests run, the second
        // half of them, the third all (`ended`).
        BatchPlan {
            polls_before_done: 2,
            failed_downloads: 0,
        },
        reply,
    )
}

/// Which provider's API the server is spoken to in.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    /// `openai-compat:URL#gpt-4o-mini`: the Batch API.
    OpenAi,
    /// `anthropic:claude-haiku-4-5`: Message Batches.
    Anthropic,
}

/// `sleuth eval` of react and sleuth on the twenty questions, batched or not.
fn eval(server: &MockServer, data: &Path, out: &Path, batch: bool) -> String {
    eval_in(Api::OpenAi, server, data, out, batch)
}

fn eval_in(api: Api, server: &MockServer, data: &Path, out: &Path, batch: bool) -> String {
    let model = match api {
        Api::OpenAi => format!("openai-compat:{}#gpt-4o-mini", server.url()),
        Api::Anthropic => "anthropic:claude-haiku-4-5".to_string(),
    };
    let mut e = Eval::new("musique", data, "react,sleuth", &model, out)
        .extra(&["--no-cache"])
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", "sk-ant-test");
    if batch {
        e = e.extra(&["--batch", "--batch-poll", "0.01"]);
    }
    let o = e.output();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

/// Records by (id, method).
fn by_key(records: Vec<Value>) -> Vec<((String, String), Value)> {
    let mut keyed: Vec<_> = records
        .into_iter()
        .map(|r| {
            let key = (
                r["id"].as_str().unwrap().to_string(),
                r["method"].as_str().unwrap().to_string(),
            );
            (key, r)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed
}

/// A record without what batching is meant to change (its price and batch count), nor
/// its `conditions` digest, which names the server each run was served by.
fn unpriced(mut r: Value) -> Value {
    let o = r.as_object_mut().unwrap();
    o.remove("cost_usd");
    o.remove("batched_calls");
    o.remove("conditions");
    if let Some(first) = o.get_mut("first_attempt").and_then(Value::as_object_mut) {
        first.remove("cost_usd");
    }
    r
}

/// `("dataset method", cost/q, list cost/q)` of each row of `report --out`'s summary table.
fn report_costs(run: &Path) -> Vec<(String, f64, f64)> {
    let out = run.join("report");
    crate::util::ok(&[
        "report",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows: Vec<Value> = std::fs::read_to_string(out.join("summary.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    rows.iter()
        .map(|r| {
            let cost = r["cost_per_q"].as_f64().unwrap_or_else(|| panic!("{r}"));
            let list = r
                .get("list_cost_per_q")
                .and_then(Value::as_f64)
                .unwrap_or(cost);
            (format!("{} {}", r["dataset"], r["method"]), cost, list)
        })
        .collect()
}

/// Batches created on the server (either provider's).
fn creates(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| {
            r.method == "POST" && (r.path == "/v1/batches" || r.path == "/v1/messages/batches")
        })
        .count()
}

/// Chat calls sent on their own, outside any batch.
fn plain_calls(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| {
            (r.path == "/v1/chat/completions" || r.path == "/v1/messages")
                && r.header("x-batch-id").is_none()
        })
        .count()
}

/// Batches a journal records as submitted.
fn submitted(journal: &str) -> usize {
    journal.lines().filter(|l| l.contains("\"keys\"")).count()
}

#[test]
fn a_batched_run_gives_the_plain_runs_records_at_half_the_billed_cost() {
    same_records_at_half_price(Api::OpenAi);
}

#[test]
fn anthropic_message_batches_give_the_plain_runs_records_at_half_the_billed_cost() {
    same_records_at_half_price(Api::Anthropic);
}

fn same_records_at_half_price(api: Api) {
    let tmp = tempfile::tempdir().unwrap();
    let data = twenty_questions(tmp.path());
    let plain_server = server();
    eval_in(api, &plain_server, &data, &tmp.path().join("plain"), false);
    assert_eq!(creates(&plain_server), 0);
    // 2 methods x 4 questions x (2 + 3 + 4 + 2 + 3) calls over the five copies.
    assert_eq!(plain_calls(&plain_server), 112);
    let batch_server = server();
    let started = std::time::Instant::now();
    let log = eval_in(api, &batch_server, &data, &tmp.path().join("batch"), true);
    assert_eq!(plain_calls(&batch_server), 0, "every call went in a batch");

    let plain = by_key(records_under(&tmp.path().join("plain")));
    let batched = by_key(records_under(&tmp.path().join("batch")));
    assert_eq!(plain.len(), 40);
    assert_eq!(batched.len(), 40);
    let (mut plain_usd, mut batch_usd) = (0.0, 0.0);
    for ((key, p), (bkey, b)) in plain.into_iter().zip(batched) {
        assert_eq!(key, bkey);
        assert!(p["error"].is_null(), "{key:?}: {}", p["error"]);
        assert_eq!(b["batched_calls"], b["calls"], "{key:?}");
        assert!(p.get("batched_calls").is_none(), "{key:?}");
        let (pc, bc) = (
            p["cost_usd"].as_f64().unwrap(),
            b["cost_usd"].as_f64().unwrap(),
        );
        assert!(pc > 0.0);
        assert!((bc - pc / 2.0).abs() < 1e-12, "{key:?}: {bc} vs {pc}");
        plain_usd += pc;
        batch_usd += bc;
        assert_eq!(unpriced(p), unpriced(b), "{key:?}");
    }
    assert!((batch_usd - plain_usd / 2.0).abs() < 1e-9);
    if api == Api::OpenAi {
        // The report's cost column is what was billed: half, per method; its list-price
        // column (EIR App. D.5) is the same tokens at the list rate, as unbatched.
        let plain_costs = report_costs(&tmp.path().join("plain"));
        let batch_costs = report_costs(&tmp.path().join("batch"));
        // Two methods on MuSiQue's three hop splits.
        assert_eq!(plain_costs.len(), 6, "{plain_costs:?}");
        for ((method, p, p_list), (bmethod, b, b_list)) in plain_costs.iter().zip(&batch_costs) {
            assert_eq!(method, bmethod);
            assert!((b - p / 2.0).abs() < 1e-9, "{method}: {b} vs {p}");
            assert_eq!(p_list, p, "{method}");
            assert!(
                (b_list - p_list).abs() < 1e-9,
                "{method}: {b_list} vs {p_list}"
            );
        }
    }

    // Copies finish after 2, 3 or 4 calls: four rounds, one batch each, every round
    // reported as it went.
    assert_eq!(creates(&batch_server), 4, "{log}");
    for round in 1..=4 {
        progress_of_round(&log, round, started.elapsed().as_secs());
    }
    let journal = std::fs::read_to_string(tmp.path().join("batch/batches.jsonl")).unwrap();
    assert_eq!(submitted(&journal), 4, "{journal}");
}

/// Round `round`'s progress lines, `batch round R ID: STATUS, D/N done, F failed, Mm
/// SSs`, show the batch's counts as they changed: none done, then some, then all, and
/// never a failure; the elapsed time never falls and stays within the run's.
fn progress_of_round(log: &str, round: u32, run_secs: u64) {
    let prefix = format!("batch round {round} ");
    let lines: Vec<(String, u64, u64, u64, u64)> = log
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|l| {
            let (_, rest) = l.split_once(": ").unwrap();
            let fields: Vec<&str> = rest.split(", ").collect();
            let (done, of) = fields[1]
                .strip_suffix(" done")
                .unwrap()
                .split_once('/')
                .unwrap();
            let failed = fields[2].strip_suffix(" failed").unwrap();
            let (m, s) = fields[3]
                .strip_suffix('s')
                .unwrap()
                .split_once("m ")
                .unwrap();
            let secs = m.parse::<u64>().unwrap() * 60 + s.parse::<u64>().unwrap();
            let n = |t: &str| t.parse::<u64>().unwrap();
            (fields[0].to_string(), n(done), n(of), n(failed), secs)
        })
        .collect();
    let shown = || format!("round {round}: {lines:?}\n{log}");
    assert_eq!(lines.len(), 3, "{}", shown());
    let (first, middle, last) = (&lines[0], &lines[1], &lines[2]);
    assert!(
        first.0 == "validating" || first.0 == "in_progress",
        "{}",
        shown()
    );
    assert_eq!(first.1, 0, "{}", shown());
    assert_eq!(middle.0, "in_progress", "{}", shown());
    assert!(0 < middle.1 && middle.1 < middle.2, "{}", shown());
    assert_eq!(last.0, "ended", "{}", shown());
    assert_eq!(last.1, last.2, "{}", shown());
    assert!(
        lines.iter().all(|l| l.2 == first.2 && l.3 == 0),
        "{}",
        shown()
    );
    assert!(lines.windows(2).all(|w| w[0].4 <= w[1].4), "{}", shown());
    assert!(last.4 <= run_secs, "{}", shown());
}

#[test]
fn a_resumed_run_reads_back_the_batches_it_paid_for_without_submitting_again() {
    let tmp = tempfile::tempdir().unwrap();
    let data = twenty_questions(tmp.path());
    let server = server();
    let first = tmp.path().join("first");
    eval(&server, &data, &first, true);
    let submitted = creates(&server);
    assert_eq!(submitted, 4);

    // A run killed after its last batch was submitted, before any record was written:
    // its directory holds run.json and the journal only.
    let killed = tmp.path().join("killed");
    std::fs::create_dir_all(&killed).unwrap();
    for file in ["run.json", "batches.jsonl"] {
        std::fs::copy(first.join(file), killed.join(file)).unwrap();
    }
    let log = eval(&server, &data, &killed, true);
    assert_eq!(
        creates(&server),
        submitted,
        "no batch was submitted again: {log}"
    );
    assert_eq!(plain_calls(&server), 0);
    assert!(log.contains("resumed batch"), "{log}");
    let again = by_key(records_under(&killed));
    let before = by_key(records_under(&first));
    assert_eq!(again.len(), 40);
    for ((key, a), (_, b)) in again.into_iter().zip(before) {
        assert_eq!(a, b, "{key:?}");
    }
}

#[test]
fn the_dry_run_of_a_batched_run_shows_both_prices_and_its_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let data = twenty_questions(tmp.path());
    let out = Eval::new(
        "musique",
        &data,
        "react,sleuth",
        "openai:gpt-4o-mini",
        tmp.path().join("run"),
    )
    .extra(&["--dry-run", "--batch", "--set", "turns=12"])
    .env("OPENAI_API_KEY", "sk-test")
    .ok();
    let line = out
        .lines()
        .find(|l| l.starts_with("with --batch: $"))
        .unwrap_or_else(|| panic!("{out}"));
    let dollars: Vec<f64> = line
        .split('$')
        .skip(1)
        .map(|s| {
            s.split(|c: char| c != '.' && !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(dollars.len(), 2, "{line}");
    assert!(
        dollars[1] > 0.0 && (dollars[0] * 2.0 - dollars[1]).abs() <= 0.011,
        "{line}"
    );
    let total = out.lines().find(|l| l.starts_with("estimate: ")).unwrap();
    assert!(total.contains(&format!("${:.2}", dollars[1])), "{total}");
    // One round per call of the longest episode: every budget is 12 turns here.
    assert!(line.contains("in at most 12 rounds"), "{line}");
    // Without --batch, one price only.
    let plain = Eval::new(
        "musique",
        &data,
        "react,sleuth",
        "openai:gpt-4o-mini",
        tmp.path().join("run"),
    )
    .extra(&["--dry-run"])
    .env("OPENAI_API_KEY", "sk-test")
    .ok();
    assert!(!plain.contains("--batch"), "{plain}");
}

#[test]
fn a_run_killed_mid_round_resumes_without_submitting_a_paid_batch_again() {
    killed_and_resumed(false);
}

#[test]
fn with_a_response_cache_a_resumed_run_reads_back_only_the_undelivered_batches() {
    killed_and_resumed(true);
}

/// A batched run SIGKILLed while round 2's batch is polled, then run again on its
/// directory (with a response cache, or none).
fn killed_and_resumed(cache: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let data = twenty_questions(tmp.path());
    let server = server();
    let out = tmp.path().join("run");
    let cache_dir = tmp.path().join("cache");
    let model = format!("openai-compat:{}#gpt-4o-mini", server.url());
    let mut args = Eval::new("musique", &data, "react,sleuth", &model, &out).extra(&[
        "--batch",
        "--batch-poll",
        "0.3",
    ]);
    args = match cache {
        true => args.extra(&["--cache", cache_dir.to_str().unwrap()]),
        false => args.extra(&["--no-cache"]),
    };
    let start_run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_sleuth"))
            .args(args.args())
            .env_remove("SLEUTH_NO_CACHE")
            .env_remove("SLEUTH_CACHE")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut child = start_run();
    // Each poll waits 0.3 s or more, so round 2 is still being polled when its line
    // shows.
    let journal = out.join("batches.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| submitted(&t));
    let start = std::time::Instant::now();
    while lines() < 2 {
        assert!(start.elapsed().as_secs() < 60, "no second round");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(creates(&server), 2);

    let again = start_run().wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(again.status.success(), "{log}");
    // Rounds 1 and 2 are read back (the cache answers round 1), 3 and 4 submitted:
    // four batches in all, as an uninterrupted run makes.
    assert_eq!(creates(&server), 4, "{log}");
    assert_eq!(plain_calls(&server), 0);
    let mut resumed: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("resumed batch "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    resumed.sort_unstable();
    resumed.dedup();
    let expected = if cache { 1 } else { 2 };
    assert_eq!(resumed.len(), expected, "{log}");
    let records = records_under(&out);
    assert_eq!(records.len(), 40);
    assert!(records.iter().all(|r| r["error"].is_null()));
    if !cache {
        assert!(records.iter().all(|r| r["batched_calls"] == r["calls"]));
    }
}

/// `sleuth experiment` of a recipe of two jobs (react, sleuth) on the twenty questions against `server`,
/// batched by `--batch` on the command line, by the recipe's `batch = true`, or not at
/// all; returns stderr.
fn experiment(server: &MockServer, dir: &Path, data: &Path, how: Batched) -> String {
    let recipe = dir.join(format!("{how:?}.toml"));
    let batch_line = match how {
        Batched::ByRecipe => "batch = true\n",
        Batched::ByFlag | Batched::No => "",
    };
    std::fs::write(
        &recipe,
        format!(
            "name = \"grid\"\n{batch_line}[[datasets]]\nname = \"musique\"\n\
             [[groups]]\nmethods = [\"react\"]\n[[groups]]\nmethods = [\"sleuth\"]\n"
        ),
    )
    .unwrap();
    let model = format!("openai-compat:{}#gpt-4o-mini", server.url());
    let data = format!("musique={}", data.display());
    let out = dir.join(format!("{how:?}"));
    let mut args = vec![
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        &model,
        "--data",
        &data,
        "--out",
        out.to_str().unwrap(),
        "--no-cache",
    ];
    match how {
        Batched::ByFlag => args.extend(["--batch", "--batch-poll", "0.01"]),
        Batched::ByRecipe => args.extend(["--batch-poll", "0.01"]),
        Batched::No => {}
    }
    let o = crate::util::sleuth(&args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{how:?}: {err}");
    err
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Batched {
    ByFlag,
    ByRecipe,
    No,
}

/// The journals under an experiment root, one per job directory that batched.
fn journals_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "batches.jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// An experiment batched by `--batch` or by its recipe's `batch = true` gives the
/// plain experiment's records at half the billed cost, every job's calls in its own
/// lock-step rounds with its own journal; `--batch-poll` without either is refused.
#[test]
fn an_experiment_batched_by_flag_or_by_recipe_gives_the_plain_records_at_half_price() {
    let tmp = tempfile::tempdir().unwrap();
    let data = twenty_questions(tmp.path());
    let plain_server = server();
    experiment(&plain_server, tmp.path(), &data, Batched::No);
    assert_eq!(creates(&plain_server), 0);
    let plain = by_key(records_under(&tmp.path().join("No")));
    assert_eq!(plain.len(), 40);
    for how in [Batched::ByFlag, Batched::ByRecipe] {
        let batch_server = server();
        let log = experiment(&batch_server, tmp.path(), &data, how);
        assert_eq!(plain_calls(&batch_server), 0, "{how:?}: {log}");
        let root = tmp.path().join(format!("{how:?}"));
        let journals = journals_under(&root);
        // One job per method, each its own four rounds (copies end after 2, 3 or 4
        // calls), each journaled beside the job's records.
        assert_eq!(journals.len(), 2, "{how:?}: {journals:?}");
        for journal in &journals {
            let text = std::fs::read_to_string(journal).unwrap();
            assert_eq!(submitted(&text), 4, "{}: {text}", journal.display());
        }
        assert_eq!(creates(&batch_server), 8, "{how:?}: {log}");
        let batched = by_key(records_under(&root));
        assert_eq!(batched.len(), 40, "{how:?}");
        for ((key, p), (bkey, b)) in plain.iter().zip(batched) {
            assert_eq!(key, &bkey);
            assert_eq!(b["batched_calls"], b["calls"], "{how:?} {key:?}");
            let (pc, bc) = (
                p["cost_usd"].as_f64().unwrap(),
                b["cost_usd"].as_f64().unwrap(),
            );
            assert!(
                (bc - pc / 2.0).abs() < 1e-12,
                "{how:?} {key:?}: {bc} vs {pc}"
            );
            assert_eq!(unpriced(p.clone()), unpriced(b), "{how:?} {key:?}");
        }
    }

    let o = crate::util::sleuth(&[
        "experiment",
        tmp.path().join("No.toml").to_str().unwrap(),
        "--model",
        "openai:gpt-4o-mini",
        "--data",
        &format!("musique={}", data.display()),
        "--batch-poll",
        "1",
        "--dry-run",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--batch-poll applies to batched runs only") && err.contains("batch = true"),
        "{err}"
    );
}
