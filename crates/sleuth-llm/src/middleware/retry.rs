//! Retry with exponential backoff and jitter, honouring the server's Retry-After.
//! Only errors that [`LlmError::is_retryable`] says are transient are retried; each
//! extra attempt is counted as a retry, never as a call. The error that ends a call
//! says why it was not retried (or how many attempts it took), so a record's error
//! explains itself.

use super::stats::CallStats;
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use rand::Rng;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 = never retry).
    pub max_attempts: u32,
    /// The first backoff; it doubles per attempt.
    pub base_delay: Duration,
    /// Ceiling of the computed backoff.
    pub max_delay: Duration,
    /// Ceiling on a server-requested wait; a longer Retry-After is shortened to this.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (1-based) after `error`. A Retry-After is
    /// honoured as a minimum (plus up to 10% jitter so synchronized callers spread out);
    /// otherwise "equal jitter": a uniform draw from the upper half of the backoff.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Duration {
        let mut rng = rand::thread_rng();
        if let Some(wait) = error.retry_after() {
            let wait = wait.min(self.max_retry_after);
            return wait + wait.mul_f64(rng.gen_range(0.0..=0.1));
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20))
            .min(self.max_delay);
        exp.mul_f64(rng.gen_range(0.5..=1.0))
    }
}

/// Retries transient failures of the inner model.
pub struct RetryLayer {
    inner: Arc<dyn ChatModel>,
    policy: RetryPolicy,
    stats: Arc<CallStats>,
}

impl RetryLayer {
    pub fn new(inner: Arc<dyn ChatModel>, policy: RetryPolicy, stats: Arc<CallStats>) -> Self {
        RetryLayer {
            inner,
            policy,
            stats,
        }
    }
}

#[async_trait]
impl ChatModel for RetryLayer {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut attempt = 1;
        loop {
            match self.inner.complete(request).await {
                Ok(r) => return Ok(r),
                Err(e) if e.is_retryable() && attempt < self.policy.max_attempts => {
                    let wait = self.policy.delay(attempt, &e);
                    tracing::debug!(model = self.inner.name(), attempt, ?wait, error = %e, "retrying");
                    self.stats.record_retry();
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(e) => return Err(final_error(e, attempt)),
            }
        }
    }
}

/// The error that ends a call, with why it was not retried or how long it was tried.
fn final_error(e: LlmError, attempts: u32) -> LlmError {
    if let Some(why) = e.permanent_reason() {
        return e.with_note(&format!(
            "not retried: {why}; the same request cannot succeed"
        ));
    }
    if attempts > 1 {
        return e.with_note(&format!("gave up after {attempts} attempts"));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(60),
        };
        let e = LlmError::Timeout {
            provider: "p".into(),
            after: Duration::from_secs(1),
        };
        for (retry, hi) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 800),
            (5, 1000),
            (30, 1000),
        ] {
            let d = p.delay(retry, &e);
            assert!(
                d >= Duration::from_millis(hi / 2) && d <= Duration::from_millis(hi),
                "{retry}: {d:?}"
            );
        }
        let limited = LlmError::Http {
            provider: "p".into(),
            status: 429,
            message: String::new(),
            retry_after: Some(Duration::from_secs(2)),
        };
        let d = p.delay(1, &limited);
        assert!(
            d >= Duration::from_secs(2) && d <= Duration::from_millis(2200),
            "{d:?}"
        );
    }
}
