//! Middleware: each layer is a [`ChatModel`] wrapping a `ChatModel`, and
//! [`ModelStack`] stacks them in the one order that makes sense:
//!
//! ```text
//! Metered (calls, tokens, cost per record)
//!   -> Cache (hits skip everything below: no budget, rate limit or retries)
//!     -> Budget (refuse past --max-cost; charge real cost)
//!       -> RateLimit (requests/tokens per minute, shared)
//!         -> Retry (backoff + jitter, Retry-After; counts retries)
//!           -> provider
//! ```
//!
//! The cache, budget, rate limiter and provider are shared by every caller; the metered
//! top and the retry layer are cheap and made per [`ModelStack::session`], so each
//! record can report its own calls, retries and cost while the stack's totals add up.
//!
//! A batched stack (`--batch`, [`ModelStack::batch`]) puts a
//! [`BatchingModel`](crate::batch::BatchingModel) in the provider's place and
//! leaves out the rate limiter (batches are not counted against per-minute limits):
//! cache hits still answer at once and never enter a batch, a failed or expired batch
//! request is retried by the retry layer in a later round, and the budget and the
//! metered top price calls at the batch rate ([`Billing::Batch`]).

mod budget;
mod cache;
mod prices;
mod rate;
mod retry;
mod stats;

pub use budget::{estimate_cost_usd, BudgetLayer, CostBudget};
#[cfg(feature = "redis")]
pub use cache::RedisCache;
pub use cache::{
    cache_key, clear_sqlite, redact, CacheEntry, CacheError, CacheLayer, CacheSpec, CacheStats,
    CacheStore, Claim, Page, ResponseCache, SqliteCache, CACHE_FILE, FORMAT_VERSION,
};
pub use prices::{price_id, Billing, Price, PriceTable, BATCH_RATE, PRICES_CHECKED};
pub use rate::{RateLimit, RateLimitLayer, RateLimiter};
pub use retry::{RetryLayer, RetryPolicy};
pub use stats::{CallStats, StatsSnapshot};

use crate::batch::{BatchRounds, BatchingModel};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError, Usage};
use async_trait::async_trait;
use std::sync::Arc;

/// The top layer: counts every logical call and its tokens and cost into `stats`.
pub struct MeteredModel {
    inner: Arc<dyn ChatModel>,
    stats: Arc<CallStats>,
    prices: Arc<PriceTable>,
    billing: Billing,
}

impl MeteredModel {
    pub fn new(inner: Arc<dyn ChatModel>, stats: Arc<CallStats>, prices: Arc<PriceTable>) -> Self {
        MeteredModel {
            inner,
            stats,
            prices,
            billing: Billing::Standard,
        }
    }

    /// Prices calls at `billing`'s rates (a cache hit's list cost too, so a batched
    /// run's list cost is the same on a rerun).
    pub fn billing(mut self, billing: Billing) -> Self {
        self.billing = billing;
        self
    }

    /// This session's counters (calls, retries, failures, cache hits, tokens, cost).
    pub fn stats(&self) -> &Arc<CallStats> {
        &self.stats
    }
}

#[async_trait]
impl ChatModel for MeteredModel {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        match self.inner.complete(request).await {
            Ok(r) => {
                let model = price_id(self.inner.name());
                let list = self.prices.billed_usd(model, &r.usage, self.billing);
                let billed = if r.cached { 0.0 } else { list };
                self.stats.record_success(&r, billed, list);
                Ok(r)
            }
            Err(e) => {
                self.stats.record_failure();
                Err(e)
            }
        }
    }
}

/// A provider with its middleware; see the module docs for the order.
#[derive(Clone)]
pub struct ModelStack {
    provider: Arc<dyn ChatModel>,
    cache: Option<Arc<ResponseCache>>,
    budget: Option<Arc<CostBudget>>,
    limiter: Option<Arc<RateLimiter>>,
    retry: RetryPolicy,
    prices: Arc<PriceTable>,
    totals: Arc<CallStats>,
    batch: Option<Arc<BatchRounds>>,
    cache_scope: CacheScope,
}

/// Whose responses a request may be answered with from the response cache.
///
/// `Shared` (the default): any run's with a byte-identical request to the same model.
/// `Method`: only the same method's. EIR Table 1 Panel B: Reflexion's first trial sends
/// exactly Direct's requests, so under a shared cache it replays Direct's answers and
/// the two rows come out equal, where the paper's separate runs sampled each arm on
/// its own; `--cache-scope method` (`cache_scope = "method"` in a recipe) keeps the
/// arms apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheScope {
    #[default]
    Shared,
    Method,
}

impl CacheScope {
    pub const NAMES: [&'static str; 2] = ["shared", "method"];

    pub fn parse(value: &str) -> Option<CacheScope> {
        match value.trim() {
            "shared" => Some(CacheScope::Shared),
            "method" => Some(CacheScope::Method),
            _ => None,
        }
    }
}

impl std::fmt::Debug for ModelStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStack")
            .field("provider", &self.provider.name())
            .field("cache", &self.cache.as_ref().map(|c| c.location()))
            .field("budget_usd", &self.budget.as_ref().map(|b| b.limit_usd()))
            .field("rate_limited", &self.limiter.is_some())
            .field("retry", &self.retry)
            .field("batch", &self.batch.is_some())
            .finish()
    }
}

impl ModelStack {
    /// A stack over `provider` with default retries, default prices and nothing else.
    pub fn builder(provider: Arc<dyn ChatModel>) -> ModelStack {
        ModelStack {
            provider,
            cache: None,
            budget: None,
            limiter: None,
            retry: RetryPolicy::default(),
            prices: Arc::new(PriceTable::defaults()),
            totals: CallStats::new(),
            batch: None,
            cache_scope: CacheScope::Shared,
        }
    }
    pub fn cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = scope;
        self
    }
    pub fn cache(mut self, cache: Arc<ResponseCache>) -> Self {
        self.cache = Some(cache);
        self
    }
    pub fn budget(mut self, budget: Arc<CostBudget>) -> Self {
        self.budget = Some(budget);
        self
    }
    pub fn rate_limiter(mut self, limiter: Arc<RateLimiter>) -> Self {
        self.limiter = Some(limiter);
        self
    }
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }
    pub fn prices(mut self, prices: Arc<PriceTable>) -> Self {
        self.prices = prices;
        self
    }
    /// Sends every call through `rounds` (see the module docs).
    pub fn batch(mut self, rounds: Arc<BatchRounds>) -> Self {
        self.batch = Some(rounds);
        self
    }

    /// Whether responses are cached (and every answer a call got is kept there).
    pub fn has_cache(&self) -> bool {
        self.cache.is_some() && self.provider.cache_identity().is_some()
    }

    /// The batch rounds of a batched stack.
    pub fn batch_rounds(&self) -> Option<&Arc<BatchRounds>> {
        self.batch.as_ref()
    }

    /// How this stack's calls are billed.
    pub fn billing(&self) -> Billing {
        match self.batch {
            Some(_) => Billing::Batch,
            None => Billing::Standard,
        }
    }

    /// What `usage` costs on `model` as this stack bills it.
    pub fn cost_usd(&self, model: &str, usage: &Usage) -> f64 {
        self.prices.billed_usd(model, usage, self.billing())
    }

    /// A model for one unit of accounting (e.g. one question): its stats count only the
    /// calls made through it, and also roll up into [`ModelStack::totals`].
    pub fn session(&self) -> Arc<MeteredModel> {
        self.metered(CallStats::child(&self.totals), None)
    }

    /// A [`ModelStack::session`] for one method's episode: under
    /// [`CacheScope::Method`] its cached responses are the method's own.
    pub fn session_for(&self, method: &str) -> Arc<MeteredModel> {
        let scope = (self.cache_scope == CacheScope::Method).then_some(method);
        self.metered(CallStats::child(&self.totals), scope)
    }

    /// A model that counts into the stack's totals only.
    pub fn model(&self) -> Arc<dyn ChatModel> {
        self.metered(self.totals.clone(), None)
    }

    fn metered(&self, stats: Arc<CallStats>, method: Option<&str>) -> Arc<MeteredModel> {
        let provider: Arc<dyn ChatModel> = match &self.batch {
            Some(rounds) => Arc::new(BatchingModel::new(rounds.clone(), self.provider.clone())),
            None => self.provider.clone(),
        };
        let mut m: Arc<dyn ChatModel> =
            Arc::new(RetryLayer::new(provider, self.retry.clone(), stats.clone()));
        if let (Some(l), None) = (&self.limiter, &self.batch) {
            m = Arc::new(RateLimitLayer::new(m, l.clone()));
        }
        if let Some(b) = &self.budget {
            let layer = BudgetLayer::new(m, b.clone(), self.prices.clone());
            m = Arc::new(layer.billing(self.billing()));
        }
        if let (Some(c), Some(identity)) = (&self.cache, self.provider.cache_identity()) {
            // A method's own namespace: the same request under another method is a
            // different key (the shared scope keeps every key as it was).
            let identity = match method {
                Some(m) => format!("{identity}\u{0}method={m}"),
                None => identity,
            };
            m = Arc::new(CacheLayer::new(m, c.clone(), identity));
        }
        Arc::new(MeteredModel::new(m, stats, self.prices.clone()).billing(self.billing()))
    }

    /// Everything counted so far across all sessions.
    pub fn totals(&self) -> StatsSnapshot {
        self.totals.snapshot()
    }

    pub fn price_table(&self) -> &Arc<PriceTable> {
        &self.prices
    }
}
