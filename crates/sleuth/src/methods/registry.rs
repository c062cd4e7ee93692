//! Methods by their command-line names.

use super::agent::{AgentMethod, Style};
use super::corpus::CorpusSetting;
use super::reflexion::Reflexion;
use super::settings::AgentSettings;
use super::{Method, PromptSet};
use crate::memory::{MemorySchema, Section};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A method name with a one-line description, for `--help` and errors.
pub const METHODS: &[(&str, &str)] = &[
    (
        "react",
        "ReAct: interleaved thoughts and actions, no persistent state",
    ),
    (
        "react-cot",
        "ReAct with an explicit chain of thought before every action",
    ),
    (
        "self-ask",
        "Self-Ask: sub-questions answered one after another",
    ),
    (
        "ircot",
        "IRCoT: strictly alternating reasoning and retrieval steps",
    ),
    (
        "reflexion",
        "Reflexion: a retry after a wrong answer, guided by a self-reflection",
    ),
    ("notes", "ReAct with an unstructured scratchpad"),
    ("facts-only", "SLEUTH ablation: Confirmed Facts only"),
    (
        "facts-hyp",
        "SLEUTH ablation: Confirmed Facts + Active Hypotheses",
    ),
    (
        "facts-q",
        "SLEUTH ablation: Confirmed Facts + Open Questions",
    ),
    (
        "sleuth",
        "SLEUTH: facts, ranked hypotheses and open questions, with the commitment nudge",
    ),
    (
        "eir",
        "EIR: lists-guided reading from titles, then a final call on the evidence alone",
    ),
    (
        "direct",
        "EIR-setting baseline: interleaved reasoning and reading, first valid submission",
    ),
    (
        "full-pool",
        "One call answering from every paragraph of the pool (EIR's final prompt)",
    ),
    (
        "ssr",
        "Agentic SSR: each action decomposed, verified 3x per part, refined at most once",
    ),
    (
        "eir-reflexion",
        "Reflexion in the EIR setting: up to 5 trials; first-trial and oracle-stopped answers",
    ),
];

/// Everything needed to build a method besides its name.
pub struct MethodConfig {
    pub settings: BTreeMap<String, String>,
    pub prompts: Arc<PromptSet>,
    /// The open-corpus setting; `None` for each question's own pool.
    pub corpus: Option<Arc<CorpusSetting>>,
}

impl MethodConfig {
    /// Built-in prompts, each question's own pool, and these settings.
    pub fn new(settings: BTreeMap<String, String>) -> Self {
        MethodConfig {
            settings,
            prompts: Arc::new(PromptSet::default()),
            corpus: None,
        }
    }
}

/// Builds a method by name, or says which names exist.
pub fn build(name: &str, config: &MethodConfig) -> Result<Arc<dyn Method>, String> {
    if let Some(method) = super::eir::build(name, config)? {
        return Ok(method);
    }
    let settings = AgentSettings::from_map(&config.settings)?;
    let style = match name {
        "react" => Style::React,
        "react-cot" => Style::ReactCot,
        "self-ask" => Style::SelfAsk,
        "ircot" => Style::Ircot,
        "reflexion" => Style::Reflexion,
        "notes" => Style::Notes,
        "facts-only" => Style::Memory(MemorySchema::of(&[Section::Facts])),
        "facts-hyp" => Style::Memory(MemorySchema::of(&[Section::Facts, Section::Hypotheses])),
        "facts-q" => Style::Memory(MemorySchema::of(&[Section::Facts, Section::Questions])),
        "sleuth" => Style::Memory(MemorySchema::full()),
        _ => {
            return Err(format!(
                "unknown method `{name}` (known: {})",
                METHODS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    };
    let mut agent = AgentMethod::new(name, style, settings, config.prompts.clone());
    if let Some(corpus) = &config.corpus {
        agent = agent.with_env(corpus.clone());
    }
    if name == "reflexion" {
        return Ok(Arc::new(Reflexion::new(agent)));
    }
    Ok(Arc::new(agent))
}

/// Every `--set` key any method understands, with what it accepts.
pub fn setting_keys() -> Vec<(&'static str, &'static str)> {
    let mut keys = super::settings::AGENT_KEYS.to_vec();
    keys.extend_from_slice(super::eir::EIR_KEYS);
    keys
}

/// Checks `--set` keys, naming the unknown one and the known ones.
pub fn check_setting_keys(settings: &BTreeMap<String, String>) -> Result<(), String> {
    let known = setting_keys();
    for key in settings.keys() {
        if !known.iter().any(|(k, _)| k == key) {
            return Err(format!(
                "unknown setting `{key}` (known: {})",
                known.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}
