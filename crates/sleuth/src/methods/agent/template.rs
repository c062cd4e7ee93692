//! The one way the loop's units render a prompt template: a template that fails is a
//! configuration error of the run, not a model error.

use crate::methods::{AgentError, PromptSet};

pub(super) fn render<S: serde::Serialize>(
    prompts: &PromptSet,
    name: &str,
    ctx: S,
) -> Result<String, AgentError> {
    prompts.render(name, ctx).map_err(AgentError::from)
}
