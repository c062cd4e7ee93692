//! The text-protocol agents of the SLEUTH setting, all on one loop ([`run`]).
//!
//! A method here is a [`Style`] (which reasoning protocol the system prompt carries and
//! which memory the model keeps) plus [`AgentSettings`]; ReAct, ReAct-CoT, Self-Ask,
//! IRCoT, Notes, the working-memory ablations and SLEUTH differ only in that. The loop
//! composes one unit per concept of the papers, each in its own file: `commitment/`
//! (the nudge and the stopping strategies), `context` (full history or compaction),
//! `enforcement` (delimiters, the notation check, reminders, fact hand-back), `memory`
//! (what each memory kind does to the state) and `actions` (the actions of a turn).

mod actions;
mod commitment;
mod context;
mod enforcement;
mod template;
pub use crate::protocol::formats;
pub mod hybrid;
mod memory;
mod native;
mod run;

pub use hybrid::SleuthEir;

use super::retry::{attempt_text, Attempt};
use super::{AgentError, EnvFactory, Episode, Method, PromptSet, RunContext};
use crate::data::Question;
use crate::env::{Environment, PoolEnv, ToolCatalogue};
use crate::llm::{ChatRequest, Message, OutputConstraint};
use crate::memory::{MemoryKind, MemorySchema, Section, WorkingMemory};
use crate::methods::settings::{AgentSettings, GrammarUse, ToolChannel};
use crate::protocol::{self, grammar};
use async_trait::async_trait;
use commitment::{CommitmentRules, Strategy};
use enforcement::Enforcement;
use minijinja::context;
use std::sync::Arc;
use template::render;

/// The reasoning protocol of a loop method, as data: the template its system prompt
/// carries, the memory the model keeps, and which reasoning steps the trace reads out
/// of a response. The output grammar follows from these. A new loop method is a
/// template file and a registry row building its `Style`; the loop is shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// The protocol template (`react.txt`, `memory.txt`, ...), overridable by `--prompts`.
    pub template: &'static str,
    /// The memory the model writes each turn: none (the ReAct family), Notes' scratchpad,
    /// or SLEUTH's sections.
    pub memory: MemoryKind,
    /// The reasoning steps the trace keeps beside the actions.
    pub steps: Steps,
}

/// Which reasoning format a response follows, for the trace (and the grammar: a format
/// with steps writes lines before its action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    /// Free text, then the action (ReAct and its variants).
    None,
    /// `Sub-question N:` / `Intermediate answer N:` lines.
    SelfAsk,
    /// Alternating reasoning sentences and retrievals.
    Ircot,
}

impl Style {
    /// A protocol without a memory: ReAct's loop with another template.
    pub fn protocol(template: &'static str, steps: Steps) -> Style {
        Style {
            template,
            memory: MemoryKind::None,
            steps,
        }
    }

    /// ReAct (also the search phase of late verification).
    pub fn react() -> Style {
        Style::protocol("react.txt", Steps::None)
    }

    /// The unstructured scratchpad of the Notes baseline.
    pub fn notes() -> Style {
        Style {
            template: "notes.txt",
            memory: MemoryKind::Notes,
            steps: Steps::None,
        }
    }

    /// SLEUTH's working memory with these sections (the ablations keep subsets, Confirmed
    /// Facts always among them).
    pub fn memory(sections: &[Section]) -> Style {
        Style {
            template: "memory.txt",
            memory: MemoryKind::of(sections),
            steps: Steps::None,
        }
    }

    /// The tight output grammar that keeps a response inside this style's protocol: the
    /// embedded model's default (`grammar=auto`), sent to no server. It allows one
    /// action line and bounded sections, which is why no server gets it (§3.4: prompting
    /// only); `grammar=true` sends [`grammar::open_turn`] instead.
    fn grammar(&self, tools: &ToolCatalogue, settings: &AgentSettings) -> TurnConstraint {
        let fixed = |g: String| TurnConstraint::Fixed(OutputConstraint::Grammar(g));
        match &self.memory {
            MemoryKind::Sections(schema) => TurnConstraint::Memory {
                schema: schema.clone(),
                tools: tools.clone(),
                fact_fields: settings.contradictions,
            },
            MemoryKind::Notes => fixed(grammar::working_memory(&self.memory.schema(), tools)),
            MemoryKind::None if self.steps != Steps::None => {
                fixed(grammar::lines_then_action(tools))
            }
            MemoryKind::None => fixed(grammar::react(tools)),
        }
    }
}

impl Steps {
    /// The reasoning steps of `response` in this format, for the trace.
    fn parse(self, response: &str) -> Option<formats::ReasoningSteps> {
        use formats::{parse_ircot, parse_self_ask, ReasoningSteps};
        match self {
            Steps::SelfAsk => Some(ReasoningSteps::SelfAsk {
                sub_questions: parse_self_ask(response),
            }),
            Steps::Ircot => {
                let (reasoning, retrievals) = parse_ircot(response);
                Some(ReasoningSteps::Ircot {
                    reasoning,
                    retrievals,
                })
            }
            Steps::None => None,
        }
    }
}

/// How the loop constrains the model's output, turn by turn.
pub(super) enum TurnConstraint {
    None,
    /// The same grammar every turn.
    Fixed(OutputConstraint),
    /// The inner constraint's grammar, for the embedded model only
    /// ([`OutputConstraint::EmbeddedGrammar`]).
    EmbeddedOnly(Box<TurnConstraint>),
    /// The working-memory grammar rebuilt each turn from the episode so far.
    Memory {
        schema: MemorySchema,
        tools: ToolCatalogue,
        /// Fact lines may carry confidence and triple fields (`contradictions=true`).
        fact_fields: bool,
    },
}

/// Fact lines a turn may add to those already confirmed.
const NEW_FACTS_PER_TURN: usize = 3;
/// Hypothesis and open-question lines a turn may hold.
const MEMORY_ENTRIES: usize = 3;

impl TurnConstraint {
    /// The constraint for a turn, given the merged memory and the titles seen so far:
    /// facts may cite only those titles, and their number grows a few per turn.
    fn for_turn(&self, state: &WorkingMemory, seen: &[String]) -> Option<OutputConstraint> {
        match self {
            TurnConstraint::None => None,
            TurnConstraint::Fixed(c) => Some(c.clone()),
            TurnConstraint::EmbeddedOnly(inner) => inner.for_turn(state, seen).map(|c| match c {
                OutputConstraint::Grammar(g) => OutputConstraint::EmbeddedGrammar(g),
                other => other,
            }),
            TurnConstraint::Memory {
                schema,
                tools,
                fact_fields,
            } => Some(OutputConstraint::Grammar(
                grammar::MemoryGrammar::new(schema, tools)
                    .sources(seen)
                    .fact_fields(*fact_fields)
                    .max_facts(state.facts.len() + NEW_FACTS_PER_TURN)
                    .max_entries(MEMORY_ENTRIES)
                    .build(),
            )),
        }
    }
}

/// A loop method: a style on the shared loop.
pub struct AgentMethod {
    style: Style,
    settings: AgentSettings,
    prompts: Arc<PromptSet>,
    /// Where episodes act; the question's own pool when `None`.
    env: Option<Arc<dyn EnvFactory>>,
    /// Native-channel replies without a call, over every episode (`tool_channel=native`).
    native_silence: Arc<native::NativeSilence>,
}

impl AgentMethod {
    pub fn new(style: Style, settings: AgentSettings, prompts: Arc<PromptSet>) -> Self {
        AgentMethod {
            style,
            settings,
            prompts,
            env: None,
            native_silence: Arc::default(),
        }
    }

    /// Acts in environments from `factory` instead of the question's pool.
    pub fn with_env(mut self, factory: Arc<dyn EnvFactory>) -> Self {
        self.env = Some(factory);
        self
    }

    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    pub fn prompts(&self) -> &PromptSet {
        &self.prompts
    }

    /// The stopping strategy an episode of this method runs (`stopping`).
    fn stopping(&self) -> Box<dyn Strategy> {
        commitment::stopping(self.settings.stopping, &self.style.memory)
    }

    /// The style an episode runs: under App. D.5's late verification a memory method
    /// searches "without continuous state tracking", i.e. on ReAct's protocol, until the
    /// chain check (`late-verification-memory` keeps the memory instead).
    fn acting_style(&self, stopping: &dyn Strategy) -> Style {
        if stopping.keeps_memory() {
            self.style.clone()
        } else {
            Style::react()
        }
    }

    /// The system prompt for an environment offering `tools`.
    pub fn system_prompt(&self, tools: &str) -> Result<String, AgentError> {
        self.system_prompt_under(tools, self.stopping().as_ref())
    }

    /// The system prompt under a stopping strategy: the acting style's protocol, the
    /// strategy's paragraph, the tools and the answer format.
    fn system_prompt_under(
        &self,
        tools: &str,
        stopping: &dyn Strategy,
    ) -> Result<String, AgentError> {
        let style = self.acting_style(stopping);
        let memory = &style.memory;
        // The action-line form the prompts show, written by the protocol that parses it
        // (one declaration: a prompt cannot teach a form the parser refuses).
        let action_form = protocol::action_line("<tool>", "<argument>");
        let finish_form = protocol::action_line(protocol::ToolKind::Finish.name(), "<answer>");
        let protocol = render(
            &self.prompts,
            style.template,
            context! {
                action_form,
                finish_form,
                facts => memory.has(Section::Facts),
                hypotheses => memory.has(Section::Hypotheses),
                questions => memory.has(Section::Questions),
                enforce => Enforcement::delimiters(&self.settings),
                contradictions => self.settings.contradictions,
            },
        )?;
        let stopping = match stopping.prompt() {
            Some(t) => render(&self.prompts, t, context! {})?,
            None => String::new(),
        };
        render(
            &self.prompts,
            "system.txt",
            context! {
                protocol,
                action_form,
                tools,
                structured => memory.typed().is_some(),
                notes => *memory == MemoryKind::Notes,
                // App. D.5's free search keeps the method's source-faithful rule.
                faithful => self.style.memory != MemoryKind::None,
                stopping,
                actions_per_turn => self.settings.actions_per_turn,
                native => self.settings.tool_channel == ToolChannel::Native,
            },
        )
    }

    /// Runs one episode, optionally carrying a reflection from an earlier attempt.
    pub async fn run_episode(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflection: Option<&str>,
    ) -> Result<Episode, AgentError> {
        self.run_under(question, ctx, reflection, self.stopping())
            .await
    }

    /// Runs one episode under a stopping strategy: builds the environment, the prompts
    /// and the episode's parts, and hands them to the loop.
    async fn run_under(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflection: Option<&str>,
        stopping: Box<dyn Strategy>,
    ) -> Result<Episode, AgentError> {
        let mut env: Box<dyn Environment> = match &self.env {
            Some(factory) => factory.make(question, &self.settings),
            None => Box::new(
                PoolEnv::new(question.paragraphs.clone(), self.settings.top_k)
                    .with_repeats(self.settings.lookup_repeats)
                    .with_hints(self.settings.lookup_hints),
            ),
        };
        let system = self.system_prompt_under(&env.tools().prompt(), stopping.as_ref())?;
        let style = self.acting_style(stopping.as_ref());
        let first = render(
            &self.prompts,
            "question.txt",
            context! { question => &question.text, reflection => reflection.unwrap_or("") },
        )?;
        let constraint = match self.settings.grammar {
            GrammarUse::Embedded => {
                TurnConstraint::EmbeddedOnly(Box::new(style.grammar(env.tools(), &self.settings)))
            }
            GrammarUse::Open => TurnConstraint::Fixed(OutputConstraint::Grammar(
                grammar::open_turn(env.tools(), self.settings.actions_per_turn),
            )),
            GrammarUse::Off => TurnConstraint::None,
        };
        let nudge = commitment::nudge(&self.settings, &style.memory, question.hops);
        run::AgentLoop {
            ctx,
            settings: &self.settings,
            prompts: &self.prompts,
            steps: style.steps,
            constraint,
            commitment: CommitmentRules::new(nudge, stopping),
            enforcement: Enforcement::new(&self.settings, &style.memory),
            memory: style.memory,
            native_silence: &self.native_silence,
        }
        .run(system, first, env.as_mut())
        .await
    }
}

#[async_trait]
impl Method for AgentMethod {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        self.run_episode(question, ctx, None).await
    }
}

/// Observation text kept per tool result when an episode is shown back for reflection.
const REFLECTION_OBSERVATION_CHARS: usize = 600;

/// Reflexion in the SLEUTH setting (SLEUTH paper §4, Reflexion with 2 episodes): a new
/// episode carries the latest reflection, written on every episode so far.
#[async_trait]
impl Attempt for AgentMethod {
    async fn attempt(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflections: &[String],
    ) -> Result<Episode, AgentError> {
        self.run_episode(question, ctx, reflections.last().map(String::as_str))
            .await
    }

    fn reflection(
        &self,
        question: &Question,
        _last: &Episode,
        so_far: &Episode,
    ) -> Result<ChatRequest, AgentError> {
        let prompt = self
            .prompts
            .render(
                "reflection.txt",
                context! {
                    question => &question.text,
                    answer => so_far.answer.as_deref().unwrap_or("(no answer: the turn budget ran out)"),
                    trajectory => attempt_text(so_far, REFLECTION_OBSERVATION_CHARS),
                },
            )
            .map_err(AgentError::from)?;
        Ok(ChatRequest::new(vec![Message::user(prompt)])
            .temperature(self.settings.temperature)
            .max_tokens(self.settings.max_tokens))
    }

    fn max_attempts(&self) -> u32 {
        self.settings.episodes
    }
}

#[cfg(test)]
mod tests;
