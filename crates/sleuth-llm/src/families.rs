//! Which server preset an `openai:MODEL` gets, by model family: a table, not a prefix
//! list in code, so a model OpenAI names next year needs a row, not a release.
//!
//! Each row is `PATTERN=PRESET` (a preset of [`Quirks::PRESETS`]). A pattern ending in
//! `*` matches any model name that starts with the rest; any other pattern matches the
//! name itself and every name that continues it after a `-`, `.` or `_` (`gpt-5`
//! matches `gpt-5`, `gpt-5-mini` and `gpt-5.2`, never `gpt-50`). The first matching
//! row wins; a model no row matches gets the `openai` preset.
//!
//! The built-in rows follow what the API answers (recorded traffic,
//! `crates/sleuth-testkit/cassettes/`): o1-mini and o1-preview refuse both a `system`
//! and a `developer` message (400 `unsupported_value`), so their system prompt travels
//! in the first user turn; the reasoning families (o1, o3, o4, gpt-5 and its `gpt-5.x`
//! successors) refuse any temperature but the default and `stop`.
//!
//! Users add rows before the built-in ones with `SLEUTH_OPENAI_FAMILIES`, comma- or
//! semicolon-separated: `SLEUTH_OPENAI_FAMILIES="gpt-7*=openai-reasoning,my-ft-*=openai"`.

use super::quirks::Quirks;
use super::LlmError;

/// The environment variable whose rows come before the built-in table.
pub const FAMILIES_ENV: &str = "SLEUTH_OPENAI_FAMILIES";

const BUILT_IN: &[(&str, &str)] = &[
    ("o1-mini", "openai-reasoning-no-system"),
    ("o1-preview", "openai-reasoning-no-system"),
    ("o1", "openai-reasoning"),
    ("o3", "openai-reasoning"),
    ("o4", "openai-reasoning"),
    ("gpt-5", "openai-reasoning"),
];

/// The family table: user rows first, then the built-in ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFamilies {
    rows: Vec<(String, String)>,
}

impl Default for ModelFamilies {
    fn default() -> Self {
        ModelFamilies {
            rows: BUILT_IN
                .iter()
                .map(|(p, q)| (p.to_string(), q.to_string()))
                .collect(),
        }
    }
}

impl ModelFamilies {
    /// The built-in table with `extra` rows (`PATTERN=PRESET`, separated by `,` or `;`)
    /// in front; an unknown preset or a row without `=` is an error naming the row.
    pub fn with_rows(extra: &str) -> Result<ModelFamilies, LlmError> {
        let mut rows = Vec::new();
        for row in extra
            .split([',', ';'])
            .map(str::trim)
            .filter(|r| !r.is_empty())
        {
            let (pattern, preset) = row.split_once('=').ok_or_else(|| {
                LlmError::Config(format!(
                    "{FAMILIES_ENV}: `{row}` is not PATTERN=PRESET (e.g. gpt-7*=openai-reasoning)"
                ))
            })?;
            let (pattern, preset) = (pattern.trim(), preset.trim());
            Quirks::preset(preset).map_err(|e| LlmError::Config(format!("{FAMILIES_ENV}: {e}")))?;
            rows.push((pattern.to_string(), preset.to_string()));
        }
        rows.extend(ModelFamilies::default().rows);
        Ok(ModelFamilies { rows })
    }

    /// The preset of the first row matching `model`, else `openai`.
    pub fn quirks_for(&self, model: &str) -> Quirks {
        self.rows
            .iter()
            .find(|(pattern, _)| matches(pattern, model))
            .and_then(|(_, preset)| Quirks::preset(preset).ok())
            .unwrap_or_else(Quirks::openai)
    }
}

fn matches(pattern: &str, model: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        return model.starts_with(prefix);
    }
    match model.strip_prefix(pattern) {
        Some("") => true,
        Some(rest) => rest.starts_with(['-', '.', '_']),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_match_at_name_boundaries_and_user_rows_come_first() {
        let t = ModelFamilies::default();
        for (model, preset) in [
            ("o1-mini", "openai-reasoning-no-system"),
            ("o1-mini-2024-09-12", "openai-reasoning-no-system"),
            ("o1", "openai-reasoning"),
            ("o3-mini", "openai-reasoning"),
            ("gpt-5", "openai-reasoning"),
            ("gpt-5.6-sol", "openai-reasoning"),
            ("gpt-5.2", "openai-reasoning"),
            ("gpt-4o-mini", "openai"),
            ("o1x", "openai"),
            ("gpt-50", "openai"),
        ] {
            assert_eq!(t.quirks_for(model).name, preset, "{model}");
        }
        let t = ModelFamilies::with_rows("gpt-7*=openai-reasoning; gpt-5.9=openai").unwrap();
        assert_eq!(t.quirks_for("gpt-7o").name, "openai-reasoning");
        assert_eq!(t.quirks_for("gpt-5.9").name, "openai");
        assert_eq!(t.quirks_for("gpt-5.8").name, "openai-reasoning");
        let e = ModelFamilies::with_rows("gpt-7").unwrap_err().to_string();
        assert!(e.contains("PATTERN=PRESET"), "{e}");
        let e = ModelFamilies::with_rows("gpt-7=nope")
            .unwrap_err()
            .to_string();
        assert!(e.contains(FAMILIES_ENV) && e.contains("nope"), "{e}");
    }
}
