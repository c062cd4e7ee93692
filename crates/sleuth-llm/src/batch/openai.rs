//! OpenAI's Batch API: the requests go up as a JSON Lines file (`POST /files`, purpose
//! `batch`, one `{"custom_id", "method", "url", "body"}` per line), a batch is created
//! over it for `/v1/chat/completions`, polled (`validating`, `in_progress`,
//! `finalizing`, then `completed`, `expired`, `failed` or `cancelled`), and its output
//! and error files are downloaded. The bodies are the ones [`OpenAiClient`] posts, so
//! the endpoint's quirks preset applies to batched calls too.

use super::lines::each_line;
use super::{complete, decode, BatchApi, BatchCounts, BatchHandle, BatchItem, BatchProgress};
use super::{BatchProvider, ItemOutcome};
use crate::http::{self, CallContext};
use crate::openai::parse_response;
use crate::{LlmError, OpenAiClient, OpenAiConfig};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The Batch API of one OpenAI(-compatible) endpoint and model.
pub struct OpenAiBatches {
    client: OpenAiClient,
    http: reqwest::Client,
}

impl OpenAiBatches {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiBatches, LlmError> {
        let http = http::client(config.timeout)?;
        Ok(OpenAiBatches {
            client: OpenAiClient::new(config)?,
            http,
        })
    }

    fn config(&self) -> &OpenAiConfig {
        self.client.config()
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config().base_url.trim_end_matches('/'))
    }

    fn context(&self) -> CallContext<'_> {
        let c = self.config();
        CallContext {
            provider: &c.name,
            key: c.api_key.as_ref(),
            timeout: c.timeout,
            max_reply_bytes: c.max_reply_bytes,
        }
    }

    /// `builder` with the key, if any.
    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.config().api_key {
            Some(key) => builder.bearer_auth(key.expose()),
            None => builder,
        }
    }

    async fn send(&self, builder: reqwest::RequestBuilder) -> Result<String, LlmError> {
        http::send(self.authorized(builder), &self.context()).await
    }

    async fn json(&self, builder: reqwest::RequestBuilder) -> Result<Value, LlmError> {
        let text = self.send(builder).await?;
        serde_json::from_str(&text).map_err(|e| decode(&self.config().name, "batch API", e, &text))
    }

    /// The requests as the input file's lines.
    fn input_file(&self, items: &[BatchItem]) -> String {
        items
            .iter()
            .map(|item| {
                let line = json!({
                    "custom_id": item.custom_id,
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": self.client.request_body(&item.request),
                });
                line.to_string() + "\n"
            })
            .collect()
    }

    /// One line of an output or error file as the outcome of its request.
    fn outcome(&self, line: &Value) -> ItemOutcome {
        let name = &self.config().name;
        // An error line without a response never ran (`batch_expired`, or cancelled):
        // worth submitting again.
        if line["response"].is_null() {
            return ItemOutcome::Expired;
        }
        let response = &line["response"];
        let status = response["status_code"].as_u64().unwrap_or(0) as u16;
        let body = response["body"].to_string();
        if !(200..300).contains(&status) {
            let e = http::status_error(status, &HeaderMap::new(), &body, &self.context());
            return ItemOutcome::Failed(e);
        }
        match parse_response(&body, name) {
            Ok(r) => ItemOutcome::Done(http::finish_response(
                r,
                self.config().api_key.as_ref(),
                &[],
            )),
            Err(e) => ItemOutcome::Failed(http::redact_error(e, self.config().api_key.as_ref())),
        }
    }
}

fn counts(batch: &Value) -> BatchCounts {
    let c = &batch["request_counts"];
    BatchCounts {
        total: c["total"].as_u64().unwrap_or(0),
        succeeded: c["completed"].as_u64().unwrap_or(0),
        failed: c["failed"].as_u64().unwrap_or(0),
    }
}

#[async_trait::async_trait]
impl BatchApi for OpenAiBatches {
    fn provider(&self) -> BatchProvider {
        BatchProvider::OpenAi
    }

    async fn submit(&self, items: &[BatchItem]) -> Result<BatchHandle, LlmError> {
        // A multipart form written out: two fields, the file last.
        let boundary = format!("sleuth-batch-{:016x}", rand::random::<u64>());
        let body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"requests.jsonl\"\r\n\
             Content-Type: application/jsonl\r\n\r\n{}\r\n--{boundary}--\r\n",
            self.input_file(items)
        );
        let upload = self
            .http
            .post(self.url("files"))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        let file = self.json(upload).await?;
        let file_id = file["id"].as_str().unwrap_or_default();
        let create = self.http.post(self.url("batches")).json(&json!({
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        }));
        let batch = self.json(create).await?;
        let id = batch["id"].as_str().ok_or_else(|| {
            decode(
                &self.config().name,
                "batch create",
                "no id",
                &batch.to_string(),
            )
        })?;
        Ok(BatchHandle {
            provider: BatchProvider::OpenAi,
            id: id.to_string(),
            requests: items.len(),
        })
    }

    async fn progress(&self, batch: &BatchHandle) -> Result<BatchProgress, LlmError> {
        let b = self
            .json(self.http.get(self.url(&format!("batches/{}", batch.id))))
            .await?;
        let status = b["status"].as_str().unwrap_or_default();
        Ok(match status {
            "completed" | "expired" | "cancelled" => BatchProgress::Ended { counts: counts(&b) },
            "failed" => BatchProgress::Refused {
                reason: b["errors"]["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e["message"].as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            },
            other => BatchProgress::Running {
                status: other.to_string(),
                counts: counts(&b),
            },
        })
    }

    async fn results(
        &self,
        batch: &BatchHandle,
        custom_ids: &[String],
    ) -> Result<HashMap<String, ItemOutcome>, LlmError> {
        let b = self
            .json(self.http.get(self.url(&format!("batches/{}", batch.id))))
            .await?;
        let mut found = HashMap::new();
        for field in ["output_file_id", "error_file_id"] {
            let Some(file) = b[field].as_str() else {
                continue;
            };
            let url = self.url(&format!("files/{file}/content"));
            let download = self.authorized(self.http.get(url));
            each_line(download, &self.context(), custom_ids.len(), |line| {
                let v: Value = serde_json::from_str(line)
                    .map_err(|e| decode(&self.config().name, "batch results", e, line))?;
                if let Some(id) = v["custom_id"].as_str() {
                    found.insert(id.to_string(), self.outcome(&v));
                }
                Ok(())
            })
            .await?;
        }
        Ok(complete(found, custom_ids))
    }
}
