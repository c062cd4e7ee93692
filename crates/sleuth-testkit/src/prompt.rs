//! A request's prompt as the server counts it: whitespace words (the server's token
//! unit) of the system prompt and of every message, whether a content is a string or
//! an array of blocks (`{"type": "text", "text": ...}`, Anthropic's and OpenAI's
//! content parts), with the content blocks' ends and which of them carry Anthropic's
//! `cache_control` mark.

use serde_json::Value;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One content block's end: the word count of the prompt up to and including it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockEnd {
    pub words: usize,
    /// Whether the block is marked `cache_control` (a cache breakpoint).
    pub breakpoint: bool,
}

/// The words of a prompt in order, each hashed together with the place it stands in
/// (system block `i`; message `i`, its role, block `j`), so equal words in different
/// places differ and a string content equals the same text as one block.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prompt {
    pub words: Vec<u64>,
    pub blocks: Vec<BlockEnd>,
}

fn hash_of(v: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The blocks of one content: a string is one block; an array gives its elements'
/// `text` (an element without text, e.g. an image, is an empty block).
fn blocks(content: &Value) -> Vec<(&str, bool)> {
    match content {
        Value::String(s) => vec![(s.as_str(), false)],
        Value::Array(items) => items
            .iter()
            .map(|b| {
                let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                (text, b.get("cache_control").is_some_and(|c| !c.is_null()))
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Prompt {
    /// Reads the prompt of a request body (either protocol).
    pub fn of(body: &Value) -> Prompt {
        let mut p = Prompt::default();
        if let Some(system) = body.get("system") {
            for (j, (text, mark)) in blocks(system).into_iter().enumerate() {
                p.push(("system", j), text, mark);
            }
        }
        for (i, m) in body
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            let content = m.get("content").unwrap_or(&Value::Null);
            for (j, (text, mark)) in blocks(content).into_iter().enumerate() {
                p.push(("message", i, role, j), text, mark);
            }
        }
        p
    }

    fn push(&mut self, place: impl Hash, text: &str, breakpoint: bool) {
        let place = hash_of(place);
        self.words
            .extend(text.split_whitespace().map(|w| hash_of((place, w))));
        self.blocks.push(BlockEnd {
            words: self.words.len(),
            breakpoint,
        });
    }

    /// The prompt's length in the server's token unit.
    pub fn len(&self) -> u64 {
        self.words.len() as u64
    }

    /// Hashes of every prefix that ends at a block, in block order, seeded with `model`
    /// (a provider's cache never serves one model's prefix to another).
    pub fn block_prefix_hashes(&self, model: &str) -> Vec<u64> {
        let mut h = hash_of(model);
        let mut at = 0;
        self.blocks
            .iter()
            .map(|b| {
                for w in &self.words[at..b.words] {
                    h = h.wrapping_mul(0x100_0000_01b3).wrapping_add(*w);
                }
                at = b.words;
                h
            })
            .collect()
    }
}

/// How many leading words `a` and `b` share.
pub(crate) fn common_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_and_blocks_count_the_same_and_marks_are_read() {
        let plain = Prompt::of(&json!({
            "system": "be brief",
            "messages": [{"role": "user", "content": "who wrote Dune?"}]
        }));
        let marked = Prompt::of(&json!({
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "who wrote Dune?"}]}]
        }));
        assert_eq!(plain.len(), 5);
        assert_eq!(plain.words, marked.words, "a string is one text block");
        assert_eq!(
            marked.blocks,
            [
                BlockEnd {
                    words: 2,
                    breakpoint: true
                },
                BlockEnd {
                    words: 5,
                    breakpoint: false
                }
            ]
        );
        // The same words as a different role, or in the next message, differ.
        let assistant =
            Prompt::of(&json!({"messages": [{"role": "assistant", "content": "be brief"}]}));
        let user = Prompt::of(&json!({"messages": [{"role": "user", "content": "be brief"}]}));
        assert_eq!(common_prefix(&assistant.words, &user.words), 0);
        assert_ne!(
            plain.block_prefix_hashes("m1"),
            plain.block_prefix_hashes("m2")
        );
    }
}
