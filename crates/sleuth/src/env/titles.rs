//! The titles environment of the EIR setting: the agent starts from the question and the
//! titles of the question's paragraph pool, and reads one unread paragraph per read.
//!
//! A requested title is matched against the unread titles (exactly, then ignoring case
//! and quotes); a request that matches none reads the first unread title in pool order,
//! as the EIR paper's environment does (App. B.1), so a read never goes to waste on a typo
//! (the extra reads of App. F.3/F.4 do not substitute: see [`named`]). Budgets
//! (reads, turns) belong to the method's loop, not here.

use super::evidence::{EvidenceEnv, EvidenceEnvFactory, EvidenceStore, ReadOutcome};
use super::Observation;
use crate::data::{Paragraph, Question};

pub use crate::data::display_titles;

/// Renders a paragraph as the agent sees it: its title, then numbered sentences.
pub fn render_paragraph(title: &str, sentences: &[String]) -> String {
    let mut out = format!("[{title}]");
    for (i, s) in sentences.iter().enumerate() {
        out.push_str(&format!("\n({i}) {}", s.trim()));
    }
    out
}

pub struct TitlesEnv {
    paragraphs: Vec<Paragraph>,
    titles: Vec<String>,
    read: Vec<bool>,
    evidence: EvidenceStore,
}

impl TitlesEnv {
    pub fn new(paragraphs: Vec<Paragraph>) -> Self {
        let titles = display_titles(&paragraphs);
        TitlesEnv {
            read: vec![false; paragraphs.len()],
            paragraphs,
            titles,
            evidence: EvidenceStore::default(),
        }
    }

    fn find_unread(&self, wanted: &str) -> Option<usize> {
        let unread: Vec<usize> = (0..self.titles.len()).filter(|&i| !self.read[i]).collect();
        let names: Vec<&str> = unread.iter().map(|&i| self.titles[i].as_str()).collect();
        named(&names, wanted).map(|k| unread[k])
    }
}

/// The position in `titles` of the one `wanted` names: exactly once cleaned of what models
/// wrap titles in, then ignoring case. `None` when it names none of them.
pub fn named(titles: &[&str], wanted: &str) -> Option<usize> {
    let wanted = clean(wanted);
    titles.iter().position(|t| *t == wanted).or_else(|| {
        let lower = wanted.to_lowercase();
        titles.iter().position(|t| t.to_lowercase() == lower)
    })
}

/// Strips what models wrap titles in: whitespace, quotes, brackets.
fn clean(title: &str) -> &str {
    title
        .trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '[' | ']' | '“' | '”'))
        .trim()
}

impl EvidenceEnv for TitlesEnv {
    fn readable(&self) -> Vec<String> {
        (0..self.titles.len())
            .filter(|&i| !self.read[i])
            .map(|i| self.titles[i].clone())
            .collect()
    }

    fn read(&mut self, target: &str, turn: u32) -> ReadOutcome {
        let (index, substituted) = match self.find_unread(target) {
            Some(i) => (i, false),
            None => match self.read.iter().position(|r| !r) {
                Some(i) => (i, true),
                None => {
                    return ReadOutcome {
                        observation: Observation::new(
                            "Every paragraph has already been read; nothing was read.",
                        ),
                        title: None,
                        substituted: false,
                    }
                }
            },
        };
        self.read[index] = true;
        let title = self.titles[index].clone();
        let sentences = &self.paragraphs[index].sentences;
        self.evidence.add_paragraph(&title, sentences, turn);
        let mut text = String::new();
        if substituted {
            text.push_str(&format!(
                "No unread paragraph is titled \"{}\"; the first unread paragraph was read instead.\n",
                clean(target)
            ));
        }
        text.push_str(&render_paragraph(&title, sentences));
        ReadOutcome {
            observation: Observation {
                text,
                shown: vec![title.clone()],
            },
            title: Some(title),
            substituted,
        }
    }

    fn evidence(&self) -> &EvidenceStore {
        &self.evidence
    }
}

/// The default EIR-setting environment: the question's own pool.
pub struct TitlesEnvFactory;

impl EvidenceEnvFactory for TitlesEnvFactory {
    fn make(&self, question: &Question) -> Box<dyn EvidenceEnv> {
        Box::new(TitlesEnv::new(question.paragraphs.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> TitlesEnv {
        TitlesEnv::new(vec![
            Paragraph::new("Alpha", vec!["A one.".into(), "A two.".into()]),
            Paragraph::new("Beta", vec!["B one.".into()]),
            Paragraph::new("Alpha", vec!["Second alpha.".into()]),
        ])
    }

    #[test]
    fn starts_with_titles_only_and_disambiguates_repeats() {
        assert_eq!(env().readable(), ["Alpha", "Beta", "Alpha (2)"]);
        assert!(env().evidence().is_empty());
    }

    #[test]
    fn reads_by_title_ignoring_case_and_quotes_and_records_evidence() {
        let mut env = env();
        let out = env.read("\"beta\"", 1);
        assert_eq!(out.title.as_deref(), Some("Beta"));
        assert!(!out.substituted);
        assert_eq!(out.observation.text, "[Beta]\n(0) B one.");
        assert_eq!(env.readable(), ["Alpha", "Alpha (2)"]);
        let r = &env.evidence().records()[0];
        assert_eq!((r.title(), r.sentence(), r.turn()), ("Beta", 0, 1));
    }

    #[test]
    fn unmatched_or_already_read_title_reads_first_unread_in_pool_order() {
        let mut env = env();
        env.read("Alpha", 1);
        let out = env.read("Alpha", 2);
        assert!(out.substituted);
        assert_eq!(out.title.as_deref(), Some("Beta"));
        assert!(out
            .observation
            .text
            .contains("No unread paragraph is titled \"Alpha\""));
        let out = env.read("Nothing like it", 3);
        assert_eq!(out.title.as_deref(), Some("Alpha (2)"));
        let out = env.read("Beta", 4);
        assert_eq!(out.title, None);
        assert_eq!(env.evidence().titles(), ["Alpha", "Beta", "Alpha (2)"]);
        assert_eq!(env.evidence().len(), 4);
    }
}
