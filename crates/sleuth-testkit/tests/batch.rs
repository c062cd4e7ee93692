//! The batch-API emulation over real HTTP (reqwest): each provider's whole flow, with a
//! request that succeeds, one that fails as a plain call would, and one that expires.

use serde_json::{json, Value};
use sleuth_testkit::{BatchPlan, MockServer, Reply};

/// Succeeds for "ok" prompts, fails with a 400 for "bad", expires for "late".
fn handler(req: &sleuth_testkit::ReceivedRequest) -> Reply {
    match req.last_message().unwrap_or_default() {
        "bad" => Reply::openai_error(400, "invalid_request_error", "bad prompt"),
        "late" => Reply::Expired,
        text => Reply::text(format!("answer to {text}")),
    }
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn by_id<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines.iter().find(|l| l["custom_id"] == id).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_upload_create_poll_and_download_both_files() {
    let server = tokio::task::spawn_blocking(|| {
        MockServer::spawn_with_batches(
            BatchPlan {
                polls_before_done: 2,
                failed_downloads: 0,
            },
            handler,
        )
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let input: String = ["ok-1", "bad", "late", "ok-2"]
        .iter()
        .map(|p| {
            json!({"custom_id": format!("q-{p}"), "method": "POST", "url": "/v1/chat/completions",
                   "body": {"model": "m", "messages": [{"role": "user", "content": p}]}})
            .to_string()
                + "\n"
        })
        .collect();
    let form = format!(
        "--XYZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n{input}\r\n--XYZ--\r\n"
    );
    let file: Value = http
        .post(format!("{}/files", server.url()))
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(file["purpose"], "batch");
    assert_eq!(file["bytes"], input.len());
    let created: Value = http
        .post(format!("{}/batches", server.url()))
        .json(&json!({"input_file_id": file["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(created["status"], "validating");
    let poll = || async {
        let url = format!(
            "{}/batches/{}",
            server.url(),
            created["id"].as_str().unwrap()
        );
        http.get(url)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    };
    let first = poll().await;
    assert_eq!(first["status"], "validating");
    assert_eq!(
        first["request_counts"],
        json!({"total": 4, "completed": 0, "failed": 0})
    );
    assert_eq!(server.request_count(), 3, "nothing ran yet");
    // Half-way: the first two requests have run (one succeeded, one failed); the
    // counts change over time as a real batch's do.
    let middle = poll().await;
    assert_eq!(middle["status"], "in_progress");
    assert_eq!(
        middle["request_counts"],
        json!({"total": 4, "completed": 1, "failed": 1})
    );
    assert_eq!(middle["output_file_id"], Value::Null, "no results yet");
    assert_eq!(server.request_count(), 4 + 2, "{:?}", server.requests());
    let done = poll().await;
    assert_eq!(
        done["status"], "expired",
        "one request ran out of time: {done}"
    );
    assert_eq!(
        done["request_counts"],
        json!({"total": 4, "completed": 2, "failed": 2})
    );
    let download = |id: Value| {
        let url = format!("{}/files/{}/content", server.url(), id.as_str().unwrap());
        let http = http.clone();
        async move { http.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let ok = lines(&download(done["output_file_id"].clone()).await);
    let failed = lines(&download(done["error_file_id"].clone()).await);
    assert_eq!(ok.len(), 2);
    assert_eq!(
        ok[0]["custom_id"], "q-ok-2",
        "results are not in request order"
    );
    let first = &by_id(&ok, "q-ok-1")["response"];
    assert_eq!(first["status_code"], 200);
    assert_eq!(
        first["body"]["choices"][0]["message"]["content"],
        "answer to ok-1"
    );
    let bad = by_id(&failed, "q-bad");
    assert_eq!(bad["response"]["status_code"], 400);
    assert_eq!(bad["response"]["body"]["error"]["message"], "bad prompt");
    let late = by_id(&failed, "q-late");
    assert_eq!(late["response"], Value::Null);
    assert_eq!(late["error"]["code"], "batch_expired");
    // Every request inside the batch reached the handler once, marked with its batch.
    let inner: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.header("x-batch-id").is_some())
        .collect();
    assert_eq!(inner.len(), 4);
    assert!(inner.iter().all(|r| r.path == "/v1/chat/completions"));
    assert_eq!(
        poll().await["status"],
        "expired",
        "a finished batch stays finished"
    );
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.header("x-batch-id").is_some())
            .count(),
        4
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_batch_with_a_bad_line_fails_validation() {
    let server = tokio::task::spawn_blocking(|| MockServer::spawn(handler))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let input = "{\"custom_id\": \"a\", \"method\": \"GET\", \"url\": \"/v1/chat/completions\", \"body\": {}}\n";
    let form = format!(
        "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jsonl\"\r\n\r\n{input}\r\n--B--\r\n"
    );
    let file: Value = http
        .post(format!("{}/files", server.url()))
        .header("content-type", "multipart/form-data; boundary=B")
        .body(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let created: Value = http
        .post(format!("{}/batches", server.url()))
        .json(&json!({"input_file_id": file["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = format!(
        "{}/batches/{}",
        server.url(),
        created["id"].as_str().unwrap()
    );
    let polled: Value = http.get(url).send().await.unwrap().json().await.unwrap();
    assert_eq!(polled["status"], "failed");
    let why = polled["errors"]["data"][0]["message"].as_str().unwrap();
    assert!(why.contains("line 1") && why.contains("POST"), "{why}");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_create_poll_and_stream_results() {
    let server = tokio::task::spawn_blocking(|| {
        MockServer::spawn_with_batches(
            BatchPlan {
                polls_before_done: 1,
                failed_downloads: 0,
            },
            |req| match req.last_message().unwrap_or_default() {
                "bad" => Reply::anthropic_error(400, "invalid_request_error", "bad prompt"),
                "late" => Reply::Expired,
                text => Reply::text(format!("answer to {text}")),
            },
        )
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let requests: Vec<Value> = ["ok", "bad", "late"]
        .iter()
        .map(|p| json!({"custom_id": format!("q-{p}"), "params": {"model": "c", "max_tokens": 64, "messages": [{"role": "user", "content": p}]}}))
        .collect();
    let created: Value = http
        .post(format!("{}/messages/batches", server.url()))
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"requests": requests}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(created["type"], "message_batch");
    assert_eq!(created["processing_status"], "in_progress");
    assert_eq!(created["request_counts"]["processing"], 3);
    let url = format!(
        "{}/messages/batches/{}",
        server.url(),
        created["id"].as_str().unwrap()
    );
    let first: Value = http.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(first["processing_status"], "in_progress");
    assert_eq!(first["results_url"], Value::Null);
    let ended: Value = http.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(ended["processing_status"], "ended");
    assert_eq!(
        ended["request_counts"],
        json!({"processing": 0, "succeeded": 1, "errored": 1, "canceled": 0, "expired": 1})
    );
    let results = http
        .get(ended["results_url"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let results = lines(&results);
    assert_eq!(results[0]["custom_id"], "q-late", "not in request order");
    let ok = &by_id(&results, "q-ok")["result"];
    assert_eq!(ok["type"], "succeeded");
    assert_eq!(ok["message"]["content"][0]["text"], "answer to ok");
    let bad = &by_id(&results, "q-bad")["result"];
    assert_eq!(bad["type"], "errored");
    assert_eq!(bad["error"]["error"]["message"], "bad prompt");
    assert_eq!(by_id(&results, "q-late")["result"]["type"], "expired");
}
