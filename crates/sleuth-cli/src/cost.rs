//! Planning costs before spending: the price check every paid run makes (an unpriced
//! model warns once, and is an error under `--max-cost`), and the estimate tables of
//! `eval --dry-run` and `experiment --dry-run`.

use sleuth::eval::estimate::{Estimate, Usage, DEFAULT_INPUT_PER_CALL, DEFAULT_OUTPUT_PER_CALL};
use sleuth::llm::middleware::PRICES_CHECKED;
use sleuth::report::table::{Cell, Table};
use sleuth::study::{ModelSetup, PriceCheck};
use std::sync::atomic::{AtomicBool, Ordering};

static WARNED: AtomicBool = AtomicBool::new(false);

/// How `model` is priced (the library's check), with the warning for an unpriced
/// model shown once per process.
pub fn price_check(model: &ModelSetup) -> anyhow::Result<PriceCheck> {
    let check = model.price_check()?;
    if let Some(id) = &check.unpriced {
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "warning: no price for `{id}` (built-in prices checked {PRICES_CHECKED}); its cost is counted as unknown. Pass --prices FILE to price it (docs/prices.md)."
            );
        }
    }
    Ok(check)
}

/// One row of an estimate table.
pub struct Row {
    pub label: Vec<Cell>,
    pub estimate: Option<Estimate>,
}

pub fn usd_cell(usd: Option<f64>) -> Cell {
    match usd {
        Some(v) => Cell::Num(v, 2),
        None => Cell::text("unknown"),
    }
}

/// The estimate columns (calls, input and output tokens, USD) for one row.
pub fn cells(e: Option<&Estimate>) -> Vec<Cell> {
    match e {
        Some(e) => vec![
            Cell::Num(e.calls, 0),
            Cell::Num(e.input_tokens, 0),
            Cell::Num(e.output_tokens, 0),
            usd_cell(e.usd),
        ],
        None => vec![Cell::Missing; 4],
    }
}

pub const COLUMNS: [&str; 4] = ["calls (est.)", "input tok", "output tok", "USD (est.)"];

/// Lines under an estimate table: the total, and where the means came from.
pub fn footer(total: &Estimate, model: &str, usages: &[(String, Usage)]) -> String {
    let usd = total.usd.map_or_else(
        || "unknown (no price for the model)".to_string(),
        |v| format!("${v:.2}"),
    );
    let mut out = format!(
        "estimate: {:.0} calls, {:.0} input + {:.0} output tokens, {usd} with {model} (calls per question measured in earlier records of each method where there are any, else its budget bound; built-in prices checked {PRICES_CHECKED}; cached prompt tokens priced as fresh)\n",
        total.calls, total.input_tokens, total.output_tokens
    );
    let mut measured = Vec::new();
    let mut assumed = Vec::new();
    for (m, u) in usages {
        if u.measured_records > 0 {
            measured.push(format!(
                "{m} {:.1} calls/q, {:.0} in + {:.0} out tok/call ({} records)",
                u.calls_per_question, u.input_per_call, u.output_per_call, u.measured_records
            ));
        } else if !assumed.contains(m) {
            assumed.push(m.clone());
        }
    }
    if !measured.is_empty() {
        out += &format!("measured in earlier records: {}\n", measured.join("; "));
    }
    if !assumed.is_empty() {
        out += &format!(
            "no earlier records of {}: every budget used up, {DEFAULT_INPUT_PER_CALL:.0} input + {DEFAULT_OUTPUT_PER_CALL:.0} output tokens per call assumed\n",
            assumed.join(", ")
        );
    }
    out
}

/// The line under a batched run's estimate (`--batch`): both prices and the rounds.
pub fn batch_footer(
    total: &Estimate,
    pricing: sleuth::eval::estimate::Pricing,
    rounds: f64,
) -> String {
    let rate = pricing.batch_rate();
    let usd = match total.usd {
        Some(v) => format!(
            "${:.2} at batch prices ({:.0}% of the ${v:.2} above)",
            v * rate,
            rate * 100.0
        ),
        None => "unknown at batch prices".to_string(),
    };
    format!("with --batch: {usd}, in at most {rounds:.0} rounds (one per call of the longest episode; each round waits for its batch, up to the provider's 24 hours)\n")
}

/// A table titled `title` with `label_cols` then the estimate columns.
pub fn table(title: &str, label_cols: &[&str], rows: Vec<Row>) -> Table {
    let mut cols: Vec<&str> = label_cols.to_vec();
    cols.extend(COLUMNS);
    let mut t = Table::new("estimate", title, &cols);
    for r in rows {
        let mut row = r.label;
        row.extend(cells(r.estimate.as_ref()));
        t.push(row);
    }
    t
}
