//! The providers' batch APIs on the mock server, in their published wire formats:
//! OpenAI's Files + Batches (`POST /v1/files` multipart upload, `POST /v1/batches`,
//! `GET /v1/batches/{id}`, `GET /v1/files/{id}/content`) and Anthropic's Message
//! Batches (`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`, and the
//! `results_url` it names once processing has ended). Field names, statuses and line
//! shapes follow the providers' API references (platform.openai.com/docs/api-reference/batch
//! and /files; docs.anthropic.com/en/api/creating-message-batches, retrieving-message-batches
//! and retrieving-message-batch-results).
//!
//! Why emulate rather than only unit-test a client: a batch client is a small state
//! machine over several endpoints (upload, create, poll with status changes over time,
//! download one or two result files, match lines by `custom_id`), and its failure modes
//! (a request that failed inside a finished batch, a request that expired, results out
//! of order) only show when something plays the other side over HTTP.
//!
//! Each request inside a batch is answered by the server's one handler, as if it had
//! been sent on its own (it is logged the same way, with an `x-batch-id` header added),
//! so a scripted run gives the same completions batched or not. [`Reply::Expired`]
//! marks a request the batch did not get to before its window ended. Results files list
//! their lines in reverse request order: the providers do not promise any order.

use crate::reply::{completion_body, Protocol};
use crate::{ReceivedRequest, Reply};
use serde_json::{json, Value};
use std::collections::HashMap;

/// How the emulated batches progress.
#[derive(Debug, Clone)]
pub struct BatchPlan {
    /// Status polls a batch answers as still running before it finishes (OpenAI's
    /// first poll says `validating`, later ones `in_progress`).
    pub polls_before_done: u32,
    /// Result downloads (OpenAI file content, Anthropic results) that fail with a 503
    /// before the first one succeeds: a paid batch whose results a client must fetch
    /// again rather than submit again.
    pub failed_downloads: u32,
}

impl Default for BatchPlan {
    fn default() -> Self {
        BatchPlan {
            polls_before_done: 2,
            failed_downloads: 0,
        }
    }
}

/// What a batch request became.
#[derive(Debug, Clone)]
enum ItemResult {
    /// A completion body in the batch's protocol.
    Succeeded(Value),
    /// The request failed as a plain call would have (status and error body).
    Failed {
        status: u16,
        body: Value,
    },
    Expired,
}

#[derive(Debug)]
struct Item {
    custom_id: String,
    body: Value,
}

#[derive(Debug)]
struct Batch {
    protocol: Protocol,
    items: Vec<Item>,
    polls: u32,
    created: u64,
    input_file_id: Option<String>,
    /// Why the batch was refused at validation (OpenAI: `status: failed`).
    invalid: Option<String>,
    /// The requests run so far, in request order: each poll while the batch is in
    /// progress runs its share, so the request counts change over time as a real
    /// batch's do.
    processed: Vec<(String, ItemResult)>,
    /// Filled by the poll that finishes the batch.
    results: Option<Vec<(String, ItemResult)>>,
}

impl Batch {
    /// Outcomes so far: all of them once the batch has ended.
    fn outcomes(&self) -> &[(String, ItemResult)] {
        self.results.as_deref().unwrap_or(&self.processed)
    }
}

/// Files, batches and their results, shared by every connection.
#[derive(Debug, Default)]
pub(crate) struct Batches {
    plan: BatchPlan,
    next: u64,
    files: HashMap<String, String>,
    batches: HashMap<String, Batch>,
    /// Result downloads answered so far with a 503 ([`BatchPlan::failed_downloads`]).
    downloads_failed: u32,
}

/// A response: status, content type, body.
pub(crate) type Answer = (u16, &'static str, String);

/// Runs one request of a batch through the server's handler (logging it).
pub(crate) type Dispatch<'a> = &'a dyn Fn(&str, &str, &Value) -> Reply;

impl Batches {
    pub(crate) fn new(plan: BatchPlan) -> Batches {
        Batches {
            plan,
            ..Batches::default()
        }
    }

    /// Whether `path` is one of the batch APIs' routes.
    pub(crate) fn serves(path: &str) -> bool {
        path.starts_with("/v1/files")
            || path.starts_with("/v1/batches")
            || path.starts_with("/v1/messages/batches")
    }

    /// Whether `req` downloads results (OpenAI's file content, Anthropic's results):
    /// the server streams those in small chunks, lines straddling them, as the
    /// providers stream a large results file.
    pub(crate) fn downloads(req: &ReceivedRequest) -> bool {
        let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
        matches!(
            (req.method.as_str(), parts.as_slice()),
            ("GET", ["v1", "files", _, "content"])
                | ("GET", ["v1", "messages", "batches", _, "results"])
        )
    }

    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{:06}", self.next)
    }

    /// Answers a batch-API request; `dispatch` answers the requests inside a batch.
    pub(crate) fn respond(&mut self, req: &ReceivedRequest, dispatch: Dispatch<'_>) -> Answer {
        let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
        if Batches::downloads(req) && self.downloads_failed < self.plan.failed_downloads {
            self.downloads_failed += 1;
            return (
                503,
                "text/plain",
                "mock server: results download failed".into(),
            );
        }
        match (req.method.as_str(), parts.as_slice()) {
            ("POST", ["v1", "files"]) => self.upload(req),
            ("GET", ["v1", "files", id, "content"]) => match self.files.get(*id) {
                Some(text) => (200, "application/octet-stream", text.clone()),
                None => not_found(Protocol::OpenAi, "file", id),
            },
            ("POST", ["v1", "batches"]) => self.create_openai(&req.body),
            ("GET", ["v1", "batches", id]) => self.poll(id, req, dispatch),
            ("POST", ["v1", "messages", "batches"]) => self.create_anthropic(&req.body),
            ("GET", ["v1", "messages", "batches", id]) => self.poll(id, req, dispatch),
            ("GET", ["v1", "messages", "batches", id, "results"]) => self.anthropic_results(id),
            _ => (
                404,
                "text/plain",
                format!(
                    "mock server: no batch route for {} {}",
                    req.method, req.path
                ),
            ),
        }
    }

    /// `POST /v1/files`: a multipart form with `purpose=batch` and the JSONL `file`.
    fn upload(&mut self, req: &ReceivedRequest) -> Answer {
        let form = req
            .header("content-type")
            .and_then(|t| t.split("boundary=").nth(1))
            .map(|b| multipart(&req.raw_body, b.trim_matches('"')));
        let Some(form) = form else {
            return invalid(
                Protocol::OpenAi,
                "expected multipart/form-data with a boundary",
            );
        };
        let field = |name: &str| form.iter().find(|(n, ..)| n == name);
        if field("purpose").map(|(_, _, v)| v.as_str()) != Some("batch") {
            return invalid(Protocol::OpenAi, "purpose must be `batch`");
        }
        let Some((_, filename, text)) = field("file") else {
            return invalid(Protocol::OpenAi, "no `file` part");
        };
        let id = self.id("file-");
        let answer = json!({
            "id": id, "object": "file", "bytes": text.len(), "created_at": 1_700_000_000u64,
            "filename": filename, "purpose": "batch", "status": "processed",
        });
        self.files.insert(id, text.clone());
        (200, "application/json", answer.to_string())
    }

    /// `POST /v1/batches`: validates the uploaded file line by line, as OpenAI does
    /// before a batch starts (a bad line fails the whole batch).
    fn create_openai(&mut self, body: &Value) -> Answer {
        let endpoint = body["endpoint"].as_str().unwrap_or_default().to_string();
        if endpoint != "/v1/chat/completions" {
            return invalid(
                Protocol::OpenAi,
                "only /v1/chat/completions batches are emulated",
            );
        }
        let Some(file_id) = body["input_file_id"].as_str() else {
            return invalid(Protocol::OpenAi, "input_file_id is required");
        };
        let Some(text) = self.files.get(file_id) else {
            return not_found(Protocol::OpenAi, "file", file_id);
        };
        let (items, invalid) = match openai_items(text, &endpoint) {
            Ok(items) => (items, None),
            Err(why) => (vec![], Some(why)),
        };
        let id = self.id("batch_");
        let batch = Batch {
            protocol: Protocol::OpenAi,
            items,
            polls: 0,
            created: 1_700_000_000 + self.next,
            input_file_id: Some(file_id.to_string()),
            invalid,
            processed: Vec::new(),
            results: None,
        };
        let answer = openai_object(&id, &batch, "validating", None);
        self.batches.insert(id, batch);
        (200, "application/json", answer.to_string())
    }

    /// `POST /v1/messages/batches`: `{"requests": [{"custom_id", "params"}]}`.
    fn create_anthropic(&mut self, body: &Value) -> Answer {
        let Some(requests) = body["requests"].as_array() else {
            return invalid(Protocol::Anthropic, "requests: expected an array");
        };
        let mut items = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            let (Some(custom_id), Some(params)) = (r["custom_id"].as_str(), r.get("params")) else {
                return invalid(
                    Protocol::Anthropic,
                    &format!("requests.{i}: custom_id and params are required"),
                );
            };
            if items.iter().any(|it: &Item| it.custom_id == custom_id) {
                return invalid(
                    Protocol::Anthropic,
                    &format!("requests.{i}: custom_id `{custom_id}` is not unique"),
                );
            }
            items.push(Item {
                custom_id: custom_id.to_string(),
                body: params.clone(),
            });
        }
        let id = self.id("msgbatch_");
        let batch = Batch {
            protocol: Protocol::Anthropic,
            items,
            polls: 0,
            created: 1_700_000_000 + self.next,
            input_file_id: None,
            invalid: None,
            processed: Vec::new(),
            results: None,
        };
        let answer = anthropic_object(&id, &batch, "");
        self.batches.insert(id, batch);
        (200, "application/json", answer.to_string())
    }

    /// A status poll. Of [`BatchPlan::polls_before_done`] = n polls that find the batch
    /// running, poll k has run the first (k - 1)/n of its requests (through
    /// `dispatch`), so its counts grow from poll to poll; the poll after them runs the
    /// rest and reports the batch finished.
    fn poll(&mut self, id: &str, req: &ReceivedRequest, dispatch: Dispatch<'_>) -> Answer {
        let plan = self.plan.clone();
        let Some(batch) = self.batches.get_mut(id) else {
            let protocol = if req.path.contains("/messages/") {
                Protocol::Anthropic
            } else {
                Protocol::OpenAi
            };
            return not_found(protocol, "batch", id);
        };
        batch.polls += 1;
        if batch.results.is_none() && batch.invalid.is_none() {
            let total = batch.items.len();
            let ends = batch.polls > plan.polls_before_done;
            let due = match ends {
                true => total,
                false => total * (batch.polls as usize - 1) / plan.polls_before_done as usize,
            };
            let path = match batch.protocol {
                Protocol::OpenAi => "/v1/chat/completions",
                Protocol::Anthropic => "/v1/messages",
            };
            while batch.processed.len() < due {
                let item = &batch.items[batch.processed.len()];
                let reply = dispatch(id, path, &item.body);
                let result = outcome(batch.protocol, &item.body, reply);
                batch.processed.push((item.custom_id.clone(), result));
            }
            if ends {
                batch.results = Some(std::mem::take(&mut batch.processed));
            }
        }
        let answer = match self.batches[id].protocol {
            Protocol::OpenAi => {
                let batch = &self.batches[id];
                let (status, files) = match (&batch.invalid, &batch.results) {
                    (Some(_), _) => ("failed", None),
                    (None, None) if batch.polls == 1 => ("validating", None),
                    (None, None) => ("in_progress", None),
                    (None, Some(results)) => {
                        let expired = results
                            .iter()
                            .any(|(_, r)| matches!(r, ItemResult::Expired));
                        let names = (format!("{id}-output"), format!("{id}-errors"));
                        let status = if expired { "expired" } else { "completed" };
                        (status, Some((names, openai_files(results))))
                    }
                };
                let names = files.map(|(names, (ok, failed))| {
                    self.files.insert(names.0.clone(), ok);
                    self.files.insert(names.1.clone(), failed);
                    names
                });
                openai_object(id, &self.batches[id], status, names.as_ref())
            }
            Protocol::Anthropic => {
                let origin = req.header("host").map(|h| format!("http://{h}"));
                anthropic_object(id, &self.batches[id], origin.as_deref().unwrap_or(""))
            }
        };
        (200, "application/json", answer.to_string())
    }

    fn anthropic_results(&self, id: &str) -> Answer {
        let Some(results) = self.batches.get(id).and_then(|b| b.results.as_ref()) else {
            return not_found(Protocol::Anthropic, "batch results", id);
        };
        let lines: Vec<String> = results
            .iter()
            .rev()
            .map(|(custom_id, r)| {
                let result = match r {
                    ItemResult::Succeeded(message) => {
                        json!({"type": "succeeded", "message": message})
                    }
                    ItemResult::Failed { body, .. } => json!({"type": "errored", "error": body}),
                    ItemResult::Expired => json!({"type": "expired"}),
                };
                json!({"custom_id": custom_id, "result": result}).to_string()
            })
            .collect();
        (200, "application/binary", lines.join("\n") + "\n")
    }
}

/// The lines of an OpenAI batch input file, checked as the provider checks them.
fn openai_items(text: &str, endpoint: &str) -> Result<Vec<Item>, String> {
    let mut items: Vec<Item> = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line_no = n + 1;
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("line {line_no}: not JSON ({e})"))?;
        let custom_id = v["custom_id"]
            .as_str()
            .ok_or(format!("line {line_no}: custom_id is required"))?;
        if v["method"] != "POST" || v["url"] != endpoint {
            return Err(format!(
                "line {line_no}: method must be POST and url {endpoint}"
            ));
        }
        if items.iter().any(|it| it.custom_id == custom_id) {
            return Err(format!(
                "line {line_no}: custom_id `{custom_id}` is not unique"
            ));
        }
        items.push(Item {
            custom_id: custom_id.to_string(),
            body: v["body"].clone(),
        });
    }
    Ok(items)
}

/// What a batch request's reply becomes inside the batch.
fn outcome(protocol: Protocol, body: &Value, reply: Reply) -> ItemResult {
    let mut reply = reply;
    while let Reply::Delayed(_, inner) = reply {
        reply = *inner;
    }
    let request = ReceivedRequest {
        index: 0,
        method: "POST".into(),
        path: String::new(),
        headers: vec![],
        body: body.clone(),
        raw_body: body.to_string(),
    };
    match reply {
        Reply::Text(text) => {
            ItemResult::Succeeded(completion_body(protocol, &request, &text, None))
        }
        Reply::Json(v) => ItemResult::Succeeded(v),
        Reply::Status { code, body, .. } => ItemResult::Failed {
            status: code,
            body: serde_json::from_str(&body).unwrap_or_else(|_| error_body(protocol, &body)),
        },
        Reply::Recorded(r) if (200..300).contains(&r.status) => {
            ItemResult::Succeeded(serde_json::from_str(&r.body).unwrap_or(Value::Null))
        }
        Reply::Recorded(r) => ItemResult::Failed {
            status: r.status,
            body: serde_json::from_str(&r.body).unwrap_or_else(|_| error_body(protocol, &r.body)),
        },
        Reply::Expired => ItemResult::Expired,
        // A connection-level failure has no meaning inside a batch: the provider
        // reports it as a server error on that request.
        _ => ItemResult::Failed {
            status: 500,
            body: error_body(protocol, "the server failed on this request"),
        },
    }
}

/// The output file (succeeded requests) and error file (the rest) of a finished
/// OpenAI batch, each line `{"id", "custom_id", "response", "error"}`.
fn openai_files(results: &[(String, ItemResult)]) -> (String, String) {
    let (mut ok, mut failed) = (String::new(), String::new());
    for (i, (custom_id, r)) in results.iter().enumerate().rev() {
        let id = format!("batch_req_{i:04}");
        let line = |response: Value, error: Value| {
            json!({"id": id, "custom_id": custom_id, "response": response, "error": error})
                .to_string()
                + "\n"
        };
        let response = |status: u16, body: &Value| json!({"status_code": status, "request_id": format!("req_{i:04}"), "body": body});
        match r {
            ItemResult::Succeeded(body) => ok.push_str(&line(response(200, body), Value::Null)),
            ItemResult::Failed { status, body } => {
                failed.push_str(&line(response(*status, body), Value::Null))
            }
            ItemResult::Expired => failed.push_str(&line(
                Value::Null,
                json!({"code": "batch_expired", "message": "the completion window ended before this request ran"}),
            )),
        }
    }
    (ok, failed)
}

fn counts<'a>(results: impl Iterator<Item = &'a ItemResult>) -> (u64, u64, u64) {
    results.fold((0, 0, 0), |(ok, failed, expired), r| match r {
        ItemResult::Succeeded(_) => (ok + 1, failed, expired),
        ItemResult::Failed { .. } => (ok, failed + 1, expired),
        ItemResult::Expired => (ok, failed, expired + 1),
    })
}

fn openai_object(id: &str, b: &Batch, status: &str, files: Option<&(String, String)>) -> Value {
    let total = b.items.len() as u64;
    let (ok, failed, expired) = counts(b.outcomes().iter().map(|(_, r)| r));
    let done = b.results.is_some().then_some(b.created + 60);
    let errors = b.invalid.as_ref().map(|why| {
        json!({"object": "list", "data": [{"code": "invalid_request", "message": why, "param": null, "line": null}]})
    });
    json!({
        "id": id, "object": "batch", "endpoint": "/v1/chat/completions",
        "errors": errors, "input_file_id": b.input_file_id,
        "completion_window": "24h", "status": status,
        "output_file_id": files.map(|f| &f.0), "error_file_id": files.map(|f| &f.1),
        "created_at": b.created, "in_progress_at": (b.polls > 1).then_some(b.created + 1),
        "expires_at": b.created + 86_400, "finalizing_at": done, "completed_at": done,
        "failed_at": b.invalid.as_ref().map(|_| b.created), "expired_at": null,
        "cancelling_at": null, "cancelled_at": null,
        "request_counts": {"total": total, "completed": ok, "failed": failed + expired},
        "metadata": null,
    })
}

fn anthropic_object(id: &str, b: &Batch, origin: &str) -> Value {
    let total = b.items.len() as u64;
    let (ok, failed, expired) = counts(b.outcomes().iter().map(|(_, r)| r));
    let ended = b.results.is_some();
    let time = |secs: u64| {
        format!(
            "2026-01-01T{:02}:{:02}:{:02}Z",
            secs / 3600 % 24,
            secs / 60 % 60,
            secs % 60
        )
    };
    json!({
        "id": id, "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": {
            "processing": total - ok - failed - expired,
            "succeeded": ok, "errored": failed, "canceled": 0, "expired": expired,
        },
        "ended_at": ended.then(|| time(b.created + 60)),
        "created_at": time(b.created), "expires_at": time(b.created + 86_399),
        "archived_at": null, "cancel_initiated_at": null,
        "results_url": ended.then(|| format!("{origin}/v1/messages/batches/{id}/results")),
    })
}

fn error_body(protocol: Protocol, message: &str) -> Value {
    match protocol {
        Protocol::OpenAi => {
            json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}})
        }
        Protocol::Anthropic => {
            json!({"type": "error", "error": {"type": "api_error", "message": message}})
        }
    }
}

fn invalid(protocol: Protocol, message: &str) -> Answer {
    let body = match protocol {
        Protocol::OpenAi => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
        Protocol::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
    };
    (400, "application/json", body.to_string())
}

fn not_found(protocol: Protocol, what: &str, id: &str) -> Answer {
    let message = format!("no {what} `{id}`");
    let body = match protocol {
        Protocol::OpenAi => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
        Protocol::Anthropic => {
            json!({"type": "error", "error": {"type": "not_found_error", "message": message}})
        }
    };
    (404, "application/json", body.to_string())
}

/// The parts of a `multipart/form-data` body: (name, filename, content).
fn multipart(body: &str, boundary: &str) -> Vec<(String, String, String)> {
    let delimiter = format!("--{boundary}");
    body.split(delimiter.as_str())
        .filter_map(|part| {
            let part = part.strip_prefix("\r\n")?;
            let (head, content) = part.split_once("\r\n\r\n")?;
            let attr = |key: &str| {
                head.split(';')
                    .find_map(|a| a.trim().strip_prefix(&format!("{key}=\"")))
                    .and_then(|v| v.split('"').next())
                    .map(str::to_string)
            };
            let content = content.strip_suffix("\r\n").unwrap_or(content);
            Some((
                attr("name")?,
                attr("filename").unwrap_or_default(),
                content.to_string(),
            ))
        })
        .collect()
}
