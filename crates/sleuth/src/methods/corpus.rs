//! The open-corpus setting for both method families: episodes search a BM25 index
//! instead of the question's own pool. Loop methods act in a [`CorpusEnv`] directly;
//! EIR-setting methods get it behind [`EvidenceEnv`], so reads become evidence records.

use super::settings::AgentSettings;
use super::EnvFactory;
use crate::data::Question;
use crate::env::{
    Action, CorpusEnv, CorpusOptions, Environment, EvidenceEnv, EvidenceEnvFactory, EvidenceStore,
    Observation, ReadOutcome,
};
use crate::retrieval::bm25::Bm25Index;
use std::sync::Arc;

/// An index and the setting's budgets, shared by every episode of a run.
pub struct CorpusSetting {
    pub index: Arc<Bm25Index>,
    pub options: CorpusOptions,
}

impl EnvFactory for CorpusSetting {
    fn make(&self, _question: &Question, _settings: &AgentSettings) -> Box<dyn Environment> {
        Box::new(CorpusEnv::new(self.index.clone(), self.options))
    }
}

impl EvidenceEnvFactory for CorpusSetting {
    fn make(&self, _question: &Question) -> Box<dyn EvidenceEnv> {
        Box::new(CorpusEvidenceEnv {
            env: CorpusEnv::new(self.index.clone(), self.options),
            evidence: EvidenceStore::default(),
        })
    }
}

/// A corpus episode whose reads are stored as sentence-level evidence records. Search
/// results accumulate over the trial (EIR paper App. H.1: up to ten BM25 titles and ids
/// per search, no text or scores; only ids found in this trial can be read); a fresh
/// environment per trial means Reflexion's later trials start without them (H.2).
struct CorpusEvidenceEnv {
    env: CorpusEnv,
    evidence: EvidenceStore,
}

impl EvidenceEnv for CorpusEvidenceEnv {
    fn readable(&self) -> Vec<String> {
        self.env.searched().to_vec()
    }

    /// Every id this trial's searches listed, with its title, read ones marked.
    fn choices(&self) -> Vec<String> {
        let read = self.env.retrieved();
        self.env
            .searched()
            .iter()
            .map(|id| {
                let title = self.env.found_title(id).unwrap_or("");
                let mark = if read.contains(id) { " (read)" } else { "" };
                format!("[id {id}] {title}{mark}")
            })
            .collect()
    }

    fn read(&mut self, target: &str, turn: u32) -> ReadOutcome {
        let before = self.env.retrieved().len();
        let observation = self.env.step(&Action::Read(target.to_string()));
        let mut title = None;
        if self.env.retrieved().len() > before {
            let id = self.env.retrieved()[before].clone();
            if let Some(p) = self.env.read_paragraph(&id) {
                self.evidence.add_paragraph(&p.title, &p.sentences, turn);
                title = Some(p.title.clone());
            }
        }
        ReadOutcome {
            observation,
            title,
            substituted: false,
        }
    }

    fn can_search(&self) -> bool {
        true
    }

    fn read_budget(&self) -> Option<u32> {
        Some(u32::try_from(self.env.max_reads()).unwrap_or(u32::MAX))
    }

    fn use_read_attempt(&mut self) {
        self.env.use_read_attempt();
    }

    fn search(&mut self, query: &str, _turn: u32) -> Option<Observation> {
        let mut observation = self.env.step(&Action::Search(query.to_string()));
        // The loop protocol's hint; EIR-setting methods read with a JSON action.
        if let Some(text) = observation
            .text
            .strip_suffix("Read a paragraph with read[<id>].")
        {
            observation.text =
                format!("{text}Read one with {{\"type\": \"read\", \"id\": \"<id>\"}}.");
        }
        Some(observation)
    }

    fn evidence(&self) -> &EvidenceStore {
        &self.evidence
    }
}
