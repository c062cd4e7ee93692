//! Settings of the EIR-setting methods: the read budget H the EIR paper sweeps,
//! Reflexion's trials, SSR's verifier temperature, and EIR's three controls. Parsed in
//! [`super`] by the key catalogue; `max_tokens` defaults to 2048 here, the output limit
//! of the EIR paper's runs.
//!
//! The corpus setting has its own defaults ([`EirSettings::corpus`], EIR paper §4.3 and
//! App. H): 12 action turns with six read attempts, and every call at temperature 0.0,
//! SSR's verifier included.

use serde::{Deserialize, Serialize};

/// The dependency-repair control's three arms (EIR App. E.3, Tables 13 and 14).
/// Its names are `false`, `true` (applied) and `unapplied`, with the usual boolean
/// spellings accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(ascii_case_insensitive)]
pub enum DependencyRepair {
    /// Default EIR: no links, no repair calls.
    #[strum(
        to_string = "false",
        serialize = "off",
        serialize = "no",
        serialize = "0"
    )]
    Off,
    /// Repair calls run and their valid changes are applied.
    #[strum(
        to_string = "true",
        serialize = "applied",
        serialize = "on",
        serialize = "yes",
        serialize = "1"
    )]
    Applied,
    /// Repair calls run, their changes are recorded but not applied.
    #[strum(to_string = "unapplied")]
    Unapplied,
}

impl DependencyRepair {
    /// Whether conclusions carry links and repair calls run.
    pub fn on(self) -> bool {
        self != DependencyRepair::Off
    }
}

/// What EIR does with a turn's list changes that fail §3.2's check (an unknown entry
/// revised, a taken id added, a sentence cited that was not read).
///
/// EIR paper §3.2: EIR "discards any change that fails this check", and B.1: both lists
/// stay unchanged if any part is invalid; neither says the action is refused, so the
/// default discards the changes and still runs the action. App. H.4 reports forced
/// endings that "follow invalid citations", which fits a turn refused whole; `refuse`
/// is that reading. It is the corpus evaluation's (H.4 counts those endings there, and
/// EIR's submission cites nothing, so only its list changes can carry the citation):
/// `experiments/eir-corpus.toml` sets it; the titles-setting recipes keep `discard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum ListErrors {
    /// Both lists stay as they were, the cause is recorded on the turn
    /// (`discarded_lists`), and the action runs.
    Discard,
    /// The whole response is refused, action included; it uses its turn.
    Refuse,
}

/// What the final call's answer becomes when its response cites a sentence that is not
/// in the evidence (or writes its citations in the wrong form).
///
/// EIR App. H.4 names invalid citations a cause of rejection (Table 22, whose counts
/// leave the final call out), and the final call has no second chance to answer. The
/// paper keeps every question scored and reports EIR's unreadable outputs at 0.0–1.4%
/// (App. C.2), which fits the answer standing: by default the citations are refused and
/// the refusal is recorded (`outputs.final_call.rejection`), the answer is scored and
/// its Support F1 rests on the valid citations. `reject_answer` rejects the whole final
/// response, as a Direct submission is rejected: no answer (an unreadable output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum FinalCitations {
    /// The answer stands; the invalid citations are refused and recorded.
    KeepAnswer,
    /// The final response is rejected: the method gives no answer.
    RejectAnswer,
}

/// What the last of Direct's H turns accepts (Direct, Agentic SSR and Reflexion's
/// trials; see `Budget::direct` for the reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum LastTurn {
    /// Only a submission (at most H − 1 reads).
    SubmitOnly,
    /// Any action (H reads possible, leaving no turn to submit).
    Any,
}

/// When `recover=selected` runs the final call again (EIR App. F.3). F.3 reads: a
/// separate call selects up to two paragraphs, and "the final answer call then uses the
/// expanded evidence"; "173 of 174" matches follow a successful read, so one came
/// without one: the final call ran although nothing was added. Our default reruns it
/// always; `after_read` is F.4's rule (the earlier answer stands when nothing was read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum SelectedRerun {
    /// The final call runs on the evidence, expanded or not.
    Always,
    /// The final call runs only after a successful read.
    AfterRead,
}

/// When the dependency-repair control refreshes the requirements (EIR App. E.3: "when
/// a claim changes, extra calls revise affected conclusions and refresh requirements").
/// The plainer reading, our default: every revision of a conclusion refreshes them, and
/// the revising call runs only where some conclusion depends on the revised one (it has
/// nothing to revise otherwise). `dependents` refreshes only when a dependent exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum RequirementRefresh {
    /// After every turn that revises a conclusion.
    Revision,
    /// Only when a revised conclusion has dependents (both repair calls or neither).
    Dependents,
}

/// What `eir-recover` adds to an earlier run's evidence (EIR App. F.2, F.3, Table 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum RecoverMode {
    /// The annotated paragraphs it missed.
    Added,
    /// Nothing: the final call repeated on the same evidence.
    Unchanged,
    /// Up to two paragraphs the model picks from the unread titles.
    Selected,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EirSettings {
    /// Action turns per trajectory, the submission included. `None` derives them from
    /// H as the titles setting does (EIR: H + 1; Direct, SSR, Reflexion: H); the corpus
    /// setting fixes 12 for every method (EIR App. H.1), with `reads` read attempts.
    pub action_turns: Option<u32>,
    /// H: paragraph reads per retrieval trajectory (EIR paper §3: H = 6; EIR then has one
    /// submit-only turn; Direct, SSR, Reflexion: H turns including the submission).
    pub reads: u32,
    /// What Direct's last turn accepts ([`LastTurn`]).
    pub last_turn: LastTurn,
    /// Reflexion trials (EIR paper App. D.1: up to five).
    pub trials: u32,
    /// Temperature of Agentic SSR's verifier samples (EIR paper App. D.1: 0.7).
    pub verifier_temperature: f32,
    /// Control (EIR App. E.2): when false, EIR keeps updating its lists but leaves them
    /// out of later action prompts.
    pub list_feedback: bool,
    /// A list change failing §3.2's check: discarded with the action still run (default),
    /// or the whole turn refused ([`ListErrors`]).
    pub list_errors: ListErrors,
    /// The list-feedback control's correction (EIR App. E.2, Table 12 "after correcting
    /// the control"; our reading, the paper does not say what was corrected): with the
    /// lists hidden, a list change naming ids the model cannot see (a duplicate add, a
    /// revision of an unknown entry) is discarded and the turn's action still runs
    /// (§3.2: EIR "discards any change that fails this check"). `true` refuses the whole
    /// turn instead (the uncorrected control), whatever `list_errors` says.
    pub refuse_hidden_lists: bool,
    /// Control (EIR App. E.3): conclusions carry `depends_on` links, and a change to a
    /// conclusion triggers repair calls that revise its dependents and refresh the
    /// requirements; `Unapplied` makes the same calls and discards their changes (the
    /// paired comparison of Table 14).
    pub dependency_repair: DependencyRepair,
    /// When the repair control refreshes the requirements ([`RequirementRefresh`]).
    pub refresh: RequirementRefresh,
    /// Control (EIR App. F.4): after the final answer, the model may read up to this many
    /// more paragraphs; if it reads any, the final call runs again.
    pub extra_reads: u32,
    /// A final response citing sentences not in the evidence ([`FinalCitations`]).
    pub final_citations: FinalCitations,
    /// Send the action JSON schema as an output constraint (grammar-constrained local
    /// models, OpenAI structured outputs). Responses are validated either way.
    ///
    /// Off by default (EIR App. H.4, C.2): the paper asks for its JSON formats by
    /// prompting only, and the replies that fail to parse are part of its results
    /// (Table 4's readable rates, the C.2 re-analysis). `json_schema=true` opts in.
    pub json_schema: bool,
    pub temperature: f32,
    pub max_tokens: u32,
    /// `eir-recover`: what is added to the earlier run's evidence.
    pub recover: RecoverMode,
    /// `recover=selected`: when the final call runs again ([`SelectedRerun`]).
    pub selected_rerun: SelectedRerun,
    /// `eir-recover`: the earlier EIR run (a run directory or records file).
    pub recover_from: Option<std::path::PathBuf>,
}

impl Default for EirSettings {
    fn default() -> Self {
        EirSettings {
            action_turns: None,
            reads: 6,
            last_turn: LastTurn::SubmitOnly,
            trials: 5,
            verifier_temperature: 0.7,
            list_feedback: true,
            list_errors: ListErrors::Discard,
            refuse_hidden_lists: false,
            dependency_repair: DependencyRepair::Off,
            refresh: RequirementRefresh::Revision,
            extra_reads: 0,
            final_citations: FinalCitations::KeepAnswer,
            json_schema: false,
            temperature: 0.0,
            max_tokens: 2048,
            recover: RecoverMode::Added,
            selected_rerun: SelectedRerun::Always,
            recover_from: None,
        }
    }
}

impl EirSettings {
    /// The corpus setting's defaults (EIR paper §4.3, App. H.1–H.2): 12 action turns and
    /// six read attempts per trial, temperature 0.0 for every call including SSR's
    /// verifier (the titles setting keeps 0.7 there).
    pub fn corpus() -> Self {
        EirSettings {
            action_turns: Some(12),
            verifier_temperature: 0.0,
            temperature: 0.0,
            ..EirSettings::default()
        }
    }
}
