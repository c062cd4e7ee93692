//! The report's EIR-paper section: one table per analysis of [`EirSection`], each named
//! after the paper's table it reproduces. Tables without rows are dropped by the caller,
//! so a report of SLEUTH-setting runs shows none of them.

use super::{ci, counts, p_cell, Dims};
use crate::eval::analysis::{Analysis, BeforeAfter};
use crate::report::table::{Cell, Table};

pub(super) fn tables(a: &Analysis, d: Dims) -> Vec<Table> {
    vec![
        support(a, d),
        readable(a, d),
        evidence_errors(a, d),
        final_vs_retrieval(a, d),
        recovery(a, d),
        recovery_overlaps(a, d),
        more_reads(a, d),
        after_support(a, d),
        rejected(a, d),
        averages(a),
        budget_calls(a),
    ]
}

fn averages(a: &Analysis) -> Table {
    let mut t = Table::new(
        "eir_averages",
        "Averages over benchmarks and models (EIR App. D.5, Table 9)",
        &["method", "cells", "F1", "EM", "calls/q", "cost/q", "calls ratio", "cost ratio"],
    )
    .with_note("Each method's mean over its dataset x model cells, every cell weighted equally; ratios divide by EIR's mean (no ratio without an eir arm). cost/q is at the fixed list prices (App. D.5): every recorded input and output token at its model's list rate, with no response-cache or prompt-cache saving.");
    for c in &a.eir.averages {
        t.push(vec![
            Cell::text(&c.method),
            Cell::Int(c.cells as u64),
            Cell::Num(c.f1, 2),
            Cell::Num(c.em, 2),
            Cell::Num(c.calls_per_q, 2),
            Cell::Num(c.cost_per_q, 4),
            Cell::opt(c.calls_ratio, 2),
            Cell::opt(c.cost_ratio, 2),
        ]);
    }
    t
}

fn budget_calls(a: &Analysis) -> Table {
    let mut t = Table::new(
        "eir_budget_calls",
        "Mean calls per question by read budget (EIR App. E.1, Table 10)",
        &[
            "dataset",
            "model",
            "method",
            "calls/q by reads",
            "largest reads",
            "increase over reads=6 %",
        ],
    )
    .with_note(
        "The final answer call included; the increase is the largest budget's calls over H = 6's.",
    );
    for b in &a.eir.budget_calls {
        let by_h: Vec<String> = b
            .calls
            .iter()
            .map(|(h, c)| format!("{h}: {c:.2}"))
            .collect();
        t.push(vec![
            Cell::text(&b.dataset),
            Cell::text(&b.model),
            Cell::text(&b.method),
            Cell::text(by_h.join(", ")),
            b.increase
                .as_ref()
                .map_or(Cell::Missing, |(h, _)| Cell::text(h)),
            Cell::opt(b.increase.as_ref().map(|(_, p)| *p), 1),
        ]);
    }
    t
}

/// `text` with its first letter upper-cased.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn support(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_support_f1",
        "Support F1, paired (EIR Tables 5 and 8)",
        &d.columns(&["baseline", "n", "ΔSupport F1 [95% CI]", "p", "Holm p"]),
    )
    .split(
        "ΔSupport F1 [95% CI]",
        &["support_f1_diff", "support_f1_ci_lo", "support_f1_ci_hi"],
    )
    .split("Holm p", &["p_holm"])
    .with_note(&format!(
        "{} in points on every question both ran (Tables 5, 8: all questions; one without a Support F1, such as no answer, counts as 0), paired bootstrap; Holm {}.",
        capitalized(a.direction.describe()),
        super::holm_note(a)
    ));
    for c in &a.eir.support {
        let mut row = d.cells(&c.arm);
        row.extend([
            Cell::text(c.baseline.name()),
            Cell::Int(c.n as u64),
            ci(&c.diff),
            p_cell(c.diff.p),
            p_cell(c.p_holm),
        ]);
        t.push(row);
    }
    t
}

fn readable(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_readable",
        "Answer F1 on readable outputs only (EIR App. C.2)",
        &d.columns(&["baseline", "unreadable %", "baseline unreadable %", "n both readable", "ΔF1 [95% CI]", "p", "b/c", "McNemar p"]),
    )
    .split("ΔF1 [95% CI]", &["f1_diff", "f1_ci_lo", "f1_ci_hi"])
    .split("b/c", &["b", "c"])
    .split("McNemar p", &["p_mcnemar"])
    .with_note(&format!("Unreadable: no answer could be read in the required format. ΔF1 (paired bootstrap) and the EM test (b/c = {}, exact two-sided McNemar) are {} on the questions where both answers were readable.", a.direction.b_c().replace("questions right", "exact"), a.direction.describe().replace(" minus ", " against ")));
    for c in &a.eir.readable {
        let mut row = d.cells(&c.arm);
        row.extend([
            Cell::text(c.baseline.name()),
            Cell::Num(c.unreadable_arm, 1),
            Cell::Num(c.unreadable_baseline, 1),
            Cell::Int(c.n as u64),
            ci(&c.f1),
            p_cell(c.f1.p),
            counts(&[c.b, c.c]),
            p_cell(c.p_mcnemar),
        ]);
        t.push(row);
    }
    t
}

fn evidence_errors(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_evidence_errors",
        "EM errors by evidence read (EIR App. F.1, Table 15, Figure 3)",
        &d.columns(&[
            "n",
            "incomplete errors % of n",
            "EM errors",
            "complete",
            "incomplete",
            "incomplete % [95% CI]",
            "complete errors % of n",
            "missing 1/2/3+",
        ]),
    )
    .split(
        "incomplete % [95% CI]",
        &["incomplete_pct", "incomplete_ci_lo", "incomplete_ci_hi"],
    )
    .split("missing 1/2/3+", &["missing_1", "missing_2", "missing_3_plus"])
    .with_note("Complete: every annotated supporting paragraph was read. Incomplete % divides by EM errors (Wilson interval); incomplete and complete errors % of n divide by all answers: Figure 3's two panels (evidence_errors_incomplete.svg, evidence_errors_complete.svg).");
    for e in &a.eir.evidence_errors {
        let mut row = d.cells(&e.arm);
        row.extend([
            Cell::Int(e.n as u64),
            Cell::Num(e.incomplete_errors_share, 1),
            Cell::Int(e.errors as u64),
            Cell::Int(e.complete as u64),
            Cell::Int(e.incomplete as u64),
            Cell::Multi(
                format!("{:.2} [{:.2}, {:.2}]", e.incomplete_pct, e.ci.0, e.ci.1),
                vec![
                    Cell::Num(e.incomplete_pct, 2),
                    Cell::Num(e.ci.0, 2),
                    Cell::Num(e.ci.1, 2),
                ],
            ),
            Cell::Num(e.complete_errors_share, 1),
            counts(&[
                e.missing[0] as u64,
                e.missing[1] as u64,
                e.missing[2] as u64,
            ]),
        ]);
        t.push(row);
    }
    t
}

fn final_vs_retrieval(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_final_call",
        "Final call versus the trajectory's own answer (EIR App. H.4)",
        &d.columns(&["n submitted", "forced endings", "F1 retrieval", "F1 final", "ΔF1", "EM gained", "EM lost"]),
    )
    .with_note("On runs whose trajectory submitted an answer; forced endings (no submission) are left out and counted.");
    for f in &a.eir.final_vs_retrieval {
        let mut row = d.cells(&f.arm);
        row.extend([
            Cell::Int(f.n as u64),
            Cell::Int(f.forced_endings as u64),
            Cell::Num(f.f1_retrieval, 2),
            Cell::Num(f.f1_final, 2),
            Cell::Num(f.f1_final - f.f1_retrieval, 2),
            Cell::Int(f.em_gained as u64),
            Cell::Int(f.em_lost as u64),
        ]);
        t.push(row);
    }
    t
}

fn more_reads(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_more_reads",
        "Additional retrieval on every question (EIR App. F.4, Table 17)",
        &d.columns(&["n", "more requested %", "read more %", "EM before", "EM after", "F1 before", "F1 after", "ΔF1 [95% CI]", "gained/lost", "McNemar p", "Support F1 before → after", "support read % before → after", "calls/q before → after"]),
    )
    .split("ΔF1 [95% CI]", &["f1_gain", "f1_gain_ci_lo", "f1_gain_ci_hi"])
    .split("gained/lost", &["gained", "lost"])
    .split("Support F1 before → after", &["support_f1_before", "support_f1_after"])
    .split("support read % before → after", &["recall_before", "recall_after"])
    .split("calls/q before → after", &["calls_before", "calls_after"])
    .with_note("Before: the first final answer; after: the answer once the extra reads (if any) were added, paired within each record. ΔF1: after minus before, paired bootstrap; gained/lost count exact matches, McNemar p tests them. Support F1 of the cited evidence and the share of the benchmark's supporting paragraphs read (MuSiQue's annotated paragraphs; HotpotQA's and 2Wiki's supporting-fact titles; - without annotations), before and after; calls per question up to the first final answer, and in all.");
    for m in &a.eir.more_reads {
        let mut row = d.cells(&m.arm);
        row.extend([
            Cell::Int(m.n as u64),
            Cell::Num(m.requested, 2),
            Cell::Num(m.read, 2),
            Cell::Num(m.em_before, 2),
            Cell::Num(m.em_after, 2),
            Cell::Num(m.f1_before, 2),
            Cell::Num(m.f1_after, 2),
            m.f1_gain.as_ref().map_or(Cell::Missing, ci),
            counts(&[m.gained as u64, m.lost as u64]),
            p_cell(m.em_p),
            before_after(m.support_f1, 2),
            before_after(m.recall, 2),
            before_after(m.calls, 2),
        ]);
        t.push(row);
    }
    t
}

fn recovery(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_recovery",
        "Known failures answered again (EIR App. F.2, F.3, Table 16)",
        &d.columns(&["recover", "n", "exact", "exact % [95% CI]", "McNemar p", "F1 before", "F1 after", "ΔF1 [95% CI]", "exact after a read"]),
    )
    .split("exact % [95% CI]", &["exact_pct", "exact_ci_lo", "exact_ci_hi"])
    .split("ΔF1 [95% CI]", &["f1_gain", "f1_gain_ci_lo", "f1_gain_ci_hi"])
    .with_note("n: the earlier EIR errors answered again (the paper's NN); exact % divides exact by n (Wilson interval); McNemar p tests the earlier answers' EM against the new ones; ΔF1 is new minus earlier, paired bootstrap; exact after a read (selected): matches that follow a successful additional read.");
    for r in &a.eir.recovery {
        let mut row = d.cells(&r.arm);
        row.extend([
            Cell::text(&r.mode),
            Cell::Int(r.n as u64),
            Cell::Int(r.exact as u64),
            Cell::Multi(
                format!(
                    "{:.2} [{:.2}, {:.2}]",
                    r.exact_pct, r.exact_ci.0, r.exact_ci.1
                ),
                vec![
                    Cell::Num(r.exact_pct, 2),
                    Cell::Num(r.exact_ci.0, 2),
                    Cell::Num(r.exact_ci.1, 2),
                ],
            ),
            p_cell(r.mcnemar_p),
            Cell::Num(r.f1_before, 2),
            Cell::Num(r.f1_after, 2),
            r.f1_gain.as_ref().map_or(Cell::Missing, ci),
            r.exact_after_read
                .map_or(Cell::Missing, |k| Cell::Int(k as u64)),
        ]);
        t.push(row);
    }
    t
}

fn recovery_overlaps(a: &Analysis, _d: Dims) -> Table {
    let mut t = Table::new(
        "eir_recovery_overlap",
        "Exact under two recovery procedures (EIR App. F.2)",
        &[
            "dataset",
            "model",
            "first",
            "second",
            "n",
            "both",
            "only first",
            "only second",
        ],
    )
    .with_note(
        "On the questions both procedures answered again: exact under both, or under one only.",
    );
    for o in &a.eir.recovery_overlaps {
        t.push(vec![
            Cell::text(&o.dataset),
            Cell::text(&o.model),
            Cell::text(&o.first),
            Cell::text(&o.second),
            Cell::Int(o.n as u64),
            Cell::Int(o.both as u64),
            Cell::Int(o.only_first as u64),
            Cell::Int(o.only_second as u64),
        ]);
    }
    t
}

fn after_support(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_after_support",
        "Calls after annotated support is first acquired (EIR App. H.4, Table 21)",
        &d.columns(&["questions", "action calls", "reflection calls", "final calls"]),
    )
    .with_note("Questions: runs in which a trajectory (for Reflexion, at least one trial) read every annotated paragraph; totals exclude the read that completes that support. Agentic SSR is not covered.");
    for s in &a.eir.after_support {
        let mut row = d.cells(&s.arm);
        row.extend([
            Cell::Int(s.questions as u64),
            Cell::Int(s.action_calls),
            Cell::Int(s.reflection_calls),
            Cell::Int(s.final_calls),
        ]);
        t.push(row);
    }
    t
}

fn rejected(a: &Analysis, d: Dims) -> Table {
    let mut t = Table::new(
        "eir_rejected",
        "Rejected actions with denominators (EIR App. H.4, Table 22)",
        &d.columns(&[
            "actions",
            "rejected",
            "rejected %",
            "forced endings",
            "by cause",
        ]),
    )
    .with_note(
        "Actions: recorded action turns of every trial (reflections, final calls and unfinished requests excluded).",
    );
    for r in &a.eir.rejected {
        let mut row = d.cells(&r.arm);
        let causes = r
            .by_cause
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        row.extend([
            Cell::Int(r.actions),
            Cell::Int(r.rejected),
            Cell::Num(r.rate, 2),
            Cell::Int(r.forced_endings as u64),
            Cell::text(causes),
        ]);
        t.push(row);
    }
    t
}

/// `before → after`, or missing.
fn before_after(x: Option<BeforeAfter>, decimals: usize) -> Cell {
    x.map_or(Cell::Missing, |x| {
        Cell::Multi(
            format!("{:.d$} → {:.d$}", x.before, x.after, d = decimals),
            vec![Cell::Num(x.before, decimals), Cell::Num(x.after, decimals)],
        )
    })
}
