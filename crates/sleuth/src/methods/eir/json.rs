//! The JSON action protocol of the EIR setting: finding the JSON object in a response,
//! reading the proposed action and citations out of it, and saying precisely why a
//! response was rejected. Every field is read through its declaration in
//! [`super::schema`] (the same one the call's JSON schema is generated from), so no field
//! name is written here.
//!
//! EIR extracts the first balanced JSON object even from surrounding prose (models add a
//! sentence before or after); Direct, Agentic SSR and Reflexion accept a response only
//! when it is JSON as a whole (a Markdown code fence around it is allowed), as in the
//! paper's comparison. Either way the raw text is kept in the trace.

use super::schema::{action, citation, reply, Field};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How much surrounding text a response may carry around its JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extraction {
    /// The first balanced object anywhere in the text.
    Tolerant,
    /// The whole response (optionally in a code fence) must be one object.
    Strict,
}

/// Why a response was not executed. Counted per cause in `rejected_actions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectCause {
    /// No JSON object could be read.
    Unparseable,
    /// A required field is absent.
    MissingField,
    /// A field has the wrong type or an unknown value.
    WrongType,
    /// A citation names a sentence that was not read.
    InvalidCitation,
    /// A list change revises an entry that does not exist (or depends on one).
    UnknownEntry,
    /// A list change adds an entry whose id is taken.
    DuplicateEntry,
    /// The action is not allowed now (a read on the submit-only turn, no reads left,
    /// a search where the environment has none).
    NotAllowed,
    /// A submission with an empty answer.
    EmptyAnswer,
}

impl RejectCause {
    pub fn name(self) -> &'static str {
        match self {
            RejectCause::Unparseable => "unparseable",
            RejectCause::MissingField => "missing_field",
            RejectCause::WrongType => "wrong_type",
            RejectCause::InvalidCitation => "invalid_citation",
            RejectCause::UnknownEntry => "unknown_entry",
            RejectCause::DuplicateEntry => "duplicate_entry",
            RejectCause::NotAllowed => "not_allowed",
            RejectCause::EmptyAnswer => "empty_answer",
        }
    }
}

/// A rejected response: the cause and an explanation that is shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub cause: RejectCause,
    pub message: String,
    /// The causes of the other problems found in the same response, after `cause`. EIR
    /// App. B.1 checks a list batch whole, so one batch can fail several ways; whether it
    /// is discarded or refused must not depend on which problem came first. Not recorded:
    /// the trace keeps one cause per rejection (the one that decided it).
    #[serde(skip)]
    pub other_causes: Vec<RejectCause>,
}

impl Rejection {
    pub fn new(cause: RejectCause, message: impl Into<String>) -> Self {
        Rejection {
            cause,
            message: message.into(),
            other_causes: Vec::new(),
        }
    }

    /// Every cause of this rejection: the recorded one first.
    pub fn causes(&self) -> impl Iterator<Item = RejectCause> + '_ {
        std::iter::once(self.cause).chain(self.other_causes.iter().copied())
    }
}

/// A reference to one read sentence: paragraph title and 0-based sentence number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Citation {
    pub title: String,
    pub sentence: usize,
}

/// The action a response proposes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Move {
    Read {
        title: String,
    },
    Search {
        query: String,
    },
    Submit {
        answer: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        evidence: Vec<Citation>,
    },
}

impl Move {
    /// The action in the trace's shared vocabulary.
    pub fn to_action(&self) -> crate::env::Action {
        use crate::env::Action;
        match self {
            Move::Read { title } => Action::Read(title.clone()),
            Move::Search { query } => Action::Search(query.clone()),
            Move::Submit { answer, .. } => Action::Finish(answer.clone()),
        }
    }
}

/// The JSON object in `text`, if any.
pub fn extract_object(text: &str, mode: Extraction) -> Option<Map<String, Value>> {
    let trimmed = strip_fence(text.trim());
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(trimmed) {
        return Some(map);
    }
    if mode == Extraction::Strict {
        return None;
    }
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(offset) = text[start..].find('{') {
        let open = start + offset;
        if let Some(close) = balanced_end(bytes, open) {
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text[open..=close]) {
                return Some(map);
            }
        }
        start = open + 1;
    }
    None
}

/// Removes one surrounding Markdown code fence (```json ... ```).
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.find('\n').map_or("", |i| &rest[i + 1..]);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

/// The index of the `}` closing the `{` at `open`, skipping braces inside strings.
fn balanced_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A string field: absent or null is `Ok(None)`; numbers and booleans are taken as
/// their text (an answer like 1998 often arrives as a number).
pub fn opt_string(obj: &Map<String, Value>, field: &Field) -> Result<Option<String>, Rejection> {
    let key = field.name;
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(if *b { "yes" } else { "no" }.to_string())),
        Some(other) => Err(Rejection::new(
            RejectCause::WrongType,
            format!("`{key}` must be a string, not {}", kind(other)),
        )),
    }
}

/// A required string field.
pub fn req_string(
    obj: &Map<String, Value>,
    field: &Field,
    what: &str,
) -> Result<String, Rejection> {
    opt_string(obj, field)?.ok_or_else(|| {
        Rejection::new(
            RejectCause::MissingField,
            format!("{what} needs a `{}` field", field.name),
        )
    })
}

/// Whether a field is given (present and not null).
pub fn given(obj: &Map<String, Value>, field: &Field) -> bool {
    !matches!(obj.get(field.name), None | Some(Value::Null))
}

/// An optional array field (absent or null is empty).
pub fn opt_array<'a>(obj: &'a Map<String, Value>, field: &Field) -> Result<&'a [Value], Rejection> {
    let key = field.name;
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(Rejection::new(
            RejectCause::WrongType,
            format!("`{key}` must be a list, not {}", kind(other)),
        )),
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Citations as written: `[{"title": ..., "sentence": N}, ...]`. Sentence numbers may
/// be integers or strings of digits; anything else is a type error.
pub fn parse_citations(items: &[Value]) -> Result<Vec<Citation>, Rejection> {
    items
        .iter()
        .map(|item| {
            let Value::Object(obj) = item else {
                return Err(Rejection::new(
                    RejectCause::WrongType,
                    format!(
                        "each citation must be an object {{\"title\", \"sentence\"}}, not {}",
                        kind(item)
                    ),
                ));
            };
            let title = req_string(obj, &citation::TITLE, "a citation")?;
            let key = citation::SENTENCE.name;
            let sentence = match obj.get(key) {
                Some(Value::Number(n)) => n.as_u64().map(|n| n as usize),
                Some(Value::String(s)) => s.trim().parse().ok(),
                None | Some(Value::Null) => {
                    return Err(Rejection::new(
                        RejectCause::MissingField,
                        format!("the citation of \"{title}\" needs a `{key}` number"),
                    ))
                }
                _ => None,
            };
            let sentence = sentence.ok_or_else(|| {
                Rejection::new(
                    RejectCause::WrongType,
                    format!("the citation of \"{title}\" must give `{key}` as a whole number"),
                )
            })?;
            Ok(Citation { title, sentence })
        })
        .collect()
}

/// Whether a response proposes a read, however malformed it is otherwise: its action
/// object (found as EIR finds it, inside prose too) names the read type. EIR App. H.1
/// charges such a response a read attempt when it is refused.
pub fn proposes_read(text: &str) -> bool {
    extract_object(text, Extraction::Tolerant)
        .and_then(|obj| {
            let action = obj.get(reply::ACTION.name)?.as_object()?;
            let kind = action.get(action::TYPE.name)?.as_str()?;
            Some(action::READ.accepts(&kind.trim().to_ascii_lowercase()))
        })
        .unwrap_or(false)
}

/// Reads the `action` field of a response object.
pub fn parse_move(obj: &Map<String, Value>) -> Result<Move, Rejection> {
    let key = reply::ACTION.name;
    let action = match obj.get(key) {
        Some(Value::Object(a)) => a,
        None | Some(Value::Null) => {
            return Err(Rejection::new(
                RejectCause::MissingField,
                format!("the response needs an `{key}` object"),
            ))
        }
        Some(other) => {
            return Err(Rejection::new(
                RejectCause::WrongType,
                format!("`{key}` must be an object, not {}", kind(other)),
            ))
        }
    };
    let kind_name = req_string(action, &action::TYPE, "the action")?.to_ascii_lowercase();
    if action::READ.accepts(&kind_name) {
        let title = opt_string(action, &action::TITLE)?
            .or(opt_string(action, &action::ID)?)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                Rejection::new(
                    RejectCause::MissingField,
                    format!("a read needs a `{}`", action::TITLE.name),
                )
            })?;
        Ok(Move::Read { title })
    } else if action::SEARCH.accepts(&kind_name) {
        let query = req_string(action, &action::QUERY, "a search")?;
        Ok(Move::Search { query })
    } else if action::SUBMIT.accepts(&kind_name) {
        let answer = req_string(action, &action::ANSWER, "a submission")?;
        if answer.is_empty() {
            return Err(Rejection::new(
                RejectCause::EmptyAnswer,
                format!("a submission needs a non-empty `{}`", action::ANSWER.name),
            ));
        }
        let evidence = parse_citations(opt_array(action, &action::EVIDENCE)?)?;
        Ok(Move::Submit { answer, evidence })
    } else {
        Err(Rejection::new(
            RejectCause::WrongType,
            format!(
                "unknown action type `{kind_name}` (expected {})",
                action::TYPE.choice_list(" or ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerant_extraction_finds_the_object_inside_prose() {
        let text =
            "Sure! Here is my step: {\"a\": \"x } y\", \"b\": {\"c\": 1}} Hope that helps {oops}";
        let obj = extract_object(text, Extraction::Tolerant).unwrap();
        assert_eq!(Value::Object(obj), json!({"a": "x } y", "b": {"c": 1}}));
        assert!(extract_object(text, Extraction::Strict).is_none());
        assert!(extract_object("no json here {at all", Extraction::Tolerant).is_none());
    }

    #[test]
    fn both_modes_accept_a_fenced_object_and_skip_broken_candidates() {
        let fenced = "```json\n{\"action\": {\"type\": \"read\", \"title\": \"A\"}}\n```";
        assert!(extract_object(fenced, Extraction::Strict).is_some());
        let text = "{not json} then {\"ok\": true}";
        assert_eq!(
            Value::Object(extract_object(text, Extraction::Tolerant).unwrap()),
            json!({"ok": true})
        );
    }

    #[test]
    fn a_read_is_recognised_in_a_malformed_response() {
        assert!(proposes_read(r#"I read: {"action": {"type": "read"}}"#));
        assert!(proposes_read(r#"{"action": {"type": "Read", "id": [1]}}"#));
        assert!(!proposes_read(r#"{"action": {"type": "search"}}"#));
        assert!(!proposes_read("read the first paragraph"));
    }

    #[test]
    fn moves_and_their_rejection_causes() {
        let parse = |v: Value| parse_move(v.as_object().unwrap());
        assert_eq!(
            parse(json!({"action": {"type": "read", "title": " Beta "}})),
            Ok(Move::Read {
                title: "Beta".into()
            })
        );
        assert_eq!(
            parse(json!({"action": {"type": "submit", "answer": 1998,
                "evidence": [{"title": "A", "sentence": "2"}]}})),
            Ok(Move::Submit {
                answer: "1998".into(),
                evidence: vec![Citation {
                    title: "A".into(),
                    sentence: 2
                }]
            })
        );
        let cause = |v: Value| parse(v).unwrap_err().cause;
        assert_eq!(cause(json!({"reasoning": "x"})), RejectCause::MissingField);
        assert_eq!(cause(json!({"action": "read"})), RejectCause::WrongType);
        assert_eq!(
            cause(json!({"action": {"type": "read"}})),
            RejectCause::MissingField
        );
        assert_eq!(
            cause(json!({"action": {"type": "submit", "answer": "  "}})),
            RejectCause::EmptyAnswer
        );
        assert_eq!(
            cause(json!({"action": {"type": "submit", "answer": "x",
                "evidence": [{"title": "A", "sentence": "S2"}]}})),
            RejectCause::WrongType
        );
        assert_eq!(
            cause(json!({"action": {"type": "jump"}})),
            RejectCause::WrongType
        );
    }
}
