//! Official answer and support metrics (HotpotQA, MuSiQue, 2Wiki evaluation scripts),
//! re-implemented so that every per-question number equals what the official Python
//! scripts compute.
//!
//! - [`normalize`]: the shared SQuAD-style answer normalization.
//! - [`answer`]: EM and F1 per dataset. HotpotQA and 2Wiki (and our `jsonl`) zero the F1
//!   of a yes/no/noanswer mismatch and give two empty answers F1 = 0; MuSiQue follows
//!   SQuAD 2.0 (empty vs empty is F1 = 1) and has no yes/no rule. Every dataset takes the
//!   max over the gold answer and its aliases (HotpotQA has exactly one).
//! - [`support`]: supporting-fact EM/F1: sentence `(title, index)` sets for HotpotQA and
//!   2Wiki (2Wiki lowercases titles first), paragraph index sets for MuSiQue.
//! - [`cited`]: the same support rules applied to an agent's citations, and gold recall.
//! - [`evidence`]: 2Wiki's evidence-triple metrics and its answer x support x evidence
//!   joint metric.
//! - [`explain`]: why a prediction scored what it did (normalized strings, tokens, rule).
//! - [`official`]: the averages under each official script's own keys and scale.
//! - [`predictions`]: the official prediction file formats.
//! - [`score`]: one question's scores; [`aggregate`]: averages over a gold file, kept
//!   apart so per-question scores can also feed paired statistics.

pub mod aggregate;
pub mod answer;
pub mod cited;
pub mod evidence;
pub mod explain;
pub mod normalize;
pub mod official;
pub mod predictions;
pub mod score;
pub mod support;

pub use aggregate::Summary;
pub use answer::{exact_match, f1, score_answer, AnswerScore, F1Rule};
pub use cited::{citation_support_f1, gold_recall};
pub use evidence::{
    read_evidence_predictions, score_evidence, summarize_evidence, EvidenceSummary,
};
pub use explain::{explain, Explanation};
pub use normalize::{answer_tokens, normalize_answer};
pub use official::{official, Official};
pub use predictions::{read_predictions, Prediction, PredictionSet, SupportPrediction};
pub use score::{score_all, score_question, QuestionScore};
pub use support::{support_paragraphs, support_sentences, SupportScore};

/// Scores an agent's answer to `question` with the official rules of its benchmark;
/// no answer at all scores 0 (as a missing prediction does in the official scripts).
pub fn answer_scores(question: &crate::data::Question, prediction: Option<&str>) -> AnswerScore {
    match prediction {
        Some(p) => score_answer(question.dataset, p, &question.answers),
        None => AnswerScore::default(),
    }
}

/// The official exact-match rule as the retry wrappers' controller (both papers'
/// Reflexion stop on the first attempt the benchmark's EM counts as right).
pub struct OfficialExactMatch;

impl crate::methods::Judge for OfficialExactMatch {
    fn is_correct(&self, question: &crate::data::Question, answer: Option<&str>) -> bool {
        answer_scores(question, answer).em >= 1.0
    }
}
