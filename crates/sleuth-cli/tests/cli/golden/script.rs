//! The golden server's replies: a pure function of the request, so a transcript is the
//! same on every machine and every run.
//!
//! Each kind of call is recognised by its prompt. A loop episode (T = 5) goes: turn 1
//! opens a question and searches; turn 2 writes a fact but drops the other sections
//! (a turn outside the notation, which enforcement re-prompts); turn 3 drops that fact,
//! adds two, ranks a hypothesis, resolves the question and takes two actions; turn 4
//! resolves everything and looks up once more; from turn 5, or once told to commit
//! (nudge, structural completion, last turn, chain check), it finishes. Even-numbered
//! fixture questions get the gold answer, odd ones a wrong guess until a reflection
//! written by this script is in the prompt. EIR-setting calls get JSON: requirements and
//! conclusions built turn by turn, citations of sentences the prompt shows, a
//! submission on turn 4.

use serde_json::{json, Value};
use sleuth_testkit::{ReceivedRequest, Reply};
use std::path::PathBuf;

/// Marks a reflection this script wrote, so the retried attempt can answer correctly.
const PLAN: &str = "REFLECTION-PLAN";
const WRONG: &str = "a wrong guess";

pub struct Script {
    /// (question text, gold answer), in fixture order.
    questions: Vec<(String, String)>,
}

/// A paragraph line of an observation or an evidence block.
#[derive(Debug, Clone)]
struct Seen {
    title: String,
    id: Option<String>,
    text: String,
}

impl Script {
    pub fn new(files: &[PathBuf]) -> Script {
        let mut questions = Vec::new();
        for file in files {
            for line in std::fs::read_to_string(file).unwrap().lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                questions.push((
                    v["question"].as_str().unwrap().to_string(),
                    v["answer"].as_str().unwrap().to_string(),
                ));
            }
        }
        Script { questions }
    }

    pub fn reply(&self, req: &ReceivedRequest) -> Reply {
        let messages = req.body["messages"].as_array().cloned().unwrap_or_default();
        let texts: Vec<(String, String)> = messages
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap_or("").to_string(),
                    content(&m["content"]),
                )
            })
            .collect();
        let last = texts.last().map(|(_, t)| t.clone()).unwrap_or_default();
        let all = texts
            .iter()
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let answer = self.answer(&all);
        let json_reply = |v: Value| Reply::text(v.to_string());

        if last.contains("Answer the question from the evidence below") {
            let cites = citations(evidence_after(&last, "Evidence:"), 2);
            return json_reply(json!({"answer": answer, "evidence": cites}));
        }
        if last.contains("Decide whether reading more paragraphs could help") {
            let unread = listed(&last, "Unread titles:");
            let read: Vec<&String> = unread.iter().take(1).collect();
            return json_reply(json!({ "read": read }));
        }
        if last.contains("other conclusions build on them") {
            return json_reply(json!({"conclusions": [
                {"op": "revise", "id": "C2", "status": "supported"}
            ]}));
        }
        if last.contains("Refresh the requirements") {
            return json_reply(json!({"requirements": [
                {"op": "revise", "id": "R1", "status": "met"}
            ]}));
        }
        if last.contains("Split the proposal into three parts") {
            return json_reply(json!({
                "facts": "the paragraphs read so far name the first link",
                "justification": "the next link is in an unread paragraph",
                "action": "read the next paragraph"
            }));
        }
        if last.contains("Check one part") {
            let reject =
                last.contains("Judge only the justification part") && last.len().is_multiple_of(3);
            return json_reply(if reject {
                json!({"verdict": "reject", "correction": "the facts do not yet point there"})
            } else {
                json!({"verdict": "accept", "correction": ""})
            });
        }
        if last.contains("and it did not succeed") || last.contains("was judged incorrect") {
            return Reply::text(format!(
                "{PLAN}: read the paragraph that names the second link before answering."
            ));
        }
        if last.contains("You are collecting evidence") {
            return json_reply(eir_action(&last, &answer));
        }
        if last.contains("You are answering a multi-hop question by reading paragraphs")
            || last.contains("found a problem in one part of it")
        {
            return json_reply(direct_action(&last, &all, &answer));
        }
        let text = loop_turn(&texts, &last, &answer);
        match req.body.get("tools").and_then(Value::as_array) {
            Some(tools) if !tools.is_empty() => Reply::Json(native(req, &text, tools)),
            _ => Reply::text(text),
        }
    }

    /// The gold answer for even-numbered fixture questions and for a retry that
    /// carries this script's reflection; a wrong guess otherwise.
    fn answer(&self, all: &str) -> String {
        let Some((i, (_, gold))) = self
            .questions
            .iter()
            .enumerate()
            .find(|(_, (q, _))| all.contains(q.as_str()))
        else {
            return WRONG.into();
        };
        if i % 2 == 0 || all.contains(PLAN) {
            gold.clone()
        } else {
            WRONG.into()
        }
    }
}

/// A message's text: a string, or the text of its blocks.
fn content(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Paragraph lines in `text`: `(1) [Title] text` (pool search), `[Title] text`
/// (lookup), `1. [id X] Title` and `[id X] Title` (corpus), `[Title]` (evidence).
fn paragraphs(text: &str) -> Vec<Seen> {
    let mut out: Vec<Seen> = Vec::new();
    for line in text.lines() {
        let mut l = line.trim();
        if let Some(rest) = l.strip_prefix('(') {
            if let Some((n, after)) = rest.split_once(") ") {
                if n.chars().all(|c| c.is_ascii_digit()) {
                    l = after;
                }
            }
        }
        if let Some((n, after)) = l.split_once(". ") {
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
                l = after;
            }
        }
        let Some(rest) = l.strip_prefix('[') else {
            continue;
        };
        let Some((inside, after)) = rest.split_once(']') else {
            continue;
        };
        let seen = match inside.strip_prefix("id ") {
            Some(id) => Seen {
                title: after.trim().to_string(),
                id: Some(id.to_string()),
                text: String::new(),
            },
            None => Seen {
                title: inside.to_string(),
                id: None,
                text: after.trim().to_string(),
            },
        };
        if !seen.title.is_empty() && !out.iter().any(|s| s.title == seen.title) {
            out.push(seen);
        }
    }
    out
}

/// The `- item` lines following `header`.
fn listed(text: &str, header: &str) -> Vec<String> {
    let Some(after) = text.split(header).nth(1) else {
        return Vec::new();
    };
    after
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.starts_with("- "))
        .map(|l| l[2..].to_string())
        .collect()
}

fn evidence_after<'a>(text: &'a str, header: &str) -> &'a str {
    text.split(header).nth(1).unwrap_or(text)
}

/// The first `n` citations `{title, sentence}` of a block of `[Title]` lines, each
/// followed by `(k) sentence` lines.
fn citations(block: &str, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut title: Option<String> = None;
    for line in block.lines() {
        let l = line.trim();
        if l.starts_with('[') && l.ends_with(']') {
            title = Some(l[1..l.len() - 1].to_string());
        } else if let (Some(t), Some(rest)) = (&title, l.strip_prefix('(')) {
            if let Some((k, _)) = rest.split_once(')') {
                if let Ok(k) = k.parse::<u64>() {
                    out.push(json!({"title": t, "sentence": k}));
                    title = None; // one sentence per paragraph
                }
            }
        }
        if out.len() == n {
            break;
        }
    }
    out
}

/// `Turn N of M` in an EIR-setting prompt.
fn eir_turn(prompt: &str) -> u32 {
    prompt
        .split("Turn ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// The next read (or, in the corpus setting, search) of an EIR-setting action.
fn next_step(prompt: &str, query: &str) -> Value {
    if prompt.contains("Search results so far") {
        let results = listed(prompt, "Search results so far (read one by its id):");
        let id = results.iter().find_map(|r| {
            r.split("[id ")
                .nth(1)
                .and_then(|s| s.split(']').next())
                .map(str::to_string)
        });
        return match id {
            Some(id) => json!({"type": "read", "id": id}),
            None => json!({"type": "search", "query": query}),
        };
    }
    let unread = listed(prompt, "Unread titles:");
    json!({"type": "read", "title": unread.first().cloned().unwrap_or_else(|| "nothing".into())})
}

fn question_words(prompt: &str) -> String {
    let q = prompt
        .lines()
        .find_map(|l| l.strip_prefix("Question: "))
        .unwrap_or("");
    q.split_whitespace().take(6).collect::<Vec<_>>().join(" ")
}

fn eir_action(prompt: &str, answer: &str) -> Value {
    let t = eir_turn(prompt);
    let query = question_words(prompt);
    let cites = citations(evidence_after(prompt, "Result of your previous step:"), 1);
    let (requirements, conclusions, action) = match t {
        1 => (
            json!([{"op": "add", "id": "R1", "text": "the first link of the question", "status": "open"}]),
            json!([]),
            next_step(prompt, &query),
        ),
        2 => (
            json!([]),
            json!([{"op": "add", "id": "C1", "claim": "the first paragraph names the first link", "status": "tentative", "citations": cites}]),
            next_step(prompt, &query),
        ),
        3 => (
            json!([{"op": "revise", "id": "R1", "status": "met"}]),
            json!([{"op": "add", "id": "C2", "claim": "the second link follows", "status": "tentative", "citations": cites, "depends_on": ["C1"]}]),
            next_step(prompt, &query),
        ),
        _ => (
            json!([]),
            json!([{"op": "revise", "id": "C1", "status": "supported"}]),
            json!({"type": "submit", "answer": answer}),
        ),
    };
    json!({
        "reasoning": format!("turn {t}: reading toward the answer"),
        "requirements": requirements,
        "conclusions": conclusions,
        "action": action,
    })
}

fn direct_action(prompt: &str, all: &str, answer: &str) -> Value {
    let t = eir_turn(prompt);
    let action = if t < 3 {
        next_step(prompt, &question_words(prompt))
    } else {
        json!({"type": "submit", "answer": answer, "evidence": citations(all, 2)})
    };
    let mut reply =
        json!({"reasoning": format!("turn {t}: one paragraph at a time"), "action": action});
    if prompt.contains("\"establish\"") {
        reply["establish"] = json!("the next link");
        reply["expected_result"] = json!("a paragraph naming it");
        reply["progress"] = json!("a new title read");
    }
    reply
}

/// Cues that the loop asks for the answer now.
const COMMIT: [&str; 4] = [
    "Stop searching now",
    "structural-completion rule",
    "only finish[<answer>] is accepted now",
    "verify the chain",
];
const REMINDER: &str = "did not follow the working-memory protocol";

fn loop_turn(texts: &[(String, String)], last: &str, answer: &str) -> String {
    let assistants = texts.iter().filter(|(r, _)| r == "assistant").count();
    let reminders = texts
        .iter()
        .filter(|(r, t)| r == "user" && t.contains(REMINDER))
        .count();
    let turn = assistants - reminders.min(assistants) + 1;
    let reminded = last.contains(REMINDER);
    let system = texts.first().map(|(_, t)| t.as_str()).unwrap_or("");
    let corpus = !system.contains("lookup[");
    let triples = system.contains("triple:");
    let observed: String = texts
        .iter()
        .skip(1)
        .filter(|(r, _)| r == "user" || r == "tool")
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let seen = paragraphs(&observed);
    let title = |i: usize| {
        seen.get(i)
            .map_or("Unknown".to_string(), |s| s.title.clone())
    };
    let open = |i: usize| match seen.get(i) {
        Some(Seen { id: Some(id), .. }) if corpus => format!("read[{id}]"),
        Some(s) if corpus => format!("search[{}]", s.title),
        Some(s) => format!("lookup[{}]", s.title),
        None => "search[the second link]".to_string(),
    };
    let statement = |i: usize| {
        let s = seen.get(i);
        let words: Vec<&str> = s.map_or(vec![], |s| s.text.split_whitespace().take(8).collect());
        if words.is_empty() {
            format!("{} is about the question", title(i))
        } else {
            words.join(" ")
        }
    };
    let fact = |id: &str, i: usize, value: &str| {
        let mut line = format!("- [{id}] {} (source: {})", statement(i), title(i));
        if triples {
            line.push_str(&format!(
                " | confidence: high | triple: {} ; linked to ; {value}",
                title(i)
            ));
        }
        line
    };
    let query = texts
        .get(1)
        .map(|(_, t)| question_words(t))
        .unwrap_or_default();
    let commit = COMMIT.iter().any(|c| last.contains(c));

    if commit || turn >= 5 {
        return format!(
            "Thought: committing to the answer.\nConfirmed Facts:\n{}\n{}\nActive Hypotheses:\n- [H1] {answer} | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- [Q2] Is the second link confirmed? | action: {} | priority: low (resolved)\nNotes:\nThe answer is {answer}.\nAction: finish[{answer}]",
            fact("F1", 0, "first"),
            fact("F2", 1, "second"),
            title(1)
        );
    }
    match turn {
        1 => format!(
            "Thought: first find the opening link.\nSub-question 1: {query}?\nConfirmed Facts:\nActive Hypotheses:\nOpen Questions:\n- [Q1] What does the question's first link name? | action: {query} | priority: high\nNotes:\nNothing found yet.\nAction: search[{query}]"
        ),
        2 if !reminded => format!(
            "Sub-question 1: {query}?\nIntermediate answer 1: {}\nThought: the first result names a link.\nConfirmed Facts:\n{}\nAction: {}",
            title(0),
            fact("F1", 0, "first"),
            open(1)
        ),
        2 | 3 => format!(
            "Thought: two leads; check both.\nConfirmed Facts:\n{}\n{}\nActive Hypotheses:\n- [H1] {answer} | confidence: medium | supports: F2 | contradicts: -\nOpen Questions:\n- [Q1] What does the question's first link name? | action: {query} | priority: high (resolved)\n- [Q2] Is the second link confirmed? | action: {} | priority: medium\nNotes:\n{} and {} look relevant.\nAction: {}\nAction: {}",
            fact("F2", 1, "second"),
            fact("F3", 2, "another"),
            title(1),
            title(0),
            title(1),
            open(1),
            open(0)
        ),
        _ => format!(
            "Thought: one more check.\nConfirmed Facts:\n{}\n{}\n{}\nActive Hypotheses:\n- [H1] {answer} | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- [Q2] Is the second link confirmed? | action: {} | priority: medium (resolved)\nNotes:\nThe answer looks like {answer}.\nAction: {}",
            fact("F1", 0, "first"),
            fact("F2", 1, "second"),
            fact("F3", 2, "another"),
            title(1),
            open(2)
        ),
    }
}

/// An OpenAI completion whose action lines come back as native tool calls.
fn native(req: &ReceivedRequest, text: &str, tools: &[Value]) -> Value {
    let mut prose = Vec::new();
    let mut calls = Vec::new();
    for line in text.lines() {
        let action = line
            .strip_prefix("Action: ")
            .and_then(|a| a.strip_suffix(']'))
            .and_then(|a| a.split_once('['));
        match action {
            Some((name, arg)) => {
                let param = tools
                    .iter()
                    .find(|t| t["function"]["name"] == name)
                    .and_then(|t| t["function"]["parameters"]["properties"].as_object())
                    .and_then(|p| p.keys().next().cloned())
                    .unwrap_or_else(|| "argument".into());
                let mut args = serde_json::Map::new();
                args.insert(param, Value::String(arg.to_string()));
                calls.push(json!({
                    "id": format!("call_{}", calls.len() + 1),
                    "type": "function",
                    "function": {"name": name, "arguments": Value::Object(args).to_string()}
                }));
            }
            None => prose.push(line),
        }
    }
    let words = |s: &str| s.split_whitespace().count() as u64;
    let prompt: u64 = req.body["messages"]
        .as_array()
        .map(|m| m.iter().map(|m| words(&content(&m["content"]))).sum())
        .unwrap_or(0);
    let prose = prose.join("\n");
    json!({
        "id": format!("chatcmpl-golden-{}", req.index),
        "object": "chat.completion",
        "created": 1_700_000_000u64,
        "model": "golden",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": prose, "tool_calls": calls},
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": prompt, "completion_tokens": words(&prose), "total_tokens": prompt + words(&prose)}
    })
}
