//! The SLEUTH paper's tables in its layout: methods as rows in the paper's blocks,
//! benchmarks as columns in its order (HotpotQA, MuSiQue 2/3/4-hop, 2Wiki), the best
//! value of each column in bold, and the differences the paper prints beside them.
//! Every number comes from the report's [`Analysis`]; nothing here computes a metric.

// A report is a document in the CLI's words, whoever wrote it.
use super::layout::{
    dataset_label, datasets, models, nudge_turn, rows, setting, signed, summary, Block,
    SLEUTH_ORDER,
};
use crate::eval::analysis::{
    Analysis, ArmKey, Comparison, ErrorClasses, Outcome, ReasoningEvidence, Summary,
};
use crate::knob::Knob;
use crate::report::table::{Cell, Table};

/// Table 1 (EM) and Table 6 (F1): methods x benchmarks in the paper's blocks, the best
/// value per column in bold, and a last row Δ = SLEUTH minus the strongest external
/// baseline on that benchmark (§5.1). Table 3 (the second model) shares the layout.
/// One block set per model when several ran.
pub fn methods_by_dataset(
    a: &Analysis,
    name: &str,
    title: &str,
    metric: fn(&Summary) -> f64,
) -> Table {
    let ds = datasets(a, &SLEUTH_ORDER);
    let labels: Vec<String> = ds
        .iter()
        .map(|d| format!("{} (%)", dataset_label(d)))
        .collect();
    let mut header = vec!["method"];
    header.extend(labels.iter().map(String::as_str));
    let mut t = Table::new(name, title, &header).with_note(
        "Percent (0-100), each record's score averaged over the benchmark's questions; bold = best per column; Δ = SLEUTH minus the strongest external baseline (top block) on that benchmark, in points.",
    );
    for (l, d) in labels.iter().zip(&ds) {
        t = t.split(l, &[d.as_str()]);
    }
    let all_models = models(a);
    let mut candidates: Vec<usize> = Vec::new();
    for model in &all_models {
        let model_rows = rows(a, model);
        let mut last: Option<Block> = None;
        let suffix = if all_models.len() > 1 {
            format!(" · {model}")
        } else {
            String::new()
        };
        for row in &model_rows {
            let block = Block::of(&row.method);
            if last != Some(block) {
                t.block(&format!("{}{suffix}", block.label()));
                last = Some(block);
            }
            let mut cells = vec![Cell::text(row.name())];
            cells
                .extend(ds.iter().map(|d| {
                    summary(a, row, d).map_or(Cell::Missing, |s| Cell::Num(metric(s), 1))
                }));
            candidates.push(t.rows.len());
            t.push(cells);
        }
        if let Some(delta) = delta_row(a, &model_rows, &ds, metric) {
            t.block(&format!("Δ over the strongest external baseline{suffix}"));
            t.push(delta);
        }
    }
    let cols: Vec<usize> = (1..=ds.len()).collect();
    t.bold_best(&cols, false, &|r| candidates.contains(&r));
    t
}

/// `Δ`: SLEUTH (the first `sleuth` row) minus the best external row per dataset, the
/// strongest baseline named in the cell.
fn delta_row(
    a: &Analysis,
    rows: &[ArmKey],
    ds: &[String],
    metric: fn(&Summary) -> f64,
) -> Option<Vec<Cell>> {
    let ours = rows.iter().find(|r| r.method == "sleuth")?;
    let external: Vec<&ArmKey> = rows
        .iter()
        .filter(|r| Block::of(&r.method) == Block::External)
        .collect();
    if external.is_empty() {
        return None;
    }
    let mut cells = vec![Cell::text(format!("Δ {} − best external", ours.name()))];
    for d in ds {
        let mine = summary(a, ours, d).map(metric);
        let best = external
            .iter()
            .filter_map(|r| summary(a, r, d).map(|s| (metric(s), r.name())))
            // The first of equals (max_by would keep the last).
            .fold(None, |best: Option<(f64, String)>, x| match best {
                Some(b) if b.0 >= x.0 => Some(b),
                _ => Some(x),
            });
        cells.push(match (mine, best) {
            (Some(m), Some((b, who))) => Cell::Multi(
                format!("{} ({who})", signed(m - b)),
                vec![Cell::Num(m - b, 1)],
            ),
            _ => Cell::Missing,
        });
    }
    Some(cells)
}

/// One block per benchmark (paper order), one row per method: Tables 7, 8 and 15.
fn per_dataset(a: &Analysis, t: &mut Table, row: &dyn Fn(&Summary, Option<&Summary>) -> Vec<Cell>) {
    let several = models(a).len() > 1;
    for d in datasets(a, &SLEUTH_ORDER) {
        for model in models(a) {
            let here: Vec<&Summary> = rows(a, &model)
                .iter()
                .filter_map(|r| summary(a, r, &d))
                .collect();
            if here.is_empty() {
                continue;
            }
            let label = if several {
                format!("{} · {model}", dataset_label(&d))
            } else {
                dataset_label(&d)
            };
            t.block(&label);
            let react = here
                .iter()
                .copied()
                .find(|s| s.arm.method == "react" && s.arm.label.is_empty())
                .or_else(|| here.iter().copied().find(|s| s.arm.method == "react"));
            for s in &here {
                let mut cells = vec![Cell::text(s.arm.name())];
                cells.extend(row(s, react));
                t.push(cells);
            }
        }
    }
}

/// Table 7: tokens and tool calls per question, and cost relative to ReAct on the same
/// benchmark (price-weighted: the records' dollar cost).
pub fn efficiency(a: &Analysis) -> Table {
    let mut t = Table::new(
        "sleuth_table7",
        "Tokens and tool calls per question, cost relative to ReAct (SLEUTH App. C, Table 7)",
        &[
            "method",
            "tokens/q",
            "tool calls/q",
            "model calls/q",
            "cost/q (USD)",
            "cost vs ReAct (×)",
        ],
    )
    .split("cost vs ReAct (×)", &["cost_vs_react"])
    .with_note("Means per question; tokens = input + output; tool calls = searches and lookups that ran; cost vs ReAct = this method's dollar cost over ReAct's on the same benchmark and model (price-weighted; - without prices or without a ReAct arm).");
    per_dataset(a, &mut t, &|s, react| {
        let ratio = react
            .filter(|r| r.cost_usd > 0.0)
            .map(|r| s.cost_usd / r.cost_usd);
        vec![
            Cell::Num(s.input_tokens + s.output_tokens, 0),
            Cell::Num(s.tool_calls, 2),
            Cell::Num(s.calls, 2),
            Cell::Num(s.cost_usd, 4),
            ratio.map_or(Cell::Missing, |r| {
                Cell::Multi(format!("{r:.2}×"), vec![Cell::Num(r, 2)])
            }),
        ]
    });
    t
}

/// Table 8: EM decomposed into conditional accuracy and timeout rate.
pub fn timeouts(a: &Analysis) -> Table {
    let mut t = Table::new(
        "sleuth_table8",
        "Timeout decomposition (SLEUTH App. D.1, Table 8)",
        &["method", "EM (%)", "cond. acc (%)", "timeout (%)", "n"],
    )
    .with_note("Percent (0-100). Cond. acc = EM among episodes that answered within the budget; timeout = episodes that used every turn without answering.");
    per_dataset(a, &mut t, &|s, _| {
        vec![
            Cell::Num(s.em, 1),
            Cell::opt(s.cond_acc, 1),
            Cell::Num(s.timeout_rate, 1),
            Cell::Int(s.n as u64),
        ]
    });
    bold_per_block(&mut t, &[1, 2], false);
    bold_per_block(&mut t, &[3], true);
    t
}

/// Table 15: error decomposition, % of all questions. The note states the reading
/// of App. J the report used (`--reasoning-evidence`, `--error-classes`).
pub fn errors(a: &Analysis) -> Table {
    let reasoning = match (a.error_classes, a.reasoning_evidence) {
        (ErrorClasses::Sums, _) => &format!(
            "every other wrong answer (no Other class: {} sums)",
            Knob::ErrorClasses.flag()
        ),
        (_, ReasoningEvidence::Any) => {
            "wrong, sharing no word with the gold, although a gold paragraph was retrieved"
        }
        (_, ReasoningEvidence::All) => {
            "wrong, sharing no word with the gold, although every gold paragraph was retrieved"
        }
    };
    let other = match a.error_classes {
        ErrorClasses::Sums => "other = none under this reading (0)",
        ErrorClasses::Defined => "other = the rest",
    };
    let note = format!(
        "Percent of all questions (rows sum to 100). Timeout = the turn budget ran out; unfinished = no answer before the budget (an error, an overflow, an unparsable reply; not a class of the paper's); verbose = a wrong answer containing the gold one; reasoning = {reasoning}; {other}."
    );
    let classes = [
        Outcome::Correct,
        Outcome::Timeout,
        Outcome::Unfinished,
        Outcome::Reasoning,
        Outcome::Verbose,
        Outcome::Other,
    ];
    let mut t = Table::new(
        "sleuth_table15",
        "Error decomposition, % of questions (SLEUTH App. J, Table 15)",
        &[
            "method",
            "EM (%)",
            "timeout (%)",
            "unfinished (%)",
            "reasoning (%)",
            "verbose (%)",
            "other (%)",
        ],
    )
    .with_note(&note);
    per_dataset(a, &mut t, &|s, _| {
        let Some(e) = a.errors.iter().find(|e| e.arm == s.arm) else {
            return vec![Cell::Missing; classes.len()];
        };
        classes
            .iter()
            .map(|o| Cell::Num(e.percent.get(o).copied().unwrap_or(0.0), 1))
            .collect()
    });
    bold_per_block(&mut t, &[1], false);
    bold_per_block(&mut t, &[2, 3, 4, 5], true);
    t
}

/// Bold the best value of `cols` within each block (lowest when `lowest`).
fn bold_per_block(t: &mut Table, cols: &[usize], lowest: bool) {
    let blocks = t
        .block_of_rows()
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>();
    let labels: std::collections::BTreeSet<String> = blocks.iter().cloned().collect();
    for label in labels {
        let members: Vec<usize> = (0..blocks.len()).filter(|&r| blocks[r] == label).collect();
        t.bold_best(cols, lowest, &|r| members.contains(&r));
    }
}

/// Tables 2, 9 and 10: the arms of one benchmark (a sweep or a set of strategies) with
/// EM, conditional accuracy and timeout rate; the nudge turn where one fires.
pub fn arms(a: &Analysis, name: &str, title: &str) -> Table {
    let mut t = Table::new(
        name,
        title,
        &[
            "method",
            "nudge turn",
            "EM (%)",
            "cond. acc (%)",
            "timeout (%)",
            "n",
        ],
    )
    .with_note("Percent (0-100). Nudge turn = the turn the commitment message comes with: turn:N, or ⌈α·T⌉ for a fraction α of T turns; - without a nudge. Bold = best EM and cond. acc, lowest timeout, per benchmark.");
    per_dataset(a, &mut t, &|s, _| {
        vec![
            nudge_turn(a, &s.arm).map_or(Cell::Missing, |n| Cell::Int(u64::from(n))),
            Cell::Num(s.em, 1),
            Cell::opt(s.cond_acc, 1),
            Cell::Num(s.timeout_rate, 1),
            Cell::Int(s.n as u64),
        ]
    });
    bold_per_block(&mut t, &[2, 3], false);
    bold_per_block(&mut t, &[4], true);
    t
}

/// Tables 11 and 12: one row per value of `key` (turn budget T, search top-k): ReAct's
/// EM and SLEUTH's, where SLEUTH's is the best of its arms at that value (Table 11: the
/// best nudge turn per budget, chosen here from the sweep, not by hand), and the gap.
pub fn per_option(a: &Analysis, name: &str, title: &str, key: &str) -> Table {
    let mut t = Table::new(
        name,
        title,
        &[
            key,
            "ReAct EM (%)",
            "SLEUTH EM (%)",
            "SLEUTH's best arm",
            "nudge turn",
            "Δ (points)",
        ],
    )
    .split("Δ (points)", &["delta"])
    .with_note("Percent (0-100). SLEUTH's EM at each value is its best arm there (ties: the earlier nudge); Δ = SLEUTH minus ReAct. Bold = the larger EM per row.");
    for d in datasets(a, &SLEUTH_ORDER) {
        for model in models(a) {
            let here: Vec<&Summary> = a
                .summaries
                .iter()
                .filter(|s| s.arm.dataset == d && s.arm.model == model)
                .collect();
            let value_of = |s: &Summary| setting(a, &s.arm, key);
            let mut values: Vec<String> = here.iter().filter_map(|s| value_of(s)).collect();
            values.sort_by(|x, y| crate::eval::analysis::sweep_order(x, y));
            values.dedup();
            if values.is_empty() {
                continue;
            }
            t.block(&format!("{} · {model}", dataset_label(&d)));
            for v in values {
                let at = |m: &str| -> Vec<&Summary> {
                    here.iter()
                        .copied()
                        .filter(|s| s.arm.method == m && value_of(s).as_deref() == Some(&v))
                        .collect()
                };
                let react = at("react").into_iter().next();
                let best = at("sleuth").into_iter().max_by(|x, y| {
                    x.em.total_cmp(&y.em).then_with(|| {
                        // The earlier nudge wins a tie (max_by keeps the last maximum).
                        nudge_turn(a, &y.arm).cmp(&nudge_turn(a, &x.arm))
                    })
                });
                let r = t.rows.len();
                t.push(vec![
                    Cell::text(&v),
                    react.map_or(Cell::Missing, |s| Cell::Num(s.em, 1)),
                    best.map_or(Cell::Missing, |s| Cell::Num(s.em, 1)),
                    best.map_or(Cell::Missing, |s| Cell::text(s.arm.name())),
                    best.and_then(|s| nudge_turn(a, &s.arm))
                        .map_or(Cell::Missing, |n| Cell::Int(u64::from(n))),
                    match (react, best) {
                        (Some(x), Some(y)) => {
                            Cell::Multi(signed(y.em - x.em), vec![Cell::Num(y.em - x.em, 1)])
                        }
                        _ => Cell::Missing,
                    },
                ]);
                // Bold compares within the row: the larger EM (both when equal).
                let (x, y) = (t.rows[r][1].first_value(), t.rows[r][2].first_value());
                if let (Some(x), Some(y)) = (x, y) {
                    if x >= y {
                        t.bold.insert((r, 1));
                    }
                    if y >= x {
                        t.bold.insert((r, 2));
                    }
                }
            }
        }
    }
    t
}

/// The comparison of SLEUTH with ReAct on each benchmark, as SLEUTH minus ReAct
/// whichever of the two the report's `--baseline` named.
fn sleuth_vs_react(a: &Analysis) -> Vec<(String, &Comparison, bool)> {
    let mut out = Vec::new();
    for d in datasets(a, &SLEUTH_ORDER) {
        let found = a.comparisons.iter().find_map(|c| {
            let pair = (c.arm.method.as_str(), c.baseline.method.as_str());
            if c.arm.dataset != d || !c.arm.label.is_empty() || !c.baseline.label.is_empty() {
                return None;
            }
            match pair {
                ("sleuth", "react") => Some((c, false)),
                ("react", "sleuth") => Some((c, true)),
                _ => None,
            }
        });
        if let Some((c, flipped)) = found {
            out.push((d, c, flipped));
        }
    }
    out
}

/// Table 13: bootstrap 95% intervals of SLEUTH minus ReAct EM, per benchmark.
pub fn intervals(a: &Analysis) -> Table {
    let mut t = Table::new(
        "sleuth_table13",
        "Bootstrap 95% intervals, SLEUTH − ReAct EM (SLEUTH App. G, Table 13)",
        &[
            "benchmark",
            "n",
            "ΔEM (points)",
            "95% CI",
            "bootstrap p",
            "McNemar p",
        ],
    )
    .split("ΔEM (points)", &["em_diff"])
    .split("95% CI", &["ci_lo", "ci_hi"])
    .with_note(&format!("Points (percent scale), paired by question; interval and p from the paired bootstrap (App. G: 10,000 resamples; p resolves to 2/resamples), McNemar's exact p beside it as a second test; needs {0} sleuth or {0} react (the other direction is negated).", Knob::Baseline.flag()));
    for (d, c, flipped) in sleuth_vs_react(a) {
        // `+ 0.0` turns a negated zero into zero.
        let sign = if flipped { -1.0 } else { 1.0 };
        let (lo, hi) = if flipped {
            (-c.em.hi + 0.0, -c.em.lo + 0.0)
        } else {
            (c.em.lo, c.em.hi)
        };
        let diff = sign * c.em.diff + 0.0;
        t.push(vec![
            Cell::text(dataset_label(&d)),
            Cell::Int(c.n as u64),
            Cell::Multi(signed(diff), vec![Cell::Num(diff, 1)]),
            Cell::Multi(
                format!("[{}, {}]", signed(lo), signed(hi)),
                vec![Cell::Num(lo, 1), Cell::Num(hi, 1)],
            ),
            Cell::Num(c.em.p, 4),
            Cell::Num(c.p_mcnemar, 4),
        ]);
    }
    t
}

/// Table 14: per-question outcomes of SLEUTH against ReAct.
pub fn head_to_head(a: &Analysis) -> Table {
    let mut t = Table::new(
        "sleuth_table14",
        "Per-question outcomes, SLEUTH vs ReAct (SLEUTH App. H, Table 14)",
        &[
            "benchmark",
            "n",
            "SLEUTH wins",
            "ReAct wins",
            "both right",
            "both wrong",
        ],
    )
    .with_note(&format!("Question counts (not percent). SLEUTH wins = SLEUTH right and ReAct wrong on EM; needs {0} sleuth or {0} react.", Knob::Baseline.flag()));
    for (d, c, flipped) in sleuth_vs_react(a) {
        let h = &c.head_to_head;
        let (ours, theirs) = if flipped {
            (h.losses, h.wins)
        } else {
            (h.wins, h.losses)
        };
        t.push(vec![
            Cell::text(dataset_label(&d)),
            Cell::Int(c.n as u64),
            Cell::Int(ours),
            Cell::Int(theirs),
            Cell::Int(h.both_right),
            Cell::Int(h.both_wrong),
        ]);
    }
    t
}
