//! Classes 7-9: a run survives the disk. A full disk (an injected write error) never
//! cuts `run.json`, a records file torn anywhere (inside a UTF-8 character too) still
//! resumes and reports, and a huge reply is one call's error, not a huge record.

use super::{fixture, run};
use crate::util::{replies, stderr};
use std::path::Path;

/// A scripted, uncached eval of `methods` on the fixture into `out`.
fn eval_command(methods: &str, model: &str, out: &Path, extra: &[&str]) -> std::process::Command {
    let mut args = vec!["--no-cache"];
    args.extend_from_slice(extra);
    super::eval(&fixture(), methods, model, out, &args, &[])
}

fn eval(methods: &str, model: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    eval_command(methods, model, out, extra).output().unwrap()
}

#[cfg(unix)]
#[test]
fn a_full_disk_while_a_resume_rewrites_run_json_leaves_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "m.json", &["Action: finish[x]".into()]);
    let out = dir.path().join("run");
    let out_s = out.to_str().unwrap().to_string();
    let first = eval("react", &model, &out, &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let before = std::fs::read(out.join("run.json")).unwrap();

    // Adding methods makes run.json longer; the disk has room for its old size only.
    let mut cmd = eval_command("react,sleuth,ircot,self-ask,notes", &model, &out, &[]);
    super::limit_file_size(&mut cmd, before.len() as u64 + 16);
    let o = cmd.output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("run.json") && err.contains("File too large"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(out.join("run.json")).unwrap(),
        before,
        "run.json is whole"
    );
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // The run still reports and resumes, methods added, once there is room.
    let report = run(&["report", &out_s], &[]);
    assert!(report.status.success(), "{}", stderr(&report));
    let resumed = eval("react,sleuth", &model, &out, &[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
}

/// A records file whose last line stops inside a multi-byte character.
fn torn(out: &Path) {
    let path = out.join("records.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    let line = std::str::from_utf8(&bytes)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let cut = line.replace("\"answer\":\"x\"", "\"answer\":\"café\"");
    let at = cut.find('é').unwrap() + 1; // the first byte of é's two
    bytes.extend_from_slice(&cut.as_bytes()[..at]);
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_records_file_torn_inside_a_utf8_character_resumes_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "m.json", &["Action: finish[x]".into()]);
    let out = dir.path().join("run");
    let out_s = out.to_str().unwrap().to_string();
    let resume = |limit: &str| eval("react", &model, &out, &["--limit", limit]);
    assert!(resume("1").status.success());
    torn(&out);

    let report = run(&["report", &out_s], &[]);
    let err = stderr(&report);
    assert!(report.status.success(), "{err}");
    assert!(
        err.contains("records.jsonl:2") && err.contains("unfinished last line"),
        "{err}"
    );
    let resumed = resume("2");
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert_eq!(
        text.lines().count(),
        2,
        "the torn tail was cut, one record added"
    );

    // A bad line in the middle is an error naming the file and the line.
    let path = out.join("records.jsonl");
    let mut bytes = b"{\"id\": \"\xff\"}\n".to_vec();
    bytes.extend(std::fs::read(&path).unwrap());
    std::fs::write(&path, bytes).unwrap();
    for o in [run(&["report", &out_s], &[]), resume("2")] {
        let err = stderr(&o);
        assert!(!o.status.success(), "{err}");
        assert!(
            err.contains("records.jsonl:1:") && err.contains("UTF-8"),
            "{err}"
        );
    }
}

/// A server on 127.0.0.1 that answers every request with an endless chunked body (a
/// runaway model or a hostile endpoint); returns its base URL.
fn endless_server() -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                );
                let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, "a".repeat(1 << 16));
                let _ = stream.write_all(b"6\r\n{\"a\":\"\r\n");
                while stream.write_all(chunk.as_bytes()).is_ok() {}
            });
        }
    });
    url
}

#[test]
fn a_huge_or_endless_reply_is_that_calls_error_not_a_huge_record() {
    let dir = tempfile::tempdir().unwrap();
    // 6 MB announced (over the 4 MiB default), and an endless body under a set cap.
    let huge = sleuth_testkit::MockServer::spawn(|_| {
        sleuth_testkit::Reply::text(format!("Action: finish[{}]", "b".repeat(6 << 20)))
    });
    let endless = endless_server();
    let cases = [
        (
            format!("openai-compat:{}#m", huge.url()),
            vec![],
            "4194304-byte limit",
        ),
        (
            format!("openai-compat:{endless}#m"),
            vec!["--max-reply-bytes", "200000"],
            "200000-byte limit",
        ),
    ];
    for (i, (model, extra, limit)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("run{i}"));
        let mut args = vec!["--limit", "1", "--attempts", "3"];
        args.extend(extra.iter().copied());
        let child = eval_command("react", model, &out, &args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let limit_s = std::time::Duration::from_secs(120);
        super::finish_within(child, limit_s, &format!("{model}: reading the reply"));
        let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert!(
            records.len() < 64 << 10,
            "{} bytes of records",
            records.len()
        );
        let record: serde_json::Value = serde_json::from_str(records.trim()).unwrap();
        let error = record["error"].as_str().unwrap_or_default();
        assert!(error.contains(limit), "{model}: {error}");
        assert_eq!(record["retries"], 0, "a reply too long is not retried");
    }
    assert_eq!(huge.request_count(), 1);
}
