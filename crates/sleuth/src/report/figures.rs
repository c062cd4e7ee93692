//! The report's figures: EM by hop count, paired differences from the baseline with
//! their 95% intervals, option sweeps, accuracy at turn t, and working-memory
//! dynamics, as SVG files named for what they show. Figures are split per dataset
//! (`em_by_hops_musique.svg`) so arms of one benchmark share an axis, and each caption
//! gives n and the model.

use super::svg::{bar_chart, bar_line_chart, diff_chart, line_chart_marked, Series};
use super::tables::legend;
use crate::eval::analysis::{Analysis, ArmKey};
use std::collections::BTreeSet;

/// The `--set` key of EIR's read budget H (App. E.1).
const EIR_READ_BUDGET: &str = "reads";

/// One figure: its file name in `--out` and its SVG text.
#[derive(Debug, Clone)]
pub struct Figure {
    pub file: String,
    pub svg: String,
}

/// Every figure the analysis supports (none for data it lacks).
pub fn all(a: &Analysis) -> Vec<Figure> {
    let mut out = Vec::new();
    // EM by hop count reads the pooled arms (MuSiQue's splits side by side, Figure 2a).
    let pooled: BTreeSet<String> = a
        .by_hops
        .iter()
        .map(|s| s.summary.arm.dataset.clone())
        .collect();
    out.extend(pooled.iter().filter_map(|d| em_by_hops(a, d)));
    out.extend(figure_2a(a));
    for d in datasets(a) {
        out.extend(comparison(a, &d));
        out.extend(accuracy_at_turn(a, &d));
    }
    out.extend(sweeps(a));
    out.extend(memory(a));
    out.extend(evidence_errors(a));
    out
}

/// EIR Figure 3 (§5 "Evidence Availability", App. F.1): EIR's EM errors with incomplete
/// and with complete evidence, each as % of all answers, one panel each, bars per
/// benchmark and one series per model (every arm with the errors when no `eir` arm has).
fn evidence_errors(a: &Analysis) -> Vec<Figure> {
    let all = &a.eir.evidence_errors;
    let eir: Vec<_> = all.iter().filter(|e| e.arm.method == "eir").collect();
    let here: Vec<_> = if eir.is_empty() {
        all.iter().collect()
    } else {
        eir
    };
    if here.is_empty() {
        return Vec::new();
    }
    let categories: Vec<String> = here
        .iter()
        .map(|e| e.arm.dataset.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let arms: Vec<&ArmKey> = here.iter().map(|e| &e.arm).collect();
    let lines: BTreeSet<(String, String)> =
        arms.iter().map(|k| (k.name(), k.model.clone())).collect();
    let panel = |stem: &str, what: &str, f: fn(&crate::eval::analysis::EvidenceErrors) -> f64| {
        let series: Vec<Series> = lines
            .iter()
            .map(|(method, model)| {
                let values = categories
                    .iter()
                    .map(|d| {
                        here.iter()
                            .find(|e| {
                                &e.arm.dataset == d
                                    && &e.arm.name() == method
                                    && &e.arm.model == model
                            })
                            .map(|e| f(e))
                    })
                    .collect();
                Series::new(format!("{method} · {model}"), values)
            })
            .collect();
        Figure {
            file: format!("evidence_errors_{stem}.svg"),
            svg: bar_chart(
                &format!("EM errors with {what} evidence, % of all answers"),
                &caption(a, &arms),
                "benchmark",
                "% of answers",
                &categories,
                &series,
            ),
        }
    };
    vec![
        panel("incomplete", "incomplete", |e| e.incomplete_errors_share),
        panel("complete", "complete", |e| e.complete_errors_share),
    ]
}

fn datasets(a: &Analysis) -> Vec<String> {
    a.summaries
        .iter()
        .map(|s| s.arm.dataset.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `<stem>_<dataset>.svg`.
fn file(stem: &str, dataset: &str) -> String {
    format!("{stem}_{}.svg", slug(dataset))
}

/// `n = 8 questions per arm · model m` over the arms of `keys`.
fn caption(a: &Analysis, keys: &[&ArmKey]) -> String {
    let ns: BTreeSet<usize> = a
        .summaries
        .iter()
        .filter(|s| keys.contains(&&s.arm))
        .map(|s| s.n)
        .collect();
    let n = match (ns.first(), ns.last()) {
        (Some(lo), Some(hi)) if lo == hi => format!("n = {lo} questions per arm"),
        (Some(lo), Some(hi)) => format!("n = {lo}–{hi} questions per arm"),
        _ => "n = 0".to_string(),
    };
    let models: BTreeSet<&str> = keys.iter().map(|k| k.model.as_str()).collect();
    let label = if models.len() == 1 { "model" } else { "models" };
    format!(
        "{n} · {label} {}",
        models.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// The caption of an EM-by-hops figure: questions per arm summed over its slices
/// (its arms are the pooled ones, which the summaries split).
fn hops_caption(here: &[&crate::eval::analysis::Slice], arms: &[&ArmKey]) -> String {
    let ns: BTreeSet<usize> = arms
        .iter()
        .map(|k| {
            here.iter()
                .filter(|s| &s.summary.arm == *k)
                .map(|s| s.summary.n)
                .sum()
        })
        .collect();
    let n = match (ns.first(), ns.last()) {
        (Some(lo), Some(hi)) if lo == hi => format!("n = {lo} questions per arm"),
        (Some(lo), Some(hi)) => format!("n = {lo}–{hi} questions per arm"),
        _ => "n = 0".to_string(),
    };
    let models: BTreeSet<&str> = arms.iter().map(|k| k.model.as_str()).collect();
    let label = if models.len() == 1 { "model" } else { "models" };
    format!(
        "{n} · {label} {}",
        models.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// Legend names within one dataset's figure (the dataset is in the title).
fn name(a: &Analysis, k: &ArmKey) -> String {
    let full = legend(a, k);
    full.strip_prefix(&format!("{}: ", k.dataset))
        .map_or(full.clone(), str::to_string)
}

fn em_by_hops(a: &Analysis, dataset: &str) -> Option<Figure> {
    hops_figure(
        a,
        dataset,
        &|_| true,
        file("em_by_hops", dataset),
        &format!("EM by hop count: {dataset}"),
    )
}

/// SLEUTH Figure 2(a): EM against hop count on MuSiQue for SLEUTH and ReAct, every
/// model of the report on one plot (a report over the Table 1 and cross-model runs
/// shows both), with the per-bar n and 95% intervals.
fn figure_2a(a: &Analysis) -> Option<Figure> {
    let models: BTreeSet<&str> = a
        .by_hops
        .iter()
        .filter(|s| s.summary.arm.dataset == "musique")
        .map(|s| s.summary.arm.model.as_str())
        .collect();
    hops_figure(
        a,
        "musique",
        &|k| (k.method == "sleuth" || k.method == "react") && k.label.is_empty(),
        "figure2a_em_by_hops.svg".into(),
        &format!(
            "EM vs reasoning depth, SLEUTH and ReAct (SLEUTH Figure 2a): {} model{}",
            models.len(),
            if models.len() == 1 { "" } else { "s" }
        ),
    )
}

/// Bars of EM per hop count for the arms of `dataset` that `keep` holds, each with its
/// Wilson 95% interval and its n above it.
fn hops_figure(
    a: &Analysis,
    dataset: &str,
    keep: &dyn Fn(&ArmKey) -> bool,
    file_name: String,
    title: &str,
) -> Option<Figure> {
    let here: Vec<_> = a
        .by_hops
        .iter()
        .filter(|s| s.summary.arm.dataset == dataset && keep(&s.summary.arm))
        .collect();
    let values: BTreeSet<(usize, &str)> = here
        .iter()
        .map(|s| (s.value.len(), s.value.as_str()))
        .collect();
    if values.len() < 2 {
        return None;
    }
    let categories: Vec<String> = values.iter().map(|(_, v)| v.to_string()).collect();
    let mut arms: Vec<&ArmKey> = Vec::new();
    for s in &here {
        if !arms.contains(&&s.summary.arm) {
            arms.push(&s.summary.arm);
        }
    }
    let series: Vec<Series> = arms
        .iter()
        .map(|k| {
            let slices: Vec<_> = categories
                .iter()
                .map(|c| {
                    here.iter()
                        .find(|s| &s.summary.arm == *k && &s.value == c)
                        .map(|s| &s.summary)
                })
                .collect();
            let label = if a.summaries.iter().any(|s| s.arm.model != k.model) {
                format!("{} ({})", k.name(), k.model)
            } else {
                name(a, k)
            };
            Series::new(label, slices.iter().map(|s| s.map(|s| s.em)).collect())
                .with_errors(
                    slices
                        .iter()
                        .map(|s| {
                            s.map(|s| {
                                let right = (s.em / 100.0 * s.n as f64).round() as usize;
                                crate::eval::analysis::wilson(right, s.n)
                            })
                        })
                        .collect(),
                )
                .with_notes(
                    slices
                        .iter()
                        .map(|s| s.map(|s| format!("n={}", s.n)))
                        .collect(),
                )
        })
        .collect();
    Some(Figure {
        file: file_name,
        svg: bar_chart(
            title,
            &format!(
                "EM with Wilson 95% intervals, n above each bar · {}",
                hops_caption(&here, &arms)
            ),
            "hops",
            "EM (%)",
            &categories,
            &series,
        ),
    })
}

/// ΔEM and ΔF1 of every arm against the baseline, with bootstrap 95% intervals.
fn comparison(a: &Analysis, dataset: &str) -> Option<Figure> {
    let here: Vec<_> = a
        .comparisons
        .iter()
        .filter(|c| c.arm.dataset == dataset)
        .collect();
    if here.is_empty() {
        return None;
    }
    let categories: Vec<String> = here.iter().map(|c| name(a, &c.arm)).collect();
    let metric =
        |label: &str,
         f: fn(&crate::eval::analysis::Comparison) -> &crate::eval::stats::BootstrapCi| {
            Series::new(label, here.iter().map(|c| Some(f(c).diff)).collect())
                .with_errors(here.iter().map(|c| Some((f(c).lo, f(c).hi))).collect())
        };
    let series = [metric("ΔEM", |c| &c.em), metric("ΔF1", |c| &c.f1)];
    let mut keys: Vec<&ArmKey> = here.iter().map(|c| &c.arm).collect();
    keys.extend(here.iter().map(|c| &c.baseline));
    let base = here[0].baseline.name();
    Some(Figure {
        file: file("comparison", dataset),
        svg: diff_chart(
            &format!("Difference from {base} with 95% intervals: {dataset}"),
            &caption(a, &keys),
            "method",
            "points",
            &categories,
            &series,
        ),
    })
}

fn sweeps(a: &Analysis) -> Vec<Figure> {
    let keys: BTreeSet<(&str, &str)> = a
        .sweeps
        .iter()
        .map(|s| (s.dataset.as_str(), s.key.as_str()))
        .collect();
    keys.into_iter()
        .map(|(dataset, key)| {
            let here: Vec<_> = a
                .sweeps
                .iter()
                .filter(|s| s.key == key && s.dataset == dataset)
                .collect();
            let mut values: Vec<String> = Vec::new();
            for s in &here {
                for p in &s.points {
                    if !values.contains(&p.value) {
                        values.push(p.value.clone());
                    }
                }
            }
            // Each sweep is sorted, but their union is not (0.7 from one, none and
            // 0.3 from another).
            values.sort_by(|x, y| crate::eval::analysis::sweep_order(x, y));
            let name = |s: &crate::eval::analysis::Sweep| {
                let mut parts = vec![s.method.clone()];
                if here.iter().any(|o| o.model != s.model) {
                    parts.push(s.model.clone());
                }
                if !s.fixed.is_empty() {
                    parts.push(format!("[{}]", s.fixed));
                }
                parts.join(" ")
            };
            // Mean over points sharing a value (one sweep has one arm per value; the
            // mean only guards against duplicate labels).
            let series =
                |f: fn(&crate::eval::analysis::SweepPoint) -> f64, suffix: &str| -> Vec<Series> {
                    here.iter()
                        .map(|s| {
                            let vals = values
                                .iter()
                                .map(|v| {
                                    let pts: Vec<f64> =
                                        s.points.iter().filter(|p| &p.value == v).map(f).collect();
                                    (!pts.is_empty())
                                        .then(|| pts.iter().sum::<f64>() / pts.len() as f64)
                                })
                                .collect();
                            Series::new(format!("{}{suffix}", name(s)), vals)
                        })
                        .collect()
                };
            let ns: BTreeSet<usize> = here
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.n))
                .collect();
            let models: BTreeSet<&str> = here.iter().map(|s| s.model.as_str()).collect();
            let n = match (ns.first(), ns.last()) {
                (Some(lo), Some(hi)) if lo != hi => format!("{lo}–{hi}"),
                (Some(lo), _) => lo.to_string(),
                _ => "0".into(),
            };
            let cap = format!(
                "n = {n} questions per point · model {}",
                models.into_iter().collect::<Vec<_>>().join(", ")
            );
            // EIR's read budget H (App. E.1): Figure 6 reports Answer F1 and EM per
            // budget; other sweeps show EM with the timeout rate.
            let svg = if key == EIR_READ_BUDGET {
                bar_line_chart(
                    &format!("Answer F1 and EM across {key} (EIR Figure 6): {dataset}"),
                    &cap,
                    key,
                    ("F1 (%)", "EM (%)"),
                    &values,
                    &series(|p| p.f1, " F1"),
                    &series(|p| p.em, " EM"),
                    &[],
                )
            } else {
                bar_line_chart(
                    &format!("EM and timeout rate across {key}: {dataset}"),
                    &cap,
                    key,
                    ("EM (%)", "timeout (%)"),
                    &values,
                    &series(|p| p.em, " EM"),
                    &series(|p| p.timeout_rate, " timeout"),
                    &react_reference(a, dataset, key),
                )
            };
            Figure {
                file: format!("sweep_{}_{}.svg", slug(key), slug(dataset)),
                svg,
            }
        })
        .collect()
}

/// SLEUTH Figure 3 draws ReAct's EM as a dashed reference line across the nudge sweep:
/// each ReAct arm on the benchmark that has no nudge (Table 1's ReAct).
fn react_reference(a: &Analysis, dataset: &str, key: &str) -> Vec<(f64, String)> {
    if key != "nudge" {
        return Vec::new();
    }
    a.summaries
        .iter()
        .filter(|s| s.arm.dataset == dataset && s.arm.method == "react")
        .filter(|s| super::paper::layout::nudge_turn(a, &s.arm).is_none())
        .map(|s| (s.em, format!("{} EM {:.1}", name(a, &s.arm), s.em)))
        .collect()
}

fn accuracy_at_turn(a: &Analysis, dataset: &str) -> Option<Figure> {
    let here: Vec<_> = a
        .accuracy_at_turn
        .iter()
        .filter(|c| c.arm.dataset == dataset)
        .collect();
    if a.max_turn == 0 || here.is_empty() {
        return None;
    }
    let x: Vec<f64> = (1..=a.max_turn).map(f64::from).collect();
    let series: Vec<Series> = here
        .iter()
        .map(|c| {
            Series::new(
                name(a, &c.arm),
                c.accuracy.iter().map(|v| Some(*v)).collect(),
            )
        })
        .collect();
    let keys: Vec<&ArmKey> = here.iter().map(|c| &c.arm).collect();
    // SLEUTH Figure 4 marks the turn the commitment nudge fires at (a dotted line at 14);
    // each distinct nudge turn of the arms drawn is marked.
    let nudges: BTreeSet<u32> = keys
        .iter()
        .filter_map(|k| super::paper::layout::nudge_turn(a, k))
        .collect();
    let marks: Vec<(f64, String)> = nudges
        .into_iter()
        .map(|t| (f64::from(t), format!("nudge (turn {t})")))
        .collect();
    Some(Figure {
        file: file("accuracy_at_turn", dataset),
        svg: line_chart_marked(
            &format!("Accuracy at turn t: {dataset}"),
            &caption(a, &keys),
            "turn",
            "EM (%)",
            &x,
            &series,
            true,
            &marks,
        ),
    })
}

/// SLEUTH App. E, Figure 5: (a) mean memory sizes per turn over the fixed cohort, with
/// 95% intervals, and (b) the cumulative share of episodes that finished by each turn,
/// the nudge turn marked.
fn memory(a: &Analysis) -> Vec<Figure> {
    let mut out = Vec::new();
    for m in &a.memory {
        let x: Vec<f64> = m.turns.iter().map(|p| f64::from(p.turn)).collect();
        let component =
            |name: &str, f: fn(&crate::eval::analysis::MemoryPoint) -> (f64, (f64, f64))| {
                Series::new(name, m.turns.iter().map(|p| Some(f(p).0)).collect())
                    .with_errors(m.turns.iter().map(|p| Some(f(p).1)).collect())
            };
        let series = vec![
            component("facts", |p| (p.facts, p.facts_ci)),
            component("hypotheses", |p| (p.hypotheses, p.hypotheses_ci)),
            component("open questions", |p| (p.questions, p.questions_ci)),
        ];
        let marks: Vec<(f64, String)> = m
            .nudge_turn
            .map(|t| (f64::from(t), format!("nudge (turn {t})")))
            .into_iter()
            .collect();
        let name = legend(a, &m.arm);
        let title = format!("Working memory: {name}");
        let cap = format!(
            "mean per turn with 95% intervals · episodes of ≥ {} turns, n = {} · {} · model {}",
            m.min_turns, m.cohort, m.arm.dataset, m.arm.model
        );
        out.push(Figure {
            file: format!("memory_{}.svg", slug(&name)),
            svg: line_chart_marked(
                &title,
                &cap,
                "turn",
                "mean entries",
                &x,
                &series,
                false,
                &marks,
            ),
        });
        if m.finished_by_turn.is_empty() {
            continue;
        }
        let x: Vec<f64> = (1..=m.finished_by_turn.len()).map(|t| t as f64).collect();
        let done = Series::new(
            "finished by turn t",
            m.finished_by_turn.iter().map(|v| Some(*v)).collect(),
        );
        let cap = format!(
            "% of all {} episodes that called finish at or before turn t · {} · model {}",
            m.episodes, m.arm.dataset, m.arm.model
        );
        out.push(Figure {
            file: format!("termination_{}.svg", slug(&name)),
            svg: line_chart_marked(
                &format!("Cumulative termination: {name}"),
                &cap,
                "turn",
                "episodes finished (%)",
                &x,
                &[done],
                true,
                &marks,
            ),
        });
    }
    out
}

/// A file-name-safe form of a label.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}
