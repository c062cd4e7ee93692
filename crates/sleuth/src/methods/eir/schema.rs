//! JSON schemas sent as output constraints, one per kind of call. They help local
//! grammar-constrained models and providers with structured outputs produce the shape
//! the parsers expect; responses are validated by the parsers either way, so the schemas
//! only need to be permissive supersets of what is accepted.

use serde_json::{json, Value};

fn citations() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "sentence": {"type": "integer", "minimum": 0}
            },
            "required": ["title", "sentence"]
        }
    })
}

fn action() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["read", "submit"]},
            "title": {"type": "string"},
            "answer": {"type": "string"},
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
            "id": {"type": "string"},
            "text": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "met", "dropped"]}
        },
        "required": ["op", "id"]
    });
    let mut conclusion = json!({
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "revise"]},
            "id": {"type": "string"},
            "claim": {"type": "string"},
            "status": {"type": "string", "enum": ["tentative", "supported", "retracted"]},
            "citations": citations()
        },
        "required": ["op", "id"]
    });
    if dependency_repair {
        conclusion["properties"]["depends_on"] =
            json!({"type": "array", "items": {"type": "string"}});
    }
    (
        json!({"type": "array", "items": requirement}),
        json!({"type": "array", "items": conclusion}),
    )
}

/// EIR's action call: reasoning, list changes, action.
pub fn eir_action(dependency_repair: bool) -> Value {
    let (requirements, conclusions) = list_changes(dependency_repair);
    json!({
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "requirements": requirements,
            "conclusions": conclusions,
            "action": action()
        },
        "required": ["reasoning", "requirements", "conclusions", "action"]
    })
}

/// The dependency-repair call: list changes only.
pub fn repair() -> Value {
    let (requirements, conclusions) = list_changes(true);
    json!({
        "type": "object",
        "properties": {"requirements": requirements, "conclusions": conclusions},
        "required": ["requirements", "conclusions"]
    })
}

/// Direct, SSR and Reflexion action calls (and SSR's refinement): reasoning and action.
pub fn direct_action() -> Value {
    json!({
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "action": action()},
        "required": ["reasoning", "action"]
    })
}

/// The final answer call (EIR and Full Pool).
pub fn final_answer() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}, "evidence": citations()},
        "required": ["answer", "evidence"]
    })
}

/// The additional-retrieval control's selection call.
pub fn more_reads() -> Value {
    json!({
        "type": "object",
        "properties": {"read": {"type": "array", "items": {"type": "string"}}},
        "required": ["read"]
    })
}

/// SSR's decomposition call.
pub fn decomposition() -> Value {
    json!({
        "type": "object",
        "properties": {
            "facts": {"type": "string"},
            "justification": {"type": "string"},
            "action": {"type": "string"}
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
            "correction": {"type": "string"}
        },
        "required": ["verdict", "correction"]
    })
}
