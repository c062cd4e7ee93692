//! One normalized chat interface over every model provider.
//!
//! Agents build a [`ChatRequest`] and get a [`ChatResponse`]; they never see a provider's
//! wire format. Providers (OpenAI-compatible, Anthropic, the scripted test model, the
//! embedded local model) implement [`ChatModel`]; middleware (retry, cache, accounting)
//! wraps any `ChatModel` and is itself one.

// The shared utilities, under the paths the modules name them by.
use sleuth_common::{file_lock, knob};

pub mod anthropic;
pub mod batch;
mod endpoint;
mod error;
pub mod families;
mod http;
pub mod middleware;
pub mod openai;
pub mod quirks;
mod scripted;
mod secret;
pub mod spec;
mod types;

pub use anthropic::{AnthropicClient, AnthropicConfig};
pub use error::LlmError;
pub use families::ModelFamilies;
pub use http::DEFAULT_MAX_REPLY_BYTES;
pub use middleware::{
    CacheSpec, CallStats, CostBudget, MeteredModel, ModelStack, Price, PriceTable, RateLimit,
    ResponseCache, RetryPolicy, StatsSnapshot,
};
pub use openai::{OpenAiClient, OpenAiConfig};
pub use quirks::{GrammarForm, MaxTokensField, Quirks, SchemaForm, SystemRole, ToolCallContent};
pub use scripted::ScriptedModel;
pub use secret::ApiKey;
pub use spec::{
    open_model, open_provider, open_stack, stack_with, EnvSource, ModelOptions, ModelSpec,
};
pub use types::{
    ChatRequest, ChatResponse, FinishReason, Message, OutputConstraint, Role, ToolCall, ToolSpec,
    Usage, MAX_TOKENS_PER_CALL,
};

use async_trait::async_trait;
use std::sync::Arc;

/// A chat model: one request in, one response out.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A stable name for records, e.g. `openai:gpt-4o-mini`.
    fn name(&self) -> &str;

    /// What the response cache keys this model's replies by, besides the request:
    /// everything else that can change a reply (provider, endpoint, model, server
    /// preset, options that change the body). `None`: never cache its replies (a
    /// scripted model answers by call order, not by request). Defaults to the name.
    fn cache_identity(&self) -> Option<String> {
        Some(self.name().to_string())
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

#[async_trait]
impl<M: ChatModel + ?Sized> ChatModel for Arc<M> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn cache_identity(&self) -> Option<String> {
        (**self).cache_identity()
    }
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).complete(request).await
    }
}

#[async_trait]
impl<M: ChatModel + ?Sized> ChatModel for Box<M> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn cache_identity(&self) -> Option<String> {
        (**self).cache_identity()
    }
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).complete(request).await
    }
}
