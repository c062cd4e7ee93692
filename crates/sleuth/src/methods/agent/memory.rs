//! The memory kind in the loop (SLEUTH paper §3.1–3.2; the ablations, §4 and App. K):
//! what the memory a response writes does to the episode's state.
//!
//! Per [`MemoryKind`]: without a memory nothing is read. The Notes scratchpad is parsed
//! for the trace and carried over as written (the latest non-empty one). Typed sections
//! are parsed, checked against the notation, and merged monotonically (§3.2: "F_t ⊇
//! F_{t−1}"): a confirmed fact the response left out stays in the state, open questions
//! marked resolved or removed move to `resolved`, and under `contradictions=true` (ours,
//! App. M's second extension) a fact contradicting a confirmed one is held out and the
//! model told of it. A response without an Open Questions section resolves nothing, and
//! one without an Active Hypotheses section leaves the hypotheses as they were
//! (`missing_hypotheses=carry`, §3.2 step 2). Adherence is checked with the
//! hypothesis fields `hypothesis_fields` asks for (all four by default, §3.1), prose
//! after a section's entries ending it (`section_prose=ends`, §5.5 and Table 4).

use super::template::render;
use crate::memory::{
    check_adherence_under, parse_memory, writes_section, Conflict, MemoryKind, MergeRules, Merged,
    Section, WorkingMemory,
};
use crate::methods::outputs::MemoryCounts;
use crate::methods::settings::AgentSettings;
use crate::methods::PromptSet;
use crate::methods::{AgentError, Episode, Turn};
use minijinja::context;

/// Parses this turn's memory, records it and its adherence in the turn, and folds it
/// into `state`. Returns what the merge changed besides the state (the confirmed facts
/// the model left out; conflicts raised or still pending).
pub(super) fn fold(
    memory: &MemoryKind,
    settings: &AgentSettings,
    turn: &mut Turn,
    state: &mut WorkingMemory,
) -> Merged {
    if *memory == MemoryKind::None {
        return Merged::default();
    }
    let schema = memory.schema();
    let written = parse_memory(&turn.response, &schema);
    turn.adherent = Some(check_adherence_under(
        &turn.response,
        &schema,
        settings.adherence_rules(),
    ));
    let merged = match memory {
        MemoryKind::Sections(_) => {
            // A response that drifted out of the notation (no Open Questions section at
            // all) resolves nothing: for the merge, its questions are the ones still open.
            let mut folded = written.clone();
            let wrote = |section| writes_section(&turn.response, section);
            if schema.has(Section::Questions) && !wrote(Section::Questions) {
                folded.questions = state.questions.clone();
            }
            // §3.2 step 2 updates H_{t−1}: a response without the Active Hypotheses
            // section updated nothing, so the state keeps its hypotheses (as it keeps
            // facts and open questions); `missing_hypotheses=clear` empties them.
            if schema.has(Section::Hypotheses)
                && !wrote(Section::Hypotheses)
                && settings.carry_hypotheses
            {
                folded.hypotheses = state.hypotheses.clone();
            }
            let rules = MergeRules {
                contradictions: settings.contradictions,
                turn: turn.number,
                fact_id_reuse: settings.fact_id_reuse,
            };
            let merged = state.merge_with(&folded, rules);
            turn.dropped = merged.dropped.iter().map(|f| f.id.clone()).collect();
            turn.resolved = merged.resolved.clone();
            merged
        }
        _ => {
            state.notes = written.notes.clone().or(state.notes.take());
            Merged::default()
        }
    };
    turn.memory = Some(written);
    turn.state = Some(state.clone());
    merged
}

/// The observation telling the model of the contradictions this turn raised and of
/// the open ones its memory left out, if any (contradiction detection, ours).
pub(super) fn conflict_note(
    merged: &Merged,
    state: &WorkingMemory,
    prompts: &PromptSet,
) -> Result<Option<String>, AgentError> {
    if merged.raised.is_empty() && merged.pending.is_empty() {
        return Ok(None);
    }
    let entry = |c: &Conflict| {
        let fact = state
            .facts
            .iter()
            .find(|f| f.id == c.confirmed)
            .map_or(String::new(), |f| f.statement.clone());
        context! {
            question => &c.question,
            confirmed => &c.confirmed,
            fact,
            claim => &c.claim.statement,
        }
    };
    let raised: Vec<_> = merged.raised.iter().map(entry).collect();
    let pending: Vec<_> = merged.pending.iter().map(entry).collect();
    let note = render(prompts, "conflicts.txt", context! { raised, pending })?;
    Ok(Some(note.trim_end().to_string()))
}

/// The episode's memory outputs, for a typed memory: per turn the confirmed facts,
/// hypotheses and open questions in the state, and the last state's conflicts.
pub(super) fn summarize(memory: &MemoryKind, episode: &mut Episode) {
    if memory.typed().is_none() {
        return;
    }
    episode.outputs.memory_counts = episode
        .turns
        .iter()
        .filter_map(|t| t.state.as_ref())
        .map(|s| MemoryCounts {
            facts: s.facts.len(),
            hypotheses: s.hypotheses.len(),
            questions: s.questions.len(),
        })
        .collect();
    if let Some(state) = episode.turns.iter().rev().find_map(|t| t.state.as_ref()) {
        episode.outputs.contradictions = state.conflicts.clone();
    }
}
