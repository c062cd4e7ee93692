//! Parser, adherence and merge tests on responses written the way models write them.

use super::*;

const FULL: &str = "\
Confirmed Facts:
- [F1] \"Mingus Plays Piano\" is an album by Charles Mingus (source: Mingus Plays Piano)
- **[F2]** Charles Mingus was born in Nogales, Arizona (source: Charles Mingus)
Active Hypotheses:
- [H1] Phoenix | confidence: medium | supports: F2 | contradicts: -
Open Questions:
- [Q1] What is the largest city in Arizona? | action: largest city Arizona | priority: high
- [Q2] Who won the IndyCar race there? | action: IndyCar Phoenix winner | priority: medium
Action: search[largest city Arizona]";

#[test]
fn parses_all_three_sections() {
    let m = parse_memory(FULL, &MemorySchema::full());
    assert_eq!(m.facts.len(), 2);
    assert_eq!(m.facts[1].id, "F2");
    assert_eq!(m.facts[1].source.as_deref(), Some("Charles Mingus"));
    assert_eq!(m.hypotheses[0].confidence, Some(Confidence::Medium));
    assert_eq!(m.hypotheses[0].supports, vec!["F2"]);
    assert!(m.hypotheses[0].contradicts.is_empty());
    assert_eq!(m.questions.len(), 2);
    assert_eq!(m.top_question().unwrap().id, "Q1");
    assert_eq!(
        m.questions[1].action.as_deref(),
        Some("IndyCar Phoenix winner")
    );
}

#[test]
fn adherence_requires_every_section_in_notation() {
    let schema = MemorySchema::full();
    assert!(check_adherence(FULL, &schema));
    let no_questions = FULL.replace("Open Questions:", "Questions we have:");
    assert!(!check_adherence(&no_questions, &schema));
    let no_source = FULL.replace(" (source: Charles Mingus)", "");
    assert!(!check_adherence(&no_source, &schema));
    let free_text = FULL.replace(
        "- [H1] Phoenix | confidence: medium",
        "Maybe Phoenix, medium",
    );
    assert!(!check_adherence(&free_text, &schema));
    let empty = "Confirmed Facts:\n- none\nActive Hypotheses:\nnone yet\nOpen Questions:\n- [Q1] Who? | action: who | priority: high\nAction: search[who]";
    assert!(check_adherence(empty, &schema));
}

#[test]
fn ablation_schema_ignores_other_sections() {
    let facts_only = MemorySchema::of(&[Section::Facts]);
    let m = parse_memory(FULL, &facts_only);
    assert_eq!(m.facts.len(), 2);
    assert!(m.hypotheses.is_empty() && m.questions.is_empty());
    assert!(check_adherence(
        "Confirmed Facts:\n- [F1] x (source: y)\nAction: finish[x]",
        &facts_only
    ));
}

#[test]
fn facts_are_monotonic_and_dropped_ones_reported() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    assert!(state.merge(&parse_memory(FULL, &schema)).dropped.is_empty());
    let later = "Confirmed Facts:\n- [F2] Charles Mingus was born in Nogales, Arizona (source: Charles Mingus)\n- [F3] Phoenix is the largest city in Arizona (source: Tucson, Arizona)\nAction: finish[x]";
    let dropped = state.merge(&parse_memory(later, &schema)).dropped;
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].id, "F1");
    assert_eq!(state.facts.len(), 3);
    assert!(
        state.questions.is_empty(),
        "questions follow the latest memory"
    );
}

#[test]
fn a_reworded_fact_updates_its_id_and_adds_nothing() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    state.merge(&parse_memory(
        "Confirmed Facts:\n- [F1] a is b (source: A)",
        &schema,
    ));
    state.merge(&parse_memory(
        "Confirmed Facts:\n- [F1] a is b, reworded (source: A)",
        &schema,
    ));
    let m = state.merge(&parse_memory(
        "Confirmed Facts:\n- [F1] a is b, reworded (source: A)\n- [F2] c is d (source: C)",
        &schema,
    ));
    assert!(m.dropped.is_empty(), "a rewording drops nothing");
    let ids: Vec<_> = state.facts.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["F1", "F2"]);
    assert_eq!(state.facts[0].statement, "a is b, reworded");
}

#[test]
fn render_round_trips_through_the_parser() {
    let schema = MemorySchema::full();
    let m = parse_memory(FULL, &schema);
    let text = m.render(&schema);
    assert!(check_adherence(&text, &schema));
    assert_eq!(parse_memory(&text, &schema), m);
}

#[test]
fn notes_section_is_free_text() {
    let schema = MemorySchema::of(&[Section::Notes]);
    let m = parse_memory(
        "Notes:\nMingus -> Arizona\nlargest city?\nAction: search[x]",
        &schema,
    );
    assert_eq!(m.notes.as_deref(), Some("Mingus -> Arizona\nlargest city?"));
}

#[test]
fn questions_resolve_by_mark_or_removal_and_stay_recorded() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    let first = "Open Questions:\n- [Q1] Who performed Mingus Plays Piano? | action: Mingus Plays Piano | priority: high\n- [Q2] Where was the performer born? | action: performer birthplace | priority: medium\n- [Q3] Largest city there? | action: largest city | priority: low";
    let m = state.merge(&parse_memory(first, &schema));
    assert!(m.resolved.is_empty());
    assert!(!state.all_questions_resolved());
    // Q1 marked, Q2 removed (answered), Q3 still open.
    let second = "Open Questions:\n- [Q1] Who performed Mingus Plays Piano? (resolved)\n- [Q3] Largest city there? | action: largest city | priority: high";
    assert!(check_adherence(
        &format!("Confirmed Facts:\n- none\nActive Hypotheses:\n- none\n{second}"),
        &schema
    ));
    let m = state.merge(&parse_memory(second, &schema));
    assert_eq!(m.resolved, ["Q1", "Q2"]);
    assert_eq!(state.questions.len(), 1);
    assert_eq!(state.resolved[0].text, "Who performed Mingus Plays Piano?");
    assert!(!state.all_questions_resolved());
    let third = "Open Questions:\n- [Q3] Largest city there? | action: largest city | priority: high | status: resolved";
    assert_eq!(state.merge(&parse_memory(third, &schema)).resolved, ["Q3"]);
    assert!(state.all_questions_resolved());
    assert_eq!(state.resolved.len(), 3);
}

#[test]
fn a_response_without_the_questions_section_is_told_apart() {
    assert!(writes_section(
        "Open Questions:\n- none",
        Section::Questions
    ));
    assert!(!writes_section(
        "Confirmed Facts:\n- [F1] x (source: y)\nAction: search[z]",
        Section::Questions
    ));
}

const DETECT: MergeRules = MergeRules {
    contradictions: true,
    turn: 0,
};

fn turn(n: u32) -> MergeRules {
    MergeRules { turn: n, ..DETECT }
}

const SEAT: &str = "Confirmed Facts:\n- [F1] Stanley is the county seat of Mountrail County (source: Mountrail County) | confidence: high\nOpen Questions:\n- [Q1] Who founded Stanley? | action: Stanley founder | priority: high";
const OTHER_SEAT: &str = "Confirmed Facts:\n- [F1] Stanley is the county seat of Mountrail County (source: Mountrail County) | confidence: high\n- [F2] The county seat of Mountrail County is Williston (source: Williston) | confidence: low | triple: Mountrail County ; county seat ; Williston\nOpen Questions:\n- [Q1] Who founded Stanley? | action: Stanley founder | priority: high";

#[test]
fn fact_fields_parse_and_render_back_without_breaking_adherence() {
    let schema = MemorySchema::of(&[Section::Facts, Section::Questions]);
    let m = parse_memory(OTHER_SEAT, &schema);
    assert!(check_adherence(OTHER_SEAT, &schema));
    assert_eq!(m.facts[0].confidence, Some(Confidence::High));
    assert_eq!(m.facts[0].source.as_deref(), Some("Mountrail County"));
    assert_eq!(m.facts[0].triple, None);
    let f2 = &m.facts[1];
    assert_eq!(
        f2.statement,
        "The county seat of Mountrail County is Williston"
    );
    assert_eq!(f2.confidence, Some(Confidence::Low));
    assert_eq!(f2.triple.as_ref().unwrap().value, "Williston");
    assert_eq!(parse_memory(&m.render(&schema), &schema), m);
    // A `|` that starts no known field stays in the statement.
    let piped = parse_memory(
        "Confirmed Facts:\n- [F1] A | B is a band (source: A | B)",
        &schema,
    );
    assert_eq!(piped.facts[0].statement, "A | B is a band");
}

#[test]
fn without_detection_a_contradicting_fact_merges_beside_the_confirmed_one() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    state.merge(&parse_memory(SEAT, &schema));
    let m = state.merge(&parse_memory(OTHER_SEAT, &schema));
    assert!(m.raised.is_empty());
    assert_eq!(
        state.facts.len(),
        2,
        "the paper's monotonic merge keeps both"
    );
}

#[test]
fn a_contradicting_fact_is_held_out_and_raised_as_a_high_priority_question() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    state.merge_with(&parse_memory(SEAT, &schema), turn(1));
    let m = state.merge_with(&parse_memory(OTHER_SEAT, &schema), turn(2));
    assert_eq!(state.facts.len(), 1, "the claim is not merged");
    assert_eq!(m.raised.len(), 1);
    let c = &state.conflicts[0];
    assert_eq!(
        (c.question.as_str(), c.confirmed.as_str(), c.raised),
        ("Q2", "F1", 2)
    );
    assert!(c.is_open());
    let q = state.questions.iter().find(|q| q.id == "Q2").unwrap();
    assert_eq!(q.priority, Some(Priority::High));
    assert!(
        q.text.contains("Williston") && q.text.contains("[F1]"),
        "{}",
        q.text
    );
    // The model leaves the question out and keeps writing the claim: the conflict stays
    // open (and pending), the claim stays held, nothing is raised twice.
    let m = state.merge_with(&parse_memory(OTHER_SEAT, &schema), turn(3));
    assert!(m.raised.is_empty());
    assert_eq!(m.pending.len(), 1);
    assert!(
        m.resolved.is_empty(),
        "leaving a conflict out does not resolve it"
    );
    assert_eq!(state.facts.len(), 1);
    assert!(!state.all_questions_resolved());
}

fn settle(facts: &str) -> WorkingMemory {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    state.merge_with(&parse_memory(SEAT, &schema), turn(1));
    state.merge_with(&parse_memory(OTHER_SEAT, &schema), turn(2));
    let settling = format!(
        "Confirmed Facts:\n{facts}\nOpen Questions:\n- [Q1] Who founded Stanley? | action: Stanley founder | priority: high\n- [Q2] which seat? (resolved)"
    );
    let m = state.merge_with(&parse_memory(&settling, &schema), turn(4));
    assert_eq!(m.resolved, ["Q2"]);
    state
}

#[test]
fn marking_the_conflict_resolved_settles_it_by_the_values_written() {
    let stanley =
        "- [F1] Stanley is the county seat of Mountrail County (source: Mountrail County)";
    let williston = "- [F2] The county seat of Mountrail County is Williston (source: Williston)";

    let kept = settle(stanley);
    assert_eq!(kept.conflicts[0].resolution, Some(Resolution::Kept));
    assert_eq!(kept.conflicts[0].settled, Some(4));
    assert_eq!(kept.facts.len(), 1);

    let replaced = settle(williston);
    assert_eq!(replaced.conflicts[0].resolution, Some(Resolution::Replaced));
    let statements: Vec<&str> = replaced
        .facts
        .iter()
        .map(|f| f.statement.as_str())
        .collect();
    assert_eq!(
        statements,
        ["The county seat of Mountrail County is Williston"]
    );
    assert_eq!(replaced.retracted[0].id, "F1");

    let both = settle(&format!("{stanley}\n{williston}"));
    assert_eq!(both.conflicts[0].resolution, Some(Resolution::Both));
    assert_eq!(both.facts.len(), 2);
    assert!(both.questions.iter().all(|q| q.id != "Q2"));
}
