//! The working-memory notation (SLEUTH paper §3.2, App. K), defined once: the sections
//! and their headers, the entry lines ([`Fact`], [`Hypothesis`], [`OpenQuestion`]), the
//! tolerant reading of what a response wrote ([`parse`]), the adherence check that
//! enforcement uses, and the rendering prompts show. The output grammars
//! ([`super::grammar`]) write the same headers and lines.
//!
//! Which sections a method keeps is its [`MemorySchema`]: SLEUTH keeps all three; the
//! ablations keep subsets; ReAct keeps none; Notes keeps an unstructured scratchpad.
//! What the memory does with the entries (monotonic merging, contradictions) is
//! [`crate::memory`]'s, not the notation's.

mod adherence;
mod entries;
mod parse;

pub use adherence::{
    check_adherence, check_adherence_under, check_adherence_with, AdherenceRules, HypothesisFields,
    SectionProse,
};
pub use entries::{Confidence, Fact, Hypothesis, OpenQuestion, Priority, Triple};
pub use parse::{parse, writes_section};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Facts,
    Hypotheses,
    Questions,
    Notes,
}

impl Section {
    /// The header the model writes before the section.
    pub fn header(self) -> &'static str {
        match self {
            Section::Facts => "Confirmed Facts:",
            Section::Hypotheses => "Active Hypotheses:",
            Section::Questions => "Open Questions:",
            Section::Notes => "Notes:",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySchema {
    pub sections: Vec<Section>,
}

impl MemorySchema {
    pub fn none() -> Self {
        MemorySchema { sections: vec![] }
    }
    pub fn full() -> Self {
        MemorySchema {
            sections: vec![Section::Facts, Section::Hypotheses, Section::Questions],
        }
    }
    pub fn of(sections: &[Section]) -> Self {
        MemorySchema {
            sections: sections.to_vec(),
        }
    }
    pub fn has(&self, s: Section) -> bool {
        self.sections.contains(&s)
    }
}

/// What one response wrote in the notation, section by section. Entries that could not
/// be read are absent; the caller keeps the raw text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    pub facts: Vec<Fact>,
    pub hypotheses: Vec<Hypothesis>,
    pub questions: Vec<OpenQuestion>,
    pub notes: Option<String>,
}

/// The sections of `schema` in the notation: each header, then one line per entry (or
/// the notes' text), `- none` under an empty section.
pub fn render(
    schema: &MemorySchema,
    facts: &[Fact],
    hypotheses: &[Hypothesis],
    questions: &[OpenQuestion],
    notes: Option<&str>,
) -> String {
    let mut out = String::new();
    for &section in &schema.sections {
        out.push_str(section.header());
        out.push('\n');
        let before = out.len();
        match section {
            Section::Facts => {
                for f in facts {
                    out.push_str(&format!("- {}\n", f.render()));
                }
            }
            Section::Hypotheses => {
                for h in hypotheses {
                    out.push_str(&format!("- {}\n", h.render()));
                }
            }
            Section::Questions => {
                for q in questions {
                    out.push_str(&format!("- {}\n", q.render()));
                }
            }
            Section::Notes => {
                if let Some(n) = notes {
                    out.push_str(n);
                    out.push('\n');
                }
            }
        }
        if out.len() == before {
            out.push_str("- none\n");
        }
    }
    out
}
