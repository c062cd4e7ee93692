//! Client-side rate limiting: requests per minute and tokens per minute, shared by all
//! concurrent callers of one model, so a run at concurrency 32 stays under a provider's
//! limits instead of collecting 429s.
//!
//! Each limit is a token bucket holding at most one second's worth of allowance. A
//! caller takes its share immediately (the bucket may go negative) and sleeps until the
//! debt is repaid, which spaces callers evenly in arrival order without holding a lock
//! while waiting. Tokens are estimated before the call (prompt characters / 4 plus
//! `max_tokens`) and corrected with the real usage afterwards.
//!
//! A server's usage report is believed only up to what the request could have used
//! ([`ceiling`]: a token is at least one byte of the prompt, plus `max_tokens` and a
//! template's overhead per message): a reply claiming 10^8 tokens for a short prompt
//! would otherwise put the bucket days in debt and stall the run with no word
//! (hardening III, item 6). The first long wait is said, with what it waits for.

use crate::knob::Knob;
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateLimit {
    pub requests_per_minute: Option<f64>,
    pub tokens_per_minute: Option<f64>,
}

#[derive(Debug)]
struct Bucket {
    per_second: f64,
    capacity: f64,
    level: f64,
    last: Instant,
}

impl Bucket {
    fn new(per_minute: f64, min_capacity: f64) -> Bucket {
        let per_second = per_minute / 60.0;
        let capacity = per_second.max(min_capacity);
        Bucket {
            per_second,
            capacity,
            level: capacity,
            last: Instant::now(),
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.level = (self.level + elapsed * self.per_second).min(self.capacity);
        self.last = now;
    }

    /// Takes `amount` and returns how long the caller must wait for it.
    fn take(&mut self, amount: f64, now: Instant) -> Duration {
        self.refill(now);
        self.level -= amount;
        if self.level >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.level / self.per_second)
        }
    }
}

#[derive(Debug)]
pub struct RateLimiter {
    requests: Option<Mutex<Bucket>>,
    tokens: Option<Mutex<Bucket>>,
    limit: RateLimit,
    /// Whether a long wait was already said (once per run is enough).
    said: AtomicBool,
}

/// A wait longer than this is said (once).
const SAID_WAIT: Duration = Duration::from_secs(10);

impl RateLimiter {
    pub fn new(limit: RateLimit) -> Result<Arc<RateLimiter>, LlmError> {
        let valid = |v: Option<f64>, what: &str| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(LlmError::Config(format!(
                "{what} per minute must be a positive number, got {x}"
            ))),
            _ => Ok(v),
        };
        let rpm = valid(limit.requests_per_minute, "requests")?;
        let tpm = valid(limit.tokens_per_minute, "tokens")?;
        Ok(Arc::new(RateLimiter {
            requests: rpm.map(|r| Mutex::new(Bucket::new(r, 1.0))),
            tokens: tpm.map(|t| Mutex::new(Bucket::new(t, 1.0))),
            limit,
            said: AtomicBool::new(false),
        }))
    }

    /// Waits until a request estimated at `tokens` tokens may go.
    pub async fn acquire(&self, tokens: u64) {
        let now = Instant::now();
        let mut wait = Duration::ZERO;
        if let Some(b) = &self.requests {
            wait = wait.max(b.lock().expect("bucket lock").take(1.0, now));
        }
        if let Some(b) = &self.tokens {
            wait = wait.max(b.lock().expect("bucket lock").take(tokens as f64, now));
        }
        if wait > SAID_WAIT && !self.said.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "waiting {:.0} s for the client-side rate limit ({}); this request is estimated at {tokens} tokens (later waits are not reported)",
                wait.as_secs_f64(),
                self.limits()
            );
        }
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// The limits, as the front end's knobs give them.
    fn limits(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.limit.requests_per_minute {
            parts.push(Knob::Rpm.with(r).to_string());
        }
        if let Some(t) = self.limit.tokens_per_minute {
            parts.push(Knob::Tpm.with(t).to_string());
        }
        parts.join(", ")
    }

    /// Corrects the token bucket once the real usage is known (`delta` = real - estimate).
    pub fn correct(&self, delta: i64) {
        if let Some(b) = &self.tokens {
            let mut b = b.lock().expect("bucket lock");
            b.level = (b.level - delta as f64).min(b.capacity);
        }
    }
}

fn estimate_tokens(request: &ChatRequest) -> u64 {
    let chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
    chars.div_ceil(4) as u64 + request.max_tokens.unwrap_or(0) as u64
}

/// Template tokens a chat format adds around one message (roles, separators), at most.
const PER_MESSAGE_OVERHEAD: u64 = 16;

/// The most tokens `request` can use: every byte of it a token (no tokenizer does
/// worse), its reply at `max_tokens` (or as long again as the prompt when unset), and
/// each message's template overhead (a tool's schema counted as four messages').
fn ceiling(request: &ChatRequest) -> u64 {
    let bytes: usize = request
        .messages
        .iter()
        .map(|m| m.content.len())
        .sum::<usize>()
        + request
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.argument.len())
            .sum::<usize>();
    let framed = request.messages.len() + 4 * request.tools.len() + 1;
    let prompt = bytes as u64 + PER_MESSAGE_OVERHEAD * framed as u64;
    let reply = request.max_tokens.map_or(prompt, u64::from);
    prompt.saturating_add(reply)
}

pub struct RateLimitLayer {
    inner: Arc<dyn ChatModel>,
    limiter: Arc<RateLimiter>,
}

impl RateLimitLayer {
    pub fn new(inner: Arc<dyn ChatModel>, limiter: Arc<RateLimiter>) -> Self {
        RateLimitLayer { inner, limiter }
    }
}

#[async_trait]
impl ChatModel for RateLimitLayer {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let estimate = estimate_tokens(request);
        self.limiter.acquire(estimate).await;
        let result = self.inner.complete(request).await;
        if let Ok(r) = &result {
            let reported = r.usage.input_tokens.saturating_add(r.usage.output_tokens);
            let real = reported.min(ceiling(request));
            self.limiter.correct(real as i64 - estimate as i64);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_are_spaced_evenly_after_the_burst() {
        // 600/min = 10/s: capacity 10, then one every 100 ms.
        let limiter = RateLimiter::new(RateLimit {
            requests_per_minute: Some(600.0),
            tokens_per_minute: None,
        })
        .unwrap();
        let start = Instant::now();
        let mut times = Vec::new();
        for _ in 0..15 {
            limiter.acquire(0).await;
            times.push(start.elapsed());
        }
        assert!(
            times[..10].iter().all(|t| *t < Duration::from_millis(1)),
            "{times:?}"
        );
        for (i, t) in times[10..].iter().enumerate() {
            let expect = Duration::from_millis(100 * (i as u64 + 1));
            assert!(t.abs_diff(expect) < Duration::from_millis(5), "{i}: {t:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn token_limit_waits_for_large_requests_and_corrections_apply() {
        // 6000 tokens/min = 100/s.
        let limiter = RateLimiter::new(RateLimit {
            requests_per_minute: None,
            tokens_per_minute: Some(6000.0),
        })
        .unwrap();
        let start = Instant::now();
        limiter.acquire(100).await; // the full bucket
        limiter.acquire(50).await; // 0.5 s of debt
        assert!(start.elapsed().abs_diff(Duration::from_millis(500)) < Duration::from_millis(5));
        limiter.correct(100); // the last call used 100 more than estimated: 1 s more debt
        let t = Instant::now();
        limiter.acquire(0).await;
        assert!(
            t.elapsed().abs_diff(Duration::from_secs(1)) < Duration::from_millis(5),
            "{:?}",
            t.elapsed()
        );
        assert!(RateLimiter::new(RateLimit {
            requests_per_minute: Some(0.0),
            tokens_per_minute: None
        })
        .is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_claiming_more_tokens_than_its_request_holds_is_believed_up_to_that() {
        let limiter = RateLimiter::new(RateLimit {
            requests_per_minute: None,
            tokens_per_minute: Some(6000.0),
        })
        .unwrap();
        struct Boastful;
        #[async_trait]
        impl ChatModel for Boastful {
            fn name(&self) -> &str {
                "boastful"
            }
            async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
                let usage = crate::Usage {
                    input_tokens: 100_000_000,
                    ..crate::Usage::default()
                };
                Ok(ChatResponse::new("ok", usage))
            }
        }
        let layer = RateLimitLayer::new(Arc::new(Boastful), limiter);
        let request = ChatRequest::new(vec![crate::Message::user("x".repeat(40))]).max_tokens(10);
        let limit = ceiling(&request);
        assert_eq!(limit, 40 + 16 * 2 + 10);
        let start = Instant::now();
        layer.complete(&request).await.unwrap();
        layer.complete(&request).await.unwrap();
        // Believed: 10^8 tokens at 100/s, about 11.5 days. At most the ceiling: < 1 s.
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }
}
