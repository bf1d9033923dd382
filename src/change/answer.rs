//! A model's answer applied to a file's text, or the reason it cannot be.
//!
//! An answer that was cut off (it ran out of tokens: a code block that never closes, a
//! SEARCH block with no REPLACE) is never applied: the fence parser would close it at the
//! end, and a truncated whole file that still parses would drop everything after the cut.

use std::collections::BTreeSet;

use crate::edit::parse::{EditKind, parse_answer};

/// The model's answer applied to the text of `path`: hunks in place, code as the whole file
/// (Python fragments merged by definition name). `Err` says why there is nothing to apply.
pub(super) fn apply_answer(answer: &str, path: &str, current: &str) -> Result<String, String> {
    if let Some(why) = cut_off(answer) {
        return Err(why);
    }
    let parsed = parse_answer(answer);
    let mut text = current.to_string();
    let mut used = false;
    for edit in parsed.edits {
        if edit
            .path
            .as_deref()
            .is_some_and(|p| !crate::edit::apply::same_file(p, path))
        {
            continue;
        }
        match edit.kind {
            EditKind::Hunks(hunks) => {
                text = crate::edit::hunk::apply_all(&text, &hunks)
                    .map_err(|e| e.to_string())?
                    .0;
            }
            EditKind::Code(code)
                if path.ends_with(".py") && !text.is_empty() && is_fragment(&code, &text) =>
            {
                text = crate::edit::merge::merge_python(&text, &code);
            }
            EditKind::Code(code) => text = ensure_newline(code),
        }
        used = true;
    }
    if !used {
        let notes = parsed.diagnostics.join("; ");
        return Err(if notes.is_empty() {
            format!("the answer has no code for {path}")
        } else {
            format!("the answer has no code for {path} ({notes})")
        });
    }
    Ok(text)
}

/// Python code that looks like part of the file, not all of it: it leaves out more than
/// half of the file's top-level definitions.
fn is_fragment(code: &str, current: &str) -> bool {
    let names = |text: &str| -> BTreeSet<String> {
        crate::code::split_units(text)
            .iter()
            .filter_map(|u| u.def_name().map(String::from))
            .collect()
    };
    let have = names(current);
    let kept = names(code).intersection(&have).count();
    !have.is_empty() && kept * 2 < have.len()
}

fn ensure_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Why `answer` looks cut off, if it does.
fn cut_off(answer: &str) -> Option<String> {
    let starting = |mark: &str| {
        answer
            .lines()
            .filter(|l| l.trim_start().starts_with(mark))
            .count()
    };
    if starting("```") % 2 == 1 {
        return Some(
            "the answer was cut off: its code block never closes (it ran out of tokens?), so \
             none of it was applied"
                .into(),
        );
    }
    if starting("<<<<<<< SEARCH") > starting(">>>>>>> REPLACE") {
        return Some(
            "the answer was cut off inside a SEARCH/REPLACE block (it ran out of tokens?), so \
             none of it was applied"
                .into(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_apply_as_whole_files_fragments_or_hunks() {
        let current = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        let whole = "```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n```";
        let text = apply_answer(whole, "calc.py", current).unwrap();
        assert!(text.contains("def mul") && text.contains("def sub"));
        let fragment = "```python\ndef mul(a, b):\n    return a * b\n```";
        let text = apply_answer(fragment, "calc.py", current).unwrap();
        assert!(
            text.contains("def mul") && text.contains("def sub"),
            "{text}"
        );
        let hunk = "```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return b - a\n>>>>>>> REPLACE\n```";
        assert!(
            apply_answer(hunk, "calc.py", current)
                .unwrap()
                .contains("return b - a")
        );
        assert!(apply_answer("I cannot do that.", "calc.py", current).is_err());
        let other = "```python other.py\nX = 1\n```";
        assert!(apply_answer(other, "calc.py", current).is_err());
    }

    #[test]
    fn a_cut_off_answer_is_never_applied() {
        let current = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        // Cut after the first function: it parses, and would drop `sub`.
        let cut = "```python\ndef add(a, b):\n    return a + b\n";
        let why = apply_answer(cut, "calc.py", current).unwrap_err();
        assert!(why.contains("cut off"), "{why}");
        let cut = "<<<<<<< SEARCH\n    return a - b\n=======\n    return b";
        let why = apply_answer(cut, "calc.py", current).unwrap_err();
        assert!(why.contains("cut off"), "{why}");
        let whole = "```python\ndef add(a, b):\n    return a + b\n```";
        assert!(apply_answer(whole, "calc.py", "").is_ok());
    }
}
