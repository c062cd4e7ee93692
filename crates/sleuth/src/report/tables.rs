//! The report's tables, built from an [`Analysis`]. Dataset and model columns appear
//! only when the report spans several of them, so a single run reads like the papers'
//! per-method tables. The tidy form of each table (CSV, JSON, JSON Lines) always has
//! `dataset`, `model`, `method` and `label` columns, one value each, so files from
//! different reports concatenate.

use super::table::{Cell, Table};

#[path = "eir_tables.rs"]
mod eir;
use crate::eval::analysis::{Analysis, ArmKey, Outcome, Slice};

/// The name of every table [`all`] can hold, in print order (`--tables` takes them).
pub const NAMES: [&str; 20] = [
    "pivot",
    "summary",
    "comparison",
    "agent",
    "evidence",
    "errors",
    "by_hops",
    "by_kind",
    "sweeps",
    "accuracy_at_turn",
    "memory",
    "eir_support_f1",
    "eir_readable",
    "eir_evidence_errors",
    "eir_final_call",
    "eir_more_reads",
    "eir_after_support",
    "eir_rejected",
    "eir_averages",
    "eir_budget_calls",
];

/// Which identifying columns the report needs.
#[derive(Debug, Clone, Copy)]
struct Dims {
    dataset: bool,
    model: bool,
    /// Every identifying column, the settings label apart from the method.
    tidy: bool,
}

impl Dims {
    fn of(a: &Analysis) -> Dims {
        let distinct = |f: fn(&ArmKey) -> &str| {
            let mut v: Vec<&str> = a.summaries.iter().map(|s| f(&s.arm)).collect();
            v.sort_unstable();
            v.dedup();
            v.len() > 1
        };
        Dims {
            dataset: distinct(|k| &k.dataset),
            model: distinct(|k| &k.model),
            tidy: false,
        }
    }

    const TIDY: Dims = Dims {
        dataset: true,
        model: true,
        tidy: true,
    };

    fn columns<'a>(&self, rest: &[&'a str]) -> Vec<&'a str> {
        let mut c = Vec::new();
        if self.dataset {
            c.push("dataset");
        }
        if self.model {
            c.push("model");
        }
        c.push("method");
        if self.tidy {
            c.push("label");
        }
        c.extend_from_slice(rest);
        c
    }

    fn cells(&self, k: &ArmKey) -> Vec<Cell> {
        let mut c = Vec::new();
        if self.dataset {
            c.push(Cell::text(&k.dataset));
        }
        if self.model {
            c.push(Cell::text(&k.model));
        }
        if self.tidy {
            c.push(Cell::text(&k.method));
            c.push(Cell::text(&k.label));
        } else {
            c.push(Cell::text(k.name()));
        }
        c
    }

    /// A one-string arm name for figure legends.
    pub fn legend(&self, k: &ArmKey) -> String {
        let mut s = k.name();
        if self.model {
            s = format!("{s} ({})", k.model);
        }
        if self.dataset {
            s = format!("{}: {s}", k.dataset);
        }
        s
    }
}

/// The name of `k` as the report's figures show it.
pub fn legend(a: &Analysis, k: &ArmKey) -> String {
    Dims::of(a).legend(k)
}

/// Every table of the report, in print order, for Markdown. Tables with no rows are
/// left out.
pub fn all(a: &Analysis) -> Vec<Table> {
    build(a, Dims::of(a))
}

/// The same tables in tidy form, for CSV, JSON and JSON Lines.
pub fn tidy(a: &Analysis) -> Vec<Table> {
    build(a, Dims::TIDY)
}

fn build(a: &Analysis, d: Dims) -> Vec<Table> {
    [
        super::pivot::pivot(a, d.tidy),
        summary(a, d),
        comparison(a, d),
        agent(a, d),
        evidence(a, d),
        errors(a, d),
        slices(&a.by_hops, d, "by_hops", "EM by hop count", "hops"),
        slices(&a.by_kind, d, "by_kind", "EM by question type", "type"),
        sweeps(a),
        accuracy_at_turn(a, d),
        memory(a, d),
    ]
    .into_iter()
    .chain(eir::tables(a, d))
    .filter(|t| !t.rows.is_empty())
    .collect()
}

/// The tables printed on the terminal by default (the long per-turn ones go to files).
pub fn terminal(a: &Analysis) -> Vec<Table> {
    all(a)
        .into_iter()
        .filter(|t| t.name != "accuracy_at_turn" && t.name != "memory")
        .collect()
}

fn summary(a: &Analysis, d: Dims) -> Table {
    let mut names = vec![
        "n",
        "EM %",
        "F1 %",
        "cond. acc %",
        "timeout %",
        "turns",
        "calls/q",
        "tokens/q",
        "cached %",
        "cost/q",
    ];
    // EIR App. D.5 (Tables 9, 19): costs at the fixed list prices. Shown only where some
    // arm's billed cost differs (cache hits, prompt-cache discounts), so reports of
    // uncached runs are unchanged.
    let list_cost = a
        .summaries
        .iter()
        .any(|s| (s.list_cost_usd - s.cost_usd).abs() > 1e-12);
    if list_cost {
        names.push("list cost/q");
    }
    // Shown only when some arm had a problem, so clean reports are unchanged.
    let problems = a.summaries.iter().any(|s| !s.problems.lines().is_empty());
    if problems {
        names.push("problems");
    }
    let mut note = "EM, F1, cond. acc (EM among finished episodes) and timeout in %; turns, calls, tokens (input + output) and cost (USD) are means per question; cached % = share of input tokens read from the provider's prompt cache (billed at its cached rate).".to_string();
    if list_cost {
        note += " list cost/q: the recorded tokens at the fixed list prices (EIR App. D.5, Tables 9 and 19), every input and output token at its list rate; cost/q is what was billed (response-cache hits cost 0, prompt-cache reads their cached rate, calls in a provider batch its batch rate).";
    }
    if problems {
        note += " Problems are counts: episodes with errors or ending on an unparseable response; calls sent without their output constraint, cut by the output-token limit, or refused.";
    }
    // The unit is in the label (percent, where records keep fractions); the tidy keys
    // stay `em`, `f1`, `cond_acc`.
    let mut t = Table::new(
        "summary",
        "Accuracy and cost per method",
        &d.columns(&names),
    )
    .split("EM %", &["em"])
    .split("F1 %", &["f1"])
    .split("cond. acc %", &["cond_acc"])
    .with_note(&note);
    for s in &a.summaries {
        let mut row = d.cells(&s.arm);
        row.extend([
            Cell::Int(s.n as u64),
            Cell::Num(s.em, 1),
            Cell::Num(s.f1, 1),
            Cell::opt(s.cond_acc, 1),
            Cell::Num(s.timeout_rate, 1),
            Cell::Num(s.mean_turns, 1),
            Cell::Num(s.calls, 2),
            Cell::Num(s.input_tokens + s.output_tokens, 0),
            Cell::opt(s.cached_share, 1),
            Cell::Num(s.cost_usd, 4),
        ]);
        if list_cost {
            row.push(Cell::Num(s.list_cost_usd, 4));
        }
        if problems {
            let found = s.problems.lines();
            row.push(if found.is_empty() {
                Cell::Missing
            } else {
                Cell::text(found.join(", "))
            });
        }
        t.push(row);
    }
    t
}

/// How the comparison notes name their Holm families (and their counted size): the
/// paired comparison and the EIR Support F1 table share the report's families.
fn holm_note(a: &Analysis) -> String {
    match a.holm_size {
        0 => a.holm_family.describe().to_string(),
        n => format!(
            "{}, each family counted as {n} comparisons (those not shown as p = 1)",
            a.holm_family.describe()
        ),
    }
}

/// `<1e-4`-style p-values keep the table narrow without hiding tiny values.
fn p_cell(p: f64) -> Cell {
    if p < 1e-4 {
        Cell::Multi(format!("{p:.1e}"), vec![Cell::Num(p, 4)])
    } else {
        Cell::Num(p, 4)
    }
}

fn ci(v: &crate::eval::stats::BootstrapCi) -> Cell {
    Cell::Multi(
        format!("{:+.1} [{:+.1}, {:+.1}]", v.diff, v.lo, v.hi),
        vec![Cell::Num(v.diff, 1), Cell::Num(v.lo, 1), Cell::Num(v.hi, 1)],
    )
}

/// Counts shown as `a/b/c`.
fn counts(values: &[u64]) -> Cell {
    let shown: Vec<String> = values.iter().map(u64::to_string).collect();
    Cell::Multi(
        shown.join("/"),
        values.iter().map(|v| Cell::Int(*v)).collect(),
    )
}

fn comparison(a: &Analysis, d: Dims) -> Table {
    let cols = d.columns(&[
        "baseline",
        "n",
        "ΔEM [95% CI]",
        "ΔF1 [95% CI]",
        "F1 p",
        "F1 Holm p",
        "b/c",
        "McNemar p",
        "EM Holm p",
        "W/L/T",
    ]);
    let title = format!(
        "Paired comparison with {}",
        a.baseline.as_deref().unwrap_or("the baseline")
    );
    let mut t = Table::new("comparison", &title, &cols)
        .split("ΔEM [95% CI]", &["em_diff", "em_ci_lo", "em_ci_hi"])
        .split("ΔF1 [95% CI]", &["f1_diff", "f1_ci_lo", "f1_ci_hi"])
        .split("F1 p", &["p_f1"])
        .split("F1 Holm p", &["p_f1_holm"])
        .split("b/c", &["b", "c"])
        .split("McNemar p", &["p"])
        .split("EM Holm p", &["p_holm"])
        .split("W/L/T", &["wins", "losses", "ties"])
        .with_note(&format!(
            "Differences are {} in points, with paired bootstrap 95% intervals; F1 p = the bootstrap p of ΔF1 (EIR §4.4), F1 Holm p its Holm adjustment; b/c = {}; exact two-sided McNemar on EM, EM Holm p its Holm adjustment; Holm {}; W/L/T = wins/losses/ties on EM.",
            a.direction.describe(),
            a.direction.b_c(),
            holm_note(a)
        ));
    for c in &a.comparisons {
        let h = &c.head_to_head;
        let mut row = d.cells(&c.arm);
        row.extend([
            Cell::text(c.baseline.name()),
            Cell::Int(c.n as u64),
            ci(&c.em),
            ci(&c.f1),
            p_cell(c.f1.p),
            p_cell(c.p_f1_holm),
            counts(&[c.b, c.c]),
            p_cell(c.p_mcnemar),
            p_cell(c.p_holm),
            counts(&[h.wins, h.losses, h.ties()]),
        ]);
        t.push(row);
    }
    t
}

fn agent(a: &Analysis, d: Dims) -> Table {
    let kinds = union_of_keys(a.summaries.iter().map(|s| &s.calls_by_kind));
    let kind_cols: Vec<String> = kinds.iter().map(|k| format!("{k} calls")).collect();
    let mut rest = vec![
        "support recall",
        "adherence %",
        "reminders",
        "nudged %",
        "retries",
        "errors",
        "in tok/q",
        "out tok/q",
        "cached/q",
        "cache writes/q",
    ];
    rest.extend(kind_cols.iter().map(String::as_str));
    // Truncated and refused calls are shown only when a run had some, so reports of
    // runs without them are unchanged.
    let stops = a
        .summaries
        .iter()
        .any(|s| s.problems.truncated_calls + s.problems.refusals > 0);
    if stops {
        rest.extend(["truncated", "refused"]);
    }
    let mut note = "Support recall = % of gold paragraphs retrieved; adherence = % of turns in the memory notation; reminders, retries, tokens and calls are means per question (cached = input tokens read from the provider's prompt cache, cache writes = written to it); errors = records that ended in an error.".to_string();
    if stops {
        note += " Truncated = calls cut by the output-token limit, refused = calls the model refused (totals; records list them in call_stops).";
    }
    let mut t =
        Table::new("agent", "Agent behaviour per method", &d.columns(&rest)).with_note(&note);
    for s in &a.summaries {
        let mut row = d.cells(&s.arm);
        row.extend([
            Cell::opt(s.support_recall, 1),
            Cell::opt(s.adherence, 1),
            Cell::Num(s.reminders, 2),
            Cell::Num(s.nudge_rate, 1),
            Cell::Num(s.retries, 2),
            Cell::Int(s.problems.errors),
            Cell::Num(s.input_tokens, 0),
            Cell::Num(s.output_tokens, 0),
            Cell::Num(s.cached_input_tokens, 0),
            Cell::Num(s.cache_write_tokens, 0),
        ]);
        row.extend(
            kinds
                .iter()
                .map(|k| Cell::opt(s.calls_by_kind.get(k).copied(), 2)),
        );
        if stops {
            row.extend([
                Cell::Int(s.problems.truncated_calls),
                Cell::Int(s.problems.refusals),
            ]);
        }
        t.push(row);
    }
    t
}

/// The keys of several per-arm maps, sorted, each once: one column per key.
fn union_of_keys<'a>(
    maps: impl Iterator<Item = &'a std::collections::BTreeMap<String, f64>>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = maps.flat_map(|m| m.keys()).collect();
    keys.into_iter().cloned().collect()
}

fn evidence(a: &Analysis, d: Dims) -> Table {
    let causes = union_of_keys(
        a.summaries
            .iter()
            .filter_map(|s| s.evidence.as_ref())
            .map(|e| &e.rejected_by_cause),
    );
    let cause_cols: Vec<String> = causes.iter().map(|c| format!("rejected: {c}")).collect();
    let mut rest = vec![
        "n",
        "support F1",
        "gold recall %",
        "read/q",
        "rejected/q",
        "parse failures %",
    ];
    rest.extend(cause_cols.iter().map(String::as_str));
    let mut t = Table::new(
        "evidence",
        "Evidence and rejected actions (EIR setting)",
        &d.columns(&rest),
    )
    .with_note(
        "Support F1 of the cited evidence against the annotations and gold-paragraph recall in %; paragraphs read and rejected actions are means per question; parse failures = % of episodes that ended on an unparseable response.",
    );
    for s in &a.summaries {
        let Some(e) = &s.evidence else { continue };
        let mut row = d.cells(&s.arm);
        row.extend([
            Cell::Int(e.n as u64),
            Cell::Num(e.support_f1, 1),
            Cell::Num(e.gold_recall, 1),
            Cell::Num(e.paragraphs_read, 2),
            Cell::Num(e.rejected, 2),
            Cell::Num(e.parse_failures, 1),
        ]);
        row.extend(
            causes
                .iter()
                .map(|c| Cell::Num(e.rejected_by_cause.get(c).copied().unwrap_or(0.0), 2)),
        );
        t.push(row);
    }
    t
}

fn errors(a: &Analysis, d: Dims) -> Table {
    let mut rest = vec!["n"];
    rest.extend(Outcome::ALL.iter().map(|o| o.name()));
    rest.extend(["timed out", "gold in history %"]);
    let mut t = Table::new("errors", "Error decomposition (% of questions)", &d.columns(&rest))
        // A report is a document in the CLI's words, whoever wrote it.
        .with_note(&format!(
            "unfinished = no answer before the budget ran out (context overflow, unparseable response, error); verbose = a wrong answer containing the gold answer; other = a partial match (some of the gold's words), or a wrong answer without the evidence; reasoning = any other wrong answer, given after a gold paragraph was retrieved ({} all: every one); gold in history = % of timed-out episodes whose observations contain the gold answer.",
            crate::knob::Knob::ReasoningEvidence.flag()
        ));
    for e in &a.errors {
        let mut row = d.cells(&e.arm);
        row.push(Cell::Int(e.n as u64));
        row.extend(Outcome::ALL.iter().map(|o| Cell::Num(e.percent[o], 1)));
        row.push(Cell::Int(e.timed_out as u64));
        row.push(Cell::opt(e.gold_in_history_rate, 1));
        t.push(row);
    }
    t
}

fn slices(slices: &[Slice], d: Dims, name: &str, title: &str, label: &str) -> Table {
    let cols = d.columns(&[label, "n", "EM %", "F1 %", "cond. acc %", "timeout %"]);
    let mut t = Table::new(name, title, &cols)
        .split("EM %", &["em"])
        .split("F1 %", &["f1"])
        .split("cond. acc %", &["cond_acc"]);
    for s in slices {
        let m = &s.summary;
        let mut row = d.cells(&m.arm);
        row.extend([
            Cell::text(&s.value),
            Cell::Int(m.n as u64),
            Cell::Num(m.em, 1),
            Cell::Num(m.f1, 1),
            Cell::opt(m.cond_acc, 1),
            Cell::Num(m.timeout_rate, 1),
        ]);
        t.push(row);
    }
    // A breakdown with a single value repeats the summary: not worth printing.
    let distinct = slices
        .iter()
        .map(|s| &s.value)
        .collect::<std::collections::BTreeSet<_>>();
    if distinct.len() < 2 {
        t.rows.clear();
    }
    t
}

fn sweeps(a: &Analysis) -> Table {
    let cols = [
        "dataset",
        "model",
        "method",
        "option",
        "with",
        "value",
        "n",
        "EM %",
        "timeout %",
    ];
    let mut t = Table::new("sweeps", "Option sweeps", &cols)
        .split("EM %", &["em"])
        .with_note(
        "One sweep per option and per value of the other options (\"with\"), so a point never mixes two settings.",
    );
    for s in &a.sweeps {
        for p in &s.points {
            t.push(vec![
                Cell::text(&s.dataset),
                Cell::text(&s.model),
                Cell::text(&s.method),
                Cell::text(&s.key),
                Cell::text(&s.fixed),
                Cell::text(&p.value),
                Cell::Int(p.n as u64),
                Cell::Num(p.em, 1),
                Cell::Num(p.timeout_rate, 1),
            ]);
        }
    }
    t
}

fn accuracy_at_turn(a: &Analysis, d: Dims) -> Table {
    if d.tidy {
        // Long form: one row per arm and turn.
        let mut t = Table::new(
            "accuracy_at_turn",
            "Accuracy (EM %) at turn t",
            &d.columns(&["turn", "em"]),
        );
        for c in &a.accuracy_at_turn {
            for (i, v) in c.accuracy.iter().enumerate() {
                let mut row = d.cells(&c.arm);
                row.extend([Cell::Int(i as u64 + 1), Cell::Num(*v, 1)]);
                t.push(row);
            }
        }
        return t;
    }
    let names: Vec<String> = a
        .accuracy_at_turn
        .iter()
        .map(|c| d.legend(&c.arm))
        .collect();
    let mut cols = vec!["turn"];
    cols.extend(names.iter().map(String::as_str));
    let mut t = Table::new("accuracy_at_turn", "Accuracy (EM %) at turn t", &cols);
    for turn in 1..=a.max_turn {
        let mut row = vec![Cell::Int(u64::from(turn))];
        row.extend(
            a.accuracy_at_turn
                .iter()
                .map(|c| Cell::Num(c.accuracy[turn as usize - 1], 1)),
        );
        t.push(row);
    }
    t
}

fn memory(a: &Analysis, d: Dims) -> Table {
    let cols = d.columns(&[
        "cohort",
        "turn",
        "n",
        "facts",
        "hypotheses",
        "open questions",
    ]);
    let mut t = Table::new("memory", "Working memory per turn (fixed cohort)", &cols)
        .split("cohort", &["min_turns", "cohort"]);
    for m in &a.memory {
        for p in &m.turns {
            let mut row = d.cells(&m.arm);
            row.extend([
                Cell::Multi(
                    format!("≥{} turns ({})", m.min_turns, m.cohort),
                    vec![
                        Cell::Int(u64::from(m.min_turns)),
                        Cell::Int(m.cohort as u64),
                    ],
                ),
                Cell::Int(u64::from(p.turn)),
                Cell::Int(p.n as u64),
                Cell::Num(p.facts, 2),
                Cell::Num(p.hypotheses, 2),
                Cell::Num(p.questions, 2),
            ]);
            t.push(row);
        }
    }
    t
}
