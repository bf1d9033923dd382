//! The stand-in for a function the engine could not generate: a top-level `def` with the
//! plan's docstring that raises `NotImplementedError` saying why.
//!
//! A module missing one function breaks every module and test that imports anything from it
//! in one statement; a stub keeps the rest importable and fails only where it is called. It
//! takes any arguments rather than the plan's signature: that may name types the module never
//! imports, and a stub that fails to import would break the module it exists to keep
//! importable. Plan and failure text enter only as escaped literals.

/// The stub of function `name`, or `None` when `name` is not an identifier that can be
/// defined (a keyword, or plan text that is not a name at all).
pub(crate) fn function_stub(name: &str, docstring: &str, reason: &str) -> Option<String> {
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return None;
    }
    let doc = docstring.trim();
    let first = reason.lines().next().unwrap_or("");
    let message = format!("zerorepo could not generate {name}: {first}");
    let mut text = format!("def {name}(*args, **kwargs):\n");
    if !doc.is_empty() {
        text.push_str(&format!("    {}\n", crate::python::docstring_literal(doc)));
    }
    text.push_str(&format!(
        "    raise NotImplementedError({})\n",
        crate::python::docstring_literal(&message)
    ));
    // A keyword as the name would not parse: no stub rather than a module that does not.
    super::check::tree_sitter_errors(&text)
        .is_ok_and(|errors| errors.is_empty())
        .then_some(text)
}

/// Whether `definition` (the source of one `def`) is a stub [`function_stub`] wrote.
pub(crate) fn is_stub(definition: &str) -> bool {
    definition.contains("(*args, **kwargs):")
        && definition.contains("raise NotImplementedError(")
        && definition.contains("zerorepo could not generate ")
}

/// Whether `module` defines function `name` at its top level with no body: nothing but a
/// docstring, `pass`, `...` and `raise NotImplementedError` (a stub, this module's or the
/// model's). Such a function returns `None` (or refuses) whatever it is asked, so it is never
/// an implementation, whatever tests it happens to pass. `false` when `name` is not defined
/// at the top level or the module does not parse (other checks judge those).
pub(crate) fn is_bodiless(module: &str, name: &str) -> bool {
    let Ok(tree) = super::outline::parse(module) else {
        return false;
    };
    let Some(body) =
        top_level_function(&tree, module, name).and_then(|f| f.child_by_field_name("body"))
    else {
        return false;
    };
    let mut cursor = body.walk();
    let statements: Vec<_> = body.named_children(&mut cursor).collect();
    statements.iter().all(|statement| {
        let text = module
            .get(statement.start_byte()..statement.end_byte())
            .unwrap_or("");
        match statement.kind() {
            "pass_statement" | "comment" => true,
            "expression_statement" => {
                let mut inner = statement.walk();
                statement
                    .named_children(&mut inner)
                    .all(|e| matches!(e.kind(), "string" | "ellipsis" | "concatenated_string"))
            }
            "raise_statement" => text
                .trim_start_matches("raise")
                .trim_start()
                .starts_with("NotImplementedError"),
            _ => false,
        }
    })
}

/// The last top-level `def name` of `module` (a decorated one too), `None` when there is
/// none or the module does not parse.
fn top_level_function<'t>(
    tree: &'t tree_sitter::Tree,
    module: &str,
    name: &str,
) -> Option<tree_sitter::Node<'t>> {
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .map(|node| match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition").unwrap_or(node),
            _ => node,
        })
        .filter(|node| node.kind() == "function_definition")
        .filter(|node| {
            node.child_by_field_name("name")
                .and_then(|n| module.get(n.start_byte()..n.end_byte()))
                == Some(name)
        })
        .last()
}

/// The 1-based first and last line of the body of the top-level function `name`.
pub(crate) fn body_lines(module: &str, name: &str) -> Option<(usize, usize)> {
    let tree = super::outline::parse(module).ok()?;
    let body = top_level_function(&tree, module, name)?.child_by_field_name("body")?;
    Some((body.start_position().row + 1, body.end_position().row + 1))
}

/// Whether `module` defines `name` at its top level.
pub fn defines(module: &str, name: &str) -> bool {
    super::split_units(module)
        .iter()
        .any(|u| u.def_name() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_takes_any_arguments_and_escapes_plan_and_failure_text() {
        let text = function_stub(
            "f",
            "Doc with \"\"\" quotes.",
            "tests failed: \"\"\"; import os\nsecond line",
        )
        .unwrap();
        assert!(text.starts_with("def f(*args, **kwargs):\n"), "{text}");
        assert!(text.contains("raise NotImplementedError("), "{text}");
        assert!(is_stub(&text));
        assert!(!is_stub(
            "def f(*args, **kwargs):\n    raise NotImplementedError\n"
        ));
        assert!(
            !text.contains("second line"),
            "only the reason's first line: {text}"
        );
        assert!(
            crate::symbols::check::tree_sitter_errors(&text)
                .unwrap()
                .is_empty()
        );
        // One statement after the docstring: the injected `import os` stays inside a string.
        let body: Vec<&str> = text
            .lines()
            .skip(1)
            .filter(|l| l.starts_with("    "))
            .collect();
        assert_eq!(body.len(), 2, "{text}");
        assert!(defines(&text, "f") && !defines(&text, "g"));
    }

    #[test]
    fn no_stub_for_names_that_are_not_identifiers() {
        assert!(function_stub("f(x): pass\nimport os\ndef g", "d", "r").is_none());
        assert!(function_stub("class", "d", "r").is_none());
    }

    #[test]
    fn a_function_with_only_a_docstring_pass_ellipsis_or_not_implemented_has_no_body() {
        for body in [
            "    \"\"\"Doc.\"\"\"\n",
            "    \"\"\"Doc.\"\"\"\n    pass\n",
            "    ...\n",
            "    # TODO\n    pass\n",
            "    \"\"\"Doc.\"\"\"\n    raise NotImplementedError\n",
            "    raise NotImplementedError('later')\n",
        ] {
            let module = format!("import os\n\n\ndef f(x):\n{body}\n\ndef g():\n    return 1\n");
            assert!(is_bodiless(&module, "f"), "{body}");
            assert!(!is_bodiless(&module, "g"));
        }
        let stub = function_stub("f", "Doc.", "why").unwrap();
        assert!(is_bodiless(&stub, "f"));
    }

    #[test]
    fn a_function_that_does_anything_has_a_body() {
        for body in [
            "    \"\"\"Doc.\"\"\"\n    return None\n",
            "    x = 1\n",
            "    raise ValueError('bad')\n",
            "    if x:\n        pass\n",
        ] {
            let module = format!("def f(x):\n{body}");
            assert!(!is_bodiless(&module, "f"), "{body}");
        }
        assert!(!is_bodiless("def f(:\n", "f"));
        assert!(!is_bodiless("x = 1\n", "f"));
        assert!(is_bodiless("@cache\ndef f():\n    ...\n", "f"));
    }
}
