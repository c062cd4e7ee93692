//! The EIR paper's two summary tables that average across report cells, so they need no
//! hand work: Table 9 (App. D.5: each method's accuracy and computation averaged over
//! the benchmarks and models equally, with ratios to EIR's mean) and Table 10 (App.
//! E.1: mean calls per question for each read budget H, with the relative increase from
//! H = 6 to the largest budget run).

use super::compare::sweep_order;
use super::load::Arm;
use serde::Serialize;
use std::collections::BTreeMap;

/// The method Table 9's ratios divide by.
const REFERENCE: &str = "eir";
/// The `--set` key of the read budget H, and the budget Table 10 compares with.
const BUDGET_KEY: &str = "reads";
const BUDGET_BASE: &str = "6";

/// Table 9: one method (arm name) averaged over its cells (dataset x model).
#[derive(Debug, Clone, Serialize)]
pub struct CellAverage {
    pub method: String,
    /// Cells averaged (each weighted equally, whatever its n).
    pub cells: usize,
    pub f1: f64,
    pub em: f64,
    pub calls_per_q: f64,
    pub cost_per_q: f64,
    /// This method's mean over EIR's, when an `eir` arm is in the report.
    pub calls_ratio: Option<f64>,
    pub cost_ratio: Option<f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// One cell's (F1 %, EM %, calls/q, cost/q). The cost is at the fixed list prices
/// (EIR App. D.5, Table 9: "dollar costs at the fixed prices in Table 4"), so an arm
/// replayed from the response cache or discounted by a prompt cache costs what its
/// tokens cost.
fn cell(arm: &Arm) -> (f64, f64, f64, f64) {
    let r = &arm.records;
    (
        100.0 * mean(r.iter().map(|r| r.f1)),
        100.0 * mean(r.iter().map(|r| r.em)),
        mean(r.iter().map(|r| f64::from(r.calls))),
        mean(r.iter().map(|r| r.list_cost())),
    )
}

/// Table 9 over every EIR-setting arm (records that cite), methods in name order.
pub fn cell_averages(arms: &[Arm]) -> Vec<CellAverage> {
    let mut by_method: BTreeMap<String, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
    for arm in arms.iter().filter(|a| !a.records.is_empty()) {
        if !arm.records.iter().any(|r| r.evidence.is_some()) {
            continue;
        }
        by_method.entry(arm.key.name()).or_default().push(cell(arm));
    }
    let mut out: Vec<CellAverage> = by_method
        .into_iter()
        .map(|(method, cells)| CellAverage {
            method,
            cells: cells.len(),
            f1: mean(cells.iter().map(|c| c.0)),
            em: mean(cells.iter().map(|c| c.1)),
            calls_per_q: mean(cells.iter().map(|c| c.2)),
            cost_per_q: mean(cells.iter().map(|c| c.3)),
            calls_ratio: None,
            cost_ratio: None,
        })
        .collect();
    let reference = out
        .iter()
        .find(|c| c.method == REFERENCE)
        .map(|c| (c.calls_per_q, c.cost_per_q));
    if let Some((calls, cost)) = reference {
        for c in &mut out {
            c.calls_ratio = (calls > 0.0).then(|| c.calls_per_q / calls);
            c.cost_ratio = (cost > 0.0).then(|| c.cost_per_q / cost);
        }
    }
    if out.len() < 2 && out.iter().all(|c| c.cells < 2) {
        return Vec::new();
    }
    out
}

/// Table 10: mean calls per question at each read budget of one (dataset, model,
/// method), and the relative increase from H = 6 to the largest budget.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetCalls {
    pub dataset: String,
    pub model: String,
    pub method: String,
    /// (H, calls per question), in numeric order of H.
    pub calls: Vec<(String, f64)>,
    /// The largest H and the % increase of its calls over H = 6's.
    pub increase: Option<(String, f64)>,
}

pub fn budget_calls(arms: &[Arm]) -> Vec<BudgetCalls> {
    let mut groups: BTreeMap<(String, String, String), Vec<(String, f64)>> = BTreeMap::new();
    for arm in arms.iter().filter(|a| !a.records.is_empty()) {
        let Some(h) = arm.settings.get(BUDGET_KEY) else {
            continue;
        };
        let key = (
            arm.key.dataset.clone(),
            arm.key.model.clone(),
            arm.key.method.clone(),
        );
        groups
            .entry(key)
            .or_default()
            .push((h.clone(), cell(arm).2));
    }
    groups
        .into_iter()
        .filter(|(_, calls)| calls.len() > 1)
        .map(|((dataset, model, method), mut calls)| {
            calls.sort_by(|a, b| sweep_order(&a.0, &b.0));
            let base = calls.iter().find(|(h, _)| h == BUDGET_BASE).map(|c| c.1);
            let last = calls.last().cloned();
            let increase = match (base, last) {
                (Some(b), Some((h, c))) if b > 0.0 && h != BUDGET_BASE => {
                    Some((h, 100.0 * (c / b - 1.0)))
                }
                _ => None,
            };
            BudgetCalls {
                dataset,
                model,
                method,
                calls,
                increase,
            }
        })
        .collect()
}
