//! Each paper's way of computing its numbers (issue 42). The two papers differ where a
//! report must choose one rule: the SLEUTH paper shows MuSiQue's 2/3/4-hop splits as
//! benchmarks of their own (§4, Tables 1, 13, 14) while the EIR paper pools MuSiQue as
//! one benchmark of 1,000 questions (§4.1, Tables 1, 5–7, 11–14); their Holm families,
//! bootstrap p-values and error-class arithmetic differ too.
//! A recipe names its paper (`conventions = "sleuth" | "eir"`), `sleuth report
//! --conventions NAME` does for plain runs, and every rule below can still be set by its
//! own flag ([`Overrides`]). Ours is the default: MuSiQue split, one Holm family, the
//! plain bootstrap p and App. J's definitions of the error classes.

use super::{Aliases, Analysis, Direction, ErrorClasses, HolmFamily, Options, ReasoningEvidence};
use crate::eval::stats::BootstrapP;
use crate::knob::Knob;
use serde::Serialize;

/// Whose rules a report follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Conventions {
    #[default]
    Ours,
    Sleuth,
    Eir,
}

/// How a report groups MuSiQue's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MusiqueGroups {
    /// One benchmark per hop split: `musique_2hop`, `musique_3hop`, `musique_4hop`
    /// (SLEUTH §4).
    #[default]
    Splits,
    /// One MuSiQue benchmark over every hop count (EIR §4.1).
    Pooled,
}

/// One paper table's Holm correction: the family and the least size each family is
/// counted as (0: the comparisons it holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HolmRule {
    pub family: HolmFamily,
    pub size: usize,
}

/// The rules a command line set itself, each over its conventions' choice.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    pub musique: Option<MusiqueGroups>,
    pub holm_family: Option<HolmFamily>,
    pub holm_size: Option<usize>,
    pub bootstrap_p: Option<BootstrapP>,
    pub error_classes: Option<ErrorClasses>,
    pub reasoning_evidence: Option<ReasoningEvidence>,
    pub direction: Option<Direction>,
}

impl Conventions {
    /// The names recipes and `--conventions` take.
    pub const NAMES: [&'static str; 3] = ["ours", "sleuth", "eir"];

    pub fn parse(name: &str) -> Option<Conventions> {
        match name {
            "ours" => Some(Conventions::Ours),
            "sleuth" => Some(Conventions::Sleuth),
            "eir" => Some(Conventions::Eir),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Conventions::Ours => Self::NAMES[0],
            Conventions::Sleuth => Self::NAMES[1],
            Conventions::Eir => Self::NAMES[2],
        }
    }

    /// MuSiQue as splits (SLEUTH §4; ours) or pooled (EIR §4.1).
    pub fn musique(self) -> MusiqueGroups {
        match self {
            Conventions::Eir => MusiqueGroups::Pooled,
            Conventions::Ours | Conventions::Sleuth => MusiqueGroups::Splits,
        }
    }

    /// SLEUTH App. G: each baseline row of Table 1 against SLEUTH over the five
    /// benchmarks; EIR App. G: each baseline's comparisons over three benchmarks and
    /// two models; ours: every comparison of the report in one family.
    pub fn holm_family(self) -> HolmFamily {
        match self {
            Conventions::Ours => HolmFamily::All,
            Conventions::Sleuth => HolmFamily::Arm,
            Conventions::Eir => HolmFamily::Baseline,
        }
    }

    /// How the comparisons behind the paper's table `table` (its number in the paper
    /// these conventions follow) are Holm-corrected, where the paper says; None where it
    /// names no family for that table (the conventions' default family then applies).
    /// EIR §4.4 applies Holm "separately to the groups defined in Appendices E, D, G,
    /// and H": the six comparisons of a baseline (Tables 1, 6, 8; 12 and 14: "the six
    /// comparisons"), all 18 of Table 11, groups of four within each benchmark and
    /// model (Table 13) and of five per metric and model, four shown (Table 20). The
    /// SLEUTH paper names no Holm correction; ours for its cross-model Table 3 is one
    /// family per benchmark (SLEUTH and its baselines on one model).
    pub fn holm_rule(self, table: u32) -> Option<HolmRule> {
        let rule = |family, size| Some(HolmRule { family, size });
        match (self, table) {
            (Conventions::Eir, 1 | 6 | 8 | 12 | 14) => rule(HolmFamily::Baseline, 0),
            (Conventions::Eir, 11) => rule(HolmFamily::All, 0),
            (Conventions::Eir, 13) => rule(HolmFamily::Dataset, 4),
            (Conventions::Eir, 20) => rule(HolmFamily::Dataset, 5),
            (Conventions::Sleuth, 1 | 13 | 14) => rule(HolmFamily::Arm, 0),
            (Conventions::Sleuth, 3) => rule(HolmFamily::Dataset, 0),
            _ => None,
        }
    }

    /// EIR Table 20's note (0.0010 = 5 × 2/10,001) implies the add-one p, which is never
    /// 0; the SLEUTH paper reports no p that tells the two apart.
    pub fn bootstrap_p(self) -> BootstrapP {
        match self {
            Conventions::Eir => BootstrapP::AddOne,
            Conventions::Ours | Conventions::Sleuth => BootstrapP::TwiceTail,
        }
    }

    /// SLEUTH Table 15's rows add up to 100 with no Other column: under the SLEUTH
    /// conventions every finished, wrong, non-verbose answer is a reasoning error.
    pub fn error_classes(self) -> ErrorClasses {
        match self {
            Conventions::Sleuth => ErrorClasses::Sums,
            Conventions::Ours | Conventions::Eir => ErrorClasses::Defined,
        }
    }

    /// `options` under these conventions: every rule they decide, unless `overrides`
    /// sets it.
    pub fn apply(self, mut options: Options, overrides: &Overrides) -> Options {
        options.conventions = self;
        options.musique = overrides.musique.unwrap_or(self.musique());
        options.holm_family = overrides.holm_family.unwrap_or(self.holm_family());
        options.holm_size = overrides.holm_size.unwrap_or(0);
        options.bootstrap_p = overrides.bootstrap_p.unwrap_or(self.bootstrap_p());
        options.error_classes = overrides.error_classes.unwrap_or(self.error_classes());
        options.reasoning_evidence = overrides
            .reasoning_evidence
            .unwrap_or(ReasoningEvidence::Any);
        // The sign is not a paper's rule but a reading aid: method minus baseline unless
        // asked (`--direction baseline-minus-method` reads as the EIR paper's tables).
        options.direction = overrides.direction.unwrap_or_default();
        options
    }

    /// The line a report's header gives its rules in.
    pub fn describe(a: &Analysis) -> String {
        let paper = match a.conventions {
            Conventions::Ours => "sleuth's own",
            Conventions::Sleuth => "the SLEUTH paper's",
            Conventions::Eir => "the EIR paper's",
        };
        let musique = match a.musique {
            MusiqueGroups::Splits => "MuSiQue by hop split",
            MusiqueGroups::Pooled => "MuSiQue pooled",
        };
        let gold = match a.aliases {
            Aliases::On => "gold answers and their aliases",
            // A report is a document in the CLI's words, whoever wrote it.
            Aliases::Off => &format!("the first gold answer alone ({} off)", Knob::Aliases.flag()),
        };
        format!(
            "conventions: {} ({paper}): {musique}; Holm families: {}; bootstrap p: {}; error classes: {}; differences: {}; EM and F1 against {gold}",
            a.conventions.name(),
            a.holm_family.name(),
            a.bootstrap_p.name(),
            <&'static str>::from(a.error_classes),
            a.direction.describe(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_paper_sets_its_rules_and_a_flag_sets_one_over_them() {
        let eir = Conventions::Eir.apply(Options::default(), &Overrides::default());
        assert_eq!(eir.musique, MusiqueGroups::Pooled);
        assert_eq!(eir.bootstrap_p, BootstrapP::AddOne);
        assert_eq!(eir.holm_family, HolmFamily::Baseline);
        let sleuth = Conventions::Sleuth.apply(
            Options::default(),
            &Overrides {
                holm_family: Some(HolmFamily::Dataset),
                ..Overrides::default()
            },
        );
        assert_eq!(sleuth.musique, MusiqueGroups::Splits);
        assert_eq!(sleuth.error_classes, ErrorClasses::Sums);
        assert_eq!(sleuth.holm_family, HolmFamily::Dataset);
        for name in Conventions::NAMES {
            assert_eq!(Conventions::parse(name).unwrap().name(), name);
        }
    }
}
