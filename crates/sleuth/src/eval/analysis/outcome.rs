//! Per-record facts the analyses share: correctness, when the answer was given,
//! support recall, the error class, and whether the gold answer was ever seen.

use crate::eval::RunRecord;
use serde::Serialize;

use crate::eval::metrics::normalize_answer as normalize;

/// Whether `needle` occurs in `haystack` as whole normalized words (both normalized).
/// Word boundaries keep a gold `1` from matching inside a predicted `1964`.
fn contains_words(haystack: &str, needle: &str) -> bool {
    !needle.is_empty() && format!(" {haystack} ").contains(&format!(" {needle} "))
}

/// Whether two normalized texts have a word in common (a partial match: token F1 > 0).
fn shares_a_word(a: &str, b: &str) -> bool {
    let words: std::collections::HashSet<&str> = a.split_whitespace().collect();
    b.split_whitespace().any(|w| words.contains(w))
}

/// Exact match as a yes/no (records store EM as 0 or 1, maxed over aliases).
pub fn correct(r: &RunRecord) -> bool {
    r.em >= 0.5
}

/// The 1-based turn at which the final answer was given: the last turn holding a
/// `finish` action (Reflexion's later episode overrides its first), else the episode's
/// length when an answer exists without one (a separate final-answer call), else None.
pub fn answer_turn(r: &RunRecord) -> Option<u32> {
    let last_finish = r
        .trace
        .iter()
        .rposition(|t| t.actions.iter().any(|a| a.is_finish()));
    match (last_finish, &r.answer) {
        (Some(i), _) => Some(i as u32 + 1),
        (None, Some(_)) => Some(r.turns.max(r.trace.len() as u32).max(1)),
        (None, None) => None,
    }
}

/// Fraction of gold paragraphs retrieved at least once; None without gold titles. Gold
/// paragraphs and retrieved ones are both named as the pool shows them (`T (2)` for the
/// second paragraph titled `T`; EIR App. F.2, SLEUTH pool since issue 43), so a gold
/// paragraph counts only when it was read itself, never for a homonym (issue 42 item 5:
/// 64 MuSiQue questions share a gold title with another paragraph of their pool).
pub fn support_recall(r: &RunRecord) -> Option<f64> {
    if r.gold_titles.is_empty() {
        return None;
    }
    let hit = r
        .gold_titles
        .iter()
        .filter(|g| r.retrieved.iter().any(|t| t == *g))
        .count();
    Some(hit as f64 / r.gold_titles.len() as f64)
}

/// The error classes of the SLEUTH paper's error decomposition (App. J, Table 15, as
/// percentages of all questions): timeouts, verbose answers (the gold inside a longer
/// answer), reasoning errors (relevant evidence retrieved, a wrong answer) and Other
/// ("remaining partial-match failures where the gold is not contained"). Two readings
/// are ours. A wrong answer that shares words with the gold without containing it is
/// Other (App. J's partial match) before it is a reasoning error, and one with no
/// relevant evidence retrieved is Other too ([`ReasoningEvidence`] says what counts as
/// relevant). An episode that ended without an answer before its budget ran out (the
/// context overflowed, a response could not be parsed, a call failed) is neither a
/// timeout nor an answer: it is `unfinished`, a class of its own, so every count adds
/// up to the arm's questions. [`ErrorClasses::Sums`] reads Table 15's arithmetic
/// instead, which leaves no Other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Correct,
    /// The budget ran out without an answer.
    Timeout,
    /// No answer, and the budget was not used up: context overflow, an unparseable
    /// response, an error.
    Unfinished,
    /// Wrong, but the normalized prediction contains a normalized gold answer.
    Verbose,
    /// Wrong, sharing no word with the gold, after relevant evidence was retrieved.
    Reasoning,
    /// A partial match (some words of the gold, not all), or a wrong answer given
    /// without the relevant evidence.
    Other,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Correct,
        Outcome::Timeout,
        Outcome::Unfinished,
        Outcome::Verbose,
        Outcome::Reasoning,
        Outcome::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Correct => "correct",
            Outcome::Timeout => "timeout",
            Outcome::Unfinished => "unfinished",
            Outcome::Verbose => "verbose",
            Outcome::Reasoning => "reasoning",
            Outcome::Other => "other",
        }
    }
}

/// What App. J's "retrieves relevant evidence" asks of a reasoning error (`sleuth report
/// --reasoning-evidence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
pub enum ReasoningEvidence {
    /// At least one gold paragraph retrieved (the default: "relevant evidence", not all
    /// of it; a multi-hop chain fails at its missing link).
    #[default]
    Any,
    /// Every gold paragraph retrieved (the stricter reading).
    All,
}

impl ReasoningEvidence {
    /// The readings' names, as `--reasoning-evidence` takes them.
    pub const NAMES: &'static [&'static str] = <Self as strum::VariantNames>::VARIANTS;
}

/// Which of App. J's two accounts of the classes a report follows (`sleuth report
/// --error-classes`).
///
/// App. J defines Other as "remaining partial-match failures where the gold is not
/// contained", yet the paper's 4-hop MuSiQue numbers leave no room for it: SLEUTH's EM
/// 53.1 (§5.3) + timeouts 11.1 + reasoning 32.1 + verbose 4.4 (§5.5) is already 100.7,
/// and ReAct's EM 42.0 (App. F) + timeouts 17.8 + reasoning 35.8 (32.1 + 3.7, App. J) +
/// verbose at least 4.4 is at least 100.0. So by the numbers every wrong, finished
/// answer that does not contain the gold is a reasoning error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
pub enum ErrorClasses {
    /// App. J's definitions (the default): a partial match, or a wrong answer without
    /// the relevant evidence ([`ReasoningEvidence`]), is Other.
    #[default]
    Defined,
    /// Table 15's arithmetic: no Other; every wrong, finished, non-verbose answer is a
    /// reasoning error, whatever was retrieved.
    Sums,
}

impl ErrorClasses {
    /// The readings' names, as `--error-classes` takes them.
    pub const NAMES: &'static [&'static str] = <Self as strum::VariantNames>::VARIANTS;
}

/// Classifies a record under the default reading ([`ReasoningEvidence::Any`]).
pub fn classify(r: &RunRecord) -> Outcome {
    classify_under(r, ReasoningEvidence::Any)
}

/// Classifies a record under App. J's definitions ([`ErrorClasses::Defined`]).
pub fn classify_under(r: &RunRecord, evidence: ReasoningEvidence) -> Outcome {
    classify_with(r, evidence, ErrorClasses::Defined)
}

/// Classifies a record, checking the classes in the order listed on [`Outcome`].
/// Records without gold titles cannot show their evidence; there it counts as
/// retrieved. Under [`ErrorClasses::Sums`] nothing is Other.
pub fn classify_with(r: &RunRecord, evidence: ReasoningEvidence, classes: ErrorClasses) -> Outcome {
    answer_class(r).resolve(support_recall(r), evidence, classes)
}

/// What [`classify_with`] decides from the answer alone: a wrong answer that neither
/// contains nor shares a word with the gold is a reasoning error or Other by the
/// evidence retrieved, which the reading of [`ReasoningEvidence`] decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerClass {
    Correct,
    Timeout,
    Unfinished,
    Verbose,
    /// Shares a word with the gold without containing it.
    Partial,
    /// Shares no word with the gold.
    Wrong,
}

impl AnswerClass {
    /// The outcome, given the record's [`support_recall`] (under `classes`: Table 15's
    /// arithmetic makes every wrong, finished, non-verbose answer a reasoning error).
    pub fn resolve(
        self,
        recall: Option<f64>,
        evidence: ReasoningEvidence,
        classes: ErrorClasses,
    ) -> Outcome {
        if classes == ErrorClasses::Sums
            && matches!(self, AnswerClass::Partial | AnswerClass::Wrong)
        {
            return Outcome::Reasoning;
        }
        match self {
            AnswerClass::Correct => Outcome::Correct,
            AnswerClass::Timeout => Outcome::Timeout,
            AnswerClass::Unfinished => Outcome::Unfinished,
            AnswerClass::Verbose => Outcome::Verbose,
            AnswerClass::Partial => Outcome::Other,
            AnswerClass::Wrong => {
                let relevant = match (recall, evidence) {
                    (None, _) => true,
                    (Some(recall), ReasoningEvidence::Any) => recall > 0.0,
                    (Some(recall), ReasoningEvidence::All) => recall == 1.0,
                };
                match relevant {
                    true => Outcome::Reasoning,
                    false => Outcome::Other,
                }
            }
        }
    }
}

/// A record's [`AnswerClass`].
pub fn answer_class(r: &RunRecord) -> AnswerClass {
    if correct(r) {
        return AnswerClass::Correct;
    }
    if r.timed_out {
        return AnswerClass::Timeout;
    }
    let Some(answer) = &r.answer else {
        return AnswerClass::Unfinished;
    };
    let pred = normalize(answer);
    if r.gold.iter().any(|g| contains_words(&pred, &normalize(g))) {
        return AnswerClass::Verbose;
    }
    if r.gold.iter().any(|g| shares_a_word(&pred, &normalize(g))) {
        return AnswerClass::Partial;
    }
    AnswerClass::Wrong
}

/// Annotated paragraphs not read (from the recorded recall and the gold titles).
pub fn missing_gold(r: &RunRecord) -> Option<usize> {
    let recall = r.gold_recall?;
    Some(((1.0 - recall) * r.gold_titles.len() as f64).round() as usize)
}

/// Whether any gold answer (normalized, as whole words) appears in any observation.
pub fn gold_in_history(r: &RunRecord) -> bool {
    let golds: Vec<String> = r
        .gold
        .iter()
        .map(|g| normalize(g))
        .filter(|g| !g.is_empty())
        .collect();
    r.trace.iter().flat_map(|t| &t.observations).any(|o| {
        let text = normalize(&o.text);
        golds.iter().any(|g| contains_words(&text, g))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalization_follows_the_official_script() {
        assert_eq!(normalize("The  Eiffel-Tower, Paris!"), "eiffeltower paris");
        assert_eq!(normalize("an apple a day"), "apple day");
        assert_eq!(normalize("Theatre"), "theatre");
        assert_eq!(normalize("  "), "");
    }

    /// A record with `answer`, gold `Paris`, both gold titles listed and `read` of them
    /// retrieved, and a two-turn trace whose second turn finishes when answered.
    fn record(answer: Option<&str>, em: f64, timed_out: bool, read: usize) -> RunRecord {
        let finish = answer.map_or(json!([]), |a| json!([{"tool": "finish", "arg": a}]));
        let retrieved = ["A", "B"][..read].to_vec();
        serde_json::from_value(json!({
            "id": "q", "dataset": "hotpotqa", "hops": 2, "method": "react", "model": "m",
            "answer": answer, "gold": ["Paris", "City of Paris"], "em": em, "f1": em,
            "finished": answer.is_some(), "timed_out": timed_out, "stop": if answer.is_some() { "finished" } else { "timeout" }, "turns": 2,
            "calls": 2, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "nudge_turn": null, "reminders": 0,
            "retrieved": retrieved, "gold_titles": ["A", "B"], "error": null,
            "trace": [
                {"number": 1, "response": "", "actions": [{"tool": "search", "arg": "x"}],
                 "observations": [{"text": "The capital is Paris."}]},
                {"number": 2, "response": "", "actions": finish, "observations": []},
            ],
        }))
        .unwrap()
    }

    #[test]
    fn the_sums_reading_leaves_nothing_in_other() {
        let partial = record(Some("Paris, Texas"), 0.0, false, 2);
        let partial = RunRecord {
            gold: vec!["Paris Hilton".into()],
            ..partial
        };
        let unread = record(Some("Lyon"), 0.0, false, 0);
        for r in [&partial, &unread] {
            assert_eq!(classify(r), Outcome::Other);
            let sums = classify_with(r, ReasoningEvidence::Any, ErrorClasses::Sums);
            assert_eq!(sums, Outcome::Reasoning);
        }
        let verbose = record(Some("Paris, France"), 0.0, false, 0);
        let sums = classify_with(&verbose, ReasoningEvidence::All, ErrorClasses::Sums);
        assert_eq!(sums, Outcome::Verbose);
    }

    #[test]
    fn support_recall_is_by_identity_where_paragraphs_have_one() {
        // The gold paragraph is the pool's second "A", shown as "A (2)"; the first "A"
        // was read.
        let mut r = record(None, 0.0, true, 1);
        r.gold_titles = vec!["A (2)".into()];
        // Either setting: the shown title names one paragraph; the homonym is not it.
        assert_eq!(support_recall(&r), Some(0.0));
        r.outputs.evidence = Some(Default::default());
        assert_eq!(support_recall(&r), Some(0.0));
        r.retrieved.push("A (2)".into());
        assert_eq!(support_recall(&r), Some(1.0));
    }

    #[test]
    fn classifies_errors_in_order() {
        assert_eq!(
            classify(&record(Some("Paris"), 1.0, false, 0)),
            Outcome::Correct
        );
        assert_eq!(classify(&record(None, 0.0, true, 2)), Outcome::Timeout);
        assert_eq!(
            classify(&record(Some("Paris, France"), 0.0, false, 0)),
            Outcome::Verbose
        );
        assert_eq!(
            classify(&record(Some("the city of Paris!"), 0.0, false, 0)),
            Outcome::Verbose
        );
        assert_eq!(
            classify(&record(Some("Lyon"), 0.0, false, 2)),
            Outcome::Reasoning
        );
        // One gold paragraph of two is relevant evidence; the stricter reading wants both.
        let one_read = record(Some("Lyon"), 0.0, false, 1);
        assert_eq!(classify(&one_read), Outcome::Reasoning);
        assert_eq!(
            classify_under(&one_read, ReasoningEvidence::All),
            Outcome::Other
        );
        assert_eq!(
            classify(&record(Some("Lyon"), 0.0, false, 0)),
            Outcome::Other
        );
        // A partial match is Other, evidence or not.
        let mut partial = record(Some("Paris Texas"), 0.0, false, 2);
        partial.gold = vec!["Paris France".into()];
        assert_eq!(classify(&partial), Outcome::Other);
        assert_eq!(classify(&record(None, 0.0, false, 2)), Outcome::Unfinished);
    }

    #[test]
    fn answer_turn_recall_and_gold_in_history() {
        let r = record(Some("Paris"), 1.0, false, 1);
        assert_eq!(answer_turn(&r), Some(2));
        assert_eq!(answer_turn(&record(None, 0.0, true, 0)), None);
        assert_eq!(support_recall(&r), Some(0.5));
        assert!(gold_in_history(&r));
        let mut unseen = record(None, 0.0, true, 0);
        unseen.trace[0].observations[0].text = "Parisian cafes".into();
        assert!(!gold_in_history(&unseen));
    }

    #[test]
    fn containment_respects_word_boundaries() {
        assert!(contains_words("born in 1964 in ohio", "1964"));
        assert!(!contains_words("1964", "196"));
        assert!(!contains_words("anything", ""));
    }
}
