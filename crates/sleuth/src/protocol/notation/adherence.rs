//! The adherence check (SLEUTH §5.5, Table 4: the share of turns written "in the
//! prescribed notation"; enforcement's runtime check, §3.4, App. M): whether a response
//! writes every section of its schema with entries in the notation.
//!
//! Only what reads as an entry is judged: a bullet or numbered line, or one opening with
//! an entry id (`[F1]`, `[H1]`, `[Q1]`). A `none`-style line (`- None so far.`, `- No
//! facts confirmed yet.`) is an empty section's placeholder, not a malformed entry. A
//! line of prose after a section's entries (the reasoning a model writes before its
//! action line) ends the section ([`SectionProse::Ends`]), as a delimiter line does
//! ([`super::parse::is_delimiter`]). What still fails: a missing section, a fact with
//! no source, a hypothesis or question missing its fields, or prose in place of the
//! entries (right under a header, before any entry or placeholder).

use super::parse::{entry_regexes, field, fields, level, parse_fact, parse_question, sections};
use super::{Confidence, MemorySchema, Section};

/// What a hypothesis line needs to count as written in the notation (`hypothesis_fields`).
///
/// SLEUTH §3.1 and App. K give one entry format, `[Hj] hypothesis | confidence: level |
/// supports: fact IDs | contradicts: fact IDs`, and Table 4's adherence is the share of
/// turns in "the prescribed notation", so by default every field is asked for
/// ([`HypothesisFields::All`]); a field may be empty (`contradicts: -`, `contradicts:`),
/// as a hypothesis with no contradicting fact has nothing to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HypothesisFields {
    /// `confidence`, `supports` and `contradicts` all present (the paper's format).
    #[default]
    All,
    /// Only a confidence (the earlier, lenient reading).
    Confidence,
}

impl HypothesisFields {
    pub const NAMES: &'static [&'static str] = &["all", "confidence"];

    pub fn from_name(name: &str) -> Option<HypothesisFields> {
        match name.trim() {
            "all" => Some(HypothesisFields::All),
            "confidence" => Some(HypothesisFields::Confidence),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HypothesisFields::All => "all",
            HypothesisFields::Confidence => "confidence",
        }
    }

    /// Whether the body of a hypothesis line (after its `[Hj]`) has the fields asked for.
    fn met_by(self, body: &str) -> bool {
        let (_, kv) = fields(body);
        let has = |key: &str| field(&kv, key).is_some();
        let confident = level(
            field(&kv, "confidence"),
            Confidence::Low,
            Confidence::Medium,
            Confidence::High,
        )
        .is_some();
        match self {
            HypothesisFields::All => confident && has("supports") && has("contradicts"),
            HypothesisFields::Confidence => confident,
        }
    }
}

/// What a line of prose inside a typed section does to the check (`section_prose`).
///
/// Table 4 counts turns in the notation, which §3.1 defines by its entries; it says
/// nothing of the prose a model writes around them. By default ([`SectionProse::Ends`])
/// prose after a section's entries (or its placeholder) ends the section, so a
/// reasoning sentence between Open Questions and the action line is no malformed
/// question; [`SectionProse::Judged`], the earlier reading, judges every line up to the
/// next header or protocol line as an entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectionProse {
    #[default]
    Ends,
    Judged,
}

impl SectionProse {
    pub const NAMES: &'static [&'static str] = &["ends", "judged"];

    pub fn from_name(name: &str) -> Option<SectionProse> {
        match name.trim() {
            "ends" => Some(SectionProse::Ends),
            "judged" => Some(SectionProse::Judged),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SectionProse::Ends => "ends",
            SectionProse::Judged => "judged",
        }
    }

    /// The lines of a section's body judged as entries, placeholders left out.
    fn judged<'a>(self, lines: &[&'a str]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut started = false;
        for line in lines.iter().map(|l| l.trim()) {
            if is_placeholder(line) {
                started |= !line.is_empty();
                continue;
            }
            let prose = !looks_like_entry(line);
            if prose && started && self == SectionProse::Ends {
                break;
            }
            started = true;
            out.push(line);
        }
        out
    }
}

/// What the check asks of a response beyond its sections: the hypothesis fields and
/// what prose inside a section does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdherenceRules {
    pub hypotheses: HypothesisFields,
    pub prose: SectionProse,
}

/// Whether a response follows the notation for every section of `schema`, a
/// hypothesis line needing all four fields of the paper's format
/// ([`HypothesisFields::All`]; [`check_adherence_with`] for the lenient reading).
pub fn check_adherence(text: &str, schema: &MemorySchema) -> bool {
    check_adherence_under(text, schema, AdherenceRules::default())
}

/// [`check_adherence_under`] with prose ending a section (the default) and `hypotheses`.
pub fn check_adherence_with(
    text: &str,
    schema: &MemorySchema,
    hypotheses: HypothesisFields,
) -> bool {
    let rules = AdherenceRules {
        hypotheses,
        ..AdherenceRules::default()
    };
    check_adherence_under(text, schema, rules)
}

/// Whether a response follows the notation for every section of `schema`: each header
/// is present, and every entry line in a section is well-formed (a fact names its
/// source; a hypothesis has the fields `rules.hypotheses` asks for; a question has an
/// action and a priority, or is resolved). Empty sections (no entries, or a placeholder
/// such as `- none yet`) are allowed.
pub fn check_adherence_under(text: &str, schema: &MemorySchema, rules: AdherenceRules) -> bool {
    let found = sections(text);
    schema.sections.iter().all(|&wanted| {
        let bodies: Vec<Vec<&str>> = found
            .iter()
            .filter(|(s, _)| *s == wanted)
            .map(|(_, lines)| rules.prose.judged(lines))
            .collect();
        // A reply may open a section twice (a memory restated after the reasoning):
        // the ones holding entries are judged, all of them; an empty one is fine.
        let holding: Vec<&Vec<&str>> = bodies
            .iter()
            .filter(|b| b.iter().any(|l| looks_like_entry(l)))
            .collect();
        let judged = if holding.is_empty() {
            bodies.iter().take(1).collect()
        } else {
            holding
        };
        !judged.is_empty() && judged.iter().all(|b| well_formed(wanted, b, rules))
    })
}

/// Whether every judged line of a `section` is an entry of its notation.
fn well_formed(section: Section, entries: &[&str], rules: AdherenceRules) -> bool {
    let [fact_re, hyp_re, q_re] = entry_regexes();
    let mut entries = entries.iter();
    match section {
        Section::Notes => true,
        Section::Facts => entries.all(|l| {
            fact_re
                .captures(l)
                .is_some_and(|c| parse_fact(&c[1], &c[2]).source.is_some())
        }),
        Section::Hypotheses => entries.all(|l| {
            hyp_re
                .captures(l)
                .is_some_and(|c| rules.hypotheses.met_by(&c[2]))
        }),
        Section::Questions => entries.all(|l| {
            q_re.captures(l).is_some_and(|c| {
                let q = parse_question(&c[1], &c[2]);
                q.resolved || (q.action.is_some() && q.priority.is_some())
            })
        }),
    }
}

/// Whether a line reads as an entry: a bullet (`-`, `*`, `+`, `•`), a numbered item, or
/// an entry id (`[F1]`, `**[H2]**`) at its start.
fn looks_like_entry(line: &str) -> bool {
    let t = line.trim_start();
    let mut chars = t.chars();
    let bullet = match chars.next() {
        Some('-' | '*' | '+' | '•') => {
            chars.next().is_some_and(|c| c.is_whitespace() || c == '[')
        }
        _ => false,
    };
    let numbered = {
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && t[digits..].starts_with(['.', ')'])
    };
    let [fact_re, hyp_re, q_re] = entry_regexes();
    bullet || numbered || [fact_re, hyp_re, q_re].iter().any(|re| re.is_match(t))
}

/// Whether a line is an empty section's placeholder: blank, or (bullet and emphasis
/// aside) opening with `none`, `no`, `nothing`, `n/a`, `empty` or `not yet`, and no
/// entry id (`- None so far.`, `- No facts confirmed yet.`, `- None remaining; all
/// resolved.`).
fn is_placeholder(line: &str) -> bool {
    let l = line
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_ascii_lowercase();
    if l.is_empty() {
        return true;
    }
    let [fact_re, hyp_re, q_re] = entry_regexes();
    if [fact_re, hyp_re, q_re].iter().any(|re| re.is_match(line)) {
        return false;
    }
    let first = l
        .split(|c: char| !(c.is_alphanumeric() || c == '/'))
        .next()
        .unwrap_or("");
    matches!(first, "none" | "no" | "nothing" | "n/a" | "empty") || l.starts_with("not yet")
}
