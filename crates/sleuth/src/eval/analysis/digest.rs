//! What the analyses read of a record, computed once while the records stream in: a
//! record's scores, usage, outcome inputs and a few numbers per turn, never its trace
//! text (issue 32). A ReAct record of 10 turns is about 12 KB on disk and held whole
//! it took about 24 KB; with its digest instead, `report` on 100,000 such records peaks
//! at 121 MiB (2.4 GB before; `run-bench`, the README's figures). Every value here is
//! computed by the same record-level functions the analyses used before
//! ([`super::outcome`], [`super::trials`]), so the reports are unchanged; the trace
//! pages, which show the text, read each record again from its file
//! ([`RecordDigest::offset`]).

use super::outcome::{self, missing_gold, AnswerClass, ErrorClasses, Outcome, ReasoningEvidence};
use super::trials::{completing_turn, first_trial_record, opens_trial};
use crate::eval::RunRecord;
use crate::eval::SupportScores;
use crate::methods::eir::RejectCause;
use crate::methods::{CallKind, StopReason, Turn};

/// One record as the analyses see it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDigest {
    pub id: String,
    pub hops: Option<u8>,
    pub kind: Option<Box<str>>,
    /// The question text and the first gold answer (the side-by-side page shows them).
    pub question: Box<str>,
    pub gold_first: Box<str>,
    pub answer: Option<Box<str>>,
    pub em: f64,
    pub f1: f64,
    pub finished: bool,
    pub timed_out: bool,
    pub stop: StopReason,
    pub turns: u32,
    pub calls: u32,
    /// Calls per kind, in kind order (as the record's map lists them).
    pub calls_by_kind: Box<[(CallKind, u32)]>,
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
    /// Tokens at list prices, no cache savings (EIR D.5; `RunRecord::list_cost_usd`).
    pub list_cost_usd: f64,
    pub retries: u32,
    pub constraints_dropped: u64,
    pub truncated_calls: u32,
    pub refusals: u32,
    pub nudge_turn: Option<u32>,
    pub reminders: u32,
    pub adherence: Option<f64>,
    pub has_error: bool,
    /// The record carries its own settings (records written before they did read
    /// their run's).
    pub settings_recorded: bool,
    pub support_f1: Option<f64>,
    pub gold_recall: Option<f64>,
    /// Paragraphs retrieved (`retrieved.len()`).
    pub paragraphs_read: usize,
    /// [`outcome::support_recall`].
    pub support_recall: Option<f64>,
    /// [`missing_gold`].
    pub missing_gold: Option<usize>,
    /// [`outcome::answer_turn`].
    pub answer_turn: Option<u32>,
    /// [`outcome::gold_in_history`], for timed-out records (the error decomposition
    /// asks it of those only; false for the others, whose texts are not searched).
    pub gold_in_history: bool,
    /// What [`outcome::classify_under`] decides before it looks at the evidence.
    pub class: AnswerClass,
    /// The EIR setting's evidence: rejected actions by cause (None without evidence).
    pub evidence: Option<Box<[(RejectCause, u32)]>>,
    pub final_call: Option<Box<FinalDigest>>,
    pub trace: Box<[TurnDigest]>,
    /// The index in `trace` of the turn whose read completed the annotated support.
    pub completing_turn: Option<usize>,
    /// A retry wrapper's first trial, digested as its own record
    /// ([`first_trial_record`]); None without a first attempt.
    pub first_trial: Option<Box<RecordDigest>>,
    /// Where the record's line starts in its records file.
    pub offset: u64,
}

/// What the EIR analyses read of the final call.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalDigest {
    /// Official (EM, F1) of the trajectory's own answer; None when it submitted none.
    pub retrieval_score: Option<(f64, f64)>,
    pub forced_end: bool,
    pub extra_reads: Option<ExtraReadsDigest>,
}

/// The additional-retrieval control of a final call.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraReadsDigest {
    /// (EM, F1) of the answer before the extra reads (0 without one).
    pub before: (f64, f64),
    pub requested: bool,
    pub read: bool,
    /// Support F1, gold recall and calls up to the first final answer (None in records
    /// written before they were kept).
    pub support_before: Option<SupportScores>,
}

/// What the analyses read of one turn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnDigest {
    pub number: u32,
    pub trial: Option<u32>,
    /// Facts, hypotheses and questions of the merged state (or, without one, of the
    /// memory written this turn); None when the turn has neither.
    pub memory: Option<[u32; 3]>,
    pub adherent: Option<bool>,
    pub finishes: bool,
    pub rejection: Option<RejectCause>,
    /// The turn in progress when a model call failed (no recorded action; EIR Table 22).
    pub unfinished: bool,
}

impl TurnDigest {
    fn of(t: &Turn) -> TurnDigest {
        let memory = t.state.as_ref().or(t.memory.as_ref()).map(|m| {
            [
                m.facts.len() as u32,
                m.hypotheses.len() as u32,
                m.questions.len() as u32,
            ]
        });
        TurnDigest {
            number: t.number,
            trial: t.trial,
            memory,
            adherent: t.adherent,
            finishes: t.actions.iter().any(|a| a.is_finish()),
            rejection: t.rejection.as_ref().map(|r| r.cause),
            unfinished: t.unfinished,
        }
    }
}

impl RecordDigest {
    /// The digest of `r`, which starts at byte `offset` of its file.
    pub fn of(r: &RunRecord, offset: u64) -> RecordDigest {
        let first_trial = r
            .first_attempt
            .is_some()
            .then(|| Box::new(RecordDigest::of(&first_trial_record(r), offset)));
        RecordDigest {
            first_trial,
            ..RecordDigest::own(r, offset)
        }
    }

    fn own(r: &RunRecord, offset: u64) -> RecordDigest {
        let final_call = r.outputs.final_call.as_ref().map(|f| {
            Box::new(FinalDigest {
                retrieval_score: f.retrieval_answer.as_deref().map(|a| r.score(Some(a))),
                forced_end: f.forced_end,
                extra_reads: f.extra_reads.as_ref().map(|x| ExtraReadsDigest {
                    before: r.score(x.answer_before.as_deref()),
                    requested: !x.requested.is_empty(),
                    read: !x.read.is_empty(),
                    support_before: r.before_extra_reads,
                }),
            })
        });
        RecordDigest {
            id: r.id.clone(),
            hops: r.hops,
            kind: r.kind.as_deref().map(Box::from),
            question: r.question.as_str().into(),
            gold_first: r.gold.first().map_or("", String::as_str).into(),
            answer: r.answer.as_deref().map(Box::from),
            em: r.em,
            f1: r.f1,
            finished: r.finished,
            timed_out: r.timed_out,
            stop: r.stop,
            turns: r.turns,
            calls: r.calls,
            calls_by_kind: r.calls_by_kind.iter().map(|(k, c)| (*k, *c)).collect(),
            tool_calls: r.tool_calls,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cached_input_tokens: r.cached_input_tokens,
            cache_write_tokens: r.cache_write_tokens,
            cost_usd: r.cost_usd,
            list_cost_usd: r.list_cost_usd,
            retries: r.retries,
            constraints_dropped: r.constraints_dropped,
            truncated_calls: r.truncated_calls,
            refusals: r.refusals,
            nudge_turn: r.nudge_turn,
            reminders: r.reminders,
            adherence: r.adherence,
            has_error: r.error.is_some(),
            settings_recorded: !r.settings.is_empty(),
            support_f1: r.support_f1,
            gold_recall: r.gold_recall,
            paragraphs_read: r.retrieved.len(),
            support_recall: outcome::support_recall(r),
            missing_gold: missing_gold(r),
            answer_turn: outcome::answer_turn(r),
            gold_in_history: r.timed_out && outcome::gold_in_history(r),
            class: outcome::answer_class(r),
            evidence: r
                .outputs
                .evidence
                .as_ref()
                .map(|e| e.rejected.iter().map(|(c, n)| (*c, *n)).collect()),
            final_call,
            trace: r.trace.iter().map(TurnDigest::of).collect(),
            completing_turn: completing_turn(r),
            first_trial: None,
            offset,
        }
    }

    /// A retry wrapper's record without a first attempt (an error before trial 1 was
    /// recorded), as its first-trial arm counts it (EIR Table 1): the error it is, with
    /// no answer and no scores, its calls, tokens and cost as recorded; its reads stand
    /// for the first trial only when the record holds no later one.
    pub fn failed_first_trial(&self) -> RecordDigest {
        let first_len = (1..self.trace.len())
            .find(|&i| {
                let (a, b) = (&self.trace[i - 1], &self.trace[i]);
                opens_trial((a.number, a.trial), (b.number, b.trial))
            })
            .unwrap_or(self.trace.len());
        let later_trials = first_len < self.trace.len();
        let mut t = self.clone();
        t.answer = None;
        (t.em, t.f1) = (0.0, 0.0);
        t.support_f1 = self.support_f1.map(|_| 0.0);
        if later_trials {
            t.gold_recall = None;
            t.paragraphs_read = 0;
            t.support_recall = self.support_recall.map(|_| 0.0);
            t.missing_gold = None;
            t.completing_turn = None;
        }
        t.finished = false;
        t.has_error = true;
        t.answer_turn = None;
        t.class = if self.timed_out {
            AnswerClass::Timeout
        } else {
            AnswerClass::Unfinished
        };
        t.trace = self.trace[..first_len].into();
        t.completing_turn = t.completing_turn.filter(|&i| i < first_len);
        t.first_trial = None;
        t
    }

    /// [`RunRecord::list_cost`]: the list cost, or the billed one for records written
    /// before records carried it.
    pub fn list_cost(&self) -> f64 {
        crate::eval::record::list_or_billed(self.list_cost_usd, self.cost_usd)
    }

    /// Exact match as a yes/no ([`outcome::correct`]).
    pub fn correct(&self) -> bool {
        self.em >= 0.5
    }

    /// [`outcome::classify_under`].
    pub fn classify_under(&self, evidence: ReasoningEvidence) -> Outcome {
        self.classify_with(evidence, ErrorClasses::Defined)
    }

    /// [`outcome::classify_with`].
    pub fn classify_with(&self, evidence: ReasoningEvidence, classes: ErrorClasses) -> Outcome {
        self.class.resolve(self.support_recall, evidence, classes)
    }

    /// [`outcome::classify`].
    pub fn classify(&self) -> Outcome {
        self.classify_under(ReasoningEvidence::Any)
    }

    /// Calls of one kind.
    pub fn calls_of(&self, kind: CallKind) -> u32 {
        self.calls_by_kind
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, c)| *c)
    }

    /// Whether `trace[i]` opens a new trial ([`super::trials::starts_trial`]).
    pub fn starts_trial(&self, i: usize) -> bool {
        let t = &self.trace;
        if i == 0 || i >= t.len() {
            return false;
        }
        opens_trial((t[i - 1].number, t[i - 1].trial), (t[i].number, t[i].trial))
    }

    /// Whether any turn keeps a working memory.
    pub fn keeps_memory(&self) -> bool {
        self.trace.iter().any(|t| t.memory.is_some())
    }

    /// Whether the EIR-setting trajectory ended without a submission ([`forced_end`]).
    pub fn forced_end(&self) -> bool {
        forced_end(
            self.final_call.as_ref().map(|f| f.forced_end),
            self.evidence.is_some(),
            self.stop,
        )
    }

    /// Rejected actions in total (`Evidence::rejected_total`).
    pub fn rejected_total(&self) -> u32 {
        self.evidence
            .as_ref()
            .map_or(0, |e| e.iter().map(|(_, n)| n).sum())
    }
}

/// Whether an EIR-setting trajectory ended without a submission: its final call says so
/// (budget spent, overflow), or, for a method without a final call (Direct, Agentic
/// SSR), it recorded evidence and timed out. One rule for eval's problems, the report's
/// problems and EIR Table 22.
pub fn forced_end(final_call_forced: Option<bool>, has_evidence: bool, stop: StopReason) -> bool {
    match final_call_forced {
        Some(forced) => forced,
        None => has_evidence && stop == StopReason::Timeout,
    }
}
