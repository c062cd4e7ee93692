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

/// A corpus episode whose reads are stored as sentence-level evidence records.
struct CorpusEvidenceEnv {
    env: CorpusEnv,
    evidence: EvidenceStore,
}

impl EvidenceEnv for CorpusEvidenceEnv {
    fn readable(&self) -> Vec<String> {
        self.env.searched().to_vec()
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

    fn search(&mut self, query: &str, _turn: u32) -> Option<Observation> {
        Some(self.env.step(&Action::Search(query.to_string())))
    }

    fn evidence(&self) -> &EvidenceStore {
        &self.evidence
    }
}
