//! A rule-based English sentence splitter for benchmarks that store a paragraph as one
//! string (MuSiQue, and user paragraphs given as `text`).
//!
//! EIR cites evidence at sentence level, so every paragraph needs sentences even when the
//! benchmark did not split it. The rules are deliberately conservative: a split happens
//! only after `.`, `!` or `?` (plus any closing quotes or brackets), followed by
//! whitespace and a character that can open a sentence (an uppercase letter, a digit or an
//! opening quote/bracket). A period does not end a sentence after a single-letter initial
//! (`J. K. Rowling`), after a title that always precedes a name (`Dr.`, `St.`, `Mt.`),
//! or after a dotted abbreviation or a company/suffix abbreviation (`U.S.`, `D.C.`,
//! `Inc.`, `etc.`) unless the next word is a common sentence opener (`The`, `He`, ...).
//! Decimals never split because no whitespace follows their period.
//!
//! The split is lossless: [`Paragraph::text`](super::Paragraph::text) joins sentences with
//! one space unless a side already has whitespace, so a single space between two sentences
//! is dropped and any other whitespace run stays attached to the end of the sentence
//! before it. Joining therefore gives back the original string byte for byte.

/// Abbreviations that precede a name or number, so a following capital never starts a
/// sentence (compared lowercase, without the period).
const NEVER_FINAL: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "st", "gen", "col", "lt", "sgt", "capt", "cmdr", "adm", "maj",
    "rev", "hon", "gov", "sen", "rep", "pres", "mt", "ft", "no", "nos", "vol", "vols", "fig", "op",
    "vs", "approx", "ca", "cf", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec", "pp", "ch", "supt", "messrs", "mme", "mlle", "pt",
    // Lowercase single letters: circa, born, died, married, reigned; versus in case names.
    "c", "b", "d", "m", "r", "fl", "v",
];

/// Abbreviations that may also end a sentence: split only before a common opener.
const MAYBE_FINAL: &[&str] = &[
    "inc", "ltd", "co", "corp", "bros", "jr", "sr", "etc", "plc", "llc", "esq", "al",
];

/// Words that typically open a sentence; used only to resolve ambiguous abbreviations.
const OPENERS: &[&str] = &[
    "The",
    "A",
    "An",
    "He",
    "She",
    "It",
    "They",
    "We",
    "I",
    "In",
    "On",
    "At",
    "This",
    "That",
    "These",
    "Those",
    "His",
    "Her",
    "Its",
    "Their",
    "There",
    "After",
    "Before",
    "During",
    "However",
    "As",
    "When",
    "While",
    "Since",
    "From",
    "By",
    "For",
    "With",
    "Following",
    "Although",
    "Despite",
    "Today",
    "According",
    "Born",
    "Some",
    "Many",
    "Other",
    "Both",
    "One",
    "Each",
    "Most",
];

const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»'];
const OPENING: &[char] = &['"', '\'', '“', '‘', '(', '[', '«'];

/// Splits `text` into sentences such that `Paragraph::text` reproduces `text` exactly.
/// Empty input gives no sentences.
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for (end, resume) in boundaries(text) {
        let ws = &text[end..resume];
        // A single space is what the joiner re-inserts; anything else must be kept.
        let keep_to = if ws == " " { end } else { resume };
        out.push(text[start..keep_to].to_string());
        start = resume;
    }
    if start < text.len() {
        out.push(text[start..].to_string());
    }
    out
}

/// Byte ranges `(sentence end, next sentence start)` of every boundary; the bytes between
/// them are the whitespace run.
fn boundaries(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        if !matches!(c, '.' | '!' | '?') {
            i += 1;
            continue;
        }
        // Extend over further terminators and closing punctuation.
        let mut j = i + 1;
        while j < chars.len()
            && (matches!(chars[j].1, '.' | '!' | '?') || CLOSERS.contains(&chars[j].1))
        {
            j += 1;
        }
        let mut k = j;
        while k < chars.len() && chars[k].1.is_whitespace() {
            k += 1;
        }
        if k == j || k == chars.len() {
            i = j;
            continue;
        }
        let next_word = word_at(&chars, k);
        if opens_sentence(&chars, k) && !period_continues(&chars, i, c, &next_word) {
            found.push((chars[j].0, chars[k].0));
        }
        i = k;
    }
    found
}

/// Whether the character at `k` can begin a sentence.
fn opens_sentence(chars: &[(usize, char)], k: usize) -> bool {
    let c = chars[k].1;
    if c.is_uppercase() || c.is_ascii_digit() {
        return true;
    }
    OPENING.contains(&c)
        && chars
            .get(k + 1)
            .is_some_and(|&(_, n)| n.is_uppercase() || n.is_ascii_digit())
}

/// The run of non-whitespace characters starting at `k`.
fn word_at(chars: &[(usize, char)], k: usize) -> String {
    chars[k..]
        .iter()
        .map(|&(_, c)| c)
        .take_while(|c| !c.is_whitespace())
        .collect()
}

/// Whether `word` is a common sentence opener; a lone capital followed by a period
/// (`A.` in `L. A. Bouasba`) is another initial, not the article.
fn is_opener(word: &str) -> bool {
    let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
    OPENERS.contains(&bare) && !(bare.chars().count() == 1 && word[bare.len()..].starts_with('.'))
}

/// True when the terminator at `i` is a period that belongs to an abbreviation or an
/// initial rather than ending the sentence.
fn period_continues(chars: &[(usize, char)], i: usize, c: char, next_word: &str) -> bool {
    if c != '.' {
        return false;
    }
    // The token before the period, without leading quotes or brackets.
    let mut s = i;
    while s > 0 && !chars[s - 1].1.is_whitespace() {
        s -= 1;
    }
    let token: String = chars[s..i]
        .iter()
        .map(|&(_, c)| c)
        .collect::<String>()
        .trim_start_matches(|c: char| OPENING.contains(&c))
        .to_string();
    if token.is_empty() {
        return false;
    }
    let opener = is_opener(next_word);
    let mut letters = token.chars();
    if let (Some(first), None) = (letters.next(), letters.next()) {
        if first.is_uppercase() {
            // A lone capital is an initial ("J. K. Rowling"), unless a clear opener follows.
            return !opener;
        }
    }
    let lower = token.to_lowercase();
    if NEVER_FINAL.contains(&lower.as_str()) {
        return true;
    }
    if MAYBE_FINAL.contains(&lower.as_str()) || is_dotted_abbreviation(&token) {
        return !opener;
    }
    false
}

/// `U.S`, `D.C`, `e.g`, `Ph.D`, `a.m`: short letter groups joined by periods.
fn is_dotted_abbreviation(token: &str) -> bool {
    token.contains('.')
        && token.split('.').all(|part| {
            !part.is_empty() && part.chars().count() <= 3 && part.chars().all(char::is_alphabetic)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Paragraph;

    fn roundtrip(text: &str) -> Vec<String> {
        let sentences = split_sentences(text);
        let p = Paragraph::new("t", sentences.clone());
        assert_eq!(p.text(), text, "split was lossy: {sentences:?}");
        sentences
    }

    #[test]
    fn plain_sentences_split_on_terminators() {
        assert_eq!(
            roundtrip("It rained. Was it cold? Yes! 1914 was a bad year."),
            ["It rained.", "Was it cold?", "Yes!", "1914 was a bad year."]
        );
    }

    #[test]
    fn titles_and_initials_do_not_split() {
        assert_eq!(
            roundtrip("Dr. Smith met J. K. Rowling in St. Louis. He left."),
            ["Dr. Smith met J. K. Rowling in St. Louis.", "He left."]
        );
        assert_eq!(
            roundtrip("His father, L. A. Bouasba, was Algerian. Veera (r. 1173) ruled (c. 1200)."),
            [
                "His father, L. A. Bouasba, was Algerian.",
                "Veera (r. 1173) ruled (c. 1200)."
            ]
        );
    }

    #[test]
    fn dotted_abbreviations_split_only_before_an_opener() {
        assert_eq!(
            roundtrip(
                "He joined the U.S. Army in 1950. He moved to Washington, D.C. The city grew."
            ),
            [
                "He joined the U.S. Army in 1950.",
                "He moved to Washington, D.C.",
                "The city grew."
            ]
        );
    }

    #[test]
    fn company_suffix_is_ambiguous() {
        assert_eq!(roundtrip("Apple Inc. is big."), ["Apple Inc. is big."]);
        assert_eq!(
            roundtrip("It was made by Apple Inc. The firm grew."),
            ["It was made by Apple Inc.", "The firm grew."]
        );
        assert_eq!(
            roundtrip("Made by Acme Inc. Widgets Ltd. bought it."),
            ["Made by Acme Inc. Widgets Ltd. bought it."]
        );
    }

    #[test]
    fn decimals_and_lowercase_continuations_do_not_split() {
        assert_eq!(
            roundtrip("It costs 3.5 dollars, approx. five euros."),
            ["It costs 3.5 dollars, approx. five euros."]
        );
    }

    #[test]
    fn closing_quotes_stay_with_their_sentence() {
        assert_eq!(
            roundtrip("He said \"Go.\" Then he left. (He came back.) \"Why?\" she asked."),
            [
                "He said \"Go.\"",
                "Then he left.",
                "(He came back.)",
                "\"Why?\" she asked."
            ]
        );
    }

    #[test]
    fn unusual_whitespace_is_kept_so_joining_is_lossless() {
        let s = roundtrip("One.  Two.\nThree.\t Four. ");
        assert_eq!(s, ["One.  ", "Two.\n", "Three.\t ", "Four. "]);
        assert_eq!(
            roundtrip(" Leading space. Then more."),
            [" Leading space.", "Then more."]
        );
    }

    #[test]
    fn empty_and_unterminated_text() {
        assert!(roundtrip("").is_empty());
        assert_eq!(roundtrip("no terminator here"), ["no terminator here"]);
        assert_eq!(roundtrip("   "), ["   "]);
    }

    #[test]
    fn unicode_text_splits_on_char_boundaries() {
        assert_eq!(
            roundtrip("Zürich liegt am See. Ölberg ist nah… Ça va."),
            ["Zürich liegt am See.", "Ölberg ist nah… Ça va."]
        );
    }
}
