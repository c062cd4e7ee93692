//! Methods as data: one row per command-line name.
//!
//! A row says where the method acts, what it is in one line, which `--set` keys it
//! reads, how many model calls an episode can spend, and how to build it. Everything
//! else derives from the rows: the CLI's key check, `sleuth methods`, the experiment
//! planner's estimates, and the README's method table (a test keeps it in step).
//! Adding a method is a row here plus its own file.

use super::agent::{AgentMethod, SleuthEir, Steps, Style};
use super::corpus::CorpusSetting;
use super::eir::{Direct, EarlierRuns, Eir, EirAttempt, FullPool, Recover, Shared, Ssr};
pub use super::method_error::MethodError;
use super::retry::{Judge, Retry};
use super::settings::{AgentSettings, Family, SettingError, Settings};
use super::{AgentError, Episode, Method, PromptSet, RunContext};
use crate::data::Question;
use crate::memory::Section;
use crate::names::Named;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a method acts by default (named `pool`, `titles`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::VariantNames,
)]
#[strum(serialize_all = "lowercase")]
pub enum Setting {
    /// The question's own paragraph pool, searched and looked up (SLEUTH paper §4).
    Pool,
    /// The pool's titles only; paragraphs are read into evidence (EIR paper §3).
    Titles,
}

impl Setting {
    /// Whose values the shared keys (`temperature`, `max_tokens`) take.
    pub fn family(self) -> Family {
        match self {
            Setting::Pool => Family::Loop,
            Setting::Titles => Family::Eir,
        }
    }
}

/// One method.
pub struct MethodSpec {
    pub name: &'static str,
    pub setting: Setting,
    /// Whether `--env corpus` (a BM25 index instead of the pool) applies.
    pub corpus: bool,
    pub summary: &'static str,
    /// The `--set` keys this method reads, in groups (see [`MethodSpec::reads`]).
    pub keys: &'static [&'static [&'static str]],
    /// Model calls one episode spends at most under these settings: exactly what a run
    /// spends when every budget is used up (finished episodes stop sooner).
    pub estimate: fn(&Settings) -> f64,
    build: fn(&MethodConfig, &Settings) -> Box<dyn Method>,
}

impl MethodSpec {
    /// Every `--set` key this method reads, in catalogue groups' order.
    pub fn reads(&self) -> Vec<&'static str> {
        self.keys.iter().flat_map(|g| g.iter().copied()).collect()
    }

    /// Whether this method reads `key`.
    pub fn reads_key(&self, key: &str) -> bool {
        self.keys.iter().any(|g| g.contains(&key))
    }
}

/// The keys every method reads.
const SHARED: &[&str] = &["temperature", "max_tokens"];
/// The shared loop's budget and channels.
const LOOP: &[&str] = &[
    "turns",
    "top_k",
    "lookup_repeats",
    "lookup_hints",
    "actions_per_turn",
    "tool_channel",
    "grammar",
];
/// The ReAct + nudge control's keys (methods without a working memory).
const NUDGE_CONTROL: &[&str] = &["nudge", "nudge_count", "nudge_all"];
/// SLEUTH's commitment, enforcement and stopping rules, and compaction: the
/// working-memory methods' keys.
const COMMITMENT: &[&str] = &[
    "nudge",
    "nudge_count",
    "tau",
    "nudge_gate",
    "adaptive_confident",
    "adaptive_questions",
    "adaptive_stagnation",
    "compact",
    "compact_slack",
    "stopping",
    "enforce",
    "restore_facts",
    "max_reminders",
    "keep_rejected",
];
/// The EIR setting's trajectory budget.
const TRAJECTORY: &[&str] = &["reads", "action_turns"];

/// Keys of the loop methods without a working memory.
const PLAIN: &[&[&str]] = &[LOOP, NUDGE_CONTROL, &["last_turn_answer_only"], SHARED];
const PLAIN_REFLEXION: &[&[&str]] = &[
    LOOP,
    NUDGE_CONTROL,
    &["last_turn_answer_only", "episodes"],
    SHARED,
];
/// Keys of Notes: SLEUTH's commitment nudge always applies (SLEUTH paper §5.1: the
/// middle block shares SLEUTH's commitment rule), so `nudge_all` has nothing to add.
const NOTES: &[&[&str]] = &[
    LOOP,
    &["nudge", "nudge_count", "last_turn_answer_only"],
    SHARED,
];
/// Keys that need the Open Questions section: a contradiction is raised as an open
/// question and settled only by marking it resolved.
const OPEN_QUESTIONS: &[&str] = &["contradictions"];
/// How the confirmed facts merge (every typed memory keeps them).
const FACTS: &[&str] = &["fact_id_reuse", "section_prose"];
/// Keys that need the Active Hypotheses section: what a hypothesis line must carry to
/// count as adherent, and what a response without the section does to them.
const HYPOTHESES: &[&str] = &["hypothesis_fields", "missing_hypotheses"];
/// Keys of the working-memory methods: the nudge gate, enforcement and stopping apply.
const MEMORY: &[&[&str]] = &[LOOP, COMMITMENT, FACTS, &["last_turn_answer_only"], SHARED];
/// The working-memory methods that keep Active Hypotheses but no Open Questions.
const MEMORY_H: &[&[&str]] = &[
    LOOP,
    COMMITMENT,
    FACTS,
    HYPOTHESES,
    &["last_turn_answer_only"],
    SHARED,
];
/// The working-memory methods that keep Open Questions but no Active Hypotheses.
const MEMORY_Q: &[&[&str]] = &[
    LOOP,
    COMMITMENT,
    FACTS,
    OPEN_QUESTIONS,
    &["last_turn_answer_only"],
    SHARED,
];
/// The full memory (SLEUTH).
const MEMORY_HQ: &[&[&str]] = &[
    LOOP,
    COMMITMENT,
    FACTS,
    HYPOTHESES,
    OPEN_QUESTIONS,
    &["last_turn_answer_only"],
    SHARED,
];
/// `sleuth-eir`: SLEUTH's keys and the final call's JSON schema (its loop always ends in
/// the final call, so the last turn need not be answer-only).
const SLEUTH_EIR: &[&[&str]] = &[
    LOOP,
    COMMITMENT,
    FACTS,
    HYPOTHESES,
    OPEN_QUESTIONS,
    &["final_citations", "json_schema"],
    SHARED,
];
const DIRECT: &[&[&str]] = &[TRAJECTORY, &["last_turn", "json_schema"], SHARED];
const SSR: &[&[&str]] = &[
    TRAJECTORY,
    &["last_turn", "verifier_temperature", "json_schema"],
    SHARED,
];
const EIR: &[&[&str]] = &[
    TRAJECTORY,
    &[
        "list_feedback",
        "list_errors",
        "hidden_lists",
        "dependency_repair",
        "refresh",
        "extra_reads",
        "final_citations",
        "json_schema",
    ],
    SHARED,
];
const EIR_REFLEXION: &[&[&str]] = &[TRAJECTORY, &["last_turn", "trials", "json_schema"], SHARED];
const FULL_POOL: &[&[&str]] = &[&["final_citations", "json_schema"], SHARED];
const EIR_RECOVER: &[&[&str]] = &[
    &[
        "recover",
        "selected_rerun",
        "from",
        "final_citations",
        "json_schema",
    ],
    SHARED,
];

/// A loop episode: T action calls, plus up to `max_reminders` re-prompts when
/// enforcement is on (SLEUTH paper §3.4: reminders do not use turns).
fn loop_calls(s: &Settings) -> f64 {
    let reminders = if s.agent.enforce {
        s.agent.max_reminders
    } else {
        0
    };
    f64::from(s.agent.turns + reminders)
}

fn plain_calls(s: &Settings) -> f64 {
    f64::from(s.agent.turns)
}

/// Reflexion (SLEUTH setting): E episodes of T turns and a reflection between two.
fn reflexion_calls(s: &Settings) -> f64 {
    let e = f64::from(s.agent.episodes);
    e * f64::from(s.agent.turns) + (e - 1.0)
}

/// Direct: H turns, the submission included (EIR paper App. B.3); the corpus setting's
/// fixed action turns when set (App. H.1).
fn direct_calls(s: &Settings) -> f64 {
    f64::from(super::eir::Budget::direct(&s.eir).turns)
}

/// Agentic SSR per turn: the proposal, one decomposition, three verifier samples for
/// each of three parts, and at most one refinement (EIR paper App. D.1).
fn ssr_calls(s: &Settings) -> f64 {
    let per_turn = 1 + 1 + super::eir::ssr::SAMPLES * super::eir::ssr::PARTS.len() as u32 + 1;
    f64::from(super::eir::Budget::direct(&s.eir).turns * per_turn)
}

/// EIR: H read turns and a submit-only turn, the final call, at most two repair calls
/// per accepted turn (dependency-repair control), and a read-more call plus a second final
/// call (additional-retrieval control).
fn eir_calls(s: &Settings) -> f64 {
    let turns = super::eir::Budget::eir(&s.eir).turns;
    // Two repair calls (conclusions, then requirements) per accepted turn (App. E.3).
    let repairs = if s.eir.dependency_repair.on() {
        2 * turns
    } else {
        0
    };
    let more = if s.eir.extra_reads > 0 { 2 } else { 0 };
    f64::from(turns + 1 + repairs + more)
}

/// Reflexion (EIR setting): up to `trials` Direct trials and a reflection between two.
fn eir_reflexion_calls(s: &Settings) -> f64 {
    let n = f64::from(s.eir.trials);
    n * direct_calls(s) + (n - 1.0)
}

fn agent(c: &MethodConfig, s: &Settings, style: Style) -> AgentMethod {
    let mut agent = AgentMethod::new(style, s.agent.clone(), c.prompts.clone());
    if let Some(corpus) = &c.corpus {
        agent = agent.with_env(corpus.clone());
    }
    agent
}

/// SLEUTH's three sections.
const FULL_MEMORY: [Section; 3] = [Section::Facts, Section::Hypotheses, Section::Questions];

fn memory(c: &MethodConfig, s: &Settings, sections: &[Section]) -> Box<dyn Method> {
    Box::new(agent(c, s, Style::memory(sections)))
}

fn shared(c: &MethodConfig, s: &Settings) -> Shared {
    let shared = Shared::new(s.eir.clone(), c.prompts.clone());
    match &c.corpus {
        Some(corpus) => shared.with_env(corpus.clone()),
        None => shared,
    }
}

/// Every method, in the order the papers introduce them.
pub const METHODS: &[MethodSpec] = &[
    MethodSpec {
        name: "react",
        setting: Setting::Pool,
        corpus: true,
        summary: "ReAct: interleaved thoughts and actions, no persistent state",
        keys: PLAIN,
        estimate: plain_calls,
        build: |c, s| Box::new(agent(c, s, Style::react())),
    },
    MethodSpec {
        name: "react-cot",
        setting: Setting::Pool,
        corpus: true,
        summary: "ReAct with an explicit chain of thought before every action",
        keys: PLAIN,
        estimate: plain_calls,
        build: |c, s| Box::new(agent(c, s, Style::protocol("react_cot.txt", Steps::None))),
    },
    MethodSpec {
        name: "self-ask",
        setting: Setting::Pool,
        corpus: true,
        summary: "Self-Ask: sub-questions answered one after another",
        keys: PLAIN,
        estimate: plain_calls,
        build: |c, s| Box::new(agent(c, s, Style::protocol("self_ask.txt", Steps::SelfAsk))),
    },
    MethodSpec {
        name: "ircot",
        setting: Setting::Pool,
        corpus: true,
        summary: "IRCoT: strictly alternating reasoning and retrieval steps",
        keys: PLAIN,
        estimate: plain_calls,
        build: |c, s| Box::new(agent(c, s, Style::protocol("ircot.txt", Steps::Ircot))),
    },
    MethodSpec {
        name: "reflexion",
        setting: Setting::Pool,
        corpus: true,
        summary: "Reflexion: a retry after a wrong answer, guided by a self-reflection",
        keys: PLAIN_REFLEXION,
        estimate: reflexion_calls,
        build: |c, s| {
            let attempt = agent(c, s, Style::protocol("reflexion.txt", Steps::None));
            Box::new(Retry::new(attempt, c.judge.clone()))
        },
    },
    MethodSpec {
        name: "notes",
        setting: Setting::Pool,
        corpus: true,
        summary: "ReAct with an unstructured scratchpad, SLEUTH's nudge and verbatim rule",
        keys: NOTES,
        estimate: plain_calls,
        build: |c, s| Box::new(agent(c, s, Style::notes())),
    },
    MethodSpec {
        name: "facts-only",
        setting: Setting::Pool,
        corpus: true,
        summary: "SLEUTH ablation: Confirmed Facts only",
        keys: MEMORY,
        estimate: loop_calls,
        build: |c, s| memory(c, s, &[Section::Facts]),
    },
    MethodSpec {
        name: "facts-hyp",
        setting: Setting::Pool,
        corpus: true,
        summary: "SLEUTH ablation: Confirmed Facts + Active Hypotheses",
        keys: MEMORY_H,
        estimate: loop_calls,
        build: |c, s| memory(c, s, &[Section::Facts, Section::Hypotheses]),
    },
    MethodSpec {
        name: "facts-q",
        setting: Setting::Pool,
        corpus: true,
        summary: "SLEUTH ablation: Confirmed Facts + Open Questions",
        keys: MEMORY_Q,
        estimate: loop_calls,
        build: |c, s| memory(c, s, &[Section::Facts, Section::Questions]),
    },
    MethodSpec {
        name: "sleuth",
        setting: Setting::Pool,
        corpus: true,
        summary: "SLEUTH: facts, ranked hypotheses and open questions, with the commitment nudge",
        keys: MEMORY_HQ,
        estimate: loop_calls,
        build: |c, s| Box::new(agent(c, s, Style::memory(&FULL_MEMORY))),
    },
    MethodSpec {
        name: "sleuth-eir",
        setting: Setting::Pool,
        corpus: false,
        summary: "SLEUTH's loop; each fact's source sentence kept as evidence; EIR's evidence-only final call answers, also on timeout",
        keys: SLEUTH_EIR,
        estimate: |s| loop_calls(s) + 1.0,
        build: |c, s| {
            let loop_agent = agent(c, s, Style::memory(&FULL_MEMORY));
            Box::new(SleuthEir::new(loop_agent, s.eir.clone()))
        },
    },
    MethodSpec {
        name: "eir",
        setting: Setting::Titles,
        corpus: true,
        summary: "EIR: lists-guided reading from titles, then a final call on the evidence alone",
        keys: EIR,
        estimate: eir_calls,
        build: |c, s| Box::new(Eir::new(shared(c, s))),
    },
    MethodSpec {
        name: "direct",
        setting: Setting::Titles,
        corpus: true,
        summary: "EIR-setting baseline: interleaved reasoning and reading, first valid submission",
        keys: DIRECT,
        estimate: direct_calls,
        build: |c, s| Box::new(Direct::new(shared(c, s))),
    },
    MethodSpec {
        name: "full-pool",
        setting: Setting::Titles,
        corpus: false,
        summary: "One call answering from every paragraph of the pool (EIR's final prompt)",
        keys: FULL_POOL,
        estimate: |_| 1.0,
        build: |c, s| Box::new(FullPool::new(shared(c, s))),
    },
    MethodSpec {
        name: "eir-recover",
        setting: Setting::Titles,
        corpus: false,
        summary: "EIR's final call alone on an earlier run's evidence: missed support added, unchanged, or model-selected reads",
        keys: EIR_RECOVER,
        // The selection call and a second final call (`recover=selected`).
        estimate: |s| if s.eir.recover == super::settings::RecoverMode::Selected { 2.0 } else { 1.0 },
        build: |c, s| Box::new(Recover::new(shared(c, s), c.earlier.clone())),
    },
    MethodSpec {
        name: "ssr",
        setting: Setting::Titles,
        corpus: true,
        summary: "Agentic SSR: each action decomposed, verified 3x per part, refined at most once",
        keys: SSR,
        estimate: ssr_calls,
        build: |c, s| Box::new(Ssr::new(shared(c, s))),
    },
    MethodSpec {
        name: "eir-reflexion",
        setting: Setting::Titles,
        corpus: true,
        summary: "Reflexion in the EIR setting: up to 5 Direct trials; first-trial and oracle-stopped answers",
        keys: EIR_REFLEXION,
        estimate: eir_reflexion_calls,
        build: |c, s| Box::new(Retry::new(EirAttempt::new(shared(c, s)), c.judge.clone())),
    },
];

/// The row of `name`, or an error listing every name.
pub fn spec(name: &str) -> Result<&'static MethodSpec, MethodError> {
    METHODS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| MethodError::Unknown {
            name: name.to_string(),
            known: METHODS.iter().map(|m| m.name).collect(),
        })
}

/// The turn `method`'s nudge fires at under settings written as text (a record's or a
/// run's): [`AgentSettings::nudge_turn_of`] for the methods the nudge applies to, None
/// for a method without a working memory unless `nudge_all=true` (SLEUTH App. D.4's
/// control), for a method that has no nudge (the EIR setting's) and for an unknown one.
/// One reading for the analysis's cohorts and the report's tables and figures.
pub fn nudge_turn_of(method: &str, get: impl Fn(&str) -> Option<String>) -> Option<u32> {
    let spec = spec(method).ok()?;
    if !spec.reads_key("nudge") {
        return None;
    }
    if spec.reads_key("nudge_all") && get("nudge_all").is_none_or(|v| v.trim() != "true") {
        return None;
    }
    AgentSettings::nudge_turn_of(get)
}

/// Everything needed to build a method besides its name.
#[derive(Clone)]
pub struct MethodConfig {
    /// The `--set` pairs as given (applied over the defaults).
    pub settings: BTreeMap<String, String>,
    pub prompts: Arc<PromptSet>,
    /// The open-corpus setting; `None` for each question's own pool.
    pub corpus: Option<Arc<CorpusSetting>>,
    /// Decides whether an answer is right, for the retry wrappers' controller.
    pub judge: Arc<dyn Judge>,
    /// Reads earlier runs' records (`eir-recover`); the evaluation layer's reader, set
    /// where the run is assembled.
    pub earlier: Option<Arc<dyn EarlierRuns>>,
}

impl MethodConfig {
    /// Built-in prompts, each question's own pool, these settings, and the judge of the
    /// retry wrappers: the caller assembling the run passes it in (the evaluation
    /// layer's official exact match, usually), since a method never imports `eval`.
    pub fn new(settings: BTreeMap<String, String>, judge: Arc<dyn Judge>) -> Self {
        MethodConfig {
            settings,
            prompts: Arc::new(PromptSet::default()),
            corpus: None,
            judge,
            earlier: None,
        }
    }

    /// The typed settings (defaults of the corpus setting when it applies).
    pub fn resolve(&self) -> Result<Settings, SettingError> {
        Settings::parse(&self.settings, self.corpus.is_some())
    }
}

/// A built method with its row and its resolved settings (defaults included).
pub struct RegisteredMethod {
    spec: &'static MethodSpec,
    settings: BTreeMap<String, String>,
    /// Model calls one episode spends at most under these settings (the planner's).
    calls_per_episode: f64,
    method: Box<dyn Method>,
}

impl RegisteredMethod {
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    pub fn spec(&self) -> &'static MethodSpec {
        self.spec
    }

    /// Every key this method reads, with its resolved value.
    pub fn settings(&self) -> &BTreeMap<String, String> {
        &self.settings
    }

    /// Model calls one episode spends at most: the row's estimate under the settings
    /// it was built with (the open-corpus defaults included where they apply).
    pub fn calls_per_episode(&self) -> f64 {
        self.calls_per_episode
    }

    pub async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        self.method.run(question, ctx).await
    }
}

/// Builds a method by name.
pub fn build(name: &str, config: &MethodConfig) -> Result<RegisteredMethod, MethodError> {
    let spec = spec(name)?;
    if config.corpus.is_some() && !spec.corpus {
        return Err(MethodError::NoCorpus {
            name: spec.name,
            summary: spec.summary,
        });
    }
    let settings = config.resolve()?;
    Ok(RegisteredMethod {
        spec,
        settings: settings.resolved(&spec.reads(), spec.setting.family()),
        calls_per_episode: (spec.estimate)(&settings),
        method: (spec.build)(config, &settings),
    })
}

/// Checks `--set` keys against the chosen methods: an unknown key names the known ones,
/// a key none of them reads names the methods that do.
pub fn check_keys(
    methods: &[&str],
    settings: &BTreeMap<String, String>,
) -> Result<(), MethodError> {
    let specs = methods
        .iter()
        .map(|m| spec(m))
        .collect::<Result<Vec<_>, _>>()?;
    for key in settings.keys() {
        super::settings::known(key)?;
        if specs.iter().any(|s| s.reads_key(key)) {
            continue;
        }
        let readers: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.reads_key(key))
            .map(|m| m.name)
            .collect();
        return Err(MethodError::NotRead {
            key: key.clone(),
            chosen: methods.iter().map(|m| m.to_string()).collect(),
            readers,
        });
    }
    Ok(())
}

/// Every key any method reads, for `--help` and docs.
pub fn all_keys() -> impl Iterator<Item = &'static str> {
    super::settings::SETTINGS.iter().map(|d| d.key)
}

/// The README's method table, generated from the rows.
pub fn markdown_table() -> String {
    // The README's words are the CLI's.
    let mut out = format!(
        "| method | setting | what it is | reads (`{}`) |\n| --- | --- | --- | --- |\n",
        crate::knob::Knob::Set.flag()
    );
    for m in METHODS {
        let keys: Vec<&str> = m
            .reads()
            .into_iter()
            .filter(|k| !SHARED.contains(k))
            .collect();
        out.push_str(&format!(
            "| `{}` | {}{} | {} | {} |\n",
            m.name,
            m.setting.name(),
            if m.corpus { ", corpus" } else { "" },
            m.summary,
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_row_reads_only_catalogued_keys_and_builds() {
        for m in METHODS {
            for k in m.reads() {
                assert!(super::super::settings::def(k).is_some(), "{}: {k}", m.name);
            }
            let built = build(
                m.name,
                &MethodConfig::new(
                    BTreeMap::new(),
                    std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
                ),
            )
            .unwrap();
            assert_eq!(built.name(), m.name);
            assert_eq!(built.settings().len(), m.reads().len(), "{}", m.name);
        }
        // Every catalogued key is read by some method.
        for k in all_keys() {
            assert!(METHODS.iter().any(|m| m.reads_key(k)), "{k}");
        }
    }

    #[test]
    fn a_key_no_chosen_method_reads_names_the_methods_that_do() {
        let e = check_keys(&["eir"], &pairs(&[("turns", "10")])).unwrap_err();
        let MethodError::NotRead { key, readers, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(key, "turns");
        assert!(
            readers.contains(&"react") && readers.contains(&"sleuth"),
            "{e}"
        );
        assert!(
            e.to_string().contains("`turns` is read by none of eir"),
            "{e}"
        );
        assert!(check_keys(&["eir", "react"], &pairs(&[("turns", "10")])).is_ok());
        let e = check_keys(&["react"], &pairs(&[("bogus", "1")])).unwrap_err();
        assert!(
            matches!(&e, MethodError::Setting(SettingError::Unknown { key, .. }) if key == "bogus"),
            "{e:?}"
        );
        assert!(e.to_string().contains("unknown setting `bogus`"), "{e}");
        let e = check_keys(&["rekt"], &pairs(&[])).unwrap_err();
        assert!(e.to_string().contains("unknown method `rekt`"), "{e}");
        let e = check_keys(&["react"], &pairs(&[("tau", "3")])).unwrap_err();
        assert!(e.to_string().contains("facts-only"), "{e}");
    }

    #[test]
    fn estimates_are_the_budgets() {
        let s = |p: &[(&str, &str)]| Settings::parse(&pairs(p), false).unwrap();
        let est = |name: &str, p: &[(&str, &str)]| (spec(name).unwrap().estimate)(&s(p));
        assert_eq!(est("react", &[]), 20.0);
        assert_eq!(est("sleuth", &[("enforce", "true")]), 25.0);
        assert_eq!(est("reflexion", &[]), 41.0);
        assert_eq!(est("direct", &[]), 6.0);
        assert_eq!(est("eir", &[]), 8.0);
        assert_eq!(est("eir", &[("reads", "10")]), 12.0);
        assert_eq!(est("eir", &[("extra_reads", "2")]), 10.0);
        assert_eq!(est("eir", &[("dependency_repair", "true")]), 22.0);
        assert_eq!(est("eir", &[("dependency_repair", "unapplied")]), 22.0);
        assert_eq!(est("ssr", &[]), 72.0);
        assert_eq!(est("full-pool", &[]), 1.0);
        assert_eq!(est("eir-reflexion", &[]), 34.0);
        // The corpus setting: 12 action turns for every method (EIR App. H.1).
        let corpus = |name: &str| {
            (spec(name).unwrap().estimate)(&Settings::parse(&pairs(&[]), true).unwrap())
        };
        assert_eq!(corpus("direct"), 12.0);
        assert_eq!(corpus("eir"), 13.0);
        assert_eq!(corpus("ssr"), 144.0);
        assert_eq!(corpus("eir-reflexion"), 64.0);
    }

    #[test]
    fn full_pool_refuses_the_corpus_setting_by_its_row() {
        assert!(!spec("full-pool").unwrap().corpus);
        // sleuth-eir finds a fact's source sentence in the question's pool.
        assert!(!spec("sleuth-eir").unwrap().corpus);
        assert!(METHODS
            .iter()
            .filter(|m| !["full-pool", "eir-recover", "sleuth-eir"].contains(&m.name))
            .all(|m| m.corpus));
    }
}
