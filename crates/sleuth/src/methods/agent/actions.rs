//! The actions of a turn (SLEUTH paper §3.4; tool calls counted apart from turns, App.
//! L and Table 7).
//!
//! The system prompt asks for an action line and neither invites nor forbids several
//! (App. K makes no such invitation; App. L's trace runs several calls a turn). Every
//! action line of a response runs, in order, up to `actions_per_turn`; one beyond
//! the cap is answered with an observation saying it was not run (never silence: the
//! model learns which of its calls did not). Those beyond the cap share one note, and
//! leave the turn ([`within_cap`]): a reply of 10,000 calls keeps what ran, not 10,000
//! calls and their notes resent every later turn (hardening III, item 7).
//! `finish[answer]` ends the turn's actions, wherever it stands:
//! the answer is taken unless a commitment rule answers it first (late verification),
//! which it may do only while a turn remains: a finish on the last turn is taken, as
//! the same reply would be under ReAct (no turn is left to verify in, App. D.5).
//! A commitment rule may also refuse an action with an observation (forward-only's
//! repeats). Under the corpus setting's budget (EIR paper §4.3) the last turn accepts
//! only an answer. A response with no action line gets an observation naming the lines
//! it may end with, and uses its turn. With `tool_channel=native` the provider's tool
//! calls arrive as action lines after the text, so both channels leave the same trace
//! (and [`super::native`] sends each call's feedback back as its tool result).

use super::commitment::CommitmentRules;
use super::template::render;
use crate::env::{Action, Environment, Observation, ToolCatalogue};
use crate::llm::ToolSpec;
use crate::methods::settings::AgentSettings;
use crate::methods::PromptSet;
use crate::methods::{AgentError, Episode, StopReason, Turn};
use crate::protocol;
use minijinja::context;

/// What the model is told about one thing of its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Feedback {
    /// The action it answers (an index into the turn's actions); `None`: the turn as a
    /// whole (no action line).
    pub action: Option<usize>,
    /// As the text channel says it (an observation under its header).
    pub text: String,
    /// As a native tool result carries it (the result alone: the call is named by id).
    pub result: String,
}

impl Feedback {
    fn of_turn(text: String) -> Feedback {
        Feedback {
            action: None,
            result: text.clone(),
            text,
        }
    }

    fn of_action(i: usize, text: String) -> Feedback {
        Feedback {
            action: Some(i),
            result: text.clone(),
            text,
        }
    }

    fn observation(i: usize, action: &Action, text: String, several: bool) -> Feedback {
        Feedback {
            action: Some(i),
            text: format_observation(action, &text, several),
            result: text,
        }
    }
}

/// A reply's actions split at the cap: those the turn takes or answers, and those it
/// drops (beyond the cap, before any finish), which share one note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WithinCap {
    /// Each kept action with its position among the reply's actions.
    pub kept: Vec<(usize, Action)>,
    /// The first dropped action, and how many were dropped in all.
    pub dropped: Option<(Action, usize)>,
}

/// Splits a reply's `actions` at `cap`: the first `cap`, then the first finish after
/// them (an answer is taken wherever it stands, as before the cap existed); the tool
/// actions between the cap and that finish (or the end) are dropped, and what follows a
/// finish never runs.
pub(super) fn within_cap(actions: Vec<Action>, cap: usize) -> WithinCap {
    let mut kept = Vec::new();
    let mut dropped: Option<(Action, usize)> = None;
    for (i, action) in actions.into_iter().enumerate() {
        let finish = matches!(action, Action::Finish(_));
        if i < cap || finish {
            kept.push((i, action));
            if finish {
                break;
            }
        } else {
            match &mut dropped {
                Some((_, n)) => *n += 1,
                None => dropped = Some((action, 1)),
            }
        }
    }
    WithinCap { kept, dropped }
}

/// How a turn's actions are taken.
pub(super) struct Acting<'a> {
    /// `actions_per_turn`.
    pub cap: usize,
    /// This turn accepts only `finish[answer]`.
    pub answer_only: bool,
    /// This is the budget's last turn: a finish is taken without feedback.
    pub last: bool,
    pub prompts: &'a PromptSet,
}

impl Acting<'_> {
    /// Takes `actions` (this turn's within the cap, in order, each with its position
    /// among the reply's actions; `dropped` those beyond the cap) in `env`; returns the
    /// feedback for the next user message. A taken answer sets the episode's answer and
    /// stop.
    pub fn run(
        &self,
        actions: &[(usize, Action)],
        dropped: Option<&(Action, usize)>,
        env: &mut dyn Environment,
        commitment: &mut CommitmentRules,
        episode: &mut Episode,
        turn: &mut Turn,
    ) -> Result<Vec<Feedback>, AgentError> {
        let mut feedback = Vec::new();
        if actions.is_empty() {
            let tools = action_choices(env.tools());
            let text = render(self.prompts, "no_action.txt", context! { tools })?;
            feedback.push(Feedback::of_turn(text));
        }
        for (i, action) in actions.iter().map(|(i, a)| (*i, a)) {
            if let Action::Finish(answer) = action {
                let check = match self.last {
                    true => None,
                    false => commitment.finish(answer, self.prompts)?,
                };
                match check {
                    Some(check) => feedback.push(Feedback::of_action(i, check)),
                    None => {
                        episode.answer = Some(answer.trim().to_string());
                        episode.stop = StopReason::Finished;
                    }
                }
                break;
            }
            if self.answer_only {
                let text =
                    format!("{action} was not run: the last turn accepts only finish[<answer>].");
                feedback.push(Feedback::of_action(i, text));
                break;
            }
            let observation = self.take(action, env, commitment, episode)?;
            let text = observation.text.clone();
            turn.observations.push(observation);
            let several = actions.len() > 1 || dropped.is_some();
            feedback.push(Feedback::observation(i, action, text, several));
        }
        if let Some((first, count)) = dropped {
            let text = render(
                self.prompts,
                "action_cap.txt",
                context! { action => first.to_string(), more => count - 1, cap => self.cap },
            )?;
            turn.observations.push(Observation::new(text.clone()));
            feedback.push(Feedback::of_turn(text));
        }
        Ok(feedback)
    }

    /// Runs one tool action, unless a commitment rule refuses it. A tool the
    /// environment does not offer is refused by the environment, and not counted.
    fn take(
        &self,
        action: &Action,
        env: &mut dyn Environment,
        commitment: &mut CommitmentRules,
        episode: &mut Episode,
    ) -> Result<Observation, AgentError> {
        if env.tools().refusal(action).is_none() {
            episode.tool_calls += 1;
        }
        Ok(match commitment.refuse(action, self.prompts)? {
            Some(refusal) => Observation::new(refusal),
            None => env.step(action),
        })
    }
}

/// Whether turn `number` is the corpus setting's answer-only last turn.
pub(super) fn answer_only(settings: &AgentSettings, number: u32) -> bool {
    settings.last_turn_answer_only && number == settings.turns
}

/// The note telling the model its last turn accepts only an answer.
pub(super) fn last_turn_note(prompts: &PromptSet) -> Result<String, AgentError> {
    render(prompts, "last_turn.txt", context! {})
}

/// The environment's tools for the native channel.
pub(super) fn tool_specs(tools: &ToolCatalogue) -> Vec<ToolSpec> {
    tools
        .tools()
        .iter()
        .map(|t| ToolSpec {
            name: t.name().to_string(),
            description: t.description.clone(),
            argument: t.arg.to_string(),
        })
        .collect()
}

/// The catalogue's action lines for a reminder: `Action: a`, `Action: b` or `Action: c`.
fn action_choices(tools: &ToolCatalogue) -> String {
    let lines: Vec<String> = tools
        .tools()
        .iter()
        .map(|t| {
            format!(
                "`{}`",
                protocol::action_line(t.name(), &format!("<{}>", t.arg))
            )
        })
        .collect();
    match lines.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn format_observation(action: &Action, text: &str, several: bool) -> String {
    if several {
        format!("Observation for {action}:\n{text}")
    } else {
        format!("Observation:\n{text}")
    }
}
