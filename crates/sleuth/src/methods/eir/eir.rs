//! Evidence-Inference Reconstruction: one retrieval trajectory guided by Requirements
//! and Conclusions lists, then a separate final call that answers from the question and
//! the evidence records alone.
//!
//! Each action prompt carries the question, the previous step's result (or why it was
//! rejected), the lists (unless the list-feedback control removes them) and the unread
//! titles; each response proposes list changes and one action, validated together and
//! executed all-or-nothing. The answer submitted during retrieval is kept in the record
//! as `retrieval_answer`; the final call's answer is EIR's answer. The controls
//! (dependency repair, additional retrieval) are settings of this method.

use super::final_call::{evidence_view, final_call, FinalAnswer};
use super::json::{extract_object, parse_move, Extraction, Move, RejectCause, Rejection};
use super::lists::{Applied, ListChanges, Lists};
use super::trajectory::{rejection_feedback, request, Budget, Trajectory};
use super::{schema, Shared};
use crate::data::Question;
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext, StopReason, Turn};
use async_trait::async_trait;
use minijinja::context;
use serde_json::{json, Value};

pub struct Eir {
    shared: Shared,
}

impl Eir {
    pub fn new(shared: Shared) -> Self {
        Eir { shared }
    }

    fn action_prompt(
        &self,
        question: &Question,
        t: &Trajectory<'_>,
        turn: u32,
        lists: &Lists,
        feedback: &str,
    ) -> Result<String, AgentError> {
        let s = &self.shared.settings;
        self.shared
            .prompts
            .render(
                "eir_action.txt",
                context! {
                    question => &question.text,
                    show_lists => s.list_feedback,
                    lists => if s.list_feedback { lists.render() } else { String::new() },
                    feedback,
                    readable => t.env.readable(),
                    turn,
                    turns => t.budget.turns,
                    submit_only => t.is_last(turn),
                    reads_left => t.budget.reads.saturating_sub(t.reads_used),
                    dependency_repair => s.dependency_repair,
                },
            )
            .map_err(AgentError::config)
    }

    /// Parses and validates one response: the action and the list changes together.
    fn check(
        &self,
        text: &str,
        lists: &Lists,
        t: &Trajectory<'_>,
        turn: u32,
    ) -> Result<(Move, Applied), Rejection> {
        let obj = extract_object(text, Extraction::Tolerant).ok_or_else(|| {
            Rejection::new(
                RejectCause::Unparseable,
                "no JSON object was found in the response",
            )
        })?;
        let mv = parse_move(&obj)?;
        let changes = ListChanges::parse(&obj)?;
        t.allowed(&mv, turn)?;
        let applied = lists.apply(&changes, t.env.evidence())?;
        Ok((mv, applied))
    }

    /// Dependency-repair control: one call that revises the conclusions depending on
    /// those just revised and refreshes the requirements; applied all-or-nothing.
    async fn repair(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        lists: &mut Lists,
        revised: &[String],
        turn: &Turn,
    ) -> Result<Option<Value>, AgentError> {
        let affected = lists.dependents_of(revised);
        if affected.is_empty() {
            return Ok(None);
        }
        let prompt = self
            .shared
            .prompts
            .render(
                "eir_repair.txt",
                context! {
                    question => &question.text,
                    paragraphs => evidence_view(t.env.evidence()),
                    lists => lists.render(),
                    revised,
                    affected => &affected,
                },
            )
            .map_err(AgentError::config)?;
        let req = t.request(prompt, schema::repair());
        let Some(text) = t.call(CallKind::Repair, &req, Some(turn)).await? else {
            return Ok(Some(
                json!({"affected": affected, "applied": false, "error": "context overflow"}),
            ));
        };
        let result = extract_object(&text, Extraction::Tolerant)
            .ok_or_else(|| Rejection::new(RejectCause::Unparseable, "no JSON object"))
            .and_then(|obj| ListChanges::parse(&obj))
            .and_then(|changes| lists.apply(&changes, t.env.evidence()));
        let record = match result {
            Ok(applied) => {
                *lists = applied.lists;
                json!({"affected": affected, "response": text, "applied": true})
            }
            Err(r) => json!({"affected": affected, "response": text, "applied": false, "error": r}),
        };
        Ok(Some(record))
    }

    /// Additional-retrieval control: the model, shown the question, the evidence and the
    /// unread titles, may read up to `extra_reads` more paragraphs; if it reads any, the
    /// final call runs again.
    async fn read_more(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        first: FinalAnswer,
    ) -> Result<FinalAnswer, AgentError> {
        let limit = self.shared.settings.extra_reads as usize;
        let prompt = self
            .shared
            .prompts
            .render(
                "eir_more.txt",
                context! {
                    question => &question.text,
                    paragraphs => evidence_view(t.env.evidence()),
                    readable => t.env.readable(),
                    limit,
                },
            )
            .map_err(AgentError::config)?;
        let req = t.request(prompt, schema::more_reads());
        let Some(text) = t.call(CallKind::Action, &req, None).await? else {
            return Ok(first);
        };
        let wanted: Vec<String> = extract_object(&text, Extraction::Tolerant)
            .and_then(|o| o.get("read").and_then(Value::as_array).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.trim().is_empty())
            .take(limit)
            .collect();
        let turn = t.episode.turns.len() as u32 + 1;
        let mut read = Vec::new();
        for title in &wanted {
            if let Some(got) = t.env.read(title, turn).title {
                t.episode.tool_calls += 1;
                read.push(got);
            }
        }
        let extra = &mut t.episode.extra;
        extra.insert("extra_reads_requested".into(), json!(wanted));
        extra.insert("extra_reads".into(), json!(read));
        extra.insert("answer_before_extra_reads".into(), json!(first.answer));
        if read.is_empty() {
            return Ok(first);
        }
        let s = &self.shared;
        final_call(
            t.ctx,
            &s.settings,
            &s.prompts,
            &mut t.episode,
            &question.text,
            t.env.evidence(),
        )
        .await
    }
}

#[async_trait]
impl Method for Eir {
    fn name(&self) -> &str {
        "eir"
    }

    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::eir(settings.reads));
        let mut lists = Lists::default();
        let mut feedback = String::new();
        let mut retrieval_answer: Option<String> = None;
        let mut retrieval_evidence = Vec::new();
        let mut repairs = Vec::new();
        let mut overflow = false;
        for number in 1..=t.budget.turns {
            let prompt = self.action_prompt(question, &t, number, &lists, &feedback)?;
            let req = request(
                settings,
                prompt,
                schema::eir_action(settings.dependency_repair),
            );
            let mut turn = Turn {
                number,
                ..Turn::default()
            };
            let Some(text) = t.call(CallKind::Action, &req, Some(&turn)).await? else {
                overflow = true;
                break;
            };
            turn.response = text;
            let (mv, applied) = match self.check(&turn.response, &lists, &t, number) {
                Ok(ok) => ok,
                Err(rejection) => {
                    feedback = rejection_feedback(&rejection, number);
                    t.reject(&mut turn, rejection);
                    turn.lists = Some(lists.clone());
                    t.push(turn);
                    continue;
                }
            };
            lists = applied.lists;
            if settings.dependency_repair && !applied.revised.is_empty() {
                if let Some(r) = self
                    .repair(question, &mut t, &mut lists, &applied.revised, &turn)
                    .await?
                {
                    repairs.push(json!({"turn": number, "repair": r}));
                }
            }
            turn.actions = vec![mv.to_action()];
            turn.lists = Some(lists.clone());
            if let Move::Submit { answer, evidence } = mv {
                retrieval_answer = Some(answer);
                retrieval_evidence = evidence;
                t.push(turn);
                break;
            }
            let observation = t.execute(&mv, number);
            feedback = observation.text.clone();
            turn.observations.push(observation);
            t.push(turn);
        }

        let s = &self.shared;
        let mut answer = final_call(
            ctx,
            settings,
            &s.prompts,
            &mut t.episode,
            &question.text,
            t.env.evidence(),
        )
        .await?;
        if settings.extra_reads > 0 {
            answer = self.read_more(question, &mut t, answer).await?;
        }
        let extra = &mut t.episode.extra;
        extra.insert("retrieval_answer".into(), json!(retrieval_answer));
        extra.insert("retrieval_evidence".into(), json!(retrieval_evidence));
        extra.insert("forced_end".into(), json!(retrieval_answer.is_none()));
        extra.insert("final_response".into(), json!(answer.raw));
        extra.insert("dropped_citations".into(), json!(answer.dropped));
        extra.insert("lists".into(), json!(lists));
        extra.insert("evidence_records".into(), json!(t.env.evidence().len()));
        if settings.dependency_repair {
            extra.insert("repairs".into(), json!(repairs));
        }
        t.episode.stop = if overflow || t.episode.stop == StopReason::ContextOverflow {
            StopReason::ContextOverflow
        } else if answer.answer.is_some() {
            StopReason::Finished
        } else {
            StopReason::ParseFailure
        };
        t.episode.answer = answer.answer.clone();
        Ok(t.finish(question, &answer.evidence))
    }
}
