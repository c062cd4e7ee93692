//! Analyses of run records: everything `sleuth report` prints, computed from records
//! alone (no model is called).
//!
//! Records from any mix of run directories are grouped into arms (one dataset, method,
//! model and settings label each; see [`load`]) and paired across arms by question id.
//! [`Analysis::build`] computes every analysis at once into one serializable value, so
//! the Markdown tables, CSV/JSON files, figures and `--json` output all show the same
//! numbers.

mod collect;
mod compare;
mod conventions;
mod digest;
mod direction;
mod duplicates;
mod dynamics;
mod eir_analyses;
mod eir_averages;
mod eir_recovery;
mod eir_runs;
mod load;
mod outcome;
mod scores;
mod splits;
mod summary;
mod trials;

pub use collect::{
    fold, merge_fruits, ClosingCollector, Collector, FirstPerQuestion, Fruit, Problems,
    RecordScores, ScoreTally, Scored,
};
pub use compare::{
    arm_order, compare_to_baseline, compare_to_baseline_in, compare_to_baseline_sized, sweep_order,
    sweeps, Comparison, HolmFamily, Sweep, SweepPoint,
};
pub use conventions::{Conventions, HolmRule, MusiqueGroups, Overrides};
pub use digest::{ExtraReadsDigest, FinalDigest, RecordDigest, TurnDigest};
pub use direction::Direction;
pub use dynamics::{
    accuracy_at_turn, error_decomposition, memory_dynamics, AccuracyCurve, ErrorDecomposition,
    MemoryDynamics, MemoryPoint,
};
pub use eir_analyses::{
    evidence_errors, readable_comparisons, support_comparisons, wilson, with_first_trials,
    EvidenceErrors, ReadableComparison, SupportComparison, FIRST_TRIAL,
};
pub use eir_averages::{budget_calls, cell_averages, BudgetCalls, CellAverage};
pub use eir_recovery::{recovery, recovery_overlaps, Recovery, RecoveryOverlap};
pub use eir_runs::{
    after_support, final_vs_retrieval, more_reads, rejected_actions, AfterSupport, BeforeAfter,
    FinalVsRetrieval, MoreReads, RejectedActions,
};
pub use load::{load, load_with, Aliases, Arm, ArmKey, RecordSet, RunConfig, Source};
pub use outcome::{
    answer_class, answer_turn, classify, classify_under, classify_with, correct, gold_in_history,
    missing_gold, support_recall, AnswerClass, ErrorClasses, Outcome, ReasoningEvidence,
};
pub use scores::{closing_scores, closing_table, ArmScores};
pub use splits::{by_split, split_hops, split_name};
pub use summary::{breakdown, Slice, Split, Summary};

use crate::eval::stats::{BootstrapP, Resampling, DEFAULT_RESAMPLES, DEFAULT_SEED};
use serde::Serialize;

/// Knobs of the analyses.
#[derive(Debug, Clone)]
pub struct Options {
    /// The reference method for paired comparisons (none: no comparisons).
    pub baseline: Option<String>,
    /// Minimum episode length of the memory-dynamics cohort; default, per arm: its
    /// nudge turn ⌈α·T⌉ (or `turn:N`), the cohort of SLEUTH App. E (turn 14 of 20);
    /// for an arm without a nudge, 70% of the longest episode that keeps a memory,
    /// rounded up.
    pub cohort_turns: Option<u32>,
    pub resamples: usize,
    pub seed: u64,
    /// How the bootstrap's p-value is read from the resamples ([`BootstrapP`]).
    pub bootstrap_p: BootstrapP,
    /// Which comparisons share a Holm correction.
    pub holm_family: HolmFamily,
    /// Each Holm family counts at least this many comparisons, those not in the report
    /// taken as p = 1 (EIR Table 20: groups of five, four shown); 0: as many as it holds.
    pub holm_size: usize,
    /// What a reasoning error needs retrieved (SLEUTH App. J's "relevant evidence").
    pub reasoning_evidence: ReasoningEvidence,
    /// App. J's definitions of the classes, or Table 15's arithmetic (no Other).
    pub error_classes: ErrorClasses,
    /// Which way the paired comparisons subtract ([`Direction`]).
    pub direction: Direction,
    /// Whose rules chose the ones above ([`Conventions::apply`]).
    pub conventions: Conventions,
    /// MuSiQue by hop split or pooled.
    pub musique: MusiqueGroups,
    /// Whether EM and F1 count the gold answer's aliases (the records are loaded so:
    /// [`load_with`]).
    pub aliases: Aliases,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            conventions: Conventions::Ours,
            musique: MusiqueGroups::Splits,
            aliases: Aliases::On,
            baseline: None,
            cohort_turns: None,
            holm_family: HolmFamily::All,
            holm_size: 0,
            reasoning_evidence: ReasoningEvidence::Any,
            error_classes: ErrorClasses::Defined,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            bootstrap_p: BootstrapP::default(),
            direction: Direction::default(),
        }
    }
}

impl Options {
    /// The bootstrap settings every paired analysis of the report uses.
    pub fn resampling(&self) -> Resampling {
        Resampling {
            resamples: self.resamples,
            seed: self.seed,
            p: self.bootstrap_p,
        }
    }
}

/// Every analysis of one report.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub sources: Vec<Source>,
    pub summaries: Vec<Summary>,
    pub by_hops: Vec<Slice>,
    pub by_kind: Vec<Slice>,
    pub errors: Vec<ErrorDecomposition>,
    /// What a reasoning error needs retrieved, and which account of the classes
    /// `errors` follows (`--reasoning-evidence`, `--error-classes`).
    pub reasoning_evidence: ReasoningEvidence,
    pub error_classes: ErrorClasses,
    /// Accuracy at turn t, t = 1..=`max_turn`.
    pub max_turn: u32,
    pub accuracy_at_turn: Vec<AccuracyCurve>,
    pub memory: Vec<MemoryDynamics>,
    pub baseline: Option<String>,
    /// How every bootstrap p-value of the report was read (`--bootstrap-p`).
    pub bootstrap_p: BootstrapP,
    /// The Holm families of `comparisons`.
    pub holm_family: HolmFamily,
    /// The least size each family is counted as (0: the comparisons it holds).
    pub holm_size: usize,
    /// Which way every paired difference subtracts (`--direction`).
    pub direction: Direction,
    /// Whose rules the report follows, and how it grouped MuSiQue.
    pub conventions: Conventions,
    pub musique: MusiqueGroups,
    /// Whether EM and F1 counted the gold answers' aliases.
    pub aliases: Aliases,
    pub comparisons: Vec<Comparison>,
    pub sweeps: Vec<Sweep>,
    /// The EIR paper's further analyses (empty without EIR-setting records).
    pub eir: EirSection,
    pub warnings: Vec<String>,
}

/// The EIR paper's analyses beyond accuracy and cost ([`eir_analyses`], [`eir_runs`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct EirSection {
    /// Tables 5 and 8: paired Support F1 against the baseline.
    pub support: Vec<SupportComparison>,
    /// App. C.2: F1 on questions with readable answers from both.
    pub readable: Vec<ReadableComparison>,
    /// App. F.1, Table 15, Figure 3.
    pub evidence_errors: Vec<EvidenceErrors>,
    /// App. H.4: the final call against the trajectory's answer.
    pub final_vs_retrieval: Vec<FinalVsRetrieval>,
    /// App. F.4, Table 17.
    pub more_reads: Vec<MoreReads>,
    /// App. F.2, F.3, Table 16: each `eir-recover` arm's known failures answered again.
    pub recovery: Vec<Recovery>,
    /// App. F.2: questions two recovery procedures both, or only one, made exact.
    pub recovery_overlaps: Vec<RecoveryOverlap>,
    /// App. H.4, Table 21.
    pub after_support: Vec<AfterSupport>,
    /// App. H.4, Table 22.
    pub rejected: Vec<RejectedActions>,
    /// App. D.5, Table 9: each method averaged over its cells, ratios to EIR.
    pub averages: Vec<CellAverage>,
    /// App. E.1, Table 10: calls per question by read budget.
    pub budget_calls: Vec<BudgetCalls>,
}

impl EirSection {
    fn build(arms: &[Arm], options: &Options) -> EirSection {
        let (support, readable) = match &options.baseline {
            Some(b) => (
                support_comparisons(
                    arms,
                    b,
                    options.resampling(),
                    options.holm_family,
                    options.holm_size,
                ),
                readable_comparisons(arms, b, options.resampling()),
            ),
            None => (Vec::new(), Vec::new()),
        };
        EirSection {
            support,
            readable,
            evidence_errors: arms.iter().filter_map(evidence_errors).collect(),
            final_vs_retrieval: arms.iter().filter_map(final_vs_retrieval).collect(),
            more_reads: arms
                .iter()
                .filter_map(|a| more_reads(a, options.resampling()))
                .collect(),
            recovery: arms
                .iter()
                .filter_map(|a| recovery(a, options.resampling()))
                .collect(),
            recovery_overlaps: recovery_overlaps(arms),
            after_support: arms.iter().filter_map(after_support).collect(),
            rejected: arms.iter().filter_map(rejected_actions).collect(),
            averages: cell_averages(arms),
            budget_calls: budget_calls(arms),
        }
    }
}

/// The turn an arm's nudge fires at, read off its records' settings: `turn:N`, or
/// ⌈α·T⌉ for `nudge = α` and `turns = T` (SLEUTH §3.3, App. E's cohort; one more
/// under `nudge_count=consumed`). None without a nudge, or for a method without a
/// memory outside the `nudge_all` control.
fn nudge_turn(arm: &Arm) -> Option<u32> {
    // The first record's own settings (records written before they carried them say
    // nothing); an arm's records share their settings.
    if !arm.records.first()?.settings_recorded {
        return None;
    }
    let method = arm.key.method.split('/').next().unwrap_or(&arm.key.method);
    crate::methods::registry::nudge_turn_of(method, |key| arm.settings.get(key).cloned())
}

impl Analysis {
    pub fn build(set: &RecordSet, options: &Options) -> Analysis {
        // Reflexion's first trial is an arm of its own (EIR paper Table 1 Panel B, Table 8).
        let (pooled, first_trial_warnings) = with_first_trials(&set.arms);
        let pooled = &pooled;
        // MuSiQue's hop splits are datasets of their own under the SLEUTH conventions
        // (§4, Tables 1, 13, 14): every per-benchmark analysis runs on them, the hop
        // breakdown on the pool. The EIR paper pools MuSiQue (§4.1).
        let arms = &match options.musique {
            MusiqueGroups::Splits => by_split(pooled),
            MusiqueGroups::Pooled => pooled.clone(),
        };
        let mut warnings = set.warnings.clone();
        warnings.extend(first_trial_warnings);
        let max_turn = arms
            .iter()
            .flat_map(|a| &a.records)
            .map(|r| r.turns.max(r.trace.len() as u32))
            .max()
            .unwrap_or(0);
        // The cohort is sized from the episodes that keep a memory: a Reflexion arm's
        // two chained episodes must not push it past every SLEUTH episode's length.
        let longest_with_memory = arms
            .iter()
            .flat_map(|a| &a.records)
            .filter(|r| r.keeps_memory())
            .map(|r| r.trace.len() as u32)
            .max()
            .unwrap_or(max_turn);
        let cohort = options
            .cohort_turns
            .unwrap_or_else(|| (longest_with_memory * 7).div_ceil(10).max(1));
        let (comparisons, compare_warnings) = match &options.baseline {
            Some(b) => compare_to_baseline_sized(
                arms,
                b,
                options.resampling(),
                options.holm_family,
                options.holm_size,
            ),
            None => (Vec::new(), Vec::new()),
        };
        warnings.extend(compare_warnings);
        let mut a = Analysis {
            sources: set.sources.clone(),
            summaries: arms.iter().map(Summary::of_arm).collect(),
            by_hops: breakdown(pooled, Split::Hops),
            by_kind: breakdown(arms, Split::Kind),
            errors: arms
                .iter()
                .map(|a| error_decomposition(a, options.reasoning_evidence, options.error_classes))
                .collect(),
            reasoning_evidence: options.reasoning_evidence,
            error_classes: options.error_classes,
            max_turn,
            accuracy_at_turn: arms.iter().map(|a| accuracy_at_turn(a, max_turn)).collect(),
            memory: arms
                .iter()
                .filter_map(|a| {
                    let turns = options
                        .cohort_turns
                        .or_else(|| nudge_turn(a))
                        .unwrap_or(cohort);
                    let mut m = memory_dynamics(a, turns)?;
                    m.nudge_turn = nudge_turn(a);
                    Some(m)
                })
                .collect(),
            baseline: options.baseline.clone(),
            bootstrap_p: options.bootstrap_p,
            holm_family: options.holm_family,
            holm_size: options.holm_size,
            direction: options.direction,
            conventions: options.conventions,
            musique: options.musique,
            aliases: options.aliases,
            comparisons,
            sweeps: sweeps(arms),
            // The same arms as every other table, so that one report speaks of its
            // datasets in one vocabulary (issue 47 item 7): MuSiQue pooled under the EIR
            // conventions (as the EIR paper's tables are), split where the report splits.
            eir: EirSection::build(arms, options),
            warnings,
        };
        a.orient();
        a.sort_arms();
        a
    }

    /// Every paired difference the way `direction` subtracts (computed method minus
    /// baseline; Holm and p-values do not depend on the sign).
    fn orient(&mut self) {
        let d = self.direction;
        for c in &mut self.comparisons {
            direction::orient_comparison(c, d);
        }
        for c in &mut self.eir.support {
            direction::orient_support(c, d);
        }
        for c in &mut self.eir.readable {
            direction::orient_readable(c, d);
        }
    }

    /// Puts every per-arm list in [`arm_order`] (stable: slices keep their value
    /// order within an arm), so sweeps read `2, 3, 10` rather than `10, 2, 3`.
    fn sort_arms(&mut self) {
        self.summaries.sort_by(|x, y| arm_order(&x.arm, &y.arm));
        self.by_hops
            .sort_by(|x, y| arm_order(&x.summary.arm, &y.summary.arm));
        self.by_kind
            .sort_by(|x, y| arm_order(&x.summary.arm, &y.summary.arm));
        self.errors.sort_by(|x, y| arm_order(&x.arm, &y.arm));
        self.accuracy_at_turn
            .sort_by(|x, y| arm_order(&x.arm, &y.arm));
        self.memory.sort_by(|x, y| arm_order(&x.arm, &y.arm));
        self.comparisons.sort_by(|x, y| arm_order(&x.arm, &y.arm));
    }
}
