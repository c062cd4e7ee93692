//! The EIR setting's wire formats, each declared once: every JSON object a call asks for
//! is a list of [`Field`]s here, and both faces of the format come from that list. The
//! JSON schema sent as the call's output constraint is generated from it
//! ([`Shape::schema`]), and the parsers read each field through the same declaration
//! (`reply.rs`'s readers take a `&Field`), so a field's name, bound and place cannot
//! differ between what a server is told and what is read back.
//!
//! The schemas help grammar-constrained local models and providers with structured
//! outputs produce the shape the parsers expect; responses are validated by the parsers
//! either way, so a schema only needs to be a permissive superset of what is accepted.
//! The parsers stay more lenient than the schemas (a number where text is declared, an
//! alias such as `finish` for `submit`), exactly as before the formats were declared.
//!
//! Schemas are sent only with `json_schema=true` (the paper prompts for its formats and
//! counts the replies that fail to parse, EIR App. H.4, C.2). Strings and arrays carry
//! `maxLength` / `maxItems` bounds, finite because a grammar-constrained tiny model
//! otherwise fills its whole token budget with one string and the truncated JSON fails
//! to parse, but generous: the prompts state no length or count, so no bound may be one
//! a real model's reply would meet (the paper's EIR turn may change several entries of
//! a list and cite several sentences at once). A server whose schema-to-grammar converter
//! cannot compile bounds this large gets them lowered by its preset
//! ([`crate::llm::quirks::SchemaBounds`]: both llama.cpp servers). Properties are listed in the
//! order a model should write them (reasoning before the action), because grammar
//! converters and structured-output providers generate them in that order.

use serde_json::{json, Map, Value};

/// A free-text reasoning field.
const REASONING_LEN: u32 = 4000;
/// A requirement, a claim, an SSR part.
const STATEMENT_LEN: u32 = 1000;
/// A paragraph title.
const TITLE_LEN: u32 = 120;
/// An answer span.
const ANSWER_LEN: u32 = 120;
/// A list id such as `R1` or `C12`.
const ID_LEN: u32 = 8;
/// Search terms.
const QUERY_LEN: u32 = 200;
/// A corpus paragraph id.
const DOC_ID_LEN: u32 = 40;
/// Items in one array (list changes, citations, titles).
const ITEMS: u32 = 32;

/// When a field or a choice is part of a call's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    Always,
    /// The environment searches (the corpus setting, EIR paper §4.3, App. H.1).
    Search,
    /// The environment does not search (the titles setting).
    NoSearch,
    /// The dependency-repair control (EIR App. E.3).
    DependencyRepair,
}

/// What a call's format offers: the corpus setting's search, the repair control.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offer {
    pub search: bool,
    pub dependency_repair: bool,
}

impl Offer {
    fn has(self, only: Only) -> bool {
        match only {
            Only::Always => true,
            Only::Search => self.search,
            Only::NoSearch => !self.search,
            Only::DependencyRepair => self.dependency_repair,
        }
    }
}

/// One accepted value of a [`Shape::OneOf`] field, with the other spellings the parser
/// accepts for it (not offered in the schema).
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub only: Only,
}

impl Choice {
    const fn new(name: &'static str) -> Self {
        Choice {
            name,
            aliases: &[],
            only: Only::Always,
        }
    }

    /// Whether `value` (lowercased) names this choice.
    pub fn accepts(&self, value: &str) -> bool {
        value == self.name || self.aliases.contains(&value)
    }
}

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A string of at most this many characters.
    Text(u32),
    /// One of these names.
    OneOf(&'static [Choice]),
    /// A sentence number of a paragraph (0 to 999).
    Sentence,
    /// A list of at most four values of this shape.
    List(&'static Shape),
    /// An object with these fields, in the order the schema lists them.
    Object(&'static [Field]),
}

/// One field of an object: its name, what it holds, whether the schema requires it,
/// and when the format has it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
    pub only: Only,
}

impl Field {
    const fn new(name: &'static str, shape: Shape) -> Self {
        Field {
            name,
            shape,
            required: false,
            only: Only::Always,
        }
    }

    /// The same field, required by the schema.
    const fn required(self) -> Self {
        Field {
            required: true,
            ..self
        }
    }

    /// The same field, present only where `only` holds.
    const fn only(self, only: Only) -> Self {
        Field { only, ..self }
    }

    /// The accepted values of a [`Shape::OneOf`] field (none for other shapes).
    pub fn choices(&self) -> &'static [Choice] {
        match self.shape {
            Shape::OneOf(choices) => choices,
            _ => &[],
        }
    }

    /// The choices as a message lists them: `a, b or c`.
    pub fn choice_list(&self, last_sep: &str) -> String {
        let names: Vec<&str> = self.choices().iter().map(|c| c.name).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                format!("{}{last_sep}{last}", rest.join(", "))
            }
            _ => names.concat(),
        }
    }
}

impl Shape {
    /// The JSON schema of this shape under `offer`.
    pub fn schema(&self, offer: Offer) -> Value {
        match *self {
            Shape::Text(max) => json!({"type": "string", "maxLength": max}),
            Shape::OneOf(choices) => {
                let names: Vec<&str> = choices
                    .iter()
                    .filter(|c| offer.has(c.only))
                    .map(|c| c.name)
                    .collect();
                json!({"type": "string", "enum": names})
            }
            Shape::Sentence => json!({"type": "integer", "minimum": 0, "maximum": 999}),
            Shape::List(item) => {
                json!({"type": "array", "items": item.schema(offer), "maxItems": ITEMS})
            }
            Shape::Object(fields) => {
                let offered: Vec<&Field> = fields.iter().filter(|f| offer.has(f.only)).collect();
                let properties: Map<String, Value> = offered
                    .iter()
                    .map(|f| (f.name.to_string(), f.shape.schema(offer)))
                    .collect();
                let required: Vec<&str> = offered
                    .iter()
                    .filter(|f| f.required)
                    .map(|f| f.name)
                    .collect();
                json!({"type": "object", "properties": properties, "required": required})
            }
        }
    }
}

/// A cited sentence: `{"title": ..., "sentence": N}`.
pub mod citation {
    use super::*;
    pub const TITLE: Field = Field::new("title", Shape::Text(TITLE_LEN)).required();
    pub const SENTENCE: Field = Field::new("sentence", Shape::Sentence).required();
    pub const OBJECT: Shape = Shape::Object(&[TITLE, SENTENCE]);
}

/// Citations of read sentences.
const CITATIONS: Shape = Shape::List(&citation::OBJECT);

/// The action object: read a title, or (corpus setting) search and read by id, or
/// submit an answer with its evidence (EIR paper §3.2, §4.3, App. H.1).
pub mod action {
    use super::*;
    pub const SEARCH: Choice = Choice {
        only: Only::Search,
        ..Choice::new("search")
    };
    pub const READ: Choice = Choice::new("read");
    pub const SUBMIT: Choice = Choice {
        aliases: &["finish", "answer"],
        ..Choice::new("submit")
    };
    pub const TYPE: Field = Field::new("type", Shape::OneOf(&[SEARCH, READ, SUBMIT])).required();
    pub const TITLE: Field = Field::new("title", Shape::Text(TITLE_LEN)).only(Only::NoSearch);
    pub const QUERY: Field = Field::new("query", Shape::Text(QUERY_LEN)).only(Only::Search);
    pub const ID: Field = Field::new("id", Shape::Text(DOC_ID_LEN)).only(Only::Search);
    pub const ANSWER: Field = Field::new("answer", Shape::Text(ANSWER_LEN));
    pub const EVIDENCE: Field = Field::new("evidence", CITATIONS);
    pub const OBJECT: Shape = Shape::Object(&[TYPE, TITLE, QUERY, ID, ANSWER, EVIDENCE]);
}

/// How a list change applies: a new entry, or a revision of an existing one.
pub const ADD: Choice = Choice::new("add");
pub const REVISE: Choice = Choice {
    aliases: &["update"],
    ..Choice::new("revise")
};
const OP: Field = Field::new("op", Shape::OneOf(&[ADD, REVISE])).required();
const LIST_ID: Field = Field::new("id", Shape::Text(ID_LEN)).required();

/// A change to the Requirements list.
pub mod requirement {
    use super::*;
    pub const OP: Field = super::OP;
    pub const ID: Field = LIST_ID;
    pub const TEXT: Field = Field::new("text", Shape::Text(STATEMENT_LEN));
    pub const STATUS: Field = Field::new(
        "status",
        Shape::OneOf(&[
            Choice::new("open"),
            Choice::new("met"),
            Choice::new("dropped"),
        ]),
    );
    pub const OBJECT: Shape = Shape::Object(&[OP, ID, TEXT, STATUS]);
}

/// A change to the Conclusions list.
pub mod conclusion {
    use super::*;
    pub const OP: Field = super::OP;
    pub const ID: Field = LIST_ID;
    pub const CLAIM: Field = Field::new("claim", Shape::Text(STATEMENT_LEN));
    pub const STATUS: Field = Field::new(
        "status",
        Shape::OneOf(&[
            Choice::new("tentative"),
            Choice::new("supported"),
            Choice::new("retracted"),
        ]),
    );
    pub const CITATIONS: Field = Field::new("citations", super::CITATIONS);
    pub const DEPENDS_ON: Field =
        Field::new("depends_on", Shape::List(&Shape::Text(ID_LEN))).only(Only::DependencyRepair);
    pub const OBJECT: Shape = Shape::Object(&[OP, ID, CLAIM, STATUS, CITATIONS, DEPENDS_ON]);
}

/// Fields of the action replies (EIR, Direct, SSR, Reflexion).
pub mod reply {
    use super::*;
    pub const REASONING: Field = Field::new("reasoning", Shape::Text(REASONING_LEN)).required();
    pub const REQUIREMENTS: Field =
        Field::new("requirements", Shape::List(&requirement::OBJECT)).required();
    pub const CONCLUSIONS: Field =
        Field::new("conclusions", Shape::List(&conclusion::OBJECT)).required();
    pub const ACTION: Field = Field::new("action", action::OBJECT).required();
    /// Direct in the corpus setting states what the action should establish, its
    /// expected result and how progress will be judged (EIR App. B.3).
    pub const ESTABLISH: Field =
        Field::new("establish", Shape::Text(STATEMENT_LEN)).only(Only::Search);
    pub const EXPECTED_RESULT: Field =
        Field::new("expected_result", Shape::Text(STATEMENT_LEN)).only(Only::Search);
    pub const PROGRESS: Field =
        Field::new("progress", Shape::Text(STATEMENT_LEN)).only(Only::Search);

    /// EIR's action call: reasoning, list changes, action.
    pub const EIR: Shape = Shape::Object(&[REASONING, REQUIREMENTS, CONCLUSIONS, ACTION]);
    /// Dependency repair's first call: revisions of the affected conclusions.
    pub const REPAIR: Shape = Shape::Object(&[CONCLUSIONS]);
    /// Dependency repair's second call: requirement changes.
    pub const REFRESH: Shape = Shape::Object(&[REQUIREMENTS]);
    /// Direct, SSR and Reflexion action calls (and SSR's refinement).
    pub const DIRECT: Shape =
        Shape::Object(&[REASONING, ESTABLISH, EXPECTED_RESULT, PROGRESS, ACTION]);
}

/// The final answer call (EIR and Full Pool).
pub mod final_reply {
    use super::*;
    pub const ANSWER: Field = Field::new("answer", Shape::Text(ANSWER_LEN)).required();
    pub const EVIDENCE: Field = Field::new("evidence", CITATIONS).required();
    pub const OBJECT: Shape = Shape::Object(&[ANSWER, EVIDENCE]);
}

/// The additional-retrieval control's selection call: titles to read.
pub mod more_reads {
    use super::*;
    pub const READ: Field = Field::new("read", Shape::List(&Shape::Text(TITLE_LEN))).required();
    pub const OBJECT: Shape = Shape::Object(&[READ]);
}

/// SSR's decomposition call: the proposal's three parts, in order (EIR App. D.1).
pub mod decomposition {
    use super::*;
    pub const FACTS: Field = Field::new("facts", Shape::Text(REASONING_LEN)).required();
    pub const JUSTIFICATION: Field =
        Field::new("justification", Shape::Text(REASONING_LEN)).required();
    pub const ACTION: Field = Field::new("action", Shape::Text(STATEMENT_LEN)).required();
    pub const PARTS: [Field; 3] = [FACTS, JUSTIFICATION, ACTION];
    pub const OBJECT: Shape = Shape::Object(&PARTS);
}

/// SSR's verifier call.
pub mod verdict {
    use super::*;
    pub const ACCEPT: Choice = Choice::new("accept");
    pub const REJECT: Choice = Choice::new("reject");
    pub const VERDICT: Field = Field::new("verdict", Shape::OneOf(&[ACCEPT, REJECT])).required();
    pub const CORRECTION: Field = Field::new("correction", Shape::Text(STATEMENT_LEN)).required();
    pub const OBJECT: Shape = Shape::Object(&[VERDICT, CORRECTION]);
}

/// EIR's action call (`search`: the corpus setting).
pub fn eir_action(dependency_repair: bool, search: bool) -> Value {
    reply::EIR.schema(Offer {
        search,
        dependency_repair,
    })
}

/// Dependency repair's first call: revisions of the affected conclusions.
pub fn repair_conclusions() -> Value {
    reply::REPAIR.schema(Offer {
        search: false,
        dependency_repair: true,
    })
}

/// Dependency repair's second call: requirement changes.
pub fn refresh_requirements() -> Value {
    reply::REFRESH.schema(Offer {
        search: false,
        dependency_repair: true,
    })
}

/// Direct, SSR and Reflexion action calls (and SSR's refinement); `search`: the corpus
/// setting.
pub fn direct_action(search: bool) -> Value {
    reply::DIRECT.schema(Offer {
        search,
        dependency_repair: false,
    })
}

/// The final answer call (EIR and Full Pool).
pub fn final_answer() -> Value {
    final_reply::OBJECT.schema(Offer::default())
}

/// The additional-retrieval control's selection call.
pub fn more_reads() -> Value {
    more_reads::OBJECT.schema(Offer::default())
}

/// SSR's decomposition call.
pub fn decomposition() -> Value {
    decomposition::OBJECT.schema(Offer::default())
}

/// SSR's verifier call.
pub fn verdict() -> Value {
    verdict::OBJECT.schema(Offer::default())
}

#[cfg(test)]
mod tests;
