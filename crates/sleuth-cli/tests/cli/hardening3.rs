//! Hardening III (issue 48): hostile probes of the third round, each through the real
//! binary against a loopback server. `docs/security.md` lists what each test proves.

use crate::golden::fixture;
use crate::util::{stderr, stdout, Eval};
use sleuth_testkit::{MockServer, Recorded, Reply};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Rate-limit headers whose values no `Duration` holds (item 2): each used to panic in
/// the HTTP client while reading the 429 (exit 101, the run's finished records lost).
const HUGE_WAITS: [(&str, &str); 3] = [
    ("retry-after", "1e20"),
    ("retry-after", "99999999999999999999"),
    ("retry-after-ms", "1e30"),
];

/// A 429 in the provider's own error shape, carrying `header`.
fn rate_limited(anthropic: bool, header: (&str, &str)) -> Reply {
    let body = if anthropic {
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
    } else {
        r#"{"error":{"message":"slow down","type":"rate_limit_error","code":null}}"#
    };
    Reply::Recorded(Recorded {
        status: 429,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            (header.0.into(), header.1.into()),
        ],
        body: body.into(),
    })
}

/// A server that answers its `nth` request (1-based) with a 429 carrying `header` and
/// every other one with a finish.
fn server_limiting(
    nth: usize,
    anthropic: bool,
    header: (&'static str, &'static str),
) -> MockServer {
    let served = Arc::new(AtomicUsize::new(0));
    MockServer::spawn(move |_| {
        if served.fetch_add(1, Ordering::SeqCst) + 1 == nth {
            rate_limited(anthropic, header)
        } else {
            Reply::text("Action: finish[yes]")
        }
    })
}

fn panicked(o: &std::process::Output) -> bool {
    o.status.code() == Some(101) || stderr(o).contains("panicked")
}

/// Item 2: a huge `Retry-After` ends that call with a rate-limit error on its question
/// (one attempt here, so no wait), and the run goes on: every other question is
/// answered and recorded, with either provider, and `ask` reports the error cleanly.
#[test]
fn a_huge_retry_after_crashes_no_run_and_loses_no_record() {
    for header in HUGE_WAITS {
        for anthropic in [false, true] {
            let server = server_limiting(2, anthropic, header);
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("run");
            let model = if anthropic {
                "anthropic:claude-test".to_string()
            } else {
                format!("openai-compat:{}#m", server.url())
            };
            let o = Eval::new("musique", fixture("musique"), "react", &model, &out)
                .opt("--concurrency", 1)
                .opt("--attempts", 1)
                .env("ANTHROPIC_BASE_URL", server.origin())
                .env("ANTHROPIC_API_KEY", "sk-ant-test")
                .output();
            let what = format!("{header:?} anthropic={anthropic}");
            assert!(!panicked(&o), "{what}: {}", stderr(&o));
            let records = crate::agents::read_records(&out);
            assert_eq!(records.len(), 4, "{what}: every question recorded");
            let errors: Vec<&str> = records.iter().filter_map(|r| r["error"].as_str()).collect();
            assert_eq!(errors.len(), 1, "{what}: {errors:?}");
            assert!(errors[0].contains("429"), "{what}: {errors:?}");
            assert_eq!(
                records.iter().filter(|r| r["answer"] == "yes").count(),
                3,
                "{what}"
            );
        }
        let server = server_limiting(1, false, header);
        let url = format!("openai-compat:{}#m", server.url());
        let data = fixture("musique");
        let o = crate::util::sleuth(&[
            "ask",
            "--method",
            "react",
            "--model",
            &url,
            "--dataset",
            "musique",
            "--data",
            data.to_str().unwrap(),
            "--id",
            "2hop__574419_270105",
            "--attempts",
            "1",
        ]);
        assert!(!panicked(&o), "ask {header:?}: {}", stderr(&o));
        let said = format!("{}{}", stdout(&o), stderr(&o));
        assert!(said.contains("429"), "ask {header:?}: {said}");
    }
}
