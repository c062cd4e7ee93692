//! What the server received: enough for tests to assert on the exact request shape.

use serde_json::Value;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    /// 0-based position of this request among all requests the server received.
    pub index: usize,
    pub method: String,
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers with lower-cased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The body as received.
    pub raw_body: String,
}

impl ReceivedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The bearer token of the `Authorization` header, if any.
    pub fn bearer(&self) -> Option<&str> {
        self.header("authorization")?.strip_prefix("Bearer ")
    }

    /// The `model` field of the body.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model")?.as_str()
    }

    /// The text of the last message in the body's `messages` array: its string content,
    /// or the text of its last block when the content is an array of blocks.
    pub fn last_message(&self) -> Option<&str> {
        let content = self
            .body
            .get("messages")?
            .as_array()?
            .last()?
            .get("content")?;
        match content.as_array() {
            Some(blocks) => blocks.last()?.get("text")?.as_str(),
            None => content.as_str(),
        }
    }
}
