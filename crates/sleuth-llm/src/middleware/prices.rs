//! Prices of hosted models and the cost of one call.
//!
//! The built-in figures are **defaults** copied from the providers' public price lists
//! (USD per million tokens, standard tier, no batch discount) as we knew them when this
//! was written ([`PRICES_CHECKED`]); prices change, so a TOML or JSON file can override
//! or add entries (docs/prices.md):
//!
//! ```toml
//! [gpt-4o-mini]
//! input = 0.15
//! output = 0.60
//! cached_input = 0.075   # optional, defaults to `input`
//! cache_write = 0.1875   # optional (Anthropic prompt-cache writes), defaults to `input`
//! ```
//!
//! Model names match exactly or by prefix at a `-` boundary, longest first, so dated
//! snapshots (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`) find their family.
//! Unknown models (self-hosted servers, the scripted and local models) cost 0.
//!
//! A call sent through a provider batch (`--batch`) is billed at the entry's `batch`
//! rate, a fraction of what the same call costs on its own: both providers bill
//! batches at half price (OpenAI's Batch API, Anthropic's Message Batches, whose
//! prompt-cache reads and writes are halved too), so the built-in entries say 0.5 and
//! an entry of a price file without `batch` gets its provider's 0.5.

use crate::{LlmError, Usage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// The fraction of the cost billed when the call goes through a batch; `None`:
    /// [`BATCH_RATE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<f64>,
}

/// What OpenAI's Batch API and Anthropic's Message Batches bill of a call's price
/// (both: 50%), as listed on [`PRICES_CHECKED`].
pub const BATCH_RATE: f64 = 0.5;

/// How a call is billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Billing {
    /// Sent on its own, at the listed prices.
    #[default]
    Standard,
    /// Sent in a provider batch, at the entry's batch rate.
    Batch,
}

impl Price {
    const fn new(input: f64, output: f64, cached_input: f64) -> Price {
        Price {
            input,
            output,
            cached_input: Some(cached_input),
            cache_write: None,
            batch: Some(BATCH_RATE),
        }
    }
    /// Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
    const fn anthropic(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cached_input: Some(input * 0.1),
            cache_write: Some(input * 1.25),
            batch: Some(BATCH_RATE),
        }
    }
}

/// When the built-in prices were last compared with the providers' public lists.
/// Prices change: `--prices FILE` overrides or adds entries (docs/prices.md).
pub const PRICES_CHECKED: &str = "2026-11-30";

/// Default prices (USD / 1M tokens) as publicly listed on [`PRICES_CHECKED`]; override
/// with a price file.
const DEFAULTS: &[(&str, Price)] = &[
    ("gpt-4o", Price::new(2.50, 10.00, 1.25)),
    ("gpt-4o-mini", Price::new(0.15, 0.60, 0.075)),
    ("gpt-4.1", Price::new(2.00, 8.00, 0.50)),
    ("gpt-4.1-mini", Price::new(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", Price::new(0.10, 0.40, 0.025)),
    ("gpt-5", Price::new(1.25, 10.00, 0.125)),
    ("gpt-5-mini", Price::new(0.25, 2.00, 0.025)),
    ("gpt-5-nano", Price::new(0.05, 0.40, 0.005)),
    ("o3", Price::new(2.00, 8.00, 0.50)),
    ("o3-mini", Price::new(1.10, 4.40, 0.55)),
    ("o4-mini", Price::new(1.10, 4.40, 0.275)),
    ("claude-opus-4", Price::anthropic(15.00, 75.00)),
    ("claude-opus-4-5", Price::anthropic(5.00, 25.00)),
    ("claude-sonnet-4", Price::anthropic(3.00, 15.00)),
    ("claude-3-7-sonnet", Price::anthropic(3.00, 15.00)),
    ("claude-haiku-4-5", Price::anthropic(1.00, 5.00)),
    ("claude-3-5-haiku", Price::anthropic(0.80, 4.00)),
];

#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: BTreeMap<String, Price>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::defaults()
    }
}

impl PriceTable {
    /// The built-in default prices.
    pub fn defaults() -> PriceTable {
        PriceTable {
            entries: DEFAULTS.iter().map(|(k, p)| (k.to_string(), *p)).collect(),
        }
    }

    pub fn empty() -> PriceTable {
        PriceTable {
            entries: BTreeMap::new(),
        }
    }

    pub fn insert(&mut self, model: impl Into<String>, price: Price) {
        self.entries.insert(model.into(), price);
    }

    /// The defaults overridden by a `.toml` or `.json` file (a table of model -> price).
    pub fn defaults_with_file(path: &Path) -> Result<PriceTable, LlmError> {
        let mut table = PriceTable::defaults();
        let text = std::fs::read_to_string(path).map_err(|e| {
            LlmError::Config(format!("{}: cannot read price file: {e}", path.display()))
        })?;
        let bad =
            |e: String| LlmError::Config(format!("{}: invalid price file: {e}", path.display()));
        let entries: BTreeMap<String, Price> = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?,
            _ => toml::from_str(&text).map_err(|e| bad(e.to_string()))?,
        };
        for (model, price) in entries {
            if [price.input, price.output, price.batch.unwrap_or(BATCH_RATE)]
                .iter()
                .any(|p| !p.is_finite() || *p < 0.0)
            {
                return Err(bad(format!(
                    "`{model}`: prices must be non-negative numbers"
                )));
            }
            table.insert(model, price);
        }
        Ok(table)
    }

    /// [`PriceTable::cost_usd`] billed as `billing` says: a batched call at its
    /// entry's batch rate.
    pub fn billed_usd(&self, model: &str, usage: &Usage, billing: Billing) -> f64 {
        let cost = self.cost_usd(model, usage, false);
        match billing {
            Billing::Standard => cost,
            Billing::Batch => {
                let rate = self.lookup(model).and_then(|p| p.batch);
                cost * rate.unwrap_or(BATCH_RATE)
            }
        }
    }

    /// The price of `model`: exact, else the longest entry that is a prefix of it at a
    /// `-` boundary.
    pub fn lookup(&self, model: &str) -> Option<&Price> {
        if let Some(p) = self.entries.get(model) {
            return Some(p);
        }
        self.entries
            .iter()
            .filter(|(k, _)| {
                model.len() > k.len()
                    && model.starts_with(k.as_str())
                    && model[k.len()..].starts_with('-')
            })
            .max_by_key(|(k, _)| k.len())
            .map(|(_, p)| p)
    }

    /// The billed cost of one call: 0 for a response served from sleuth's cache, 0 for
    /// unknown models, else input (less provider-cached and cache-written tokens) at the
    /// input price, cached input at the cached price, cache writes at the write price,
    /// and output at the output price.
    pub fn cost_usd(&self, model: &str, usage: &Usage, cached_response: bool) -> f64 {
        if cached_response {
            return 0.0;
        }
        let Some(p) = self.lookup(model) else {
            return 0.0;
        };
        let fresh = usage
            .input_tokens
            .saturating_sub(usage.cached_input_tokens)
            .saturating_sub(usage.cache_write_tokens);
        let per_token = |tokens: u64, usd_per_m: f64| tokens as f64 * usd_per_m / 1e6;
        per_token(fresh, p.input)
            + per_token(usage.cached_input_tokens, p.cached_input.unwrap_or(p.input))
            + per_token(usage.cache_write_tokens, p.cache_write.unwrap_or(p.input))
            + per_token(usage.output_tokens, p.output)
    }
}

impl PriceTable {
    /// Tokens at the model's fixed list prices (EIR App. D.5, Table 4: costs
    /// "reconstructed at the fixed prices" from token counts, not invoices): every input
    /// token at the input rate and every output token at the output rate, so neither a
    /// response-cache hit (billed 0) nor a provider's prompt-cache discount lowers it.
    pub fn list_cost_usd(&self, model: &str, input_tokens: u64, output_tokens: u64) -> f64 {
        self.lookup(model).map_or(0.0, |p| {
            (input_tokens as f64 * p.input + output_tokens as f64 * p.output) / 1e6
        })
    }
}

/// The model id a price is looked up by, from a model's name or spec: `openai:gpt-4o`
/// -> `gpt-4o`, `openai-compat:http://h/v1#llama` -> `llama`,
/// `anthropic:claude-haiku-4-5?prompt_cache=off` -> `claude-haiku-4-5`.
pub fn price_id(model_name: &str) -> &str {
    let m = match model_name.rsplit_once('#') {
        Some((_, m)) => m,
        None => model_name.split_once(':').map_or(model_name, |(_, m)| m),
    };
    // `MODEL?options`: the options are not part of the model's name.
    m.split_once('?').map_or(m, |(m, _)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cached: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn cost_math() {
        let t = PriceTable::defaults();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // gpt-4o-mini: 1M in at 0.15 + 1M out at 0.60.
        assert!(close(
            t.cost_usd("gpt-4o-mini", &usage(1_000_000, 1_000_000, 0, 0), false),
            0.75
        ));
        // 1000 in of which 400 cached (gpt-4o: 2.50 / 1.25), 100 out at 10.
        let c = t.cost_usd("gpt-4o-2024-08-06", &usage(1000, 100, 400, 0), false);
        assert!(
            close(c, (600.0 * 2.5 + 400.0 * 1.25 + 100.0 * 10.0) / 1e6),
            "{c}"
        );
        // Anthropic sonnet: reads at 0.30, writes at 3.75.
        let c = t.cost_usd(
            "claude-sonnet-4-5-20250929",
            &usage(1300, 10, 1000, 200),
            false,
        );
        assert!(
            close(
                c,
                (100.0 * 3.0 + 1000.0 * 0.3 + 200.0 * 3.75 + 10.0 * 15.0) / 1e6
            ),
            "{c}"
        );
        assert_eq!(t.cost_usd("gpt-4o", &usage(1000, 100, 0, 0), true), 0.0);
        assert_eq!(
            t.cost_usd("llama3.2:1b", &usage(1000, 100, 0, 0), false),
            0.0
        );
    }

    #[test]
    fn lookup_prefers_the_longest_family_at_a_boundary() {
        let t = PriceTable::defaults();
        assert_eq!(t.lookup("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(t.lookup("gpt-4o").unwrap().input, 2.50);
        assert_eq!(t.lookup("claude-opus-4-1-20250805").unwrap().input, 15.0);
        assert_eq!(t.lookup("claude-opus-4-5").unwrap().input, 5.0);
        assert!(t.lookup("gpt-4o4").is_none());
        assert_eq!(price_id("openai:gpt-4o"), "gpt-4o");
        assert_eq!(price_id("openai-compat:http://h:8000/v1#llama"), "llama");
        assert_eq!(
            price_id("openai-compat:http://h:8000/v1#llama?key_env=K"),
            "llama"
        );
        assert_eq!(
            price_id("anthropic:claude-haiku-4-5?prompt_cache=off"),
            "claude-haiku-4-5"
        );
        assert_eq!(price_id("scripted"), "scripted");
    }

    #[test]
    fn price_files_override_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("prices.toml");
        std::fs::write(
            &toml_path,
            "[gpt-4o]\ninput = 1.0\noutput = 2.0\n\n[my-model]\ninput = 0.5\noutput = 0.5\n",
        )
        .unwrap();
        let t = PriceTable::defaults_with_file(&toml_path).unwrap();
        assert_eq!(
            t.lookup("gpt-4o").unwrap(),
            &Price {
                input: 1.0,
                output: 2.0,
                cached_input: None,
                cache_write: None,
                batch: None,
            }
        );
        assert_eq!(t.lookup("my-model").unwrap().input, 0.5);
        assert_eq!(t.lookup("gpt-4o-mini").unwrap().input, 0.15);

        let json_path = dir.path().join("prices.json");
        std::fs::write(&json_path, r#"{"gpt-4o": {"input": -1, "output": 2}}"#).unwrap();
        let e = PriceTable::defaults_with_file(&json_path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("prices.json") && e.contains("non-negative"),
            "{e}"
        );
        std::fs::write(&json_path, "{").unwrap();
        assert!(PriceTable::defaults_with_file(&json_path)
            .unwrap_err()
            .to_string()
            .contains("invalid price file"));
    }

    #[test]
    fn a_batched_call_is_billed_at_its_entrys_batch_rate() {
        let u = usage(1_000_000, 1_000_000, 0, 0);
        let mut t = PriceTable::defaults();
        for model in ["gpt-4o-mini", "claude-haiku-4-5"] {
            let full = t.billed_usd(model, &u, Billing::Standard);
            assert!(full > 0.0);
            assert_eq!(t.billed_usd(model, &u, Billing::Batch), full * 0.5);
        }
        t.insert(
            "mine",
            Price {
                input: 1.0,
                output: 1.0,
                cached_input: None,
                cache_write: None,
                batch: Some(0.25),
            },
        );
        assert_eq!(t.billed_usd("mine", &u, Billing::Batch), 0.5);
        assert_eq!(t.billed_usd("unknown", &u, Billing::Batch), 0.0);
    }
}
