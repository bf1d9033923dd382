//! Tests taken from the plan itself: a node's `examples` (`>>> call` then the expected value)
//! become one deterministic test, `test_<name>_examples_from_spec`; without examples, a node
//! the model wrote no usable test for gets `test_<name>_is_defined`.
//!
//! Model-written tests can be wrong; the examples are the plan's ground truth. When the
//! examples pass, the model declines to change the code, and only model-written tests fail,
//! the engine treats those tests as the error (see `node.rs`).

use crate::rpg::{Node, NodeKind};

/// The name of the examples test of a node.
pub(crate) fn test_name(node: &Node) -> String {
    format!("test_{}_examples_from_spec", node.name)
}

/// The test the engine writes when the plan gives no usable example and the model no usable
/// test: the function imports from `module` and is callable. It judges little, but a module
/// that does not import, or a function left undefined, fails it. `None` for methods and
/// classes, which are not imported by their own name.
pub(crate) fn defined_test(node: &Node, module: &str) -> Option<String> {
    (node.kind == NodeKind::Function).then(|| {
        format!(
            "from {module} import {name}\n\n\ndef test_{name}_is_defined():\n    assert callable({name})\n",
            name = node.name
        )
    })
}

/// The test a draft must pass before it is written ([`super::node`]): `module` still imports
/// with it, and a function is there and callable ([`defined_test`]). A module that raises on
/// import fails every test file that imports anything from it, so a draft that breaks its
/// module costs far more than the function it adds.
pub(crate) fn imports_test(node: &Node, module: &str) -> String {
    defined_test(node, module).unwrap_or_else(|| {
        format!(
            "import importlib\n\n\ndef test_{name}_module_imports():\n    importlib.import_module({module:?})\n",
            name = node.name
        )
    })
}

/// The examples test for `node` importing from `module`, or `None` when it has no usable
/// example. Checks follow doctest's rule (the shown output is the value's `repr`, or the text a
/// `print(...)` wrote); statements without output (assignments) are kept as statements. An
/// example with a traceback or `...` continuation lines is left out whole.
pub(crate) fn examples_test(node: &Node, module: &str) -> Option<String> {
    let mut body = Vec::new();
    for example in &node.examples {
        if let Some(lines) = example_lines(example) {
            body.extend(lines);
        }
    }
    if !body.iter().any(|l| l.trim_start().starts_with("assert ")) {
        return None;
    }
    Some(format!(
        "from {module} import {name}\n\n\ndef {test}():\n{body}\n",
        name = node.name,
        test = test_name(node),
        body = body.join("\n")
    ))
}

fn example_lines(example: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut steps: Vec<(String, Vec<&str>)> = Vec::new();
    for line in example.lines() {
        if let Some(code) = line.strip_prefix(">>> ") {
            steps.push((code.trim().to_string(), Vec::new()));
        } else if line.starts_with("... ") || line.trim() == "..." {
            return None;
        } else if let Some((_, output)) = steps.last_mut() {
            output.push(line);
        }
    }
    for (code, output) in steps {
        let shown = output.join("\n");
        if shown.trim().is_empty() {
            out.push(format!("    {code}"));
        } else if shown.starts_with("Traceback") {
            return None;
        } else if let Some(inner) = code
            .strip_prefix("print(")
            .and_then(|c| c.strip_suffix(')'))
        {
            out.push(format!(
                "    assert str({inner}) == {}",
                python_string(&shown)
            ));
        } else {
            out.push(format!(
                "    assert repr(({code})) == {}",
                python_string(shown.trim())
            ));
        }
    }
    Some(out)
}

/// A Python string literal holding `text` exactly.
fn python_string(text: &str) -> String {
    let mut lit = String::from("\"");
    for c in text.chars() {
        match c {
            '\\' => lit.push_str("\\\\"),
            '"' => lit.push_str("\\\""),
            '\n' => lit.push_str("\\n"),
            '\t' => lit.push_str("\\t"),
            c => lit.push(c),
        }
    }
    lit.push('"');
    lit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(examples: &[&str]) -> Node {
        serde_json::from_value(serde_json::json!({
            "id": "n", "name": "describe_value", "type": "function", "node_type": "leaf",
            "examples": examples
        }))
        .unwrap()
    }

    #[test]
    fn examples_become_assertions() {
        let test = examples_test(
            &node(&[
                ">>> describe_value(3)\n'value=7'",
                ">>> describe_value(0)\n'value=1'",
            ]),
            "chain.steps",
        )
        .unwrap();
        assert_eq!(
            test,
            "from chain.steps import describe_value\n\n\ndef test_describe_value_examples_from_spec():\n    assert repr((describe_value(3))) == \"'value=7'\"\n    assert repr((describe_value(0))) == \"'value=1'\"\n"
        );
    }

    #[test]
    fn statements_and_printed_output_follow_doctest() {
        let test = examples_test(&node(&[">>> x = describe_value(1)\n>>> print(x)\nvalue=3\nsecond \"line\"\n>>> len(x), x[:2]\n(7, 'va')"]), "m").unwrap();
        assert_eq!(
            test,
            "from m import describe_value\n\n\ndef test_describe_value_examples_from_spec():\n    x = describe_value(1)\n    assert str(x) == \"value=3\\nsecond \\\"line\\\"\"\n    assert repr((len(x), x[:2])) == \"(7, 'va')\"\n"
        );
    }

    #[test]
    fn unusable_examples_give_no_test() {
        assert_eq!(examples_test(&node(&[]), "m"), None);
        assert_eq!(
            examples_test(
                &node(&[">>> f([])\nTraceback (most recent call last):\nValueError"]),
                "m"
            ),
            None
        );
    }
}
