//! The one agent loop every text-protocol method runs on.
//!
//! Per turn: (maybe) give the commitment trigger (the time-based nudge, or structural
//! completion's commit message once every open question is resolved), call the model,
//! (maybe) enforce the memory protocol with reminders that do not consume turns, parse
//! the memory and fold it into the monotonic state, execute every action of the
//! response up to the cap, and feed the observations back. Only the model's response
//! is parsed; observations go back to the model as text.

use crate::env::{Action, Environment, Observation};
use crate::llm::{ChatRequest, Message};
use crate::memory::{
    check_adherence, parse_memory, MemorySchema, MergeRules, Merged, WorkingMemory,
};
use crate::methods::outputs::{Commitment, MemoryCounts};
use crate::methods::settings::{AdaptiveCondition, AgentSettings, NudgeAt, Stopping, ToolChannel};
use crate::methods::{
    call_model_response, AgentError, CallKind, Episode, PromptSet, RunContext, StopReason, Turn,
};
use minijinja::context;

pub(super) struct AgentLoop<'a> {
    pub ctx: &'a RunContext,
    pub constraint: super::TurnConstraint,
    pub style: &'a super::Style,
    pub settings: &'a AgentSettings,
    pub prompts: &'a PromptSet,
    pub schema: MemorySchema,
    /// Late verification: the first finish is answered with a chain check (App. D.5).
    pub verify: bool,
    /// The question's hops when the benchmark says (the adaptive nudge's coverage).
    pub hops: Option<u8>,
}

/// Where context compaction stands in an episode (`compact=K`).
#[derive(Debug, Default)]
struct Compaction {
    /// The first message still sent after the question (0: not compacted yet).
    start: usize,
    /// The memory note appended to the question at the last compaction.
    note: String,
}

/// How a model call ended, as the loop sees it.
pub enum LoopOutcome {
    Reply(String),
    /// The conversation no longer fits the model's context.
    Overflow,
}

impl AgentLoop<'_> {
    pub async fn run(
        &self,
        system: String,
        first_user: String,
        env: &mut dyn Environment,
    ) -> Result<Episode, AgentError> {
        let mut messages = vec![Message::system(system), Message::user(first_user)];
        let mut episode = Episode::default();
        let mut state = WorkingMemory::default();
        let mut verified = false;
        let mut past_actions: Vec<Action> = Vec::new();
        let mut compaction = Compaction::default();

        for number in 1..=self.settings.turns {
            let mut turn = Turn {
                number,
                ..Turn::default()
            };
            let adaptive = self.adaptive_due(&state, &episode);
            if adaptive.is_some() || self.nudge_due(number, &state, &episode) {
                let nudge = self.render(
                    "nudge.txt",
                    context! {
                        turn => number,
                        budget => self.settings.turns,
                        notes => !self.schema.is_structured(),
                    },
                    &episode,
                )?;
                append_to_last_user(&mut messages, &nudge);
                turn.nudged = true;
                episode.nudge_turn = Some(number);
                episode.outputs.commitment = adaptive.map(|condition| Commitment {
                    turn: number,
                    condition,
                });
            } else if self.structural_due(&state, &episode) {
                let resolved = state.resolved.len();
                let commit =
                    self.render("stop_structural_due.txt", context! { resolved }, &episode)?;
                append_to_last_user(&mut messages, &commit);
                turn.nudged = true;
                episode.nudge_turn = Some(number);
            }
            let answer_only = self.settings.last_turn_answer_only && number == self.settings.turns;
            if answer_only {
                let note = self.render("last_turn.txt", context! {}, &episode)?;
                append_to_last_user(&mut messages, &note);
            }

            let response = match self
                .respond(
                    &mut messages,
                    &mut episode,
                    &mut turn,
                    &state,
                    env,
                    &mut compaction,
                )
                .await?
            {
                LoopOutcome::Reply(text) => text,
                LoopOutcome::Overflow => {
                    episode.stop = StopReason::ContextOverflow;
                    episode.turns.push(turn);
                    break;
                }
            };
            messages.push(Message::assistant(response.clone()));
            turn.response = response;

            let merged = self.update_memory(&mut turn, &mut state, number);
            turn.steps = self.steps(&turn.response);
            let actions = Action::parse_all(&turn.response);
            turn.actions = actions.clone();
            let cap = self.settings.actions_per_turn;

            let mut feedback: Vec<String> = Vec::new();
            if actions.is_empty() {
                let tools = action_choices(env.tools());
                feedback.push(self.render("no_action.txt", context! { tools }, &episode)?);
            }
            for (i, action) in actions.iter().enumerate() {
                if let Action::Finish(answer) = action {
                    if self.verify && !verified {
                        verified = true;
                        feedback.push(self.render("verify.txt", context! { answer }, &episode)?);
                        break;
                    }
                    episode.answer = Some(answer.trim().to_string());
                    episode.stop = StopReason::Finished;
                    break;
                }
                if answer_only {
                    feedback.push(format!(
                        "{action} was not run: the last turn accepts only finish[<answer>]."
                    ));
                    break;
                }
                if i >= cap {
                    // Never silence: the model learns which of its calls did not run.
                    let observation = Observation::new(self.render(
                        "action_cap.txt",
                        context! { action => action.to_string(), cap },
                        &episode,
                    )?);
                    feedback.push(format_observation(action, &observation, true));
                    turn.observations.push(observation);
                    continue;
                }
                // A tool the environment does not offer is refused, not run.
                if env.tools().refusal(action).is_none() {
                    episode.tool_calls += 1;
                }
                let observation = if self.refuses_repeat(action, &past_actions) {
                    Observation::new(self.render(
                        "forward_only_repeat.txt",
                        context! { action => action.to_string() },
                        &episode,
                    )?)
                } else {
                    env.step(action)
                };
                past_actions.push(action.clone());
                feedback.push(format_observation(action, &observation, actions.len() > 1));
                turn.observations.push(observation);
            }
            if episode.stop == StopReason::Finished {
                self.ctx.observe(&turn);
                episode.turns.push(turn);
                break;
            }
            // Handing facts back is runtime help: only under enforcement or when asked
            // (SLEUTH paper App. M: Table 1 runs have no runtime enforcement).
            if !merged.dropped.is_empty() && self.settings.hands_back_facts() {
                let facts = merged
                    .dropped
                    .iter()
                    .map(|f| format!("- {}", f.render()))
                    .collect::<Vec<_>>()
                    .join("\n");
                feedback.push(self.render("dropped_facts.txt", context! { facts }, &episode)?);
            }
            if !merged.raised.is_empty() || !merged.pending.is_empty() {
                feedback.push(self.conflict_note(&merged, &state)?);
            }
            messages.push(Message::user(feedback.join("\n\n")));
            self.ctx.observe(&turn);
            episode.turns.push(turn);
        }
        episode.retrieved = env.retrieved().to_vec();
        if self.schema.is_structured() {
            // Per turn: confirmed facts, hypotheses and open questions in the state.
            episode.outputs.memory_counts = episode
                .turns
                .iter()
                .filter_map(|t| t.state.as_ref())
                .map(|s| MemoryCounts {
                    facts: s.facts.len(),
                    hypotheses: s.hypotheses.len(),
                    questions: s.questions.len(),
                })
                .collect();
            if let Some(state) = episode.turns.iter().rev().find_map(|t| t.state.as_ref()) {
                episode.outputs.contradictions = state.conflicts.clone();
            }
        }
        Ok(episode)
    }

    /// Calls the model, re-prompting (without consuming the turn) while enforcement
    /// rejects the response and reminders remain.
    async fn respond(
        &self,
        messages: &mut Vec<Message>,
        episode: &mut Episode,
        turn: &mut Turn,
        state: &WorkingMemory,
        env: &dyn Environment,
        compaction: &mut Compaction,
    ) -> Result<LoopOutcome, AgentError> {
        let mut kind = CallKind::Action;
        let constraint = self.constraint.for_turn(state, env.retrieved());
        loop {
            let mut request = ChatRequest::new(self.context(messages, state, compaction)?)
                .temperature(self.settings.temperature)
                .max_tokens(self.settings.max_tokens);
            request.constraint = constraint.clone();
            if self.settings.tool_channel == ToolChannel::Native {
                request.tools = tool_specs(env.tools());
            }
            let Some(response) = call_model_response(
                self.ctx,
                &request,
                kind,
                episode,
                Some(turn),
                env.retrieved(),
            )
            .await?
            else {
                return Ok(LoopOutcome::Overflow);
            };
            let text = with_native_calls(response);
            let enforce = self.settings.enforce && self.schema.is_structured();
            if enforce
                && !check_adherence(&text, &self.schema)
                && episode.reminders < self.settings.max_reminders
            {
                episode.reminders += 1;
                let sections = self
                    .schema
                    .sections
                    .iter()
                    .map(|s| format!("`{}`", s.header()))
                    .collect::<Vec<_>>()
                    .join(", ");
                let reminder = self.render("reminder.txt", context! { sections }, episode)?;
                messages.push(Message::assistant(text.clone()));
                messages.push(Message::user(reminder));
                turn.rejected.push(text);
                kind = CallKind::Reminder;
                continue;
            }
            return Ok(LoopOutcome::Reply(text));
        }
    }

    /// Parses this turn's memory, records adherence, folds facts into the state.
    /// Returns what the merge changed besides the state (the confirmed facts the model
    /// left out; conflicts raised or still pending).
    fn update_memory(&self, turn: &mut Turn, state: &mut WorkingMemory, number: u32) -> Merged {
        if self.schema.sections.is_empty() {
            return Merged::default();
        }
        let written = parse_memory(&turn.response, &self.schema);
        // A response that drifted out of the notation (no Open Questions section at
        // all) resolves nothing: for the merge, its questions are the ones still open.
        let mut folded = written.clone();
        if self.schema.has(crate::memory::Section::Questions)
            && !crate::memory::writes_section(&turn.response, crate::memory::Section::Questions)
        {
            folded.questions = state.questions.clone();
        }
        turn.adherent = Some(check_adherence(&turn.response, &self.schema));
        let merged = if self.schema.is_structured() {
            let rules = MergeRules {
                contradictions: self.settings.contradictions,
                turn: number,
            };
            let merged = state.merge_with(&folded, rules);
            turn.dropped = merged.dropped.iter().map(|f| f.id.clone()).collect();
            turn.resolved = merged.resolved.clone();
            merged
        } else {
            state.notes = written.notes.clone().or(state.notes.take());
            Merged::default()
        };
        turn.memory = Some(written);
        turn.state = Some(state.clone());
        merged
    }

    /// The observation telling the model of the contradictions this turn raised and of
    /// the open ones its memory left out (contradiction detection, ours).
    fn conflict_note(&self, merged: &Merged, state: &WorkingMemory) -> Result<String, AgentError> {
        let entry = |c: &crate::memory::Conflict| {
            let fact = state
                .facts
                .iter()
                .find(|f| f.id == c.confirmed)
                .map_or(String::new(), |f| f.statement.clone());
            context! {
                question => &c.question,
                confirmed => &c.confirmed,
                fact,
                claim => &c.claim.statement,
            }
        };
        let raised: Vec<_> = merged.raised.iter().map(entry).collect();
        let pending: Vec<_> = merged.pending.iter().map(entry).collect();
        self.prompts
            .render("conflicts.txt", context! { raised, pending })
            .map(|s| s.trim_end().to_string())
            .map_err(AgentError::config)
    }

    /// The commitment nudge (SLEUTH paper §3.3): once, at the first turn t ≥ the nudge
    /// turn, when at least τ facts are confirmed. Notes shares SLEUTH's commitment rule
    /// (§5.1, middle block); it has no typed facts to count, so its gate is the nearest
    /// thing: a non-empty scratchpad (something to synthesize from). Methods without a
    /// memory get it only with `nudge_all`, ungated, as in the ReAct + nudge control
    /// (App. D.4).
    fn nudge_due(&self, turn: u32, state: &WorkingMemory, episode: &Episode) -> bool {
        if self.settings.nudge == NudgeAt::Adaptive {
            return false; // adaptive_due decides
        }
        let Some(at) = self.settings.nudge_turn() else {
            return false;
        };
        if episode.nudge_turn.is_some() || turn < at {
            return false;
        }
        if self.schema.has(crate::memory::Section::Notes) {
            return state.notes.as_deref().is_some_and(|n| !n.trim().is_empty());
        }
        if !self.schema.is_structured() {
            return self.settings.nudge_all;
        }
        state.facts.len() >= self.settings.tau
            && (!self.settings.nudge_needs_empty_questions || state.questions.is_empty())
    }

    /// Adaptive commitment (`nudge=adaptive`, ours): the nudge fires, once, from the
    /// merged memory instead of the clock. Only the structured memory has the typed
    /// state to read, so other methods get no nudge under it. Every condition but a
    /// confident hypothesis (which already names its facts) needs τ confirmed facts,
    /// so there is something to commit from.
    fn adaptive_due(&self, state: &WorkingMemory, episode: &Episode) -> Option<AdaptiveCondition> {
        use crate::memory::{Confidence, Section};
        if self.settings.nudge != NudgeAt::Adaptive
            || episode.nudge_turn.is_some()
            || !self.schema.is_structured()
        {
            return None;
        }
        let rule = self.settings.adaptive;
        let enough = state.facts.len() >= self.settings.tau;
        if rule.confident && self.schema.has(Section::Hypotheses) {
            let need = self.hops.map_or(self.settings.tau, usize::from).max(1);
            if let Some(top) = state.hypotheses.first() {
                let mut cited: Vec<&String> = top
                    .supports
                    .iter()
                    .filter(|id| state.facts.iter().any(|f| &f.id == *id))
                    .collect();
                cited.sort();
                cited.dedup();
                if top.confidence == Some(Confidence::High) && cited.len() >= need {
                    return Some(AdaptiveCondition::Confident);
                }
            }
        }
        if rule.questions_closed
            && self.schema.has(Section::Questions)
            && enough
            && state.all_questions_resolved()
        {
            return Some(AdaptiveCondition::QuestionsClosed);
        }
        if rule.stagnation > 0 && enough && stagnant_turns(&episode.turns) >= rule.stagnation {
            return Some(AdaptiveCondition::Stagnation);
        }
        None
    }

    /// The conversation a request carries. Under `compact=K`, once a fact is confirmed,
    /// old raw observations leave: the system text, the question followed by the merged
    /// memory, and the last K exchanges (response, then the observations it got). The
    /// full conversation stays the loop's own record; only what is sent shrinks, so
    /// input tokens per episode grow about linearly in turns instead of quadratically.
    /// With `compact_slack=S` exchanges pile up to K + S before the next compaction and
    /// the memory note stays as written at the last one, so the prefix is stable for S
    /// turns (a provider's prompt cache can read it); S = 0 compacts every turn.
    fn context(
        &self,
        messages: &[Message],
        state: &WorkingMemory,
        compaction: &mut Compaction,
    ) -> Result<Vec<Message>, AgentError> {
        let Some(k) = self.settings.compact else {
            return Ok(messages.to_vec());
        };
        let keep = 2 * k as usize;
        // Messages after the question alternate response / feedback, ending on feedback.
        if state.facts.is_empty() || messages.len() <= 2 + keep {
            return Ok(messages.to_vec());
        }
        let limit = keep + 2 * self.settings.compact_slack as usize;
        if compaction.start == 0 || messages.len() - compaction.start > limit {
            compaction.start = messages.len() - keep;
            let dropped = (compaction.start - 2) / 2;
            compaction.note = self
                .prompts
                .render(
                    "compacted.txt",
                    context! { memory => state.render(&self.schema).trim_end(), dropped },
                )
                .map_err(AgentError::config)?;
        }
        let mut question = messages[1].clone();
        question.content.push_str(&compaction.note);
        let mut out = vec![messages[0].clone(), question];
        out.extend_from_slice(&messages[compaction.start..]);
        Ok(out)
    }

    /// Structural completion (SLEUTH paper App. D.5: commit "when all are marked
    /// resolved"): the trigger is the memory state, not the model's reading of a prompt
    /// sentence. Once every open question the agent wrote is resolved, it is told to
    /// commit, once.
    fn structural_due(&self, state: &WorkingMemory, episode: &Episode) -> bool {
        self.settings.stopping == Stopping::Structural
            && self.schema.has(crate::memory::Section::Questions)
            && episode.nudge_turn.is_none()
            && state.all_questions_resolved()
    }

    fn steps(&self, response: &str) -> Option<super::formats::ReasoningSteps> {
        use super::formats::{parse_ircot, parse_self_ask, ReasoningSteps};
        match self.style.steps {
            super::Steps::SelfAsk => Some(ReasoningSteps::SelfAsk {
                sub_questions: parse_self_ask(response),
            }),
            super::Steps::Ircot => {
                let (reasoning, retrievals) = parse_ircot(response);
                Some(ReasoningSteps::Ircot {
                    reasoning,
                    retrievals,
                })
            }
            super::Steps::None => None,
        }
    }

    fn refuses_repeat(&self, action: &Action, past: &[Action]) -> bool {
        self.settings.stopping == Stopping::ForwardOnly
            && self.schema.is_structured()
            && past.contains(action)
    }

    fn render<S: serde::Serialize>(
        &self,
        name: &str,
        ctx: S,
        _episode: &Episode,
    ) -> Result<String, AgentError> {
        self.prompts.render(name, ctx).map_err(AgentError::config)
    }
}

/// How many of the latest turns in a row added no confirmed fact to the merged state.
fn stagnant_turns(turns: &[Turn]) -> u32 {
    let facts: Vec<usize> = turns
        .iter()
        .map(|t| t.state.as_ref().map_or(0, |s| s.facts.len()))
        .collect();
    let mut still = 0;
    for i in (0..facts.len()).rev() {
        let before = if i == 0 { 0 } else { facts[i - 1] };
        if facts[i] > before {
            break;
        }
        still += 1;
    }
    still
}

/// The environment's tools for the native channel.
fn tool_specs(tools: &crate::env::ToolCatalogue) -> Vec<crate::llm::ToolSpec> {
    tools
        .tools()
        .iter()
        .map(|t| crate::llm::ToolSpec {
            name: t.name().to_string(),
            description: t.description.clone(),
            argument: t.arg.to_string(),
        })
        .collect()
}

/// The response as the loop reads it: native tool calls become action lines after the
/// text, so both channels produce the same trace (and the same conversation).
fn with_native_calls(response: crate::llm::ChatResponse) -> String {
    let mut text = response.text;
    for call in &response.tool_calls {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&crate::protocol::action_line(&call.name, &call.argument));
    }
    text
}

fn append_to_last_user(messages: &mut [Message], text: &str) {
    if let Some(m) = messages
        .iter_mut()
        .rev()
        .find(|m| m.role == crate::llm::Role::User)
    {
        m.content.push_str("\n\n");
        m.content.push_str(text);
    }
}

/// The catalogue's action lines for a reminder: `Action: a`, `Action: b` or `Action: c`.
fn action_choices(tools: &crate::env::ToolCatalogue) -> String {
    let lines: Vec<String> = tools
        .tools()
        .iter()
        .map(|t| {
            format!(
                "`{}`",
                crate::protocol::action_line(t.name(), &format!("<{}>", t.arg))
            )
        })
        .collect();
    match lines.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn format_observation(action: &Action, observation: &Observation, several: bool) -> String {
    if several {
        format!("Observation for {action}:\n{}", observation.text)
    } else {
        format!("Observation:\n{}", observation.text)
    }
}
