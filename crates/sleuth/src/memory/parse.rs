//! Parsing the model's working-memory text.

use super::{MemorySchema, WorkingMemory};

/// Parses the sections of `schema` out of a model response. Missing or malformed
/// sections yield empty lists; see `WorkingMemory::adherence` for the notation check.
pub fn parse_memory(_text: &str, _schema: &MemorySchema) -> WorkingMemory {
    WorkingMemory::default()
}
