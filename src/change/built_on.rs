//! What a new function was asked to be built on. Pure.
//!
//! A request for an addition names, in backticks, the module's functions the new one should
//! use: "built on `take`", "as `wcswidth` measures it", "where `camel2under` would put its
//! underscores". A small model often writes the logic again from scratch instead, and gets
//! the detail the named function holds wrong (code corpus, dev half: a padding that counted
//! `len` where the request said `wcswidth`; a kebab-case that split the words its own way),
//! then re-types the same mistake in every correction, since the failure shows the wrong
//! value and not where it comes from. A correction prompt says which named functions a new
//! definition does not use. It is a note beside a failure, never a check: a request may name
//! a function only to place the new one next to it.

use std::collections::BTreeSet;

use crate::symbols::{identifiers, split_units};

/// For each top-level definition of `staged` that `original` does not have, the functions
/// of `original` the `spec` names in backticks and that definition does not use: one line
/// each, or `""` when there is none.
pub(super) fn unused_note(spec: &str, original: &str, staged: &str) -> String {
    let existing: BTreeSet<String> = (split_units(original).iter())
        .filter_map(|u| u.def_name().map(str::to_string))
        .collect();
    let named: BTreeSet<String> = (ticked_names(spec).into_iter())
        .filter(|n| existing.contains(n))
        .collect();
    let mut out = String::new();
    for unit in split_units(staged) {
        let Some(name) = unit.def_name().filter(|n| !existing.contains(*n)) else {
            continue;
        };
        let used = identifiers(&unit.text);
        let unused: Vec<String> = (named.iter())
            .filter(|n| *n != name && !used.contains(*n))
            .map(|n| format!("`{n}`"))
            .collect();
        if !unused.is_empty() {
            out.push_str(&format!(
                "The change names {}, and the new `{name}` does not use {}: build it on \
                 what the change names.\n",
                unused.join(", "),
                match unused.len() {
                    1 => "it",
                    _ => "them",
                },
            ));
        }
    }
    out
}

/// The name each backtick span of `text` begins with: `` `take` ``, `` `re_iter(...)` `` and
/// `` `pkg.mod.take` `` give `take`, `re_iter` and `take`.
fn ticked_names(text: &str) -> BTreeSet<String> {
    let name_char = |c: char| c.is_alphanumeric() || c == '_';
    (text.split('`').skip(1).step_by(2))
        .filter_map(|span| {
            let head: String = (span.chars())
                .take_while(|&c| name_char(c) || c == '.')
                .collect();
            let last = head.rsplit('.').next()?;
            let first = last.chars().next()?;
            (first.is_alphabetic() || first == '_').then(|| last.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str =
        "def take(n, it):\n    return list(it)[:n]\n\n\ndef wcswidth(s):\n    return len(s)\n";

    #[test]
    fn a_new_definition_that_skips_a_named_function_is_noted() {
        let spec = "Add `take_exactly(n, iterable)`, built on `take`, as `wcswidth` measures \
                    it; see `more_itertools.take` and `len`.";
        let skipping = format!(
            "{ORIGINAL}\n\ndef take_exactly(n, it):\n    \"\"\"Uses take.\"\"\"\n    return list(it)[:n]\n"
        );
        assert_eq!(
            unused_note(spec, ORIGINAL, &skipping),
            "The change names `take`, `wcswidth`, and the new `take_exactly` does not use \
             them: build it on what the change names.\n",
            "a name in a docstring is no use of it; `len` is not the module's"
        );
        let using = format!(
            "{ORIGINAL}\n\ndef take_exactly(n, it):\n    return take(n, it) + [wcswidth('')]\n"
        );
        assert_eq!(unused_note(spec, ORIGINAL, &using), "");
    }

    #[test]
    fn changed_definitions_and_unnamed_functions_give_no_note() {
        let changed = ORIGINAL.replace("[:n]", "[: n + 0]");
        assert_eq!(
            unused_note("Fix `take`, see `wcswidth`.", ORIGINAL, &changed),
            ""
        );
        let added = format!("{ORIGINAL}\n\ndef other():\n    return 1\n");
        assert_eq!(unused_note("Add other, like take.", ORIGINAL, &added), "");
    }

    #[test]
    fn ticked_names_are_the_leading_name_of_each_span() {
        let names = ticked_names("`take(n, it)` and `a.b.c` or `'x'` and `_p` then `1`");
        let expected = ["_p", "c", "take"].map(String::from);
        assert_eq!(names, BTreeSet::from(expected));
    }
}
