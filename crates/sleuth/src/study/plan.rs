//! What a job will spend before it runs: per method, the model calls per question
//! (measured in earlier records under the output folder, else the registry's budget
//! bound under the job's settings), tokens per call, and dollars.

use crate::eval::analysis::{self, Arm};
use crate::eval::estimate::{Estimate, Pricing, Usage};
use crate::methods::RegisteredMethod;
use std::path::PathBuf;
use std::sync::Arc;

/// One method's share of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodPlan {
    pub method: String,
    /// Questions of this method already recorded in the run directory (not counted).
    pub recorded: usize,
    /// Model calls one episode spends at most (every budget used up).
    pub budget: f64,
    pub usage: Usage,
    pub estimate: Estimate,
}

/// A job's (or an experiment's) estimated spend.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub questions: usize,
    pub methods: Vec<MethodPlan>,
    pub total: Estimate,
}

impl Plan {
    /// `questions` of each method, priced by `pricing`, with means measured in
    /// `history` where it has records of the method.
    pub fn new(
        methods: &[Arc<RegisteredMethod>],
        questions: usize,
        model: &str,
        history: &[Arm],
        pricing: Pricing,
    ) -> Plan {
        Plan::remaining(methods, questions, &[], model, history, pricing)
    }

    /// As [`Plan::new`], less what is already recorded: `recorded[i]` questions of
    /// method `i` (missing entries: none) are done and not estimated, so the plan of a
    /// partial run is what is left to run.
    pub fn remaining(
        methods: &[Arc<RegisteredMethod>],
        questions: usize,
        recorded: &[usize],
        model: &str,
        history: &[Arm],
        pricing: Pricing,
    ) -> Plan {
        let methods: Vec<MethodPlan> = methods
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let usage = Usage::of(m.name(), model, history, m.calls_per_episode());
                let done = recorded.get(i).copied().unwrap_or(0).min(questions);
                MethodPlan {
                    method: m.name().to_string(),
                    recorded: done,
                    budget: m.calls_per_episode(),
                    estimate: Estimate::new(questions - done, &usage, pricing),
                    usage,
                }
            })
            .collect();
        let parts: Vec<Estimate> = methods.iter().map(|m| m.estimate).collect();
        Plan {
            questions,
            total: Estimate::total(&parts),
            methods,
        }
    }

    /// Each method's per-question usage, for the lines under an estimate table.
    pub fn usages(&self) -> Vec<(String, Usage)> {
        self.methods
            .iter()
            .map(|m| (m.method.clone(), m.usage))
            .collect()
    }

    /// At most this many model calls: every method's budget used up on every question
    /// still to run.
    pub fn budget_calls(&self) -> f64 {
        self.methods
            .iter()
            .map(|m| (self.questions - m.recorded) as f64 * m.budget)
            .sum()
    }

    /// The rounds a batched run (`--batch`) takes at most: one per call of the
    /// longest episode still to run (every budget used up).
    pub fn rounds(&self) -> f64 {
        self.methods
            .iter()
            .filter(|m| m.recorded < self.questions)
            .map(|m| m.budget)
            .fold(0.0, f64::max)
    }

    /// Episodes still to run, and already recorded.
    pub fn episodes(&self) -> (usize, usize) {
        let done: usize = self.methods.iter().map(|m| m.recorded).sum();
        (self.questions * self.methods.len() - done, done)
    }
}

/// Records of earlier runs below `dirs`, for measured means; none when there are none
/// or they cannot be read (an estimate never fails on them).
pub fn history(dirs: &[PathBuf]) -> Vec<Arm> {
    dirs.iter()
        .filter(|d| d.exists())
        .filter_map(|d| analysis::load(std::slice::from_ref(d)).ok())
        .flat_map(|s| s.arms)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::MethodSetup;
    use std::collections::BTreeMap;

    fn budget(method: &str, settings: &[(&str, &str)]) -> f64 {
        let setup = MethodSetup {
            names: vec![method.to_string()],
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            ..MethodSetup::default()
        };
        let built = setup.build().unwrap().built;
        Plan::new(&built, 3, "m", &[], Pricing::Free).methods[0].budget
    }

    #[test]
    fn budgets_come_from_the_registry_under_the_jobs_settings() {
        assert_eq!(budget("react", &[]), 20.0);
        assert_eq!(budget("reflexion", &[]), 41.0);
        assert_eq!(budget("eir-reflexion", &[]), 34.0);
        assert_eq!(budget("eir", &[("reads", "10")]), 12.0);
        assert_eq!(
            budget("eir", &[("reads", "10"), ("extra_reads", "2")]),
            14.0
        );
        let setup = MethodSetup {
            names: vec!["rekt".into()],
            ..MethodSetup::default()
        };
        assert!(matches!(setup.build(), Err(crate::Error::Method(_))));
    }

    #[test]
    fn a_plan_without_history_uses_every_budget_and_prices_it() {
        let setup = MethodSetup {
            names: vec!["react".into(), "sleuth".into()],
            ..MethodSetup::default()
        };
        let built = setup.build().unwrap().built;
        let plan = Plan::new(&built, 5, "m", &[], Pricing::Free);
        assert_eq!(plan.budget_calls(), 5.0 * (20.0 + plan.methods[1].budget));
        assert_eq!(plan.total.calls, plan.budget_calls());
        assert_eq!(plan.total.usd, Some(0.0));
        assert!(plan.methods.iter().all(|m| m.usage.measured_records == 0));
    }
}
