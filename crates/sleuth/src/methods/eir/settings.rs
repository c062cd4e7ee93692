//! Settings of the EIR-setting methods (`--set key=value`): the read budget H the paper
//! sweeps, Reflexion's trials, SSR's verifier temperature, and EIR's three controls.
//!
//! `temperature` and `max_tokens` are the shared loop keys; here `max_tokens` defaults to
//! 2048, the output limit of the EIR paper's runs.

use crate::methods::settings::{parse, parse_bool};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct EirSettings {
    /// H: paragraph reads per retrieval trajectory (EIR: then one submit-only turn;
    /// Direct, SSR, Reflexion: H turns including the submission).
    pub reads: u32,
    /// Reflexion trials.
    pub trials: u32,
    /// Temperature of Agentic SSR's verifier samples.
    pub verifier_temperature: f32,
    /// Control: when false, EIR keeps updating its lists but leaves them out of later
    /// action prompts.
    pub list_feedback: bool,
    /// Control: conclusions carry `depends_on` links, and a change to a conclusion
    /// triggers one repair call that revises its dependents and refreshes requirements.
    pub dependency_repair: bool,
    /// Control: after the final answer, the model may read up to this many more
    /// paragraphs; if it reads any, the final call runs again.
    pub extra_reads: u32,
    /// Send the action JSON schema as an output constraint (grammar-constrained local
    /// models, OpenAI structured outputs). Responses are validated either way.
    pub json_schema: bool,
    pub temperature: f32,
    pub max_tokens: u32,
}

impl Default for EirSettings {
    fn default() -> Self {
        EirSettings {
            reads: 6,
            trials: 5,
            verifier_temperature: 0.7,
            list_feedback: true,
            dependency_repair: false,
            extra_reads: 0,
            json_schema: true,
            temperature: 0.0,
            max_tokens: 2048,
        }
    }
}

/// Keys the EIR-setting methods understand (besides `temperature` and `max_tokens`).
pub const EIR_KEYS: &[(&str, &str)] = &[
    (
        "reads",
        "EIR setting: read budget H (integer >= 1, default 6)",
    ),
    ("trials", "eir-reflexion: trials per question (default 5)"),
    (
        "verifier_temperature",
        "ssr: temperature of the three verifier samples (default 0.7)",
    ),
    (
        "list_feedback",
        "eir: false keeps the lists out of later prompts (default true)",
    ),
    (
        "dependency_repair",
        "eir: true links conclusions and repairs dependents (default false)",
    ),
    (
        "extra_reads",
        "eir: further reads allowed after the final answer (default 0)",
    ),
    (
        "json_schema",
        "EIR setting: send the JSON schema as an output constraint (default true)",
    ),
];

impl EirSettings {
    /// Builds settings from `key=value` pairs; other methods' keys are ignored here.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, String> {
        let mut s = EirSettings::default();
        for (key, value) in map {
            match key.as_str() {
                "reads" => s.reads = parse(key, value, "a positive integer")?,
                "trials" => s.trials = parse(key, value, "a positive integer")?,
                "verifier_temperature" => s.verifier_temperature = parse(key, value, "a number")?,
                "list_feedback" => s.list_feedback = parse_bool(key, value)?,
                "dependency_repair" => s.dependency_repair = parse_bool(key, value)?,
                "extra_reads" => s.extra_reads = parse(key, value, "a non-negative integer")?,
                "json_schema" => s.json_schema = parse_bool(key, value)?,
                "temperature" => s.temperature = parse(key, value, "a number")?,
                "max_tokens" => s.max_tokens = parse(key, value, "a positive integer")?,
                _ => {}
            }
        }
        if s.reads == 0 {
            return Err("--set reads must be at least 1".into());
        }
        if s.trials == 0 {
            return Err("--set trials must be at least 1".into());
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<EirSettings, String> {
        EirSettings::from_map(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn defaults_follow_the_paper_and_keys_parse() {
        let d = with(&[]).unwrap();
        assert_eq!((d.reads, d.trials, d.max_tokens), (6, 5, 2048));
        assert_eq!(d.verifier_temperature, 0.7);
        let s = with(&[
            ("reads", "10"),
            ("list_feedback", "false"),
            ("dependency_repair", "true"),
            ("extra_reads", "2"),
            ("turns", "20"),
        ])
        .unwrap();
        assert_eq!(
            (s.reads, s.list_feedback, s.dependency_repair, s.extra_reads),
            (10, false, true, 2)
        );
    }

    #[test]
    fn bad_values_name_the_key_and_what_it_accepts() {
        assert!(with(&[("reads", "0")]).unwrap_err().contains("reads"));
        let e = with(&[("list_feedback", "maybe")]).unwrap_err();
        assert!(
            e.contains("list_feedback=maybe") && e.contains("true or false"),
            "{e}"
        );
        assert!(with(&[("extra_reads", "-1")])
            .unwrap_err()
            .contains("extra_reads"));
    }
}
