//! Provider batch APIs: many chat calls submitted as one job, billed at a discount and
//! answered within hours instead of seconds (OpenAI's Batch API, Anthropic's Message
//! Batches). A paper-scale grid is thousands of independent calls per round of agent
//! turns, which is exactly what these APIs price low.
//!
//! A [`BatchApi`] submits [`BatchItem`]s (a caller-chosen `custom_id` and the same
//! normalized [`ChatRequest`] a plain call sends, rendered by the provider's own client,
//! so a batched request is byte-for-byte the body a plain call would post), reports a
//! batch's [`BatchProgress`], and once it has ended returns one [`ItemOutcome`] per
//! item, matched by `custom_id` (the providers return results in any order). The
//! [`BatchHandle`] is plain data, so a run directory can keep it and a resumed run can
//! poll the batch it submitted instead of paying for it twice.
//!
//! [`rounds`] is how a run uses them (`--batch`): the runner's episodes advance in
//! lock-step rounds, each round's calls one batch, journaled for resuming.

mod anthropic;
mod lines;
mod openai;
pub mod rounds;

pub use anthropic::AnthropicBatches;
pub use openai::OpenAiBatches;
pub use rounds::{BatchRounds, BatchingModel, RoundReport, JOURNAL};

use super::{ChatRequest, ChatResponse, LlmError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;

/// One call of a batch.
#[derive(Debug, Clone)]
pub struct BatchItem {
    /// Unique within the batch; the results are matched back by it.
    pub custom_id: String,
    pub request: ChatRequest,
}

/// Which batch API a handle belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchProvider {
    OpenAi,
    Anthropic,
}

/// A submitted batch, as the provider named it: all a later process needs to poll it
/// and fetch its results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchHandle {
    pub provider: BatchProvider,
    pub id: String,
    /// How many requests it holds.
    pub requests: usize,
}

/// Request counts of a batch, in the providers' common terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BatchCounts {
    pub total: u64,
    /// Answered successfully so far.
    pub succeeded: u64,
    /// Failed or expired so far.
    pub failed: u64,
}

/// Where a batch stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchProgress {
    /// Still being validated or processed; `status` is the provider's word for it.
    Running { status: String, counts: BatchCounts },
    /// Every request has an outcome (some may have failed or expired).
    Ended { counts: BatchCounts },
    /// The provider refused the whole batch (OpenAI's `failed`: a bad input file).
    Refused { reason: String },
}

/// What became of one request.
#[derive(Debug, Clone)]
pub enum ItemOutcome {
    /// The completion, exactly as a plain call would have returned it.
    Done(ChatResponse),
    /// The request failed inside the batch as it would have failed on its own.
    Failed(LlmError),
    /// The batch's window ended before the request ran: worth submitting again.
    Expired,
}

/// A provider's batch API.
#[async_trait::async_trait]
pub trait BatchApi: Send + Sync {
    fn provider(&self) -> BatchProvider;

    /// Submits `items` as one batch.
    async fn submit(&self, items: &[BatchItem]) -> Result<BatchHandle, LlmError>;

    /// Polls the batch once.
    async fn progress(&self, batch: &BatchHandle) -> Result<BatchProgress, LlmError>;

    /// The outcome of every request of an ended batch, by `custom_id`. A request the
    /// provider lists no result for is [`ItemOutcome::Expired`] (it never ran).
    async fn results(
        &self,
        batch: &BatchHandle,
        custom_ids: &[String],
    ) -> Result<HashMap<String, ItemOutcome>, LlmError>;
}

/// How often to poll: starting at `first`, doubling up to `longest`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub first: Duration,
    pub longest: Duration,
}

impl Default for Backoff {
    /// 5 s doubling to 5 minutes: a batch takes minutes to hours, and each poll is a
    /// request against the account's rate limit.
    fn default() -> Self {
        Backoff {
            first: Duration::from_secs(5),
            longest: Duration::from_secs(300),
        }
    }
}

/// Polls `batch` until it ends (or is refused), calling `seen` with every progress
/// report, then returns the final one.
pub async fn wait(
    api: &dyn BatchApi,
    batch: &BatchHandle,
    backoff: Backoff,
    seen: &mut (dyn FnMut(&BatchProgress) + Send),
) -> Result<BatchProgress, LlmError> {
    let mut pause = backoff.first;
    loop {
        let progress = api.progress(batch).await?;
        seen(&progress);
        if !matches!(progress, BatchProgress::Running { .. }) {
            return Ok(progress);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(backoff.longest);
    }
}

/// Every `custom_id` the caller asked for gets an outcome: one missing from the
/// provider's results never ran.
fn complete(
    mut found: HashMap<String, ItemOutcome>,
    custom_ids: &[String],
) -> HashMap<String, ItemOutcome> {
    for id in custom_ids {
        found.entry(id.clone()).or_insert(ItemOutcome::Expired);
    }
    found
}

fn decode(provider: &str, what: &str, e: impl std::fmt::Display, raw: &str) -> LlmError {
    LlmError::Decode {
        provider: provider.to_string(),
        message: format!("{what}: {e}"),
        raw: raw.chars().take(600).collect(),
    }
}
