//! Deriving a scripted-provider script from a fixture's reference solution.
//!
//! For each leaf node: the `test` answer is the reference tests assigned to it (a test named
//! `test_<name>` or `test_<name>_<case>` belongs to the leaf with the longest matching name),
//! and the `impl` answer is the node's reference function; each comes with exactly the import
//! lines it uses, so an answer never imports a module that is not generated yet. A data leaf
//! without a `value` gets only an `impl` answer, its reference assignment (a data leaf is
//! checked by a test the engine writes); one with a value gets none (the model is not asked).
//!
//! For each subgraph flow ([`crate::rpg::flow`]), the integration test's answer (node
//! `integration:SUBGRAPH`) is the reference tests of its exit functions, renamed
//! `test_<subgraph>_flow_<case>`: an exit function's test calls the functions it depends on
//! through it, which is the data flowing through the subgraph.

use std::collections::BTreeSet;
use std::path::Path;

use super::Role;
use super::scripted::ScriptEntry;
use crate::rpg::ValidRpg;
use crate::symbols::{Unit, UnitKind, identifiers, split_units};

#[derive(Debug, thiserror::Error)]
pub(crate) enum DeriveError {
    #[error("cannot read reference file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("node `{node}`: no top-level `def {name}` in reference file {path}")]
    MissingDef {
        node: crate::rpg::NodeId,
        name: String,
        path: String,
    },
    #[error("node `{node}`: no top-level assignment of `{name}` in reference file {path}")]
    MissingAssignment {
        node: crate::rpg::NodeId,
        name: String,
        path: String,
    },
    #[error("node `{node}`: no reference test named test_{name}[_...] in {path}")]
    MissingTests {
        node: crate::rpg::NodeId,
        name: String,
        path: String,
    },
}

/// Builds the script (one entry per leaf and role) from `reference_dir`.
pub(crate) fn derive_script(
    rpg: &ValidRpg,
    reference_dir: &Path,
) -> Result<Vec<ScriptEntry>, DeriveError> {
    let leaf_names: Vec<&str> = rpg
        .rpg()
        .nodes
        .iter()
        .filter(|n| n.is_leaf() && !n.is_data())
        .map(|n| n.name.as_str())
        .collect();
    let mut script = Vec::new();
    for node in rpg.ordered_nodes().filter(|n| n.is_leaf()) {
        let (Some(file), Some(test_file)) = (node.file_path.as_deref(), node.test_file()) else {
            continue;
        };
        let source = read(reference_dir, file)?;
        let units = split_units(&source);
        if node.is_data() {
            if node.value.is_none() {
                let assignment = units
                    .iter()
                    .find(|u| u.assigned_name() == Some(node.name.as_str()))
                    .ok_or_else(|| DeriveError::MissingAssignment {
                        node: node.id.clone(),
                        name: node.name.clone(),
                        path: file.to_string(),
                    })?;
                script.push(entry(
                    &node.id,
                    Role::Impl,
                    &with_imports(&units, &[assignment]),
                ));
            }
            continue;
        }
        let def = units
            .iter()
            .find(|u| u.def_name() == Some(node.name.as_str()))
            .ok_or_else(|| DeriveError::MissingDef {
                node: node.id.clone(),
                name: node.name.clone(),
                path: file.to_string(),
            })?;
        let tests_source = read(reference_dir, &test_file)?;
        let test_units = split_units(&tests_source);
        let tests: Vec<&Unit> = test_units
            .iter()
            .filter(|u| {
                u.def_name().and_then(|n| owner_of_test(n, &leaf_names)) == Some(node.name.as_str())
            })
            .collect();
        if tests.is_empty() {
            return Err(DeriveError::MissingTests {
                node: node.id.clone(),
                name: node.name.clone(),
                path: test_file,
            });
        }
        script.push(entry(
            &node.id,
            Role::Test,
            &with_imports(&test_units, &tests),
        ));
        script.push(entry(&node.id, Role::Impl, &with_imports(&units, &[def])));
    }
    for flow in crate::rpg::flow::flows(rpg, |_| true) {
        script.push(integration_entry(rpg, reference_dir, &flow, &leaf_names)?);
    }
    Ok(script)
}

/// The reference tests of `flow`'s exit functions, renamed for the integration test.
fn integration_entry(
    rpg: &ValidRpg,
    reference_dir: &Path,
    flow: &crate::rpg::flow::Flow,
    leaf_names: &[&str],
) -> Result<ScriptEntry, DeriveError> {
    let ident = crate::rpg::flow::identifier(&flow.subgraph);
    let mut imports: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    for &exit in &flow.exits {
        let node = rpg.node(exit);
        let Some(test_file) = node.test_file() else {
            continue;
        };
        let units = split_units(&read(reference_dir, &test_file)?);
        let owned: Vec<&Unit> = units
            .iter()
            .filter(|u| {
                u.def_name().and_then(|n| owner_of_test(n, leaf_names)) == Some(node.name.as_str())
            })
            .collect();
        let code = with_imports(&units, &owned);
        let code = code
            .trim_start_matches("```python\n")
            .trim_end()
            .trim_end_matches("```");
        for unit in split_units(code) {
            match unit.kind {
                UnitKind::Import if !imports.contains(&unit.text) => imports.push(unit.text),
                UnitKind::Import => {}
                _ => tests.push(unit.text.replacen(
                    "def test_",
                    &format!("def test_{ident}_flow_"),
                    1,
                )),
            }
        }
    }
    let mut code = imports.join("\n");
    for test in tests {
        code.push_str("\n\n\n");
        code.push_str(test.trim_end());
    }
    let answer = format!("```python\n{}\n```\n", code.trim_start());
    Ok(entry(
        &format!("integration:{}", flow.subgraph),
        Role::Test,
        &answer,
    ))
}

fn read(dir: &Path, rel: &str) -> Result<String, DeriveError> {
    let path = dir.join(rel);
    std::fs::read_to_string(&path).map_err(|source| DeriveError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The leaf a test belongs to: the longest leaf name `n` with test name `test_n` or `test_n_*`.
pub(crate) fn owner_of_test<'a>(test_name: &str, leaf_names: &[&'a str]) -> Option<&'a str> {
    let rest = test_name.strip_prefix("test_")?;
    leaf_names
        .iter()
        .filter(|name| {
            rest == **name
                || rest
                    .strip_prefix(**name)
                    .is_some_and(|tail| tail.starts_with('_'))
        })
        .max_by_key(|name| name.len())
        .copied()
}

/// The given definitions preceded by the module's import lines that they use.
fn with_imports(module: &[Unit], defs: &[&Unit]) -> String {
    let used: BTreeSet<String> = defs.iter().flat_map(|d| identifiers(&d.text)).collect();
    let imports: Vec<&str> = module
        .iter()
        .filter(|u| {
            u.kind == UnitKind::Import && u.imported_names().iter().any(|n| used.contains(n))
        })
        .map(|u| u.text.as_str())
        .collect();
    let mut code = imports.join("\n");
    for def in defs {
        if !code.is_empty() {
            code.push_str("\n\n\n");
        }
        code.push_str(&def.text);
    }
    format!("```python\n{code}\n```\n")
}

fn entry(node: &str, role: Role, answer: &str) -> ScriptEntry {
    ScriptEntry {
        node: node.to_string(),
        role,
        attempt: 0,
        candidate: 0,
        answer: Some(answer.to_string()),
        fault: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_leaf_without_a_value_gets_its_reference_assignment_and_one_with_a_value_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let module = "from fractions import Fraction\nimport math\n\n# Metres per unit.\nUNITS = {'m': Fraction(1)}\nSEP = ' '\n\n\ndef to_m(text):\n    return UNITS[text]\n";
        std::fs::create_dir_all(dir.path().join("src/conv")).unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("src/conv/units.py"), module).unwrap();
        std::fs::write(
            dir.path().join("tests/test_units.py"),
            "from conv.units import to_m\n\n\ndef test_to_m():\n    assert to_m('m') == 1\n",
        )
        .unwrap();
        let leaf = |id: &str, name: &str, kind: &str, value: Option<&str>| {
            serde_json::json!({"id": id, "name": name, "type": kind, "node_type": "leaf",
                "file_path": "src/conv/units.py", "docstring": "Spec.", "value": value})
        };
        let rpg: crate::rpg::Rpg = serde_json::from_value(serde_json::json!({"nodes": [
            leaf("f", "to_m", "function", None),
            leaf("u", "UNITS", "data", None),
            leaf("s", "SEP", "data", Some("' '")),
        ]}))
        .unwrap();
        let rpg = crate::rpg::validate(rpg).unwrap();
        let script = derive_script(&rpg, dir.path()).unwrap();
        let answers: Vec<(&str, Role, &str)> = script
            .iter()
            .map(|e| {
                (
                    e.node.as_str(),
                    e.role,
                    e.answer.as_deref().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            answers,
            [
                (
                    "f",
                    Role::Test,
                    "```python\nfrom conv.units import to_m\n\n\ndef test_to_m():\n    assert to_m('m') == 1\n```\n"
                ),
                (
                    "f",
                    Role::Impl,
                    "```python\ndef to_m(text):\n    return UNITS[text]\n```\n"
                ),
                (
                    "u",
                    Role::Impl,
                    "```python\nfrom fractions import Fraction\n\n\n# Metres per unit.\nUNITS = {'m': Fraction(1)}\n```\n"
                ),
            ]
        );
    }

    #[test]
    fn longest_leaf_name_owns_the_test() {
        let names = ["clamp", "clamp_all", "mean"];
        assert_eq!(
            owner_of_test("test_clamp_all_empty", &names),
            Some("clamp_all")
        );
        assert_eq!(owner_of_test("test_clamp_low", &names), Some("clamp"));
        assert_eq!(owner_of_test("test_clamp", &names), Some("clamp"));
        assert_eq!(owner_of_test("test_meaning", &names), None);
        assert_eq!(owner_of_test("helper", &names), None);
    }
}
