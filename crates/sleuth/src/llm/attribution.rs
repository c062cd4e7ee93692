//! Per-question attribution of work done below the `ChatModel` interface.
//!
//! Retries happen inside middleware and are not a method's model calls, yet each run
//! record reports how many its question needed. The evaluation runner scopes every
//! question in a task-local counter; middleware calls [`note_retry`], which is a no-op
//! outside such a scope.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

tokio::task_local! {
    static COUNTERS: Arc<QuestionCounters>;
}

/// Counters for one question's episode.
#[derive(Debug, Default)]
pub struct QuestionCounters {
    retries: AtomicU32,
}

impl QuestionCounters {
    pub fn retries(&self) -> u32 {
        self.retries.load(Ordering::Relaxed)
    }
}

/// Runs `fut` with fresh counters, returning its output and the counters.
pub async fn with_counters<F: std::future::Future>(fut: F) -> (F::Output, Arc<QuestionCounters>) {
    let counters = Arc::new(QuestionCounters::default());
    let out = COUNTERS.scope(counters.clone(), fut).await;
    (out, counters)
}

/// Records one retry against the current question, if any.
pub fn note_retry() {
    let _ = COUNTERS.try_with(|c| c.retries.fetch_add(1, Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn retries_are_attributed_to_the_scoped_question_only() {
        note_retry(); // outside any scope: ignored
        let ((), a) = with_counters(async {
            note_retry();
            note_retry();
        })
        .await;
        let ((), b) = with_counters(async {}).await;
        assert_eq!((a.retries(), b.retries()), (2, 0));
    }
}
