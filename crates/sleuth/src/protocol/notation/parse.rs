//! Parsing the model's working-memory text, tolerant of the usual formatting drift
//! (markdown bullets and bold, header case, missing fields). Whatever cannot be parsed
//! is simply absent from the result; [`super::check_adherence`] says whether the
//! response followed the notation, and the caller keeps the raw text in the trace.

use super::{
    Confidence, Fact, Hypothesis, MemorySchema, OpenQuestion, Priority, Section, Triple, Written,
};
use crate::protocol::action::ends_section;
use regex::Regex;
use std::sync::OnceLock;

/// Whether `line` is a structural delimiter: a line opening or closing a block, such as
/// the enforced prompt's `=== WORKING MEMORY (...) ===` and `=== END WORKING MEMORY ===`
/// (SLEUTH §3.4, §5.5, App. M: the prompt adaptation "with explicit structural
/// delimiters"), or a markdown rule (`---`, `***`, `___`). It belongs to no section and
/// ends the one before it, so a reply written exactly as the enforced prompt asks is
/// not read as having a malformed entry in its last section.
pub(super) fn is_delimiter(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("===")
        || (t.len() >= 3 && ['-', '*', '_'].iter().any(|&c| t.chars().all(|x| x == c)))
}

/// Splits a response into its memory sections: `(section, body lines)` in order.
/// A header is a section's name (markdown aside, an optional parenthetical such as
/// `(with sources)`) followed by a colon or by nothing, so a prose line that starts
/// with the words ("Confirmed facts so far point to...", "Notes from your earlier
/// attempts...") opens no section. A section ends at the next header, at a protocol
/// line (`Action:`, `Thought:`, see [`ends_section`]) or at a delimiter line
/// ([`is_delimiter`]).
pub(super) fn sections(text: &str) -> Vec<(Section, Vec<&str>)> {
    static HEADER: OnceLock<Regex> = OnceLock::new();
    let header = HEADER.get_or_init(|| {
        Regex::new(
            r"(?i)^[\s#>*_`\-=]*(confirmed facts|active hypotheses|open questions|notes|scratchpad)\s*(?:\([^)]*\))?\s*[*_`=]*\s*(?::\s*[*_`=]*\s*(.*)|[*_`=#]*\s*)$",
        )
        .expect("valid header regex")
    });
    let mut out: Vec<(Section, Vec<&str>)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(c) = header.captures(line) {
            let section = match c[1].to_ascii_lowercase().as_str() {
                "confirmed facts" => Section::Facts,
                "active hypotheses" => Section::Hypotheses,
                "open questions" => Section::Questions,
                _ => Section::Notes,
            };
            let rest = c.get(2).map_or("", |m| m.as_str());
            out.push((section, Vec::new()));
            open = true;
            if !rest.trim().is_empty() {
                out.last_mut().expect("just pushed").1.push(rest);
            }
        } else if ends_section(line) || is_delimiter(line) {
            open = false;
        } else if open {
            out.last_mut().expect("open section").1.push(line);
        }
    }
    out
}

pub(super) fn entry_regexes() -> &'static [Regex; 3] {
    static RES: OnceLock<[Regex; 3]> = OnceLock::new();
    RES.get_or_init(|| {
        let prefix = r"^[\s>*_`\-•]*(?:\d+[.)]\s*)?[*_`]*\[\s*";
        [
            Regex::new(&format!(r"(?i){prefix}(F\d+)\s*\][*_`]*\s*(.*)$")).expect("fact regex"),
            Regex::new(&format!(r"(?i){prefix}(H\d+)\s*\][*_`]*\s*(.*)$")).expect("hyp regex"),
            Regex::new(&format!(r"(?i){prefix}(Q\d+)\s*\][*_`]*\s*(.*)$")).expect("q regex"),
        ]
    })
}

/// A fact line: the statement and its source, then (per-fact confidence and
/// contradiction detection) optional `| confidence: ...` and `| triple: S ; R ; V`
/// fields. Only those two keys start the fields, so a `|` inside a statement stays in it.
pub(super) fn parse_fact(id: &str, body: &str) -> Fact {
    static SOURCE: OnceLock<Regex> = OnceLock::new();
    static FIELDS: OnceLock<Regex> = OnceLock::new();
    let re = SOURCE.get_or_init(|| {
        Regex::new(r"(?i)^(.*?)\s*[\(\[]\s*source\s*:\s*(.*?)\s*[\)\]]\s*\.?\s*$")
            .expect("source regex")
    });
    let fields_start = FIELDS.get_or_init(|| {
        Regex::new(r"(?i)\|\s*(?:confidence|triple)\s*:").expect("fact fields regex")
    });
    let (body, kv) = match fields_start.find(body) {
        Some(m) => (&body[..m.start()], fields(&body[m.start()..]).1),
        None => (body, Vec::new()),
    };
    let (statement, source) = match re.captures(body) {
        Some(c) => (
            c[1].trim().to_string(),
            Some(c[2].trim().to_string()).filter(|s| !s.is_empty()),
        ),
        None => (body.trim().to_string(), None),
    };
    Fact {
        id: id.to_uppercase(),
        statement,
        source,
        confidence: level(
            field(&kv, "confidence"),
            Confidence::Low,
            Confidence::Medium,
            Confidence::High,
        ),
        triple: field(&kv, "triple").and_then(Triple::parse),
    }
}

/// Splits `text | key: value | key: value` into the text and its fields.
pub(super) fn fields(body: &str) -> (String, Vec<(String, String)>) {
    let mut parts = body.split('|');
    let text = parts.next().unwrap_or("").trim().to_string();
    let kv = parts
        .filter_map(|p| {
            let (k, v) = p.split_once(':')?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    (text, kv)
}

pub(super) fn field<'a>(kv: &'a [(String, String)], key: &str) -> Option<&'a str> {
    kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn ids(list: Option<&str>) -> Vec<String> {
    list.unwrap_or("")
        .split([',', ' ', ';'])
        .map(|s| {
            s.trim()
                .trim_matches(|c| c == '[' || c == ']')
                .to_uppercase()
        })
        .filter(|s| s.len() > 1 && s.starts_with('F'))
        .collect()
}

pub(super) fn level<T>(value: Option<&str>, low: T, medium: T, high: T) -> Option<T> {
    match value?
        .trim()
        .trim_matches(|c: char| !c.is_alphabetic())
        .to_ascii_lowercase()
        .as_str()
    {
        "high" => Some(high),
        "medium" | "med" => Some(medium),
        "low" => Some(low),
        _ => None,
    }
}

fn parse_hypothesis(id: &str, body: &str) -> Hypothesis {
    let (text, kv) = fields(body);
    Hypothesis {
        id: id.to_uppercase(),
        text,
        confidence: level(
            field(&kv, "confidence"),
            Confidence::Low,
            Confidence::Medium,
            Confidence::High,
        ),
        supports: ids(field(&kv, "supports")),
        contradicts: ids(field(&kv, "contradicts")),
    }
}

/// A resolved mark anywhere on a question line: `(resolved)`, `[resolved]`,
/// `| resolved`, `status: resolved`, or a trailing `resolved` / `RESOLVED`.
fn resolved_mark(body: &str) -> Option<(String, bool)> {
    static MARK: OnceLock<Regex> = OnceLock::new();
    let re = MARK.get_or_init(|| {
        Regex::new(r"(?i)\s*(?:[\(\[]\s*resolved\b[^\)\]]*[\)\]]|\|\s*(?:status\s*:\s*)?resolved\b[^|]*|\bresolved\s*\.?\s*$)")
            .expect("resolved regex")
    });
    re.is_match(body)
        .then(|| (re.replace_all(body, "").trim().to_string(), true))
}

pub(super) fn parse_question(id: &str, body: &str) -> OpenQuestion {
    let (body, resolved) = resolved_mark(body).unwrap_or_else(|| (body.to_string(), false));
    let (text, kv) = fields(&body);
    OpenQuestion {
        resolved,
        id: id.to_uppercase(),
        text,
        action: field(&kv, "action")
            .map(str::to_string)
            .filter(|s| !s.is_empty()),
        priority: level(
            field(&kv, "priority"),
            Priority::Low,
            Priority::Medium,
            Priority::High,
        ),
    }
}

/// Whether a response writes `section` at all (a header, even over an empty list).
pub fn writes_section(text: &str, section: Section) -> bool {
    sections(text).iter().any(|(s, _)| *s == section)
}

/// Parses the sections of `schema` out of a model response.
pub fn parse(text: &str, schema: &MemorySchema) -> Written {
    let [fact_re, hyp_re, q_re] = entry_regexes();
    let mut memory = Written::default();
    for (section, lines) in sections(text) {
        if !schema.has(section) {
            continue;
        }
        match section {
            Section::Notes => {
                let body = lines.join("\n").trim().to_string();
                memory.notes = Some(body);
            }
            Section::Facts => memory.facts.extend(
                lines
                    .iter()
                    .filter_map(|l| fact_re.captures(l))
                    .map(|c| parse_fact(&c[1], &c[2])),
            ),
            Section::Hypotheses => memory.hypotheses.extend(
                lines
                    .iter()
                    .filter_map(|l| hyp_re.captures(l))
                    .map(|c| parse_hypothesis(&c[1], &c[2])),
            ),
            Section::Questions => memory.questions.extend(
                lines
                    .iter()
                    .filter_map(|l| q_re.captures(l))
                    .map(|c| parse_question(&c[1], &c[2])),
            ),
        }
    }
    memory
}
