use super::docstring::{cleandoc, split_examples, unescape};
use super::*;

mod needed;

fn file(dotted: &str, text: &str) -> SourceFile {
    SourceFile {
        dotted: dotted.into(),
        is_package: false,
        text: text.into(),
    }
}

fn package(dotted: &str, text: &str) -> SourceFile {
    SourceFile {
        is_package: true,
        ..file(dotted, text)
    }
}

fn with_examples() -> ExtractOptions {
    ExtractOptions {
        examples: true,
        ..ExtractOptions::default()
    }
}

fn node<'a>(rpg: &'a Rpg, id: &str) -> &'a Node {
    rpg.nodes.iter().find(|n| n.id == id).unwrap()
}

fn leaf_names(rpg: &Rpg) -> Vec<&str> {
    rpg.nodes
        .iter()
        .filter(|n| n.is_leaf())
        .map(|n| n.name.as_str())
        .collect()
}

fn edges(rpg: &Rpg) -> Vec<(String, String, &'static str)> {
    rpg.edges
        .iter()
        .map(|e| (e.source.to_string(), e.target.to_string(), e.kind.as_str()))
        .collect()
}

const TEXT: &str = r#""""Text helpers."""
from .util import clamp as limit

__all__ = ["shout", "pad", "Box"]


def shout(text: str,
          times: int = 1,  # how loud
          ) -> str:
    """Upper-case ``text``.

    Args:
        text: What to shout.

    Examples:
        >>> shout("a")
        'A'
        >>> shout("b",
        ...       2)
        'BB'

    Raises:
        ValueError: If times is negative.
    """
    return pad(text.upper() * limit(times, 0, 9))


def pad(text, width=8, *, fill=" "):
    'Pad \x41 with a tab:\tend.'
    return text.ljust(width, fill)


def helper(x):
    """Public by name, but not in __all__."""
    return x


def _private():
    """Never planned."""


class Box(Base):
    """A box."""

    def __init__(self, size: int = 0):
        """Make a box of ``size``."""
        self.size = shout(str(size))

    def _secret(self):
        """Hidden."""

    def volume(self) -> int:
        return self.size ** 3
"#;

const UTIL: &str = r#"def clamp(value, low, high):
    """Clamp value into [low, high]."""
    return max(low, min(high, value))

def undocumented(x):
    return x
"#;

#[test]
fn public_functions_and_classes_become_leaves_with_one_line_signatures_and_clean_docstrings() {
    let sources = [
        package("pkg", "\"\"\"The package.\"\"\"\n"),
        file("pkg.text", TEXT),
        file("pkg.util", UTIL),
    ];
    let done = extract(&sources, &with_examples()).unwrap();
    let rpg = &done.rpg;
    let ids: Vec<&str> = rpg.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "pkg",
            "pkg.text",
            "pkg.text.Box",
            "pkg.text.pad",
            "pkg.text.shout",
            "pkg.util",
            "pkg.util.clamp"
        ]
    );
    let shout = node(rpg, "pkg.text.shout");
    assert_eq!(
        shout.signature.as_deref(),
        Some("def shout(text: str, times: int = 1) -> str")
    );
    assert_eq!(
        shout.docstring.as_deref(),
        Some(
            "Upper-case ``text``.\n\nArgs:\n    text: What to shout.\n\nRaises:\n    ValueError: If times is negative."
        )
    );
    assert_eq!(
        shout.examples,
        [">>> shout(\"a\")\n'A'\n>>> shout(\"b\",\n...       2)\n'BB'"]
    );
    assert_eq!(shout.file_path.as_deref(), Some("src/pkg/text.py"));
    assert_eq!(shout.parent.as_deref(), Some("pkg.text"));
    assert_eq!(shout.subgraph_id.as_deref(), Some("pkg.text"));
    let pad = node(rpg, "pkg.text.pad");
    assert_eq!(
        pad.signature.as_deref(),
        Some("def pad(text, width=8, *, fill=\" \")")
    );
    // As `inspect.cleandoc` does, tabs are expanded.
    assert_eq!(
        pad.docstring.as_deref(),
        Some("Pad A with a tab:       end.")
    );
    let boxed = node(rpg, "pkg.text.Box");
    assert_eq!(boxed.kind, NodeKind::Class);
    assert_eq!(boxed.signature.as_deref(), Some("class Box(Base)"));
    assert_eq!(
        boxed.docstring.as_deref(),
        Some(
            "A box.\n\nMethods:\n    def __init__(self, size: int = 0)\n        Make a box of ``size``.\n    def volume(self) -> int"
        )
    );
    let package = node(rpg, "pkg");
    assert_eq!(
        (package.kind.as_str(), package.file_path.as_deref()),
        ("package", Some("src/pkg"))
    );
    assert_eq!(package.docstring.as_deref(), Some("The package."));
    assert_eq!(package.subgraph_id.as_deref(), Some("pkg.text"));
    assert_eq!(
        node(rpg, "pkg.text").docstring.as_deref(),
        Some("Text helpers.")
    );
    assert_eq!(
        done.summary.skipped,
        [Skipped {
            name: "pkg.util.undocumented".into(),
            reason: "no docstring (the docstring is the specification)".into()
        }]
    );
    assert_eq!(
        (
            done.summary.functions,
            done.summary.classes,
            done.summary.modules
        ),
        (3, 1, 2)
    );
}

#[test]
fn calls_to_planned_functions_become_function_call_edges_and_dependencies() {
    let sources = [file("pkg.text", TEXT), file("pkg.util", UTIL)];
    let rpg = extract(&sources, &with_examples()).unwrap().rpg;
    assert_eq!(
        edges(&rpg),
        [
            (
                "pkg.text.Box".into(),
                "pkg.text.shout".into(),
                "function_call"
            ),
            (
                "pkg.text.shout".into(),
                "pkg.text.pad".into(),
                "function_call"
            ),
            (
                "pkg.text.shout".into(),
                "pkg.util.clamp".into(),
                "function_call"
            ),
        ]
    );
    assert_eq!(
        node(&rpg, "pkg.text.shout").dependencies,
        ["pkg.text.pad", "pkg.util.clamp"]
    );
}

#[test]
fn calls_through_module_aliases_wildcards_and_package_reexports_are_resolved() {
    let sources = [
        package("pkg", "from .core import base\n"),
        file("pkg.core", "def base():\n    \"\"\"Base.\"\"\"\n"),
        file(
            "pkg.more",
            "from pkg.core import *\n\ndef one():\n    \"\"\"One.\"\"\"\n    return base()\n",
        ),
        file(
            "pkg.top",
            "import pkg.more as m\nfrom pkg import base as b\n\ndef two():\n    \"\"\"Two.\"\"\"\n    return m.one() + b()\n",
        ),
    ];
    let rpg = extract(&sources, &with_examples()).unwrap().rpg;
    assert_eq!(
        edges(&rpg),
        [
            (
                "pkg.more.one".into(),
                "pkg.core.base".into(),
                "function_call"
            ),
            (
                "pkg.top.two".into(),
                "pkg.core.base".into(),
                "function_call"
            ),
            ("pkg.top.two".into(), "pkg.more.one".into(), "function_call"),
        ]
    );
}

#[test]
fn mutual_recursion_keeps_the_plan_acyclic_by_dropping_the_closing_edge() {
    let source = "def even(n):\n    \"\"\"Even.\"\"\"\n    return n == 0 or odd(n - 1)\n\n\
                      def odd(n):\n    \"\"\"Odd.\"\"\"\n    return n != 0 and even(n - 1)\n\n\
                      def fact(n):\n    \"\"\"Factorial.\"\"\"\n    return 1 if n < 2 else n * fact(n - 1)\n";
    let done = extract(&[file("num", source)], &with_examples()).unwrap();
    assert_eq!(
        edges(&done.rpg),
        [("num.even".into(), "num.odd".into(), "function_call")]
    );
    assert_eq!(
        done.summary.dropped_edges,
        [DroppedEdge {
            source: "num.odd".into(),
            target: "num.even".into(),
            cycle: vec!["num.even".into(), "num.odd".into()],
        }]
    );
}

#[test]
fn subclasses_of_planned_classes_get_inherits_edges() {
    let source = "class A:\n    \"\"\"A.\"\"\"\n\nclass B(A):\n    \"\"\"B.\"\"\"\n";
    let rpg = extract(&[file("shapes", source)], &with_examples())
        .unwrap()
        .rpg;
    assert_eq!(
        edges(&rpg),
        [("shapes.B".into(), "shapes.A".into(), "inherits")]
    );
}

#[test]
fn no_examples_drops_doctests_and_their_empty_headings_but_keeps_the_rest() {
    let doc = "Sum.\n\nExamples:\n    >>> add(1, 2)\n    3\n\n    >>> add(0, 0)\n    0\n\nReturns:\n    int: The sum.\n\nExamples\n--------\n>>> add(2, 2)\n4";
    let (text, examples) = split_examples(doc);
    assert_eq!(text, "Sum.\n\nReturns:\n    int: The sum.");
    assert_eq!(
        examples,
        [">>> add(1, 2)\n3", ">>> add(0, 0)\n0", ">>> add(2, 2)\n4"]
    );
    let inline = "Sum, e.g.\n>>> add(1, 2)\n3\nand more text.";
    assert_eq!(split_examples(inline).0, "Sum, e.g.");

    let source = format!(
        "def add(a, b):\n    \"\"\"{}\"\"\"\n    return a + b\n",
        doc.replace('\n', "\n    ")
    );
    let done = extract(&[file("calc", &source)], &ExtractOptions::default()).unwrap();
    let add = node(&done.rpg, "calc.add");
    assert_eq!(
        add.docstring.as_deref(),
        Some("Sum.\n\nReturns:\n    int: The sum.")
    );
    assert!(add.examples.is_empty());
    assert_eq!(done.summary.examples, 0);
}

#[test]
fn dunder_all_decides_what_is_public_when_it_is_a_literal() {
    let source = "__all__ = ('_hidden',)\n__all__ += ['b']\n\
                      def _hidden():\n    \"\"\"H.\"\"\"\n\ndef a():\n    \"\"\"A.\"\"\"\n\ndef b():\n    \"\"\"B.\"\"\"\n";
    let rpg = extract(&[file("m", source)], &with_examples()).unwrap().rpg;
    assert_eq!(leaf_names(&rpg), ["_hidden", "b"]);
    let dynamic = "__all__ = [n for n in dir()]\ndef a():\n    \"\"\"A.\"\"\"\n\ndef _b():\n    \"\"\"B.\"\"\"\n";
    let rpg = extract(&[file("m", dynamic)], &with_examples())
        .unwrap()
        .rpg;
    assert_eq!(rpg.nodes.iter().filter(|n| n.is_leaf()).count(), 1);
    // A private name the package imports by name is its interface, planned with what
    // calls it; one it does not import stays out.
    let module = "def width(s):\n    \"\"\"W.\"\"\"\n    return _search(s)\n\n\
                      def _search(s):\n    \"\"\"S.\"\"\"\n\n\
                      def _other():\n    \"\"\"O.\"\"\"\n";
    let init = "from .m import width, _search\n";
    let rpg = extract(&[package("p", init), file("p.m", module)], &with_examples())
        .unwrap()
        .rpg;
    assert_eq!(leaf_names(&rpg), ["_search", "width"]);
    assert_eq!(
        edges(&rpg),
        [("p.m.width".into(), "p.m._search".into(), "function_call")]
    );
}

#[test]
fn what_the_plan_cannot_hold_is_skipped_with_a_reason() {
    let sources = [
        package("pkg", "def in_init():\n    \"\"\"Init.\"\"\"\n"),
        file(
            "pkg.twice",
            "def f():\n    \"\"\"One.\"\"\"\n\ndef f():\n    \"\"\"Two.\"\"\"\n",
        ),
        file(
            "json",
            "def loads(s):\n    \"\"\"Shadows the stdlib.\"\"\"\n",
        ),
        file("pkg.only", "def g():\n    \">>> g()\"\n"),
    ];
    let done = extract(&sources, &with_examples()).unwrap();
    let reasons: Vec<(&str, &str)> = done
        .summary
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "json",
                "its plan path `src/json.py` would shadow the standard-library module `json`"
            ),
            (
                "pkg.in_init",
                "defined in a package's `__init__.py`, which the engine writes itself"
            ),
            ("pkg.only.g", "its docstring holds only examples"),
            (
                "pkg.twice.f",
                "defined more than once; the last definition is planned"
            ),
        ]
    );
    assert_eq!(
        node(&done.rpg, "pkg.twice.f").docstring.as_deref(),
        Some("Two.")
    );
}

const CONSTS: &str = r#""""Constants."""
import re

#: Words never capitalised.
SMALL_WORDS = frozenset({"a", "an", "the"})

RULES = [
    ("ies", "y"),  # flies -> fly
    ("s", ""),
]
"""Suffix rewrite rules, tried in order."""

DEFAULTS = {"sep": "-"}
DEFAULTS["lower"] = True

PATTERN = re.compile(r"\s+")
_PRIVATE = 3
__version__ = "1.0"
LIMIT: int = 10  # how many words
COUNT = 0
COUNT += 1
ALIASES = {}
ALIASES.update(x="y")
"#;

const READERS: &str = r#""""Text."""
from . import consts
from .consts import SMALL_WORDS


def title(text, limit=consts.LIMIT):
    """Title-case text."""
    words = text.split()[:limit]
    return " ".join(w if w in SMALL_WORDS else w.title() for w in words)


def singular(word, **options):
    """The singular of word."""
    for suffix, repl in consts.RULES:
        if word.endswith(suffix):
            return word[: -len(suffix)] + repl
    return options.get("RULES", word)
"#;

/// The extraction of a package whose `consts` module holds data its `text` module reads.
fn consts_and_readers() -> Extraction {
    let sources = [
        package("pkg", "\"\"\"Pkg.\"\"\"\n"),
        file("pkg.consts", CONSTS),
        file("pkg.text", READERS),
    ];
    extract(&sources, &with_examples()).unwrap()
}

#[test]
fn module_level_literals_become_data_leaves_that_their_readers_use() {
    let done = consts_and_readers();
    let data: Vec<(&str, &str, &str)> = done
        .rpg
        .nodes
        .iter()
        .filter(|n| n.is_data())
        .map(|n| {
            (
                n.id.as_str(),
                n.docstring.as_deref().unwrap_or_default(),
                n.value.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        data,
        [
            (
                "pkg.consts.LIMIT",
                "The module-level `LIMIT` of `pkg.consts`: a number.",
                "10"
            ),
            (
                "pkg.consts.RULES",
                "Suffix rewrite rules, tried in order.",
                "[\n    (\"ies\", \"y\"),  # flies -> fly\n    (\"s\", \"\"),\n]"
            ),
            (
                "pkg.consts.SMALL_WORDS",
                "Words never capitalised.",
                "frozenset({\"a\", \"an\", \"the\"})"
            ),
        ]
    );
    let limit = node(&done.rpg, "pkg.consts.LIMIT");
    assert_eq!(
        (
            limit.kind.as_str(),
            limit.file_path.as_deref(),
            limit.parent.as_deref()
        ),
        ("data", Some("src/pkg/consts.py"), Some("pkg.consts"))
    );
    assert_eq!(
        edges(&done.rpg),
        [
            (
                "pkg.text.singular".into(),
                "pkg.consts.RULES".into(),
                "uses"
            ),
            ("pkg.text.title".into(), "pkg.consts.LIMIT".into(), "uses"),
            (
                "pkg.text.title".into(),
                "pkg.consts.SMALL_WORDS".into(),
                "uses"
            ),
        ]
    );
    assert_eq!(
        node(&done.rpg, "pkg.text.title").dependencies,
        ["pkg.consts.LIMIT", "pkg.consts.SMALL_WORDS"]
    );
}

#[test]
fn module_level_values_changed_or_computed_are_reported_not_planned() {
    let done = consts_and_readers();
    let reasons: Vec<(&str, &str)> = done
        .summary
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "pkg.consts.ALIASES",
                "changed at module level after its assignment (`.update(...)` called on it), so its value at import is not the one written"
            ),
            (
                "pkg.consts.COUNT",
                "changed at module level after its assignment (`+=`), so its value at import is not the one written"
            ),
            (
                "pkg.consts.DEFAULTS",
                "changed at module level after its assignment (an item assigned), so its value at import is not the one written"
            ),
            (
                "pkg.consts.PATTERN",
                "its value calls `re.compile`; a value may call only frozenset, set, tuple, list, dict, str, bytes, int, float, complex or bool, on one literal"
            ),
        ]
    );
    assert_eq!((done.summary.data, done.summary.functions), (3, 2));
    // The plan is valid and reads back with its data leaves.
    let text = serde_json::to_string(&done.rpg).unwrap();
    let again = crate::rpg::parse_str(&text, Path::new("rpg.json")).unwrap();
    assert_eq!(again, done.rpg);
}

#[test]
fn module_selection_takes_dotted_modules_and_packages_and_refuses_unknown_ones() {
    let sources = [file("pkg.text", TEXT), file("pkg.util", UTIL)];
    let only = ExtractOptions {
        modules: vec!["pkg.util".into()],
        ..with_examples()
    };
    let rpg = extract(&sources, &only).unwrap().rpg;
    assert!(rpg.nodes.iter().all(|n| !n.id.starts_with("pkg.text")));
    let err = extract(
        &sources,
        &ExtractOptions {
            modules: vec!["pkg.nope".into()],
            ..with_examples()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--module pkg.nope: no such module under the source directory (found: pkg.text, pkg.util)"
    );
}

#[test]
fn functions_keep_only_the_named_leaves_and_what_they_call_at_any_depth() {
    let sources = [
        package("pkg", "\"\"\"The package.\"\"\"\n"),
        file("pkg.text", TEXT),
        file("pkg.util", UTIL),
    ];
    let only = ExtractOptions {
        functions: vec!["shout".into()],
        ..with_examples()
    };
    let rpg = extract(&sources, &only).unwrap().rpg;
    let leaves: Vec<&str> = rpg
        .nodes
        .iter()
        .filter(|n| n.is_leaf())
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(leaves, ["pkg.text.pad", "pkg.text.shout", "pkg.util.clamp"]);
    assert_eq!(
        edges(&rpg),
        [
            (
                "pkg.text.shout".into(),
                "pkg.text.pad".into(),
                "function_call"
            ),
            (
                "pkg.text.shout".into(),
                "pkg.util.clamp".into(),
                "function_call"
            ),
        ]
    );
    let pad_only = ExtractOptions {
        functions: vec!["pad".into()],
        ..with_examples()
    };
    let rpg = extract(&sources, &pad_only).unwrap().rpg;
    assert!(rpg.nodes.iter().all(|n| !n.id.starts_with("pkg.util")));
    let err = extract(
        &sources,
        &ExtractOptions {
            functions: vec!["pad".into(), "nope".into(), "undocumented".into()],
            ..with_examples()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "function nope, undocumented: not a planned leaf of the selected modules"
    );
}

#[test]
fn reference_tests_are_recorded_in_the_metadata_and_output_is_deterministic() {
    let sources = [file("pkg.text", TEXT), file("pkg.util", UTIL)];
    let options = ExtractOptions {
        reference_tests: Some("ref/tests".into()),
        ..with_examples()
    };
    let first = extract(&sources, &options).unwrap().rpg;
    let mut reversed = sources.clone();
    reversed.reverse();
    assert_eq!(first, extract(&reversed, &options).unwrap().rpg);
    assert_eq!(first.metadata["reference_tests"], "ref/tests");
    assert_eq!(first.metadata["project_name"], "pkg");
}

#[test]
fn cleandoc_matches_inspect() {
    assert_eq!(
        cleandoc("  First.\n\n    Indented\n      more\n  "),
        "First.\n\nIndented\n  more"
    );
    assert_eq!(cleandoc("\n    Text.\n    "), "Text.");
    assert_eq!(
        unescape(r"a\nb\x41\u00e9\101\q"),
        "a\nbAé A\\q".replace(' ', "")
    );
}
