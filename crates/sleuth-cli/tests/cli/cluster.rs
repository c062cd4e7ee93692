//! Integration tests: cluster runs. `--shard auto` under Slurm and Kubernetes
//! environments, shards sharing one Redis response cache in parallel, a Redis killed
//! mid-run, coalescing of identical requests across processes, and moving entries
//! between SQLite and Redis with `sleuth cache`. Redis tests skip (saying so) when
//! `redis-server` is not installed, unless SLEUTH_REQUIRE_REDIS=1.

use crate::agents::{read_records, turn_of};
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, RedisServer, Reply};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Variables that would make `--shard auto` or `--cache` pick up the test machine's
/// own environment.
const AMBIENT: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SLEUTH_CACHE",
    "SLEUTH_NO_CACHE",
    "SLURM_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "JOB_COMPLETION_INDEX",
    "SLEUTH_SHARD_COUNT",
];

/// `sleuth ARGS` with a clean environment plus `env`.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(args);
    for v in AMBIENT {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("run sleuth")
}

fn succeeded(o: &Output) -> String {
    assert!(
        o.status.success(),
        "sleuth failed:\nstdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Searches on turn 1, answers on turn 2, after `delay` (so concurrent callers overlap).
fn two_turn_server(delay: Duration) -> MockServer {
    MockServer::spawn(move |req: &ReceivedRequest| {
        let text = if turn_of(req) == 1 {
            "Thought: look it up.\nAction: search[the question]".to_string()
        } else {
            "Thought: found it.\nAction: finish[an answer]".to_string()
        };
        Reply::delayed(delay, Reply::text(text))
    })
}

fn model_of(server: &MockServer) -> String {
    format!("openai-compat:{}#cluster-test", server.url())
}

fn distinct_bodies(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .map(|r| r.raw_body.clone())
        .collect::<HashSet<_>>()
        .len()
}

fn hotpot_ids(n: usize) -> Vec<String> {
    std::fs::read_to_string(hotpot())
        .unwrap()
        .lines()
        .take(n)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The question ids recorded in a run directory, sorted (records arrive in finishing
/// order).
fn record_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = read_records(dir)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn eval_args(model: &str, out: &Path, limit: usize, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        hotpot().to_str().unwrap(),
        "--methods",
        "react",
        "--model",
        model,
        "--out",
        out.to_str().unwrap(),
        "--limit",
        &limit.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn slurm(id: &str, count: &str, min: &str, max: &str) -> Vec<(&'static str, String)> {
    vec![
        ("SLURM_JOB_ID", "4242".to_string()),
        ("SLURM_ARRAY_TASK_ID", id.to_string()),
        ("SLURM_ARRAY_TASK_COUNT", count.to_string()),
        ("SLURM_ARRAY_TASK_MIN", min.to_string()),
        ("SLURM_ARRAY_TASK_MAX", max.to_string()),
    ]
}

fn env_refs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn shard_auto_follows_slurm_and_kubernetes_and_fails_outside_them() {
    let server = two_turn_server(Duration::ZERO);
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let ids = hotpot_ids(6);

    // `sbatch --array=3-5`: task 4 is the second of three shards.
    let out = tmp.path().join("slurm");
    let env = slurm("4", "3", "3", "5");
    let args = eval_args(&model, &out, 6, &["--shard", "auto", "--no-cache"]);
    succeeded(&run(&strs(&args), &env_refs(&env)));
    assert_eq!(
        record_ids(&out),
        sorted(vec![ids[1].clone(), ids[4].clone()])
    );
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        config["shard"], "2/3",
        "run.json records the resolved shard"
    );

    // A Kubernetes indexed Job: 0-based index, count given by the manifest.
    let out = tmp.path().join("k8s");
    let args = eval_args(&model, &out, 6, &["--shard", "auto", "--no-cache"]);
    let env = [("JOB_COMPLETION_INDEX", "0"), ("SLEUTH_SHARD_COUNT", "3")];
    succeeded(&run(&strs(&args), &env));
    assert_eq!(
        record_ids(&out),
        sorted(vec![ids[0].clone(), ids[3].clone()])
    );

    // More tasks than questions: the extra task has nothing to do, and says so.
    let before = server.request_count();
    let out = tmp.path().join("extra");
    let args = eval_args(&model, &out, 2, &["--shard", "auto", "--no-cache"]);
    let env = slurm("3", "3", "1", "3");
    let o = run(&strs(&args), &env_refs(&env));
    succeeded(&o);
    assert!(
        stderr(&o).contains("shard 3/3 has no questions"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("records.jsonl").exists());

    // Without the count, and outside any scheduler: clear errors, no model call.
    let out = tmp.path().join("none");
    let args = eval_args(&model, &out, 6, &["--shard", "auto", "--no-cache"]);
    let o = run(&strs(&args), &[("JOB_COMPLETION_INDEX", "2")]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("SLEUTH_SHARD_COUNT"), "{}", stderr(&o));
    let o = run(&strs(&args), &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
        "{e}"
    );
    // `--array=0,1,5` cannot be mapped to shards: the task says so.
    let env = slurm("1", "3", "0", "5");
    let o = run(&strs(&args), &env_refs(&env));
    assert!(stderr(&o).contains("evenly spaced"), "{}", stderr(&o));
    assert_eq!(server.request_count(), before);
}

/// A recipe with two groups that ask exactly the same questions the same way, so the
/// second job of every shard is answered from the cache the first one filled.
fn write_recipe(dir: &Path, limit: usize) -> std::path::PathBuf {
    let recipe = dir.join("recipe.toml");
    std::fs::write(
        &recipe,
        format!(
            r#"name = "cluster-test"
limit = {limit}
methods = ["react"]
[settings]
turns = 4
[[datasets]]
name = "hotpotqa"
data = "{data}"
[[groups]]
name = "first"
[[groups]]
name = "again"
"#,
            data = hotpot().display()
        ),
    )
    .unwrap();
    recipe
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn two_shards_in_parallel_share_one_redis_cache() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = two_turn_server(Duration::from_millis(50));
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let recipe = write_recipe(tmp.path(), 6);
    let out = tmp.path().join("runs");
    let url = redis.url(0);
    let experiment = |out: &Path, shard: &str| {
        vec![
            "experiment".to_string(),
            recipe.display().to_string(),
            "--model".into(),
            model.clone(),
            "--out".into(),
            out.display().to_string(),
            "--shard".into(),
            shard.into(),
            "--cache".into(),
            url.clone(),
        ]
    };

    // Two array tasks of `sbatch --array=1-2`, at the same time.
    let children: Vec<_> = ["1", "2"]
        .iter()
        .map(|id| {
            let env = slurm(id, "2", "1", "2");
            command(&strs(&experiment(&out, "auto")), &env_refs(&env))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let logs: Vec<String> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            succeeded(&o);
            stderr(&o)
        })
        .collect();
    // 6 questions x 2 turns, each paid once; the second group was served from cache.
    assert_eq!(server.request_count(), 12, "{logs:?}");
    assert_eq!(distinct_bodies(&server), 12);
    for (shard, log) in ["shard-1-of-2", "shard-2-of-2"].iter().zip(&logs) {
        for group in ["first", "again"] {
            let dir = out.join(shard).join("hotpotqa").join(group);
            assert_eq!(read_records(&dir).len(), 3, "{}", dir.display());
        }
        assert!(log.contains("cache hits 6"), "{log}");
    }
    let stats: Value = serde_json::from_str(&succeeded(&run(
        &["cache", "stats", "--cache", &url, "--json"],
        &[],
    )))
    .unwrap();
    assert_eq!(stats["entries"], 12);
    assert_eq!(stats["by_model"][model.as_str()], 12);

    // The merge: one report over both shards' trees counts all six questions.
    let report = succeeded(&run(&["report", out.to_str().unwrap(), "--json"], &[]));
    let report: Value = serde_json::from_str(&report).unwrap();
    let summary = &report["tables"][0];
    assert_eq!(summary["name"], "summary");
    let rows = summary["rows"].as_array().unwrap();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r["n"] == 6),
        "{summary}"
    );

    // A colleague reruns the whole recipe, unsharded: every call is a hit.
    let again = tmp.path().join("colleague");
    let mut args = experiment(&again, "1/1");
    args.truncate(args.len() - 4);
    args.extend(["--cache".to_string(), url.clone()]);
    let o = run(&strs(&args), &[]);
    succeeded(&o);
    assert_eq!(server.request_count(), 12, "no call paid twice");
    assert!(stderr(&o).contains("cache hits 12"), "{}", stderr(&o));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_redis_killed_mid_run_loses_no_records() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let server = two_turn_server(Duration::from_millis(100));
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let url = redis.url(0);
    let args = eval_args(&model, &out, 16, &["--cache", &url, "--concurrency", "2"]);
    let child = command(&strs(&args), &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.request_count() < 8 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    redis.kill();
    let o = child.wait_with_output().unwrap();
    succeeded(&o);
    let records = read_records(&out);
    assert_eq!(records.len(), 16);
    assert!(records.iter().all(|r| r["error"].is_null()), "{records:?}");
    assert_eq!(
        server.request_count(),
        32,
        "every call reached the model once"
    );
    let warnings = stderr(&o)
        .matches("continuing without the response cache")
        .count();
    assert_eq!(warnings, 1, "{}", stderr(&o));
}

/// 32 questions with one text and one pool: every episode sends the same requests.
fn identical_questions(path: &Path, n: usize) {
    let line = |i: usize| {
        serde_json::json!({
            "id": format!("same-{i}"),
            "question": "Which city hosts the example tower?",
            "answers": ["Paris"],
            "paragraphs": [{"title": "Example Tower", "text": "The example tower stands in Paris."}],
            "supporting": ["Example Tower"],
        })
        .to_string()
    };
    let text: Vec<String> = (0..n).map(line).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

#[test]
fn thirty_two_identical_requests_across_four_processes_reach_the_server_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = two_turn_server(Duration::from_millis(400));
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("same.jsonl");
    identical_questions(&data, 32);
    let url = redis.url(0);
    let children: Vec<_> = (1..=4)
        .map(|i| {
            let out = tmp.path().join(format!("shard-{i}"));
            let shard = format!("{i}/4");
            let args = [
                "eval",
                "--dataset",
                "jsonl",
                "--data",
                data.to_str().unwrap(),
                "--methods",
                "react",
                "--model",
                &model,
                "--out",
                out.to_str().unwrap(),
                "--shard",
                &shard,
                "--concurrency",
                "8",
                "--cache",
                &url,
            ];
            command(&args, &[])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        succeeded(&c.wait_with_output().unwrap());
    }
    let records: usize = (1..=4)
        .map(|i| read_records(&tmp.path().join(format!("shard-{i}"))).len())
        .sum();
    assert_eq!(records, 32);
    // Two distinct requests (turn 1 and turn 2), each sent once for 32 episodes.
    assert_eq!(server.request_count(), 2, "{:?}", server.requests().len());
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn cache_entries_move_between_sqlite_and_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = two_turn_server(Duration::ZERO);
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let sqlite = tmp.path().join("cache");
    let args = eval_args(
        &model,
        &tmp.path().join("a"),
        3,
        &["--cache", sqlite.to_str().unwrap()],
    );
    succeeded(&run(&strs(&args), &[]));
    assert_eq!(server.request_count(), 6);

    let export = tmp.path().join("entries.jsonl");
    let o = run(
        &[
            "cache",
            "export",
            "--cache",
            sqlite.to_str().unwrap(),
            "--out",
            export.to_str().unwrap(),
        ],
        &[],
    );
    succeeded(&o);
    assert!(stderr(&o).contains("exported 6 entries"), "{}", stderr(&o));
    let url = redis.url(2);
    let o = run(
        &["cache", "import", export.to_str().unwrap(), "--cache", &url],
        &[],
    );
    succeeded(&o);
    assert!(
        stderr(&o).contains("imported 6 new entries"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &["cache", "import", export.to_str().unwrap(), "--cache", &url],
        &[],
    );
    assert!(
        stderr(&o).contains("imported 0 new entries"),
        "{}",
        stderr(&o)
    );
    let stats = succeeded(&run(&["cache", "stats", "--cache", &url], &[]));
    assert!(
        stats.contains("entries  6") && stats.contains(&model),
        "{stats}"
    );

    // The same run against Redis now sends nothing.
    let args = eval_args(&model, &tmp.path().join("b"), 3, &["--cache", &url]);
    succeeded(&run(&strs(&args), &[]));
    assert_eq!(server.request_count(), 6);

    // And back: a Redis export imports into an empty SQLite cache byte-for-byte.
    let back = tmp.path().join("back.jsonl");
    succeeded(&run(
        &[
            "cache",
            "export",
            "--cache",
            &url,
            "--out",
            back.to_str().unwrap(),
        ],
        &[],
    ));
    let fresh = tmp.path().join("fresh");
    succeeded(&run(
        &[
            "cache",
            "import",
            back.to_str().unwrap(),
            "--cache",
            fresh.to_str().unwrap(),
        ],
        &[],
    ));
    let sort = |p: &Path| {
        let mut lines: Vec<String> = std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(sort(&export), sort(&back));

    // A damaged line is named, and nothing of the file is imported.
    let text = std::fs::read_to_string(&export).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"format\": 1, \"key\": \"abc\"}";
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let empty = tmp.path().join("empty");
    let o = run(
        &[
            "cache",
            "import",
            bad.to_str().unwrap(),
            "--cache",
            empty.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.jsonl:2:"), "{}", stderr(&o));
    let stats = succeeded(&run(
        &["cache", "stats", "--cache", empty.to_str().unwrap()],
        &[],
    ));
    assert!(stats.contains("entries  0"), "{stats}");
}

/// The bash block of docs/cluster.md whose first comment line names `file`.
fn doc_script(file: &str) -> String {
    let doc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/cluster.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    text.split("```bash\n")
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap())
        .find(|b| {
            b.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with(&format!("# {file}")))
        })
        .unwrap_or_else(|| panic!("no `{file}` block in {}", doc.display()))
        .to_string()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_documented_slurm_scripts_run_a_recipe_and_merge_it() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = two_turn_server(Duration::from_millis(20));
    let tmp = tempfile::tempdir().unwrap();
    let recipe = write_recipe(tmp.path(), 4);
    let out = tmp.path().join("runs");
    let array = tmp.path().join("sleuth-array.sbatch");
    let merge = tmp.path().join("sleuth-merge.sbatch");
    std::fs::write(&array, doc_script("sleuth-array.sbatch")).unwrap();
    std::fs::write(&merge, doc_script("sleuth-merge.sbatch")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_sleuth")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let model = model_of(&server);
    let url = redis.url(0);
    let vars = [
        ("PATH", path.as_str()),
        ("RECIPE", recipe.to_str().unwrap()),
        ("MODEL", model.as_str()),
        ("DATA_ROOT", "/"),
        ("OUT", out.to_str().unwrap()),
        ("SLEUTH_CACHE", url.as_str()),
    ];
    // What Slurm does for `--array=1-2`: both tasks at once, each with its own id.
    let tasks: Vec<_> = ["1", "2"]
        .iter()
        .map(|id| {
            let mut cmd = Command::new("bash");
            cmd.arg(&array);
            for v in AMBIENT {
                cmd.env_remove(v);
            }
            cmd.envs(vars.iter().copied())
                .envs(
                    slurm(id, "2", "1", "2")
                        .iter()
                        .map(|(k, v)| (*k, v.as_str())),
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for t in tasks {
        succeeded(&t.wait_with_output().unwrap());
    }
    let mut cmd = Command::new("bash");
    cmd.arg(&merge).envs(vars.iter().copied());
    succeeded(&cmd.output().unwrap());
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report").join("report.json")).unwrap(),
    )
    .unwrap();
    let summary = &report["tables"][0];
    let rows = summary["rows"].as_array().unwrap();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r["n"] == 4),
        "{summary}"
    );
    assert_eq!(
        server.request_count(),
        8,
        "4 questions x 2 turns, once each"
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_redis_password_never_shows() {
    const CANARY: &str = "pw-canary-5d1e";
    let Some(redis) = RedisServer::start_with_password(Some(CANARY)) else {
        return;
    };
    let server = two_turn_server(Duration::ZERO);
    let model = model_of(&server);
    let tmp = tempfile::tempdir().unwrap();
    let recipe = write_recipe(tmp.path(), 2);
    let out = tmp.path().join("runs");
    let url = redis.url(0);
    assert!(url.contains(CANARY));
    let mut seen = String::new();
    let runs = [
        vec![
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            &model,
            "--out",
            out.to_str().unwrap(),
            "--cache",
            &url,
            "--shard",
            "1/1",
        ],
        vec![
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            &model,
            "--out",
            out.to_str().unwrap(),
            "--cache",
            &url,
            "--dry-run",
        ],
        vec!["cache", "stats", "--cache", &url],
    ];
    for args in runs {
        let o = run(&args, &[]);
        succeeded(&o);
        seen.push_str(&stdout(&o));
        seen.push_str(&stderr(&o));
    }
    // `--help` shows where SLEUTH_CACHE comes from, not its value.
    for cmd in [
        &["eval", "--help"][..],
        &["experiment", "--help"],
        &["cache", "stats", "--help"],
    ] {
        let o = run(cmd, &[("SLEUTH_CACHE", url.as_str())]);
        succeeded(&o);
        seen.push_str(&stdout(&o));
    }
    // A wrong password: a clear error, still without the password.
    let wrong = url.replace(CANARY, "not-it");
    let o = run(&["cache", "stats", "--cache", &wrong], &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("redis://127.0.0.1"), "{}", stderr(&o));
    seen.push_str(&stderr(&o));
    assert!(seen.contains("entries  4"), "{seen}");
    assert!(!seen.contains(CANARY) && !seen.contains("not-it"), "{seen}");
    for entry in walk(&out) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!text.contains(CANARY), "{}", entry.display());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
