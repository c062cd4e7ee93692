//! How a transcript is written: machine-specific text replaced by placeholders, each
//! request stored as what changed since the one before (lossless, and small enough to
//! review), and multi-line strings split into lines so a diff points at the line.

use serde_json::{json, Map, Value};

/// Replaces what differs between machines and runs (the server's port, temp folders,
/// the checkout's path) with fixed placeholders.
pub struct Normalizer {
    pub server: String,
    pub work: String,
    pub repo: String,
    pub repo_raw: String,
}

impl Normalizer {
    pub fn text(&self, s: &str) -> String {
        let mut out = s.replace(&self.server, "http://golden-server/v1");
        out = out.replace(&self.work, "$WORK");
        out = out.replace(&self.repo_raw, "$REPO");
        out.replace(&self.repo, "$REPO")
    }

    pub fn value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.text(k), self.value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    pub fn args(&self, args: &[String]) -> Vec<String> {
        args.iter().map(|a| self.text(a)).collect()
    }
}

/// Strings holding a newline become `{"¶": [lines]}` (no record or request has a `¶`
/// key, so the form cannot be confused with real data).
pub fn multiline(v: &Value) -> Value {
    match v {
        Value::String(s) if s.contains('\n') => {
            json!({ "¶": s.split('\n').collect::<Vec<_>>() })
        }
        Value::Array(a) => Value::Array(a.iter().map(multiline).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), multiline(x))).collect())
        }
        other => other.clone(),
    }
}

/// Each request body relative to the previous one: `messages` as the number of leading
/// messages it shares with the previous request (`kept`) and the ones after them
/// (`then`); every other field by value when it changed, by name in `unchanged` when
/// not. Fields in neither are absent from the body.
pub fn requests(bodies: &[Value], norm: &Normalizer) -> Vec<Value> {
    let empty = Map::new();
    let mut previous: Option<Map<String, Value>> = None;
    let mut out = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        let body = norm.value(body);
        let obj = body.as_object().cloned().unwrap_or_default();
        let prev = previous.as_ref().unwrap_or(&empty);
        let mut entry = Map::new();
        entry.insert("call".into(), json!(i + 1));
        let mut unchanged = Vec::new();
        for (key, value) in &obj {
            if key == "messages" {
                let now = value.as_array().cloned().unwrap_or_default();
                let before = prev
                    .get("messages")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let kept = now
                    .iter()
                    .zip(before.iter())
                    .take_while(|(a, b)| a == b)
                    .count();
                entry.insert(
                    "messages".into(),
                    json!({
                        "kept": kept,
                        "then": now[kept..].iter().map(multiline).collect::<Vec<_>>(),
                    }),
                );
            } else if prev.get(key) == Some(value) {
                unchanged.push(Value::String(key.clone()));
            } else {
                entry.insert(key.clone(), multiline(value));
            }
        }
        if !unchanged.is_empty() {
            entry.insert("unchanged".into(), Value::Array(unchanged));
        }
        out.push(Value::Object(entry));
        previous = Some(obj);
    }
    out
}
