//! SLEUTH Table 4 (§5.5): the same model and prompt with and without runtime
//! enforcement. The paper's claim is a contrast (≈15% of turns in the notation
//! unenforced, ≈99% enforced) and the EM it buys per split, so the table shows both
//! arms' EM and share of adherent turns side by side, and their difference.

use super::layout::{
    dataset_label, datasets, models, rows, setting, signed, summary, SLEUTH_ORDER,
};
use crate::eval::analysis::{Analysis, ArmKey, Summary};
use crate::report::table::{Cell, Table};

/// Whether an arm ran with enforcement (`enforce`, off unless set).
fn enforced(a: &Analysis, arm: &ArmKey) -> bool {
    setting(a, arm, "enforce").is_some_and(|v| v == "true")
}

/// Table 4: per benchmark, EM and adherent turns (%) of every arm (ReAct and the other
/// methods of the run as references), then Δ = enforced − unenforced SLEUTH in points.
pub fn adherence_arms(a: &Analysis) -> Table {
    let ds = datasets(a, &SLEUTH_ORDER);
    let labels: Vec<(String, String)> = ds
        .iter()
        .map(|d| {
            let l = dataset_label(d);
            (format!("{l} EM (%)"), format!("{l} adherent turns (%)"))
        })
        .collect();
    let mut header = vec!["method", "enforcement"];
    for (em, adh) in &labels {
        header.push(em);
        header.push(adh);
    }
    let mut t = Table::new(
        "sleuth_table4",
        "Effect of protocol adherence, EM and adherent turns (SLEUTH §5.5, Table 4)",
        &header,
    )
    .with_note("Percent (0-100). Adherent turns = turns whose response was in the working-memory notation, pooled over the arm's turns (- for methods without one). Δ = SLEUTH enforced minus SLEUTH unenforced, in points.");
    let several = models(a).len() > 1;
    for model in models(a) {
        let model_rows = rows(a, &model);
        t.block(&if several {
            format!("Arms · {model}")
        } else {
            "Arms".to_string()
        });
        for row in &model_rows {
            let enforcement = if row.method.starts_with("sleuth") {
                if enforced(a, row) {
                    "on"
                } else {
                    "off"
                }
            } else {
                "-"
            };
            let mut cells = vec![Cell::text(row.name()), Cell::text(enforcement)];
            for d in &ds {
                let s = summary(a, row, d);
                cells.push(s.map_or(Cell::Missing, |s| Cell::Num(s.em, 1)));
                cells.push(s.map_or(Cell::Missing, |s| Cell::opt(s.adherence, 1)));
            }
            t.push(cells);
        }
        let arm = |on: bool| {
            model_rows
                .iter()
                .find(|r| r.method == "sleuth" && enforced(a, r) == on)
        };
        if let (Some(off), Some(on)) = (arm(false), arm(true)) {
            t.block(&if several {
                format!("Δ enforced − unenforced · {model}")
            } else {
                "Δ enforced − unenforced".to_string()
            });
            let mut cells = vec![Cell::text("Δ SLEUTH"), Cell::text("on − off")];
            for d in &ds {
                let pair = summary(a, on, d).zip(summary(a, off, d));
                let diff = |f: fn(&Summary) -> Option<f64>| {
                    pair.and_then(|(x, y)| Some(f(x)? - f(y)?))
                        .map_or(Cell::Missing, |v| {
                            Cell::Multi(signed(v), vec![Cell::Num(v + 0.0, 1)])
                        })
                };
                cells.push(diff(|s| Some(s.em)));
                cells.push(diff(|s| s.adherence));
            }
            t.push(cells);
        }
    }
    t
}
