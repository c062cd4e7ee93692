//! Word tokenization shared by the lexical scorers.

/// Lowercased alphanumeric word tokens (Unicode-aware), in order, with repeats.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
}
