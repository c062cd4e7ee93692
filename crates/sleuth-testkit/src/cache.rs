//! Prompt-cache emulation (ours): the server remembers the prompts it served and
//! reports cached tokens the way each provider does, in the server's token unit
//! (whitespace words), so a client's cache accounting and pricing can be tested end to
//! end. Opt-in: [`crate::MockServer::spawn_with_cache`].
//!
//! - **OpenAI** (automatic prefix caching): a prompt reads the longest prefix it shares
//!   with any prompt served before it, counted only from `openai_min` tokens and in
//!   steps of `openai_step` past it (OpenAI: 1,024 and 128); reported as
//!   `usage.prompt_tokens_details.cached_tokens`, with `prompt_tokens` the whole prompt.
//! - **Anthropic** (explicit caching): only prefixes that end at a block marked
//!   `cache_control` (a breakpoint) and are at least `anthropic_min` tokens long are
//!   written. A request reads the longest written prefix it starts with that ends at
//!   one of its breakpoints or at a block boundary up to `anthropic_lookback` blocks
//!   before one (`cache_read_input_tokens`); it writes from there to its last
//!   breakpoint (`cache_creation_input_tokens`); `input_tokens` is the rest, after its
//!   last breakpoint. A request without breakpoints reads and writes nothing.
//!
//! Nothing expires (a provider keeps entries for minutes; a test runs for seconds), and
//! each protocol has its own cache, keyed by model.

use crate::prompt::{common_prefix, Prompt};
use crate::Protocol;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The emulation's thresholds, in the server's token unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCache {
    /// OpenAI: the shortest cached prefix (OpenAI: 1,024 tokens).
    pub openai_min: usize,
    /// OpenAI: cached counts grow in steps of this many tokens past the minimum (128).
    pub openai_step: usize,
    /// Anthropic: the shortest prefix a breakpoint writes (1,024 for Sonnet and Opus;
    /// more for some Haiku models).
    pub anthropic_min: usize,
    /// Anthropic: how many blocks before a breakpoint a read may end (about 20).
    pub anthropic_lookback: usize,
}

impl PromptCache {
    /// The providers' published thresholds.
    pub fn providers() -> PromptCache {
        PromptCache {
            openai_min: 1024,
            openai_step: 128,
            anthropic_min: 1024,
            anthropic_lookback: 20,
        }
    }
}

/// Cached prompt tokens of one request: read from the cache, and written to it
/// (Anthropic only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cached {
    pub read: u64,
    pub write: u64,
}

/// What the server has cached so far.
#[derive(Debug)]
pub(crate) struct CacheState {
    config: PromptCache,
    /// OpenAI, per model: the prompts served (of at least the minimum), none a prefix
    /// of another (such a prompt can never give a longer match than the one holding it).
    openai: HashMap<String, Vec<Vec<u64>>>,
    /// Anthropic: the hashes of the written prefixes, seeded with their model.
    anthropic: HashSet<u64>,
}

impl CacheState {
    pub fn new(config: PromptCache) -> CacheState {
        assert!(config.openai_step > 0, "openai_step must be positive");
        CacheState {
            config,
            openai: HashMap::new(),
            anthropic: HashSet::new(),
        }
    }

    /// Accounts for one served request in `protocol` and remembers its prompt.
    pub fn serve(&mut self, protocol: Protocol, body: &Value) -> Cached {
        let prompt = Prompt::of(body);
        let model = body.get("model").and_then(Value::as_str).unwrap_or("");
        match protocol {
            Protocol::OpenAi => self.openai(model, prompt),
            Protocol::Anthropic => self.anthropic(model, &prompt),
        }
    }

    fn openai(&mut self, model: &str, prompt: Prompt) -> Cached {
        let (min, step) = (self.config.openai_min, self.config.openai_step);
        let served = self.openai.entry(model.to_string()).or_default();
        let shared = served
            .iter()
            .map(|p| common_prefix(p, &prompt.words))
            .max()
            .unwrap_or(0);
        let read = if shared >= min.max(1) {
            min + (shared - min) / step * step
        } else {
            0
        };
        if prompt.words.len() >= min && shared < prompt.words.len() {
            served.retain(|p| common_prefix(p, &prompt.words) < p.len());
            served.push(prompt.words);
        }
        Cached {
            read: read as u64,
            write: 0,
        }
    }

    fn anthropic(&mut self, model: &str, prompt: &Prompt) -> Cached {
        let min = self.config.anthropic_min.max(1);
        let hashes = prompt.block_prefix_hashes(model);
        // Breakpoints long enough to be cached, as block indices.
        let marks: Vec<usize> = (0..prompt.blocks.len())
            .filter(|&i| prompt.blocks[i].breakpoint && prompt.blocks[i].words >= min)
            .collect();
        let Some(&last) = marks.last() else {
            return Cached::default();
        };
        let lookback = self.config.anthropic_lookback;
        let read = (0..=last)
            .filter(|&i| self.anthropic.contains(&hashes[i]))
            .filter(|&i| marks.iter().any(|&m| m >= i && m - i <= lookback))
            .map(|i| prompt.blocks[i].words)
            .max()
            .unwrap_or(0);
        let end = prompt.blocks[last].words;
        for &m in &marks {
            self.anthropic.insert(hashes[m]);
        }
        Cached {
            read: read as u64,
            write: (end - read) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn small() -> PromptCache {
        PromptCache {
            openai_min: 4,
            openai_step: 2,
            anthropic_min: 3,
            anthropic_lookback: 20,
        }
    }

    fn words(n: usize, tag: &str) -> String {
        (0..n).map(|i| format!("{tag}{i} ")).collect()
    }

    fn chat(model: &str, turns: &[&str]) -> Value {
        let messages: Vec<Value> = turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                json!({"role": role, "content": t})
            })
            .collect();
        json!({"model": model, "messages": messages})
    }

    #[test]
    fn openai_reads_the_longest_shared_prefix_from_the_minimum_in_steps() {
        let mut c = CacheState::new(small());
        let (a, b) = (words(7, "a"), words(3, "b"));
        // First sight: nothing cached.
        assert_eq!(c.serve(Protocol::OpenAi, &chat("m", &[&a])).read, 0);
        // 7 shared words: 4 + (7 - 4) / 2 * 2 = 6.
        assert_eq!(c.serve(Protocol::OpenAi, &chat("m", &[&a, &b])).read, 6);
        // Now 10 are served: the longer prompt replaced the shorter one it extends.
        assert_eq!(c.openai["m"].len(), 1);
        assert_eq!(
            c.serve(Protocol::OpenAi, &chat("m", &[&a, &b, "c"])).read,
            10
        );
        // Another model shares nothing; a prompt diverging after 3 words is below the
        // minimum; one shorter than the minimum is not remembered.
        assert_eq!(c.serve(Protocol::OpenAi, &chat("other", &[&a])).read, 0);
        let early = format!("{}x y z w", words(3, "a"));
        assert_eq!(c.serve(Protocol::OpenAi, &chat("m", &[&early])).read, 0);
        c.serve(Protocol::OpenAi, &chat("short", &["one two"]));
        assert!(!c.openai.contains_key("short") || c.openai["short"].is_empty());
        // The same prompt again is read whole, rounded down to a step.
        assert_eq!(c.serve(Protocol::OpenAi, &chat("m", &[&a])).read, 6);
    }

    fn marked(text: &str) -> Value {
        json!([{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}])
    }

    /// An Anthropic body: system (marked) and alternating turns, the user turns at
    /// `marks` (indices into `turns`) marked.
    fn messages(system: &str, turns: &[&str], marks: &[usize]) -> Value {
        let messages: Vec<Value> = turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                let content = if marks.contains(&i) {
                    marked(t)
                } else {
                    json!(t)
                };
                json!({"role": role, "content": content})
            })
            .collect();
        json!({"model": "claude", "system": marked(system), "messages": messages})
    }

    #[test]
    fn anthropic_writes_and_reads_only_at_breakpoints() {
        let mut c = CacheState::new(small());
        let sys = words(4, "s");
        let (u1, a1, u2, a2, u3) = (
            words(5, "u"),
            words(2, "a"),
            words(3, "v"),
            words(1, "b"),
            words(2, "w"),
        );
        // Turn 1: system (4) and u1 (5) marked: writes 9, reads nothing.
        let t1 = messages(&sys, &[&u1], &[0]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &t1),
            Cached { read: 0, write: 9 }
        );
        // Turn 2: marks on u1 (9, written) and u2 (14): reads 9, writes 5.
        let t2 = messages(&sys, &[&u1, &a1, &u2], &[0, 2]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &t2),
            Cached { read: 9, write: 5 }
        );
        // Turn 3, marks on u2 and u3: reads the 14 turn 2 wrote, writes 3.
        let t3 = messages(&sys, &[&u1, &a1, &u2, &a2, &u3], &[2, 4]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &t3),
            Cached { read: 14, write: 3 }
        );
        // Sent again whole: everything up to the last breakpoint is read.
        assert_eq!(
            c.serve(Protocol::Anthropic, &t3),
            Cached { read: 17, write: 0 }
        );
        // Without any breakpoint nothing is read or written, though the prefix is known.
        let plain = json!({"model": "claude", "system": sys, "messages": [{"role": "user", "content": u1}]});
        assert_eq!(c.serve(Protocol::Anthropic, &plain), Cached::default());
        // Another model reads nothing of claude's.
        let mut other = t2.clone();
        other["model"] = json!("claude-2");
        assert_eq!(
            c.serve(Protocol::Anthropic, &other),
            Cached { read: 0, write: 14 }
        );
    }

    #[test]
    fn anthropic_minimum_and_lookback() {
        let mut c = CacheState::new(PromptCache {
            anthropic_min: 6,
            anthropic_lookback: 2,
            ..small()
        });
        let sys = words(4, "s");
        // The system prompt alone (4) is below the minimum: only the 9 is written.
        let t1 = messages(&sys, &[&words(5, "u")], &[0]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &t1),
            Cached { read: 0, write: 9 }
        );
        // A breakpoint 4 blocks after the written prefix (and none at it) does not
        // find it with a lookback of 2...
        let far = messages(&sys, &[&words(5, "u"), "x", "y", "z", "q"], &[4]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &far),
            Cached { read: 0, write: 13 }
        );
        // ...one 2 blocks after it does.
        let near = messages(&sys, &[&words(5, "u"), "x", "y"], &[2]);
        assert_eq!(
            c.serve(Protocol::Anthropic, &near),
            Cached { read: 9, write: 2 }
        );
    }
}
