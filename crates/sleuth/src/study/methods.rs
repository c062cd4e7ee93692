//! The methods of a run, from their names and options: `--set` pairs, a prompt folder,
//! the open-corpus setting. The judge of the retry wrappers (Reflexion's controller) is
//! injected here, where the run is assembled: the official exact match of the
//! evaluation layer (SLEUTH paper §4; EIR paper App. D.1), since a method never
//! imports `eval`.

use crate::env::CorpusOptions;
use crate::eval::metrics::OfficialExactMatch;
use crate::eval::RecordedRuns;
use crate::methods::corpus::CorpusSetting;
use crate::methods::registry::{self, MethodConfig, MethodError};
use crate::methods::{PromptSet, RegisteredMethod};
use crate::retrieval::bm25::Bm25Index;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The open-corpus setting: a BM25 index and the read attempts per episode.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusChoice {
    pub index: PathBuf,
    pub reads: usize,
}

/// What builds a run's methods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MethodSetup {
    /// Method names in order; repeats are dropped.
    pub names: Vec<String>,
    /// The `--set` pairs as given (checked against the chosen methods).
    pub settings: BTreeMap<String, String>,
    /// A directory of prompt templates replacing the built-in ones by file name.
    pub prompts: Option<PathBuf>,
    /// `None`: each question's own paragraph pool.
    pub corpus: Option<CorpusChoice>,
}

/// The built methods and the configuration they were built from.
#[derive(Clone)]
pub struct Methods {
    pub config: MethodConfig,
    pub built: Vec<Arc<RegisteredMethod>>,
}

impl MethodSetup {
    /// The setting `run.json` names: `pool` or `corpus`.
    pub fn env(&self) -> &'static str {
        if self.corpus.is_some() {
            "corpus"
        } else {
            "pool"
        }
    }

    /// The configuration every method is built from.
    pub fn config(&self) -> Result<MethodConfig> {
        let mut config = MethodConfig::new(self.settings.clone(), Arc::new(OfficialExactMatch));
        config.earlier = Some(Arc::new(RecordedRuns));
        if let Some(dir) = &self.prompts {
            config.prompts = Arc::new(PromptSet::with_overrides(dir)?);
        }
        if let Some(corpus) = &self.corpus {
            let index = Bm25Index::open(&corpus.index).map_err(|source| Error::IndexAt {
                dir: corpus.index.clone(),
                source,
            })?;
            config.corpus = Some(Arc::new(CorpusSetting {
                index: Arc::new(index),
                options: CorpusOptions {
                    max_reads: corpus.reads.max(1),
                    ..CorpusOptions::default()
                },
            }));
        }
        Ok(config)
    }

    /// The names in order, without repeats or blanks.
    pub fn chosen(&self) -> Vec<&str> {
        let mut chosen: Vec<&str> = Vec::new();
        for name in self
            .names
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
        {
            if !chosen.contains(&name) {
                chosen.push(name);
            }
        }
        chosen
    }

    /// Builds the methods after checking that every setting is read by one of them.
    pub fn build(&self) -> Result<Methods> {
        let config = self.config()?;
        let built = self.build_with(&config)?;
        Ok(Methods { config, built })
    }

    /// Checks names and settings without opening the prompt folder or the index: what
    /// a recipe's jobs are checked with before anything runs.
    pub fn check(&self) -> Result<()> {
        let config = MethodConfig::new(self.settings.clone(), Arc::new(OfficialExactMatch));
        let built = self.build_with(&config)?;
        if self.corpus.is_some() {
            if let Some(m) = built.iter().find(|m| !m.spec().corpus) {
                return Err(MethodError::NoCorpus {
                    name: m.name(),
                    summary: m.spec().summary,
                }
                .into());
            }
        }
        Ok(())
    }

    fn build_with(&self, config: &MethodConfig) -> Result<Vec<Arc<RegisteredMethod>>> {
        let chosen = self.chosen();
        if chosen.is_empty() {
            return Err(MethodError::NoneChosen.into());
        }
        registry::check_keys(&chosen, &config.settings)?;
        chosen
            .into_iter()
            .map(|name| {
                registry::build(name, config)
                    .map(Arc::new)
                    .map_err(Error::from)
            })
            .collect()
    }
}
