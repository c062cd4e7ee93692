//! Integration tests: `sleuth eval` — records, resume without loss or duplicates,
//! failures recorded per question, clear errors for bad input.

use crate::agents::read_records;
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A server that finishes every question with its HotpotQA gold answer on turn 2.
fn oracle_server() -> MockServer {
    let gold: HashMap<String, String> = std::fs::read_to_string(hotpot())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["question"].as_str().unwrap().to_string(),
                v["answer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    MockServer::spawn(move |req: &ReceivedRequest| {
        let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let q = first_user
            .strip_prefix("Question: ")
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let answer = gold.get(q).cloned().unwrap_or_else(|| "unknown".into());
        let assistant_turns = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        Reply::text(if assistant_turns == 0 {
            "Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- [Q1] who? | action: who | priority: high\nAction: search[the question]".to_string()
        } else {
            format!("Confirmed Facts:\n- [F1] {answer} (source: X)\nActive Hypotheses:\n- [H1] {answer} | confidence: high | supports: F1 | contradicts: -\nOpen Questions:\n- none\nAction: finish[{answer}]")
        })
    })
}

fn oracle_eval(url: &str, out: &Path, limit: usize) -> Eval {
    Eval::new("hotpotqa", hotpot(), "react,sleuth", url, out)
        .opt("--limit", limit)
        .opt("--concurrency", 4)
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn eval_writes_scored_records_and_resumes_without_duplicates() {
    let server = oracle_server();
    let url = format!("openai-compat:{}#oracle", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");

    oracle_eval(&url, &out, 3).ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 6);
    assert!(records
        .iter()
        .all(|r| r["em"] == 1.0 && r["f1"] == 1.0 && r["finished"] == true && r["turns"] == 2));
    let calls_before = server.request_count();
    assert_eq!(calls_before, 12);

    // A kill mid-write leaves a partial line; resuming cuts it and runs the rest.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("records.jsonl"))
        .unwrap();
    f.write_all(br#"{"id": "half-writ"#).unwrap();
    drop(f);
    oracle_eval(&url, &out, 5).ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 10);
    let keys: HashSet<(String, String)> = records
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().into(),
                r["method"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(keys.len(), 10, "no duplicates");
    assert_eq!(
        server.request_count() - calls_before,
        8,
        "only the 4 new episodes ran"
    );

    // Nothing left to do: no calls.
    oracle_eval(&url, &out, 5).ok();
    assert_eq!(server.request_count() - calls_before, 8);

    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(config["methods"], serde_json::json!(["react", "sleuth"]));
    assert_eq!(config["dataset"], "hotpotqa");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_changed_configuration_is_refused_in_the_same_directory() {
    let server = oracle_server();
    let url = format!("openai-compat:{}#oracle", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    oracle_eval(&url, &out, 1).ok();
    let o = oracle_eval(&url, &out, 1).set("turns=10").output();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("made under other conditions: setting turns was unset and is `10` now"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn server_errors_become_error_records_and_the_run_goes_on() {
    // Every other request fails permanently (400): those questions get error records.
    let server = MockServer::spawn(|req| {
        let q = req.body["messages"][1]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if q.len() % 2 == 0 {
            Reply::openai_error(400, "invalid_request_error", "bad request for this one")
        } else {
            Reply::text("Action: finish[something]")
        }
    });
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = Eval::new("hotpotqa", hotpot(), "react", &url, &out)
        .opt("--limit", 8)
        .output();
    let records = read_records(&out);
    assert_eq!(records.len(), 8);
    let errors = records.iter().filter(|r| r["error"].is_string()).count();
    assert!(errors > 0 && errors < 8, "{errors} errors");
    assert!(o.status.success(), "{}", stderr(&o));
    let e = records.iter().find(|r| r["error"].is_string()).unwrap();
    assert!(e["error"].as_str().unwrap().contains("400"));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn an_unreachable_endpoint_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = Eval::new(
        "hotpotqa",
        hotpot(),
        "react",
        "openai-compat:http://127.0.0.1:9/v1#m",
        dir.path().join("r"),
    )
    .opt("--limit", 2)
    .opt("--timeout", 5)
    // The message is the point, not the retries (providers.rs tests those): two
    // attempts instead of the default's backoff keep the test from waiting 10 s.
    .opt("--attempts", 2)
    .output();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("every question failed") && err.contains("127.0.0.1:9"),
        "{err}"
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn bad_input_gets_one_line_errors() {
    let data = hotpot();
    let d = data.to_str().unwrap();
    let eval = |dataset: &str, data: &str, methods: &str, model: &str| {
        Eval::new(dataset, data, methods, model, "/tmp/x")
    };
    for (command, needle) in [
        (eval("hotpot2", d, "react", "scripted:x"), "unknown dataset"),
        (
            eval("hotpotqa", "/nonexistent.jsonl", "react", "scripted:x"),
            "does not exist",
        ),
        (
            eval("hotpotqa", d, "reakt", "scripted:x"),
            "unknown method `reakt`",
        ),
        (
            eval("hotpotqa", d, "react", "gpt4"),
            "invalid model spec `gpt4`",
        ),
        (
            eval("hotpotqa", d, "react", "scripted:x").set("turnz=3"),
            "unknown setting `turnz`",
        ),
    ] {
        let args = command.args();
        let o = sleuth(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

/// Every recipe of `experiments/` validates and plans (a dry run), with the corpus
/// recipes given an index, and the EIR recipes list their held-out setup questions.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn every_experiment_recipe_validates_and_plans() {
    let data = crate::util::recipe_data();
    let tmp = tempfile::tempdir().unwrap();
    let index = crate::util::musique_index(tmp.path());
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let out = ok(&[
                "experiment",
                path.to_str().unwrap(),
                "--model",
                "scripted:unused",
                "--data",
                &data[1],
                "--data",
                &data[3],
                "--data",
                &data[5],
                "--index",
                index.to_str().unwrap(),
                "--dry-run",
            ]);
            let shown = path.display();
            assert!(out.contains("episodes"), "{shown}: {out}");
            assert!(
                out.contains(" jobs, ") && out.contains("sleuth eval --dataset"),
                "{shown}: {out}"
            );
            if path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("eir-")
            {
                assert!(
                    out.contains("seeded sample of 1000 (seed 0)")
                        && out.contains("20 setup questions held out, never scored: "),
                    "{shown}: {out}"
                );
            }
            n += 1;
        }
    }
    assert!(n >= 10, "recipes found: {n}");
}

/// `sleuth ARGS` started in the background, with the environment `util::sleuth` uses.
fn spawn_sleuth(args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_sleuth"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("SLEUTH_CACHE")
        .env("SLEUTH_NO_CACHE", "true")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start sleuth")
}

/// Waits until `dir/run.lock` names `pid` (the run holds its directory).
fn wait_for_lock(dir: &Path, pid: u32) {
    let lock = dir.join("run.lock");
    for _ in 0..500 {
        if std::fs::read_to_string(&lock).is_ok_and(|s| s.trim() == pid.to_string()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} never named pid {pid}", lock.display());
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_second_writer_is_refused_with_the_holders_pid_and_a_dead_holder_frees_the_directory() {
    // The server holds every reply until the test opens the gate (10 s at most, so a
    // broken lock fails the test instead of hanging it): the first run is certainly
    // still running, and holding the directory, when the second one starts.
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    let server = MockServer::spawn(move |_| {
        let waiting = std::time::Instant::now();
        while !open.load(Ordering::SeqCst) && waiting.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Reply::text("Action: finish[yes]")
    });
    let url = format!("openai-compat:{}#slow", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let eval = |limit: usize| {
        Eval::new("hotpotqa", hotpot(), "react", &url, &out)
            .opt("--limit", limit)
            .opt("--concurrency", 1)
    };

    let first = spawn_sleuth(&eval(6).args());
    wait_for_lock(&out, first.id());
    let second = eval(6).output();
    assert!(!second.status.success(), "a second writer must be refused");
    let err = stderr(&second);
    assert!(
        err.contains("another sleuth is writing this run directory")
            && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    gate.store(true, Ordering::SeqCst);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let records = read_records(&out);
    assert_eq!(records.len(), 6, "one record per question, no duplicates");
    assert_eq!(server.request_count(), 6, "the refused run sent nothing");

    // A holder killed with SIGKILL leaves its lock file (and pid) behind, but not the
    // lock: the next run takes the directory and resumes.
    gate.store(false, Ordering::SeqCst);
    let more = eval(9);
    let mut killed = spawn_sleuth(&more.args());
    wait_for_lock(&out, killed.id());
    killed.kill().unwrap();
    killed.wait().unwrap();
    gate.store(true, Ordering::SeqCst);
    more.ok();
    let records = read_records(&out);
    let keys: HashSet<String> = records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!((records.len(), keys.len()), (9, 9));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn report_warns_about_duplicate_records_in_one_run() {
    let server = MockServer::spawn(|_| Reply::text("Action: finish[yes]"));
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    Eval::new("hotpotqa", hotpot(), "react", &url, &out)
        .opt("--limit", 4)
        .ok();
    let clean = sleuth(&["report", out.to_str().unwrap()]);
    assert!(clean.status.success());
    assert!(!stderr(&clean).contains("duplicate"), "{}", stderr(&clean));

    // What two unlocked writers used to leave: every record twice.
    let records = out.join("records.jsonl");
    let text = std::fs::read_to_string(&records).unwrap();
    std::fs::write(&records, text.repeat(2)).unwrap();
    let o = sleuth(&["report", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("4 duplicate records (4 questions recorded more than once"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let summary = &v["analysis"]["summaries"][0];
    assert_eq!(summary["n"], 4, "the first of each is counted: {summary}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn rerunning_a_run_of_errors_fails_and_names_retry_errors() {
    let server = MockServer::spawn(|_| {
        Reply::openai_error(400, "invalid_request_error", "bad request for all")
    });
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let eval = || Eval::new("hotpotqa", hotpot(), "react", &url, &out).opt("--limit", 3);

    let first = eval().output();
    assert!(!first.status.success());
    assert!(
        stderr(&first).contains("every question failed"),
        "{}",
        stderr(&first)
    );
    let calls = server.request_count();

    // Nothing new to run, but nothing succeeded either: not a silent exit 0.
    let again = eval().output();
    assert!(!again.status.success(), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(
        err.contains("all 3 selected records") && err.contains("--retry-errors"),
        "{err}"
    );
    assert!(err.contains("3 already there (3 with errors)"), "{err}");
    assert_eq!(server.request_count(), calls, "no request was made");

    // With the flag the errors run again (and fail again, loudly).
    let retried = eval().extra(&["--retry-errors"]).output();
    assert!(!retried.status.success());
    assert!(stderr(&retried).contains("every question failed"));
    assert!(server.request_count() > calls);
    assert_eq!(read_records(&out).len(), 3, "old error records replaced");
}

/// A method whose every reply is unparseable is not a clean run that scored zero:
/// eval's closing table and the report's first table count the parse failures.
#[test]
fn parse_failures_are_counted_in_evals_summary_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    // An empty reply, every call: no action can be read and no final answer either.
    let model = replies(dir.path(), "r.json", &[String::new()]);
    let out = dir.path().join("run");
    let data = crate::golden::fixture("musique");
    let o = sleuth(&[
        "eval",
        "--data",
        data.to_str().unwrap(),
        "--methods",
        "eir",
        "--model",
        &model,
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let records = read_records(&out);
    let n = records.len();
    assert!(n > 0 && records.iter().all(|r| r["stop"] == "parse_failure"));
    let line = err
        .lines()
        .find(|l| l.starts_with("eir "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains(&format!("  {n} unparseable")), "{line}");
    let report = ok(&["report", out.to_str().unwrap()]);
    let header = report
        .lines()
        .find(|l| l.contains(" EM ") && l.contains("cost/q"))
        .unwrap();
    assert!(header.contains("problems"), "{header}");
    // One summary row per MuSiQue hop split: their counts add up to every record.
    let counted: usize = report
        .lines()
        .filter(|l| l.starts_with("| musique"))
        .filter_map(|l| l.split('|').rev().nth(1))
        .filter_map(|cell| {
            let part = cell
                .trim()
                .split(", ")
                .find(|p| p.ends_with(" unparseable"))?;
            part.strip_suffix(" unparseable")?.parse::<usize>().ok()
        })
        .sum();
    assert_eq!(counted, n, "{report}");
}

/// Ctrl-C (SIGINT) mid-run: eval says how many records it kept and the command that
/// resumes, prints what they score so far, and exits 130; running that command again
/// finishes the run without losing or repeating a record.
#[test]
fn ctrl_c_keeps_the_records_says_how_to_resume_and_exits_130() {
    stop_mid_run_then_resume("-INT", 130, "interrupted");
}

/// Sends `signal` (`kill`'s form) to an eval of the four fixture questions once two
/// records are written, checks it exits with `code`, says `word: 2 records kept …`, the
/// resume command and the partial scores, then resumes and checks the four records,
/// none repeated.
pub(crate) fn stop_mid_run_then_resume(signal: &str, code: i32, word: &str) {
    let served = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    // The first two answers come at once, every later one after 5 s: the run is
    // certainly in flight with two records written when the signal arrives.
    let server = MockServer::spawn(move |_| {
        if count.fetch_add(1, Ordering::SeqCst) >= 2 {
            std::thread::sleep(std::time::Duration::from_secs(5));
        }
        Reply::text("Action: finish[yes]")
    });
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let data = crate::golden::fixture("musique"); // four questions
    let args = [
        "eval",
        "--data",
        data.to_str().unwrap(),
        "--methods",
        "react",
        "--model",
        &url,
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let child = spawn_sleuth(&args);
    let records = out.join("records.jsonl");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&records).map_or(0, |t| t.lines().count()) < 2 {
        assert!(started.elapsed().as_secs() < 20, "no records written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(
        err.contains(&format!("{word}: 2 records kept in "))
            && err.contains("(2 written by this run)"),
        "{err}"
    );
    assert!(
        err.contains("resume with:") && err.contains("--concurrency 1"),
        "{err}"
    );
    assert!(err.contains("react ") && err.contains("problems"), "{err}");
    // The resumed run writes only what is missing.
    served.store(0, Ordering::SeqCst);
    ok(&args);
    let all = read_records(&out);
    let ids: HashSet<_> = all
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), all.len(), "no record repeated");
    assert_eq!(all.len(), 4, "the resumed run finished the rest");
}

/// `--limit` on MuSiQue (ordered by hops) takes one split only: eval says so and points
/// at `--sample`; with the sample the mix is there and nothing is said.
#[test]
fn a_limit_that_takes_one_hop_split_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "r.json", &["Action: finish[x]".to_string()]);
    let data = crate::golden::fixture("musique");
    let run = |extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec![
            "eval",
            "--data",
            data.to_str().unwrap(),
            "--methods",
            "react",
            "--model",
            &model,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = sleuth(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = run(&["--limit", "2"], "head");
    assert!(
        err.contains("warning: the first 2 questions are all 2-hop")
            && err.contains("--sample 2 --seed S"),
        "{err}"
    );
    let err = run(&["--sample", "4"], "mix");
    assert!(!err.contains("warning: the first"), "{err}");
}

/// A recipe of two equal react jobs (top_k 1 and 2) on the MuSiQue fixture, and its
/// `--data` pair.
fn two_job_recipe(dir: &Path) -> (std::path::PathBuf, String) {
    let recipe = dir.join("two.toml");
    std::fs::write(
        &recipe,
        "name = \"two\"\nmethods = [\"react\"]\n[settings]\nturns = 2\n\
         [[datasets]]\nname = \"musique\"\n[[groups]]\ngrid = { top_k = [1, 2] }\n",
    )
    .unwrap();
    let data = format!("musique={}", crate::golden::fixture("musique").display());
    (recipe, data)
}

/// Every eval flag that shapes a run is an experiment flag (issue 30 item 7): prices,
/// the cost budget, concurrency, rate limits, timeouts, the cache, the sample; and the
/// dry run after a partial run estimates only what is left.
#[test]
fn experiment_takes_evals_run_flags_and_plans_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let (recipe, data) = two_job_recipe(dir.path());
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[m]\ninput = 1.0\noutput = 2.0\n").unwrap();
    let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
    let model = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("out");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            &model,
            "--data",
            &data,
            "--out",
            out.to_str().unwrap(),
            "--prices",
            prices.to_str().unwrap(),
            "--max-cost",
            "5",
            "--concurrency",
            "2",
            "--rpm",
            "6000",
            "--timeout",
            "30",
            "--attempts",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        ok(&refs)
    };
    let plan = run(&["--dry-run"]);
    assert!(plan.contains("2 jobs, 8 episodes"), "{plan}");
    assert!(plan.contains("--concurrency 2"), "{plan}");
    assert!(
        !plan.contains("unknown (no price"),
        "--prices priced the plan: {plan}"
    );
    // Run the first job only (a sample of 2 on the first grid point's folder), then plan.
    let _ = run(&["--sample", "2", "--seed", "1"]);
    let plan = run(&["--dry-run", "--sample", "2", "--seed", "1"]);
    assert!(plan.contains("2 jobs, 0 episodes"), "{plan}");
    assert!(
        plan.contains("4 episodes already recorded under the output root are not counted"),
        "{plan}"
    );
}

/// `experiment --max-cost` bounds the whole experiment: each job gets what the earlier
/// ones left, so the second of two equal jobs stops where one budget per job would not.
#[test]
fn an_experiments_cost_budget_is_shared_by_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let (recipe, data) = two_job_recipe(dir.path());
    let prices = dir.path().join("prices.toml");
    // Output is free: the budget reserves a call's worst-case output before sending it.
    std::fs::write(&prices, "[m]\ninput = 1000.0\noutput = 0.0\n").unwrap();
    let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
    let model = format!("openai-compat:{}#m", server.url());
    let run = |out: &Path, budget: Option<&str>| {
        let mut a = vec![
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            &model,
            "--data",
            &data,
            "--prices",
            prices.to_str().unwrap(),
            "--concurrency",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(b) = budget {
            a.extend(["--max-cost", b]);
        }
        sleuth(&a)
    };
    let free = dir.path().join("free");
    assert!(run(&free, None).status.success());
    let job_cost: f64 = read_records(&free.join("musique/react/top_k-1"))
        .iter()
        .map(|r| r["cost_usd"].as_f64().unwrap())
        .sum();
    assert!(job_cost > 0.0);
    let budget = format!("{:.6}", job_cost * 1.5);
    let capped = dir.path().join("capped");
    let o = run(&capped, Some(&budget));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("job 2 (musique/react/top_k-2)")
            && stderr(&o).contains("stopped before exceeding the cost budget"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read_records(&capped.join("musique/react/top_k-1")).len(), 4);
    assert!(read_records(&capped.join("musique/react/top_k-2")).len() < 4);
}
