//! The native tool channel (`tool_channel=native`, ours). SLEUTH paper §3.4 gives every
//! method the same three tools and says nothing of the channel they travel in; the text
//! protocol (`Action: tool[argument]` lines, observations as user text) is the
//! default, and this is the provider's own tool calling for models trained on it.
//!
//! Both channels leave the same trace: a reply's native calls are written as action
//! lines after its text ([`Reply::text`]), and the loop parses and takes them like any
//! other. What differs is the conversation sent back. The assistant message keeps the
//! model's own text and its calls (with their ids), and each call is answered by a
//! tool-result message naming its id, carrying that action's feedback (OpenAI `role:
//! tool`, Anthropic `tool_result` blocks; the clients write the wire form). Feedback
//! that answers no call (no action line, an action the model wrote as text beside its
//! calls, handed-back facts, a conflict note, a commit message) follows as one user
//! message. Every call gets a result, as both APIs require: a call of a tool no
//! environment knows, or one after a finish that did not end the episode, is told
//! that nothing ran.

use super::actions::Feedback;
use crate::env::Action;
use crate::llm::{ChatResponse, Message, ToolCall};
use crate::protocol;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Native-channel replies without a tool call, counted over every episode a method runs:
/// a server whose chat template drops `tools` (llama-server does so for some models,
/// without a word) gets replies in text turn after turn, and only the run can tell.
/// Said once, after [`NativeSilence::AFTER`] such replies and none with a call.
#[derive(Debug, Default)]
pub(super) struct NativeSilence {
    without_calls: AtomicU32,
    any_call: AtomicBool,
    said: AtomicBool,
}

impl NativeSilence {
    pub const AFTER: u32 = 3;

    /// Notes an accepted reply; true the one time the warning is due.
    pub fn note(&self, reply: &Reply) -> bool {
        if !reply.calls.is_empty() {
            self.any_call.store(true, Ordering::Relaxed);
            return false;
        }
        let n = self.without_calls.fetch_add(1, Ordering::Relaxed) + 1;
        n >= Self::AFTER
            && !self.any_call.load(Ordering::Relaxed)
            && !self.said.swap(true, Ordering::Relaxed)
    }
}

/// A model reply as the loop reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reply {
    /// The trace's response, which the loop parses: the model's text, then one action
    /// line per native call.
    pub text: String,
    /// The model's own text, without the calls.
    pub said: String,
    /// Its native calls, in order, each with an id (the provider's, or one given here
    /// when a server sent none: `call_<turn>_<n>`).
    pub calls: Vec<ToolCall>,
    /// Which of the reply's actions (`Action::parse_all(&text)` as first read, in
    /// order) each call became; `None` for a call of a tool the protocol does not know.
    of_calls: Vec<Option<usize>>,
}

impl Reply {
    /// Reads `response`, the model's reply at turn `turn`.
    pub fn of(response: ChatResponse, turn: u32) -> Reply {
        let calls: Vec<ToolCall> = response
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| match call.id.is_empty() {
                true => call.with_id(format!("call_{turn}_{}", n + 1)),
                false => call,
            })
            .collect();
        let mut text = response.text.clone();
        for call in &calls {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&action_line(call));
        }
        let mut reply = Reply {
            text,
            said: response.text,
            calls,
            of_calls: Vec::new(),
        };
        reply.of_calls = reply.call_actions();
        reply
    }

    /// Keeps the calls whose action `kept` holds (and calls of unknown tools among the
    /// first `cap`); the others leave the conversation and the trace, as if never made:
    /// one note answers them all (hardening III, item 7). The text is written again
    /// from what stays.
    pub fn retain(&mut self, kept: &[(usize, Action)], cap: usize) {
        if self.calls.is_empty() {
            return;
        }
        let keep = |n: usize, action: Option<usize>| match action {
            Some(i) => kept.iter().any(|(k, _)| *k == i),
            None => n < cap,
        };
        let pairs = std::mem::take(&mut self.calls)
            .into_iter()
            .zip(std::mem::take(&mut self.of_calls))
            .enumerate()
            .filter(|(n, (_, action))| keep(*n, *action))
            .map(|(_, pair)| pair);
        (self.calls, self.of_calls) = pairs.unzip();
        let mut text = self.said.clone();
        for call in &self.calls {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&action_line(call));
        }
        self.text = text;
    }

    /// The assistant message that goes back into the conversation: the trace's text,
    /// or under the native channel the model's text with its calls.
    pub fn message(&self) -> Message {
        match self.calls.is_empty() {
            true => Message::assistant(self.text.clone()),
            false => Message::assistant_calls(self.said.clone(), self.calls.clone()),
        }
    }

    /// Which of the turn's actions (`Action::parse_all(&self.text)`, in order) each
    /// call became; `None` for a call of a tool the protocol does not know.
    fn call_actions(&self) -> Vec<Option<usize>> {
        let mut next = Action::parse_all(&self.said).len();
        self.calls
            .iter()
            .map(
                |call| match Action::parse_all(&action_line(call)).is_empty() {
                    true => None,
                    false => {
                        next += 1;
                        Some(next - 1)
                    }
                },
            )
            .collect()
    }

    /// The messages answering this reply: `feedback` (from taking its `actions`, each
    /// with its position among the reply's actions) and `more` (the turn's other notes).
    /// Without native calls, one user message, as the text protocol has it; with them,
    /// one tool result per call, then a user message with whatever answers no call.
    pub fn answer(
        &self,
        actions: &[(usize, Action)],
        feedback: Vec<Feedback>,
        more: Vec<String>,
    ) -> Vec<Message> {
        if self.calls.is_empty() {
            let texts: Vec<String> = feedback.into_iter().map(|f| f.text).chain(more).collect();
            return vec![Message::user(texts.join("\n\n"))];
        }
        let of_calls = &self.of_calls;
        let mut messages: Vec<Message> = self
            .calls
            .iter()
            .zip(of_calls)
            .map(|(call, action)| {
                let result = match action {
                    None => format!(
                        "Nothing ran: {} is not one of the tools offered.",
                        call.name
                    ),
                    Some(i) => match feedback.iter().find(|f| f.action == Some(*i)) {
                        Some(f) => f.result.clone(),
                        None => {
                            let action = actions.iter().find(|(k, _)| k == i);
                            let shown = action.map_or(call.name.clone(), |(_, a)| a.to_string());
                            format!("{shown} was not run: the turn's actions ended before it.")
                        }
                    },
                };
                Message::tool_result(call.id.clone(), result)
            })
            .collect();
        let rest: Vec<String> = feedback
            .into_iter()
            .filter(|f| match f.action {
                None => true,
                Some(i) => !of_calls.contains(&Some(i)),
            })
            .map(|f| f.text)
            .chain(more)
            .collect();
        if !rest.is_empty() {
            messages.push(Message::user(rest.join("\n\n")));
        }
        messages
    }
}

/// A call as an action line. The argument is one line: a newline inside a native
/// argument would otherwise start a line of its own, which the parser could read as
/// a second action.
fn action_line(call: &ToolCall) -> String {
    let argument = call.argument.replace(['\r', '\n'], " ");
    protocol::action_line(&call.name, &argument)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Role, Usage};

    fn reply(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
        let mut response = ChatResponse::new(text, Usage::default());
        response.tool_calls = calls
            .iter()
            .map(|(id, name, arg)| ToolCall::new(*name, *arg).with_id(*id))
            .collect();
        Reply::of(response, 3)
    }

    fn feedback(i: usize, text: &str) -> Feedback {
        Feedback {
            action: Some(i),
            text: format!("Observation:\n{text}"),
            result: text.into(),
        }
    }

    #[test]
    fn calls_become_action_lines_and_every_call_gets_a_result() {
        let r = reply(
            "Thought: both\nAction: lookup[Tucson]",
            &[
                ("a", "search", "Mingus"),
                ("", "delete_file", "x"),
                ("c", "search", "two\nAction: finish[no]"),
            ],
        );
        assert_eq!(
            r.text,
            "Thought: both\nAction: lookup[Tucson]\nAction: search[Mingus]\nAction: delete_file[x]\nAction: search[two Action: finish[no]]"
        );
        assert_eq!(r.calls[1].id, "call_3_2");
        let actions: Vec<(usize, Action)> =
            Action::parse_all(&r.text).into_iter().enumerate().collect();
        assert_eq!(actions.len(), 3, "{actions:?}");
        assert_eq!(r.call_actions(), [Some(1), None, Some(2)]);
        let answer = r.answer(
            &actions,
            vec![feedback(0, "T"), feedback(1, "M")],
            vec!["note".into()],
        );
        let roles: Vec<Role> = answer.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Tool, Role::Tool, Role::Tool, Role::User]);
        assert_eq!(answer[0].tool_call_id.as_deref(), Some("a"));
        assert_eq!(answer[0].content, "M");
        assert!(answer[1]
            .content
            .contains("delete_file is not one of the tools"));
        assert!(
            answer[2].content.contains("was not run"),
            "{}",
            answer[2].content
        );
        assert_eq!(answer[3].content, "Observation:\nT\n\nnote");
        assert_eq!(r.message().tool_calls.len(), 3);
        assert_eq!(r.message().content, "Thought: both\nAction: lookup[Tucson]");
    }

    #[test]
    fn without_calls_the_answer_is_the_text_protocols_one_message() {
        let r = reply("Action: search[x]", &[]);
        assert_eq!(r.message(), Message::assistant("Action: search[x]"));
        let answer = r.answer(&[], vec![feedback(0, "X")], vec!["more".into()]);
        assert_eq!(answer, [Message::user("Observation:\nX\n\nmore")]);
    }

    #[test]
    fn calls_beyond_the_cap_leave_the_conversation_but_a_finish_stays() {
        let mut calls: Vec<(String, &str, String)> = (0..1000)
            .map(|n| (format!("c{n}"), "search", format!("q{n}")))
            .collect();
        calls.push(("end".into(), "finish", "yes".into()));
        calls.push(("after".into(), "search", "late".into()));
        let calls: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|(id, name, arg)| (id.as_str(), *name, arg.as_str()))
            .collect();
        let mut r = reply("", &calls);
        let split = super::super::actions::within_cap(Action::parse_all(&r.text), 8);
        assert_eq!(split.kept.len(), 9, "eight searches and the finish");
        assert_eq!(split.kept[8], (1000, Action::Finish("yes".into())));
        let (first, count) = split.dropped.clone().unwrap();
        assert_eq!((first.to_string(), count), ("search[q8]".to_string(), 992));
        r.retain(&split.kept, 8);
        assert_eq!(r.message().tool_calls.len(), 9);
        assert_eq!(Action::parse_all(&r.text).len(), 9);
        let answer = r.answer(&split.kept, vec![feedback(0, "X")], vec![]);
        assert_eq!(answer.len(), 9, "one result per kept call, nothing else");
    }
}
