//! The papers' tables by name, and the choice of tables a report shows.
//!
//! A recipe names the tables it reproduces (`tables = [...]` in `experiments/*.toml`,
//! kept in the experiment's `experiment.json`), so its report prints those tables in
//! the paper's order and layout rather than every table the analysis can fill;
//! `--tables` chooses others. A name is a paper table (`sleuth_table1`, `eir_table1`)
//! or one of the report's own tables (`summary`, `comparison`, `eir_support_f1`, ...).

mod adherence;
mod eir;
pub(super) mod layout;
mod sleuth;

use super::table::Table;
use crate::eval::analysis::Analysis;

/// A table of one of the papers, in that paper's layout.
pub struct PaperTable {
    pub name: &'static str,
    /// What it shows, for `--tables` help and errors.
    pub what: &'static str,
    build: fn(&Analysis) -> Table,
}

/// Every paper table, in the papers' order.
pub const PAPER_TABLES: &[PaperTable] = &[
    PaperTable {
        name: "sleuth_table1",
        what: "SLEUTH Table 1: EM, methods x benchmarks in blocks, best bold, Δ over the strongest external baseline",
        build: |a| {
            sleuth::methods_by_dataset(
                a,
                "sleuth_table1",
                "Exact match per benchmark (SLEUTH §5.1, Table 1)",
                |s| s.em,
            )
        },
    },
    PaperTable {
        name: "sleuth_table2",
        what: "SLEUTH Table 2: commitment timing (nudge turn, EM, cond. acc, timeout)",
        build: |a| sleuth::arms(a, "sleuth_table2", "Effect of commitment timing (SLEUTH §5.3, Table 2)"),
    },
    PaperTable {
        name: "sleuth_table3",
        what: "SLEUTH Table 3: cross-model EM, the Table 1 layout",
        build: |a| {
            sleuth::methods_by_dataset(
                a,
                "sleuth_table3",
                "Cross-model generalization, EM (SLEUTH §5.4, Table 3)",
                |s| s.em,
            )
        },
    },
    PaperTable {
        name: "sleuth_table4",
        what: "SLEUTH Table 4: SLEUTH with and without enforcement, EM and adherent turns per benchmark, Δ",
        build: adherence::adherence_arms,
    },
    PaperTable {
        name: "sleuth_table6",
        what: "SLEUTH Table 6: F1, the Table 1 layout",
        build: |a| {
            sleuth::methods_by_dataset(
                a,
                "sleuth_table6",
                "F1 per benchmark (SLEUTH App. B, Table 6)",
                |s| s.f1,
            )
        },
    },
    PaperTable {
        name: "sleuth_table7",
        what: "SLEUTH Table 7: tokens, tool calls per question, cost relative to ReAct",
        build: sleuth::efficiency,
    },
    PaperTable {
        name: "sleuth_table8",
        what: "SLEUTH Table 8: timeout decomposition (EM, cond. acc, timeout)",
        build: sleuth::timeouts,
    },
    PaperTable {
        name: "sleuth_table9",
        what: "SLEUTH Table 9: nudge isolation (the same nudge on ReAct and SLEUTH)",
        build: |a| sleuth::arms(a, "sleuth_table9", "Nudge isolation (SLEUTH App. D.4, Table 9)"),
    },
    PaperTable {
        name: "sleuth_table10",
        what: "SLEUTH Table 10: alternative stopping strategies",
        build: |a| {
            sleuth::arms(
                a,
                "sleuth_table10",
                "Alternative stopping strategies (SLEUTH App. D.5, Table 10)",
            )
        },
    },
    PaperTable {
        name: "sleuth_table11",
        what: "SLEUTH Table 11: turn budget, SLEUTH's best nudge turn per budget beside ReAct",
        build: |a| {
            sleuth::per_option(
                a,
                "sleuth_table11",
                "Effect of the turn budget, best nudge turn per budget (SLEUTH App. F, Table 11)",
                "turns",
            )
        },
    },
    PaperTable {
        name: "sleuth_table12",
        what: "SLEUTH Table 12: retrieval breadth top-k, SLEUTH beside ReAct",
        build: |a| {
            sleuth::per_option(
                a,
                "sleuth_table12",
                "Effect of retrieval breadth (SLEUTH App. F, Table 12)",
                "top_k",
            )
        },
    },
    PaperTable {
        name: "sleuth_table13",
        what: "SLEUTH Table 13: bootstrap 95% intervals of SLEUTH − ReAct EM",
        build: sleuth::intervals,
    },
    PaperTable {
        name: "sleuth_table14",
        what: "SLEUTH Table 14: per-question wins and losses, SLEUTH vs ReAct",
        build: sleuth::head_to_head,
    },
    PaperTable {
        name: "sleuth_table15",
        what: "SLEUTH Table 15: error decomposition, % of questions",
        build: sleuth::errors,
    },
    PaperTable {
        name: "eir_table1",
        what: "EIR Table 1: Answer F1 and calls per question, one block per model",
        build: |a| {
            eir::accuracy_and_calls(
                a,
                "eir_table1",
                "Answer F1 and calls per question (EIR §5, Table 1)",
                false,
            )
        },
    },
    PaperTable {
        name: "eir_table3",
        what: "EIR Table 3: corpus search, Answer F1 and calls per question",
        build: |a| {
            eir::accuracy_and_calls(
                a,
                "eir_table3",
                "Corpus search, Answer F1 and calls per question (EIR §5, Table 3)",
                false,
            )
        },
    },
    PaperTable {
        name: "eir_table19",
        what: "EIR Table 19: full-corpus results, calls and list-price costs totaled",
        build: eir::totals,
    },
    PaperTable {
        name: "eir_table5",
        what: "EIR Table 5: Exact Match and calls per question",
        build: |a| {
            eir::accuracy_and_calls(
                a,
                "eir_table5",
                "Exact Match and calls per question (EIR App. C, Table 5)",
                true,
            )
        },
    },
];

/// Which tables a report shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The report's own tables without the per-turn ones: a report of runs that no
    /// recipe names tables for.
    Terminal,
    /// Every table the analysis fills (the report's own tables, then every paper
    /// table with rows).
    All,
    /// These, in this order.
    Named(Vec<String>),
}

impl Selection {
    /// `all`, or names checked against [`known`].
    pub fn parse(names: &[String]) -> Result<Selection, String> {
        if names.iter().any(|n| n == "all") {
            return Ok(Selection::All);
        }
        let known = known();
        for n in names {
            if !known.contains(&n.as_str()) {
                return Err(format!(
                    "unknown table `{n}` (known: all, {})",
                    known.join(", ")
                ));
            }
        }
        Ok(Selection::Named(names.to_vec()))
    }
}

/// Every table name `--tables` takes: the papers' tables, then the report's own.
pub fn known() -> Vec<&'static str> {
    PAPER_TABLES
        .iter()
        .map(|t| t.name)
        .chain(super::tables::NAMES.iter().copied())
        .collect()
}

/// The tables of `selection`, each in display form and in tidy form (for CSV and
/// JSON), and the names that had nothing to show (no rows in this report).
pub fn select(a: &Analysis, selection: &Selection) -> (Vec<(Table, Table)>, Vec<String>) {
    let display = super::tables::all(a);
    let tidy = super::tables::tidy(a);
    let own = |name: &str| -> Option<(Table, Table)> {
        let d = display.iter().find(|t| t.name == name)?;
        let t = tidy.iter().find(|t| t.name == name)?;
        Some((d.clone(), t.clone()))
    };
    let paper = |name: &str| -> Option<(Table, Table)> {
        let p = PAPER_TABLES.iter().find(|p| p.name == name)?;
        let t = (p.build)(a);
        (!t.rows.is_empty()).then(|| (t.clone(), t))
    };
    match selection {
        Selection::Terminal => (
            super::tables::terminal(a)
                .iter()
                .filter_map(|t| own(&t.name))
                .collect(),
            Vec::new(),
        ),
        Selection::All => {
            let mut out: Vec<(Table, Table)> =
                display.iter().filter_map(|t| own(&t.name)).collect();
            let mut shown: Vec<Table> = Vec::new();
            for p in PAPER_TABLES {
                let Some(pair) = paper(p.name) else { continue };
                // Tables 3 and 4 (9, 10) share Table 1's (2's) layout: one copy.
                if shown
                    .iter()
                    .any(|s| s.rows == pair.0.rows && s.columns == pair.0.columns)
                {
                    continue;
                }
                shown.push(pair.0.clone());
                out.push(pair);
            }
            (out, Vec::new())
        }
        Selection::Named(names) => {
            let mut out = Vec::new();
            let mut empty = Vec::new();
            for n in names {
                match paper(n).or_else(|| own(n)) {
                    Some(pair) => out.push(pair),
                    None => empty.push(n.clone()),
                }
            }
            (out, empty)
        }
    }
}
