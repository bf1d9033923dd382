//! Words for lexical search: identifiers split on case, digits and underscores, lower-cased,
//! stop words dropped, and a light suffix stemmer so `computed`, `computes` and `compute`
//! meet. Also the highlighting of the query words a hit matched. Pure.

use std::collections::BTreeSet;

use crate::python::is_name_char;

/// Words too common in docstrings and questions to say anything about where code lives.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what",
    "when", "where", "which", "who", "why", "with",
];

/// Splits text into lower-case words: `parseHTTPResponse2_fast` gives `parse`, `http`,
/// `response`, `2`, `fast`. Anything that is not a letter or digit separates words.
pub(crate) fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        split_identifier(chunk, &mut words);
    }
    words
}

/// Splits one identifier on case changes and letter/digit boundaries.
fn split_identifier(chunk: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = chunk.chars().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (prev, cur) = (chars[i - 1], chars[i]);
        let next_is_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
        let boundary = (prev.is_lowercase() && cur.is_uppercase())
            // The last capital of an acronym starts the next word: HTTPResponse → HTTP Response.
            || (prev.is_uppercase() && cur.is_uppercase() && next_is_lower)
            || (prev.is_alphabetic() && cur.is_numeric())
            || (prev.is_numeric() && cur.is_alphabetic());
        if boundary {
            out.push(chars[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    if start < chars.len() {
        out.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
}

/// Strips a few English suffixes. Deliberately light: it only has to make inflections of the
/// same word meet, and a wrong merge costs one extra hit, not a missed one.
pub(crate) fn stem(word: &str) -> String {
    let mut w = word.to_string();
    let long_enough = |w: &str, suffix: &str| w.len() >= suffix.len() + 3 && w.ends_with(suffix);
    if long_enough(&w, "ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if long_enough(&w, "ing") || long_enough(&w, "ed") {
        let cut = if w.ends_with("ing") { 3 } else { 2 };
        w.truncate(w.len() - cut);
    } else if long_enough(&w, "s") && !w.ends_with("ss") && !w.ends_with("us") {
        w.truncate(w.len() - 1);
    }
    if long_enough(&w, "e") {
        w.truncate(w.len() - 1);
    }
    w
}

/// The search terms of a text: split, stop words dropped, stemmed.
pub(crate) fn terms(text: &str) -> Vec<String> {
    split_words(text)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// The query's words (as the user wrote them, lower-cased) whose term occurs in `doc_terms`.
pub(crate) fn matched_words(query: &str, doc_terms: &BTreeSet<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    split_words(query)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()) && doc_terms.contains(&stem(w)))
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

/// `text` with every word whose term is in `terms` wrapped in `**`; identifiers are checked
/// part by part, so `calculate_mean` becomes `**calculate_mean**` when `mean` matched.
pub(crate) fn highlight(text: &str, terms: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let hit = split_words(word).iter().any(|w| terms.contains(&stem(w)));
        if hit {
            out.push_str("**");
            out.push_str(word);
            out.push_str("**");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if is_name_char(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_on_case_digits_and_underscores() {
        assert_eq!(
            split_words("parseHTTPResponse2_fast calculate_mean"),
            [
                "parse",
                "http",
                "response",
                "2",
                "fast",
                "calculate",
                "mean"
            ]
        );
        assert_eq!(split_words("XMLParser.v2"), ["xml", "parser", "v", "2"]);
        assert_eq!(split_words("  "), Vec::<String>::new());
    }

    #[test]
    fn inflections_of_one_word_share_a_stem() {
        for group in [
            ["compute", "computed", "computes"],
            ["mean", "means", "mean"],
            ["value", "values", "valued"],
            ["entry", "entries", "entry"],
        ] {
            let stems: BTreeSet<String> = group.iter().map(|w| stem(w)).collect();
            assert_eq!(stems.len(), 1, "{group:?} gave {stems:?}");
        }
        assert_eq!(stem("class"), "class", "a double s is not a plural");
        assert_eq!(stem("is"), "is", "short words are left alone");
    }

    #[test]
    fn stop_words_are_not_terms() {
        assert_eq!(terms("where is the mean computed"), ["mean", "comput"]);
    }

    #[test]
    fn matched_query_words_are_highlighted_in_identifiers_and_prose() {
        let doc: BTreeSet<String> = terms("calculate_mean Calculate arithmetic mean of numbers")
            .into_iter()
            .collect();
        assert_eq!(matched_words("the Means, computed", &doc), ["means"]);
        let hits: BTreeSet<String> = terms("mean").into_iter().collect();
        assert_eq!(
            highlight("calculate_mean: the mean of numbers.", &hits),
            "**calculate_mean**: the **mean** of numbers."
        );
    }
}
