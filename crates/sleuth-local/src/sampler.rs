//! Choosing each next token: greedy at temperature 0, seeded sampling above it, an
//! optional repetition penalty before either, and an optional grammar.
//!
//! Applying a grammar to the whole vocabulary (49k tokens for SmolLM2) at every step
//! dominates generation time, while the unconstrained choice is usually legal already.
//! So the token is picked without the grammar first and only checked against it; the
//! full grammar pass runs only when that token is illegal. For greedy decoding this
//! picks exactly the token a full pass would (the best legal token is the best token
//! when the best token is legal).

use crate::engine::Generation;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use sleuth_llm::LlmError;

pub(crate) struct TokenSampler {
    grammar: Option<LlamaSampler>,
    /// Greedy, or temperature then a seeded draw.
    pick: LlamaSampler,
    /// Returned if a pass selects nothing (cannot happen with a legal grammar state).
    fallback: LlamaToken,
}

impl TokenSampler {
    pub(crate) fn new(model: &LlamaModel, g: &Generation) -> Result<Self, LlmError> {
        let grammar = g
            .grammar
            .as_deref()
            .map(|gr| grammar(model, gr))
            .transpose()?;
        let mut stages = Vec::new();
        if g.repeat_penalty != 1.0 {
            stages.push(LlamaSampler::penalties(
                model.n_vocab(),
                crate::options::REPEAT_WINDOW,
                g.repeat_penalty,
                0.0,
                0.0,
            ));
        }
        if g.temperature <= 0.0 {
            stages.push(LlamaSampler::greedy());
        } else {
            stages.push(LlamaSampler::temp(g.temperature));
            stages.push(LlamaSampler::dist(g.seed));
        }
        let pick = LlamaSampler::chain_simple(stages);
        Ok(TokenSampler {
            grammar,
            pick,
            fallback: model.vocab().eos(),
        })
    }

    /// The next token from the logits at `idx` of the last decoded batch; it is recorded
    /// in the grammar's state.
    pub(crate) fn sample(&mut self, ctx: &LlamaContext<'_>, idx: i32) -> LlamaToken {
        let Some(grammar) = &mut self.grammar else {
            return self.pick.sample(ctx, idx);
        };
        let mut all = ctx.token_data_array_ith(idx);
        all.apply_sampler(&mut self.pick);
        let mut token = all.selected_token().unwrap_or(self.fallback);
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
        single.apply_sampler(grammar);
        if !single.data[0].logit().is_finite() {
            let mut legal = ctx.token_data_array_ith(idx);
            legal.apply_sampler(grammar);
            legal.apply_sampler(&mut self.pick);
            token = legal.selected_token().unwrap_or(self.fallback);
        }
        grammar.accept(token);
        self.pick.accept(token);
        token
    }
}

/// A grammar sampler for `gbnf` (root rule `root`), or a configuration error.
pub(crate) fn grammar(model: &LlamaModel, gbnf: &str) -> Result<LlamaSampler, LlmError> {
    LlamaSampler::grammar(model, gbnf, "root").map_err(|e| {
        LlmError::Config(format!(
            "the local model cannot use this grammar: llama.cpp rejected it ({e}); its \
             parser printed the reason on stderr"
        ))
    })
}
