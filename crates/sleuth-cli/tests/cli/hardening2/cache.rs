//! Classes 4-6: the response cache serves only what was asked, and a damaged cache
//! costs money, never the run.

use super::{fixture, run};
use crate::util::stderr;
use sleuth_testkit::{MockServer, Reply};
use std::path::Path;

/// `sleuth eval` of react on the first `limit` fixture questions.
fn eval(
    model: &str,
    out: &Path,
    limit: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut args = vec!["--limit", limit];
    args.extend_from_slice(extra);
    super::eval(&fixture(), "react", model, out, &args, env)
        .output()
        .unwrap()
}

fn answers(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["answer"].to_string())
        .collect()
}

#[test]
fn a_second_endpoint_or_preset_is_asked_not_served_the_first_ones_replies() {
    let a = MockServer::spawn(|_| Reply::text("Action: finish[alpha]"));
    let b = MockServer::spawn(|_| Reply::text("Action: finish[beta]"));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache = ["--cache", cache.to_str().unwrap()];
    for (server, name) in [(&a, "a"), (&b, "b")] {
        let url = server.url();
        let env = [
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", url.as_str()),
        ];
        let out = dir.path().join(name);
        let o = eval("openai:gpt-test", &out, "2", &cache, &env);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(server.request_count(), 2, "{name} was asked");
    }
    assert_eq!(answers(&dir.path().join("b")), ["\"beta\"", "\"beta\""]);

    // The same endpoint and model under another preset sends another body: asked too.
    let generic = format!("openai-compat:{}#m", a.url());
    let vllm = format!("{generic}?preset=vllm");
    for (i, model) in [generic.as_str(), vllm.as_str(), generic.as_str()]
        .iter()
        .enumerate()
    {
        let o = eval(model, &dir.path().join(format!("p{i}")), "2", &cache, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(
        a.request_count(),
        2 + 2 + 2,
        "the generic rerun was the only hit"
    );
}

#[test]
fn an_edited_script_is_replayed_as_written_even_with_the_default_cache() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("replies.json");
    let model = format!("scripted:{}", script.display());
    let home = dir.path().to_str().unwrap();
    // The default cache is on: no --cache, no --no-cache.
    let env = [("HOME", home), ("XDG_CACHE_HOME", home)];
    for (i, answer) in ["alpha", "beta"].iter().enumerate() {
        std::fs::write(&script, format!("[\"Action: finish[{answer}]\"]")).unwrap();
        let out = dir.path().join(format!("run{i}"));
        let o = eval(&model, &out, "1", &[], &env);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(answers(&out), [format!("\"{answer}\"")]);
    }
    assert!(
        !dir.path().join("sleuth/responses").exists(),
        "scripted replies are never cached"
    );
}

#[test]
fn a_damaged_sqlite_cache_degrades_with_one_warning_naming_it_and_the_commands() {
    let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let file = cache.join("responses.sqlite3");
    std::fs::write(&file, "this is not a database\n".repeat(200)).unwrap();
    let model = format!("openai-compat:{}#m", server.url());
    let flag = ["--cache", cache.to_str().unwrap()];
    let o = eval(&model, &dir.path().join("run"), "2", &flag, &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    for named in [
        file.to_str().unwrap(),
        "continuing without the response cache",
        "sleuth cache stats --cache",
        "sleuth cache clear --cache",
    ] {
        assert!(warnings[0].contains(named), "{named}: {err}");
    }
    assert_eq!(server.request_count(), 2);

    // The commands it names: stats explains, clear removes, and the cache works again.
    let stats = run(&["cache", "stats", "--cache", cache.to_str().unwrap()], &[]);
    assert!(!stats.status.success() && stderr(&stats).contains("sleuth cache clear"));
    let clear = run(&["cache", "clear", "--cache", cache.to_str().unwrap()], &[]);
    assert!(clear.status.success(), "{}", stderr(&clear));
    assert!(!file.exists());
    for i in 0..2 {
        let o = eval(
            &model,
            &dir.path().join(format!("again{i}")),
            "3",
            &flag,
            &[],
        );
        assert!(
            o.status.success() && !stderr(&o).contains("WARN"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(
        server.request_count(),
        4,
        "the second run was served by the cache"
    );
}

/// The default response cache lives under `SLEUTH_HOME` like the models, data and
/// config, so one variable moves (or isolates) everything sleuth keeps: a run against a
/// real HTTP server fills `$SLEUTH_HOME/responses`, the second run is served from it, and
/// nothing is written under `HOME`/`XDG_CACHE_HOME`.
#[test]
fn the_default_cache_follows_sleuth_home() {
    let server = MockServer::spawn(|_| Reply::text("Action: finish[alpha]"));
    let dir = tempfile::tempdir().unwrap();
    let (home, user) = (dir.path().join("sleuth-home"), dir.path().join("user"));
    std::fs::create_dir_all(&user).unwrap();
    let url = server.url();
    let env = [
        ("SLEUTH_HOME", home.to_str().unwrap()),
        ("HOME", user.to_str().unwrap()),
        ("XDG_CACHE_HOME", user.to_str().unwrap()),
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    for name in ["a", "b"] {
        let o = eval("openai:gpt-test", &dir.path().join(name), "2", &[], &env);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(server.request_count(), 2, "the second run was served");
    assert!(home.join("responses/responses.sqlite3").is_file());
    assert_eq!(
        std::fs::read_dir(&user).unwrap().count(),
        0,
        "nothing under HOME"
    );
    let stats = run(&["cache", "stats"], &env[..1]);
    let stats = crate::util::stdout(&stats);
    assert!(stats.contains("sleuth-home/responses"), "{stats}");
    assert!(stats.contains("entries  2"), "{stats}");
}

/// One model served from two endpoints is one model in records and reports (the cache
/// still tells the endpoints apart, above): react on one server and ircot on another
/// pair up in `report --baseline react`, and the records name no base URL.
#[test]
fn one_model_on_two_endpoints_is_one_model_in_the_report() {
    let a = MockServer::spawn(|_| Reply::text("Action: finish[alpha]"));
    let b = MockServer::spawn(|_| Reply::text("Answer: alpha"));
    let dir = tempfile::tempdir().unwrap();
    for (server, method) in [(&a, "react"), (&b, "ircot")] {
        let model = format!("openai-compat:{}#shared-model", server.url());
        let out = dir.path().join(method);
        let o = super::eval(&fixture(), method, &model, &out, &["--no-cache"], &[])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert!(!records.contains("127.0.0.1"), "no base URL in records");
        let run = std::fs::read_to_string(out.join("run.json")).unwrap();
        assert!(
            run.contains("\"model\": \"openai-compat:shared-model\""),
            "{run}"
        );
    }
    let o = run(
        &[
            "report",
            dir.path().to_str().unwrap(),
            "--baseline",
            "react",
            "--json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tables = report["tables"].as_array().unwrap();
    let summary = tables.iter().find(|t| t["name"] == "summary").unwrap();
    let models: std::collections::BTreeSet<&str> = summary["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["openai-compat:shared-model"].into(), "{summary}");
    let paired = &report["analysis"]["comparisons"];
    assert_eq!(paired.as_array().unwrap().len(), 1, "{paired}");
    assert_eq!(paired[0]["arm"]["method"], "ircot");
    assert_eq!(paired[0]["n"], 2, "both questions paired: {paired}");
}
