//! Per-call accounting shared by concurrent callers: logical calls, retries (which are
//! not calls), failures, cache hits, tokens and cost. Counters are atomics so many
//! tasks can update one record's stats and the run's totals without locks; a child's
//! updates also flow to its parent, so one `CallStats` per record rolls up into the
//! run's totals.

use crate::{ChatResponse, FinishReason, Usage};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Costs are kept in nano-dollars so they can be atomic integers.
const NANOS_PER_USD: f64 = 1e9;

#[derive(Debug, Default)]
pub struct CallStats {
    calls: AtomicU64,
    retries: AtomicU64,
    failures: AtomicU64,
    cache_hits: AtomicU64,
    constraints_dropped: AtomicU64,
    truncated: AtomicU64,
    refusals: AtomicU64,
    batched: AtomicU64,
    usage_unknown: AtomicU64,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
    cached_input_tokens: AtomicU64,
    cache_write_tokens: AtomicU64,
    billed_nano_usd: AtomicU64,
    list_nano_usd: AtomicU64,
    parent: Option<Arc<CallStats>>,
}

/// A point-in-time copy of [`CallStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StatsSnapshot {
    /// Logical calls made by the caller (retries not included).
    pub calls: u64,
    /// Extra attempts made by the retry layer.
    pub retries: u64,
    /// Calls that ended in an error after all retries.
    pub failures: u64,
    /// Calls answered by the response cache.
    pub cache_hits: u64,
    /// Calls whose output constraint the server refused, answered without it.
    pub constraints_dropped: u64,
    /// Calls cut by the output-token limit (truncated replies).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated: u64,
    /// Calls the model refused.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refusals: u64,
    /// Calls answered through a provider batch (`--batch`), billed at its rate.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched: u64,
    /// Calls whose reported token usage no call has: kept, their usage unknown (0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage_unknown: u64,
    /// Tokens of every successful call, cached or not.
    pub usage: Usage,
    /// What was actually billed: cached responses cost 0.
    pub cost_usd: f64,
    /// What the calls would cost without the response cache (stable across reruns).
    pub list_cost_usd: f64,
}

impl CallStats {
    pub fn new() -> Arc<CallStats> {
        Arc::new(CallStats::default())
    }

    /// Stats whose every update is also applied to `parent`.
    pub fn child(parent: &Arc<CallStats>) -> Arc<CallStats> {
        Arc::new(CallStats {
            parent: Some(parent.clone()),
            ..CallStats::default()
        })
    }

    fn each(&self, f: &dyn Fn(&CallStats)) {
        f(self);
        if let Some(p) = &self.parent {
            p.each(f);
        }
    }

    pub(crate) fn record_retry(&self) {
        self.each(&|s| {
            s.retries.fetch_add(1, Ordering::Relaxed);
        });
    }

    pub(crate) fn record_failure(&self) {
        self.each(&|s| {
            s.calls.fetch_add(1, Ordering::Relaxed);
            s.failures.fetch_add(1, Ordering::Relaxed);
        });
    }

    /// A successful call with its billed and list cost.
    pub(crate) fn record_success(&self, response: &ChatResponse, billed_usd: f64, list_usd: f64) {
        let u = response.usage;
        let (billed, list) = (to_nanos(billed_usd), to_nanos(list_usd));
        self.each(&|s| {
            s.calls.fetch_add(1, Ordering::Relaxed);
            if response.cached {
                s.cache_hits.fetch_add(1, Ordering::Relaxed);
            }
            if response.batched && !response.cached {
                s.batched.fetch_add(1, Ordering::Relaxed);
            }
            if response.constraint_dropped {
                s.constraints_dropped.fetch_add(1, Ordering::Relaxed);
            }
            match response.finish_reason {
                FinishReason::Length => s.truncated.fetch_add(1, Ordering::Relaxed),
                FinishReason::Refusal => s.refusals.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
            if response.usage_unknown {
                s.usage_unknown.fetch_add(1, Ordering::Relaxed);
            }
            add(&s.input_tokens, u.input_tokens);
            add(&s.output_tokens, u.output_tokens);
            add(&s.cached_input_tokens, u.cached_input_tokens);
            add(&s.cache_write_tokens, u.cache_write_tokens);
            add(&s.billed_nano_usd, billed);
            add(&s.list_nano_usd, list);
        });
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatsSnapshot {
            calls: get(&self.calls),
            retries: get(&self.retries),
            failures: get(&self.failures),
            cache_hits: get(&self.cache_hits),
            constraints_dropped: get(&self.constraints_dropped),
            truncated: get(&self.truncated),
            refusals: get(&self.refusals),
            batched: get(&self.batched),
            usage_unknown: get(&self.usage_unknown),
            usage: Usage {
                input_tokens: get(&self.input_tokens),
                output_tokens: get(&self.output_tokens),
                cached_input_tokens: get(&self.cached_input_tokens),
                cache_write_tokens: get(&self.cache_write_tokens),
            },
            cost_usd: get(&self.billed_nano_usd) as f64 / NANOS_PER_USD,
            list_cost_usd: get(&self.list_nano_usd) as f64 / NANOS_PER_USD,
        }
    }
}

/// Adds `n` to a total, stopping at the largest value rather than wrapping past it
/// (a wrapped token total reads as a small one; hardening III, item 5).
fn add(total: &AtomicU64, n: u64) {
    let _ = total.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        Some(v.saturating_add(n))
    });
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn to_nanos(usd: f64) -> u64 {
    if usd.is_finite() && usd > 0.0 {
        (usd * NANOS_PER_USD).round() as u64
    } else {
        0
    }
}

pub(crate) fn from_nanos(n: u64) -> f64 {
    n as f64 / NANOS_PER_USD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_updates_roll_up_to_the_parent() {
        let total = CallStats::new();
        let (a, b) = (CallStats::child(&total), CallStats::child(&total));
        let mut resp = ChatResponse::new(
            "x",
            Usage {
                input_tokens: 10,
                output_tokens: 2,
                ..Usage::default()
            },
        );
        a.record_success(&resp, 0.25, 0.25);
        a.record_retry();
        resp.cached = true;
        resp.constraint_dropped = true;
        b.record_success(&resp, 0.0, 0.25);
        b.record_failure();
        let (sa, sb, st) = (a.snapshot(), b.snapshot(), total.snapshot());
        assert_eq!((sa.calls, sa.retries, sa.cost_usd), (1, 1, 0.25));
        assert_eq!(
            (
                sb.calls,
                sb.failures,
                sb.cache_hits,
                sb.cost_usd,
                sb.list_cost_usd
            ),
            (2, 1, 1, 0.0, 0.25)
        );
        assert_eq!(
            (st.calls, st.retries, st.failures, st.cache_hits),
            (3, 1, 1, 1)
        );
        assert_eq!((sa.constraints_dropped, st.constraints_dropped), (0, 1));
        assert_eq!(st.usage.input_tokens, 20);
        assert_eq!((st.cost_usd, st.list_cost_usd), (0.25, 0.5));
    }
}
