//! Settings of the shared agent loop (the SLEUTH-setting methods): the knobs the SLEUTH
//! paper sweeps. They are parsed from `--set key=value` in [`super`], once, by the key
//! catalogue; this file holds only the typed values and the rules that read them.

use crate::env::LookupRepeats;
use crate::knob::Knob;
use crate::memory::{AdherenceRules, FactIdReuse, HypothesisFields, SectionProse};
use serde::{Deserialize, Serialize};
use std::fmt;

/// When the commitment nudge may fire.
///
/// A value never changes meaning with a decimal point: a bare number is always α (a
/// fraction of the budget), a turn is written `turn:N`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum NudgeAt {
    /// At the first turn t ≥ ⌈α·T⌉ (SLEUTH paper §3.3: α = 0.7).
    Fraction(f64),
    /// At the first turn t ≥ this turn (the paper's Table 11 names turns: 6/10/14).
    Turn(u32),
    /// Adaptive commitment (ours, beyond the paper: SLEUTH's App. names it future work):
    /// the nudge fires from the memory's state, under the conditions of [`AdaptiveRule`].
    Adaptive,
    Never,
}

impl NudgeAt {
    pub fn parse(value: &str) -> Result<NudgeAt, String> {
        let v = value.trim().to_ascii_lowercase();
        if matches!(v.as_str(), "none" | "off" | "never" | "false") {
            return Ok(NudgeAt::Never);
        }
        if v == "adaptive" {
            return Ok(NudgeAt::Adaptive);
        }
        if let Some(turn) = v.strip_prefix("turn:") {
            return match turn.trim().parse::<u32>() {
                Ok(t) if t >= 1 => Ok(NudgeAt::Turn(t)),
                _ => Err(format!(
                    "{}: expected turn:N with a turn number N >= 1",
                    Knob::Set.with(format!("nudge={value}"))
                )),
            };
        }
        match v.parse::<f64>() {
            Ok(alpha) if alpha > 0.0 && alpha <= 1.0 => Ok(NudgeAt::Fraction(alpha)),
            Ok(n) if n > 1.0 && n.fract() == 0.0 => Err(format!(
                "{}: a bare number is α, a fraction of the budget in (0,1]; for turn {n} write nudge=turn:{n}",
                Knob::Set.with(format!("nudge={value}"))
            )),
            _ => Err(format!(
                "{}: expected α in (0,1] (e.g. 0.7), turn:N, adaptive, or none",
                Knob::Set.with(format!("nudge={value}"))
            )),
        }
    }
}

impl fmt::Display for NudgeAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NudgeAt::Fraction(a) => write!(f, "{a}"),
            NudgeAt::Turn(t) => write!(f, "turn:{t}"),
            NudgeAt::Adaptive => f.write_str("adaptive"),
            NudgeAt::Never => f.write_str("none"),
        }
    }
}

/// Which state of the memory fires the adaptive nudge (`nudge=adaptive`). Each
/// condition is a setting of its own so a sweep can switch one off; when several hold
/// at once the first in this order is recorded: confident, questions closed, stagnation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdaptiveRule {
    /// `adaptive_confident`: the top-ranked hypothesis is high-confidence and cites
    /// confirmed facts, as many as the question's hops (τ when the hops are unknown).
    pub confident: bool,
    /// `adaptive_questions`: the model opened questions and none is left open.
    pub questions_closed: bool,
    /// `adaptive_stagnation`: this many turns in a row added no confirmed fact (0: off).
    pub stagnation: u32,
}

impl Default for AdaptiveRule {
    fn default() -> Self {
        AdaptiveRule {
            confident: true,
            questions_closed: true,
            stagnation: 3,
        }
    }
}

/// The condition that fired the adaptive nudge, as the record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveCondition {
    Confident,
    QuestionsClosed,
    Stagnation,
}

/// How the nudge's α·T names a turn. SLEUTH §3.3 says both "consumed at least fraction
/// α of its turn budget" and "turn t ≥ αT"; Table 2's Nudge@14 and Figure 4's dotted
/// line at turn 14 (α = 0.7, T = 20) fix the second, so `turn` is the default: the
/// nudge comes with turn ⌈α·T⌉, counted from 1, when 13 turns are behind it.
/// `consumed` reads the first clause: α·T turns already used, so turn ⌈α·T⌉ + 1 (15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
pub enum NudgeCount {
    /// The turn numbered ⌈α·T⌉ (turn 14 of 20).
    Turn,
    /// The first turn after ⌈α·T⌉ turns were used (turn 15 of 20).
    Consumed,
}

/// The commitment strategy (the paper's nudge, or an alternative of SLEUTH App. D.5).
/// Each is a unit of `agent/commitment/` (its prompt, trigger, checks and refusals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
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
    /// SLEUTH paper App. D.5: the search phase runs "without continuous state tracking",
    /// so the agent keeps no working memory (the ReAct protocol) until the chain check.
    LateVerification,
    /// Our variant of late verification that keeps the working memory throughout.
    LateVerificationMemory,
}

/// How the model's actions reach the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
pub enum ToolChannel {
    /// `Action: tool[argument]` lines in the response (every provider).
    Text,
    /// The provider's native tool calling (OpenAI-compatible `tools` with parallel
    /// calls, Anthropic `tool_use`); calls come back as action lines appended to the
    /// response, so both channels produce the same trace. Action lines the model also
    /// writes as text are read too.
    Native,
}

/// Which output grammar the loop attaches to its requests (SLEUTH §3.4: the method is
/// "implemented entirely through prompting", so no server gets one unless asked). Named
/// `auto`, `true`, `false` (with the usual boolean spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(ascii_case_insensitive)]
pub enum GrammarUse {
    /// The default: only the embedded model samples under the protocol's tight grammar
    /// (one action line, bounded sections; a deviation made for a 135M model); every
    /// server is sent none.
    #[strum(to_string = "auto")]
    Embedded,
    /// `grammar=true`: every grammar-honouring server gets a grammar that keeps the
    /// method as prompted: free reasoning, then one to `actions_per_turn` action lines,
    /// no section forced and no cap the prompt does not state.
    #[strum(
        to_string = "true",
        serialize = "yes",
        serialize = "on",
        serialize = "1"
    )]
    Open,
    /// `grammar=false`: no grammar anywhere, the embedded model included.
    #[strum(
        to_string = "false",
        serialize = "no",
        serialize = "off",
        serialize = "0"
    )]
    Off,
}

/// Default cap on tool calls executed from one response. Generous enough that a turn
/// of parallel searches runs whole (the paper's ReAct spent 22 tool calls in 20 turns,
/// App. L), small enough that a runaway list cannot flood one observation.
pub const ACTIONS_PER_TURN: usize = 8;

fn yes() -> bool {
    true
}

/// Settings of the shared agent loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSettings {
    /// Turn budget T (SLEUTH paper §4: T = 20).
    pub turns: u32,
    pub nudge: NudgeAt,
    /// τ: confirmed facts needed before the nudge may fire (structured methods only).
    pub tau: usize,
    /// How α·T names a turn ([`NudgeCount`]).
    pub nudge_count: NudgeCount,
    /// The paper's weaker variant: the nudge also needs an empty Open Questions list.
    pub nudge_needs_empty_questions: bool,
    /// Whether unstructured methods get the nudge too (the ReAct + nudge control).
    pub nudge_all: bool,
    pub top_k: usize,
    /// Cap on the tool calls executed from one response: every action of a turn runs,
    /// up to this many; one beyond it is answered with an observation saying it was not
    /// run (the SLEUTH paper counts tool calls apart from turns: App. L, Table 7).
    pub actions_per_turn: usize,
    /// Where actions come from: the text protocol or native tool calls.
    pub tool_channel: ToolChannel,
    /// Runtime protocol enforcement (structured methods).
    pub enforce: bool,
    /// Hand the confirmed facts a response left out back to the model in the next
    /// observation (ours). Off by default and in every recipe, and not part of
    /// `enforce` (App. M's enforcement is the delimiters and the notation check); the
    /// record's merged state stays monotonic either way.
    pub restore_facts: bool,
    pub max_reminders: u32,
    pub stopping: Stopping,
    pub temperature: f32,
    /// Output tokens per response: [`MAX_TOKENS`] unless set.
    pub max_tokens: u32,
    /// Reflexion: episodes per question.
    pub episodes: u32,
    /// The corpus setting's rule: the last turn accepts only an answer.
    pub last_turn_answer_only: bool,
    /// Which output grammar requests carry ([`GrammarUse`]).
    pub grammar: GrammarUse,
    /// The conditions of `nudge=adaptive`.
    pub adaptive: AdaptiveRule,
    /// Context compaction (`compact=K`, ours): once the memory holds a confirmed fact,
    /// each request carries the system text, the question with the merged memory, and
    /// only the last K exchanges; `None` sends the whole conversation (the paper's loop).
    pub compact: Option<u32>,
    /// Under `compact=K`: how many exchanges beyond K may accumulate before the next
    /// compaction (`compact_slack=S`, ours). 0 compacts every turn (the shortest
    /// prompts); S > 0 keeps the prefix (system text, question with the memory note as
    /// of the last compaction, the kept exchanges) unchanged for S turns at a time, so
    /// a provider's prompt cache can read it.
    pub compact_slack: u32,
    /// Per-fact confidence and contradiction detection (`contradictions=true`, ours): a
    /// new fact contradicting a confirmed one is held out and raised as an open question.
    pub contradictions: bool,
    /// How a new statement under a confirmed fact's id merges (SLEUTH §3.1, never
    /// retracted; [`FactIdReuse`]): `check` (default) tells a rewording from another
    /// fact reusing the id, `rewording` reads every reuse as a rewording.
    #[serde(default)]
    pub fact_id_reuse: FactIdReuse,
    /// What a hypothesis line needs to count as adherent (SLEUTH §3.1, App. K, Table 4;
    /// [`HypothesisFields`]): `all` four fields (default) or a `confidence` alone.
    #[serde(default)]
    pub hypothesis_fields: HypothesisFields,
    /// What a line of prose inside a typed section does to the adherence check (SLEUTH
    /// §5.5, Table 4; [`SectionProse`]): `ends` the section (default) or is `judged` as
    /// a malformed entry (the earlier reading).
    #[serde(default)]
    pub section_prose: SectionProse,
    /// Whether a reply enforcement rejected stays in the conversation, with its
    /// reminder, after the re-prompted reply is accepted (SLEUTH App. M: re-prompts add
    /// about 50 tokens per occurrence). `false` (default): once a reply is accepted the
    /// rejected exchanges leave the context, so later calls do not send them again;
    /// `true` keeps them for the rest of the episode (the earlier reading).
    #[serde(default)]
    pub keep_rejected: bool,
    /// What a lookup of a title several pool paragraphs share returns (SLEUTH App. M;
    /// [`LookupRepeats`]): the `first` (default; `T (2)` names the second) or `all`.
    #[serde(default)]
    pub lookup_repeats: LookupRepeats,
    /// Whether a failed lookup names up to three titles the agent was already shown
    /// that are close to the one asked for (`lookup_hints=on`, default, ours), or only
    /// says it failed (`off`: SLEUTH App. M's bare tools, no retrieval help).
    #[serde(default = "yes")]
    pub lookup_hints: bool,
    /// A response without an Active Hypotheses section keeps the state's hypotheses
    /// (`true`, default: §3.2 step 2 updates the previous hypotheses, and a section
    /// the response did not write is no update) or empties them (`false`, the earlier
    /// reading).
    #[serde(default = "yes")]
    pub carry_hypotheses: bool,
}

/// The loop methods' default output-token limit. SLEUTH's response restates the whole
/// working memory every turn (SLEUTH paper §3.1: "output in full on every turn"), so the
/// limit must hold the longest memory a 20-turn episode writes; a cut reply loses its
/// last sections and its action line. Measured on the 23 MuSiQue 4-hop questions of
/// `../shared/data`'s 200-question subset (a memory with one fact per sentence of every supporting paragraph,
/// three hypotheses, four open questions and an 800-character thought): 3,654
/// characters at the median, 4,953 at most, about 900 to 1,400 tokens at 3.5 to 4
/// characters a token, so the earlier 1,024 could cut it. 4,096 holds about three
/// times the longest; a reply that still stops at the limit is marked on its turn
/// (`truncated`) and counted in the record (`truncated_calls`).
pub const MAX_TOKENS: u32 = 4096;

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            turns: 20,
            nudge: NudgeAt::Fraction(0.7),
            tau: 2,
            nudge_count: NudgeCount::Turn,
            nudge_needs_empty_questions: false,
            nudge_all: false,
            top_k: 3,
            actions_per_turn: ACTIONS_PER_TURN,
            tool_channel: ToolChannel::Text,
            enforce: false,
            restore_facts: false,
            max_reminders: 5,
            stopping: Stopping::Nudge,
            temperature: 0.0,
            max_tokens: MAX_TOKENS,
            episodes: 2,
            last_turn_answer_only: false,
            grammar: GrammarUse::Embedded,
            adaptive: AdaptiveRule::default(),
            compact: None,
            compact_slack: 0,
            contradictions: false,
            fact_id_reuse: FactIdReuse::Check,
            hypothesis_fields: HypothesisFields::All,
            section_prose: SectionProse::Ends,
            keep_rejected: false,
            lookup_repeats: LookupRepeats::First,
            lookup_hints: true,
            carry_hypotheses: true,
        }
    }
}

impl AgentSettings {
    /// What the notation check asks for (`hypothesis_fields`, `section_prose`).
    pub fn adherence_rules(&self) -> AdherenceRules {
        AdherenceRules {
            hypotheses: self.hypothesis_fields,
            prose: self.section_prose,
        }
    }

    /// The open-corpus setting's budget (EIR paper §4.3): 12 action turns, the last
    /// accepting only an answer, and at most six reads per turn.
    pub fn corpus() -> Self {
        AgentSettings {
            turns: 12,
            actions_per_turn: 6,
            last_turn_answer_only: true,
            ..AgentSettings::default()
        }
    }

    /// The turn a fixed nudge comes with, read off settings written as text (a
    /// record's or a run's `nudge`, `turns`, `nudge_count`; unset ones at their
    /// defaults): one reading for the agent, the analysis's cohorts and the report's
    /// tables (SLEUTH §3.3). None without a nudge or with the adaptive one.
    pub fn nudge_turn_of(get: impl Fn(&str) -> Option<String>) -> Option<u32> {
        let nudge = NudgeAt::parse(&get("nudge")?).ok()?;
        if nudge == NudgeAt::Adaptive {
            return None;
        }
        let defaults = AgentSettings::default();
        let settings = AgentSettings {
            nudge,
            turns: get("turns")
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(defaults.turns),
            nudge_count: get("nudge_count")
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(defaults.nudge_count),
            ..defaults
        };
        settings.nudge_turn()
    }

    /// The first turn at which the nudge may fire, if any.
    pub fn nudge_turn(&self) -> Option<u32> {
        match self.nudge {
            // The epsilon keeps 0.7 * 20 at 14 despite binary floating point.
            NudgeAt::Fraction(alpha) => {
                let at = ((alpha * self.turns as f64) - 1e-9).ceil().max(1.0) as u32;
                Some(match self.nudge_count {
                    NudgeCount::Turn => at,
                    NudgeCount::Consumed => at + 1,
                })
            }
            NudgeAt::Turn(t) => Some(t),
            // From the first turn on; the memory's state decides.
            NudgeAt::Adaptive => Some(1),
            NudgeAt::Never => None,
        }
    }
}
