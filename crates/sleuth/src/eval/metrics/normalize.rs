//! The answer normalization shared by all three official scripts:
//! `white_space_fix(remove_articles(remove_punc(lower(s))))`, in that order.
//!
//! Python semantics are reproduced where they differ from Rust's defaults:
//! `str.lower` is full Unicode lowercasing (as `str::to_lowercase`); `string.punctuation`
//! is exactly ASCII punctuation (`char::is_ascii_punctuation`); `\b(a|an|the)\b` with a
//! Unicode `\w` matches an article only as a whole run of word characters, so `thé` or
//! `a1` are left alone; `str.split()` also splits on the ASCII separators U+001C..U+001F,
//! which Rust does not count as whitespace. (One residual difference: Python's `\w`
//! excludes combining marks that Unicode lists as Other_Alphabetic, Rust's
//! `is_alphanumeric` includes them; it matters only for such a mark touching a bare
//! `a`/`an`/`the`.)

/// The normalized answer string.
pub fn normalize_answer(s: &str) -> String {
    if s.contains('Σ') {
        return normalize_unicode(s);
    }
    normalize_fused(s)
}

/// [`normalize_answer`] step by step on any text.
fn normalize_unicode(s: &str) -> String {
    let lower = s.to_lowercase();
    let no_punct: String = lower
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    let no_articles = remove_articles(&no_punct);
    python_split(&no_articles).collect::<Vec<_>>().join(" ")
}

/// [`normalize_answer`] in one pass over the characters, for text without a capital
/// sigma (the one character `str::to_lowercase` lowers by context): each character is
/// lowered on its own, ASCII punctuation dropped, runs of word characters that are an
/// article end the token like a space, and tokens are joined by single spaces. The
/// report normalizes every observation of a timed-out episode, so this is its hottest
/// loop (issue 32); the steps one by one allocate four strings.
fn normalize_fused(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut token = String::new();
    let mut word = String::new();
    let flush = |out: &mut String, token: &mut String| {
        if !token.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(token);
            token.clear();
        }
    };
    let end_word = |out: &mut String, token: &mut String, word: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the") {
            flush(out, token);
        } else {
            token.push_str(word);
        }
        word.clear();
    };
    let mut each = |c: char| {
        if c.is_ascii_punctuation() {
        } else if is_word_char(c) {
            word.push(c);
        } else if is_python_space(c) {
            end_word(&mut out, &mut token, &mut word);
            flush(&mut out, &mut token);
        } else {
            end_word(&mut out, &mut token, &mut word);
            token.push(c);
        }
    };
    for c in s.chars() {
        if c.is_ascii() {
            each(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut each);
        }
    }
    end_word(&mut out, &mut token, &mut word);
    flush(&mut out, &mut token);
    out
}

/// The normalized answer's tokens (`normalize_answer(s).split()`).
pub fn answer_tokens(s: &str) -> Vec<String> {
    python_split(&normalize_answer(s))
        .map(str::to_string)
        .collect()
}

/// Python's `str.split()` with no argument: runs of `str.isspace` characters separate
/// tokens; leading and trailing runs give no empty tokens.
pub(crate) fn python_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_python_space).filter(|t| !t.is_empty())
}

fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Replaces each whole-word `a`, `an` or `the` with a space.
fn remove_articles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_word_char) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..]
            .find(|c: char| !is_word_char(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        if matches!(word, "a" | "an" | "the") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases() {
        assert_eq!(normalize_answer("Barack OBAMA"), "barack obama");
    }

    #[test]
    fn removes_ascii_punctuation_without_inserting_spaces() {
        // Punctuation is deleted, not replaced: "U.S." becomes "us", "re-elected" one token.
        assert_eq!(
            normalize_answer("U.S. re-elected, (2012)!"),
            "us reelected 2012"
        );
        assert_eq!(
            normalize_answer(r##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##),
            ""
        );
    }

    #[test]
    fn keeps_non_ascii_punctuation() {
        // Only string.punctuation is removed; typographic quotes and dashes stay.
        assert_eq!(normalize_answer("“Hello” – world"), "“hello” – world");
    }

    #[test]
    fn removes_whole_word_articles_only() {
        assert_eq!(normalize_answer("The Beatles"), "beatles");
        assert_eq!(normalize_answer("a an the"), "");
        assert_eq!(
            normalize_answer("Theatre and anthem at Athens"),
            "theatre and anthem at athens"
        );
        assert_eq!(normalize_answer("théa a1 ñthe"), "théa a1 ñthe");
        // "_" is punctuation and goes first, which exposes the article.
        assert_eq!(normalize_answer("an_"), "");
    }

    #[test]
    fn articles_are_removed_after_punctuation() {
        // remove_punc runs first, so "the-end" -> "theend" (kept) but "(the) end" -> "end".
        assert_eq!(normalize_answer("the-end"), "theend");
        assert_eq!(normalize_answer("(the) end"), "end");
        assert_eq!(normalize_answer("a.b"), "ab");
    }

    #[test]
    fn collapses_whitespace_like_python_split() {
        assert_eq!(
            normalize_answer("  New\t\nYork\u{a0}City  "),
            "new york city"
        );
        assert_eq!(normalize_answer("one\u{1c}two\u{1f}three"), "one two three");
        assert_eq!(normalize_answer("zero\u{200b}width"), "zero\u{200b}width");
    }

    #[test]
    fn one_pass_normalizes_as_the_steps_one_by_one_do() {
        use rand::{Rng, SeedableRng};
        let alphabet: Vec<char> =
            "aAnNtThHeEx1_ .,-()'\t\n\r\u{b}\u{c}\u{1c}\u{1f}\u{1}\u{7f}ÉßİñÑ\u{a0}\u{200b}–\u{212a}\u{301}²ΣσΘ"
                .chars()
                .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20_000 {
            let len = rng.gen_range(0..14);
            let text: String = (0..len)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect();
            assert_eq!(
                normalize_answer(&text),
                normalize_unicode(&text),
                "{text:?}"
            );
            if !text.contains('Σ') {
                assert_eq!(normalize_fused(&text), normalize_unicode(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn unicode_lowercase_and_tokens() {
        assert_eq!(normalize_answer("ÉCOLE Straße ΣΟΦΟΣ"), "école straße σοφος");
        assert_eq!(answer_tokens("The Eiffel  Tower."), ["eiffel", "tower"]);
        assert!(answer_tokens("  The. ").is_empty());
    }
}
