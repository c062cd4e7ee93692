//! The EIR paper's main tables in its layout: methods as rows, one block per model,
//! the benchmarks as column pairs in its order (HotpotQA, 2Wiki, MuSiQue), bold for
//! the highest Answer F1 and the fewest calls within each block (EIR Table 1).
//! The appendix analyses keep their own tables (`eir_*`, `report/eir_tables.rs`).

use super::layout::{dataset_label, datasets, models, rows, summary, EIR_ORDER};
use crate::eval::analysis::Analysis;
use crate::report::table::{Cell, Table};

/// EIR Tables 1, 2 and 19 (and 5 with EM): F1 (or EM) and calls per question.
pub fn accuracy_and_calls(a: &Analysis, name: &str, title: &str, em: bool) -> Table {
    let ds = datasets(a, &EIR_ORDER);
    let metric = if em { "EM" } else { "Answer F1" };
    let labels: Vec<(String, String)> = ds
        .iter()
        .map(|d| {
            (
                format!("{} {metric} (0-100)", dataset_label(d)),
                format!("{} calls/q", dataset_label(d)),
            )
        })
        .collect();
    let mut header = vec!["method"];
    for (m, c) in &labels {
        header.push(m);
        header.push(c);
    }
    let mut t = Table::new(name, title, &header).with_note(&format!(
        "{metric} on a 0-100 scale averaged over every question (failed outputs score 0); calls = model calls per question, final answers included, provider retries excluded. Bold = highest {metric} and fewest calls within each model's block."
    ));
    for ((m, c), d) in labels.iter().zip(&ds) {
        t = t
            .split(m, &[&format!("{d}_{}", if em { "em" } else { "f1" })])
            .split(c, &[&format!("{d}_calls")]);
    }
    for model in models(a) {
        t.block(&model);
        let start = t.rows.len();
        for row in rows(a, &model) {
            let mut cells = vec![Cell::text(row.name())];
            for d in &ds {
                match summary(a, &row, d) {
                    Some(s) => {
                        cells.push(Cell::Num(if em { s.em } else { s.f1 }, 2));
                        cells.push(Cell::Num(s.calls, 2));
                    }
                    None => cells.extend([Cell::Missing, Cell::Missing]),
                }
            }
            t.push(cells);
        }
        let end = t.rows.len();
        let score_cols: Vec<usize> = (0..ds.len()).map(|i| 1 + 2 * i).collect();
        let call_cols: Vec<usize> = (0..ds.len()).map(|i| 2 + 2 * i).collect();
        t.bold_best(&score_cols, false, &|r| (start..end).contains(&r));
        t.bold_best(&call_cols, true, &|r| (start..end).contains(&r));
    }
    t
}

/// EIR App. H.3, Table 19: the full-corpus results with calls and costs *totaled* over
/// every scored question (not per question), the cost at the fixed list prices of
/// Table 4 (D.5: tokens priced, no cache savings, so a response-cache hit costs what
/// the call would have). One row per method and benchmark, one block per model.
pub fn totals(a: &Analysis) -> Table {
    let mut t = Table::new(
        "eir_table19",
        "Full-corpus results, calls and costs totaled over the questions (EIR App. H.3, Table 19)",
        &[
            "method",
            "benchmark",
            "questions",
            "Answer F1 (0-100)",
            "EM (0-100)",
            "calls",
            "cost (USD, list prices)",
        ],
    )
    .with_note(
        "Scores averaged over every question (failed outputs score 0); calls and cost summed over every question: final answers, reflections and every Reflexion trial included, provider retries excluded; cost at the fixed list prices, no cache savings. Bold = highest Answer F1 and fewest calls per benchmark within each model's block.",
    );
    for model in models(a) {
        t.block(&model);
        for d in datasets(a, &EIR_ORDER) {
            let start = t.rows.len();
            for row in rows(a, &model) {
                let Some(s) = summary(a, &row, &d) else {
                    continue;
                };
                let n = s.n as f64;
                t.push(vec![
                    Cell::text(row.name()),
                    Cell::text(dataset_label(&d)),
                    Cell::Num(n, 0),
                    Cell::Num(s.f1, 2),
                    Cell::Num(s.em, 2),
                    Cell::Num((s.calls * n).round(), 0),
                    Cell::Num(s.list_cost_usd * n, 2),
                ]);
            }
            let end = t.rows.len();
            t.bold_best(&[3], false, &|r| (start..end).contains(&r));
            t.bold_best(&[5], true, &|r| (start..end).contains(&r));
        }
    }
    t
}
