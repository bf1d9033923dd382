//! Deterministic repairs of a bug small models write often: a local variable named like the
//! module-level function it calls.
//!
//! ```python
//! def full_report(numbers, text):
//!     text_report = text_report(text)      # UnboundLocalError, always
//!     return f"{text_report}"
//! ```
//!
//! Assigning a name anywhere in a function makes it local in the whole function (Python's
//! scoping rule), so the call before the assignment can never reach the module's function: the
//! code raises `UnboundLocalError` on every run. The repair keeps every call as a call of the
//! module's function and renames the variable (`text_report_value`). It applies only when the
//! name is bound at module level (a definition or an import), assigned in the function, and
//! first used there as a call; anything else is left as written.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::outline::parse;

/// `code` with, in the top-level function `function`, every local variable that shadows a
/// module-level name it calls first (`globals`) renamed; the same text when there is none.
pub(crate) fn unshadow_called_globals(
    code: &str,
    function: &str,
    globals: &BTreeSet<String>,
) -> String {
    let Ok(tree) = parse(code) else {
        return code.to_string();
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let Some(body) = root
        .children(&mut cursor)
        .map(|n| match n.kind() {
            "decorated_definition" => n.child_by_field_name("definition").unwrap_or(n),
            _ => n,
        })
        .find(|n| {
            n.kind() == "function_definition"
                && n.child_by_field_name("name")
                    .is_some_and(|name| text(name, code) == function)
        })
        .and_then(|f| f.child_by_field_name("body"))
    else {
        return code.to_string();
    };
    let mut identifiers = Vec::new();
    collect_identifiers(body, &mut identifiers);
    let mut renames: Vec<(usize, usize, String)> = Vec::new();
    for name in globals {
        let uses: Vec<Node> = identifiers
            .iter()
            .copied()
            .filter(|n| text(*n, code) == name)
            .collect();
        // Python evaluates an assignment's right side first: a call there comes first too.
        let Some(assigned) = uses.iter().find_map(|n| assignment_end(*n)) else {
            continue;
        };
        if !uses
            .iter()
            .any(|n| is_called(*n) && n.start_byte() < assigned)
        {
            continue;
        }
        let fresh = fresh_name(name, code);
        renames.extend(
            uses.iter()
                .filter(|n| !is_called(**n))
                .map(|n| (n.start_byte(), n.end_byte(), fresh.clone())),
        );
    }
    if renames.is_empty() {
        return code.to_string();
    }
    renames.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut out = code.to_string();
    for (start, end, name) in renames {
        out.replace_range(start..end, &name);
    }
    out
}

fn text<'a>(node: Node, code: &'a str) -> &'a str {
    code.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// Identifiers that name variables, in source order: not attribute names (`x.name`), not
/// keyword argument names, not the names of nested definitions or their parameters.
fn collect_identifiers<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    if node.kind() == "identifier" {
        if is_variable(node) {
            out.push(node);
        }
        return;
    }
    // A nested function or class has its own scope: its names are not this function's.
    if matches!(
        node.kind(),
        "function_definition" | "class_definition" | "lambda"
    ) {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_identifiers(child, out);
    }
}

fn is_field(node: Node, field: &str) -> bool {
    node.parent()
        .and_then(|p| p.child_by_field_name(field))
        .is_some_and(|c| c.id() == node.id())
}

fn is_variable(node: Node) -> bool {
    match node.parent().map(|p| p.kind()) {
        Some("attribute") => !is_field(node, "attribute"),
        Some("keyword_argument") => !is_field(node, "name"),
        _ => true,
    }
}

fn is_called(node: Node) -> bool {
    node.parent().is_some_and(|p| p.kind() == "call") && is_field(node, "function")
}

/// For a target of an assignment, an augmented assignment, a `for` or a `with ... as` (a
/// comprehension's targets are its own, not the function's): where the value it receives is
/// computed (the end of the right side), so uses before that run before the binding.
fn assignment_end(node: Node) -> Option<usize> {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "pattern_list" | "tuple_pattern" | "list_pattern" => child = parent,
            "assignment" | "augmented_assignment" | "for_statement" if is_field(child, "left") => {
                let right = parent.child_by_field_name("right").unwrap_or(child);
                return Some(right.end_byte());
            }
            "as_pattern_target" => return Some(node.end_byte()),
            _ => return None,
        }
    }
    None
}

/// `NAME_value`, or `NAME_value2`… when the code already uses that.
fn fresh_name(name: &str, code: &str) -> String {
    let used = super::units::identifiers(code);
    (1..)
        .map(|i| match i {
            1 => format!("{name}_value"),
            _ => format!("{name}_value{i}"),
        })
        .find(|n| !used.contains(n))
        .unwrap_or_else(|| format!("{name}_value"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globals(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_variable_named_like_the_function_it_calls_first_is_renamed() {
        let code = "from m import text_report\n\n\ndef full(t, x):\n    text_report = text_report(t)\n    lines = [text_report, f\"{text_report}!\"]\n    return obj.text_report + g(text_report=x) + lines[0]\n";
        assert_eq!(
            unshadow_called_globals(code, "full", &globals(&["text_report", "g"])),
            "from m import text_report\n\n\ndef full(t, x):\n    text_report_value = text_report(t)\n    lines = [text_report_value, f\"{text_report_value}!\"]\n    return obj.text_report + g(text_report=x) + lines[0]\n"
        );
    }

    #[test]
    fn code_python_runs_as_written_is_left_alone() {
        // Assigned before any call: a local callable, as the author meant.
        let local_first = "def f(xs):\n    key = make_key(xs)\n    return key\n";
        assert_eq!(
            unshadow_called_globals(local_first, "f", &globals(&["key", "make_key"])),
            local_first
        );
        let assigned_then_called = "def f(xs):\n    g = lambda v: v\n    return g(xs)\n";
        assert_eq!(
            unshadow_called_globals(assigned_then_called, "f", &globals(&["g"])),
            assigned_then_called
        );
        // Called but never assigned: the module's function, fine.
        let called = "def f(xs):\n    return g(xs) + g(xs)\n";
        assert_eq!(
            unshadow_called_globals(called, "f", &globals(&["g"])),
            called
        );
        // Another function of the module is not touched.
        let other = "def h(x):\n    g = g(x)\n    return g\n";
        assert_eq!(unshadow_called_globals(other, "f", &globals(&["g"])), other);
        // A name the module does not bind is not this repair's business.
        let unknown = "def f(x):\n    g = g(x)\n    return g\n";
        assert_eq!(
            unshadow_called_globals(unknown, "f", &globals(&[])),
            unknown
        );
    }

    #[test]
    fn loop_targets_count_as_assignments_and_taken_names_are_avoided() {
        let code = "def f(rows):\n    out = [row(r) for r in rows]\n    for row in rows:\n        out.append(row)\n    row_value = 1\n    return out\n";
        assert_eq!(
            unshadow_called_globals(code, "f", &globals(&["row"])),
            "def f(rows):\n    out = [row(r) for r in rows]\n    for row_value2 in rows:\n        out.append(row_value2)\n    row_value = 1\n    return out\n"
        );
    }
}
