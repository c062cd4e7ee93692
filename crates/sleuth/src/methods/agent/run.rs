//! The one agent loop every text-protocol method runs on. It holds no rule of its own:
//! it composes the papers' parts, each in its own unit.
//!
//! Per turn: the commitment rules may give a commit message ([`super::commitment`]);
//! the model answers the context ([`super::context`]), re-prompted without using the
//! turn while enforcement rejects the response ([`super::enforcement`]); the memory the
//! response wrote is folded into the state per memory kind ([`super::memory`]); its
//! actions are taken ([`super::actions`]); and the feedback (observations, handed-back
//! facts, conflicts) goes back to the model as text, or under the native tool channel
//! as the provider's tool results ([`super::native`]). Only the model's own response is
//! parsed; observations go back as text.

use super::actions::{self, Acting};
use super::commitment::CommitmentRules;
use super::context::Context;
use super::enforcement::Enforcement;
use super::native::{NativeSilence, Reply};
use super::{memory, PromptSet, Steps, TurnConstraint};
use crate::env::{Action, Environment};
use crate::llm::{ChatRequest, FinishReason, Message};
use crate::memory::{MemoryKind, WorkingMemory};
use crate::methods::settings::{AgentSettings, ToolChannel};
use crate::methods::{
    call_model_response, AgentError, CallKind, Episode, RunContext, StopReason, Turn,
};

/// One episode's loop: the settings and the parts it composes.
pub(super) struct AgentLoop<'a> {
    pub ctx: &'a RunContext,
    pub settings: &'a AgentSettings,
    pub prompts: &'a PromptSet,
    /// The memory the episode acts with.
    pub memory: MemoryKind,
    /// The reasoning steps the trace reads out of a response.
    pub steps: Steps,
    pub constraint: TurnConstraint,
    pub commitment: CommitmentRules,
    pub enforcement: Enforcement,
    /// The method's count of native replies without a call, shared by its episodes.
    pub native_silence: &'a NativeSilence,
}

/// How a model call ended, as the loop sees it.
pub(super) enum LoopOutcome {
    Reply(Reply),
    /// The conversation no longer fits the model's context.
    Overflow,
}

impl AgentLoop<'_> {
    pub async fn run(
        mut self,
        system: String,
        first_user: String,
        env: &mut dyn Environment,
    ) -> Result<Episode, AgentError> {
        let mut context = Context::new(system, first_user, self.settings);
        let mut episode = Episode::default();
        let mut state = WorkingMemory::default();
        for number in 1..=self.settings.turns {
            let mut turn = Turn {
                number,
                ..Turn::default()
            };
            let answer_only = actions::answer_only(self.settings, number);
            self.open_turn(answer_only, &state, &mut episode, &mut turn, &mut context)?;
            let outcome = self
                .respond(&mut context, &mut episode, &mut turn, &state, env)
                .await?;
            let LoopOutcome::Reply(mut reply) = outcome else {
                episode.stop = StopReason::ContextOverflow;
                episode.turns.push(turn);
                break;
            };
            let cap = self.settings.actions_per_turn;
            let split = actions::within_cap(Action::parse_all(&reply.text), cap);
            reply.retain(&split.kept, cap);
            context.push(reply.message());
            turn.response = reply.text.clone();
            let merged = memory::fold(&self.memory, self.settings, &mut turn, &mut state);
            turn.steps = self.steps.parse(&turn.response);
            turn.actions = split.kept.iter().map(|(_, a)| a.clone()).collect();
            let acting = Acting {
                cap,
                answer_only,
                last: number == self.settings.turns,
                prompts: self.prompts,
            };
            let actions = split.kept;
            let feedback = acting.run(
                &actions,
                split.dropped.as_ref(),
                env,
                &mut self.commitment,
                &mut episode,
                &mut turn,
            )?;
            if episode.stop == StopReason::Finished {
                self.ctx.observe(&turn);
                episode.turns.push(turn);
                break;
            }
            let mut more: Vec<String> = self
                .enforcement
                .hand_back(&merged, self.prompts)?
                .into_iter()
                .collect();
            more.extend(memory::conflict_note(&merged, &state, self.prompts)?);
            for message in reply.answer(&actions, feedback, more) {
                context.push(message);
            }
            self.ctx.observe(&turn);
            episode.turns.push(turn);
        }
        episode.retrieved = env.retrieved().to_vec();
        memory::summarize(&self.memory, &mut episode);
        Ok(episode)
    }

    /// What the message the model answers at this turn gains: the commit message due
    /// (recorded in the turn and the episode), then the answer-only note.
    fn open_turn(
        &self,
        answer_only: bool,
        state: &WorkingMemory,
        episode: &mut Episode,
        turn: &mut Turn,
        context: &mut Context,
    ) -> Result<(), AgentError> {
        let due = self
            .commitment
            .due(turn.number, state, episode, self.prompts)?;
        if let Some(trigger) = due {
            context.append_to_last_user(&trigger.record(episode, turn));
        }
        if answer_only {
            context.append_to_last_user(&actions::last_turn_note(self.prompts)?);
        }
        Ok(())
    }

    /// Calls the model, re-prompting (without consuming the turn) while enforcement
    /// rejects the response and reminders remain. The re-prompt sends the rejected reply
    /// and its reminder; the accepted reply replaces them in the conversation (SLEUTH
    /// App. M), unless `keep_rejected=true`.
    async fn respond(
        &self,
        context: &mut Context,
        episode: &mut Episode,
        turn: &mut Turn,
        state: &WorkingMemory,
        env: &dyn Environment,
    ) -> Result<LoopOutcome, AgentError> {
        let mut kind = CallKind::Action;
        let constraint = self.constraint.for_turn(state, env.retrieved());
        let schema = self.memory.schema();
        // Where the rejected exchanges of this turn start, so they can leave once a
        // reply is accepted (SLEUTH App. M; `keep_rejected=true` keeps them).
        let before_rejections = context.len();
        loop {
            let messages = context.request(state, &schema, self.prompts)?;
            let mut request = ChatRequest::new(messages)
                .temperature(self.settings.temperature)
                .max_tokens(self.settings.max_tokens);
            request.constraint = constraint.clone();
            if self.settings.tool_channel == ToolChannel::Native {
                request.tools = actions::tool_specs(env.tools());
            }
            let retrieved = env.retrieved();
            let reply =
                call_model_response(self.ctx, &request, kind, episode, Some(turn), retrieved);
            let Some(response) = reply.await? else {
                return Ok(LoopOutcome::Overflow);
            };
            let cut = response.finish_reason == FinishReason::Length;
            let reply = Reply::of(response, turn.number);
            let Some(reminder) = self
                .enforcement
                .reminder(&reply.text, episode, self.prompts)?
            else {
                turn.truncated = cut;
                if !self.settings.keep_rejected {
                    context.truncate(before_rejections);
                }
                let native = self.settings.tool_channel == ToolChannel::Native;
                if native && self.native_silence.note(&reply) {
                    tracing::warn!(
                        "tool_channel=native: {} replies came back without a tool call though every request offered the tools; the server may drop `tools` from the prompt (llama-server's template does so for some models, silently), so the model writes its actions as text; tool_channel=text sends the protocol as text",
                        NativeSilence::AFTER
                    );
                }
                return Ok(LoopOutcome::Reply(reply));
            };
            // A rejected reply's calls did not run: it goes back as text, its calls as
            // action lines, so no call waits for a result.
            context.push(Message::assistant(reply.text.clone()));
            context.push(Message::user(reminder));
            turn.rejected.push(reply.text);
            kind = CallKind::Reminder;
        }
    }
}
