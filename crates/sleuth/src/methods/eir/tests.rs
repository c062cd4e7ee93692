//! Scripted-model tests of the EIR-setting methods: what each call is shown, how many
//! calls of each kind a method makes, and what ends up in the record.

use super::*;
use crate::data::{Dataset, Paragraph, Question, SupportingFact};
use crate::eval::{RecordContext, RunRecord};
use crate::llm::{ChatRequest, ScriptedModel};
use crate::methods::registry::{build, MethodConfig, RegisteredMethod};
use crate::methods::{CallKind, Episode, RunContext, StopReason};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const HUMPHREY: &str = "Humphrey, 2nd Earl of Buckingham";

fn question() -> Question {
    Question {
        id: "h1".into(),
        dataset: Dataset::HotpotQa,
        text: "Who is Humphrey, 2nd Earl of Buckingham's aunt?".into(),
        answers: vec!["Mary de Bohun".into()],
        paragraphs: vec![
            Paragraph::new("Joan FitzAlan", vec!["Joan was a countess.".into()]),
            Paragraph::new(
                HUMPHREY,
                vec!["Humphrey was the son of Thomas of Woodstock and Eleanor de Bohun.".into()],
            ),
            Paragraph::new(
                "Eleanor de Bohun",
                vec![
                    "Eleanor de Bohun was a daughter of the Earl of Hereford.".into(),
                    "Her younger sister was Mary de Bohun.".into(),
                ],
            ),
            Paragraph::new(
                "Thomas of Woodstock",
                vec!["Thomas was a son of Edward III.".into()],
            ),
        ],
        supporting_facts: vec![
            SupportingFact {
                title: HUMPHREY.into(),
                sentence: 0,
            },
            SupportingFact {
                title: "Eleanor de Bohun".into(),
                sentence: 1,
            },
        ],
        supporting_paragraphs: vec![1, 2],
        hops: Some(2),
        kind: Some("bridge".into()),
    }
}

fn method(name: &str, settings: &[(&str, &str)]) -> RegisteredMethod {
    let settings: BTreeMap<String, String> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    build(
        name,
        &MethodConfig::new(
            settings,
            std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
        ),
    )
    .unwrap()
}

/// The episode scored as `eval` scores it (Support F1, gold recall, first attempt).
fn record(ep: Episode) -> RunRecord {
    let settings = BTreeMap::new();
    let ctx = RecordContext {
        method: "m",
        settings: &settings,
        model: "scripted",
        retries: 0,
        cost_usd: 0.0,
        constraints_dropped: 0,
        batched_calls: 0,
    };
    RunRecord::from_episode(&question(), ep, &ctx)
}

fn final_call_of(ep: &Episode) -> &crate::methods::outputs::FinalCall {
    ep.outputs.final_call.as_ref().expect("a final call")
}

fn evidence_of(ep: &Episode) -> &crate::methods::outputs::Evidence {
    ep.outputs.evidence.as_ref().expect("evidence")
}

/// Which template a request was rendered from.
fn kind_of(req: &ChatRequest) -> &'static str {
    let text = &req.messages.last().unwrap().content;
    for (marker, kind) in [
        ("You are collecting evidence", "eir_action"),
        ("Answer the question from the evidence below", "final"),
        ("Decide whether reading more paragraphs", "more"),
        ("Some conclusions were just revised", "repair"),
        ("Split the proposal into three parts", "decompose"),
        ("Check one part", "verify"),
        ("A check of the reasoning", "refine"),
        ("and it did not succeed", "reflect"),
        (
            "You are answering a multi-hop question by reading",
            "direct",
        ),
    ] {
        if text.contains(marker) {
            return kind;
        }
    }
    panic!("unrecognised request: {text}")
}

/// The turn number an action prompt announces ("Turn N of M").
fn turn_of(req: &ChatRequest) -> u32 {
    let text = &req.messages.last().unwrap().content;
    let at = text.find("Turn ").expect("turn line") + 5;
    text[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn prompt(req: &ChatRequest) -> &str {
    &req.messages.last().unwrap().content
}

fn calls(ep: &Episode, kind: CallKind) -> u32 {
    ep.calls.get(&kind).copied().unwrap_or(0)
}

const CANARY: &str = "CANARY-7f3a9";

fn eir_script(req: &ChatRequest) -> String {
    match kind_of(req) {
        "eir_action" => match turn_of(req) {
            1 => json!({
                "reasoning": format!("{CANARY} first find the mother"),
                "requirements": [{"op": "add", "id": "R1", "text": "Humphrey's mother", "status": "open"}],
                "conclusions": [],
                "action": {"type": "read", "title": HUMPHREY}
            }),
            2 => json!({
                "reasoning": "the mother is Eleanor; read her paragraph",
                "requirements": [{"op": "revise", "id": "R1", "status": "met"}],
                "conclusions": [{"op": "add", "id": "C1", "claim": format!("{CANARY} mother is Eleanor"),
                    "status": "supported", "citations": [{"title": HUMPHREY, "sentence": 0}]}],
                "action": {"type": "read", "title": "Eleanor de Bohun"}
            }),
            _ => json!({
                "reasoning": "the aunt is the sister of the mother",
                "requirements": [],
                "conclusions": [{"op": "add", "id": "C2", "claim": "Eleanor's sister is Mary",
                    "citations": [{"title": "Eleanor de Bohun", "sentence": 1}]}],
                "action": {"type": "submit", "answer": "RETRIEVAL-ANSWER-Eleanor"}
            }),
        }
        .to_string(),
        "final" => json!({"answer": "Mary de Bohun",
            "evidence": [{"title": "Eleanor de Bohun", "sentence": 1}]})
        .to_string(),
        other => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn eir_final_call_sees_only_question_and_evidence() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| Ok(eir_script(req))));
    let ep = method("eir", &[])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    let requests = model.requests();
    let finals: Vec<&ChatRequest> = requests.iter().filter(|r| kind_of(r) == "final").collect();
    assert_eq!(finals.len(), 1);
    let final_text: String = finals[0]
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    // The boundary: no reasoning, list entries or retrieval answer cross it.
    for leaked in [
        CANARY,
        "RETRIEVAL-ANSWER",
        "Requirements",
        "R1",
        "C1",
        "mother is",
    ] {
        assert!(
            !final_text.contains(leaked),
            "`{leaked}` reached the final call:\n{final_text}"
        );
    }
    assert!(final_text.contains(&question().text));
    assert!(final_text.contains("[Eleanor de Bohun]\n(0) Eleanor de Bohun was a daughter"));
    assert!(final_text.contains("(1) Her younger sister was Mary de Bohun."));
    assert!(!final_text.contains("Joan"), "unread paragraphs stay out");

    // The lists do reach later action prompts (list feedback on by default).
    let second = requests
        .iter()
        .find(|r| kind_of(r) == "eir_action" && turn_of(r) == 2)
        .unwrap();
    assert!(prompt(second).contains("R1 [open] Humphrey's mother"));
    let first = &requests[0];
    assert!(
        !prompt(first).contains("Her younger sister"),
        "only titles at the start"
    );
    assert!(prompt(first).contains("- Joan FitzAlan\n"));

    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
    assert_eq!(ep.stop, StopReason::Finished);
    let fc = final_call_of(&ep);
    assert_eq!(
        fc.retrieval_answer.as_deref(),
        Some("RETRIEVAL-ANSWER-Eleanor")
    );
    assert!(!fc.forced_end);
    assert_eq!(
        (calls(&ep, CallKind::Action), calls(&ep, CallKind::Final)),
        (3, 1)
    );
    assert_eq!(ep.total_calls(), 4);
    assert_eq!(ep.retrieved, [HUMPHREY, "Eleanor de Bohun"]);
    assert_eq!(ep.turns.len(), 3);
    let turns = ep.turns.clone();
    let r = record(ep);
    assert_eq!(r.gold_recall, Some(1.0));
    // Cited {(Eleanor, 1)} against gold {(Humphrey, 0), (Eleanor, 1)}: P = 1, R = 1/2.
    let sf1 = r.support_f1.unwrap();
    assert!((sf1 - 2.0 / 3.0).abs() < 1e-9, "{sf1}");
    let lists = turns[2].lists.as_ref().unwrap();
    assert_eq!(lists.conclusions.len(), 2);
    assert_eq!(lists.requirements[0].status, RequirementStatus::Met);
    // No request carried a schema constraint: prompting only by default (EIR App. H.4).
    assert!(requests.iter().all(|r| r.constraint.is_none()));
}

#[tokio::test]
async fn under_list_errors_refuse_an_invalid_list_change_rejects_the_whole_response() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match (kind_of(req), turn_of_or_zero(req)) {
            ("eir_action", 1) => json!({"reasoning": "r", "requirements": [], "conclusions": [],
                "action": {"type": "read", "title": HUMPHREY}}).to_string(),
            // A valid requirement and read, travelling with a citation of an unread sentence.
            ("eir_action", 2) => format!("Sure. {} Done.", json!({"reasoning": "r",
                "requirements": [{"op": "add", "id": "R1", "text": "the mother"}],
                "conclusions": [{"op": "add", "id": "C1", "claim": "aunt is Mary",
                    "citations": [{"title": "Eleanor de Bohun", "sentence": 1}]}],
                "action": {"type": "read", "title": "Eleanor de Bohun"}})),
            ("eir_action", 3) => "I am not sure what to do.".into(),
            ("eir_action", _) => json!({"reasoning": "r", "requirements": [{"op": "revise", "id": "R9", "status": "met"}],
                "conclusions": [], "action": {"type": "submit", "answer": "x"}}).to_string(),
            ("final", _) => "Answer: Eleanor de Bohun".into(),
            (k, _) => panic!("unexpected {k}"),
        })
    }));
    let ep = method("eir", &[("reads", "3"), ("list_errors", "refuse")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    // H = 3 reads + 1 submit-only turn: every turn used, one read made.
    assert_eq!(ep.turns.len(), 4);
    assert_eq!(ep.retrieved, [HUMPHREY]);
    let t2 = &ep.turns[1];
    assert_eq!(
        t2.rejection.as_ref().unwrap().cause,
        RejectCause::InvalidCitation
    );
    assert!(t2.actions.is_empty() && t2.observations.is_empty());
    assert!(
        t2.lists.as_ref().unwrap().is_empty(),
        "R1 must not have been applied"
    );
    assert_eq!(
        ep.turns[2].rejection.as_ref().unwrap().cause,
        RejectCause::Unparseable
    );
    assert_eq!(
        ep.turns[3].rejection.as_ref().unwrap().cause,
        RejectCause::UnknownEntry
    );
    assert_eq!(
        serde_json::to_value(&evidence_of(&ep).rejected).unwrap(),
        json!({"invalid_citation": 1, "unparseable": 1, "unknown_entry": 1})
    );
    // The rejection is explained on the next turn.
    let t3 = model
        .requests()
        .into_iter()
        .find(|r| kind_of(r) == "eir_action" && turn_of(r) == 3)
        .unwrap();
    assert!(prompt(&t3).contains("rejected (invalid_citation)"));
    assert!(prompt(&t3).contains("\"Eleanor de Bohun\" sentence 1"));
    // Forced end: no retrieval answer, yet the final call still answers.
    assert!(final_call_of(&ep).forced_end);
    assert_eq!(final_call_of(&ep).retrieval_answer, None);
    assert_eq!(ep.answer.as_deref(), Some("Eleanor de Bohun"));
    assert_eq!(
        (calls(&ep, CallKind::Action), calls(&ep, CallKind::Final)),
        (4, 1)
    );
}

fn turn_of_or_zero(req: &ChatRequest) -> u32 {
    if prompt(req).contains("Turn ") {
        turn_of(req)
    } else {
        0
    }
}

#[tokio::test]
async fn the_submit_only_turn_refuses_a_read_and_evidence_stays_verbatim() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            // Always read a title that matches nothing, and claim a misquoted "fact"
            // citing a sentence once one is read: the claim lives in the lists only.
            "eir_action" => json!({"reasoning": "r", "requirements": [],
                "conclusions": if turn_of(req) == 2 {
                    json!([{"op": "add", "id": "C1", "claim": "Joan was a queen of Spain.",
                        "citations": [{"title": "Joan FitzAlan", "sentence": 0}]}])
                } else { json!([]) },
                "action": {"type": "read", "title": "No Such Title"}})
            .to_string(),
            "final" => json!({"answer": "Joan", "evidence": []}).to_string(),
            k => panic!("unexpected {k}"),
        })
    }));
    let ep = method("eir", &[("reads", "2")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    // Unmatched titles read the first unread titles in pool order.
    assert_eq!(ep.retrieved, ["Joan FitzAlan", HUMPHREY]);
    let last = ep.turns.last().unwrap();
    assert_eq!(
        last.rejection.as_ref().unwrap().cause,
        RejectCause::NotAllowed
    );
    assert!(prompt(&model.requests()[2]).contains("it accepts only a submission"));
    let fin = model
        .requests()
        .into_iter()
        .find(|r| kind_of(r) == "final")
        .unwrap();
    assert!(prompt(&fin).contains(
        "[Humphrey, 2nd Earl of Buckingham]\n(0) Humphrey was the son of Thomas of Woodstock and Eleanor de Bohun."
    ));
    assert!(prompt(&fin).contains("(0) Joan was a countess."));
    assert!(!prompt(&fin).contains("queen of Spain"));
    assert_eq!(
        final_call_of(&ep).lists.conclusions[0].claim,
        "Joan was a queen of Spain."
    );
    assert_eq!(final_call_of(&ep).evidence_records, 2);
    assert_eq!(record(ep).support_f1, Some(0.0));
}

#[tokio::test]
async fn list_feedback_control_keeps_lists_out_of_later_prompts() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| Ok(eir_script(req))));
    let ep = method("eir", &[("list_feedback", "false")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    for r in model
        .requests()
        .iter()
        .filter(|r| kind_of(r) == "eir_action")
    {
        assert!(!prompt(r).contains("Humphrey's mother"), "{}", prompt(r));
        assert!(!prompt(r).contains("Your lists as they stand"));
    }
    // The lists are still kept.
    assert_eq!(ep.turns[2].lists.as_ref().unwrap().conclusions.len(), 2);
    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
}

/// Turn 2 adds C1 and C2 (depending on C1), turn 3 revises C1: the repair calls follow.
fn repair_model() -> std::sync::Arc<ScriptedModel> {
    std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            "eir_action" => match turn_of(req) {
                1 => json!({"reasoning": "r", "action": {"type": "read", "title": HUMPHREY}}),
                2 => json!({"reasoning": "r",
                    "conclusions": [
                        {"op": "add", "id": "C1", "claim": "mother is Eleanor", "citations": [{"title": HUMPHREY, "sentence": 0}]},
                        {"op": "add", "id": "C2", "claim": "aunt is Eleanor's sister", "depends_on": ["C1"],
                         "citations": [{"title": HUMPHREY, "sentence": 0}]}],
                    "action": {"type": "read", "title": "Eleanor de Bohun"}}),
                _ => json!({"reasoning": "r",
                    "conclusions": [{"op": "revise", "id": "C1", "status": "tentative"}],
                    "action": {"type": "submit", "answer": "Mary"}}),
            }
            .to_string(),
            "repair" if prompt(req).contains("Refresh the requirements") => {
                json!({"requirements": [{"op": "add", "id": "R1", "text": "confirm the mother"}]})
                    .to_string()
            }
            "repair" => json!({"conclusions": [{"op": "revise", "id": "C2", "status": "tentative"}]})
                .to_string(),
            "final" => json!({"answer": "Mary de Bohun", "evidence": []}).to_string(),
            k => panic!("unexpected {k}"),
        })
    }))
}

/// EIR App. E.3: a revision calls once to revise its dependents, once to refresh the
/// requirements; each applied all-or-nothing.
#[tokio::test]
async fn dependency_repair_revises_dependents_then_refreshes_requirements() {
    let model = repair_model();
    let ep = method("eir", &[("dependency_repair", "true")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(calls(&ep, CallKind::Repair), 2);
    let repairs: Vec<_> = model
        .requests()
        .into_iter()
        .filter(|r| kind_of(r) == "repair")
        .collect();
    assert!(prompt(&repairs[0]).contains("Revised just now: C1"));
    assert!(prompt(&repairs[0]).contains("Depending on them: C2"));
    // The refresh sees the conclusions as the first call left them.
    assert!(prompt(&repairs[1]).contains("Refresh the requirements"));
    let lists = serde_json::to_value(&final_call_of(&ep).lists).unwrap();
    assert_eq!(lists["conclusions"][1]["status"], "tentative");
    assert_eq!(lists["requirements"][0]["id"], "R1");
    let done = &final_call_of(&ep).repairs;
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|r| r.valid && r.applied));
    assert_eq!(
        done.iter().map(|r| r.part).collect::<Vec<_>>(),
        [
            crate::methods::outputs::RepairPart::Conclusions,
            crate::methods::outputs::RepairPart::Requirements
        ]
    );
    // Action prompts explain depends_on only under this control.
    assert!(prompt(&model.requests()[0]).contains("depends_on"));
}

/// Table 14's other arm: the same calls, their valid changes recorded but not applied.
#[tokio::test]
async fn unapplied_dependency_repair_makes_the_same_calls_and_changes_nothing() {
    let model = repair_model();
    let ep = method("eir", &[("dependency_repair", "unapplied")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(calls(&ep, CallKind::Repair), 2);
    let fc = final_call_of(&ep);
    assert!(fc.repairs.iter().all(|r| r.valid && !r.applied));
    let lists = serde_json::to_value(&fc.lists).unwrap();
    assert_eq!(lists["conclusions"][1]["status"], "supported");
    assert!(lists["requirements"].as_array().unwrap().is_empty());
}

/// A conclusion-repair reply that touches anything but the affected conclusions is
/// refused whole.
#[test]
fn repair_replies_are_confined_to_their_part() {
    use super::lists::ListChanges;
    let parse = |v: Value| ListChanges::parse(v.as_object().unwrap()).unwrap();
    let affected = vec!["C2".to_string()];
    assert!(
        parse(json!({"conclusions": [{"op": "revise", "id": "C2"}]}))
            .only_revising(&affected)
            .is_ok()
    );
    for bad in [
        json!({"conclusions": [{"op": "revise", "id": "C1"}]}),
        json!({"conclusions": [{"op": "add", "id": "C9", "claim": "x"}]}),
        json!({"requirements": [{"op": "add", "id": "R1", "text": "x"}]}),
    ] {
        assert!(parse(bad).only_revising(&affected).is_err());
    }
    assert!(
        parse(json!({"conclusions": [{"op": "revise", "id": "C2"}]}))
            .only_requirements()
            .is_err()
    );
}

#[tokio::test]
async fn extra_reads_control_reads_more_and_answers_again() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            "eir_action" => json!({"reasoning": "r", "action": {"type": "submit", "answer": "unsure"}}).to_string(),
            "more" => json!({"read": ["Eleanor de Bohun", "humphrey, 2nd earl of buckingham", "Joan FitzAlan"]}).to_string(),
            "final" if prompt(req).contains("Her younger sister") => {
                json!({"answer": "Mary de Bohun", "evidence": [{"title": "Eleanor de Bohun", "sentence": 1}]}).to_string()
            }
            "final" => json!({"answer": "unknown", "evidence": []}).to_string(),
            k => panic!("unexpected {k}"),
        })
    }));
    let ep = method("eir", &[("extra_reads", "2")])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
    let more = final_call_of(&ep).extra_reads.as_ref().unwrap();
    assert_eq!(more.answer_before.as_deref(), Some("unknown"));
    assert_eq!(more.read, ["Eleanor de Bohun", HUMPHREY]);
    assert_eq!(ep.retrieved.len(), 2, "at most two more reads");
    assert_eq!(
        (calls(&ep, CallKind::Action), calls(&ep, CallKind::Final)),
        (2, 2)
    );
    let more = model
        .requests()
        .into_iter()
        .find(|r| kind_of(r) == "more")
        .unwrap();
    assert!(
        !prompt(&more).contains("unsure"),
        "the earlier answer stays out"
    );
}

#[tokio::test]
async fn full_pool_is_one_final_call_over_every_paragraph() {
    let model = std::sync::Arc::new(ScriptedModel::new(vec![json!({"answer": "Mary de Bohun",
        "evidence": [{"title": HUMPHREY, "sentence": 0}, {"title": "Eleanor de Bohun", "sentence": 1}]})
    .to_string()]));
    let q = question();
    let ep = method("full-pool", &[])
        .run(&q, &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(ep.total_calls(), 1);
    assert_eq!(calls(&ep, CallKind::Final), 1);
    let expected =
        final_prompt(&PromptSet::default(), &q.text, &full_pool::whole_pool(&q)).unwrap();
    assert_eq!(
        prompt(&model.requests()[0]),
        expected,
        "EIR's final prompt, whole pool"
    );
    assert!(expected.contains("Joan was a countess."));
    assert_eq!(ep.retrieved.len(), 4);
    assert_eq!(record(ep).support_f1, Some(1.0));
}

fn direct_reply(action: Value) -> String {
    json!({"reasoning": "step", "action": action}).to_string()
}

#[tokio::test]
async fn direct_is_scored_on_its_first_valid_submission_within_h_turns() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match turn_of(req) {
            1 => format!(
                "Let me read. {}",
                direct_reply(json!({"type": "read", "title": HUMPHREY}))
            ),
            2 => direct_reply(json!({"type": "read", "title": "Eleanor de Bohun"})),
            3 => direct_reply(json!({"type": "submit", "answer": ""})),
            4 => direct_reply(json!({"type": "submit", "answer": "Mary de Bohun",
                "evidence": [{"title": "Eleanor de Bohun", "sentence": 1}, {"title": "Joan FitzAlan", "sentence": 0}]})),
            _ => direct_reply(json!({"type": "submit", "answer": "Mary de Bohun",
                "evidence": [{"title": "Eleanor de Bohun", "sentence": 1}]})),
        })
    }));
    let ep = method("direct", &[])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
    assert_eq!(ep.turns.len(), 5);
    // Prose around the JSON is not accepted from Direct (EIR would extract it).
    assert_eq!(
        ep.turns[0].rejection.as_ref().unwrap().cause,
        RejectCause::Unparseable
    );
    assert_eq!(
        ep.turns[2].rejection.as_ref().unwrap().cause,
        RejectCause::EmptyAnswer
    );
    // Citing Joan, never read, is a rejection (EIR App. H.4), not a dropped citation.
    assert_eq!(
        ep.turns[3].rejection.as_ref().unwrap().cause,
        RejectCause::InvalidCitation
    );
    assert_eq!(ep.retrieved, ["Eleanor de Bohun"]);
    assert_eq!(evidence_of(&ep).dropped_citations, 0);
    assert_eq!(ep.total_calls(), 5);
    // Its prompt carries the previous action's returned text only, without the lists
    // (EIR App. B.3): turn 3 sees the paragraph read on turn 2, turn 4 sees only why
    // turn 3 was refused.
    let t3 = prompt(&model.requests()[2]).to_string();
    assert!(t3.contains("Her younger sister"), "{t3}");
    let t4 = prompt(&model.requests()[3]).to_string();
    assert!(t4.contains("rejected (empty_answer)") && !t4.contains("Her younger sister"));
    assert!(!t4.contains("Requirements"));

    // Never submitting: H = 6 turns in all, then no answer.
    let model = std::sync::Arc::new(ScriptedModel::new(vec![direct_reply(
        json!({"type": "read", "title": "x"}),
    )]));
    let ep = method("direct", &[])
        .run(&question(), &RunContext::new(model))
        .await
        .unwrap();
    assert_eq!(
        (ep.turns.len(), ep.answer.clone(), ep.stop),
        (6, None, StopReason::Timeout)
    );
    assert_eq!(ep.retrieved.len(), 4, "the pool ran out after four reads");
    assert_eq!(
        ep.turns[5].rejection.as_ref().unwrap().cause,
        RejectCause::NotAllowed
    );
}

/// SSR script: reads Humphrey, then submits; verifier votes per part are set by `votes`.
fn ssr_model(votes: fn(&str, u32) -> &'static str) -> std::sync::Arc<ScriptedModel> {
    std::sync::Arc::new(ScriptedModel::from_fn(move |req, _| {
        Ok(match kind_of(req) {
            "direct" if turn_of(req) == 1 => {
                direct_reply(json!({"type": "read", "title": HUMPHREY}))
            }
            "direct" => direct_reply(json!({"type": "submit", "answer": "Eleanor de Bohun"})),
            "decompose" => json!({"facts": "mother is Eleanor", "justification": "so read more",
                "action": "read"})
            .to_string(),
            "verify" => {
                let p = prompt(req);
                let part = ["facts", "justification", "action"]
                    .into_iter()
                    .find(|part| p.contains(&format!("Judge only the {part} part")))
                    .unwrap();
                votes(part, req.sample_index).to_string()
            }
            "refine" => direct_reply(json!({"type": "submit", "answer": "Mary de Bohun"})),
            k => panic!("unexpected {k}"),
        })
    }))
}

const ACCEPT: &str = r#"{"verdict": "accept", "correction": ""}"#;

#[tokio::test]
async fn ssr_makes_decomposition_and_nine_verifications_per_action_without_refinement() {
    let model = ssr_model(|_, _| ACCEPT);
    let ep = method("ssr", &[])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    // Two actions (read, submit): 2 proposals, 2 decompositions, 18 verifications.
    assert_eq!(calls(&ep, CallKind::Action), 2);
    assert_eq!(calls(&ep, CallKind::Decomposition), 2);
    assert_eq!(calls(&ep, CallKind::Verification), 18);
    assert_eq!(calls(&ep, CallKind::Refinement), 0);
    assert_eq!(ep.total_calls(), 22);
    assert_eq!(ep.answer.as_deref(), Some("Eleanor de Bohun"));
    let verifications: Vec<ChatRequest> = model
        .requests()
        .into_iter()
        .filter(|r| kind_of(r) == "verify")
        .collect();
    assert!(verifications
        .iter()
        .all(|r| (r.temperature - 0.7).abs() < 1e-6));
    let samples: Vec<u32> = verifications
        .iter()
        .take(3)
        .map(|r| r.sample_index)
        .collect();
    assert_eq!(samples, [0, 1, 2], "three distinct samples per part");
    assert_eq!(
        ep.turns[0].verification.as_ref().unwrap().outcome,
        verification::Outcome::NoPartQualified
    );
}

#[tokio::test]
async fn ssr_refines_once_when_a_part_qualifies() {
    // On the action part: two rejections agreeing on a correction, one invalid reply.
    // On the facts part: two rejections that disagree (does not qualify).
    let model = ssr_model(|part, sample| match (part, sample) {
        ("action", 0) | ("action", 1) => {
            r#"{"verdict": "reject", "correction": "Submit Mary de Bohun."}"#
        }
        ("action", _) => "no idea",
        ("facts", 0) => r#"{"verdict": "reject", "correction": "A"}"#,
        ("facts", 1) => r#"{"verdict": "reject", "correction": "B"}"#,
        _ => ACCEPT,
    });
    let ep = method("ssr", &[])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    // First action refined into a submission: one action, one decomposition, nine
    // verifications, one refinement.
    assert_eq!(
        (
            calls(&ep, CallKind::Action),
            calls(&ep, CallKind::Decomposition),
            calls(&ep, CallKind::Verification),
            calls(&ep, CallKind::Refinement)
        ),
        (1, 1, 9, 1)
    );
    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
    let report = ep.turns[0].verification.as_ref().unwrap();
    let refined = report.refinement.as_ref().unwrap();
    assert_eq!(refined.refined_part, verification::Part::Action);
    assert_eq!(report.votes[2].valid, 2);
    assert!(!report.votes[0].qualifies);
    let refine = model
        .requests()
        .into_iter()
        .find(|r| kind_of(r) == "refine")
        .unwrap();
    assert!(prompt(&refine).contains("Agreed correction: Submit Mary de Bohun."));
}

#[tokio::test]
async fn ssr_falls_back_to_the_agreed_action_correction_when_refinement_is_unreadable() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            "direct" => direct_reply(json!({"type": "read", "title": "Joan FitzAlan"})),
            "decompose" => {
                json!({"facts": "f", "justification": "j", "action": "read Joan"}).to_string()
            }
            "verify" if prompt(req).contains("Judge only the action part") => {
                r#"{"verdict": "reject", "correction": "read Eleanor de Bohun"}"#.into()
            }
            "verify" => ACCEPT.into(),
            "refine" => "I would rather read something else.".into(),
            k => panic!("unexpected {k}"),
        })
    }));
    let ep = method("ssr", &[("reads", "2")])
        .run(&question(), &RunContext::new(model))
        .await
        .unwrap();
    assert_eq!(ep.retrieved[0], "Eleanor de Bohun");
    assert_eq!(
        ep.turns[0].verification.as_ref().unwrap().outcome,
        verification::Outcome::ActionCorrection
    );
}

#[tokio::test]
async fn oracle_stopped_reflexion_never_shows_the_reference_answer() {
    let mut q = question();
    q.answers = vec!["Zanzibar Quillfeather".into()];
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            "reflect" => "Read the mother's paragraph and look for her sister.".into(),
            // The second trial (it has a note) gets it right.
            "direct" if prompt(req).contains("Notes from your earlier attempts") => {
                direct_reply(json!({"type": "submit", "answer": "zanzibar quillfeather"}))
            }
            "direct" => direct_reply(json!({"type": "submit", "answer": "Eleanor de Bohun"})),
            k => panic!("unexpected {k}"),
        })
    }));
    let ep = method("eir-reflexion", &[])
        .run(&q, &RunContext::new(model.clone()))
        .await
        .unwrap();
    for req in model.requests() {
        for m in &req.messages {
            assert!(
                !m.content.to_lowercase().contains("quillfeather"),
                "reference leaked: {}",
                m.content
            );
        }
    }
    assert_eq!(ep.answer.as_deref(), Some("zanzibar quillfeather"));
    assert_eq!(ep.outputs.attempts.len(), 2);
    let first = record(ep.clone()).first_attempt.unwrap();
    assert_eq!(first.answer.as_deref(), Some("Eleanor de Bohun"));
    assert_eq!((first.em, first.calls), (0.0, 1));
    assert_eq!(
        (
            calls(&ep, CallKind::Action),
            calls(&ep, CallKind::Reflection)
        ),
        (2, 1)
    );
    let second = model
        .requests()
        .into_iter()
        .filter(|r| kind_of(r) == "direct")
        .nth(1)
        .unwrap();
    assert!(prompt(&second).contains("Attempt 1: Read the mother's paragraph"));
    assert_eq!(
        ep.turns.iter().map(|t| t.number).collect::<Vec<_>>(),
        [1, 2]
    );
}

#[tokio::test]
async fn reflexion_stops_after_five_trials_without_a_match() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, _| {
        Ok(match kind_of(req) {
            "reflect" => "Try harder.".into(),
            "direct" if turn_of(req) == 1 => {
                direct_reply(json!({"type": "read", "title": HUMPHREY}))
            }
            "direct" => direct_reply(json!({"type": "submit", "answer": "Eleanor de Bohun",
                "evidence": [{"title": HUMPHREY, "sentence": 0}]})),
            k => panic!("unexpected {k}"),
        })
    }));
    let ep = method("eir-reflexion", &[])
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(ep.outputs.attempts.len(), 5);
    assert_eq!(
        (
            calls(&ep, CallKind::Action),
            calls(&ep, CallKind::Reflection)
        ),
        (10, 4)
    );
    assert_eq!(ep.outputs.attempts[0].calls, 2);
    // Each trial starts over: five reads of the same paragraph, one retrieved title.
    assert_eq!(ep.tool_calls, 5);
    assert_eq!(ep.retrieved, [HUMPHREY]);
    let last = model
        .requests()
        .into_iter()
        .rev()
        .find(|r| kind_of(r) == "direct")
        .unwrap();
    let sf1 = record(ep).support_f1.unwrap();
    assert!(
        (sf1 - 2.0 / 3.0).abs() < 1e-9,
        "the last trial's citations: {sf1}"
    );
    // The fifth trial's prompt carries all four notes.
    assert!(prompt(&last).contains("Attempt 4: Try harder."));
}

#[tokio::test]
async fn model_failure_returns_the_partial_episode() {
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|req, i| {
        if i == 0 {
            Ok(eir_script(req))
        } else {
            Err(crate::llm::LlmError::Config("server went away".into()))
        }
    }));
    let err = method("eir", &[])
        .run(&question(), &RunContext::new(model))
        .await
        .unwrap_err();
    let partial = err.partial().expect("partial episode");
    assert_eq!(
        partial.turns.len(),
        2,
        "the finished turn and the one in progress"
    );
    assert_eq!(partial.retrieved, [HUMPHREY]);
    assert_eq!(partial.stop, StopReason::Error);
}

#[test]
fn every_setting_name_builds_and_bad_settings_are_refused() {
    for name in ["eir", "direct", "full-pool", "ssr", "eir-reflexion"] {
        assert_eq!(method(name, &[]).name(), name);
    }
    let settings = [("extra_reads".to_string(), "two".to_string())].into();
    let err = build(
        "eir",
        &MethodConfig::new(
            settings,
            std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
        ),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("extra_reads=two"), "{err}");
}

/// Recovery reads the earlier run through the evaluation layer's typed records
/// (`eval::RecordedRuns`, passed in with the method's configuration): only the `eir`
/// records count, and the final call sees exactly the paragraphs that run read.
#[tokio::test]
async fn recovery_rebuilds_an_earlier_eir_runs_evidence_from_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let earlier = |method: &str, retrieved: &[&str]| {
        let mut r = record(Episode {
            answer: Some("Eleanor de Bohun".into()),
            retrieved: retrieved.iter().map(|t| t.to_string()).collect(),
            ..Episode::default()
        });
        r.method = method.into();
        serde_json::to_string(&r).unwrap()
    };
    let lines = [
        earlier("direct", &["Joan FitzAlan"]),
        earlier("eir", &[HUMPHREY]),
    ];
    std::fs::write(dir.path().join("records.jsonl"), lines.join("\n") + "\n").unwrap();
    let settings = [
        ("from".to_string(), dir.path().display().to_string()),
        ("recover".to_string(), "unchanged".to_string()),
    ]
    .into();
    let mut config = MethodConfig::new(
        settings,
        std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
    );
    let without_reader = build("eir-recover", &config).unwrap();
    config.earlier = Some(std::sync::Arc::new(crate::eval::RecordedRuns));
    let recover = build("eir-recover", &config).unwrap();
    let model = std::sync::Arc::new(ScriptedModel::from_fn(|_, _| {
        Ok(json!({"answer": "Mary de Bohun", "evidence": []}).to_string())
    }));
    let ctx = RunContext::new(model.clone());

    let refused = without_reader.run(&question(), &ctx).await.unwrap_err();
    assert!(
        refused.to_string().contains("MethodConfig::earlier"),
        "{refused}"
    );
    let ep = recover.run(&question(), &ctx).await.unwrap();
    assert_eq!(ep.retrieved, [HUMPHREY]);
    let final_prompt = prompt(&model.requests()[0]).to_string();
    assert!(
        final_prompt.contains(&format!("[{HUMPHREY}]")),
        "{final_prompt}"
    );
    assert!(!final_prompt.contains("Joan FitzAlan"), "{final_prompt}");
    let fc = final_call_of(&ep);
    assert_eq!(fc.retrieval_answer.as_deref(), Some("Eleanor de Bohun"));
    assert_eq!(ep.answer.as_deref(), Some("Mary de Bohun"));
}

/// EIR §3.2 / App. B.1: a batch that fails only the lists' check (here, a citation of an
/// unread sentence) is discarded and the read still runs; a batch that also holds a
/// malformed change is refused, whichever of the two changes comes first.
#[tokio::test]
async fn a_batch_is_refused_when_any_problem_refuses_in_either_order() {
    let unread = json!({"op": "add", "id": "C1", "claim": "aunt is Mary",
        "citations": [{"title": "Eleanor de Bohun", "sentence": 1}]});
    let malformed = json!({"op": "add", "id": "C2", "citations": []});
    let first_turn = |conclusions: Value| async move {
        let model = std::sync::Arc::new(ScriptedModel::from_fn(move |req, _| {
            Ok(match (kind_of(req), turn_of_or_zero(req)) {
                ("eir_action", 1) => json!({"reasoning": "r", "requirements": [],
                    "conclusions": conclusions, "action": {"type": "read", "title": HUMPHREY}})
                .to_string(),
                ("eir_action", _) => json!({"reasoning": "r", "requirements": [],
                    "conclusions": [], "action": {"type": "submit", "answer": "x"}})
                .to_string(),
                ("final", _) => "Answer: x".into(),
                (k, _) => panic!("unexpected {k}"),
            })
        }));
        let ep = method("eir", &[("reads", "3")])
            .run(&question(), &RunContext::new(model))
            .await
            .unwrap();
        ep.turns.into_iter().next().unwrap()
    };
    let discarded = first_turn(json!([unread])).await;
    assert!(discarded.rejection.is_none());
    assert_eq!(
        discarded.discarded_lists.unwrap().cause,
        RejectCause::InvalidCitation
    );
    assert_eq!(discarded.observations.len(), 1, "the read still runs");
    for batch in [json!([unread, malformed]), json!([malformed, unread])] {
        let t = first_turn(batch.clone()).await;
        let why = t.rejection.as_ref().expect("refused");
        assert_eq!(why.cause, RejectCause::MissingField, "{batch}");
        assert!(t.discarded_lists.is_none() && t.observations.is_empty());
    }
}
