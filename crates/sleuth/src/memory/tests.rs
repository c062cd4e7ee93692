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

/// §3.1, §3.2 step 1: a different fact under a confirmed id (a renumbered list) is
/// kept beside the first under a fresh id; `FactIdReuse::Rewording` overwrites it.
#[test]
fn a_different_fact_under_a_confirmed_id_is_added_not_overwritten() {
    let schema = MemorySchema::full();
    let first = "Confirmed Facts:\n- [F1] Charles Mingus was a jazz bassist (source: Charles Mingus)\n- [F2] Phoenix is the largest city in Arizona (source: Phoenix)";
    let renumbered = "Confirmed Facts:\n- [F1] Charles Mingus was born in Nogales, Arizona (source: Charles Mingus)";
    let mut state = WorkingMemory::default();
    state.merge(&parse_memory(first, &schema));
    let m = state.merge(&parse_memory(renumbered, &schema));
    let ids: Vec<_> = state.facts.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["F1", "F2", "F3"]);
    assert_eq!(
        state.facts[0].statement,
        "Charles Mingus was a jazz bassist"
    );
    assert!(state.facts[2].statement.ends_with("Nogales, Arizona"));
    let dropped: Vec<_> = m.dropped.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(dropped, ["F1", "F2"]);
    // Written again, it is the fact already held; reworded, it updates F3.
    state.merge(&parse_memory(renumbered, &schema));
    assert_eq!(state.facts.len(), 3);
    let reworded = renumbered.replace("Arizona (", "Arizona, in 1922 (");
    let m = state.merge(&parse_memory(&reworded, &schema));
    assert_eq!(state.facts.len(), 3);
    assert!(state.facts[2].statement.ends_with("in 1922"));
    assert_eq!(state.facts[2].id, "F3");
    assert!(!m.dropped.iter().any(|f| f.id == "F3"));

    let rewording = MergeRules {
        fact_id_reuse: FactIdReuse::Rewording,
        ..MergeRules::default()
    };
    let mut state = WorkingMemory::default();
    state.merge_with(&parse_memory(first, &schema), rewording);
    state.merge_with(&parse_memory(renumbered, &schema), rewording);
    assert_eq!(state.facts.len(), 2);
    assert!(state.facts[0].statement.ends_with("Nogales, Arizona"));
}

/// §3.1, App. K: a hypothesis line carries confidence, supports and contradicts (each
/// possibly empty); `HypothesisFields::Confidence` asks for the confidence alone.
#[test]
fn a_hypothesis_needs_its_four_fields_unless_asked_for_the_confidence_alone() {
    let schema = MemorySchema::full();
    let with = |h: &str| {
        FULL.replace(
            "- [H1] Phoenix | confidence: medium | supports: F2 | contradicts: -",
            h,
        )
    };
    let cases = [
        (
            "- [H1] Phoenix | confidence: medium | supports: F2 | contradicts: -",
            true,
            true,
        ),
        (
            "- [H1] Phoenix | confidence: medium | supports: | contradicts:",
            true,
            true,
        ),
        (
            "- [H1] Phoenix | confidence: medium | supports: F2",
            false,
            true,
        ),
        ("- [H1] Phoenix | confidence: medium", false, true),
        (
            "- [H1] Phoenix | supports: F2 | contradicts: -",
            false,
            false,
        ),
    ];
    for (line, all, confidence) in cases {
        let text = with(line);
        assert_eq!(check_adherence(&text, &schema), all, "{line}");
        assert_eq!(
            check_adherence_with(&text, &schema, HypothesisFields::All),
            all,
            "{line}"
        );
        let lenient = check_adherence_with(&text, &schema, HypothesisFields::Confidence);
        assert_eq!(lenient, confidence, "{line}");
    }
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

/// §3.2 step 2: a response that writes no Active Hypotheses section is told apart from
/// one that writes it empty (the fold keeps the state's hypotheses only for the first).
#[test]
fn a_response_without_the_hypotheses_section_is_told_apart() {
    let empty = "Active Hypotheses:\n- none\nAction: search[z]";
    assert!(writes_section(empty, Section::Hypotheses));
    assert!(parse_memory(empty, &MemorySchema::full())
        .hypotheses
        .is_empty());
    assert!(!writes_section(
        "Confirmed Facts:\n- [F1] x (source: y)\nOpen Questions:\n- none\nAction: search[z]",
        Section::Hypotheses
    ));
}

const DETECT: MergeRules = MergeRules {
    contradictions: true,
    turn: 0,
    fact_id_reuse: FactIdReuse::Check,
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

/// Delimiter lines end a section; prose after a section's entries ends it under
/// `SectionProse::Ends` and is judged as an entry under `Judged`; `none`-style bullets
/// are placeholders; prose in place of the entries is still not adherent.
#[test]
fn delimiters_and_prose_end_a_section_and_none_bullets_are_placeholders() {
    use crate::memory::{check_adherence_under, AdherenceRules, SectionProse};
    let schema = MemorySchema::full();
    let delimited = "=== WORKING MEMORY ===\nConfirmed Facts:\n- No facts confirmed yet.\nActive Hypotheses:\n- None so far.\nOpen Questions:\n- [Q1] Who? | action: who | priority: high\n=== END WORKING MEMORY ===\nAction: search[who]";
    assert!(check_adherence(delimited, &schema));
    let prose = delimited.replace(
        "=== END WORKING MEMORY ===",
        "\nI will search for the person first.",
    );
    assert!(check_adherence(&prose, &schema));
    let judged = AdherenceRules {
        prose: SectionProse::Judged,
        ..AdherenceRules::default()
    };
    assert!(!check_adherence_under(&prose, &schema, judged));
    let resolved = delimited.replace(
        "- [Q1] Who? | action: who | priority: high",
        "- None remaining; all resolved.",
    );
    assert!(check_adherence(&resolved, &schema));
    let prose_facts = delimited.replace(
        "- No facts confirmed yet.",
        "Mingus was born in Nogales (source: Charles Mingus)",
    );
    assert!(!check_adherence(&prose_facts, &schema));
    let sourceless = delimited.replace(
        "- No facts confirmed yet.",
        "- [F1] Mingus was born in Nogales",
    );
    assert!(!check_adherence(&sourceless, &schema));
}

/// §3.1: a header is a section's name and a colon (or the name alone); a prose line
/// that opens with the same words starts no section, so the check (Table 4) judges
/// the memory the model wrote and not the sentence that mentions it.
#[test]
fn a_prose_line_naming_a_section_opens_none() {
    let schema = MemorySchema::full();
    let reply = format!(
        "Confirmed facts so far point to Nogales, but the city is still open.\n\
         Notes from the last search: nothing useful.\n{FULL}"
    );
    assert!(check_adherence(&reply, &schema));
    assert_eq!(parse_memory(&reply, &schema).facts.len(), 2);
    for header in [
        "## Confirmed Facts",
        "**Confirmed Facts:**",
        "CONFIRMED FACTS (with sources):",
        "=== Confirmed Facts ===",
    ] {
        let text = FULL.replace("Confirmed Facts:", header);
        assert!(check_adherence(&text, &schema), "{header}");
        assert_eq!(parse_memory(&text, &schema).facts.len(), 2, "{header}");
    }
    // A section restated after the reasoning: each section holding entries is judged.
    let broken_again = format!("{FULL}\nConfirmed Facts:\n- [F3] a fact without its source");
    assert!(!check_adherence(&broken_again, &schema));
}

/// §3.1 (facts are never retracted): a fact written again with more detail under its
/// id updates that fact; it is not a second fact, and nothing is dropped.
#[test]
fn an_elaborated_fact_updates_its_id() {
    let schema = MemorySchema::full();
    let mut state = WorkingMemory::default();
    state.merge(&parse_memory(
        "Confirmed Facts:\n- [F1] Mingus Plays Piano is an album (source: Mingus Plays Piano)",
        &schema,
    ));
    let m = state.merge(&parse_memory(
        "Confirmed Facts:\n- [F1] Mingus Plays Piano is an album by Charles Mingus, recorded in July 1963 for Impulse! Records (source: Mingus Plays Piano)",
        &schema,
    ));
    assert_eq!(state.facts.len(), 1);
    assert!(state.facts[0].statement.ends_with("Impulse! Records"));
    assert!(m.dropped.is_empty());
}
