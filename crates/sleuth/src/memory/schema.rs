//! Which memory sections a method keeps: SLEUTH keeps all three; the ablations keep
//! subsets; ReAct keeps none; Notes keeps an unstructured scratchpad.

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
    pub fn is_structured(&self) -> bool {
        self.has(Section::Facts)
    }
}
