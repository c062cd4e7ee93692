//! The reasoning formats of Self-Ask and IRCoT, parsed out of each response so the trace
//! shows the sub-questions and reasoning steps a run went through (and whether the
//! model kept to the format), not just the raw text.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// A Self-Ask step: a sub-question and, once found, its intermediate answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubQuestion {
    pub number: u32,
    pub question: String,
    pub answer: Option<String>,
}

/// Structured reasoning parsed from one response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "format")]
pub enum ReasoningSteps {
    SelfAsk {
        sub_questions: Vec<SubQuestion>,
    },
    Ircot {
        reasoning: Vec<String>,
        retrievals: usize,
    },
}

/// `Sub-question N: ...` / `Intermediate answer N: ...` lines, paired by number.
pub fn parse_self_ask(text: &str) -> Vec<SubQuestion> {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let re = LINE.get_or_init(|| {
        Regex::new(
            r"(?im)^[\s*_>\-]*(sub-?question|intermediate answer)\s*(\d+)?\s*[*_]*\s*:\s*(.+?)\s*$",
        )
        .expect("valid self-ask regex")
    });
    let mut out: Vec<SubQuestion> = Vec::new();
    for c in re.captures_iter(text) {
        let is_question = c[1].to_ascii_lowercase().starts_with("sub");
        let number = c.get(2).and_then(|m| m.as_str().parse().ok());
        let body = c[3].to_string();
        if is_question {
            let number = number.unwrap_or(out.len() as u32 + 1);
            out.push(SubQuestion {
                number,
                question: body,
                answer: None,
            });
        } else {
            let slot = match number {
                Some(n) => out.iter_mut().rev().find(|s| s.number == n),
                None => out.last_mut(),
            };
            if let Some(s) = slot {
                s.answer = Some(body);
            }
        }
    }
    out
}

/// The `[REASONING]` blocks of an IRCoT response and the number of `[RETRIEVAL]` markers.
pub fn parse_ircot(text: &str) -> (Vec<String>, usize) {
    let mut reasoning = Vec::new();
    let mut retrievals = 0;
    let mut current: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = strip_marker(trimmed, "[REASONING]") {
            if let Some(r) = current.take() {
                reasoning.push(r.trim().to_string());
            }
            current = Some(rest.to_string());
        } else if strip_marker(trimmed, "[RETRIEVAL]").is_some()
            || trimmed.to_ascii_lowercase().starts_with("action")
        {
            if let Some(r) = current.take() {
                reasoning.push(r.trim().to_string());
            }
            retrievals += usize::from(trimmed.to_ascii_uppercase().starts_with("[RETRIEVAL]"));
        } else if let Some(r) = current.as_mut() {
            r.push('\n');
            r.push_str(trimmed);
        }
    }
    if let Some(r) = current {
        reasoning.push(r.trim().to_string());
    }
    (reasoning, retrievals)
}

fn strip_marker<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let head = line.get(..marker.len())?;
    head.eq_ignore_ascii_case(marker)
        .then(|| line[marker.len()..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_ask_pairs_questions_with_answers() {
        let text = "Sub-question 1: Who performed Mingus Plays Piano?\nIntermediate answer 1: Charles Mingus\nSub-question 2: Where was Charles Mingus born?\nAction: search[Charles Mingus born]";
        let steps = parse_self_ask(text);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].answer.as_deref(), Some("Charles Mingus"));
        assert_eq!(steps[1].question, "Where was Charles Mingus born?");
        assert_eq!(steps[1].answer, None);
    }

    #[test]
    fn ircot_splits_reasoning_blocks() {
        let text = "[REASONING] What I know: nothing. Still needed: the performer.\nI will search for the album.\n[RETRIEVAL] Action: search[Mingus Plays Piano]";
        let (reasoning, retrievals) = parse_ircot(text);
        assert_eq!(reasoning.len(), 1);
        assert!(reasoning[0].contains("I will search for the album."));
        assert_eq!(retrievals, 1);
    }
}
