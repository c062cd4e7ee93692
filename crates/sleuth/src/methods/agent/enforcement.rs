//! Protocol enforcement (SLEUTH paper §3.4, §5.5; App. M, "Enforcement fairness and
//! budget accounting"): runtime help for models that drift out of the working-memory
//! notation. The paper's Table 1 runs use none of it; `enforce=true` turns it on.
//!
//! - Delimiters: the prompt adaptation "with explicit structural delimiters" (the
//!   memory template's `enforce` variant).
//! - The notation check: a response missing the typed sections in their notation is
//!   rejected and the model re-prompted with a reminder. A hypothesis line must carry
//!   all four fields of §3.1's format (`hypothesis_fields=confidence` asks for the
//!   confidence alone); prose after a section's entries ends it (`section_prose`). The
//!   re-prompt carries the rejected response followed by the reminder; once a reply is
//!   accepted the rejected exchanges leave the conversation (App. M counts a re-prompt
//!   as about 50 tokens per occurrence, which later calls re-sending the rejected reply
//!   would not be; `keep_rejected=true` keeps them). A rejection uses no turn
//!   ("rejected turns do not count against the 20-turn budget"), but its call and
//!   tokens are counted (`reminder` calls), at most `max_reminders` per episode (the
//!   paper's 5). Only a typed memory is checked: the baselines "have no structured
//!   format to validate".
//! - Fact hand-back (ours, not part of enforcement): the confirmed facts a response
//!   left out are handed back in the next observation only with `restore_facts=true`,
//!   off in every recipe. App. M defines enforcement as the delimiters and the check
//!   alone, so `enforce=true` hands nothing back; the record's merged state keeps the
//!   dropped facts either way (§3.1: never retracted).

use super::template::render;
use crate::memory::{check_adherence_under, AdherenceRules, MemoryKind, MemorySchema, Merged};
use crate::methods::settings::AgentSettings;
use crate::methods::PromptSet;
use crate::methods::{AgentError, Episode};
use minijinja::context;

/// The enforcement an episode runs under.
pub(super) struct Enforcement {
    /// The typed sections a response must hold, when the check is on.
    check: Option<MemorySchema>,
    /// What the check asks of the entries (`hypothesis_fields`, `section_prose`).
    rules: AdherenceRules,
    max_reminders: u32,
    /// Whether dropped facts are handed back.
    hand_back: bool,
}

impl Enforcement {
    pub fn new(settings: &AgentSettings, memory: &MemoryKind) -> Enforcement {
        Enforcement {
            check: memory.typed().filter(|_| settings.enforce).cloned(),
            rules: settings.adherence_rules(),
            max_reminders: settings.max_reminders,
            // Only when asked: App. M's enforcement is the delimiters and the check.
            hand_back: settings.restore_facts,
        }
    }

    /// Whether the system prompt carries the delimited notation.
    pub fn delimiters(settings: &AgentSettings) -> bool {
        settings.enforce
    }

    /// The reminder re-prompting a response that broke the notation, while reminders
    /// remain; counts it in the episode.
    pub fn reminder(
        &self,
        response: &str,
        episode: &mut Episode,
        prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        let Some(schema) = &self.check else {
            return Ok(None);
        };
        if check_adherence_under(response, schema, self.rules)
            || episode.reminders >= self.max_reminders
        {
            return Ok(None);
        }
        episode.reminders += 1;
        let sections = schema
            .sections
            .iter()
            .map(|s| format!("`{}`", s.header()))
            .collect::<Vec<_>>()
            .join(", ");
        render(prompts, "reminder.txt", context! { sections }).map(Some)
    }

    /// The observation handing back the confirmed facts this turn's memory left out.
    pub fn hand_back(
        &self,
        merged: &Merged,
        prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        if !self.hand_back || merged.dropped.is_empty() {
            return Ok(None);
        }
        let facts = merged
            .dropped
            .iter()
            .map(|f| format!("- {}", f.render()))
            .collect::<Vec<_>>()
            .join("\n");
        render(prompts, "dropped_facts.txt", context! { facts }).map(Some)
    }
}
