//! What a run will cost before it starts: model calls per question (measured in our
//! own earlier records of the method, else the method's budget bound from the
//! registry), tokens per call (measured, else stated defaults), and dollars from the
//! price table.
//!
//! Estimates are for planning, not billing: cached prompt tokens are priced as fresh
//! input, so a provider with prompt caching bills less.

use crate::eval::analysis::Arm;
use crate::llm::middleware::{price_id, BATCH_RATE};
use crate::llm::{ModelSpec, Price, PriceTable};
use serde::Serialize;

/// Input tokens per call assumed when no record of the method has been measured: a
/// prompt with the question, a few paragraphs and the running history.
pub const DEFAULT_INPUT_PER_CALL: f64 = 2500.0;
/// Output tokens per call assumed when nothing was measured.
pub const DEFAULT_OUTPUT_PER_CALL: f64 = 200.0;

/// Per-question usage of one method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Usage {
    pub calls_per_question: f64,
    pub input_per_call: f64,
    pub output_per_call: f64,
    /// Records the means come from; 0 when they are the defaults and budget bound.
    pub measured_records: usize,
}

impl Usage {
    /// Measured means over `arms` of `method` (preferring records of `model`), or the
    /// defaults with `budget_calls` when there are none.
    pub fn of(method: &str, model: &str, arms: &[Arm], budget_calls: f64) -> Usage {
        let of_method: Vec<&Arm> = arms.iter().filter(|a| a.key.method == method).collect();
        let same_model: Vec<&Arm> = of_method
            .iter()
            .copied()
            .filter(|a| a.key.model == model)
            .collect();
        let pick = if same_model.is_empty() {
            of_method
        } else {
            same_model
        };
        let records: Vec<_> = pick
            .iter()
            .flat_map(|a| &a.records)
            .filter(|r| !r.has_error)
            .collect();
        let calls: u64 = records.iter().map(|r| u64::from(r.calls)).sum();
        if records.is_empty() || calls == 0 {
            return Usage {
                calls_per_question: budget_calls,
                input_per_call: DEFAULT_INPUT_PER_CALL,
                output_per_call: DEFAULT_OUTPUT_PER_CALL,
                measured_records: 0,
            };
        }
        let input: u64 = records.iter().map(|r| r.input_tokens).sum();
        let output: u64 = records.iter().map(|r| r.output_tokens).sum();
        Usage {
            calls_per_question: calls as f64 / records.len() as f64,
            input_per_call: input as f64 / calls as f64,
            output_per_call: output as f64 / calls as f64,
            measured_records: records.len(),
        }
    }
}

/// How a model is priced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pricing {
    /// Runs here (embedded or scripted): no bill.
    Free,
    Listed(Price),
    /// Hosted, or behind an OpenAI-compatible URL, with no entry in the price table.
    Unknown,
}

impl Pricing {
    pub fn of(model: &str, table: &PriceTable) -> Pricing {
        match ModelSpec::parse(model) {
            Ok(ModelSpec::Local { .. } | ModelSpec::Scripted { .. }) => Pricing::Free,
            _ => table
                .lookup(price_id(model))
                .map_or(Pricing::Unknown, |p| Pricing::Listed(*p)),
        }
    }

    /// The fraction of the standard price a batched call is billed (`--batch`).
    pub fn batch_rate(&self) -> f64 {
        match self {
            Pricing::Listed(p) => p.batch.unwrap_or(BATCH_RATE),
            Pricing::Free | Pricing::Unknown => 1.0,
        }
    }
}

/// One job's (or one method's) estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub questions: usize,
    pub calls: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    /// None when the model has no known price.
    pub usd: Option<f64>,
}

impl Estimate {
    pub fn new(questions: usize, usage: &Usage, pricing: Pricing) -> Estimate {
        let calls = questions as f64 * usage.calls_per_question;
        let input_tokens = calls * usage.input_per_call;
        let output_tokens = calls * usage.output_per_call;
        let usd = match pricing {
            Pricing::Free => Some(0.0),
            Pricing::Listed(p) => Some((input_tokens * p.input + output_tokens * p.output) / 1e6),
            Pricing::Unknown => None,
        };
        Estimate {
            questions,
            calls,
            input_tokens,
            output_tokens,
            usd,
        }
    }

    /// The sum of several estimates (dollars unknown if any is).
    pub fn total(parts: &[Estimate]) -> Estimate {
        Estimate {
            questions: parts.iter().map(|e| e.questions).sum(),
            calls: parts.iter().map(|e| e.calls).sum(),
            input_tokens: parts.iter().map(|e| e.input_tokens).sum(),
            output_tokens: parts.iter().map(|e| e.output_tokens).sum(),
            usd: parts.iter().map(|e| e.usd).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_follow_the_price_table() {
        let usage = Usage {
            calls_per_question: 10.0,
            input_per_call: 1000.0,
            output_per_call: 100.0,
            measured_records: 0,
        };
        let table = PriceTable::defaults();
        let e = Estimate::new(50, &usage, Pricing::of("openai:gpt-4o-mini", &table));
        // 500 calls: 500k input at $0.15/M + 50k output at $0.60/M.
        assert!((e.usd.unwrap() - (0.075 + 0.03)).abs() < 1e-12, "{e:?}");
        assert_eq!(Pricing::of("openai:my-finetune", &table), Pricing::Unknown);
        assert_eq!(Pricing::of("local:qwen", &table), Pricing::Free);
        let total = Estimate::total(&[e, Estimate::new(1, &usage, Pricing::Unknown)]);
        assert_eq!(total.usd, None);
        assert_eq!(total.calls, 510.0);
    }
}
