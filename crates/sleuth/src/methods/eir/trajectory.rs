//! The one retrieval loop of the EIR setting. EIR, Direct, Agentic SSR and Reflexion's
//! trials all run it; they differ only in their [`Policy`]: the prompt of each turn, how
//! a response is read and checked (SSR verifies it, EIR applies its list changes), and
//! what they keep from a refusal or an observation.
//!
//! The loop owns the rules the EIR paper states for every method of the setting (§3.2,
//! App. B): the turn and read budgets, the last turn that accepts only a submission, a
//! refused response that still uses its turn (counted by cause), reads that become
//! immutable evidence records, and the partial episode kept on a failed call.
//!
//! The corpus setting (§4.3, App. H.1) runs the same loop with other budgets: 12 action
//! turns and six read attempts per trial. Every refused response uses its turn; every
//! executed read uses an attempt whether or not it finds a paragraph (an id no search of
//! this trial listed, or a repeated read, is an invalid read: it uses its turn and its
//! attempt and stores nothing new), and so does a refused response proposing a read (a
//! malformed read). The last turn accepts only a submission, and any
//! other response there ends the trial with an empty submission; EIR still runs its
//! final call on what was collected.

use super::json::{proposes_read, Citation, Move, RejectCause, Rejection};
use crate::env::{EvidenceEnv, Observation};
use crate::llm::{ChatRequest, FinishReason, OutputConstraint};
use crate::methods::settings::{EirSettings, LastTurn};
use crate::methods::{
    call_model_response, AgentError, CallKind, EirOutputs, Episode, Outputs, RunContext, Turn,
};
use async_trait::async_trait;
use serde_json::Value;

/// Turns and reads of one trajectory, and whether the last turn accepts only a
/// submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub turns: u32,
    pub reads: u32,
    pub last_submit_only: bool,
}

impl Budget {
    /// EIR: H read turns, then one submit-only turn (EIR paper §3.2, App. B.1); in the
    /// corpus setting the fixed action turns (App. H.1: 12) with H read attempts.
    pub fn eir(s: &EirSettings) -> Self {
        Budget {
            turns: s.action_turns.unwrap_or(s.reads + 1),
            reads: s.reads,
            last_submit_only: true,
        }
    }

    /// Direct, SSR, Reflexion: H turns in all, the submission included (EIR §4.2: "a
    /// maximum of six turns to execute all actions, including reading and submitting");
    /// in the corpus setting the same fixed action turns as EIR (App. H.1).
    ///
    /// Neither §4.2 nor B.3 says what turn H accepts in the titles setting. A read there
    /// leaves no turn to submit, so the answer would be lost either way; by default the
    /// last turn accepts only a submission, as H.1's turn 12 does, which leaves at most
    /// H − 1 reads (five) and keeps a sixth read, which no answer can use, out of the
    /// reads and recall recorded. `last_turn=any` runs an action of any kind there (six
    /// reads possible, the trajectory then ends without a submission).
    pub fn direct(s: &EirSettings) -> Self {
        Budget {
            turns: s.action_turns.unwrap_or(s.reads),
            reads: s.reads,
            last_submit_only: s.last_turn == LastTurn::SubmitOnly,
        }
    }
}

/// What a method does on the shared loop.
#[async_trait]
pub trait Policy: Send {
    /// The prompt and JSON schema of turn `turn`'s action call.
    fn prompt(&self, t: &Trajectory<'_>, turn: u32) -> Result<(String, Value), AgentError>;

    /// Reads and checks the response in `turn.response`: the move to execute, or why
    /// it is refused. May call the model again (SSR's verification, EIR's repair) and
    /// annotate the turn.
    async fn accept(
        &mut self,
        t: &mut Trajectory<'_>,
        turn: &mut Turn,
    ) -> Result<Result<Move, Rejection>, AgentError>;

    /// Told about a refused response before the turn is recorded.
    fn refused(&mut self, rejection: &Rejection, turn: &mut Turn);

    /// Told about an executed read or search.
    fn observed(&mut self, mv: &Move, observation: &Observation, turn: u32);
}

/// A submitted answer and the sentences it cites.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub answer: String,
    pub evidence: Vec<Citation>,
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub submission: Option<Submission>,
    /// A prompt no longer fit the model's context.
    pub overflow: bool,
}

pub struct Trajectory<'a> {
    pub ctx: &'a RunContext,
    pub settings: &'a EirSettings,
    pub env: Box<dyn EvidenceEnv>,
    /// The episode so far, with the setting's outputs (its evidence exists from the start).
    pub episode: Episode<EirOutputs>,
    pub budget: Budget,
    pub reads_used: u32,
}

impl<'a> Trajectory<'a> {
    pub fn new(
        ctx: &'a RunContext,
        settings: &'a EirSettings,
        env: Box<dyn EvidenceEnv>,
        budget: Budget,
    ) -> Self {
        let episode = Episode::default();
        // One budget: where the environment limits reads too (`--corpus-reads`), the
        // smaller one holds, so a read is never refused by one and allowed by the other.
        let budget = Budget {
            reads: budget.reads.min(env.read_budget().unwrap_or(u32::MAX)),
            ..budget
        };
        Trajectory {
            ctx,
            settings,
            env,
            episode,
            budget,
            reads_used: 0,
        }
    }

    /// A request at the method's temperature and token limit, constrained by `schema`
    /// unless constraints are switched off.
    pub fn request(&self, prompt: String, schema: Value) -> ChatRequest {
        request(self.settings, prompt, schema)
    }

    /// Calls the model and counts the call. `Ok(None)` when the prompt no longer fits
    /// the model's context; other failures return the partial episode, with `turn`
    /// (the turn in progress) in its trace.
    pub async fn call(
        &mut self,
        kind: CallKind,
        request: &ChatRequest,
        turn: Option<&Turn>,
    ) -> Result<Option<String>, AgentError> {
        Ok(self
            .call_cut(kind, request, turn)
            .await?
            .map(|(text, _)| text))
    }

    /// [`Self::call`], also saying whether the reply was cut at the output-token limit
    /// (`finish_reason: length`).
    async fn call_cut(
        &mut self,
        kind: CallKind,
        request: &ChatRequest,
        turn: Option<&Turn>,
    ) -> Result<Option<(String, bool)>, AgentError> {
        let retrieved = self.env.retrieved().to_vec();
        let response =
            call_model_response(self.ctx, request, kind, &mut self.episode, turn, &retrieved)
                .await?;
        Ok(response.map(|r| {
            let cut = r.finish_reason == FinishReason::Length;
            (r.text, cut)
        }))
    }

    /// Runs the action turns under `policy` until a submission, the end of the budget,
    /// or a context overflow. A reply cut at the output-token limit is marked on its
    /// turn (`truncated`, as the agent loop marks its turns), and when it is refused the
    /// model is told it was cut, not that a field is missing.
    pub async fn run(&mut self, policy: &mut dyn Policy) -> Result<Ending, AgentError> {
        let mut ending = Ending {
            submission: None,
            overflow: false,
        };
        for number in 1..=self.budget.turns {
            let (prompt, schema) = policy.prompt(self, number)?;
            let request = self.request(prompt, schema);
            let mut turn = Turn {
                number,
                ..Turn::default()
            };
            let Some((text, cut)) = self
                .call_cut(CallKind::Action, &request, Some(&turn))
                .await?
            else {
                ending.overflow = true;
                break;
            };
            turn.response = text;
            turn.truncated = cut;
            let mv = match policy.accept(self, &mut turn).await? {
                Ok(mv) => mv,
                Err(mut rejection) => {
                    if cut {
                        rejection.message = cut_message(self.settings.max_tokens);
                    }
                    self.charge_refused_read(&turn.response);
                    policy.refused(&rejection, &mut turn);
                    self.reject(&mut turn, rejection);
                    self.push(turn);
                    continue;
                }
            };
            turn.actions = vec![mv.to_action()];
            if let Move::Submit { answer, evidence } = mv {
                ending.submission = Some(Submission { answer, evidence });
                self.push(turn);
                break;
            }
            let observation = self.execute(&mv, number);
            policy.observed(&mv, &observation, number);
            turn.observations.push(observation);
            self.push(turn);
        }
        Ok(ending)
    }

    /// Whether `turn` accepts only a submission (the last turn, unless the budget lets
    /// it take any action).
    pub fn submit_only(&self, turn: u32) -> bool {
        self.budget.last_submit_only && turn >= self.budget.turns
    }

    /// Whether `mv` may run on `turn`.
    pub fn allowed(&self, mv: &Move, turn: u32) -> Result<(), Rejection> {
        let not_allowed = |m: &str| Err(Rejection::new(RejectCause::NotAllowed, m));
        match mv {
            Move::Submit { .. } => Ok(()),
            _ if self.submit_only(turn) => not_allowed("this turn accepts only a submission"),
            Move::Search { .. } if !self.env.can_search() => {
                not_allowed("there is no search here; read one of the listed titles")
            }
            Move::Read { .. } if self.reads_used >= self.budget.reads => {
                not_allowed("no reads are left; submit an answer")
            }
            _ => Ok(()),
        }
    }

    /// Runs a read or search (call [`Self::allowed`] first).
    pub fn execute(&mut self, mv: &Move, turn: u32) -> Observation {
        self.episode.tool_calls += 1;
        match mv {
            Move::Read { title } => {
                self.reads_used += 1;
                self.env.read(title, turn).observation
            }
            Move::Search { query } => self
                .env
                .search(query, turn)
                .unwrap_or_else(|| Observation::new("There is no search here.")),
            Move::Submit { .. } => Observation::new("Submitted."),
        }
    }

    /// EIR App. H.1: in the corpus setting "invalid actions consume a turn, and invalid
    /// reads also consume a read attempt". A refused response whose action is a read (a
    /// read without an id, an id of the wrong type, a read refused with its response)
    /// uses an attempt as well as its turn; an executed read of an id no search listed
    /// uses one in [`Self::execute`]. The titles setting counts the reads made (B.1:
    /// "EIR permits six reads"), as the paper says H.1's rules differ from it.
    fn charge_refused_read(&mut self, response: &str) {
        if self.env.can_search() && self.reads_used < self.budget.reads && proposes_read(response) {
            self.reads_used += 1;
            self.env.use_read_attempt();
        }
    }

    /// Records a refused response on its turn and counts it by cause (a cut reply keeps
    /// the cause its text shows, so the counts stay comparable; only what the model is
    /// told changes).
    pub fn reject(&mut self, turn: &mut Turn, rejection: Rejection) {
        let rejected = &mut self.episode.outputs.evidence.rejected;
        *rejected.entry(rejection.cause).or_default() += 1;
        turn.rejection = Some(rejection);
    }

    /// Shows a finished turn to the observer and appends it to the trace.
    pub fn push(&mut self, turn: Turn) {
        self.ctx.observe(&turn);
        self.episode.turns.push(turn);
    }

    /// Closes the trajectory: what was read, and the citations the scored answer rests
    /// on (`dropped` named no read sentence), in the record's outputs. Scores are
    /// computed from these by `eval`.
    pub fn finish(mut self, cited: Vec<Citation>, dropped: usize) -> Episode {
        self.episode.retrieved = self.env.retrieved().to_vec();
        let evidence = &mut self.episode.outputs.evidence;
        evidence.cited = cited;
        evidence.dropped_citations = dropped;
        self.episode.map_outputs(Outputs::from)
    }
}

pub fn request(settings: &EirSettings, prompt: String, schema: Value) -> ChatRequest {
    let req = ChatRequest::new(vec![crate::llm::Message::user(prompt)])
        .temperature(settings.temperature)
        .max_tokens(settings.max_tokens);
    if settings.json_schema {
        req.constraint(OutputConstraint::JsonSchema(schema))
    } else {
        req
    }
}

/// How a rejection is reported back to the model on the next turn.
pub fn rejection_feedback(rejection: &Rejection, turn: u32) -> String {
    format!(
        "Your response on turn {turn} was rejected ({}): {}. Nothing was changed or read, and the turn was used.",
        rejection.cause.name(),
        rejection.message
    )
}

/// What a refused reply that was cut at the output-token limit is told: that it was cut,
/// and how to fit, rather than the missing field its cut text happens to lack.
fn cut_message(max_tokens: u32) -> String {
    format!(
        "the response was cut off at the output-token limit ({max_tokens} tokens) before its JSON ended; reply again with the same fields, more briefly"
    )
}
