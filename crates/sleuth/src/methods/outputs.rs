//! What a method produced besides its answer and trace, as types.
//!
//! Each family of methods fills its own outputs while it runs (the episode's type
//! parameter, as tantivy's `Collector::Fruit`): the EIR trajectory an [`EirOutputs`],
//! whose evidence exists from the first turn. A finished episode carries [`Outputs`],
//! the record's one shape: each field belongs to the methods that produce it and stays
//! empty otherwise, so a record's shape is the same for every method and reports read
//! fields, never names in a map. A family's outputs become it by `From`, field for field
//! (the record format, `docs/records.md`, does not depend on which family wrote it).
//! Scores of these outputs (Support F1, gold recall, the first attempt's EM) are not
//! computed here: `eval::metrics` computes them once, from what was cited and read.

use super::eir::{Citation, Lists, RejectCause};
use super::stop::StopReason;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outputs {
    /// Working-memory methods: the merged memory's size after each turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_counts: Vec<MemoryCounts>,
    /// EIR-setting methods: the evidence the scored answer rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Retry wrappers (both Reflexions): one summary per attempt, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptSummary>,
    /// Retry wrappers: the reflection written after each failed attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reflections: Vec<String>,
    /// EIR: the retrieval trajectory's own result and the separate final call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_call: Option<FinalCall>,
    /// `nudge=adaptive`: when the nudge fired and which condition of the memory fired it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitment: Option<Commitment>,
    /// `contradictions=true`: every contradiction raised, open or settled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contradictions: Vec<crate::memory::Conflict>,
}

/// The EIR setting's outputs (its trajectory, Full Pool): the evidence the scored answer
/// rests on, and the final call when the method answers by one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EirOutputs {
    pub evidence: Evidence,
    pub final_call: Option<FinalCall>,
}

impl From<EirOutputs> for Outputs {
    fn from(o: EirOutputs) -> Self {
        Outputs {
            evidence: Some(o.evidence),
            final_call: o.final_call,
            ..Outputs::default()
        }
    }
}

/// The adaptive nudge's firing: the turn it was given with and the condition that held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commitment {
    pub turn: u32,
    pub condition: super::settings::AdaptiveCondition,
}

/// Sizes of the merged working memory after one turn (SLEUTH paper App. J's dynamics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCounts {
    pub facts: usize,
    pub hypotheses: usize,
    pub questions: usize,
}

/// The evidence of an EIR-setting answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Citations of read sentences the scored answer rests on (titles as shown).
    pub cited: Vec<Citation>,
    /// Citations dropped because they named no read sentence.
    pub dropped_citations: usize,
    /// Proposed actions the framework refused, by cause (EIR paper §3.2: validated
    /// all-or-nothing; a refused action still uses its turn).
    pub rejected: BTreeMap<RejectCause, u32>,
}

impl Evidence {
    pub fn rejected_total(&self) -> u32 {
        self.rejected.values().sum()
    }
}

/// One attempt of a retry wrapper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptSummary {
    pub answer: Option<String>,
    pub stop: StopReason,
    pub turns: u32,
    pub calls: u32,
    /// Titles (or ids) the attempt retrieved, in order.
    pub retrieved: Vec<String>,
    /// The attempt's citations (EIR setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited: Option<Vec<Citation>>,
    /// The attempt's tokens, and those a provider served (not sleuth's cache): the
    /// first trial's cost is priced from them (EIR §4.2, Table 1's first-trial row).
    #[serde(default)]
    pub usage: crate::llm::Usage,
    #[serde(default)]
    pub billed_usage: crate::llm::Usage,
}

/// EIR's two answers: the one submitted during retrieval and the final call's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalCall {
    /// The final call's response, verbatim.
    pub response: String,
    /// Whether the final response could be read.
    pub parsed: bool,
    /// Why the final response's citations were refused (EIR App. H.4: an invalid
    /// citation or a wrong type; `final_citations` says whether the answer stood).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<super::eir::Rejection>,
    /// The answer submitted during retrieval (EIR paper App. H.4 compares the two).
    pub retrieval_answer: Option<String>,
    pub retrieval_evidence: Vec<Citation>,
    /// The trajectory ended without a submission (budget spent or overflow).
    pub forced_end: bool,
    /// The Requirements and Conclusions lists at the end of retrieval.
    pub lists: Lists,
    /// Evidence records collected (one per read sentence).
    pub evidence_records: usize,
    /// Dependency-repair control: one entry per repair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<Repair>,
    /// Additional-retrieval control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_reads: Option<ExtraReads>,
}

/// One dependency-repair call (EIR App. E.3): the first revises the conclusions that
/// depend on those just revised, the second refreshes the requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repair {
    pub turn: u32,
    /// `conclusions` or `requirements`.
    pub part: RepairPart,
    /// Conclusions depending on the revised ones.
    pub affected: Vec<String>,
    pub response: Option<String>,
    /// The reply's changes passed the checks (whether or not they were applied).
    pub valid: bool,
    /// The changes were applied (never under `dependency_repair=unapplied`).
    pub applied: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Which list a repair call changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairPart {
    Conclusions,
    Requirements,
}

/// The additional-retrieval control (EIR App. F.4; `recover=selected` reuses it for F.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraReads {
    pub requested: Vec<String>,
    pub read: Vec<String>,
    pub answer_before: Option<String>,
    /// What stood when the extra reading began (App. F.4 reports Support F1, the share
    /// of annotated paragraphs read and calls before and after it); absent from records
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<BeforeExtraReads>,
}

/// The first final answer's citations and the calls made up to and including it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeExtraReads {
    pub cited: Vec<Citation>,
    pub calls: u32,
}
