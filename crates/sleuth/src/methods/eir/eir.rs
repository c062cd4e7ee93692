//! Evidence-Inference Reconstruction: one retrieval trajectory guided by Requirements
//! and Conclusions lists, then a separate final call that answers from the question and
//! the evidence records alone.
//!
//! Each action prompt carries the question, the previous step's result (or why it was
//! rejected), the lists (unless the list-feedback control removes them) and the unread
//! titles (in the corpus setting: this trial's search results, and a search action,
//! EIR paper §4.3); each response proposes list changes and one action, validated
//! together and executed all-or-nothing. The answer submitted during retrieval is kept in the record
//! (`outputs.final_call.retrieval_answer`); the final call's answer is EIR's answer
//! (EIR paper §3.3). The controls
//! (dependency repair, additional retrieval) are settings of this method.

use super::final_call::{evidence_view, final_call, FinalAnswer};
use super::json::{extract_object, parse_move, Extraction, Move, RejectCause, Rejection};
use super::lists::{Applied, ListChanges, Lists};
use super::schema::{self, more_reads};
use super::trajectory::{rejection_feedback, Budget, Policy, Trajectory};
use super::Shared;
use crate::data::Question;
use crate::env::titles::named;
use crate::env::Observation;
use crate::methods::outputs::{BeforeExtraReads, ExtraReads, FinalCall, Repair, RepairPart};
use crate::methods::settings::{DependencyRepair, ListErrors, RequirementRefresh};
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext, StopReason, Turn};
use async_trait::async_trait;
use minijinja::context;
use serde_json::Value;

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
                    can_search => t.env.can_search(),
                    readable => t.env.choices(),
                    turn,
                    turns => t.budget.turns,
                    submit_only => t.submit_only(turn),
                    reads_left => t.budget.reads.saturating_sub(t.reads_used),
                    dependency_repair => s.dependency_repair.on(),
                    refuse_list_errors => s.list_errors == ListErrors::Refuse,
                },
            )
            .map_err(AgentError::from)
    }

    /// Parses and validates one response: the action and the list changes together.
    /// The third value is a list change that was discarded ([`Self::discards`]): the
    /// action runs on the unchanged lists.
    fn check(
        &self,
        text: &str,
        lists: &Lists,
        t: &Trajectory<'_>,
        turn: u32,
    ) -> Result<(Move, Applied, Option<Rejection>), Rejection> {
        let obj = extract_object(text, Extraction::Tolerant).ok_or_else(|| {
            Rejection::new(
                RejectCause::Unparseable,
                "no JSON object was found in the response",
            )
        })?;
        let mv = parse_move(&obj)?;
        let changes = ListChanges::parse(&obj)?;
        t.allowed(&mv, turn)?;
        match lists.apply(&changes, t.env.evidence()) {
            Ok(applied) => Ok((mv, applied, None)),
            Err(r) if r.causes().all(|c| self.discards(c)) => {
                let unchanged = Applied {
                    lists: lists.clone(),
                    revised: Vec::new(),
                };
                Ok((mv, unchanged, Some(r)))
            }
            Err(mut r) => {
                // The batch is refused when any of its problems refuses; that problem's
                // cause is the one recorded, whatever order the changes came in.
                let refusing = r.causes().find(|c| !self.discards(*c));
                if let Some(refusing) = refusing {
                    r.cause = refusing;
                }
                Err(r)
            }
        }
    }

    /// Whether a list change refused by the lists' check is discarded (both lists stay
    /// as they were and the action still runs) rather than refusing the whole turn.
    ///
    /// EIR paper §3.2: EIR checks that a change revises only existing entries and cites
    /// only read sentences, "then discards any change that fails this check"; B.1: both
    /// lists stay unchanged if any part is invalid. So by default (`list_errors=discard`)
    /// those three causes (unknown entry, duplicate entry, invalid citation) discard the
    /// batch; a malformed change (missing field, wrong type) is a malformed response,
    /// which H.4 counts as a rejection. `list_errors=refuse` refuses the turn instead
    /// (H.4's forced endings that "follow invalid citations" fit that reading).
    ///
    /// The list-feedback control (App. E.2) decides the ids the model cannot see on its
    /// own: with the lists hidden, a duplicate or unknown id is discarded (the corrected
    /// control) unless `hidden_lists=refuse` (the uncorrected one).
    ///
    /// A batch with several problems is discarded only when each of them would be.
    fn discards(&self, cause: RejectCause) -> bool {
        let s = &self.shared.settings;
        let unseeable = matches!(
            cause,
            RejectCause::DuplicateEntry | RejectCause::UnknownEntry
        );
        if !s.list_feedback && unseeable {
            return !s.refuse_hidden_lists;
        }
        s.list_errors == ListErrors::Discard && (unseeable || cause == RejectCause::InvalidCitation)
    }

    /// Dependency-repair control (EIR App. E.3, "when a claim changes, extra calls
    /// revise affected conclusions and refresh requirements"): when a turn revises
    /// conclusions, one call revises those that depend on them (it may only revise them;
    /// it runs only where some do), then one call refreshes the requirements (it may only
    /// change them), after every revision under `refresh=revision` (the default) or only
    /// where dependents exist under `refresh=dependents`. Each reply is checked and
    /// applied all-or-nothing; under `unapplied` the calls run and are recorded but the
    /// lists stay as the action left them (Table 14's comparison).
    /// Limits (ours; the paper's table of them is not in its text): one repair round
    /// per accepted turn, dependents reached through any chain of links.
    async fn repair(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        lists: &mut Lists,
        revised: &[String],
        turn: &Turn,
    ) -> Result<Vec<Repair>, AgentError> {
        let affected = lists.dependents_of(revised);
        let settings = &self.shared.settings;
        let parts: &[RepairPart] = match (affected.is_empty(), settings.refresh) {
            (false, _) => &[RepairPart::Conclusions, RepairPart::Requirements],
            (true, RequirementRefresh::Revision) => &[RepairPart::Requirements],
            (true, RequirementRefresh::Dependents) => &[],
        };
        let apply = settings.dependency_repair == DependencyRepair::Applied;
        let mut repairs = Vec::new();
        for &part in parts {
            let (template, schema) = match part {
                RepairPart::Conclusions => ("eir_repair.txt", schema::repair_conclusions()),
                RepairPart::Requirements => ("eir_refresh.txt", schema::refresh_requirements()),
            };
            let prompt = self
                .shared
                .prompts
                .render(
                    template,
                    context! {
                        question => &question.text,
                        paragraphs => evidence_view(t.env.evidence()),
                        lists => lists.render(),
                        revised,
                        affected => &affected,
                    },
                )
                .map_err(AgentError::from)?;
            let req = t.request(prompt, schema);
            let mut repair = Repair {
                turn: turn.number,
                part,
                affected: affected.clone(),
                response: None,
                valid: false,
                applied: false,
                error: None,
            };
            let Some(text) = t.call(CallKind::Repair, &req, Some(turn)).await? else {
                repair.error = Some("context overflow".into());
                repairs.push(repair);
                break;
            };
            let result = extract_object(&text, Extraction::Tolerant)
                .ok_or_else(|| Rejection::new(RejectCause::Unparseable, "no JSON object"))
                .and_then(|obj| ListChanges::parse(&obj))
                .and_then(|changes| {
                    match part {
                        RepairPart::Conclusions => changes.only_revising(&affected)?,
                        RepairPart::Requirements => changes.only_requirements()?,
                    }
                    lists.apply(&changes, t.env.evidence())
                });
            repair.response = Some(text);
            match result {
                Ok(applied) => {
                    repair.valid = true;
                    if apply {
                        *lists = applied.lists;
                        repair.applied = true;
                    }
                }
                Err(r) => repair.error = Some(format!("{}: {}", r.cause.name(), r.message)),
            }
            repairs.push(repair);
        }
        Ok(repairs)
    }

    /// More reading after the final answer: the model, shown the question, the evidence
    /// and the unread titles, names up to `extra_reads` more paragraphs. Under
    /// [`MoreReading::Decide`] (EIR App. F.4) it may name none, and the final call runs
    /// again only after a successful read; under [`MoreReading::Select`] (App. F.3) a
    /// separate call selects them and the final call always runs again on the evidence,
    /// expanded or not.
    pub(super) async fn read_more(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        first: FinalAnswer,
        mode: MoreReading,
    ) -> Result<(FinalAnswer, ExtraReads), AgentError> {
        let limit = self.shared.settings.extra_reads as usize;
        // F.4's before/after figures; F.3's recovery starts from an earlier run's answer,
        // which this episode did not pay for, and Table 16 reports no such figures.
        let before = (mode == MoreReading::Decide).then(|| BeforeExtraReads {
            cited: first.evidence.clone(),
            calls: t.episode.total_calls(),
        });
        let prompt = self
            .shared
            .prompts
            .render(
                mode.prompt(),
                context! {
                    question => &question.text,
                    paragraphs => evidence_view(t.env.evidence()),
                    readable => t.env.readable(),
                    limit,
                },
            )
            .map_err(AgentError::from)?;
        let req = t.request(prompt, schema::more_reads());
        let Some(text) = t.call(CallKind::Action, &req, None).await? else {
            let reads = ExtraReads {
                requested: Vec::new(),
                read: Vec::new(),
                answer_before: first.answer.clone(),
                before,
            };
            return Ok((first, reads));
        };
        let wanted: Vec<String> = extract_object(&text, Extraction::Tolerant)
            .and_then(|o| {
                o.get(more_reads::READ.name)
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.trim().is_empty())
            .take(limit)
            .collect();
        let turn = t.episode.turns.len() as u32 + 1;
        let mut read = Vec::new();
        for title in &wanted {
            // EIR App. F.3/F.4: a read can fail ("173 of 174 follow a successful
            // additional read"; "Otherwise, EIR's original answer is retained"): a request
            // naming no unread title reads nothing, unlike an action turn's read, which
            // B.1 lets fall back to the first unread title.
            let readable = t.env.readable();
            let names: Vec<&str> = readable.iter().map(String::as_str).collect();
            let Some(k) = named(&names, title) else {
                continue;
            };
            if let Some(got) = t.env.read(&readable[k], turn).title {
                t.episode.tool_calls += 1;
                read.push(got);
            }
        }
        let reads = ExtraReads {
            requested: wanted,
            answer_before: first.answer.clone(),
            read,
            before,
        };
        if reads.read.is_empty() && mode != MoreReading::Select {
            return Ok((first, reads));
        }
        let s = &self.shared;
        let retrieved = t.env.retrieved().to_vec();
        let again = final_call(
            t.ctx,
            &s.settings,
            &s.prompts,
            &mut t.episode,
            &question.text,
            t.env.evidence(),
            &retrieved,
        )
        .await?;
        Ok((again, reads))
    }
}

/// How reading after the final answer decides whether the final call runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MoreReading {
    /// EIR App. F.4 (`extra_reads`): the model decides whether to read more; the final
    /// call runs again only after a successful read, else the original answer stands.
    Decide,
    /// EIR App. F.3 (`recover=selected`): a separate call selects up to two more
    /// paragraphs, and the final call then runs on the evidence whether or not a read
    /// succeeded ("173 of 174" matches follow a successful read, so one did not).
    /// `selected_rerun=after_read` is the other reading ([`RecoverRerun`]).
    Select,
    /// F.3's call with F.4's rule: the final call runs again only after a read.
    SelectRerunAfterRead,
}

impl MoreReading {
    fn prompt(self) -> &'static str {
        match self {
            MoreReading::Decide => "eir_more.txt",
            MoreReading::Select | MoreReading::SelectRerunAfterRead => "eir_select.txt",
        }
    }
}

/// EIR on the shared loop: the lists and the previous step's result in each prompt, a
/// response whose action and list changes are validated together and applied
/// all-or-nothing (EIR paper §3.2), and the dependency-repair control after a revision.
struct EirPolicy<'q> {
    eir: &'q Eir,
    question: &'q Question,
    lists: Lists,
    /// The previous step's result, or why its response was refused.
    feedback: String,
    /// Why this turn's list changes were discarded, told with the action's result
    /// ("Rejections return an explanation", EIR App. H.1); never while the lists are
    /// hidden (the control does not show them).
    discarded_note: Option<String>,
    repairs: Vec<Repair>,
}

#[async_trait]
impl Policy for EirPolicy<'_> {
    fn prompt(&self, t: &Trajectory<'_>, turn: u32) -> Result<(String, Value), AgentError> {
        let prompt = self
            .eir
            .action_prompt(self.question, t, turn, &self.lists, &self.feedback)?;
        let dependency_repair = self.eir.shared.settings.dependency_repair.on();
        Ok((
            prompt,
            schema::eir_action(dependency_repair, t.env.can_search()),
        ))
    }

    async fn accept(
        &mut self,
        t: &mut Trajectory<'_>,
        turn: &mut Turn,
    ) -> Result<Result<Move, Rejection>, AgentError> {
        let (mv, applied, discarded) =
            match self.eir.check(&turn.response, &self.lists, t, turn.number) {
                Ok(ok) => ok,
                Err(rejection) => return Ok(Err(rejection)),
            };
        self.discarded_note = discarded
            .as_ref()
            .filter(|_| self.eir.shared.settings.list_feedback)
            .map(|r| discarded_feedback(r, turn.number));
        turn.discarded_lists = discarded;
        self.lists = applied.lists;
        if self.eir.shared.settings.dependency_repair.on() && !applied.revised.is_empty() {
            let repairs = self
                .eir
                .repair(self.question, t, &mut self.lists, &applied.revised, turn)
                .await?;
            self.repairs.extend(repairs);
        }
        turn.lists = Some(self.lists.clone());
        Ok(Ok(mv))
    }

    fn refused(&mut self, rejection: &Rejection, turn: &mut Turn) {
        self.feedback = rejection_feedback(rejection, turn.number);
        turn.lists = Some(self.lists.clone());
    }

    fn observed(&mut self, _mv: &Move, observation: &Observation, _turn: u32) {
        self.feedback = match self.discarded_note.take() {
            Some(note) => format!("{note}\n\n{}", observation.text),
            None => observation.text.clone(),
        };
    }
}

/// How discarded list changes are reported back with the action's result.
fn discarded_feedback(rejection: &Rejection, turn: u32) -> String {
    format!(
        "Your list changes on turn {turn} were not applied ({}): {}. The lists are as they were; the action was carried out.",
        rejection.cause.name(),
        rejection.message
    )
}

#[async_trait]
impl Method for Eir {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::eir(settings));
        let mut policy = EirPolicy {
            eir: self,
            question,
            lists: Lists::default(),
            feedback: String::new(),
            discarded_note: None,
            repairs: Vec::new(),
        };
        let ending = t.run(&mut policy).await?;

        // The final call sees the question and the evidence records alone (§3.3).
        let s = &self.shared;
        let retrieved = t.env.retrieved().to_vec();
        let mut answer = final_call(
            ctx,
            settings,
            &s.prompts,
            &mut t.episode,
            &question.text,
            t.env.evidence(),
            &retrieved,
        )
        .await?;
        let mut extra_reads = None;
        if settings.extra_reads > 0 {
            let (more, reads) = self
                .read_more(question, &mut t, answer, MoreReading::Decide)
                .await?;
            answer = more;
            extra_reads = Some(reads);
        }
        let (retrieval_answer, retrieval_evidence) = match ending.submission {
            Some(s) => (Some(s.answer), s.evidence),
            None => (None, Vec::new()),
        };
        t.episode.outputs.final_call = Some(FinalCall {
            forced_end: retrieval_answer.is_none(),
            retrieval_answer,
            retrieval_evidence,
            lists: policy.lists,
            repairs: policy.repairs,
            extra_reads,
            ..answer.output(t.env.evidence().len())
        });
        if ending.overflow {
            t.episode.stop = StopReason::ContextOverflow;
        }
        answer.close(&mut t.episode);
        Ok(t.finish(answer.evidence, answer.dropped))
    }
}
