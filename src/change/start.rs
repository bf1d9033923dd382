//! How an answer by symbol begins, when the evidence names the one definition it is about.
//! Pure.
//!
//! Asked for changed blocks only ([`super::anchor`]), the 1.5B model often began by re-typing
//! the shown file from its first line (a licence header, the imports) and ran out of tokens,
//! or glued the placing words to a `def` line it then left out (code corpus, dev half: three
//! of the four corrections of one request re-typed the file). The embedded model continues an
//! answer the engine begins ([`crate::llm::LlmRequest::prefill`]), so the answer is begun at
//! its placing line and its `def`:
//! - a correction whose failing output names one top-level function of the file, by a call
//!   (`name(`) or a traceback frame (`in name`), begins as that function's `REPLACE`; when
//!   that function calls other functions of the file, the fault may be theirs (a function
//!   that delegates), so round after round begins at the next of them, then the first again;
//! - a correction of a test file whose failing output names no function of it begins at a
//!   test pytest's summary says failed (`FAILED path::Class::test`), one after the other
//!   round by round: an old test that expects what the request changed is corrected there;
//! - a task that asks for something new (its words or the request's begin with "add",
//!   "write", ... as [`asks`] reads them) and names one new function (`name(`, not in the
//!   file; in a test file, a `test` one: the function the request names is the code's)
//!   begins as its `ADD AFTER` the last function of the file the task names (`ADD AT END`
//!   when none), so it is placed where the request says;
//! - otherwise a task that names one function of the file and no new one begins as that
//!   function's `REPLACE`, unless it asks for the same behaviour in another form (a
//!   refactoring may touch more than one definition).
//!
//! Otherwise the answer is not begun. The `def` is begun up to its name: begun at `(`, the
//! model's tokens put a space after it. Only plain functions are begun (`async def` and
//! classes keep their own first lines); what follows the first block is the model's, so an
//! answer that must also change something else still can.

use std::collections::BTreeSet;

use super::fault::is_test_file;
use super::reproduce::{Asks, asks};
use crate::python::{is_name_char, words};
use crate::symbols::outline::{Located, SymbolKind, locate_all};
use crate::symbols::units::called_names;

/// The definition an answer is begun at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Start {
    /// `REPLACE name`, then its `def`.
    Replace(String),
    /// `ADD AFTER after` (`ADD AT END` without one), then the new `def name`.
    Add { name: String, after: Option<String> },
}

impl Start {
    /// The answer's first lines.
    pub(super) fn prefill(&self) -> String {
        match self {
            Start::Replace(name) => {
                // A method's `def` has its own name; the placing line names its class too.
                let own = name.rsplit('.').next().unwrap_or(name);
                format!("REPLACE {name}\n```python\ndef {own}")
            }
            Start::Add {
                name,
                after: Some(after),
            } => format!("ADD AFTER {after}\n```python\ndef {name}"),
            Start::Add { name, after: None } => format!("ADD AT END\n```python\ndef {name}"),
        }
    }
}

/// The start of correction `round` (from 0) of `source` after a check printed `output` (see
/// the module doc).
pub(super) fn for_correction(output: &str, source: &str, round: u32) -> Option<Start> {
    let called = called_in(output);
    let all = locate_all(source).ok()?;
    let functions = plain_functions(&all);
    let mut named = functions
        .iter()
        .filter(|f| called.contains(f.symbol.name.as_str()));
    let Some(first) = named.next() else {
        let tests = failing_tests(output, source);
        return (!tests.is_empty())
            .then(|| Start::Replace(tests[round as usize % tests.len()].clone()));
    };
    if named.next().is_some() {
        return None;
    }
    // The fault may be in what the failing function calls: each round begins at the next.
    let calls = calls_of(source, first);
    let suspects: Vec<&str> = std::iter::once(first.symbol.name.as_str())
        .chain(
            (functions.iter())
                .map(|f| f.symbol.name.as_str())
                .filter(|f| *f != first.symbol.name && calls.contains(*f)),
        )
        .collect();
    let at = round as usize % suspects.len();
    Some(Start::Replace(suspects[at].to_string()))
}

/// The start of a correction of `path` (whose text is `source`) when a check could not
/// import a name from it (`cannot import name 'X' from 'pkg.module'`, Python's own words) that
/// it does not define: the answer is begun as that function's `ADD AT END`. Whatever else
/// the check says, nothing of it ran without that name. Shown a short module whole, the 1.5B
/// model re-typed it without the function the change adds, in every answer of two rounds
/// (code corpus, dev half: isodate-duration-seconds).
pub(super) fn for_missing(output: &str, path: &str, source: &str) -> Option<Start> {
    let module = path.strip_suffix(".py")?;
    let module = module.strip_suffix("/__init__").unwrap_or(module);
    output.lines().find_map(|line| {
        let (_, rest) = line.split_once("cannot import name '")?;
        let (name, rest) = rest.split_once('\'')?;
        let from = rest.strip_prefix(" from '")?.split('\'').next()?;
        let here = format!("/{module}").ends_with(&format!("/{}", from.replace('.', "/")));
        (here && crate::python::is_identifier(name) && !super::anchor::defines(source, name)).then(
            || Start::Add {
                name: name.to_string(),
                after: None,
            },
        )
    })
}

/// The tests pytest's summary says failed (`FAILED path::Class::test_x - ...`) that `source`
/// defines, as `Class.test_x` or `test_x`, in the summary's order.
fn failing_tests(output: &str, source: &str) -> Vec<String> {
    let mut tests = Vec::new();
    for line in output.lines() {
        let Some(id) = line.strip_prefix("FAILED ") else {
            continue;
        };
        let id = id.split_whitespace().next().unwrap_or_default();
        let id = id.split_once('[').map_or(id, |(id, _)| id);
        let Some((_, name)) = id.split_once("::") else {
            continue;
        };
        let name = name.replace("::", ".");
        if !tests.contains(&name) && super::anchor::defines(source, &name) {
            tests.push(name);
        }
    }
    tests
}

/// The names the code of `def` calls (`name(`), strings and so its docstring left out (a
/// docstring's examples call the function itself, and its prose names others it does not
/// call).
pub(super) fn calls_of(source: &str, def: &Located) -> BTreeSet<String> {
    called_names(&source[def.colon_end..def.symbol.end_byte])
}

/// The start of the first answer to a task on `source`, the text of `path` (see the module
/// doc): `spec` is the request, `description` the task's.
pub(super) fn for_task(path: &str, spec: &str, description: &str, source: &str) -> Option<Start> {
    let text = format!("{description}\n{spec}");
    let said: BTreeSet<&str> = words(&text).collect();
    let in_source: BTreeSet<&str> = words(source).collect();
    let named: Vec<String> = functions(source)?
        .into_iter()
        .filter(|f| said.contains(f.as_str()))
        .collect();
    let new: BTreeSet<&str> = called_in(&text)
        .into_iter()
        .filter(|n| !in_source.contains(n) && !crate::python::BUILTINS.contains(n))
        .filter(|n| crate::python::is_identifier(n))
        // A test file gets tests: the new function the request names is the code's.
        .filter(|n| !is_test_file(path) || n.starts_with("test"))
        .collect();
    // The request may begin with where ("In m.py, add ..."); the planner's task says what.
    let kinds = [asks(description), asks(spec)];
    if kinds.contains(&Asks::New) && new.len() == 1 {
        return Some(Start::Add {
            name: new.first()?.to_string(),
            after: named.last().cloned(),
        });
    }
    let same = kinds.contains(&Asks::SameBehaviour);
    (!same && new.is_empty() && named.len() == 1).then(|| Start::Replace(named[0].clone()))
}

/// The new function a task on `source` adds, when [`for_task`] begins its answer as one.
pub(super) fn added(path: &str, spec: &str, description: &str, source: &str) -> Option<String> {
    match for_task(path, spec, description, source)? {
        Start::Add { name, .. } => Some(name),
        Start::Replace(_) => None,
    }
}

/// The names of the plain top-level functions of a Python `source`, in file order; `None`
/// when it does not parse.
fn functions(source: &str) -> Option<Vec<String>> {
    let all = locate_all(source).ok()?;
    Some(
        (plain_functions(&all).into_iter())
            .map(|l| l.symbol.name.clone())
            .collect(),
    )
}

/// The plain top-level functions of `all`, in file order.
fn plain_functions(all: &[Located]) -> Vec<&Located> {
    all.iter()
        .filter(|l| !l.symbol.qualified_name.contains('.'))
        .filter(|l| l.symbol.kind == SymbolKind::Function)
        .collect()
}

/// The identifiers `text` calls (`name(`; `obj.name(` is a method of something else) and the
/// traceback frames it names (`..., in name` at a line's end).
fn called_in(text: &str) -> BTreeSet<&str> {
    let mut named = BTreeSet::new();
    for line in text.lines() {
        if let Some((_, frame)) = line.trim_end().rsplit_once(" in ")
            && !frame.is_empty()
            && frame.chars().all(is_name_char)
        {
            named.insert(frame);
        }
        for (at, _) in line.match_indices('(') {
            let before = &line[..at];
            let start = before
                .rfind(|c: char| !is_name_char(c))
                .map_or(0, |i| i + 1);
            if start < at && !before[..start].ends_with('.') {
                named.insert(&before[start..]);
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "import re\n\n\ndef camel2under(s):\n    return s\n\n\ndef camel2kebab(s):\n    return s\n\n\nclass Text:\n    def lower(self):\n        pass\n\n\nasync def fetch(u):\n    pass\n";

    fn replace(name: &str) -> Option<Start> {
        Some(Start::Replace(name.into()))
    }

    #[test]
    fn a_correction_of_a_module_a_name_cannot_be_imported_from_begins_at_that_name() {
        let output = "test_zerorepo_acceptance.py:10: in test_example_1\n    from pkg.text import \
                      slug as _zr_function\nE   ImportError: cannot import name 'slug' from \
                      'pkg.text' (/repo/src/pkg/text.py)";
        let start = Start::Add {
            name: "slug".into(),
            after: None,
        };
        assert_eq!(start.prefill(), "ADD AT END\n```python\ndef slug");
        let added = Some(start);
        assert_eq!(for_missing(output, "src/pkg/text.py", SOURCE), added);
        let package = output.replace("'pkg.text'", "'pkg'");
        assert_eq!(for_missing(&package, "src/pkg/__init__.py", SOURCE), added);
        // Another module's name, a name the module defines, no such line: not begun.
        assert_eq!(for_missing(output, "src/pkg/other.py", SOURCE), None);
        let top = output.replace("'pkg.text'", "'text'");
        assert_eq!(
            for_missing(&top, "text.py", SOURCE),
            added,
            "a top-level module"
        );
        assert_eq!(for_missing(output, "src/other/text.py", SOURCE), None);
        let defined = output.replace("'slug'", "'camel2under'");
        assert_eq!(for_missing(&defined, "src/pkg/text.py", SOURCE), None);
        assert_eq!(for_missing("1 failed", "src/pkg/text.py", SOURCE), None);
    }

    #[test]
    fn a_correction_begins_at_the_one_function_its_failure_calls_or_passes_through() {
        let example = "E   AssertionError: got 'a_b', expected 'a-b'\n- FAILED: `camel2kebab('AB')` should return `'a-b'`";
        assert_eq!(for_correction(example, SOURCE, 0), replace("camel2kebab"));
        let frame = "tests/test_s.py:4: in test_x\n    assert f(1)\nm.py:9: in camel2under\n    raise ValueError";
        assert_eq!(for_correction(frame, SOURCE, 0), replace("camel2under"));
        // Two of its functions, a method, a class, an async function, or none: not begun.
        for output in [
            "camel2kebab('x') == camel2under('x')",
            "t.lower() and Text()",
            "s.camel2kebab('x')",
            "await fetch(u)",
            "1 failed",
        ] {
            assert_eq!(for_correction(output, SOURCE, 0), None, "{output}");
        }
        assert_eq!(for_correction("camel2kebab(1)", "def (:\n", 0), None);
        assert_eq!(
            replace("f").unwrap().prefill(),
            "REPLACE f\n```python\ndef f",
            "begun up to the name"
        );
    }

    #[test]
    fn rounds_of_a_correction_begin_at_the_failing_function_then_at_each_it_calls() {
        let source = "def helper(s):\n    return s\n\n\ndef unused(s):\n    return s\n\n\ndef outer(s):\n    \"\"\"Like unused(s).\n\n    >>> outer('a')\n    'a'\n    \"\"\"\n    return helper(s.strip()) or outer(s)\n";
        let output = "E   assert outer('a') == 'b'";
        let rounds: Vec<Option<Start>> =
            (0..3).map(|r| for_correction(output, source, r)).collect();
        // Its docstring's words, a method and itself are no suspects.
        assert_eq!(
            rounds,
            [replace("outer"), replace("helper"), replace("outer")]
        );
        assert_eq!(for_correction("helper(1)", source, 1), replace("helper"));
    }

    #[test]
    fn a_test_file_is_corrected_at_the_tests_that_failed() {
        let tests = "import m\n\n\nclass EqualTests:\n    def test_empty(self):\n        assert m.f('')\n\n    def test_one(self):\n        assert m.f('a')\n\n\ndef test_free():\n    assert m.f('b')\n";
        let output = "E   AssertionError: False is not true\nFAILED tests/test_m.py::EqualTests::test_empty - AssertionError: Fal...\nFAILED tests/test_m.py::test_free[1] - assert\nFAILED tests/test_m.py::test_gone - x\n1 failed";
        let rounds: Vec<Option<Start>> = (0..3).map(|r| for_correction(output, tests, r)).collect();
        assert_eq!(
            rounds,
            [
                replace("EqualTests.test_empty"),
                replace("test_free"),
                replace("EqualTests.test_empty")
            ]
        );
        assert_eq!(
            replace("EqualTests.test_empty").unwrap().prefill(),
            "REPLACE EqualTests.test_empty\n```python\ndef test_empty"
        );
        assert_eq!(for_correction("1 failed", tests, 0), None);
    }

    #[test]
    fn a_new_function_is_begun_after_the_last_function_the_task_names() {
        let spec = "Add `snake2kebab(s)` next to camel2under and camel2kebab: `snake2kebab('a_b')` is 'a-b'.";
        let start = for_task("m.py", spec, "Add snake2kebab(s) to m.py.", SOURCE);
        assert_eq!(
            start.as_ref().map(Start::prefill).as_deref(),
            Some("ADD AFTER camel2kebab\n```python\ndef snake2kebab")
        );
        let start = for_task(
            "m.py",
            "Add `dashes(s)`, so 'a b' becomes 'a-b'.",
            "",
            SOURCE,
        );
        assert_eq!(
            start.map(|s| s.prefill()).as_deref(),
            Some("ADD AT END\n```python\ndef dashes")
        );
        // The task's words say what when the request begins with where.
        let start = for_task(
            "m.py",
            "In m.py, add `dashes(s)`.",
            "Add dashes(s).",
            SOURCE,
        );
        assert!(matches!(start, Some(Start::Add { .. })), "{start:?}");
        // In a test file the new function is a test; the one the request names is the code's.
        let tests = "from m import f\n\n\ndef test_f():\n    assert f(1)\n";
        let spec = "Add `dashes(s)` to m.py, and a test for it.";
        assert_eq!(
            for_task("tests/test_m.py", spec, "Test dashes.", tests),
            None
        );
        let start = for_task("tests/test_m.py", spec, "Add test_dashes().", tests);
        assert!(matches!(start, Some(Start::Add { .. })), "{start:?}");
        // Two new names, a builtin or a name the file already has are no new function.
        assert_eq!(for_task("m.py", "Add f(x) and g(x).", "", SOURCE), None);
        assert_eq!(
            for_task("m.py", "Add a check: len(s) is 2.", "", SOURCE),
            None
        );
        assert_eq!(
            for_task("m.py", "Add a use of re.sub(a).", "", SOURCE),
            None
        );
        assert_eq!(
            for_task("m.py", "Add caching to camel2under(s).", "", SOURCE),
            replace("camel2under"),
            "something added to the one function named"
        );
    }

    #[test]
    fn a_change_is_begun_at_the_one_function_it_names() {
        let spec = "Change camel2under so that digits start a word.";
        assert_eq!(for_task("m.py", spec, "", SOURCE), replace("camel2under"));
        let both = "Change camel2under and camel2kebab so that digits start a word.";
        assert_eq!(for_task("m.py", both, "", SOURCE), None);
        // A new name in a change, or a request of the same behaviour: not begun.
        assert_eq!(
            for_task("m.py", "Fix camel2under: use helper(s).", "", SOURCE),
            None
        );
        assert_eq!(for_task("m.py", "Refactor camel2under.", "", SOURCE), None);
        assert_eq!(
            for_task("m.py", "Change camel2under.", "", "def (:\n"),
            None
        );
    }
}
