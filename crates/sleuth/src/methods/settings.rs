//! The knobs the papers sweep, as typed settings built from `--set key=value` pairs.
//!
//! Settings are options of a method, not new methods: the nudge turn, τ, the budget, top-k,
//! enforcement and the stopping strategy apply to any agent on the shared loop. The raw
//! pairs are recorded in `run.json`; this module turns them into types once, with an error
//! that names the key and the accepted values.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// When the commitment nudge fires.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum NudgeAt {
    /// At the first turn t ≥ ⌈α·T⌉.
    Fraction(f64),
    /// At the first turn t ≥ this turn.
    Turn(u32),
    Never,
}

/// The commitment strategy (the paper's nudge, or an Appendix D.5 alternative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stopping {
    /// The time-based nudge (SLEUTH's default).
    Nudge,
    /// Decompose up front; commit when every sub-question is resolved.
    Structural,
    /// Never revisit settled links; repeated retrievals are refused.
    ForwardOnly,
    /// Search only for evidence that separates hypotheses; commit on the survivor.
    Contrastive,
    /// Free search, then one verification of the chain before an answer is accepted.
    LateVerification,
}

impl Stopping {
    pub fn template(self) -> Option<&'static str> {
        match self {
            Stopping::Nudge => None,
            Stopping::Structural => Some("stop_structural.txt"),
            Stopping::ForwardOnly => Some("stop_forward_only.txt"),
            Stopping::Contrastive => Some("stop_contrastive.txt"),
            Stopping::LateVerification => Some("stop_late_verification.txt"),
        }
    }
}

/// Settings of the shared agent loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSettings {
    /// Turn budget T.
    pub turns: u32,
    pub nudge: NudgeAt,
    /// τ: confirmed facts needed before the nudge may fire (structured methods only).
    pub tau: usize,
    /// The paper's weaker variant: the nudge also needs an empty Open Questions list.
    pub nudge_needs_empty_questions: bool,
    /// Whether unstructured methods get the nudge too (the ReAct + nudge control).
    pub nudge_all: bool,
    pub top_k: usize,
    /// Tool calls allowed in one response.
    pub actions_per_turn: usize,
    /// Runtime protocol enforcement (structured methods).
    pub enforce: bool,
    pub max_reminders: u32,
    pub stopping: Stopping,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Reflexion: episodes per question.
    pub episodes: u32,
    /// The corpus setting's rule: the last turn accepts only an answer.
    pub last_turn_answer_only: bool,
    /// Attach the protocol's output grammar to requests (used by the embedded model).
    pub grammar: bool,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            turns: 20,
            nudge: NudgeAt::Fraction(0.7),
            tau: 2,
            nudge_needs_empty_questions: false,
            nudge_all: false,
            top_k: 3,
            actions_per_turn: 1,
            enforce: false,
            max_reminders: 5,
            stopping: Stopping::Nudge,
            temperature: 0.0,
            max_tokens: 1024,
            episodes: 2,
            last_turn_answer_only: false,
            grammar: true,
        }
    }
}

/// Keys `AgentSettings` understands, with what they accept.
pub const AGENT_KEYS: &[(&str, &str)] = &[
    ("turns", "turn budget T (integer >= 1, default 20)"),
    ("nudge", "α in (0,1], a turn number, or none (default 0.7)"),
    ("tau", "facts needed before the nudge (default 2)"),
    ("nudge_gate", "facts | empty-questions (default facts)"),
    (
        "nudge_all",
        "true to nudge unstructured methods too (default false)",
    ),
    ("top_k", "paragraphs per search (default 3)"),
    ("actions_per_turn", "tool calls per response (default 1)"),
    (
        "enforce",
        "true for runtime protocol enforcement (default false)",
    ),
    (
        "max_reminders",
        "enforcement reminders per episode (default 5)",
    ),
    (
        "stopping",
        "nudge | structural | forward-only | contrastive | late-verification",
    ),
    ("temperature", "sampling temperature (default 0)"),
    ("max_tokens", "tokens per response (default 1024)"),
    ("episodes", "Reflexion episodes (default 2)"),
    (
        "grammar",
        "false to send no output grammar (default true; only the embedded model uses it)",
    ),
    (
        "last_turn_answer_only",
        "true: the last turn accepts only finish (default in --env corpus)",
    ),
];

pub(crate) fn parse<T: std::str::FromStr>(key: &str, value: &str, what: &str) -> Result<T, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("--set {key}={value}: expected {what}"))
}

pub(crate) fn parse_bool(key: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!("--set {key}={value}: expected true or false")),
    }
}

impl AgentSettings {
    /// Builds settings from `key=value` pairs; keys that are not the loop's are
    /// ignored here (other method families read them).
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, String> {
        let mut s = AgentSettings::default();
        for (key, value) in map {
            s.apply(key, value)?;
        }
        if s.turns == 0 {
            return Err("--set turns must be at least 1".into());
        }
        Ok(s)
    }

    fn apply(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "turns" => self.turns = parse(key, value, "a positive integer")?,
            "nudge" => self.nudge = parse_nudge(value)?,
            "tau" => self.tau = parse(key, value, "a non-negative integer")?,
            "nudge_gate" => {
                self.nudge_needs_empty_questions = match value {
                    "facts" => false,
                    "empty-questions" | "empty_questions" => true,
                    _ => {
                        return Err(format!(
                            "--set nudge_gate={value}: expected facts or empty-questions"
                        ))
                    }
                }
            }
            "nudge_all" => self.nudge_all = parse_bool(key, value)?,
            "top_k" => self.top_k = parse(key, value, "a positive integer")?,
            "actions_per_turn" => {
                self.actions_per_turn = parse::<usize>(key, value, "a positive integer")?.max(1)
            }
            "enforce" => self.enforce = parse_bool(key, value)?,
            "max_reminders" => self.max_reminders = parse(key, value, "a non-negative integer")?,
            "stopping" if value == "none" => {
                self.stopping = Stopping::Nudge;
                self.nudge = NudgeAt::Never;
            }
            "stopping" => {
                self.stopping = serde_json::from_value(serde_json::Value::String(value.to_string()))
                    .map_err(|_| {
                        format!("--set stopping={value}: expected nudge, structural, forward-only, contrastive or late-verification")
                    })?;
                if self.stopping != Stopping::Nudge {
                    self.nudge = NudgeAt::Never;
                }
            }
            "temperature" => self.temperature = parse(key, value, "a number")?,
            "max_tokens" => self.max_tokens = parse(key, value, "a positive integer")?,
            "episodes" => self.episodes = parse(key, value, "a positive integer")?,
            "last_turn_answer_only" => self.last_turn_answer_only = parse_bool(key, value)?,
            "grammar" => self.grammar = parse_bool(key, value)?,
            _ => {}
        }
        Ok(())
    }

    /// The first turn at which the nudge may fire, if any.
    pub fn nudge_turn(&self) -> Option<u32> {
        match self.nudge {
            // The epsilon keeps 0.7 * 20 at 14 despite binary floating point.
            NudgeAt::Fraction(alpha) => {
                Some(((alpha * self.turns as f64) - 1e-9).ceil().max(1.0) as u32)
            }
            NudgeAt::Turn(t) => Some(t),
            NudgeAt::Never => None,
        }
    }
}

fn parse_nudge(value: &str) -> Result<NudgeAt, String> {
    let v = value.trim().to_ascii_lowercase();
    if matches!(v.as_str(), "none" | "off" | "never" | "false") {
        return Ok(NudgeAt::Never);
    }
    let v = v.strip_prefix("turn:").unwrap_or(&v);
    if let Ok(turn) = v.parse::<u32>() {
        if turn >= 1 {
            return Ok(NudgeAt::Turn(turn));
        }
    }
    match v.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha <= 1.0 => Ok(NudgeAt::Fraction(alpha)),
        _ => Err(format!(
            "--set nudge={value}: expected a fraction of the budget in (0,1], a turn number, or none"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<AgentSettings, String> {
        AgentSettings::from_map(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn nudge_turn_is_ceiling_of_alpha_t() {
        for (t, alpha, want) in [
            (20, "0.7", 14),
            (15, "0.7", 11),
            (10, "0.7", 7),
            (20, "0.3", 6),
            (20, "0.5", 10),
            (20, "1.0", 20),
        ] {
            let s = with(&[("turns", &t.to_string()), ("nudge", alpha)]).unwrap();
            assert_eq!(s.nudge_turn(), Some(want), "T={t} α={alpha}");
        }
        assert_eq!(with(&[("nudge", "12")]).unwrap().nudge_turn(), Some(12));
        assert_eq!(with(&[("nudge", "none")]).unwrap().nudge_turn(), None);
    }

    #[test]
    fn bad_values_name_the_key() {
        assert!(with(&[("nudge", "1.5")]).unwrap_err().contains("nudge=1.5"));
        assert!(with(&[("enforce", "maybe")])
            .unwrap_err()
            .contains("enforce"));
        assert!(with(&[("stopping", "sometimes")])
            .unwrap_err()
            .contains("stopping"));
    }

    #[test]
    fn alternative_stopping_replaces_the_nudge() {
        let s = with(&[("stopping", "late-verification")]).unwrap();
        assert_eq!(s.stopping, Stopping::LateVerification);
        assert_eq!(s.nudge_turn(), None);
    }
}
