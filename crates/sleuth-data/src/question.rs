//! The benchmark-neutral question type.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which benchmark a question comes from. Only the metrics care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dataset {
    #[serde(rename = "hotpotqa")]
    HotpotQa,
    #[serde(rename = "musique")]
    Musique,
    #[serde(rename = "2wiki")]
    TwoWiki,
    /// Our own simple JSON Lines schema for user data (scored like HotpotQA).
    #[serde(rename = "jsonl")]
    Jsonl,
}

impl Dataset {
    pub const ALL: [Dataset; 4] = [
        Dataset::HotpotQa,
        Dataset::Musique,
        Dataset::TwoWiki,
        Dataset::Jsonl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::HotpotQa => "hotpotqa",
            Dataset::Musique => "musique",
            Dataset::TwoWiki => "2wiki",
            Dataset::Jsonl => "jsonl",
        }
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dataset {
    type Err = super::DataError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "hotpotqa" | "hotpot" => Ok(Dataset::HotpotQa),
            "musique" => Ok(Dataset::Musique),
            "2wiki" | "2wikimultihopqa" | "twowiki" => Ok(Dataset::TwoWiki),
            "jsonl" => Ok(Dataset::Jsonl),
            _ => Err(super::DataError::UnknownDataset(s.to_string())),
        }
    }
}

/// One paragraph of a question's pool: a title and its sentences, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paragraph {
    pub title: String,
    pub sentences: Vec<String>,
}

impl Paragraph {
    pub fn new(title: impl Into<String>, sentences: Vec<String>) -> Self {
        Paragraph {
            title: title.into(),
            sentences,
        }
    }

    /// The paragraph's text: its sentences joined the way the benchmarks store them.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for s in &self.sentences {
            if !out.is_empty()
                && !out.ends_with(char::is_whitespace)
                && !s.starts_with(char::is_whitespace)
            {
                out.push(' ');
            }
            out.push_str(s);
        }
        out
    }
}

/// A sentence-level supporting fact: `(title, sentence index)` as in HotpotQA and 2Wiki.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SupportingFact {
    pub title: String,
    pub sentence: usize,
}

/// A multi-hop question with its gold answers and its paragraph pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub dataset: Dataset,
    pub text: String,
    /// The gold answer first, then its aliases (MuSiQue, 2Wiki).
    pub answers: Vec<String>,
    /// The pool the agent searches, in the benchmark's order.
    pub paragraphs: Vec<Paragraph>,
    /// Sentence-level support (HotpotQA, 2Wiki); empty for MuSiQue.
    pub supporting_facts: Vec<SupportingFact>,
    /// Positions in `paragraphs` of the supporting (gold) paragraphs.
    pub supporting_paragraphs: Vec<usize>,
    /// Number of hops when the benchmark says (MuSiQue id prefix; 2 for HotpotQA).
    pub hops: Option<u8>,
    /// Question type (`bridge`, `comparison`, `3hop1`, `compositional`, ...).
    pub kind: Option<String>,
}

impl Question {
    /// The gold answer (first of `answers`), or "" when the benchmark gives none.
    pub fn answer(&self) -> &str {
        self.answers.first().map(String::as_str).unwrap_or("")
    }

    /// The supporting paragraphs' titles as agents see them ([`display_titles`]: a
    /// repeat is `T (2)`), in pool order. They name paragraphs one to one, so a gold
    /// paragraph is found by identity, never by a homonym's text (EIR App. F.2, H.4:
    /// MuSiQue pools repeat titles).
    pub fn gold_shown(&self) -> Vec<String> {
        let shown = display_titles(&self.paragraphs);
        self.supporting_paragraphs
            .iter()
            .filter_map(|&i| shown.get(i).cloned())
            .collect()
    }

    /// Titles of the supporting paragraphs, in pool order.
    pub fn gold_titles(&self) -> Vec<&str> {
        self.supporting_paragraphs
            .iter()
            .filter_map(|&i| self.paragraphs.get(i))
            .map(|p| p.title.as_str())
            .collect()
    }
}

/// Titles as the agent sees them: the pool's titles, with a ` (2)`, ` (3)`... suffix on
/// repeats (MuSiQue pools can hold two paragraphs with one title), so that every
/// paragraph can be named and every evidence record's title is unambiguous.
///
/// Linear in the pool: the titles shown so far are a set, and each raw title keeps the
/// suffix to try next (every lower one is taken, and stays taken), so a title repeated
/// k times costs O(k) in all. A scan of the list per candidate took O(k³): 87 s for one
/// call at k = 4,000 (hardening III, item 8).
pub fn display_titles(paragraphs: &[Paragraph]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> =
        std::collections::HashSet::with_capacity(paragraphs.len());
    let mut next: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut out: Vec<String> = Vec::with_capacity(paragraphs.len());
    for p in paragraphs {
        let n = next.entry(p.title.as_str()).or_insert(1);
        let mut title = if *n == 1 {
            p.title.clone()
        } else {
            format!("{} ({n})", p.title)
        };
        while taken.contains(&title) {
            *n += 1;
            title = format!("{} ({})", p.title, *n);
        }
        taken.insert(title.clone());
        out.push(title);
    }
    out
}

/// The pool title a shown title was made from: `T (2)` -> `T` (a suffix [`display_titles`]
/// adds, n >= 2), anything else unchanged. For records of environments that name
/// paragraphs by their raw titles (the SLEUTH pool setting), which cannot tell homonyms
/// apart.
pub fn base_title(shown: &str) -> &str {
    let split = shown
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once(" ("))
        .filter(|(_, n)| !n.starts_with('0') && n.parse::<u32>().is_ok_and(|k| k >= 2));
    split.map_or(shown, |(base, _)| base)
}

#[cfg(test)]
mod shown_title_tests {
    use super::*;

    #[test]
    fn base_title_undoes_only_the_repeat_suffix() {
        let pool = vec![
            Paragraph::new("A", vec![]),
            Paragraph::new("A", vec![]),
            Paragraph::new("B (1999)", vec![]),
        ];
        let shown = display_titles(&pool);
        assert_eq!(shown, ["A", "A (2)", "B (1999)"]);
        // A raw title that looks like a suffixed one takes its place first.
        let pool: Vec<Paragraph> = ["A (2)", "A", "A", "A (3)"]
            .iter()
            .map(|t| Paragraph::new(*t, vec![]))
            .collect();
        assert_eq!(display_titles(&pool), ["A (2)", "A", "A (3)", "A (3) (2)"]);
        assert_eq!(base_title(&shown[1]), "A");
        assert_eq!(base_title("A"), "A");
        assert_eq!(base_title("Film (1)"), "Film (1)");
        assert_eq!(base_title("Song (02)"), "Song (02)");
    }
}
