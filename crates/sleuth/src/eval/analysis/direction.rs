//! Which way the paired comparisons subtract. Our rows are *method minus baseline*,
//! with `b` the questions right only under the baseline and `c` only under the method.
//! The EIR paper's tables name EIR first (Tables 6, 7, 8, 12, 18, 20: "EIR minus each
//! baseline", b = baseline-only, c = EIR-only) while its documented reports pass
//! `--baseline eir` (one family per compared method); `--direction
//! baseline-minus-method` prints those rows as the paper does: every difference and
//! interval negated, `b`/`c` and wins/losses swapped, p-values unchanged (every test is
//! two-sided).

use super::compare::Comparison;
use super::eir_analyses::{ReadableComparison, SupportComparison};
use crate::eval::stats::BootstrapCi;
use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Method minus baseline (the default).
    #[default]
    MethodMinusBaseline,
    /// Baseline minus method: with `--baseline eir`, the EIR paper's "EIR minus".
    BaselineMinusMethod,
}

impl Direction {
    pub const NAMES: [&'static str; 2] = ["method-minus-baseline", "baseline-minus-method"];

    pub fn parse(value: &str) -> Option<Direction> {
        match value.trim() {
            "method-minus-baseline" => Some(Direction::MethodMinusBaseline),
            "baseline-minus-method" => Some(Direction::BaselineMinusMethod),
            _ => None,
        }
    }

    /// The difference in words, for the tables' notes.
    pub fn describe(self) -> &'static str {
        match self {
            Direction::MethodMinusBaseline => "method minus baseline",
            Direction::BaselineMinusMethod => "baseline minus method",
        }
    }

    /// Who `b` and `c` count the questions right only under, in words.
    pub fn b_c(self) -> &'static str {
        match self {
            Direction::MethodMinusBaseline => {
                "questions right only under the baseline / only under the method"
            }
            Direction::BaselineMinusMethod => {
                "questions right only under the method / only under the baseline"
            }
        }
    }

    fn reversed(self) -> bool {
        self == Direction::BaselineMinusMethod
    }
}

fn negate(ci: &mut BootstrapCi) {
    (ci.diff, ci.lo, ci.hi) = (-ci.diff, -ci.hi, -ci.lo);
}

pub fn orient_comparison(c: &mut Comparison, d: Direction) {
    if d.reversed() {
        negate(&mut c.em);
        negate(&mut c.f1);
        std::mem::swap(&mut c.b, &mut c.c);
        let h = &mut c.head_to_head;
        std::mem::swap(&mut h.wins, &mut h.losses);
    }
}

pub fn orient_support(c: &mut SupportComparison, d: Direction) {
    if d.reversed() {
        negate(&mut c.diff);
    }
}

pub fn orient_readable(c: &mut ReadableComparison, d: Direction) {
    if d.reversed() {
        negate(&mut c.f1);
        std::mem::swap(&mut c.b, &mut c.c);
    }
}
