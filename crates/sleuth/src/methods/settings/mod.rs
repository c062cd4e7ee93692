//! Method settings (`--set key=value`), parsed once into types by one key catalogue.
//!
//! Settings are options of a method, not new methods: the nudge turn, τ, the budgets,
//! top-k, enforcement, the stopping strategy and EIR's controls. Every key is a row of
//! [`SETTINGS`]: what it accepts, how it is applied to the typed [`Settings`], and how
//! its resolved value is written back (for `run.json`, records and arm labels). Which
//! method reads which key is data in the registry (`registry::METHODS`), so a key no
//! chosen method reads is refused instead of being silently ignored.

pub mod agent;
pub mod eir;
mod error;

pub use agent::{
    AdaptiveCondition, AdaptiveRule, AgentSettings, GrammarUse, NudgeAt, NudgeCount, Stopping,
    ToolChannel,
};
pub use eir::{
    DependencyRepair, EirSettings, FinalCitations, LastTurn, ListErrors, RecoverMode,
    RequirementRefresh, SelectedRerun,
};
pub use error::SettingError;

use crate::env::LookupRepeats;
use crate::memory::{FactIdReuse, HypothesisFields, SectionProse};
use crate::names::Named;
use std::collections::BTreeMap;

/// Which family's value a key shared by both (`temperature`, `max_tokens`) shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The shared agent loop (SLEUTH setting).
    Loop,
    /// The EIR setting's methods.
    Eir,
}

/// Every typed setting of a run; each method reads its family's part.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    pub agent: AgentSettings,
    pub eir: EirSettings,
}

/// One `--set` key.
pub struct SettingDef {
    pub key: &'static str,
    /// What the key means and accepts (shown by `sleuth methods NAME`).
    pub doc: &'static str,
    apply: fn(&mut Settings, &str) -> Result<(), SettingError>,
    show: fn(&Settings, Family) -> String,
}

impl SettingDef {
    /// A catalogue row: the key, what it accepts, how a value is applied to the typed
    /// settings, and how the resolved value is written back.
    pub const fn new(
        key: &'static str,
        doc: &'static str,
        apply: fn(&mut Settings, &str) -> Result<(), SettingError>,
        show: fn(&Settings, Family) -> String,
    ) -> SettingDef {
        SettingDef {
            key,
            doc,
            apply,
            show,
        }
    }

    /// The resolved value of this key, written so that applying it again gives the same.
    pub fn show(&self, settings: &Settings, family: Family) -> String {
        (self.show)(settings, family)
    }
}

fn num<T: std::str::FromStr>(key: &str, value: &str, what: &str) -> Result<T, SettingError> {
    value
        .trim()
        .parse()
        .map_err(|_| SettingError::value(key, value, what))
}

fn positive(key: &str, value: &str) -> Result<u32, SettingError> {
    match num::<u32>(key, value, "an integer >= 1")? {
        0 => Err(SettingError::value(key, value, "an integer >= 1")),
        n => Ok(n),
    }
}

fn boolean(key: &str, value: &str) -> Result<bool, SettingError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(SettingError::value(key, value, "true or false")),
    }
}

fn temperature(key: &str, value: &str) -> Result<f32, SettingError> {
    match num::<f32>(key, value, "a number in [0, 2]")? {
        t if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(SettingError::value(key, value, "a number in [0, 2]")),
    }
}

/// The key catalogue. Order is the order `sleuth methods NAME` lists keys in.
pub const SETTINGS: &[SettingDef] = &[
    SettingDef {
        key: "turns",
        doc: "turn budget T (integer >= 1)",
        apply: |s, v| {
            s.agent.turns = positive("turns", v)?;
            Ok(())
        },
        show: |s, _| s.agent.turns.to_string(),
    },
    SettingDef {
        key: "nudge",
        doc: "when the commitment nudge may fire: α in (0,1] (a fraction of T), turn:N, adaptive (working-memory methods: from the memory's state, see the adaptive_* keys; others get no nudge), or none",
        apply: |s, v| {
            s.agent.nudge = NudgeAt::parse(v).map_err(SettingError::Rule)?;
            Ok(())
        },
        show: |s, _| s.agent.nudge.to_string(),
    },
    SettingDef {
        key: "nudge_count",
        doc: "how nudge=α names a turn: turn (default: the turn numbered ⌈α·T⌉, 14 of 20, Table 2's Nudge@14) or consumed (α·T turns already used: 15 of 20)",
        apply: |s, v| {
            s.agent.nudge_count = NudgeCount::from_name(v)
                .ok_or_else(|| SettingError::value("nudge_count", v, "turn or consumed"))?;
            Ok(())
        },
        show: |s, _| s.agent.nudge_count.name().into(),
    },
    SettingDef {
        key: "tau",
        doc: "τ, confirmed facts needed before the nudge may fire",
        apply: |s, v| {
            s.agent.tau = num("tau", v, "an integer >= 0")?;
            Ok(())
        },
        show: |s, _| s.agent.tau.to_string(),
    },
    SettingDef {
        key: "nudge_gate",
        doc: "facts (|Facts| >= τ) or empty-questions (also no open question)",
        apply: |s, v| {
            s.agent.nudge_needs_empty_questions = match v.trim() {
                "facts" => false,
                "empty-questions" => true,
                _ => return Err(SettingError::value("nudge_gate", v, "facts or empty-questions")),
            };
            Ok(())
        },
        show: |s, _| {
            if s.agent.nudge_needs_empty_questions { "empty-questions" } else { "facts" }.into()
        },
    },
    SettingDef {
        key: "adaptive_confident",
        doc: "nudge=adaptive: fire once the top hypothesis is high-confidence and cites confirmed facts covering the question's hops (τ if unknown) (true/false)",
        apply: |s, v| {
            s.agent.adaptive.confident = boolean("adaptive_confident", v)?;
            Ok(())
        },
        show: |s, _| s.agent.adaptive.confident.to_string(),
    },
    SettingDef {
        key: "adaptive_questions",
        doc: "nudge=adaptive: fire once the model opened questions and none is left open, with τ facts confirmed (true/false)",
        apply: |s, v| {
            s.agent.adaptive.questions_closed = boolean("adaptive_questions", v)?;
            Ok(())
        },
        show: |s, _| s.agent.adaptive.questions_closed.to_string(),
    },
    SettingDef {
        key: "adaptive_stagnation",
        doc: "nudge=adaptive: fire after K turns in a row without a new confirmed fact, with τ facts confirmed (integer; 0 off; default 3)",
        apply: |s, v| {
            s.agent.adaptive.stagnation = num("adaptive_stagnation", v, "an integer >= 0")?;
            Ok(())
        },
        show: |s, _| s.agent.adaptive.stagnation.to_string(),
    },
    SettingDef {
        key: "compact",
        doc: "context compaction: once a fact is confirmed, requests keep the system text, the question with the merged memory and the last K exchanges (integer >= 1, or none)",
        apply: |s, v| {
            s.agent.compact = match v.trim() {
                "none" | "off" => None,
                _ => Some(positive("compact", v)?),
            };
            Ok(())
        },
        show: |s, _| s.agent.compact.map_or("none".into(), |k| k.to_string()),
    },
    SettingDef {
        key: "compact_slack",
        doc: "with compact=K: exchanges may pile up to K + S before the next compaction back to K, and the memory note stays as written at the last one, so the prompt prefix is stable between compactions and a provider's prompt cache can read it (integer >= 0; 0: compact every turn)",
        apply: |s, v| {
            s.agent.compact_slack = num("compact_slack", v, "an integer >= 0")?;
            Ok(())
        },
        show: |s, _| s.agent.compact_slack.to_string(),
    },
    SettingDef {
        key: "contradictions",
        doc: "per-fact confidence and contradiction detection: facts may carry `| confidence: ... | triple: S ; R ; V`; a new fact with a confirmed fact's subject and relation but another value is held out and raised as an open question until marked resolved (true/false)",
        apply: |s, v| {
            s.agent.contradictions = boolean("contradictions", v)?;
            Ok(())
        },
        show: |s, _| s.agent.contradictions.to_string(),
    },
    SettingDef {
        key: "fact_id_reuse",
        doc: "a new statement under a confirmed fact's id: check (a rewording when it names the same source, shares half its content words and keeps every name and number; else another fact, kept beside the old one under a fresh id) or rewording (always replaces the old wording)",
        apply: |s, v| {
            s.agent.fact_id_reuse = FactIdReuse::from_name(v).ok_or_else(|| {
                SettingError::value("fact_id_reuse", v, FactIdReuse::NAMES.join(" or "))
            })?;
            Ok(())
        },
        show: |s, _| s.agent.fact_id_reuse.name().into(),
    },
    SettingDef {
        key: "hypothesis_fields",
        doc: "what a hypothesis line needs to count as adherent (and pass enforcement): all (confidence, supports and contradicts, each possibly empty) or confidence",
        apply: |s, v| {
            s.agent.hypothesis_fields = HypothesisFields::from_name(v).ok_or_else(|| {
                SettingError::value("hypothesis_fields", v, HypothesisFields::NAMES.join(" or "))
            })?;
            Ok(())
        },
        show: |s, _| s.agent.hypothesis_fields.name().into(),
    },
    SettingDef {
        key: "section_prose",
        doc: "a line of prose inside a typed memory section: ends (after the section's entries it ends the section) or judged (judged as an entry, so not adherent)",
        apply: |s, v| {
            s.agent.section_prose = SectionProse::from_name(v).ok_or_else(|| {
                SettingError::value("section_prose", v, SectionProse::NAMES.join(" or "))
            })?;
            Ok(())
        },
        show: |s, _| s.agent.section_prose.name().into(),
    },
    SettingDef {
        key: "missing_hypotheses",
        doc: "a response without an Active Hypotheses section: carry (the state keeps the hypotheses it had) or clear (the state's hypotheses become empty)",
        apply: |s, v| {
            s.agent.carry_hypotheses = match v.trim() {
                "carry" => true,
                "clear" => false,
                _ => return Err(SettingError::value("missing_hypotheses", v, "carry or clear")),
            };
            Ok(())
        },
        show: |s, _| if s.agent.carry_hypotheses { "carry" } else { "clear" }.into(),
    },
    SettingDef {
        key: "nudge_all",
        doc: "true: methods without a memory get the nudge too, ungated (the ReAct + nudge control)",
        apply: |s, v| {
            s.agent.nudge_all = boolean("nudge_all", v)?;
            Ok(())
        },
        show: |s, _| s.agent.nudge_all.to_string(),
    },
    SettingDef {
        key: "stopping",
        doc: "nudge, none, structural (commit once every open question is resolved), forward-only, contrastive, late-verification (free search without memory, then a chain check) or late-verification-memory; the alternatives replace the nudge",
        apply: |s, v| {
            // What it does to the nudge is settled after every key (`commitment`).
            if v.trim() == "none" {
                s.agent.stopping = Stopping::Nudge;
                return Ok(());
            }
            s.agent.stopping = Stopping::from_name(v).ok_or_else(|| {
                SettingError::value("stopping", v, format!("none or one of {}", Stopping::names().join(", ")))
            })?;
            Ok(())
        },
        show: |s, _| s.agent.stopping.name().into(),
    },
    SettingDef {
        key: "top_k",
        doc: "paragraphs per search (integer >= 1)",
        apply: |s, v| {
            s.agent.top_k = positive("top_k", v)? as usize;
            Ok(())
        },
        show: |s, _| s.agent.top_k.to_string(),
    },
    SettingDef {
        key: "actions_per_turn",
        doc: "cap on tool calls executed from one response (integer >= 1; default 8, corpus setting 6); one beyond it is answered \"not run\"",
        apply: |s, v| {
            s.agent.actions_per_turn = positive("actions_per_turn", v)? as usize;
            Ok(())
        },
        show: |s, _| s.agent.actions_per_turn.to_string(),
    },
    SettingDef {
        key: "tool_channel",
        doc: "text (Action: lines, every provider) or native (the provider's tool calling: OpenAI-compatible tools, Anthropic tool_use); same trace either way",
        apply: |s, v| {
            s.agent.tool_channel = ToolChannel::from_name(v)
                .ok_or_else(|| SettingError::value("tool_channel", v, "text or native"))?;
            Ok(())
        },
        show: |s, _| s.agent.tool_channel.name().into(),
    },
    SettingDef {
        key: "enforce",
        doc: "true: runtime protocol enforcement (a response without the memory notation is re-prompted)",
        apply: |s, v| {
            s.agent.enforce = boolean("enforce", v)?;
            Ok(())
        },
        show: |s, _| s.agent.enforce.to_string(),
    },
    SettingDef {
        key: "restore_facts",
        doc: "true: hand confirmed facts the model left out back in the next observation (ours; not part of enforce, App. M)",
        apply: |s, v| {
            s.agent.restore_facts = boolean("restore_facts", v)?;
            Ok(())
        },
        show: |s, _| s.agent.restore_facts.to_string(),
    },
    SettingDef {
        key: "lookup_repeats",
        doc: "a lookup of a title several pool paragraphs share: first (default; `T (2)` names the second, `T (3)` the third) or all (every one, in pool order)",
        apply: |s, v| {
            s.agent.lookup_repeats = LookupRepeats::from_name(v).ok_or_else(|| {
                SettingError::value("lookup_repeats", v, LookupRepeats::NAMES.join(" or "))
            })?;
            Ok(())
        },
        show: |s, _| s.agent.lookup_repeats.name().into(),
    },
    SettingDef {
        key: "lookup_hints",
        doc: "on (default): a failed lookup names up to three already-shown titles close to the one asked for; off: it only says it failed (SLEUTH App. M's bare tools)",
        apply: |s, v| {
            s.agent.lookup_hints = boolean("lookup_hints", v)?;
            Ok(())
        },
        show: |s, _| if s.agent.lookup_hints { "on" } else { "off" }.into(),
    },
    SettingDef {
        key: "keep_rejected",
        doc: "true: a reply enforcement rejected and its reminder stay in the conversation for the rest of the episode (default false: they leave it once a reply is accepted)",
        apply: |s, v| {
            s.agent.keep_rejected = boolean("keep_rejected", v)?;
            Ok(())
        },
        show: |s, _| s.agent.keep_rejected.to_string(),
    },
    SettingDef {
        key: "max_reminders",
        doc: "enforcement reminders per episode",
        apply: |s, v| {
            s.agent.max_reminders = num("max_reminders", v, "an integer >= 0")?;
            Ok(())
        },
        show: |s, _| s.agent.max_reminders.to_string(),
    },
    SettingDef {
        key: "episodes",
        doc: "Reflexion: episodes per question (integer >= 1)",
        apply: |s, v| {
            s.agent.episodes = positive("episodes", v)?;
            Ok(())
        },
        show: |s, _| s.agent.episodes.to_string(),
    },
    SettingDef {
        key: "last_turn_answer_only",
        doc: "true: the last turn accepts only finish (the corpus setting's rule)",
        apply: |s, v| {
            s.agent.last_turn_answer_only = boolean("last_turn_answer_only", v)?;
            Ok(())
        },
        show: |s, _| s.agent.last_turn_answer_only.to_string(),
    },
    SettingDef {
        key: "grammar",
        doc: "auto (default: only the embedded model samples under the protocol's grammar; no server gets one, SLEUTH §3.4), true (servers get a grammar that keeps the method: free reasoning, up to actions_per_turn action lines) or false (none anywhere)",
        apply: |s, v| {
            s.agent.grammar = GrammarUse::from_name(v)
                .ok_or_else(|| SettingError::value("grammar", v, "auto, true or false"))?;
            Ok(())
        },
        show: |s, _| s.agent.grammar.name().into(),
    },
    SettingDef {
        key: "reads",
        doc: "read budget H (integer >= 1)",
        apply: |s, v| {
            s.eir.reads = positive("reads", v)?;
            Ok(())
        },
        show: |s, _| s.eir.reads.to_string(),
    },
    SettingDef {
        key: "action_turns",
        doc: "EIR setting: action turns per trajectory, the submission included: auto (H + 1 for EIR, H for the others) or N (corpus default 12)",
        apply: |s, v| {
            s.eir.action_turns = match v.trim() {
                "auto" => None,
                _ => Some(positive("action_turns", v)?),
            };
            Ok(())
        },
        show: |s, _| s.eir.action_turns.map_or("auto".into(), |n| n.to_string()),
    },
    SettingDef {
        key: "last_turn",
        doc: "Direct, SSR, Reflexion (EIR §4.2, H turns including the submission): submit_only (default: the last turn accepts only a submission, so at most H - 1 reads) or any",
        apply: |s, v| {
            s.eir.last_turn = LastTurn::from_name(v)
                .ok_or_else(|| SettingError::value("last_turn", v, "submit_only or any"))?;
            Ok(())
        },
        show: |s, _| s.eir.last_turn.name().into(),
    },
    SettingDef {
        key: "trials",
        doc: "Reflexion in the EIR setting: trials per question (integer >= 1)",
        apply: |s, v| {
            s.eir.trials = positive("trials", v)?;
            Ok(())
        },
        show: |s, _| s.eir.trials.to_string(),
    },
    SettingDef {
        key: "verifier_temperature",
        doc: "Agentic SSR: temperature of the three verifier samples",
        apply: |s, v| {
            s.eir.verifier_temperature = temperature("verifier_temperature", v)?;
            Ok(())
        },
        show: |s, _| s.eir.verifier_temperature.to_string(),
    },
    SettingDef {
        key: "list_feedback",
        doc: "false: EIR keeps its lists out of later action prompts (control)",
        apply: |s, v| {
            s.eir.list_feedback = boolean("list_feedback", v)?;
            Ok(())
        },
        show: |s, _| s.eir.list_feedback.to_string(),
    },
    SettingDef {
        key: "list_errors",
        doc: "EIR's list changes failing the check (EIR §3.2, B.1): discard (default) keeps both lists unchanged and runs the action; refuse refuses the whole turn",
        apply: |s, v| {
            s.eir.list_errors = ListErrors::from_name(v)
                .ok_or_else(|| SettingError::value("list_errors", v, "discard or refuse"))?;
            Ok(())
        },
        show: |s, _| s.eir.list_errors.name().into(),
    },
    SettingDef {
        key: "dependency_repair",
        doc: "true: conclusions carry dependencies and a revision repairs its dependents and the requirements (control); unapplied: the same calls, changes discarded",
        apply: |s, v| {
            s.eir.dependency_repair = DependencyRepair::from_name(v).ok_or_else(|| {
                SettingError::value("dependency_repair", v, "true, false or unapplied")
            })?;
            Ok(())
        },
        show: |s, _| s.eir.dependency_repair.name().into(),
    },
    SettingDef {
        key: "extra_reads",
        doc: "further reads the model may request after its final answer (control)",
        apply: |s, v| {
            s.eir.extra_reads = num("extra_reads", v, "an integer >= 0")?;
            Ok(())
        },
        show: |s, _| s.eir.extra_reads.to_string(),
    },
    SettingDef {
        key: "recover",
        doc: "eir-recover: added (the missed annotated paragraphs), unchanged, or selected (up to two the model picks)",
        apply: |s, v| {
            s.eir.recover = RecoverMode::from_name(v).ok_or_else(|| {
                SettingError::value("recover", v, "added, unchanged or selected")
            })?;
            Ok(())
        },
        show: |s, _| s.eir.recover.name().into(),
    },
    SettingDef {
        key: "selected_rerun",
        doc: "recover=selected (EIR App. F.3): always (default) runs the final call again on the evidence, expanded or not; after_read only after a successful read (F.4's rule)",
        apply: |s, v| {
            s.eir.selected_rerun = SelectedRerun::from_name(v).ok_or_else(|| {
                SettingError::value("selected_rerun", v, "always or after_read")
            })?;
            Ok(())
        },
        show: |s, _| s.eir.selected_rerun.name().into(),
    },
    SettingDef {
        key: "refresh",
        doc: "dependency_repair (EIR App. E.3): revision (default) refreshes the requirements after every turn that revises a conclusion; dependents only when a revised conclusion has dependents",
        apply: |s, v| {
            s.eir.refresh = RequirementRefresh::from_name(v).ok_or_else(|| {
                SettingError::value("refresh", v, "revision or dependents")
            })?;
            Ok(())
        },
        show: |s, _| s.eir.refresh.name().into(),
    },
    SettingDef {
        key: "from",
        doc: "eir-recover: the earlier EIR run (run directory or records file) whose evidence is reused",
        apply: |s, v| {
            s.eir.recover_from = Some(std::path::PathBuf::from(v.trim()));
            Ok(())
        },
        show: |s, _| {
            s.eir.recover_from.as_ref().map_or(String::new(), |p| p.display().to_string())
        },
    },
    SettingDef {
        key: "final_citations",
        doc: "a final response citing a sentence not in the evidence (EIR App. H.4): keep_answer (default) refuses those citations and records why; reject_answer rejects the whole response (no answer)",
        apply: |s, v| {
            s.eir.final_citations = FinalCitations::from_name(v).ok_or_else(|| {
                SettingError::value("final_citations", v, "keep_answer or reject_answer")
            })?;
            Ok(())
        },
        show: |s, _| s.eir.final_citations.name().into(),
    },
    SettingDef {
        key: "json_schema",
        doc: "true: send the JSON schema of each call as an output constraint (default false: prompting only, EIR App. H.4, C.2; responses are validated either way)",
        apply: |s, v| {
            s.eir.json_schema = boolean("json_schema", v)?;
            Ok(())
        },
        show: |s, _| s.eir.json_schema.to_string(),
    },
    SettingDef {
        key: "hidden_lists",
        doc: "list_feedback=false (EIR App. E.2): discard (default, the corrected control) drops a list change naming ids the model cannot see and runs the action; refuse refuses the whole turn",
        apply: |s, v| {
            s.eir.refuse_hidden_lists = match v.trim() {
                "discard" => false,
                "refuse" => true,
                _ => {
                    return Err(SettingError::value("hidden_lists", v, "discard or refuse"))
                }
            };
            Ok(())
        },
        show: |s, _| {
            if s.eir.refuse_hidden_lists {
                "refuse".into()
            } else {
                "discard".into()
            }
        },
    },
    SettingDef {
        key: "temperature",
        doc: "sampling temperature of the method's calls, in [0, 2]",
        apply: |s, v| {
            let t = temperature("temperature", v)?;
            s.agent.temperature = t;
            s.eir.temperature = t;
            Ok(())
        },
        show: |s, family| match family {
            Family::Loop => s.agent.temperature.to_string(),
            Family::Eir => s.eir.temperature.to_string(),
        },
    },
    SettingDef {
        key: "max_tokens",
        doc: "output tokens per response (integer >= 1; defaults: 4096 loop methods, 2048 EIR setting; a reply cut at the limit is marked truncated)",
        apply: |s, v| {
            let n = positive("max_tokens", v)?;
            s.agent.max_tokens = n;
            s.eir.max_tokens = n;
            Ok(())
        },
        show: |s, family| match family {
            Family::Loop => s.agent.max_tokens.to_string(),
            Family::Eir => s.eir.max_tokens.to_string(),
        },
    },
];

/// The catalogue row of `key`.
pub fn def(key: &str) -> Option<&'static SettingDef> {
    SETTINGS.iter().find(|d| d.key == key)
}

/// The catalogue row of `key`, or an error naming the known keys.
pub fn known(key: &str) -> Result<&'static SettingDef, SettingError> {
    known_in(&[SETTINGS], key)
}

/// The row of `key` in a catalogue made of several tables (the built-in one and any a
/// caller adds), or an error naming every key of them.
pub fn known_in<'a>(
    catalogue: &[&'a [SettingDef]],
    key: &str,
) -> Result<&'a SettingDef, SettingError> {
    catalogue
        .iter()
        .flat_map(|t| t.iter())
        .find(|d| d.key == key)
        .ok_or_else(|| SettingError::Unknown {
            key: key.to_string(),
            known: catalogue
                .iter()
                .flat_map(|t| t.iter())
                .map(|d| d.key)
                .collect(),
        })
}

impl Settings {
    /// The defaults: the papers' values, or the open-corpus setting's budget.
    pub fn defaults(corpus: bool) -> Self {
        Settings {
            agent: if corpus {
                AgentSettings::corpus()
            } else {
                AgentSettings::default()
            },
            eir: if corpus {
                EirSettings::corpus()
            } else {
                EirSettings::default()
            },
        }
    }

    /// Applies `key=value` pairs over the defaults; an unknown key names the known ones.
    pub fn parse(pairs: &BTreeMap<String, String>, corpus: bool) -> Result<Self, SettingError> {
        Settings::parse_in(&[SETTINGS], pairs, corpus)
    }

    /// [`Settings::parse`] with keys from `catalogue` (the built-in [`SETTINGS`] and
    /// any table a caller adds: a new key is one [`SettingDef`] row).
    pub fn parse_in(
        catalogue: &[&[SettingDef]],
        pairs: &BTreeMap<String, String>,
        corpus: bool,
    ) -> Result<Self, SettingError> {
        let mut settings = Settings::defaults(corpus);
        for (key, value) in pairs {
            (known_in(catalogue, key)?.apply)(&mut settings, value)?;
        }
        commitment(&mut settings, pairs);
        if settings.agent.compact_slack > 0 && settings.agent.compact.is_none() {
            let slack = format!("compact_slack={}", settings.agent.compact_slack);
            return Err(SettingError::Rule(format!(
                "{}: needs compaction on (compact=K)",
                crate::knob::Knob::Set.with(slack)
            )));
        }
        Ok(settings)
    }

    /// The resolved value of each of `keys`, defaults included, as `key -> value`.
    pub fn resolved(&self, keys: &[&str], family: Family) -> BTreeMap<String, String> {
        keys.iter()
            .filter_map(|k| def(k))
            .map(|d| (d.key.to_string(), d.show(self, family)))
            .collect()
    }
}

/// `stopping` and `nudge` both say when to commit (SLEUTH App. D.5): an alternative
/// strategy, or `stopping=none`, replaces the nudge, whatever `nudge` says. Settled
/// here, after every key, so that no key's effect depends on the order keys are given
/// or applied in.
fn commitment(settings: &mut Settings, pairs: &BTreeMap<String, String>) {
    let none = pairs.get("stopping").is_some_and(|v| v.trim() == "none");
    if none || settings.agent.stopping != Stopping::Nudge {
        settings.agent.nudge = NudgeAt::Never;
    }
}

#[cfg(test)]
mod tests;
