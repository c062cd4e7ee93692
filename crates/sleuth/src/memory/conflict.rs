//! Per-fact confidence and contradiction detection (`--set contradictions=true`; ours,
//! beyond both papers: SLEUTH's App. names richer memory as future work).
//!
//! SLEUTH's merge is monotonic (§3.2): every confirmed fact stays. A later result that
//! disagrees with a confirmed fact is then either added beside it, so the memory holds
//! two values for one attribute and the model may answer from either, or lost when the
//! model keeps only one. Here a fact says what it is about as a [`Triple`] (subject;
//! relation; value). A new fact with the subject and relation of a confirmed one but a
//! different value is not merged: it is held as a [`Conflict`] and raised as a
//! high-priority open question. Only an explicit `(resolved)` mark on that question
//! settles it, and the facts the model writes in that turn say how ([`Resolution`]).

use crate::protocol::notation::{Fact, OpenQuestion, Priority, Triple};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// How a conflict was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The settling turn's facts kept the confirmed value only: the claim is discarded.
    Kept,
    /// They carried the new value only: the claim is confirmed and the old fact moves
    /// to the retracted facts.
    Replaced,
    /// They carried both (a relation with several values, e.g. children): both stay.
    Both,
}

/// A new fact held out of the confirmed facts because it contradicts one of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The open question raised for it.
    pub question: String,
    /// The id of the confirmed fact it contradicts.
    pub confirmed: String,
    /// The contradicting fact, as the model wrote it.
    pub claim: Fact,
    /// The turn that raised it.
    pub raised: u32,
    /// The turn whose memory marked its question resolved, and how it was settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
}

impl Conflict {
    pub fn is_open(&self) -> bool {
        self.resolution.is_none()
    }
}

/// Lowercased words without punctuation or articles.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !matches!(*w, "the" | "a" | "an"))
        .map(str::to_string)
        .collect()
}

impl Triple {
    /// A triple read off a plain statement, for facts written without a `triple:` field.
    /// Four sentence shapes, tried in order:
    /// `The R of S is V`, `S's R is V`, `V is the R of S`, and
    /// `S was born/founded/located/... in|on|at|by V` (relation: the verb and preposition,
    /// so a birthplace and a birth date are different relations). Anything else has no
    /// triple and is merged as before.
    pub fn of_statement(statement: &str) -> Option<Triple> {
        static SHAPES: OnceLock<[(Regex, [usize; 3]); 4]> = OnceLock::new();
        let shapes = SHAPES.get_or_init(|| {
            let be = r"(?:is|was|are|were)";
            let verbs = "born|founded|located|established|released|formed|headquartered|based|buried|created|built|published|written|directed|produced";
            let re = |s: String| Regex::new(&format!("(?i)^{s}$")).expect("triple shape");
            [
                (
                    re(format!(r"(?:the\s+)?(.+?)\s+of\s+(.+?)\s+{be}\s+(.+)")),
                    [2, 1, 3],
                ),
                (re(format!(r"(.+?)'s\s+(.+?)\s+{be}\s+(.+)")), [1, 2, 3]),
                (
                    re(format!(r"(.+?)\s+{be}\s+the\s+(.+?)\s+of\s+(.+)")),
                    [3, 2, 1],
                ),
                (
                    re(format!(
                        r"(.+?)\s+{be}\s+((?:{verbs})\s+(?:in|on|at|by))\s+(.+)"
                    )),
                    [1, 2, 3],
                ),
            ]
        });
        let statement = statement.trim().trim_end_matches('.').trim();
        shapes.iter().find_map(|(re, [s, r, v])| {
            let c = re.captures(statement)?;
            Some(Triple {
                subject: c[*s].trim().to_string(),
                relation: c[*r].trim().to_string(),
                value: c[*v].trim().to_string(),
            })
        })
    }

    /// Subject and relation, normalized: case, punctuation, articles and the linking
    /// words of a relation (`is`, `of`, ...) do not make two attributes different.
    fn key(&self) -> (Vec<String>, Vec<String>) {
        let relation = words(&self.relation)
            .into_iter()
            .filter(|w| !matches!(w.as_str(), "is" | "was" | "are" | "were" | "of"))
            .collect();
        (words(&self.subject), relation)
    }

    /// Whether this triple is about the same attribute as `other`.
    pub fn same_attribute(&self, other: &Triple) -> bool {
        let key = self.key();
        !key.0.is_empty() && !key.1.is_empty() && key == other.key()
    }

    /// Whether the two values agree: equal after normalization, or one's words contain
    /// the other's ("1964" and "March 3, 1964"; "Paris" and "Paris, France"): a more
    /// precise value is not a contradiction.
    pub fn same_value(&self, other: &Triple) -> bool {
        let a: BTreeSet<String> = words(&self.value).into_iter().collect();
        let b: BTreeSet<String> = words(&other.value).into_iter().collect();
        a.is_subset(&b) || b.is_subset(&a)
    }

    /// Same subject and relation, different value.
    pub fn contradicts(&self, other: &Triple) -> bool {
        self.same_attribute(other) && !self.same_value(other)
    }
}

impl Fact {
    /// What the fact states: its `triple:` field, else a triple read off its statement.
    pub fn claim(&self) -> Option<Triple> {
        self.triple
            .clone()
            .or_else(|| Triple::of_statement(&self.statement))
    }
}

/// The next free question number after every id in `ids` (`Q3` → 4).
pub(super) fn next_question_number<'a>(ids: impl Iterator<Item = &'a str>) -> usize {
    ids.filter_map(|id| id.trim_start_matches(['Q', 'q']).parse::<usize>().ok())
        .max()
        .unwrap_or(0)
        + 1
}

/// The open question a conflict raises: which of the two values holds, searched for by
/// the attribute's subject and relation.
pub(super) fn conflict_question(id: String, confirmed: &Fact, claim: &Fact) -> OpenQuestion {
    let about = claim
        .claim()
        .map(|t| format!("{} {}", t.subject, t.relation))
        .unwrap_or_else(|| claim.statement.clone());
    OpenQuestion {
        text: format!(
            "Conflict: [{}] \"{}\" vs the new \"{}\"{}: which holds?",
            confirmed.id,
            confirmed.statement,
            claim.statement,
            claim
                .source
                .as_deref()
                .map(|s| format!(" (source: {s})"))
                .unwrap_or_default()
        ),
        id,
        action: Some(about),
        priority: Some(Priority::High),
        resolved: false,
    }
}

/// How the facts written in a settling turn settle `conflict`: which of the two values
/// they carry for its attribute.
pub(super) fn resolution(written: &[Fact], confirmed: &Fact, claim: &Fact) -> Resolution {
    let (Some(old), Some(new)) = (confirmed.claim(), claim.claim()) else {
        return Resolution::Kept;
    };
    let values: Vec<Triple> = written
        .iter()
        .filter_map(Fact::claim)
        .filter(|t| t.same_attribute(&old))
        .collect();
    let carries = |t: &Triple| values.iter().any(|v| v.same_value(t));
    match (carries(&old), carries(&new)) {
        (_, false) => Resolution::Kept,
        (false, true) => Resolution::Replaced,
        (true, true) => Resolution::Both,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Triple {
        Triple::parse(s).unwrap()
    }

    #[test]
    fn statements_of_the_usual_shapes_give_triples() {
        let cases = [
            (
                "The director of Inception is Christopher Nolan.",
                "Inception ; director ; Christopher Nolan",
            ),
            (
                "Inception's director was Christopher Nolan",
                "Inception ; director ; Christopher Nolan",
            ),
            (
                "Stanley is the county seat of Mountrail County",
                "Mountrail County ; county seat ; Stanley",
            ),
            (
                "Charles Mingus was born in Nogales, Arizona",
                "Charles Mingus ; born in ; Nogales, Arizona",
            ),
        ];
        for (statement, want) in cases {
            assert_eq!(
                Triple::of_statement(statement).map(|t| t.to_string()),
                Some(want.to_string()),
                "{statement}"
            );
        }
        assert_eq!(Triple::of_statement("Mingus played bass"), None);
    }

    #[test]
    fn a_contradiction_is_the_same_attribute_with_a_different_value() {
        let a = t("Mountrail County ; county seat ; Stanley");
        assert!(a.contradicts(&t("mountrail county ; county seat of ; Williston")));
        assert!(!a.contradicts(&t("Mountrail County ; population ; 10,000")));
        assert!(!a.contradicts(&t("Mountrail County ; county seat ; Stanley, North Dakota")));
        let born = t("Mingus ; born on ; April 22, 1922");
        assert!(!born.contradicts(&t("Mingus ; born on ; 1922")));
        assert!(born.contradicts(&t("Mingus ; born on ; 1923")));
        assert!(!born.contradicts(&t("Mingus ; born in ; Nogales")));
    }

    #[test]
    fn explicit_triples_parse_with_or_without_parentheses() {
        assert_eq!(t("(a ; b ; c)").value, "c");
        assert_eq!(Triple::parse("a ; b"), None);
        assert_eq!(Triple::parse("a ; ; c"), None);
    }
}
