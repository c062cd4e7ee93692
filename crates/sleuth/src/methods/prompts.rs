//! Prompt templates: built into the binary, overridable file by file from a directory
//! (`--prompts DIR`), rendered with minijinja. Keeping prompts as files lets a user swap
//! in their own wording without touching the loop.

use super::TemplateError;
use crate::{Error, Result};
use minijinja::Environment;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in templates, by file name.
const BUILTIN: &[(&str, &str)] = &[
    ("system.txt", include_str!("prompts/system.txt")),
    ("question.txt", include_str!("prompts/question.txt")),
    ("react.txt", include_str!("prompts/react.txt")),
    ("react_cot.txt", include_str!("prompts/react_cot.txt")),
    ("self_ask.txt", include_str!("prompts/self_ask.txt")),
    ("ircot.txt", include_str!("prompts/ircot.txt")),
    ("reflexion.txt", include_str!("prompts/reflexion.txt")),
    ("notes.txt", include_str!("prompts/notes.txt")),
    ("memory.txt", include_str!("prompts/memory.txt")),
    ("nudge.txt", include_str!("prompts/nudge.txt")),
    ("compacted.txt", include_str!("prompts/compacted.txt")),
    ("conflicts.txt", include_str!("prompts/conflicts.txt")),
    ("reminder.txt", include_str!("prompts/reminder.txt")),
    ("no_action.txt", include_str!("prompts/no_action.txt")),
    (
        "dropped_facts.txt",
        include_str!("prompts/dropped_facts.txt"),
    ),
    ("reflection.txt", include_str!("prompts/reflection.txt")),
    (
        "stop_structural.txt",
        include_str!("prompts/stop_structural.txt"),
    ),
    (
        "stop_forward_only.txt",
        include_str!("prompts/stop_forward_only.txt"),
    ),
    (
        "stop_contrastive.txt",
        include_str!("prompts/stop_contrastive.txt"),
    ),
    (
        "stop_late_verification.txt",
        include_str!("prompts/stop_late_verification.txt"),
    ),
    ("verify.txt", include_str!("prompts/verify.txt")),
    ("last_turn.txt", include_str!("prompts/last_turn.txt")),
    (
        "forward_only_repeat.txt",
        include_str!("prompts/forward_only_repeat.txt"),
    ),
    ("action_cap.txt", include_str!("prompts/action_cap.txt")),
    (
        "stop_structural_due.txt",
        include_str!("prompts/stop_structural_due.txt"),
    ),
    ("eir_action.txt", include_str!("prompts/eir_action.txt")),
    ("eir_evidence.txt", include_str!("prompts/eir_evidence.txt")),
    ("eir_final.txt", include_str!("prompts/eir_final.txt")),
    ("eir_repair.txt", include_str!("prompts/eir_repair.txt")),
    ("eir_refresh.txt", include_str!("prompts/eir_refresh.txt")),
    ("eir_more.txt", include_str!("prompts/eir_more.txt")),
    ("eir_select.txt", include_str!("prompts/eir_select.txt")),
    (
        "direct_action.txt",
        include_str!("prompts/direct_action.txt"),
    ),
    (
        "direct_reflection.txt",
        include_str!("prompts/direct_reflection.txt"),
    ),
    (
        "ssr_decompose.txt",
        include_str!("prompts/ssr_decompose.txt"),
    ),
    ("ssr_verify.txt", include_str!("prompts/ssr_verify.txt")),
    ("ssr_refine.txt", include_str!("prompts/ssr_refine.txt")),
];

/// A set of prompt templates.
pub struct PromptSet {
    env: Environment<'static>,
    identity: PromptsIdentity,
}

/// Which templates a set holds, as digests: what a run directory records so that a
/// resume under other prompts (a `--prompts` folder added, dropped or edited, or another
/// version's built-in wording) is refused rather than mixed into one arm (issue 48).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PromptsIdentity {
    /// SHA-256 (16 hex digits) over every template's name and text, in name order.
    pub digest: String,
    /// The templates a folder replaced: name → SHA-256 (16 hex digits) of its text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<String, String>,
}

/// The first 16 hex digits of SHA-256 of `parts`, each length-prefixed so that no two
/// lists of parts hash alike.
pub(crate) fn short_digest<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl std::fmt::Debug for PromptSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSet").finish_non_exhaustive()
    }
}

impl Default for PromptSet {
    fn default() -> Self {
        Self::from_sources(
            BUILTIN.iter().map(|(n, s)| (n.to_string(), s.to_string())),
            BTreeMap::new(),
        )
        .expect("built-in prompt templates are valid")
    }
}

impl PromptSet {
    /// Names of the templates a directory may override.
    pub fn names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    /// The built-in text of one template (for `--prompts` users to start from).
    pub fn builtin(name: &str) -> Option<&'static str> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
    }

    /// The built-in templates, with any file of the same name in `dir` replacing its
    /// built-in counterpart. Files with unknown names are an error (likely a typo).
    pub fn with_overrides(dir: &Path) -> Result<Self> {
        let mut sources: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut overrides = BTreeMap::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(slot) = sources.iter_mut().find(|(n, _)| *n == name) else {
                return Err(Error::Invalid(format!(
                    "{}: unknown prompt template `{name}` (known: {})",
                    dir.display(),
                    Self::names().collect::<Vec<_>>().join(", ")
                )));
            };
            slot.1 =
                std::fs::read_to_string(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            overrides.insert(name, short_digest([slot.1.as_bytes()]));
        }
        Self::from_sources(sources, overrides)
    }

    /// The digests of this set's templates (see [`PromptsIdentity`]).
    pub fn identity(&self) -> &PromptsIdentity {
        &self.identity
    }

    fn from_sources(
        sources: impl IntoIterator<Item = (String, String)>,
        overrides: BTreeMap<String, String>,
    ) -> Result<Self> {
        let mut env = Environment::new();
        env.set_keep_trailing_newline(false);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let mut sources: Vec<(String, String)> = sources.into_iter().collect();
        sources.sort();
        let digest = short_digest(
            sources
                .iter()
                .flat_map(|(n, s)| [n.as_bytes(), s.as_bytes()]),
        );
        for (name, source) in sources {
            env.add_template_owned(name.clone(), source)
                .map_err(|e| template_error(&name, e))?;
        }
        Ok(PromptSet {
            env,
            identity: PromptsIdentity { digest, overrides },
        })
    }

    /// Renders template `name` with `ctx` (a `minijinja::context!` or any Serialize).
    pub fn render<S: serde::Serialize>(
        &self,
        name: &str,
        ctx: S,
    ) -> std::result::Result<String, TemplateError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| template_error(name, e))?;
        template
            .render(ctx)
            .map(|s| s.trim().to_string())
            .map_err(|e| template_error(name, e))
    }
}

fn template_error(name: &str, e: minijinja::Error) -> TemplateError {
    TemplateError {
        name: name.to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_renders_with_its_variables() {
        let p = PromptSet::default();
        let out = p
            .render(
                "nudge.txt",
                minijinja::context! { turn => 14, budget => 20 },
            )
            .unwrap();
        assert!(out.contains("13 of your 20 turns"));
        assert!(out.contains("confirmed facts"));
        let notes = p
            .render(
                "nudge.txt",
                minijinja::context! { turn => 14, budget => 20, notes => true },
            )
            .unwrap();
        // One message for every method (SLEUTH App. D.4): the notes flag changes nothing.
        assert_eq!(notes, out);
    }

    #[test]
    fn override_directory_replaces_one_template_and_rejects_typos() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("nudge.txt"), "Answer now ({{ turn }}).").unwrap();
        let p = PromptSet::with_overrides(dir.path()).unwrap();
        assert_eq!(
            p.render("nudge.txt", minijinja::context! { turn => 3, budget => 5 })
                .unwrap(),
            "Answer now (3)."
        );
        std::fs::write(dir.path().join("nudge.text"), "x").unwrap();
        let err = PromptSet::with_overrides(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown prompt template `nudge.text`"),
            "{err}"
        );
    }
}
