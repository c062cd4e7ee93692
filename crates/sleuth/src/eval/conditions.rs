//! What a run's records were made under, and the one rule for resuming: records made
//! under other conditions never join a run (issue 48, item 1).
//!
//! `run.json` holds the conditions ([`RunConditions`] beside the selection fields of
//! [`RunConfig`]); each record carries their digest ([`RunConfig::digest_for`]), so a
//! record says what made it even once copied out of its directory. A resume compares
//! the directory's configuration with the new one field by field and refuses the first
//! difference, named ([`RunDifference`]). Two things may change without a refusal,
//! because users grow runs: methods may be added, and the selection may take more of
//! the same order (a larger `--limit`, a larger `--sample` under the same seed and
//! offset); `run.json` then records the wider selection.
//!
//! A configuration written before these fields existed has no conditions recorded;
//! nothing is compared for them (the earlier checks still hold).

pub use super::difference::RunDifference;
use crate::knob::Knob;
use crate::methods::PromptsIdentity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// What `run.json` holds: enough to reproduce and to refuse mixing runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub sleuth_version: String,
    pub dataset: String,
    pub data: Vec<PathBuf>,
    pub model: String,
    pub methods: Vec<String>,
    /// The `--set` pairs as given on the command line.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// Per method, every setting it reads, resolved (defaults included).
    #[serde(default)]
    pub method_settings: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    pub hops: Option<u8>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub sample: Option<usize>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Questions of the seeded order skipped before the sample (`--sample-offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_offset: Option<usize>,
    #[serde(default)]
    pub shard: Option<String>,
    #[serde(default)]
    pub env: Option<String>,
    /// What else shaped the records (data digests, index, prompts, endpoint).
    #[serde(default)]
    pub conditions: RunConditions,
}

/// Everything besides the selection and settings that shapes a run's records.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunConditions {
    /// Per file of `data`, in its order: SHA-256 (hex) of its bytes. Empty for
    /// questions given in memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_sha256: Vec<String>,
    /// The open-corpus index (env `corpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexIdentity>,
    /// The prompt templates the methods were built with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsIdentity>,
    /// The prompt folder (`--prompts DIR`), for people reading `run.json`; the
    /// templates' digests are what is compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_dir: Option<PathBuf>,
    /// Where the model was served ([`crate::llm::ModelSpec::served_at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// An open-corpus index as a run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexIdentity {
    pub dir: PathBuf,
    /// [`crate::retrieval::bm25::Bm25Index::fingerprint`].
    pub fingerprint: String,
    /// Read attempts per episode (`--corpus-reads`).
    pub reads: usize,
}

/// How a selection takes questions from the filtered order: its head, or a seeded
/// sample. A resume may take more of the same order, never another order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Head,
    Sample { seed: u64, offset: usize },
}

impl Order {
    /// The order as a record's digest reads it: fixed text, whoever is speaking (the
    /// CLI's words when records first carried it), so a run resumed from another front
    /// end, or by a newer sleuth, has the same digests.
    fn digest_text(&self) -> String {
        match self {
            Order::Head => format!("the file's first questions (no {})", Knob::Sample.flag()),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Order::Head => write!(f, "the file's first questions (no {})", Knob::Sample),
            Order::Sample { seed, offset: 0 } => write!(f, "a sample under seed {seed}"),
            Order::Sample { seed, offset } => {
                write!(f, "a sample under seed {seed} skipping {offset}")
            }
        }
    }
}

fn env_name(env: &Option<String>) -> String {
    match env.as_deref() {
        Some("corpus") => "open corpus".to_string(),
        _ => "question's own paragraphs".to_string(),
    }
}

/// The first key whose value differs between two maps.
fn first_change(
    was: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Option<(String, Option<String>, Option<String>)> {
    was.keys()
        .chain(now.keys())
        .find(|k| was.get(*k) != now.get(*k))
        .map(|k| (k.clone(), was.get(k).cloned(), now.get(k).cloned()))
}

impl RunConfig {
    fn order(&self) -> Order {
        match (self.sample, self.seed) {
            (Some(_), Some(seed)) => Order::Sample {
                seed,
                offset: self.sample_offset.unwrap_or(0),
            },
            _ => Order::Head,
        }
    }

    /// The first difference between the run in a directory (`self`) and `now`, the one
    /// asked to extend it; `None` when `now` may resume it. What decides the most comes
    /// first (where the questions and the model are, then how they are chosen, then the
    /// settings and prompts), so a message names the cause, not a consequence of it (the
    /// open corpus resolves some settings otherwise).
    pub fn difference(&self, now: &RunConfig) -> Option<RunDifference> {
        self.source_difference(now)
            .or_else(|| self.environment_difference(now))
            .or_else(|| self.selection_difference(now))
            .or_else(|| self.settings_difference(now))
            .or_else(|| self.prompts_difference(now))
    }

    /// Whether conditions were recorded (not by a version from before they were).
    fn recorded(&self) -> bool {
        !self.conditions.data_sha256.is_empty() || self.conditions.prompts.is_some()
    }

    /// The questions' schema and files, the model and its server.
    fn source_difference(&self, now: &RunConfig) -> Option<RunDifference> {
        if self.dataset != now.dataset {
            return Some(RunDifference::Dataset {
                was: self.dataset.clone(),
                now: now.dataset.clone(),
            });
        }
        if self.model != now.model {
            return Some(RunDifference::Model {
                was: self.model.clone(),
                now: now.model.clone(),
            });
        }
        let (was, is) = (&self.conditions, &now.conditions);
        if let (Some(a), Some(b)) = (&was.endpoint, &is.endpoint) {
            if a != b {
                return Some(RunDifference::Endpoint {
                    was: a.clone(),
                    now: b.clone(),
                });
            }
        }
        if !self.recorded() {
            return None;
        }
        let files = || RunDifference::DataFiles {
            was: self.data.clone(),
            now: now.data.clone(),
        };
        if was.data_sha256.len() != is.data_sha256.len() {
            return Some(files());
        }
        let pairs = was.data_sha256.iter().zip(&is.data_sha256).zip(&now.data);
        for ((a, b), file) in pairs {
            if a != b {
                // The same path with other bytes is an edit; another path, another file.
                return Some(if self.data.contains(file) {
                    RunDifference::DataContent {
                        file: file.clone(),
                        was: a.clone(),
                        now: b.clone(),
                    }
                } else {
                    files()
                });
            }
        }
        None
    }

    /// The paragraphs an agent reads: its question's pool, or which corpus index.
    fn environment_difference(&self, now: &RunConfig) -> Option<RunDifference> {
        if self.env.is_some() && now.env.is_some() && self.env != now.env {
            return Some(RunDifference::Environment {
                was: env_name(&self.env),
                now: env_name(&now.env),
            });
        }
        let (was, is) = (&self.conditions.index, &now.conditions.index);
        if !self.recorded() || was == is {
            return None;
        }
        let name = |i: &Option<IndexIdentity>| match i {
            Some(i) => format!(
                "{} (fingerprint {}, {} reads)",
                i.dir.display(),
                i.fingerprint,
                i.reads
            ),
            None => "none".to_string(),
        };
        Some(RunDifference::Index {
            was: name(was),
            now: name(is),
        })
    }

    /// Hops, shard and the order questions are taken in (not how many: that may grow).
    fn selection_difference(&self, now: &RunConfig) -> Option<RunDifference> {
        if self.hops != now.hops {
            return Some(RunDifference::Hops {
                was: self.hops,
                now: now.hops,
            });
        }
        if self.shard != now.shard {
            return Some(RunDifference::Shard {
                was: self.shard.clone(),
                now: now.shard.clone(),
            });
        }
        (self.order() != now.order()).then(|| RunDifference::Order {
            was: self.order().to_string(),
            now: now.order().to_string(),
        })
    }

    /// The `--set` pairs, then every resolved setting of a method both runs hold.
    fn settings_difference(&self, now: &RunConfig) -> Option<RunDifference> {
        if let Some((key, was, now)) = first_change(&self.settings, &now.settings) {
            return Some(RunDifference::Setting { key, was, now });
        }
        self.method_settings.iter().find_map(|(method, settings)| {
            let current = now.method_settings.get(method)?;
            let (key, was, now) = first_change(settings, current)?;
            Some(RunDifference::MethodSetting {
                method: method.clone(),
                key,
                was,
                now,
            })
        })
    }

    /// The templates: which a folder replaced, or the built-in wording itself.
    fn prompts_difference(&self, now: &RunConfig) -> Option<RunDifference> {
        let (Some(a), Some(b)) = (&self.conditions.prompts, &now.conditions.prompts) else {
            return None;
        };
        if a == b {
            return None;
        }
        let detail = match first_change(&a.overrides, &b.overrides) {
            Some((name, None, Some(_))) => format!("{name} is replaced now and was built-in"),
            Some((name, Some(_), None)) => format!("{name} was replaced and is built-in now"),
            Some((name, _, _)) => format!("{name} was replaced by another text"),
            None => format!(
                "the built-in templates differ from those sleuth {} used",
                self.sleuth_version
            ),
        };
        Some(RunDifference::Prompts { detail })
    }

    /// This configuration taking in what an earlier one of its directory recorded:
    /// methods it held first, and the wider of the two selections of one order.
    pub fn extending(mut self, earlier: &RunConfig) -> RunConfig {
        for m in earlier.methods.iter().rev() {
            if !self.methods.contains(m) {
                self.methods.insert(0, m.clone());
            }
        }
        for (method, settings) in &earlier.method_settings {
            self.method_settings
                .entry(method.clone())
                .or_insert_with(|| settings.clone());
        }
        let wider = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None, // either took every question
        };
        self.limit = wider(self.limit, earlier.limit);
        if self.sample.is_some() {
            self.sample = wider(self.sample, earlier.sample);
        }
        self
    }

    /// The digest a record of `method` carries: the conditions, selection order and
    /// settings it was made under (not the size of the selection, which may grow).
    pub fn digest_for(&self, method: &str) -> String {
        let identity = serde_json::json!({
            "dataset": self.dataset,
            "data_sha256": self.conditions.data_sha256,
            "model": self.model,
            "endpoint": self.conditions.endpoint,
            "settings": self.method_settings.get(method),
            "hops": self.hops,
            "shard": self.shard,
            "order": self.order().digest_text(),
            "env": self.env,
            "index": self.conditions.index,
            "prompts": self.conditions.prompts,
        });
        crate::methods::short_digest([identity.to_string().as_bytes()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RunConfig {
        RunConfig {
            sleuth_version: "0".into(),
            dataset: "hotpotqa".into(),
            data: vec!["a.jsonl".into()],
            model: "m".into(),
            methods: vec!["react".into()],
            settings: BTreeMap::new(),
            method_settings: BTreeMap::from([(
                "react".into(),
                BTreeMap::from([("turns".into(), "20".into())]),
            )]),
            hops: None,
            limit: Some(3),
            sample: None,
            seed: None,
            sample_offset: None,
            shard: None,
            env: Some("pool".into()),
            conditions: RunConditions {
                data_sha256: vec!["aa".into()],
                prompts: Some(PromptsIdentity::default()),
                ..RunConditions::default()
            },
        }
    }

    #[test]
    fn growing_the_same_order_is_a_resume_and_run_json_keeps_the_wider_one() {
        let was = config();
        let mut now = config();
        now.limit = Some(5);
        now.methods = vec!["sleuth".into()];
        assert_eq!(was.difference(&now), None);
        let merged = now.extending(&was);
        assert_eq!(merged.limit, Some(5));
        assert_eq!(merged.methods, ["react", "sleuth"]);
        let mut smaller = config();
        smaller.limit = Some(1);
        assert_eq!(smaller.extending(&was).limit, Some(3));
    }

    #[test]
    fn each_condition_is_named_when_it_differs() {
        let was = config();
        let mut now = config();
        now.seed = Some(2);
        now.sample = Some(3);
        assert!(matches!(
            was.difference(&now),
            Some(RunDifference::Order { .. })
        ));
        let mut now = config();
        now.conditions.data_sha256 = vec!["bb".into()];
        let d = was.difference(&now).unwrap();
        assert!(d.to_string().starts_with("a.jsonl changed"), "{d}");
        let mut now = config();
        now.settings.insert("turns".into(), "10".into());
        assert_eq!(
            was.difference(&now).unwrap().to_string(),
            "setting turns was unset and is `10` now"
        );
        let mut now = config();
        now.conditions.prompts = Some(PromptsIdentity {
            digest: "x".into(),
            overrides: BTreeMap::from([("react.txt".into(), "d".into())]),
        });
        assert_eq!(
            was.difference(&now).unwrap().to_string(),
            "the prompts differ: react.txt is replaced now and was built-in"
        );
    }

    #[test]
    fn a_config_from_before_conditions_compares_what_it_has() {
        let mut was = config();
        was.conditions = RunConditions::default();
        let mut now = config();
        now.conditions.data_sha256 = vec!["bb".into()];
        assert_eq!(was.difference(&now), None);
    }

    #[test]
    fn the_record_digest_ignores_the_selection_size_only() {
        let a = config();
        let mut b = config();
        b.limit = Some(50);
        assert_eq!(a.digest_for("react"), b.digest_for("react"));
        b.conditions.endpoint = Some("http://other/v1".into());
        assert_ne!(a.digest_for("react"), b.digest_for("react"));
    }
}
