//! How a local model runs: threads, context size, grammar use, prefix reuse, seed.

use std::num::NonZeroU32;

/// Options for [`crate::open`]. The defaults suit the bundled model on a laptop:
/// all cores but one, the model's own training context (capped at 8192), grammars honoured,
/// prefix reuse on, no repetition penalty (plain greedy decoding at temperature 0).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// Honour `OutputConstraint::Grammar` / `JsonSchema` on requests (llama.cpp grammar
    /// sampling). Off means constraints are ignored and the text is free.
    pub grammar: bool,
    /// Inference threads; `None` uses all cores but one (see [`Self::effective_threads`]).
    pub threads: Option<NonZeroU32>,
    /// Context window in tokens; `None` uses the model's training context, at most 8192.
    pub ctx_size: Option<NonZeroU32>,
    /// Keep the previous turn's KV cache and process only the tokens a new prompt adds
    /// after the longest common prefix. Off reprocesses every prompt from scratch
    /// (benchmark baseline).
    pub prefix_reuse: bool,
    /// Base seed for sampling at temperature > 0 (a request's `sample_index` is added so
    /// repeated samples differ but every run reproduces).
    pub seed: u32,
    /// Divides the logits of tokens among the last [`REPEAT_WINDOW`] generated ones
    /// (llama.cpp's repetition penalty); 1.0 is off. Deterministic, so greedy decoding
    /// stays reproducible; tiny models need it to escape loops such as "1992 in: 1992 in:".
    pub repeat_penalty: f32,
}

/// Generated tokens the repetition penalty looks back over.
pub const REPEAT_WINDOW: i32 = 64;

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            grammar: true,
            threads: None,
            ctx_size: None,
            prefix_reuse: true,
            seed: 0,
            repeat_penalty: 1.0,
        }
    }
}

impl LocalOptions {
    pub fn grammar(mut self, on: bool) -> Self {
        self.grammar = on;
        self
    }
    pub fn threads(mut self, n: u32) -> Self {
        self.threads = NonZeroU32::new(n);
        self
    }
    pub fn ctx_size(mut self, n: u32) -> Self {
        self.ctx_size = NonZeroU32::new(n);
        self
    }
    pub fn prefix_reuse(mut self, on: bool) -> Self {
        self.prefix_reuse = on;
        self
    }
    pub fn seed(mut self, seed: u32) -> Self {
        self.seed = seed;
        self
    }
    pub fn repeat_penalty(mut self, penalty: f32) -> Self {
        self.repeat_penalty = penalty;
        self
    }

    /// The thread count actually used: by default one core fewer than the machine has.
    /// llama.cpp's worker threads spin at barriers, so a model that takes every core
    /// slows down by orders of magnitude as soon as anything else runs (measured here:
    /// ~2 minutes for a turn with 2 threads on a busy 2-core machine, ~2 s with 1).
    pub fn effective_threads(&self) -> u32 {
        self.threads.map(NonZeroU32::get).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| (n.get() as u32).saturating_sub(1).max(1))
                .unwrap_or(4)
        })
    }
}
