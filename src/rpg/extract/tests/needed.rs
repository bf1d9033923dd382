//! What a planned definition reads, and what a planned value calls ([`super::super::needed`]).

use super::*;

const SENTINELS: &str = r#""""Iteration helpers."""
from .recipes import _marker, TABLE

_SEP = "-"
JOINED = _SEP + "x"


def first(iterable, default=_marker):
    """The first item of iterable, or default."""
    for item in iterable:
        return item
    if default is _marker:
        raise ValueError("empty")
    return default


def joined():
    """JOINED and a table entry."""
    return JOINED + TABLE[0]
"#;

const RECIPES: &str = r#""""Recipes."""
_marker = object()
TABLE = ("a", "b")


def take(n, iterable):
    """The first n items."""
    return list(iterable)[:n]
"#;

#[test]
fn data_a_definition_reads_is_planned_private_computed_or_from_a_module_left_out() {
    let sources = [
        package("pkg", "\"\"\"Pkg.\"\"\"\n"),
        file("pkg.more", SENTINELS),
        file("pkg.recipes", RECIPES),
    ];
    let options = ExtractOptions {
        modules: vec!["pkg.more".into()],
        ..ExtractOptions::default()
    };
    let done = extract(&sources, &options).unwrap();
    let data: Vec<(&str, &str, Option<&str>)> = done
        .rpg
        .nodes
        .iter()
        .filter(|n| n.is_data())
        .map(|n| {
            (
                n.id.as_str(),
                n.docstring.as_deref().unwrap_or_default(),
                n.value.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        data,
        [
            (
                "pkg.more.JOINED",
                "The module-level `JOINED` of `pkg.more`: a value.\n\nThe library assigns it as:\n\n    JOINED = _SEP + \"x\"",
                None
            ),
            (
                "pkg.more.TABLE",
                "The module-level `TABLE` of `pkg.recipes`: a tuple of 2 entries.",
                Some("(\"a\", \"b\")")
            ),
            (
                "pkg.more._SEP",
                "The module-level `_SEP` of `pkg.more`: a string.",
                Some("\"-\"")
            ),
            (
                "pkg.more._marker",
                "The module-level `_marker` of `pkg.recipes`: the result of `object(...)`.\n\nThe library assigns it as:\n\n    _marker = object()",
                None
            ),
        ]
    );
    assert_eq!(
        edges(&done.rpg),
        [
            ("pkg.more.JOINED".into(), "pkg.more._SEP".into(), "uses"),
            ("pkg.more.first".into(), "pkg.more._marker".into(), "uses"),
            ("pkg.more.joined".into(), "pkg.more.JOINED".into(), "uses"),
            ("pkg.more.joined".into(), "pkg.more.TABLE".into(), "uses"),
        ]
    );
    // Planned now, so no longer reported as a value the plan cannot hold.
    assert!(
        done.summary
            .skipped
            .iter()
            .all(|s| s.name != "pkg.more.JOINED"),
        "{:?}",
        done.summary.skipped
    );
    // What no planned definition reads stays out: `take` of the module left out.
    assert_eq!(
        leaf_names(&done.rpg),
        ["JOINED", "TABLE", "_SEP", "_marker", "first", "joined"]
    );
}

const DEACCENT: &str = r#""""Text."""

__all__ = ["asciify"]


class _Table(dict):
    """A table whose missing keys map to themselves."""

    def __missing__(self, key):
        """The key itself."""
        return _fallback(key)


def _fallback(key):
    """What a key with no entry maps to."""
    return key


def _helper(x):
    """Read by a body only."""
    return x


_BASE = {1: "a"}

MAP = _Table(_BASE)


def asciify(text):
    """Text through MAP."""
    return _helper(MAP[text])
"#;

#[test]
fn a_definition_a_planned_value_calls_is_planned_and_one_a_body_calls_is_not() {
    let done = extract(&[file("text", DEACCENT)], &ExtractOptions::default()).unwrap();
    assert_eq!(leaf_names(&done.rpg), ["MAP", "_BASE", "_Table", "asciify"]);
    assert_eq!(node(&done.rpg, "text._Table").kind, NodeKind::Class);
    assert_eq!(
        edges(&done.rpg),
        [
            ("text.MAP".into(), "text._BASE".into(), "uses"),
            ("text.MAP".into(), "text._Table".into(), "function_call"),
            ("text.asciify".into(), "text.MAP".into(), "uses"),
        ]
    );
    assert!(
        node(&done.rpg, "text.MAP")
            .dependencies
            .iter()
            .any(|d| d.as_str() == "text._Table")
    );
}
