//! A scripted model for tests: replies come from a list or a function of the request,
//! and every request is kept so tests can assert on exactly what the model was shown.
//! A `scripted:FILE` model opened from a spec keeps none ([`ScriptedModel::forgetful`]):
//! nothing can read them back through the `ChatModel` it becomes, and a long run would
//! hold every conversation it sent until the process ends (issue 32).

use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Usage};
use async_trait::async_trait;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

type Responder = Box<dyn Fn(&ChatRequest, usize) -> Result<String, LlmError> + Send + Sync>;

pub struct ScriptedModel {
    name: String,
    responder: Responder,
    requests: Mutex<Vec<ChatRequest>>,
    /// Calls so far (the next call's index).
    calls: AtomicUsize,
    /// Whether `requests` keeps each request.
    keeps_requests: bool,
}

impl ScriptedModel {
    /// Replies with `replies` in order; after the last one, repeats the last.
    pub fn new(replies: Vec<String>) -> Self {
        assert!(
            !replies.is_empty(),
            "a scripted model needs at least one reply"
        );
        Self::from_fn(move |_, i| Ok(replies[i.min(replies.len() - 1)].clone()))
    }

    /// Replies with `f(request, call_index)`.
    pub fn from_fn(
        f: impl Fn(&ChatRequest, usize) -> Result<String, LlmError> + Send + Sync + 'static,
    ) -> Self {
        ScriptedModel {
            name: "scripted".into(),
            responder: Box::new(f),
            requests: Mutex::new(Vec::new()),
            calls: AtomicUsize::new(0),
            keeps_requests: true,
        }
    }

    /// Keeps no request ([`ScriptedModel::requests`] stays empty); replies are the same.
    pub fn forgetful(mut self) -> Self {
        self.keeps_requests = false;
        self
    }

    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().expect("requests lock").clone()
    }
}

/// A crude but deterministic token count (whitespace words) so usage is never zero.
pub(crate) fn approx_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    /// Never cached: replies follow the call order and the script file, which a cache
    /// key of the request (or of the file's name) would not see change.
    fn cache_identity(&self) -> Option<String> {
        None
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let index = if self.keeps_requests {
            // Under the lock: the log's order is the call order.
            let mut reqs = self.requests.lock().expect("requests lock");
            reqs.push(request.clone());
            self.calls.fetch_add(1, Ordering::SeqCst)
        } else {
            self.calls.fetch_add(1, Ordering::SeqCst)
        };
        let text = (self.responder)(request, index)?;
        let input = request
            .messages
            .iter()
            .map(|m| approx_tokens(&m.content))
            .sum();
        let usage = Usage {
            input_tokens: input,
            output_tokens: approx_tokens(&text),
            ..Usage::default()
        };
        Ok(ChatResponse::new(text, usage))
    }
}
