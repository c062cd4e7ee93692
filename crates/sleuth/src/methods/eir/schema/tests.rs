//! The declared formats give the schemas sent to servers: their property order, their
//! bounds, the actions each setting offers, and the exact text of one (the golden
//! transcripts pin every other request byte for byte).

use super::*;
use crate::methods::eir::lists::{ConclusionStatus, RequirementStatus};
use serde_json::json;

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

/// The whole text of the largest schema, as servers receive it.
#[test]
fn the_eir_action_schema_of_the_corpus_setting_with_repair_is_exactly_this() {
    let text = "{\"type\":\"object\",\"properties\":{\"reasoning\":{\"type\":\"string\",\"maxLength\":4000},\
\"requirements\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"op\":{\"type\":\"string\",\"enum\":[\"add\",\"revise\"]},\
\"id\":{\"type\":\"string\",\"maxLength\":8},\"text\":{\"type\":\"string\",\"maxLength\":1000},\
\"status\":{\"type\":\"string\",\"enum\":[\"open\",\"met\",\"dropped\"]}},\"required\":[\"op\",\"id\"]},\"maxItems\":32},\
\"conclusions\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"op\":{\"type\":\"string\",\"enum\":[\"add\",\"revise\"]},\
\"id\":{\"type\":\"string\",\"maxLength\":8},\"claim\":{\"type\":\"string\",\"maxLength\":1000},\
\"status\":{\"type\":\"string\",\"enum\":[\"tentative\",\"supported\",\"retracted\"]},\
\"citations\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\",\"maxLength\":120},\
\"sentence\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":999}},\"required\":[\"title\",\"sentence\"]},\"maxItems\":32},\
\"depends_on\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"maxLength\":8},\"maxItems\":32}},\"required\":[\"op\",\"id\"]},\"maxItems\":32},\
\"action\":{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"search\",\"read\",\"submit\"]},\
\"query\":{\"type\":\"string\",\"maxLength\":200},\"id\":{\"type\":\"string\",\"maxLength\":40},\
\"answer\":{\"type\":\"string\",\"maxLength\":120},\
\"evidence\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\",\"maxLength\":120},\
\"sentence\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":999}},\"required\":[\"title\",\"sentence\"]},\"maxItems\":32}},\
\"required\":[\"type\"]}},\"required\":[\"reasoning\",\"requirements\",\"conclusions\",\"action\"]}";
    assert_eq!(eir_action(true, true).to_string(), text);
}

/// The status names a list change may give are the lists' own status names, in order.
#[test]
fn status_choices_are_the_list_status_names() {
    fn names(statuses: &[impl serde::Serialize]) -> Vec<String> {
        statuses
            .iter()
            .map(|s| {
                serde_json::to_value(s)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
    let declared =
        |f: &Field| -> Vec<String> { f.choices().iter().map(|c| c.name.to_string()).collect() };
    use ConclusionStatus as C;
    use RequirementStatus as R;
    assert_eq!(
        names(&[R::Open, R::Met, R::Dropped]),
        declared(&requirement::STATUS)
    );
    assert_eq!(
        names(&[C::Tentative, C::Supported, C::Retracted]),
        declared(&conclusion::STATUS)
    );
    assert_eq!(action::TYPE.choice_list(" or "), "search, read or submit");
    assert_eq!(requirement::STATUS.choice_list(", "), "open, met, dropped");
    assert!(action::SUBMIT.accepts("finish") && !action::READ.accepts("finish"));
}
