//! JSON schemas sent as output constraints, one per kind of call. They help local
//! grammar-constrained models and providers with structured outputs produce the shape
//! the parsers expect; responses are validated by the parsers either way, so the schemas
//! only need to be permissive supersets of what is accepted.
//!
//! Strings and arrays carry `maxLength` / `maxItems` bounds, generous for a real model
//! but finite: a grammar-constrained tiny model otherwise fills its whole token budget
//! with one string, and the truncated JSON fails to parse.

use serde_json::{json, Value};

/// A free-text reasoning field.
const REASONING: u32 = 600;
/// A requirement, a claim, an SSR part.
const STATEMENT: u32 = 240;
/// A paragraph title.
const TITLE: u32 = 120;
/// An answer span.
const ANSWER: u32 = 120;
/// A list id such as `R1` or `C12`.
const ID: u32 = 8;
/// Items in one array (list changes, citations, titles).
const ITEMS: u32 = 4;

fn text(max: u32) -> Value {
    json!({"type": "string", "maxLength": max})
}

fn array_of(items: Value) -> Value {
    json!({"type": "array", "items": items, "maxItems": ITEMS})
}

fn citations() -> Value {
    array_of(json!({
        "type": "object",
        "properties": {
            "title": text(TITLE),
            "sentence": {"type": "integer", "minimum": 0, "maximum": 999}
        },
        "required": ["title", "sentence"]
    }))
}

/// Search terms.
const QUERY: u32 = 200;
/// A corpus paragraph id.
const DOC_ID: u32 = 40;

/// The action object. `search` offers the corpus setting's search and reading by id
/// (EIR paper §4.3, App. H.1); without it only `read` (by title) and `submit` exist.
fn action(search: bool) -> Value {
    if !search {
        return json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["read", "submit"]},
                "title": text(TITLE),
                "answer": text(ANSWER),
                "evidence": citations()
            },
            "required": ["type"]
        });
    }
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["search", "read", "submit"]},
            "query": text(QUERY),
            "id": text(DOC_ID),
            "answer": text(ANSWER),
            "evidence": citations()
        },
        "required": ["type"]
    })
}

fn list_changes(dependency_repair: bool) -> (Value, Value) {
    let requirement = json!({
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "revise"]},
            "id": text(ID),
            "text": text(STATEMENT),
            "status": {"type": "string", "enum": ["open", "met", "dropped"]}
        },
        "required": ["op", "id"]
    });
    let mut conclusion = json!({
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "revise"]},
            "id": text(ID),
            "claim": text(STATEMENT),
            "status": {"type": "string", "enum": ["tentative", "supported", "retracted"]},
            "citations": citations()
        },
        "required": ["op", "id"]
    });
    if dependency_repair {
        conclusion["properties"]["depends_on"] = array_of(text(ID));
    }
    (array_of(requirement), array_of(conclusion))
}

/// EIR's action call: reasoning, list changes, action (`search`: the corpus setting).
pub fn eir_action(dependency_repair: bool, search: bool) -> Value {
    let (requirements, conclusions) = list_changes(dependency_repair);
    json!({
        "type": "object",
        "properties": {
            "reasoning": text(REASONING),
            "requirements": requirements,
            "conclusions": conclusions,
            "action": action(search)
        },
        "required": ["reasoning", "requirements", "conclusions", "action"]
    })
}

/// Dependency repair's first call: revisions of the affected conclusions.
pub fn repair_conclusions() -> Value {
    let (_, conclusions) = list_changes(true);
    json!({
        "type": "object",
        "properties": {"conclusions": conclusions},
        "required": ["conclusions"]
    })
}

/// Dependency repair's second call: requirement changes.
pub fn refresh_requirements() -> Value {
    let (requirements, _) = list_changes(true);
    json!({
        "type": "object",
        "properties": {"requirements": requirements},
        "required": ["requirements"]
    })
}

/// Direct, SSR and Reflexion action calls (and SSR's refinement): reasoning and action.
/// In the corpus setting (`search`) Direct also states what the action should
/// establish, its expected result and how progress will be judged (EIR App. B.3).
pub fn direct_action(search: bool) -> Value {
    if !search {
        return json!({
            "type": "object",
            "properties": {"reasoning": text(REASONING), "action": action(false)},
            "required": ["reasoning", "action"]
        });
    }
    json!({
        "type": "object",
        "properties": {
            "reasoning": text(REASONING),
            "establish": text(STATEMENT),
            "expected_result": text(STATEMENT),
            "progress": text(STATEMENT),
            "action": action(true)
        },
        "required": ["reasoning", "action"]
    })
}

/// The final answer call (EIR and Full Pool).
pub fn final_answer() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": text(ANSWER), "evidence": citations()},
        "required": ["answer", "evidence"]
    })
}

/// The additional-retrieval control's selection call.
pub fn more_reads() -> Value {
    json!({
        "type": "object",
        "properties": {"read": array_of(text(TITLE))},
        "required": ["read"]
    })
}

/// SSR's decomposition call.
pub fn decomposition() -> Value {
    json!({
        "type": "object",
        "properties": {
            "facts": text(REASONING),
            "justification": text(REASONING),
            "action": text(STATEMENT)
        },
        "required": ["facts", "justification", "action"]
    })
}

/// SSR's verifier call.
pub fn verdict() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["accept", "reject"]},
            "correction": text(STATEMENT)
        },
        "required": ["verdict", "correction"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grammar converters and structured-output providers generate properties in the
    /// order the schema text lists them: reasoning must come before the action.
    #[test]
    fn properties_keep_their_written_order() {
        for (schema, first, then) in [
            (eir_action(false, false), "\"reasoning\"", "\"action\""),
            (
                eir_action(true, true),
                "\"requirements\"",
                "\"conclusions\"",
            ),
            (direct_action(false), "\"reasoning\"", "\"action\""),
            (direct_action(true), "\"expected_result\"", "\"action\""),
            (decomposition(), "\"facts\"", "\"justification\""),
            (final_answer(), "\"answer\"", "\"evidence\""),
        ] {
            let text = schema.to_string();
            let (a, b) = (text.find(first).unwrap(), text.find(then).unwrap());
            assert!(a < b, "{first} must precede {then} in {text}");
        }
    }

    /// The corpus setting's schema offers search and reading by id (EIR paper §4.3); the
    /// titles setting's does not.
    #[test]
    fn search_is_offered_only_where_the_environment_searches() {
        let types = |v: &Value| v["properties"]["action"]["properties"]["type"]["enum"].clone();
        assert_eq!(
            types(&eir_action(false, true)),
            json!(["search", "read", "submit"])
        );
        assert_eq!(
            types(&direct_action(true)),
            json!(["search", "read", "submit"])
        );
        assert_eq!(types(&direct_action(false)), json!(["read", "submit"]));
        assert_eq!(types(&eir_action(false, false)), json!(["read", "submit"]));
    }

    #[test]
    fn every_string_and_array_is_bounded() {
        fn check(v: &Value, path: &str) {
            match v.get("type").and_then(Value::as_str) {
                Some("string") if v.get("enum").is_none() => {
                    assert!(v.get("maxLength").is_some(), "unbounded string at {path}")
                }
                Some("array") => assert!(v.get("maxItems").is_some(), "unbounded array at {path}"),
                _ => {}
            }
            if let Some(props) = v.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    check(p, &format!("{path}.{k}"));
                }
            }
            if let Some(items) = v.get("items") {
                check(items, &format!("{path}[]"));
            }
        }
        for (name, s) in [
            ("eir_action", eir_action(true, false)),
            ("eir_action_corpus", eir_action(true, true)),
            ("repair", repair_conclusions()),
            ("refresh", refresh_requirements()),
            ("direct_action", direct_action(false)),
            ("direct_action_corpus", direct_action(true)),
            ("final_answer", final_answer()),
            ("more_reads", more_reads()),
            ("decomposition", decomposition()),
            ("verdict", verdict()),
        ] {
            check(&s, name);
        }
    }
}
