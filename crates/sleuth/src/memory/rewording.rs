//! Telling a reworded fact from a different fact that reuses a confirmed fact's id.
//!
//! SLEUTH §3.1 and §3.2 step 1 make the confirmed facts monotonic (F_t ⊇ F_{t−1}: "never
//! retracted"). Models renumber their lists: a response may write `[F2]` for a new fact
//! after dropping the old first entry. Reading every reuse of an id as a rewording would
//! overwrite the earlier fact and lower |F_t|, which feeds the τ gate (§3.3) and App. E's
//! fact counts. So a new statement under a confirmed id is a rewording only when it
//! names the same source and says the same thing in other words ([`is_rewording`]);
//! otherwise both facts stay, the new one under a fresh id (or, when it rewords a fact
//! already kept under such an id, it updates that one). `fact_id_reuse=rewording`
//! gives the earlier reading (every reuse of an id rewords the fact).
//!
//! The state renumbers; the model's own memory does not: a hypothesis that cites the
//! reused id in its `supports` still names it as the model wrote it.

use crate::protocol::notation::Fact;
use std::collections::BTreeSet;

/// How a new statement under an already confirmed fact id is read (`fact_id_reuse`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FactIdReuse {
    /// A rewording only when [`is_rewording`] says so; otherwise a different fact, kept
    /// beside the old one under a fresh id (the default: §3.1, never retracted).
    #[default]
    Check,
    /// Always a rewording: the new wording replaces the old (the earlier reading, ids
    /// as the model's stable names for its facts).
    Rewording,
}

impl FactIdReuse {
    pub const NAMES: &'static [&'static str] = &["check", "rewording"];

    pub fn from_name(name: &str) -> Option<FactIdReuse> {
        match name.trim() {
            "check" => Some(FactIdReuse::Check),
            "rewording" => Some(FactIdReuse::Rewording),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FactIdReuse::Check => "check",
            FactIdReuse::Rewording => "rewording",
        }
    }
}

/// The least share of content words two wordings of one fact have in common (Jaccard).
pub const REWORDING_OVERLAP: f64 = 0.5;

/// The least share of the old wording's content words an elaboration keeps. A model
/// that adds a date or a second clause to `[F1]` grows the union past the Jaccard
/// bound while losing nothing the fact said; it still updates the fact (§3.1).
pub const ELABORATION_KEPT: f64 = 0.8;

/// Function words, which say nothing about what a fact states.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "of", "in", "on", "at",
    "to", "for", "by", "with", "from", "as", "and", "or", "that", "this", "which", "who", "its",
    "it", "his", "her", "their", "has", "had", "have",
];

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The lowercased content words of a statement.
fn content_words(text: &str) -> BTreeSet<String> {
    words(text)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// The names and numbers a statement carries: capitalized or digit-bearing content
/// words, lowercased. These are the values a fact states, so a rewording keeps them.
fn names_and_numbers(text: &str) -> BTreeSet<String> {
    words(text)
        .filter(|w| w.starts_with(char::is_uppercase) || w.contains(|c: char| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

fn same_source(a: &Fact, b: &Fact) -> bool {
    let key = |f: &Fact| f.source.as_deref().map(|s| s.trim().to_lowercase());
    key(a) == key(b)
}

/// Whether `new`, written under `old`'s id, is `old` reworded: the same source (or
/// neither names one), at least [`REWORDING_OVERLAP`] of their content words shared
/// (Jaccard) or at least [`ELABORATION_KEPT`] of the old wording's content words kept
/// (an elaboration), and every name and number of the old wording still in the new one. A
/// fact about another entity or value from the same paragraph fails the last test
/// ("Phoenix is the largest city in Arizona" is not reworded as "Tucson is the second
/// largest city in Arizona"), one that says something else about the same entity
/// fails the overlap.
pub fn is_rewording(old: &Fact, new: &Fact) -> bool {
    if !same_source(old, new) {
        return false;
    }
    let (a, b) = (content_words(&old.statement), content_words(&new.statement));
    let union = a.union(&b).count();
    let shared = a.intersection(&b).count();
    let reworded = union == 0 || shared as f64 >= REWORDING_OVERLAP * union as f64;
    let elaborated = !a.is_empty() && shared as f64 >= ELABORATION_KEPT * a.len() as f64;
    if !reworded && !elaborated {
        return false;
    }
    names_and_numbers(&old.statement).is_subset(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(statement: &str, source: &str) -> Fact {
        Fact {
            id: "F1".into(),
            statement: statement.into(),
            source: Some(source.into()),
            confidence: None,
            triple: None,
        }
    }

    #[test]
    fn a_rewording_keeps_source_words_and_names() {
        let old = fact(
            "Mingus Plays Piano is an album by Charles Mingus",
            "Mingus Plays Piano",
        );
        let new = fact(
            "The album Mingus Plays Piano was recorded by Charles Mingus",
            "mingus plays piano",
        );
        assert!(is_rewording(&old, &new));
    }

    #[test]
    fn an_elaboration_that_keeps_the_old_wording_updates_the_fact() {
        let old = fact("Mingus Plays Piano is an album", "Mingus Plays Piano");
        let new = fact(
            "Mingus Plays Piano is an album by Charles Mingus recorded in July 1963 \
             for Impulse! Records, his only solo piano record",
            "Mingus Plays Piano",
        );
        assert!(is_rewording(&old, &new));
        // Dropping most of the old wording is not an elaboration.
        let other = fact(
            "Mingus Plays Piano was recorded in July 1963 for Impulse! Records",
            "Mingus Plays Piano",
        );
        assert!(!is_rewording(
            &fact(
                "Mingus Plays Piano is a solo album by a jazz bassist",
                "Mingus Plays Piano"
            ),
            &other
        ));
    }

    #[test]
    fn another_source_value_or_claim_is_a_different_fact() {
        let old = fact("Phoenix is the largest city in Arizona", "Tucson, Arizona");
        let other_value = fact(
            "Tucson is the second largest city in Arizona",
            "Tucson, Arizona",
        );
        assert!(!is_rewording(&old, &other_value));
        let other_source = fact("Phoenix is the largest city in Arizona", "Phoenix, Arizona");
        assert!(!is_rewording(&old, &other_source));
        let bassist = fact("Charles Mingus was a jazz bassist", "Charles Mingus");
        let born = fact(
            "Charles Mingus was born in Nogales, Arizona",
            "Charles Mingus",
        );
        assert!(!is_rewording(&bassist, &born));
    }
}
