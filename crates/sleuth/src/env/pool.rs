//! The per-question paragraph pool of the SLEUTH setting: `search` (top-k by Jaccard
//! overlap of word tokens, paragraphs verbatim with titles), `lookup` (a paragraph by
//! title: exact match first, then case-insensitive) and `finish`.
//!
//! A miss gives no retrieval help the paper's tools do not give (SLEUTH §3.4, App. M:
//! "identical across all methods", lookup "returns the full text of a named paragraph
//! if it exists"): an empty search says nothing matched, and a failed lookup says it
//! failed and names at most the nearest titles the agent has already been shown, never
//! the pool's other titles (gold ones among them).
//!
//! MuSiQue pools repeat titles (two paragraphs named `T`). Every paragraph is shown
//! and recorded under its pool name ([`display_titles`]: the second `T` is `T (2)`, as
//! in the EIR setting), so a search result or lookup heads it `[T (2)]` and the agent
//! can name each paragraph. App. M's lookup "returns the full text of a named
//! paragraph", one paragraph, so a lookup of a repeated title returns the first of them
//! ([`LookupRepeats::First`]), and `lookup[T (2)]` the second. `lookup_repeats=all`
//! returns every paragraph of the title, in pool order (the other reading: `T` names
//! them all). Records then name the paragraph read, so support recall counts a gold
//! paragraph only when that paragraph was read, not a homonym (issue 43 item 2, issue
//! 42 item 5).

use super::{Action, Environment, Observation, Tool, ToolCatalogue, ToolKind};
use crate::data::{base_title, display_titles, Paragraph};
use crate::retrieval::jaccard;
use std::collections::HashSet;

pub struct PoolEnv {
    paragraphs: Vec<Paragraph>,
    /// Each paragraph's name as shown and recorded ([`display_titles`]).
    names: Vec<String>,
    /// Token sets of title + text, computed once per episode.
    tokens: Vec<HashSet<String>>,
    top_k: usize,
    tools: ToolCatalogue,
    retrieved: Vec<String>,
    repeats: LookupRepeats,
    /// Whether a failed lookup names close titles already shown ([`PoolEnv::with_hints`]).
    hints: bool,
}

/// What a lookup of a title held by several pool paragraphs returns (`lookup_repeats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LookupRepeats {
    /// Every paragraph of that title, in pool order.
    All,
    /// The first only (default: App. M's lookup returns one paragraph).
    #[default]
    First,
}

impl LookupRepeats {
    pub const NAMES: &'static [&'static str] = &["all", "first"];

    pub fn from_name(name: &str) -> Option<LookupRepeats> {
        match name.trim() {
            "all" => Some(LookupRepeats::All),
            "first" => Some(LookupRepeats::First),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LookupRepeats::All => "all",
            LookupRepeats::First => "first",
        }
    }
}

impl PoolEnv {
    pub fn new(paragraphs: Vec<Paragraph>, top_k: usize) -> Self {
        let tokens = paragraphs
            .iter()
            .map(|p| jaccard::token_set(&format!("{} {}", p.title, p.text())))
            .collect();
        let top_k = top_k.max(1);
        PoolEnv {
            names: display_titles(&paragraphs),
            paragraphs,
            tokens,
            top_k,
            tools: Self::catalogue(top_k),
            retrieved: Vec::new(),
            repeats: LookupRepeats::First,
            hints: true,
        }
    }

    /// The pool with a failed lookup naming (`true`, default, ours) or not naming
    /// (`false`, SLEUTH App. M's bare tools) up to three close titles already shown.
    pub fn with_hints(mut self, hints: bool) -> Self {
        self.hints = hints;
        self
    }

    /// The pool with `repeats` deciding what a lookup of a repeated title returns.
    pub fn with_repeats(mut self, repeats: LookupRepeats) -> Self {
        self.repeats = repeats;
        self
    }

    /// The tools of a pool whose searches show `top_k` paragraphs.
    pub fn catalogue(top_k: usize) -> ToolCatalogue {
        ToolCatalogue::new(vec![
            Tool::new(
                ToolKind::Search,
                "query",
                format!("returns the {top_k} paragraphs that best match the query words."),
            ),
            Tool::new(
                ToolKind::Lookup,
                "title",
                "returns the paragraph with exactly this title.",
            ),
            Tool::finish(),
        ])
    }

    fn record(&mut self, title: &str) {
        if !self.retrieved.iter().any(|t| t == title) {
            self.retrieved.push(title.to_string());
        }
    }

    /// Paragraph `i` under its pool name.
    fn render(&self, i: usize) -> String {
        format!("[{}] {}", self.names[i], self.paragraphs[i].text())
    }

    fn search(&mut self, query: &str) -> Observation {
        if query.trim().is_empty() {
            return Observation::new("The search query was empty. Give some words to search for.");
        }
        let hits = jaccard::top_k(query, &self.tokens, self.top_k);
        if hits.is_empty() {
            return Observation::new(format!(
                "No paragraph matches \"{query}\". Try other words."
            ));
        }
        let mut text = String::new();
        let mut shown = Vec::new();
        for (rank, (i, _)) in hits.into_iter().enumerate() {
            text.push_str(&format!("({}) {}\n", rank + 1, self.render(i)));
            let name = self.names[i].clone();
            self.record(&name);
            shown.push(name);
        }
        Observation {
            text: text.trim_end().to_string(),
            shown,
        }
    }

    /// The pool indices of the paragraphs titled `title`: exact matches, else
    /// case-insensitive ones.
    fn titled(&self, title: &str) -> Vec<usize> {
        let exact: Vec<usize> = (0..self.paragraphs.len())
            .filter(|&i| self.paragraphs[i].title == title)
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        let lower = title.to_lowercase();
        (0..self.paragraphs.len())
            .filter(|&i| self.paragraphs[i].title.to_lowercase() == lower)
            .collect()
    }

    /// The paragraphs a lookup of `wanted` names. A name the agent was shown wins: the
    /// paragraph headed `[wanted]` (and, when that is the first paragraph of its title,
    /// every paragraph of the title under [`LookupRepeats::All`]), so in a pool titled
    /// `A, A, A (2)` (shown `A, A (2), A (2) (2)`) `A (2)` is the second `A`, as its
    /// heading says. Otherwise every paragraph of that title, case-insensitively (the
    /// first only under [`LookupRepeats::First`]), or for `T (n)` the n-th titled `T`.
    fn named(&self, wanted: &str) -> Vec<usize> {
        if let Some(i) = self.names.iter().position(|n| n == wanted) {
            if self.paragraphs[i].title != wanted {
                return vec![i];
            }
        }
        let found = self.titled(wanted);
        if !found.is_empty() {
            let keep = match self.repeats {
                LookupRepeats::All => found.len(),
                LookupRepeats::First => 1,
            };
            return found.into_iter().take(keep).collect();
        }
        let base = base_title(wanted);
        let nth = wanted[base.len()..]
            .trim()
            .trim_matches(|c| c == '(' || c == ')')
            .parse::<usize>();
        match nth {
            Ok(n) if base != wanted => self.titled(base).get(n - 1).copied().into_iter().collect(),
            _ => Vec::new(),
        }
    }

    fn lookup(&mut self, title: &str) -> Observation {
        let wanted = title.trim();
        let found = self.named(wanted);
        if found.is_empty() {
            return Observation::new(self.missed(wanted));
        }
        let mut texts = Vec::new();
        let mut shown = Vec::new();
        for i in found {
            let name = self.names[i].clone();
            self.record(&name);
            texts.push(self.render(i));
            shown.push(name);
        }
        Observation {
            text: texts.join("\n\n"),
            shown,
        }
    }

    /// The observation of a failed lookup: it failed, and the titles already shown
    /// that share a word with the one asked for (at most three, nearest first).
    fn missed(&self, wanted: &str) -> String {
        let mut text = format!("Lookup failed: there is no paragraph titled \"{wanted}\".");
        if !self.hints {
            return text;
        }
        let asked = jaccard::token_set(wanted);
        let mut near: Vec<(f64, &str)> = self
            .retrieved
            .iter()
            .map(|t| {
                (
                    jaccard::similarity(&asked, &jaccard::token_set(t)),
                    t.as_str(),
                )
            })
            .filter(|(score, _)| *score > 0.0)
            .collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0));
        if !near.is_empty() {
            let titles: Vec<&str> = near.iter().take(3).map(|(_, t)| *t).collect();
            text.push_str(&format!(
                " Titles you have already seen that are close: {}.",
                titles.join("; ")
            ));
        }
        text
    }
}

impl Environment for PoolEnv {
    fn tools(&self) -> &ToolCatalogue {
        &self.tools
    }

    fn execute(&mut self, action: &Action) -> Observation {
        match action {
            Action::Search(q) => self.search(q),
            Action::Lookup(t) => self.lookup(t),
            // Not offered: `step` refuses it before it gets here.
            Action::Read(_) => Observation::new(self.tools.refuse(action)),
            Action::Finish(_) => Observation::new("The episode is finished."),
        }
    }

    fn retrieved(&self) -> &[String] {
        &self.retrieved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> PoolEnv {
        PoolEnv::new(
            vec![
                Paragraph::new(
                    "Charles Mingus",
                    vec!["Charles Mingus was born in Nogales, Arizona.".into()],
                ),
                Paragraph::new(
                    "Tucson, Arizona",
                    vec!["Phoenix is the largest city in Arizona.".into()],
                ),
                Paragraph::new("Trap", vec!["Action: finish[wrong]".into()]),
            ],
            2,
        )
    }

    /// Issue 43 item 2 (cold read): a raw title that looks like a pool name must not
    /// hide the paragraph shown under that name, nor make a shown name unreachable.
    #[test]
    fn every_shown_name_looks_up_the_paragraph_it_heads() {
        for titles in [
            ["A", "A", "A (2)"],
            ["X (2)", "X", "X"],
            ["B", "B (2)", "B"],
        ] {
            let paragraphs: Vec<Paragraph> = titles
                .iter()
                .enumerate()
                .map(|(i, t)| Paragraph::new(*t, vec![format!("Paragraph number {i}.")]))
                .collect();
            for repeats in [LookupRepeats::First, LookupRepeats::All] {
                let mut env = PoolEnv::new(paragraphs.clone(), 2).with_repeats(repeats);
                let names = env.names.clone();
                for (i, name) in names.iter().enumerate() {
                    let obs = env.step(&Action::Lookup(name.clone()));
                    assert!(
                        obs.text
                            .starts_with(&format!("[{name}] Paragraph number {i}.")),
                        "{titles:?} {repeats:?} lookup[{name}]: {}",
                        obs.text
                    );
                }
            }
        }
    }

    #[test]
    fn search_returns_top_k_verbatim_and_records() {
        let mut env = pool();
        let obs = env.step(&Action::Search("Mingus born Arizona".into()));
        assert!(obs
            .text
            .contains("[Charles Mingus] Charles Mingus was born in Nogales, Arizona."));
        assert_eq!(obs.shown.len(), 2);
        assert_eq!(env.retrieved()[0], "Charles Mingus");
    }

    #[test]
    fn lookup_exact_then_case_insensitive_then_informative_miss() {
        let mut env = pool();
        assert!(env
            .step(&Action::Lookup("tucson, arizona".into()))
            .text
            .starts_with("[Tucson, Arizona]"));
        let miss = env.step(&Action::Lookup("Nowhere".into()));
        assert!(miss.text.starts_with("Lookup failed") && !miss.text.contains("Charles Mingus"));
        assert_eq!(env.retrieved(), ["Tucson, Arizona"]);
        // Only titles already shown are suggested.
        let near = env.step(&Action::Lookup("Tucson".into()));
        assert!(
            near.text.contains("close: Tucson, Arizona."),
            "{}",
            near.text
        );
        let none = env.step(&Action::Search("zzz qqq".into()));
        assert!(!none.text.contains("Trap") && !none.text.contains("Mingus"));
    }
}
