//! Integration tests: the rules a cold read of the EIR paper against the code found bent
//! or untested (after issue 28's ten items), one test per rule, through `sleuth eval`
//! and `sleuth report` against a local scripted server. Each test prints the numbers it
//! checks (`-- --nocapture`); the fidelity ledger (`docs/fidelity/eir.md`) names them.

use crate::agents::read_records;
use crate::eir_fidelity::{eir_action, is_final, prompt, turn};
use crate::golden::fixture;
use crate::util::*;
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

/// The titles an action prompt lists as unread, in pool order.
fn unread(p: &str) -> Vec<String> {
    p.split("Unread titles:\n")
        .nth(1)
        .unwrap_or("")
        .lines()
        .map_while(|l| l.strip_prefix("- "))
        .map(str::to_string)
        .collect()
}

/// The action prompt of turn `n` the server received.
fn prompt_of_turn(server: &MockServer, n: u32) -> String {
    server
        .requests()
        .iter()
        .map(prompt)
        .find(|p| !is_final(p) && turn(p) == n)
        .unwrap_or_else(|| panic!("no prompt of turn {n}"))
}

/// Whether a record counted no refused action.
fn nothing_rejected(r: &Value) -> bool {
    r["outputs"]["evidence"]["rejected"]
        .as_object()
        .is_none_or(|m| m.is_empty())
}

// ------------------------------------ finding 1: invalid list changes (§3.2, B.1)

/// EIR: turn 1 adds a requirement and a conclusion citing a sentence of a paragraph it
/// has not read, and reads the first unread title; turn 2 reads the next; turn 3 submits.
fn cites_before_reading(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if is_final(&p) {
        return Reply::text(json!({"answer": "Stanley", "evidence": []}).to_string());
    }
    let titles = unread(&p);
    match turn(&p) {
        1 => Reply::text(
            json!({"reasoning": "r",
                "requirements": [{"op": "add", "id": "R1", "text": "the county seat"}],
                "conclusions": [{"op": "add", "id": "C1", "claim": "the seat is Stanley",
                    "citations": [{"title": titles[1], "sentence": 0}]}],
                "action": {"type": "read", "title": titles[0]}})
            .to_string(),
        ),
        2 => eir_action(json!({"type": "read", "title": titles[0]})),
        _ => eir_action(json!({"type": "submit", "answer": "Stanley"})),
    }
}

/// EIR §3.2 ("discards any change that fails this check") and B.1 (both lists stay
/// unchanged): by default an invalid list change is discarded, its cause recorded on the
/// turn and told to the model, and the turn's action still runs; `list_errors=refuse`
/// refuses the whole turn (the other reading).
#[test]
fn an_invalid_list_change_is_discarded_and_the_action_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, set: Option<&str>| {
        let server = MockServer::spawn(cites_before_reading);
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(name);
        let mut e = Eval::new("musique", fixture("musique"), "eir", &url, &out).opt("--limit", 1);
        if let Some(s) = set {
            e = e.set(s);
        }
        e.ok();
        (read_records(&out).remove(0), server)
    };
    let (r, server) = run("discard", None);
    let first = &r["trace"][0];
    println!(
        "discard: setting {}, turn 1 rejection {}, discarded {}, retrieved {}, rejected {}",
        r["settings"]["list_errors"],
        first["rejection"],
        first["discarded_lists"]["cause"],
        r["retrieved"],
        r["outputs"]["evidence"]["rejected"]
    );
    assert_eq!(r["settings"]["list_errors"], "discard");
    assert!(first["rejection"].is_null(), "{first}");
    assert_eq!(first["discarded_lists"]["cause"], "invalid_citation");
    assert!(first["discarded_lists"]["message"]
        .as_str()
        .unwrap()
        .contains("have not been read"));
    assert_eq!(first["actions"].as_array().unwrap().len(), 1, "the read ran");
    let lists = &first["lists"];
    assert!(
        lists["requirements"].as_array().unwrap().is_empty()
            && lists["conclusions"].as_array().unwrap().is_empty(),
        "both lists unchanged, R1 included: {lists}"
    );
    assert_eq!(r["retrieved"].as_array().unwrap().len(), 2);
    assert!(nothing_rejected(&r), "a discarded change is no rejection");
    assert!(prompt_of_turn(&server, 1).contains("but the action is still carried out"));
    let second = prompt_of_turn(&server, 2);
    assert!(
        second.contains("Your list changes on turn 1 were not applied (invalid_citation)"),
        "{second}"
    );

    let (r, server) = run("refuse", Some("list_errors=refuse"));
    let first = &r["trace"][0];
    println!(
        "refuse: turn 1 rejection {}, retrieved {}, rejected {}",
        first["rejection"]["cause"], r["retrieved"], r["outputs"]["evidence"]["rejected"]
    );
    assert_eq!(r["settings"]["list_errors"], "refuse");
    assert_eq!(first["rejection"]["cause"], "invalid_citation");
    assert!(first["actions"].as_array().unwrap().is_empty());
    assert_eq!(r["retrieved"].as_array().unwrap().len(), 1);
    assert_eq!(
        r["outputs"]["evidence"]["rejected"],
        json!({"invalid_citation": 1})
    );
    assert!(prompt_of_turn(&server, 1).contains("and the action is not carried out"));
}

// --------------------------- finding 4: the final call's invalid citations (H.4)

/// EIR reads the first unread title and submits; Full Pool has every paragraph. The
/// final answer cites the first paragraph of its evidence twice: sentence 0, which it
/// was shown, and sentence 99, which does not exist.
fn final_cites_a_sentence_not_shown(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if is_final(&p) {
        let first = crate::eir_fidelity::evidence_titles(&p)[0].clone();
        return Reply::text(
            json!({"answer": "Stanley", "evidence": [
                {"title": first, "sentence": 0}, {"title": first, "sentence": 99}]})
            .to_string(),
        );
    }
    match turn(&p) {
        1 => eir_action(json!({"type": "read", "title": unread(&p)[0]})),
        _ => eir_action(json!({"type": "submit", "answer": "RETRIEVAL"})),
    }
}

/// EIR App. H.4 (invalid citations are a cause of rejection): a final response citing a
/// sentence not in its evidence has those citations refused with the cause in the
/// record (`outputs.final_call.rejection`), never dropped in silence; by default the
/// answer stands (`final_citations=keep_answer`), and `final_citations=reject_answer`
/// rejects the whole response (no answer, an unreadable output).
#[test]
fn the_final_call_refuses_citations_of_sentences_not_in_its_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, set: Option<&str>| {
        let server = MockServer::spawn(final_cites_a_sentence_not_shown);
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(name);
        let mut e = Eval::new("musique", fixture("musique"), "eir,full-pool", &url, &out)
            .opt("--limit", 1);
        if let Some(s) = set {
            e = e.set(s);
        }
        e.ok();
        read_records(&out)
    };
    for r in run("keep", None) {
        let method = r["method"].as_str().unwrap();
        let f = &r["outputs"]["final_call"];
        println!(
            "{method} keep_answer: answer {}, rejection {}, cited {}, dropped {}, support F1 {}",
            r["answer"],
            f["rejection"],
            r["outputs"]["evidence"]["cited"],
            r["outputs"]["evidence"]["dropped_citations"],
            r["support_f1"]
        );
        assert_eq!(r["settings"]["final_citations"], "keep_answer", "{method}");
        assert_eq!(r["answer"], "Stanley", "{method}");
        assert_eq!(f["rejection"]["cause"], "invalid_citation", "{method}");
        assert!(
            f["rejection"]["message"]
                .as_str()
                .unwrap()
                .contains("\"Port Blair\" sentence 99"),
            "{method}: {f}"
        );
        assert_eq!(
            r["outputs"]["evidence"]["cited"],
            json!([{"title": "Port Blair", "sentence": 0}]),
            "{method}"
        );
        assert_eq!(r["outputs"]["evidence"]["dropped_citations"], 1);
        // The final call is no action: Table 22's counts leave it out.
        assert!(nothing_rejected(&r), "{method}");
    }
    for r in run("reject", Some("final_citations=reject_answer")) {
        let method = r["method"].as_str().unwrap();
        let f = &r["outputs"]["final_call"];
        println!(
            "{method} reject_answer: answer {}, stop {}, parsed {}, rejection {}",
            r["answer"], r["stop"], f["parsed"], f["rejection"]["cause"]
        );
        assert!(r["answer"].is_null(), "{method}: {r}");
        assert_eq!(r["stop"], "parse_failure", "{method}");
        assert_eq!(f["parsed"], false, "{method}");
        assert_eq!(f["rejection"]["cause"], "invalid_citation", "{method}");
        assert_eq!(r["em"], 0.0, "{method}");
    }
}
