//! Merging a code fragment into a Python module.
//!
//! Rules, chosen so that re-applying the same fragment is a no-op (which makes a resumed run
//! byte-identical to an uninterrupted one):
//! - the module docstring stays first; the fragment's is used only if the file has none;
//! - new import lines are appended to the import block, without what the module already
//!   imports (a whole duplicate statement, or the items of one already bound the same way);
//! - a definition replaces the top-level definition of the same name in place, or is appended;
//! - other statements are appended unless already present verbatim.
//!
//! The output is normalised: one blank line after the imports block, two between definitions.

use crate::symbols::units::ImportItems;
use crate::symbols::{Unit, UnitKind, split_units};

/// Returns `existing` with `fragment` merged in.
pub(crate) fn merge_python(existing: &str, fragment: &str) -> String {
    let mut units = split_units(existing);
    for unit in split_units(fragment) {
        match &unit.kind {
            UnitKind::Docstring => {
                if !units.iter().any(|u| u.kind == UnitKind::Docstring) {
                    units.insert(0, unit);
                }
            }
            UnitKind::Import => {
                if let Some(unit) = without_bound_items(&units, unit) {
                    let at = units
                        .iter()
                        .rposition(|u| matches!(u.kind, UnitKind::Import | UnitKind::Docstring))
                        .map_or(0, |p| p + 1);
                    units.insert(at, unit);
                }
            }
            UnitKind::Def(name) => match units.iter().position(|u| u.def_name() == Some(name)) {
                Some(at) => units[at] = unit,
                None => units.push(unit),
            },
            UnitKind::Other => {
                if !units.iter().any(|u| u.text == unit.text) {
                    units.push(unit);
                }
            }
        }
    }
    render(&units)
}

/// `import` as it goes into a module whose units are `units`: `None` when the module already
/// has it (the same text, or every item bound by an import of the same thing), else the
/// statement with only the items the module lacks. Tests of several nodes of one module
/// land in one file, and each answer brings its own `from pkg.mod import f, g`: kept whole,
/// each later one imports `f` again, which pyflakes reports as a redefinition (F811).
/// An item bound to something else (`from y import f` where the module has `from x import
/// f`) is kept: the fragment's code means its own.
fn without_bound_items(units: &[Unit], import: Unit) -> Option<Unit> {
    let imports = || units.iter().filter(|u| u.kind == UnitKind::Import);
    if imports().any(|u| u.text == import.text) {
        return None;
    }
    let Some(mut items) = ImportItems::parse(&import.text) else {
        return Some(import);
    };
    let bound: Vec<(Option<String>, String, Option<String>)> = imports()
        .filter_map(|u| ImportItems::parse(&u.text))
        .flat_map(|i| {
            let from = i.from.clone();
            i.items
                .into_iter()
                .map(move |(name, alias)| (from.clone(), name, alias))
        })
        .collect();
    let before = items.items.len();
    items.items.retain(|(name, alias)| {
        !bound
            .iter()
            .any(|(f, n, a)| *f == items.from && n == name && a == alias)
    });
    match items.items.len() {
        0 => None,
        n if n == before => Some(import),
        _ => Some(Unit {
            kind: UnitKind::Import,
            text: items.render(),
        }),
    }
}

/// Why an answer cannot be shaped into what its role asks for. The text is the diagnostic the
/// next prompt quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("the answer does not define `{name}` (write the function itself, not its tests)")]
    MissingDefinition { name: String },
    #[error(
        "the answer contains no `def test_...` function that checks only what the specification states"
    )]
    NoTests,
}

/// Shapes an implementation answer for `name` in module `module` (dotted import path) whose
/// current source is `existing`: drops imports of the module itself (a model copying the tests'
/// `from pkg.mod import f` would make the module import itself) and imports of names the module
/// already defines (they would shadow or fail), drops test functions and copies of the
/// module's other functions (those exist and passed their tests; prompts show them cut to
/// their signature, and a copied outline would replace working code) and of its module-level
/// assignments (a data node's value is the plan's; a copy, or a copy of a table the prompt
/// showed shortened, appended below it would rebind the name), and insists that `name` is
/// defined.
pub fn shape_implementation(
    code: &str,
    name: &str,
    module: &str,
    existing: &str,
) -> Result<String, ShapeError> {
    shape_correction(code, name, &[], module, existing)
}

/// [`shape_implementation`] for a fix that may also correct the module's functions in
/// `editable` (the localization found the fault there; their tests run with the node's): their
/// definitions are kept, and an answer that defines one of them may leave `name` out.
pub(crate) fn shape_correction(
    code: &str,
    name: &str,
    editable: &[String],
    module: &str,
    existing: &str,
) -> Result<String, ShapeError> {
    let existing_units = split_units(existing);
    let defined: Vec<String> = existing_units
        .iter()
        .filter_map(|u| u.def_name().map(str::to_string))
        .collect();
    let assigned: Vec<&str> = existing_units
        .iter()
        .filter_map(Unit::assigned_name)
        .collect();
    let wanted = |n: &str| n == name || editable.iter().any(|e| e == n);
    let units: Vec<Unit> = split_units(code)
        .into_iter()
        .filter(|u| !imports_itself(u, module))
        .filter(|u| {
            !(u.kind == UnitKind::Import
                && u.imported_names()
                    .iter()
                    .any(|n| defined.contains(n) || n == name))
        })
        .filter(|u| !u.def_name().is_some_and(|n| n.starts_with("test_")))
        .filter(|u| {
            !u.def_name()
                .is_some_and(|n| !wanted(n) && defined.iter().any(|d| d == n))
        })
        .filter(|u| !u.assigned_name().is_some_and(|n| assigned.contains(&n)))
        .collect();
    if !units.iter().any(|u| u.def_name().is_some_and(wanted)) {
        return Err(ShapeError::MissingDefinition { name: name.into() });
    }
    Ok(render(&units))
}

/// Shapes a tests answer against the node's specification: a test that expects an exception
/// the specification never names is dropped (small models like to invent `TypeError` checks
/// the code is not asked to make), and so is a definition of a name the answer imports (the
/// embedded model wrote its own `add_bias_column` under `from ml_lib... import
/// add_bias_column`, so the tests ran that copy and never the code); at least one test must
/// remain.
pub fn shape_tests(code: &str, specification: &str) -> Result<String, ShapeError> {
    let units = split_units(code);
    let imported: Vec<String> = units
        .iter()
        .filter(|u| u.kind == UnitKind::Import)
        .flat_map(|u| u.imported_names())
        .collect();
    let units: Vec<Unit> = units
        .into_iter()
        .filter(|u| {
            let shadows = u
                .def_name()
                .is_some_and(|n| imported.iter().any(|i| i == n));
            if shadows {
                tracing::debug!(
                    "dropping a definition of {:?}: it would replace the imported code under test",
                    u.def_name()
                );
            }
            !shadows
        })
        .filter(|u| {
            let invented = expected_exceptions(&u.text)
                .into_iter()
                .find(|e| !specification.contains(e.as_str()));
            if let (Some(name), Some(exception)) = (u.def_name(), &invented) {
                tracing::debug!(
                    "dropping {name}: it expects {exception}, which the specification does not name"
                );
            }
            invented.is_none()
        })
        .collect();
    if !units
        .iter()
        .any(|u| u.def_name().is_some_and(|n| n.starts_with("test_")))
    {
        return Err(ShapeError::NoTests);
    }
    Ok(render(&units))
}

/// Exception names in `pytest.raises(Name` / `pytest.raises((A, B)` of a test.
pub(crate) fn expected_exceptions(test: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in test.match_indices("raises(") {
        let args: String = test[at + "raises(".len()..]
            .chars()
            .take_while(|c| *c != ')')
            .collect();
        found.extend(
            args.split(|c: char| c == ',' || c == '(' || c.is_whitespace())
                .map(|w| w.rsplit('.').next().unwrap_or(w).to_string())
                .filter(|w| w.chars().next().is_some_and(char::is_uppercase)),
        );
    }
    found
}

/// `code` without its imports of `module` (dotted) itself: written into that module they are
/// a circular import (a name bound below the import fails with "partially initialized
/// module"), and at best bind again what the module holds.
pub(crate) fn without_self_imports(code: &str, module: &str) -> String {
    let units = split_units(code);
    // Rendered again only when something goes: the answer's own spacing stays otherwise.
    if !units.iter().any(|u| imports_itself(u, module)) {
        return code.to_string();
    }
    let kept: Vec<Unit> = units
        .into_iter()
        .filter(|u| !imports_itself(u, module))
        .collect();
    render(&kept)
}

/// Whether `unit` is an import of `module` (dotted), the module it is written into.
fn imports_itself(unit: &Unit, module: &str) -> bool {
    unit.kind == UnitKind::Import && imports_module(&unit.text, module)
}

fn imports_module(import: &str, module: &str) -> bool {
    let flat = import.split_whitespace().collect::<Vec<_>>();
    match flat.as_slice() {
        ["from", from, "import", ..] => *from == module,
        ["import", rest @ ..] => rest.iter().any(|m| m.trim_end_matches(',') == module),
        _ => false,
    }
}

/// Joins units with conventional spacing: imports together, two blank lines around definitions.
pub(crate) fn render(units: &[Unit]) -> String {
    render_grouped(units, |_| 0)
}

/// As [`render`], with a blank line between two consecutive imports whose `group` differs
/// (PEP 8's standard library / third party / local sections).
pub(crate) fn render_grouped(units: &[Unit], group: impl Fn(&Unit) -> u8) -> String {
    let mut out = String::new();
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            let previous = &units[i - 1];
            let gap = match (&previous.kind, &unit.kind) {
                (UnitKind::Import, UnitKind::Import) if group(previous) == group(unit) => "\n",
                (UnitKind::Import, UnitKind::Import) | (UnitKind::Docstring, _) => "\n\n",
                (_, UnitKind::Def(_)) | (UnitKind::Def(_), _) => "\n\n\n",
                _ => "\n\n",
            };
            out.push_str(gap);
        }
        out.push_str(&unit.text);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next prompt quotes these texts; they are the ones the functions formatted by hand.
    #[test]
    fn shape_errors_keep_their_texts() {
        assert_eq!(
            shape_implementation("x = 1\n", "double", "chain.steps", "")
                .unwrap_err()
                .to_string(),
            "the answer does not define `double` (write the function itself, not its tests)"
        );
        assert_eq!(
            shape_tests("x = 1\n", "").unwrap_err().to_string(),
            "the answer contains no `def test_...` function that checks only what the specification states"
        );
    }

    const BASE: &str = "\"\"\"Stats.\"\"\"\n\nimport math\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n";

    #[test]
    fn replaces_a_definition_in_place() {
        let merged = merge_python(BASE, "def a():\n    return 10\n");
        assert_eq!(merged, BASE.replace("return 1\n", "return 10\n"));
    }

    #[test]
    fn appends_new_definitions_and_hoists_imports() {
        let merged = merge_python(
            BASE,
            "import statistics\nimport math\n\ndef c():\n    return statistics.mean([1])\n",
        );
        assert_eq!(
            merged,
            "\"\"\"Stats.\"\"\"\n\nimport math\nimport statistics\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return statistics.mean([1])\n"
        );
    }

    #[test]
    fn merging_the_same_fragment_twice_is_a_no_op() {
        let fragment = "from x import y\n\n\ndef c():\n    return y\n";
        let once = merge_python(BASE, fragment);
        assert_eq!(merge_python(&once, fragment), once);
    }

    #[test]
    fn items_the_module_already_imports_are_not_imported_again() {
        let tests = "import pytest\nfrom pkg.m import f\n\n\ndef test_f():\n    assert f()\n";
        let next = "import pytest\nfrom pkg.m import (\n    f,\n    g,\n)\nfrom pkg.m import f as f2\nfrom other import f\n\n\ndef test_g():\n    assert g() and f2() and f()\n";
        assert_eq!(
            merge_python(tests, next),
            "import pytest\nfrom pkg.m import f\nfrom pkg.m import g\nfrom pkg.m import f as f2\nfrom other import f\n\n\ndef test_f():\n    assert f()\n\n\ndef test_g():\n    assert g() and f2() and f()\n",
            "only `g` is new from pkg.m; another alias or another module is another binding"
        );
        let once = merge_python(tests, next);
        assert_eq!(merge_python(&once, next), once);
        // A statement with a comment is never rewritten, only dropped when identical.
        let commented = "from pkg.m import f, g  # both\n";
        assert_eq!(
            merge_python(tests, commented),
            "import pytest\nfrom pkg.m import f\nfrom pkg.m import f, g  # both\n\n\ndef test_f():\n    assert f()\n"
        );
    }

    #[test]
    fn an_answer_loses_its_imports_of_the_module_it_is_written_into() {
        let answer = "import math\nfrom pkg.m import TABLE\nimport pkg.m as m\n\nINVERSE = {v: k for k, v in TABLE.items()}\n";
        assert_eq!(
            without_self_imports(answer, "pkg.m"),
            "import math\n\nINVERSE = {v: k for k, v in TABLE.items()}\n"
        );
        let clean = "from pkg.other import TABLE\nX = TABLE\n";
        assert_eq!(without_self_imports(clean, "pkg.m"), clean);
    }

    #[test]
    fn implementation_answers_lose_self_imports_and_tests() {
        let answer = "import math\nfrom chain.steps import double\nfrom chain.other import helper\n\ndef double(x):\n    return 2 * x\n\ndef test_double():\n    assert double(1) == 2\n";
        assert_eq!(
            shape_implementation(answer, "double", "chain.steps", "").unwrap(),
            "import math\nfrom chain.other import helper\n\n\ndef double(x):\n    return 2 * x\n"
        );
        let only_tests =
            "from chain.steps import double\n\ndef test_double():\n    assert double(1) == 2\n";
        let err = shape_implementation(only_tests, "double", "chain.steps", "")
            .unwrap_err()
            .to_string();
        let sibling =
            "from chain import double\n\ndef double_plus_one(x):\n    return double(x) + 1\n";
        assert_eq!(
            shape_implementation(
                sibling,
                "double_plus_one",
                "chain.steps",
                "def double(x):\n    return 2 * x\n"
            )
            .unwrap(),
            "def double_plus_one(x):\n    return double(x) + 1\n",
            "an import of a name the module defines is dropped"
        );
        let copied =
            "def double(x):\n    ...\n\ndef double_plus_one(x):\n    return double(x) + 1\n";
        assert_eq!(
            shape_implementation(
                copied,
                "double_plus_one",
                "chain.steps",
                "def double(x):\n    return 2 * x\n"
            )
            .unwrap(),
            "def double_plus_one(x):\n    return double(x) + 1\n",
            "a copy of a function the module has is dropped"
        );
        let rebound = "UNITS = {'a': 1}  # shortened\nSCALE = 3\n\ndef convert(x):\n    return UNITS[x] * SCALE\n";
        assert_eq!(
            shape_implementation(
                rebound,
                "convert",
                "chain.units",
                "UNITS = {'a': 1, 'b': 2}\n"
            )
            .unwrap(),
            "SCALE = 3\n\n\ndef convert(x):\n    return UNITS[x] * SCALE\n",
            "a new rebinding of a module-level name the module assigns is dropped, a new name kept"
        );
        // A fix may correct a function of the module the fault was localized in, and may
        // leave its own function out then.
        let existing = "def double(x):\n    return [0, 2][x]\n";
        let editable = ["double".to_string()];
        assert_eq!(
            shape_correction(
                copied,
                "double_plus_one",
                &editable,
                "chain.steps",
                existing
            )
            .unwrap(),
            copied.replace("\n\ndef", "\n\n\ndef")
        );
        let only_dependency = "def double(x):\n    return 2 * x\n";
        assert_eq!(
            shape_correction(only_dependency, "double_plus_one", &editable, "m", existing).unwrap(),
            only_dependency
        );
        assert!(shape_correction(only_dependency, "double_plus_one", &[], "m", existing).is_err());
        assert!(err.contains("does not define `double`"), "{err}");
        assert!(shape_tests("def helper():\n    pass\n", "").is_err());
    }

    #[test]
    fn tests_expecting_exceptions_the_specification_never_names_are_dropped() {
        let tests = "import pytest\n\ndef test_ok():\n    assert f(1) == 2\n\ndef test_type():\n    with pytest.raises(TypeError):\n        f('x')\n\ndef test_empty():\n    with pytest.raises(ValueError):\n        f([])\n";
        let shaped = shape_tests(tests, "Raises:\n    ValueError: If empty").unwrap();
        assert!(
            shaped.contains("def test_ok")
                && shaped.contains("def test_empty")
                && !shaped.contains("def test_type"),
            "{shaped}"
        );
    }

    #[test]
    fn a_test_answer_cannot_replace_the_code_it_imports() {
        let tests = "from pkg.m import f, g\n\ndef f(x):\n    return x\n\ndef test_f():\n    assert f(1) == 1\n";
        let shaped = shape_tests(tests, "").unwrap();
        assert!(!shaped.contains("def f("), "{shaped}");
        assert!(shaped.contains("import f, g") && shaped.contains("def test_f"));
    }

    #[test]
    fn empty_file_takes_the_fragment_normalised() {
        assert_eq!(
            merge_python("", "import os\ndef f():\n    pass"),
            "import os\n\n\ndef f():\n    pass\n"
        );
    }
}
