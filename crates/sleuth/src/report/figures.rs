//! The report's figures: EM by hop count, option sweeps, accuracy at turn t, and
//! working-memory dynamics, as SVG files named for what they show.

use super::svg::{bar_chart, bar_line_chart, line_chart, Series};
use super::tables::legend;
use crate::eval::analysis::{Analysis, ArmKey};
use std::collections::BTreeSet;

/// One figure: its file name in `--out` and its SVG text.
#[derive(Debug, Clone)]
pub struct Figure {
    pub file: String,
    pub svg: String,
}

/// Every figure the analysis supports (none for data it lacks).
pub fn all(a: &Analysis) -> Vec<Figure> {
    let mut out = Vec::new();
    out.extend(em_by_hops(a));
    out.extend(sweeps(a));
    out.extend(accuracy_at_turn(a));
    out.extend(memory(a));
    out
}

fn em_by_hops(a: &Analysis) -> Option<Figure> {
    let values: BTreeSet<(usize, &str)> = a
        .by_hops
        .iter()
        .map(|s| (s.value.len(), s.value.as_str()))
        .collect();
    if values.is_empty() {
        return None;
    }
    let categories: Vec<String> = values.iter().map(|(_, v)| v.to_string()).collect();
    let arms: Vec<&ArmKey> = a.summaries.iter().map(|s| &s.arm).collect();
    let series: Vec<Series> = arms
        .iter()
        .map(|k| {
            let values = categories
                .iter()
                .map(|c| {
                    a.by_hops
                        .iter()
                        .find(|s| &s.summary.arm == *k && &s.value == c)
                        .map(|s| s.summary.em)
                })
                .collect();
            Series::new(legend(a, k), values)
        })
        .collect();
    Some(Figure {
        file: "em_by_hops.svg".into(),
        svg: bar_chart("EM by hop count", "hops", "EM (%)", &categories, &series),
    })
}

fn sweeps(a: &Analysis) -> Vec<Figure> {
    let keys: BTreeSet<&str> = a.sweeps.iter().map(|s| s.key.as_str()).collect();
    keys.into_iter()
        .map(|key| {
            let here: Vec<_> = a.sweeps.iter().filter(|s| s.key == key).collect();
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
                if here.iter().any(|o| o.dataset != s.dataset) {
                    parts.push(s.dataset.clone());
                }
                if here.iter().any(|o| o.model != s.model) {
                    parts.push(s.model.clone());
                }
                parts.join(" ")
            };
            // Mean over points sharing a value (another swept option may split them).
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
            Figure {
                file: format!("sweep_{}.svg", slug(key)),
                svg: bar_line_chart(
                    &format!("EM and timeout rate across {key}"),
                    key,
                    ("EM (%)", "timeout (%)"),
                    &values,
                    &series(|p| p.em, " EM"),
                    &series(|p| p.timeout_rate, " timeout"),
                ),
            }
        })
        .collect()
}

fn accuracy_at_turn(a: &Analysis) -> Option<Figure> {
    if a.max_turn == 0 || a.accuracy_at_turn.is_empty() {
        return None;
    }
    let x: Vec<f64> = (1..=a.max_turn).map(f64::from).collect();
    let series: Vec<Series> = a
        .accuracy_at_turn
        .iter()
        .map(|c| {
            Series::new(
                legend(a, &c.arm),
                c.accuracy.iter().map(|v| Some(*v)).collect(),
            )
        })
        .collect();
    Some(Figure {
        file: "accuracy_at_turn.svg".into(),
        svg: line_chart("Accuracy at turn t", "turn", "EM (%)", &x, &series, true),
    })
}

fn memory(a: &Analysis) -> Vec<Figure> {
    a.memory
        .iter()
        .map(|m| {
            let x: Vec<f64> = m.turns.iter().map(|p| f64::from(p.turn)).collect();
            let series = vec![
                Series::new("facts", m.turns.iter().map(|p| Some(p.facts)).collect()),
                Series::new(
                    "hypotheses",
                    m.turns.iter().map(|p| Some(p.hypotheses)).collect(),
                ),
                Series::new(
                    "open questions",
                    m.turns.iter().map(|p| Some(p.questions)).collect(),
                ),
            ];
            let title = format!(
                "Working memory: {} (episodes ≥ {} turns, n = {})",
                legend(a, &m.arm),
                m.min_turns,
                m.cohort
            );
            Figure {
                file: format!("memory_{}.svg", slug(&legend(a, &m.arm))),
                svg: line_chart(&title, "turn", "mean entries", &x, &series, false),
            }
        })
        .collect()
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
