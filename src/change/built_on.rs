//! What a new function was asked to be built on. Pure.
//!
//! A request for an addition names, in backticks, the module's functions the new one should
//! use: "built on `take`", "as `wcswidth` measures it", "where `camel2under` would put its
//! underscores". A small model often writes the logic again from scratch instead, and gets
//! the detail the named function holds wrong (code corpus, dev half: a padding that counted
//! `len` where the request said `wcswidth`; a kebab-case that split the words its own way),
//! then re-types the same mistake in every correction, since the failure shows the wrong
//! value and not where it comes from. A correction prompt says which named functions a new
//! definition does not use: there it is a note beside a failure, since a request may name a
//! function only to place the new one next to it.
//!
//! Where the request's own words ask for the use ("using `cut_prefix` and `cut_suffix`",
//! "built on `take`", "by calling `f`"), it is a check ([`unbuilt`]): a change whose new
//! definitions call none of what was named is not the change asked for, whatever values it
//! returns on the inputs anyone tried. On the dev half an addition asked to be built "using"
//! two functions re-implemented them as one condition, wrongly, and passed the request's one
//! example, its probes and the versions written apart: the named functions hold the detail
//! (each end cut independently) that a new body gets wrong, so the words are the check.

use std::collections::BTreeSet;

use super::{Check, CodeError, Request, Run};
use crate::symbols::{identifiers, split_units};

/// The check's name in the trail and in the correction prompt.
const COMMAND: &str = "built on";

/// The words that ask a new definition to use the named function, not only to sit beside it.
const ASKING: [&str; 6] = [
    "using ",
    "built on ",
    "build it on ",
    "by calling ",
    "in terms of ",
    "on top of ",
];

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

/// The functions of `original` that `spec` asks the change's new definitions to use ("using
/// `a` and `b`", "built on `take`") and that no top-level definition `staged` adds or alters
/// uses in its body (its decorators do not count: `@wraps(f)` is no call of `f`). Empty when
/// the change adds no definition: the words are read only for an addition.
pub(super) fn unbuilt(spec: &str, original: &str, staged: &str) -> Vec<String> {
    let old_units = split_units(original);
    let existing: BTreeSet<String> = (old_units.iter())
        .filter_map(|u| u.def_name().map(str::to_string))
        .collect();
    let old_texts: BTreeSet<&str> = old_units.iter().map(|u| u.text.as_str()).collect();
    let new_units = split_units(staged);
    if !(new_units.iter()).any(|u| u.def_name().is_some_and(|n| !existing.contains(n))) {
        return Vec::new();
    }
    // The definitions the change wrote, added or altered: a helper may hold the call, or
    // an old function the new one calls, changed for it.
    let used: BTreeSet<String> = (new_units.iter())
        .filter(|u| u.def_name().is_some() && !old_texts.contains(u.text.as_str()))
        .flat_map(|u| identifiers(&without_decorators(&u.text)))
        .collect();
    (asked_names(spec).into_iter())
        .filter(|n| existing.contains(n) && !used.contains(n))
        .collect()
}

/// `definition` from its `def` or `class` line on.
fn without_decorators(definition: &str) -> String {
    let lines: Vec<&str> = definition.lines().collect();
    let from = (lines.iter())
        .position(|l| !l.trim_start().starts_with('@'))
        .unwrap_or(lines.len());
    lines[from..].join("\n")
}

/// The names in the backtick spans that follow one of [`ASKING`], with those joined to the
/// first by `,` or `and`: "using `a`, `b` and `c`" gives all three; "after `a`" none.
fn asked_names(spec: &str) -> BTreeSet<String> {
    let lower = spec.to_ascii_lowercase();
    let mut out = BTreeSet::new();
    for word in ASKING {
        for (at, _) in lower.match_indices(word) {
            let mut rest = &spec[at + word.len()..];
            while let Some(span) = rest.strip_prefix('`') {
                let Some(end) = span.find('`') else { break };
                out.extend(ticked_names(&format!("`{}`", &span[..end])));
                rest = &span[end + 1..];
                let joined = [", and `", " and `", ", `"]
                    .iter()
                    .find(|j| rest.starts_with(**j));
                match joined {
                    Some(j) => rest = &rest[j.len() - 1..],
                    None => break,
                }
            }
        }
    }
    out
}

impl Run {
    /// Fails when the request asks the change's new definitions to use functions of their
    /// module (see [`unbuilt`]) that none of them uses: the correction is told which.
    pub(super) fn check_built_on(&self, request: &Request) -> Result<Option<Check>, CodeError> {
        let disk = crate::fsutil::Workspace::new(&request.repo);
        let mut lines = Vec::new();
        for (path, entry) in self.overlay.entries() {
            let Some(after) = entry.content.as_deref() else {
                continue;
            };
            if !path.ends_with(".py") {
                continue;
            }
            let before = disk.read(path).ok().flatten().unwrap_or_default();
            let missing = unbuilt(&request.spec, &before, after);
            if missing.is_empty() {
                continue;
            }
            let named: Vec<String> = missing.iter().map(|n| format!("`{n}`")).collect();
            lines.push(format!(
                "{path}: the request asks for the new code to be built on {}, and no new \
                 definition calls {}: call {} in the new function's body, as the request says",
                named.join(", "),
                if named.len() == 1 { "it" } else { "them" },
                named.join(" and "),
            ));
        }
        Ok((!lines.is_empty()).then(|| Check {
            command: COMMAND.into(),
            passed: false,
            unavailable: false,
            exit_code: None,
            output: lines.join("\n"),
        }))
    }
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
    fn a_function_the_request_asks_to_be_built_on_must_be_called_by_the_new_code() {
        let original =
            "def cut_prefix(s, p):\n    return s\n\n\ndef cut_suffix(s, p):\n    return s\n";
        let spec = "Add `cut_affixes(s, prefix, suffix)`, using `cut_prefix` and `cut_suffix`: \
                    it removes both. Put it after `cut_suffix`.";
        let inlined = format!(
            "{original}\n\n@wraps(cut_suffix)\ndef cut_affixes(s, prefix, suffix):\n    \
             \"\"\"Like cut_prefix.\"\"\"\n    return s[len(prefix):]\n"
        );
        assert_eq!(
            unbuilt(spec, original, &inlined),
            ["cut_prefix", "cut_suffix"],
            "a decorator or a docstring is no use of a function"
        );
        let half =
            format!("{original}\n\ndef cut_affixes(s, a, b):\n    return cut_prefix(s, a)\n");
        assert_eq!(unbuilt(spec, original, &half), ["cut_suffix"]);
        // A helper the new function calls may be the one that uses it.
        let helped = format!(
            "{original}\n\ndef _both(s, a, b):\n    return cut_suffix(cut_prefix(s, a), b)\n\n\n\
             def cut_affixes(s, a, b):\n    return _both(s, a, b)\n"
        );
        assert!(unbuilt(spec, original, &helped).is_empty());
        // Named to place the new function, or only for a change of old code: no check.
        let beside = "Add `cut_affixes` after `cut_prefix`, like `cut_suffix`.";
        assert!(unbuilt(beside, original, &inlined).is_empty());
        let changed = original.replace("return s\n", "return s[:]\n");
        assert!(unbuilt(spec, original, &changed).is_empty());
        assert_eq!(
            asked_names("Built on `take`, then by calling `a.b`, `c`, and `d` or `e`."),
            BTreeSet::from(["b", "c", "d", "take"].map(String::from)),
            "a list joined by commas and `and` is asked whole; `or` leaves a choice"
        );
    }

    #[test]
    fn ticked_names_are_the_leading_name_of_each_span() {
        let names = ticked_names("`take(n, it)` and `a.b.c` or `'x'` and `_p` then `1`");
        let expected = ["_p", "c", "take"].map(String::from);
        assert_eq!(names, BTreeSet::from(expected));
    }
}
