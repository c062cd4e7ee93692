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

mod budget;
mod cache;
mod prices;
mod rate;
mod retry;
mod stats;

pub use budget::{estimate_cost_usd, BudgetLayer, CostBudget};
pub use cache::{
    cache_key, redact, CacheEntry, CacheError, CacheLayer, CacheSpec, CacheStats, CacheStore,
    Claim, Page, RedisCache, ResponseCache, SqliteCache, CACHE_FILE, FORMAT_VERSION,
};
pub use prices::{price_id, Price, PriceTable, PRICES_CHECKED};
pub use rate::{RateLimit, RateLimitLayer, RateLimiter};
pub use retry::{RetryLayer, RetryPolicy};
pub use stats::{CallStats, StatsSnapshot};

use crate::llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use std::sync::Arc;

/// The top layer: counts every logical call and its tokens and cost into `stats`.
pub struct MeteredModel {
    inner: Arc<dyn ChatModel>,
    stats: Arc<CallStats>,
    prices: Arc<PriceTable>,
}

impl MeteredModel {
    pub fn new(inner: Arc<dyn ChatModel>, stats: Arc<CallStats>, prices: Arc<PriceTable>) -> Self {
        MeteredModel {
            inner,
            stats,
            prices,
        }
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
                let list = self.prices.cost_usd(model, &r.usage, false);
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
}

impl std::fmt::Debug for ModelStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStack")
            .field("provider", &self.provider.name())
            .field("cache", &self.cache.as_ref().map(|c| c.location()))
            .field("budget_usd", &self.budget.as_ref().map(|b| b.limit_usd()))
            .field("rate_limited", &self.limiter.is_some())
            .field("retry", &self.retry)
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
        }
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

    /// A model for one unit of accounting (e.g. one question): its stats count only the
    /// calls made through it, and also roll up into [`ModelStack::totals`].
    pub fn session(&self) -> Arc<MeteredModel> {
        self.metered(CallStats::child(&self.totals))
    }

    /// A model that counts into the stack's totals only.
    pub fn model(&self) -> Arc<dyn ChatModel> {
        self.metered(self.totals.clone())
    }

    fn metered(&self, stats: Arc<CallStats>) -> Arc<MeteredModel> {
        let mut m: Arc<dyn ChatModel> = Arc::new(RetryLayer::new(
            self.provider.clone(),
            self.retry.clone(),
            stats.clone(),
        ));
        if let Some(l) = &self.limiter {
            m = Arc::new(RateLimitLayer::new(m, l.clone()));
        }
        if let Some(b) = &self.budget {
            m = Arc::new(BudgetLayer::new(m, b.clone(), self.prices.clone()));
        }
        if let (Some(c), Some(identity)) = (&self.cache, self.provider.cache_identity()) {
            m = Arc::new(CacheLayer::new(m, c.clone(), identity));
        }
        Arc::new(MeteredModel::new(m, stats, self.prices.clone()))
    }

    /// Everything counted so far across all sessions.
    pub fn totals(&self) -> StatsSnapshot {
        self.totals.snapshot()
    }

    pub fn price_table(&self) -> &Arc<PriceTable> {
        &self.prices
    }
}
