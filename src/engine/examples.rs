//! Tests taken from the plan itself: a node's `examples` (`>>> call` then the expected value)
//! become one deterministic test, `test_<name>_examples_from_spec`.
//!
//! Model-written tests can be wrong; the examples are the plan's ground truth. When the
//! examples pass, the model declines to change the code, and only model-written tests fail,
//! the engine treats those tests as the error (see `node.rs`).

use crate::rpg::Node;

/// The name of the examples test of a node.
pub fn test_name(node: &Node) -> String {
    format!("test_{}_examples_from_spec", node.name)
}

/// The examples test for `node` importing from `module`, or `None` when it has no usable
/// example (an example whose output is not a plain value, such as a traceback, is skipped).
pub fn examples_test(node: &Node, module: &str) -> Option<String> {
    let mut asserts = Vec::new();
    for example in &node.examples {
        let mut call: Option<String> = None;
        let mut expected: Vec<&str> = Vec::new();
        for line in example.lines().chain(std::iter::once(">>> ")) {
            if let Some(next) = line.strip_prefix(">>> ") {
                if let Some(call) = call.take() {
                    let value = expected.join("\n");
                    if !value.trim().is_empty() && !value.starts_with("Traceback") && !value.contains("...") {
                        asserts.push(format!("    assert {call} == {}", value.trim()));
                    }
                }
                expected.clear();
                let next = next.trim();
                call = (!next.is_empty()).then(|| next.to_string());
            } else {
                expected.push(line);
            }
        }
    }
    if asserts.is_empty() {
        return None;
    }
    Some(format!(
        "from {module} import {name}\n\n\ndef {test}():\n{body}\n",
        name = node.name,
        test = test_name(node),
        body = asserts.join("\n")
    ))
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
        let test = examples_test(&node(&[">>> describe_value(3)\n'value=7'", ">>> describe_value(0)\n'value=1'"]), "chain.steps").unwrap();
        assert_eq!(
            test,
            "from chain.steps import describe_value\n\n\ndef test_describe_value_examples_from_spec():\n    assert describe_value(3) == 'value=7'\n    assert describe_value(0) == 'value=1'\n"
        );
    }

    #[test]
    fn unusable_examples_give_no_test() {
        assert_eq!(examples_test(&node(&[]), "m"), None);
        assert_eq!(examples_test(&node(&[">>> f([])\nTraceback (most recent call last):\nValueError"]), "m"), None);
    }
}
