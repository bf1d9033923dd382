//! Deterministic repairs of an answer before anything runs (issue 13's "missing imports:
//! detect and add"), and the checks that make an answer unusable: a 1.5B model forgets an
//! import, guesses a module path, writes `src.` into an import or reaches for numpy, and each
//! of these fails every test of the module at import. What the plan knows (where each function
//! lives, what each node depends on) fixes the first three; the last cannot be fixed, only
//! refused. Plan text enters code only as an escaped literal.

use std::collections::BTreeSet;

use crate::edit::merge_python;
use crate::rpg::{Node, NodeKind, NodePos};

use super::ask::{AskError, unusable};
use super::{Context, prompt};

/// The stub a failed function leaves (see [`crate::symbols::stub`]); `None` for methods and
/// classes, whose place is inside a class.
pub(super) fn stub(node: &Node, reason: &str) -> Option<String> {
    if node.kind != NodeKind::Function {
        return None;
    }
    let doc = node.docstring.as_deref().unwrap_or("");
    crate::symbols::stub::function_stub(&node.name, doc, reason)
}

/// The function with the plan's docstring as its own when the answer brings none: the
/// prompt no longer asks the model to re-type it (about half of what it wrote was the
/// docstring again). Plan text enters only as an escaped literal.
pub(super) fn with_plan_docstring(node: &Node, code: String) -> String {
    let doc = node.docstring.as_deref().unwrap_or("").trim();
    if node.kind != NodeKind::Function || doc.is_empty() {
        return code;
    }
    let literal = crate::python::body_docstring_literal(doc, "    ");
    crate::symbols::edit::insert_docstring(&code, &node.name, &literal).unwrap_or(code)
}

/// Project imports written as `from src.pkg.mod import f` without the `src.`: in a src
/// layout the directory is not part of the import path, and models often write it (the
/// one-shot baseline imported its own module that way, which is circular). `import src.x`
/// stays: the code names `src.x.f`, and rewriting the import would break that.
pub(super) fn without_src_prefix(code: &str) -> String {
    let units = crate::symbols::split_units(code);
    let fixed: Vec<crate::symbols::Unit> = units
        .into_iter()
        .map(|mut unit| {
            if unit.kind == crate::symbols::UnitKind::Import {
                let text = unit.text.trim_start();
                if let Some(rest) = text.strip_prefix("from src.") {
                    unit.text = format!("from {rest}");
                }
            }
            unit
        })
        .collect();
    crate::edit::merge::render(&fixed)
}

/// Names a piece of Python binds at its top level: imports and definitions.
pub(super) fn bound_names(code: &str) -> BTreeSet<String> {
    crate::symbols::split_units(code)
        .iter()
        .flat_map(|u| {
            u.imported_names()
                .into_iter()
                .chain(u.def_name().map(str::to_string))
        })
        .collect()
}

/// Adds the imports the code needs and forgets, before anything runs (the seed's "missing
/// imports: detect and add"): a dependency in another module it calls, a `typing` name it
/// annotates with, a standard-library module it reaches into (`math.sqrt`). A 1.5B model
/// forgets these often, and each one fails every test of the module at import.
pub(super) fn with_missing_imports(
    ctx: &Context,
    position: NodePos,
    code: &str,
    current: &str,
) -> String {
    let used = crate::symbols::identifiers(code);
    let bound: BTreeSet<String> = bound_names(code)
        .into_iter()
        .chain(bound_names(current))
        .collect();
    let mut imports = dependency_imports(ctx, position, &bound_names(code), &used);
    imports.extend(standard_imports(code, current));
    let called = crate::symbols::units::called_names(code);
    imports.extend(plan_function_imports(ctx, position, &bound, &called));
    let mut seen = BTreeSet::new();
    imports.retain(|line| seen.insert(line.clone()));
    if imports.is_empty() {
        return code.to_string();
    }
    merge_python(&imports.join("\n"), code)
}

/// Imports of plan functions from the wrong project module, pointed at the one module the
/// plan defines them in: with `is_palindrome` planned only in `textops.analysis`,
/// `from numops.text_metrics import is_palindrome, vowel_ratio` (where `vowel_ratio` is
/// planned) becomes `from numops.text_metrics import vowel_ratio` and
/// `from textops.analysis import is_palindrome`. A small model guesses module paths; the plan
/// knows them. Only single-line top-level `from` imports of the project's own packages
/// (`packages`) change; a name without one `home` module is left as written.
pub(super) fn repoint_imports(
    code: &str,
    home: &dyn Fn(&str) -> Option<String>,
    packages: &BTreeSet<String>,
) -> String {
    let repoint = |line: &str| -> Option<Vec<String>> {
        let rest = line.strip_prefix("from ")?;
        let (module, names) = rest.split_once(" import ")?;
        let top = module.split('.').next()?;
        if !packages.contains(top) || names.contains(['(', ')', '\\', '#', '*']) {
            return None;
        }
        let mut stay = Vec::new();
        let mut moved = Vec::new();
        for entry in names.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let name = entry.split(" as ").next().unwrap_or(entry).trim();
            match home(name) {
                Some(home) if home != module => moved.push(format!("from {home} import {entry}")),
                _ => stay.push(entry),
            }
        }
        if moved.is_empty() {
            return None;
        }
        if !stay.is_empty() {
            moved.insert(0, format!("from {module} import {}", stay.join(", ")));
        }
        Some(moved)
    };
    let mut out: Vec<String> = Vec::new();
    for line in code.lines() {
        match repoint(line.trim_end()) {
            Some(lines) => out.extend(lines),
            None => out.push(line.to_string()),
        }
    }
    let mut text = out.join("\n");
    if code.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The `typing` names and standard-library modules `code` uses that neither it nor the
/// module it goes into (`current`) binds, as import lines.
fn standard_imports(code: &str, current: &str) -> Vec<String> {
    let used = crate::symbols::identifiers(code);
    let bound: BTreeSet<String> = bound_names(code)
        .into_iter()
        .chain(bound_names(current))
        .collect();
    let mut imports = Vec::new();
    let typing: Vec<&str> = crate::python::TYPING_NAMES
        .iter()
        .copied()
        .filter(|n| used.contains(*n) && !bound.contains(*n))
        .collect();
    if !typing.is_empty() {
        imports.push(format!("from typing import {}", typing.join(", ")));
    }
    for module in crate::symbols::attribute_bases(code) {
        if crate::python::is_stdlib(&module) && !bound.contains(&module) {
            imports.push(format!("import {module}"));
        }
    }
    imports
}

/// `from m import f` for a plan function `f` the code calls without importing that is not a
/// declared dependency (the plan missed the edge, or the model used a helper it knew of):
/// only from another module that already defines `f`, and only when `f`'s node does not
/// depend on this one (the import would be circular). Builtins are never shadowed.
fn plan_function_imports(
    ctx: &Context,
    position: NodePos,
    bound: &BTreeSet<String>,
    used: &BTreeSet<String>,
) -> Vec<String> {
    let own = ctx.rpg.node(position).file_path.as_deref();
    let mut imports = Vec::new();
    let unbound = used
        .iter()
        .filter(|n| !bound.contains(*n) && !crate::python::BUILTINS.contains(&n.as_str()));
    for name in unbound {
        let Some(nodes) = ctx.functions.get(name) else {
            continue;
        };
        let source = nodes.iter().find_map(|&other| {
            let file = ctx.rpg.node(other).file_path.as_deref()?;
            let defined = ctx
                .workspace
                .read(file)
                .ok()
                .flatten()
                .is_some_and(|text| crate::symbols::stub::defines(&text, name));
            let usable = Some(file) != own
                && file.ends_with(".py")
                && defined
                && !ctx
                    .rpg
                    .graph()
                    .transitive_dependencies_of(other)
                    .contains(&position);
            usable.then(|| prompt::import_path(file))
        });
        if let Some(module) = source {
            imports.push(format!("from {module} import {name}"));
        }
    }
    imports
}

/// `from <module> import <name>` for each dependency in another module that the code uses but
/// does not import: the model often calls a dependency it was shown and forgets the import.
fn dependency_imports(
    ctx: &Context,
    position: NodePos,
    bound: &BTreeSet<String>,
    used: &BTreeSet<String>,
) -> Vec<String> {
    let own_file = ctx.rpg.node(position).file_path.as_deref();
    let dependencies = ctx
        .rpg
        .graph()
        .dependencies_of(position)
        .into_iter()
        .map(|p| ctx.rpg.node(p))
        .filter(|dep| {
            dep.is_leaf() && dep.file_path.is_some() && dep.file_path.as_deref() != own_file
        });
    plan_imports(dependencies, bound, used)
}

/// `from <module> import <name>` for each of the plan's `nodes` whose name `used` holds and
/// `bound` does not: the import a plan function needs where code calls it and forgot it.
pub(super) fn plan_imports<'a>(
    nodes: impl IntoIterator<Item = &'a Node>,
    bound: &BTreeSet<String>,
    used: &BTreeSet<String>,
) -> Vec<String> {
    nodes
        .into_iter()
        .filter(|n| used.contains(&n.name) && !bound.contains(&n.name))
        .filter_map(|n| {
            let module = prompt::import_path(n.file_path.as_deref()?);
            Some(format!("from {module} import {}", n.name))
        })
        .collect()
}

/// The top-level modules `code` imports anywhere (a function body's `import numpy` too)
/// that are neither the standard library, nor one of the project's `packages`, nor in
/// `allowed`: they are not installed in the sandbox (the system prompt asks for the
/// standard library only), so code that needs them cannot run.
pub(super) fn foreign_imports(
    code: &str,
    packages: &BTreeSet<String>,
    allowed: &[&str],
) -> Vec<String> {
    let mut foreign: Vec<String> = Vec::new();
    for statement in crate::symbols::outline::import_statements(code) {
        let unit = crate::symbols::Unit {
            kind: crate::symbols::UnitKind::Import,
            text: statement,
        };
        let modules = unit.imported_modules();
        for module in modules {
            let top = module.split('.').next().unwrap_or("");
            let known = top.is_empty() // a relative import: the project's own
                || crate::python::is_stdlib(top)
                || packages.contains(top)
                || allowed.contains(&top);
            if !known && !foreign.iter().any(|f| f == top) {
                foreign.push(top.to_string());
            }
        }
    }
    foreign
}

/// The answer refused when it imports what the sandbox does not have.
pub(super) fn refuse_foreign(
    code: String,
    packages: &BTreeSet<String>,
    allowed: &[&str],
) -> Result<String, AskError> {
    match foreign_imports(&code, packages, allowed).as_slice() {
        [] => Ok(code),
        foreign => Err(unusable(format!(
            "it imports {}, which is neither the standard library nor this project; only those are installed",
            foreign.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, name: &str, signature: &str, docstring: &str) -> Node {
        serde_json::from_value(serde_json::json!({
            "id": "n", "name": name, "type": kind, "node_type": "leaf",
            "file_path": "src/m.py", "signature": signature, "docstring": docstring,
        }))
        .unwrap()
    }

    #[test]
    fn called_names_are_plain_calls_only() {
        let code = "def f(x):\n    y = percentage(x, 2) + obj.mean(x)\n    return helper (y)  # other(z)\n";
        let called: Vec<String> = crate::symbols::units::called_names(code)
            .into_iter()
            .collect();
        assert_eq!(called, ["helper", "percentage"]);
    }

    #[test]
    fn only_the_standard_library_the_project_and_what_is_allowed_may_be_imported() {
        let packages: BTreeSet<String> = ["ml_lib".to_string()].into();
        let code = "import math, numpy as np\nfrom ml_lib.data import load\nfrom . import x\n\
                    from pandas.core import (\n    frame,\n)\nimport pytest\nfrom __future__ import annotations\n\n\ndef f():\n    import scipy\n";
        assert_eq!(
            foreign_imports(code, &packages, &[]),
            ["numpy", "pandas", "pytest", "scipy"]
        );
        assert_eq!(
            foreign_imports(code, &packages, &["pytest"]),
            ["numpy", "pandas", "scipy"]
        );
        assert!(refuse_foreign("import os\n".into(), &packages, &[]).is_ok());
    }

    #[test]
    fn an_import_of_a_plan_function_from_the_wrong_module_is_pointed_at_the_plans() {
        let plan: std::collections::BTreeMap<String, Vec<String>> = [
            ("is_palindrome", vec!["textops.analysis"]),
            ("vowel_ratio", vec!["numops.text_metrics"]),
            ("twice", vec!["a.x", "a.y"]),
        ]
        .into_iter()
        .map(|(n, m)| (n.to_string(), m.into_iter().map(String::from).collect()))
        .collect();
        let packages: BTreeSet<String> = ["numops", "textops", "a"].map(String::from).into();
        let home = |name: &str| match plan.get(name).map(Vec::as_slice) {
            Some([only]) => Some(only.clone()),
            _ => None,
        };
        let code = "from numops.text_metrics import is_palindrome as pal, vowel_ratio\nfrom textops.analysis import is_palindrome\nfrom os.path import is_palindrome\nfrom a.z import twice\n\ndef f():\n    from numops.basic import is_palindrome\n    return pal\n";
        assert_eq!(
            repoint_imports(code, &home, &packages),
            "from numops.text_metrics import vowel_ratio\nfrom textops.analysis import is_palindrome as pal\nfrom textops.analysis import is_palindrome\nfrom os.path import is_palindrome\nfrom a.z import twice\n\ndef f():\n    from numops.basic import is_palindrome\n    return pal\n"
        );
    }

    #[test]
    fn the_src_directory_is_not_part_of_an_import() {
        let code = "from src.numops.basic import *\nimport src.textops.case\nimport os\n\n\ndef f():\n    return 1\n";
        let fixed = without_src_prefix(code);
        assert!(fixed.contains("from numops.basic import *\n"), "{fixed}");
        assert!(fixed.contains("import src.textops.case\n"), "{fixed}");
        assert!(
            fixed.contains("import os\n") && fixed.contains("def f():"),
            "{fixed}"
        );
    }

    #[test]
    fn no_stub_for_methods_or_classes() {
        assert!(stub(&node("method", "f", "def f(self)", "d"), "r").is_none());
        assert!(stub(&node("class", "C", "class C", "d"), "r").is_none());
        assert!(stub(&node("function", "f", "def f()", "d"), "r").is_some());
    }

    #[test]
    fn forgotten_typing_names_and_standard_modules_are_imported() {
        let code =
            "def f(x: Optional[List[int]]) -> float:\n    return math.sqrt(len(x)) + self_made.y\n";
        assert_eq!(
            standard_imports(code, ""),
            ["from typing import List, Optional", "import math"]
        );
        // What the module or the answer already binds is left alone.
        let current = "from typing import Optional, List\nimport math\n";
        assert!(standard_imports(code, current).is_empty());
        let answer =
            "import math\nfrom typing import *\ndef f(x: Optional[int]):\n    return math.pi\n";
        assert_eq!(
            standard_imports(answer, ""),
            ["from typing import Optional"]
        );
    }
}
