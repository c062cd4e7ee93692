//! What the provider said about each call besides its text, kept per episode so the
//! record shows it: which calls were cut by the token limit or refused (a truncated
//! reply otherwise looks complete, and a refusal looks like an empty turn), and how
//! many went without the prompt-cache marks they were meant to carry.
//!
//! Calls that ended normally are not listed, so the records of ordinary runs do not
//! change.

use super::call_kind::CallKind;
use crate::llm::{ChatResponse, FinishReason};
use serde::{Deserialize, Serialize};

/// One call that did not end normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStop {
    /// 1-based position among the episode's model calls.
    pub call: u32,
    pub kind: CallKind,
    /// `length` (truncated), `refusal`, or `other`.
    pub stop: FinishReason,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallNotes {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stops: Vec<CallStop>,
    /// Calls sent without their prompt-cache marks because the server refused them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_marks_dropped: u32,
    /// Calls whose reported token usage no call has (kept, usage unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage_unknown: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl CallNotes {
    /// Notes call number `call` (1-based) of `kind`.
    pub fn note(&mut self, call: u32, kind: CallKind, response: &ChatResponse) {
        if response.finish_reason.is_notable() {
            self.stops.push(CallStop {
                call,
                kind,
                stop: response.finish_reason,
            });
        }
        if response.cache_marks_dropped {
            self.cache_marks_dropped += 1;
        }
        if response.usage_unknown {
            self.usage_unknown += 1;
        }
    }

    /// Appends a later attempt's notes, its calls numbered after `offset` earlier ones.
    pub fn absorb(&mut self, next: CallNotes, offset: u32) {
        self.stops.extend(next.stops.into_iter().map(|s| CallStop {
            call: s.call + offset,
            ..s
        }));
        self.cache_marks_dropped += next.cache_marks_dropped;
        self.usage_unknown += next.usage_unknown;
    }

    pub fn is_empty(&self) -> bool {
        self.stops.is_empty() && self.cache_marks_dropped == 0 && self.usage_unknown == 0
    }

    fn count(&self, reason: FinishReason) -> u32 {
        self.stops.iter().filter(|s| s.stop == reason).count() as u32
    }

    /// Calls cut by the output-token limit.
    pub fn truncated(&self) -> u32 {
        self.count(FinishReason::Length)
    }

    /// Calls the model refused.
    pub fn refusals(&self) -> u32 {
        self.count(FinishReason::Refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;

    #[test]
    fn only_calls_that_did_not_end_normally_are_listed() {
        let reply = |stop: FinishReason, dropped: bool| ChatResponse {
            finish_reason: stop,
            cache_marks_dropped: dropped,
            ..ChatResponse::new("x", Usage::default())
        };
        let mut notes = CallNotes::default();
        notes.note(1, CallKind::Action, &reply(FinishReason::Stop, false));
        assert!(notes.is_empty());
        notes.note(2, CallKind::Action, &reply(FinishReason::Length, true));
        let mut later = CallNotes::default();
        later.note(1, CallKind::Action, &reply(FinishReason::Refusal, false));
        notes.absorb(later, 2);
        assert_eq!((notes.truncated(), notes.refusals()), (1, 1));
        assert_eq!(notes.stops[1].call, 3);
        assert_eq!(notes.cache_marks_dropped, 1);
    }
}
