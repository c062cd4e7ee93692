//! The papers' main table: one row per method (in the order the runs list them, as a
//! recipe does), one column per dataset, MuSiQue's hop splits as datasets of their own
//! (2/3/4-hop columns as in SLEUTH and EIR Table 1, no pooled MuSiQue column: the
//! analysis splits the arms, `eval::analysis::by_split`). Shown only when a report spans several
//! datasets; for one, the summary and by-hops tables say the same.

use super::paper::layout::{dataset_label, method_rank};
use super::table::{Cell, Table};
use crate::eval::analysis::{Analysis, ArmKey, Summary};
use std::collections::BTreeSet;

/// Datasets in the papers' column order; others follow alphabetically. MuSiQue's hop
/// splits are datasets of their own in the analysis (SLEUTH Table 1's columns).
const DATASET_ORDER: [&str; 6] = [
    "hotpotqa",
    "2wiki",
    "musique",
    "musique_2hop",
    "musique_3hop",
    "musique_4hop",
];

/// One pivot column: a dataset (a MuSiQue split is one).
struct Column {
    dataset: String,
}

impl Column {
    fn label(&self) -> String {
        format!("{} EM/F1", dataset_label(&self.dataset))
    }

    /// The tidy files' key (`musique_2hop`, as before the splits were datasets).
    fn key(&self) -> String {
        self.dataset.clone()
    }

    /// The summary of `row`'s arm on this column, if it ran there.
    fn summary<'a>(&self, a: &'a Analysis, row: &ArmKey) -> Option<&'a Summary> {
        a.summaries.iter().find(|s| {
            s.arm.dataset == self.dataset
                && s.arm.method == row.method
                && s.arm.model == row.model
                && s.arm.label == row.label
        })
    }
}

fn columns(a: &Analysis) -> Vec<Column> {
    let mut datasets: Vec<String> = a
        .summaries
        .iter()
        .map(|s| s.arm.dataset.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    datasets.sort_by_key(|d| {
        (
            DATASET_ORDER
                .iter()
                .position(|o| o == d)
                .unwrap_or(usize::MAX),
            d.clone(),
        )
    });
    datasets
        .into_iter()
        .map(|dataset| Column { dataset })
        .collect()
}

/// The pivot table (no rows when it would repeat the summary). `tidy` gives the
/// file form: `method` and `label` apart, `<dataset>_em`, `_f1`, `_n` per column.
pub fn pivot(a: &Analysis, tidy: bool) -> Table {
    let cols = columns(a);
    let models: BTreeSet<&str> = a.summaries.iter().map(|s| s.arm.model.as_str()).collect();
    let show_model = tidy || models.len() > 1;
    let labels: Vec<String> = cols.iter().map(Column::label).collect();
    let mut header: Vec<&str> = Vec::new();
    if show_model {
        header.push("model");
    }
    header.push("method");
    if tidy {
        header.push("label");
    }
    header.extend(labels.iter().map(String::as_str));
    let mut t = Table::new(
        "pivot",
        "EM / F1 per dataset (MuSiQue per hop split)",
        &header,
    )
    .with_note("EM and F1 in %; `-` where the method did not run on that dataset. Methods in the order the runs list them; the tidy files (pivot.csv) add n per column.");
    for (c, l) in cols.iter().zip(&labels) {
        let k = c.key();
        let keys = [format!("{k}_em"), format!("{k}_f1"), format!("{k}_n")];
        t = t.split(l, &keys.iter().map(String::as_str).collect::<Vec<_>>());
    }
    if cols.len() < 2 {
        return t;
    }
    let rank = method_rank(a);
    let mut rows: Vec<ArmKey> = a
        .summaries
        .iter()
        .map(|s| ArmKey {
            dataset: String::new(),
            ..s.arm.clone()
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    rows.sort_by(|x, y| {
        (&x.model, rank(&x.method), &x.label).cmp(&(&y.model, rank(&y.method), &y.label))
    });
    for row in &rows {
        let mut cells = Vec::new();
        if show_model {
            cells.push(Cell::text(&row.model));
        }
        if tidy {
            cells.push(Cell::text(&row.method));
            cells.push(Cell::text(&row.label));
        } else {
            cells.push(Cell::text(row.name()));
        }
        for c in &cols {
            cells.push(match c.summary(a, row) {
                Some(s) => Cell::Multi(
                    format!("{:.1} / {:.1}", s.em, s.f1),
                    vec![
                        Cell::Num(s.em, 1),
                        Cell::Num(s.f1, 1),
                        Cell::Int(s.n as u64),
                    ],
                ),
                None => Cell::Multi(
                    "-".into(),
                    vec![Cell::Missing, Cell::Missing, Cell::Missing],
                ),
            });
        }
        t.push(cells);
    }
    t
}
