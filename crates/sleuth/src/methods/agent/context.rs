//! What a request carries: the whole conversation, or under `compact=K` (ours) the
//! question with the merged memory and the last K exchanges.
//!
//! The paper's loop sends the full history every turn (SLEUTH paper §3.1: the complete
//! state is "output in full on every turn", alongside every observation), so input
//! tokens per episode grow about quadratically in turns. App. D.4 reads the
//! working memory as "a sufficient statistic for the evidence gathered"; compaction
//! takes it at its word. Once a fact is confirmed, old raw observations leave: the
//! system text, the question followed by the merged memory, and the last K exchanges
//! (response, then the observations it got). The full conversation stays the loop's own
//! record; only what is sent shrinks, so tokens grow about linearly. With
//! `compact_slack=S` exchanges pile up to K + S before the next compaction and the
//! memory note stays as written at the last one, so the prefix is stable for S turns (a
//! provider's prompt cache can read it); S = 0 compacts every turn. An exchange is a
//! response and everything that answers it: one user message under the text
//! protocol, the tool results (and a user message) under the native channel, which are
//! kept or dropped together so no tool result loses its call.

use super::template::render;
use crate::llm::{Message, Role};
use crate::memory::{MemorySchema, WorkingMemory};
use crate::methods::settings::AgentSettings;
use crate::methods::AgentError;
use crate::methods::PromptSet;
use minijinja::context;

/// The conversation of an episode and where its compaction stands.
pub(super) struct Context {
    /// Everything said: system text, question, then response / feedback pairs.
    messages: Vec<Message>,
    /// `compact=K`: the exchanges kept; `None` sends the whole conversation.
    compact: Option<u32>,
    /// `compact_slack=S`.
    slack: u32,
    /// The first message still sent after the question (0: not compacted yet).
    start: usize,
    /// The memory note appended to the question at the last compaction.
    note: String,
}

impl Context {
    pub fn new(system: String, question: String, settings: &AgentSettings) -> Context {
        Context {
            messages: vec![Message::system(system), Message::user(question)],
            compact: settings.compact,
            slack: settings.compact_slack,
            start: 0,
            note: String::new(),
        }
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// How many messages the conversation holds.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Drops every message after the first `len` (the rejected exchanges of a turn,
    /// once its reply is accepted). A compaction that started inside them starts again.
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len.max(2));
        if self.start >= self.messages.len() {
            self.start = 0;
        }
    }

    /// Appends `text` to the message the next response answers: the last user message,
    /// or after native tool results a user message of its own.
    pub fn append_to_last_user(&mut self, text: &str) {
        match self.messages.last_mut() {
            Some(m) if m.role == Role::User => {
                m.content.push_str("\n\n");
                m.content.push_str(text);
            }
            _ => self.messages.push(Message::user(text)),
        }
    }

    /// Where each exchange after the question starts (its response's index).
    fn exchanges(&self) -> Vec<usize> {
        (2..self.messages.len())
            .filter(|&i| self.messages[i].role == Role::Assistant)
            .collect()
    }

    /// The messages the next request carries, given the merged memory (rendered in
    /// `schema` for the note).
    pub fn request(
        &mut self,
        state: &WorkingMemory,
        schema: &MemorySchema,
        prompts: &PromptSet,
    ) -> Result<Vec<Message>, AgentError> {
        let Some(k) = self.compact else {
            return Ok(self.messages.to_vec());
        };
        let keep = k as usize;
        let exchanges = self.exchanges();
        if state.facts.is_empty() || exchanges.len() <= keep {
            return Ok(self.messages.to_vec());
        }
        let limit = keep + self.slack as usize;
        let since_start = exchanges.iter().filter(|&&i| i >= self.start).count();
        if self.start == 0 || since_start > limit {
            let dropped = exchanges.len() - keep;
            self.start = exchanges[dropped];
            let memory = state.render(schema);
            self.note = render(
                prompts,
                "compacted.txt",
                context! { memory => memory.trim_end(), dropped },
            )?;
        }
        let messages = &self.messages;
        let mut question = messages[1].clone();
        question.content.push_str(&self.note);
        let mut out = vec![messages[0].clone(), question];
        out.extend_from_slice(&messages[self.start..]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use crate::memory::parse_memory;

    /// Compaction counts exchanges, not messages: a native exchange (the calls, their
    /// results, a note) is kept or dropped whole, so no tool result loses its call.
    #[test]
    fn compaction_keeps_native_exchanges_whole() {
        let settings = AgentSettings {
            compact: Some(1),
            ..AgentSettings::default()
        };
        let mut context = Context::new("system".into(), "question".into(), &settings);
        for n in 1..=3 {
            let id = format!("c{n}");
            let call = ToolCall::new("search", format!("q{n}")).with_id(id.clone());
            context.push(Message::assistant_calls(format!("turn {n}"), vec![call]));
            context.push(Message::tool_result(id, format!("result {n}")));
            context.push(Message::user(format!("note {n}")));
        }
        let schema = MemorySchema::full();
        let state = parse_memory("Confirmed Facts:\n- [F1] a fact (source: T)", &schema);
        let sent = context
            .request(&state, &schema, &PromptSet::default())
            .unwrap();
        let roles: Vec<Role> = sent.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(roles, [System, User, Assistant, Tool, User]);
        assert_eq!(sent[2].content, "turn 3");
        assert_eq!(sent[3].tool_call_id.as_deref(), Some("c3"));
        assert!(sent[1].content.contains("a fact"), "{}", sent[1].content);

        // After tool results with no note, a commit message is a user message of its own.
        context.push(Message::assistant_calls(
            "turn 4",
            vec![ToolCall::new("search", "x").with_id("c4")],
        ));
        context.push(Message::tool_result("c4", "result 4"));
        context.append_to_last_user("Stop searching now.");
        let last = context.messages.last().unwrap();
        assert_eq!(
            (last.role, last.content.as_str()),
            (User, "Stop searching now.")
        );
    }
}
