//! Contrastive elimination (SLEUTH paper App. D.5, "Why contrastive elimination
//! fails"): search only for evidence that separates the hypotheses, and commit on the
//! survivor.
//!
//! The strategy is the agent's: the system prompt carries the protocol and the loop
//! adds no trigger, refusal or check of its own.

use super::Strategy;

pub(super) struct Contrastive;

impl Strategy for Contrastive {
    fn prompt(&self) -> Option<&'static str> {
        Some("stop_contrastive.txt")
    }
}
