//! A spending cap for a run (`--max-cost`), shared by all concurrent callers.
//!
//! Before a call we reserve an estimate of its cost (prompt characters / 4 at the input
//! price plus `max_tokens` at the output price) and refuse the call if committed
//! spending plus the estimate would pass the cap; after the call the reservation is
//! replaced by the real cost. Reserving atomically means 32 concurrent callers cannot
//! all slip under the cap at once. A call without `max_tokens` reserves only its input,
//! so the cap can be passed by at most one such reply per concurrent caller.

use super::prices::{price_id, Billing, PriceTable};
use super::stats::{from_nanos, to_nanos};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError, Usage};
use async_trait::async_trait;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug)]
pub struct CostBudget {
    limit: u64,
    /// Real spending plus outstanding reservations, in nano-USD.
    committed: AtomicU64,
    spent: AtomicU64,
}

impl CostBudget {
    pub fn new(limit_usd: f64) -> Arc<CostBudget> {
        Arc::new(CostBudget {
            limit: to_nanos(limit_usd),
            committed: AtomicU64::new(0),
            spent: AtomicU64::new(0),
        })
    }

    pub fn limit_usd(&self) -> f64 {
        from_nanos(self.limit)
    }

    /// Money actually spent (settled calls only).
    pub fn spent_usd(&self) -> f64 {
        from_nanos(self.spent.load(Ordering::SeqCst))
    }

    /// Reserves `estimate_usd`, or refuses when that would pass the cap.
    pub fn reserve(&self, estimate_usd: f64) -> Result<u64, LlmError> {
        let estimate = to_nanos(estimate_usd);
        let outcome = self
            .committed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
                let next = c.saturating_add(estimate);
                (c < self.limit && next <= self.limit).then_some(next)
            });
        match outcome {
            Ok(_) => Ok(estimate),
            Err(committed) => Err(LlmError::Refused(format!(
                "cost budget of ${:.4} reached: ${:.4} committed, this call may cost up to ${:.4} (raise {} to continue)",
                self.limit_usd(),
                from_nanos(committed),
                estimate_usd,
                crate::knob::Knob::MaxCost
            ))),
        }
    }

    /// Replaces a reservation by the call's real cost.
    pub fn settle(&self, reserved: u64, actual_usd: f64) {
        let actual = to_nanos(actual_usd);
        self.committed.fetch_add(actual, Ordering::SeqCst);
        self.committed.fetch_sub(reserved, Ordering::SeqCst);
        self.spent.fetch_add(actual, Ordering::SeqCst);
    }
}

/// Upper-bound estimate of a request's cost before sending it, billed as `billing`.
pub fn estimate_cost_usd(
    prices: &PriceTable,
    model: &str,
    request: &ChatRequest,
    billing: Billing,
) -> f64 {
    let chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
    let usage = Usage {
        input_tokens: chars.div_ceil(4) as u64,
        output_tokens: request.max_tokens.unwrap_or(0) as u64,
        ..Usage::default()
    };
    prices.billed_usd(model, &usage, billing)
}

/// Refuses calls once the budget is spent; charges each call's real cost (at batch
/// prices in a batched stack: `--max-cost` holds at what is billed).
pub struct BudgetLayer {
    inner: Arc<dyn ChatModel>,
    budget: Arc<CostBudget>,
    prices: Arc<PriceTable>,
    billing: Billing,
}

impl BudgetLayer {
    pub fn new(
        inner: Arc<dyn ChatModel>,
        budget: Arc<CostBudget>,
        prices: Arc<PriceTable>,
    ) -> Self {
        BudgetLayer {
            inner,
            budget,
            prices,
            billing: Billing::Standard,
        }
    }

    /// Reserves and charges at `billing`'s prices.
    pub fn billing(mut self, billing: Billing) -> Self {
        self.billing = billing;
        self
    }
}

#[async_trait]
impl ChatModel for BudgetLayer {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let model = price_id(self.inner.name());
        let reserved = self.budget.reserve(estimate_cost_usd(
            &self.prices,
            model,
            request,
            self.billing,
        ))?;
        let result = self.inner.complete(request).await;
        let actual = match &result {
            Ok(r) if r.cached => 0.0,
            Ok(r) => self.prices.billed_usd(model, &r.usage, self.billing),
            Err(_) => 0.0,
        };
        self.budget.settle(reserved, actual);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_atomic_and_settle_to_real_cost() {
        let b = CostBudget::new(1.0);
        let r1 = b.reserve(0.6).unwrap();
        assert!(b.reserve(0.6).is_err(), "0.6 + 0.6 passes the cap");
        b.settle(r1, 0.1);
        assert!((b.spent_usd() - 0.1).abs() < 1e-9);
        let r2 = b.reserve(0.6).unwrap();
        b.settle(r2, 0.9);
        let e = b.reserve(0.0).unwrap_err();
        assert!(
            matches!(&e, LlmError::Refused(m) if m.contains("(raise max_cost to continue)")),
            "{e}"
        );
        assert!(!e.is_retryable());
    }

    #[tokio::test]
    async fn a_batched_stack_reserves_and_charges_at_the_batch_rate() {
        use crate::{Message, ScriptedModel};
        let mut prices = PriceTable::empty();
        let price = super::super::Price {
            input: 1e6,
            output: 1e6,
            cached_input: None,
            cache_write: None,
            batch: None,
        };
        prices.insert("scripted", price);
        let prices = Arc::new(prices);
        // $1 a token: the 8-character prompt reserves 2 input tokens and max_tokens 4,
        // $6 at list price and $3 batched; what is charged is halved the same way.
        let model = || Arc::new(ScriptedModel::new(vec!["a b c d".into()]).named("scripted"));
        let request = ChatRequest::new(vec![Message::user("12345678")]).max_tokens(4);
        let mut spent = Vec::new();
        for billing in [Billing::Standard, Billing::Batch] {
            let budget = CostBudget::new(100.0);
            let layer = BudgetLayer::new(model(), budget.clone(), prices.clone()).billing(billing);
            layer.complete(&request).await.unwrap();
            spent.push(budget.spent_usd());
        }
        assert!(
            spent[0] > 0.0 && (spent[1] - spent[0] / 2.0).abs() < 1e-9,
            "{spent:?}"
        );
        // A cap of $5 refuses a standard call (it may cost up to $6) but not a batched one.
        let budget = CostBudget::new(5.0);
        let layer = BudgetLayer::new(model(), budget.clone(), prices.clone());
        assert!(layer.complete(&request).await.is_err());
        let layer = BudgetLayer::new(model(), budget, prices).billing(Billing::Batch);
        assert!(layer.complete(&request).await.is_ok());
    }
}
