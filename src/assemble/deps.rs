//! Planned dependencies checked in the code (the seed asks that 80% or more hold).
//!
//! The plan says which function or class uses which; the model may have written something
//! else. A planned edge "N depends on D" between two leaves holds when N's definition in the
//! generated source names D: a call `D(...)`, a reference `D`, an attribute `module.D`, or a
//! base class `class N(D)`. A keyword argument spelled `D=` does not count, nor does N's own
//! name. Names are read with tree-sitter, so strings and comments never count; the check is
//! by name, as the code tools' references are (no type inference): a local variable spelled
//! like D counts as a use.
//!
//! Only nodes whose code the engine wrote are checked: a stub (a skipped node's, or a failed
//! node's without a candidate) uses nothing, and counting it would measure generation
//! failures, not the plan. Pure: the sources come in
//! as text.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::rpg::{Node, ValidRpg};
use crate::symbols::outline::outline;
use crate::symbols::repo::identifiers_named;

/// One planned dependency that the code does not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unused {
    /// The dependent node's id and name.
    pub from: crate::rpg::NodeId,
    pub from_name: String,
    /// The dependency's id and name.
    pub to: crate::rpg::NodeId,
    pub to_name: String,
}

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DependencyCheck {
    /// Planned leaf-to-leaf dependencies of checked nodes.
    pub checked: usize,
    /// Those the dependent's code uses.
    pub used: usize,
    /// The others, in plan order.
    pub unused: Vec<Unused>,
}

impl DependencyCheck {
    /// The share used, `None` when nothing was checked.
    pub fn share(&self) -> Option<f64> {
        (self.checked > 0).then(|| self.used as f64 / self.checked as f64)
    }
}

/// Checks every planned dependency of the leaves `written` says the engine wrote code for,
/// against `sources` (relative path → text).
pub fn check(
    rpg: &ValidRpg,
    sources: &BTreeMap<String, String>,
    written: impl Fn(&Node) -> bool,
) -> DependencyCheck {
    let mut result = DependencyCheck::default();
    for &position in rpg.order() {
        let node = rpg.node(position);
        // A data node's code is its value: it calls nothing the check could look for.
        if !node.is_leaf() || node.is_data() || !written(node) {
            continue;
        }
        let definition = node
            .file_path
            .as_deref()
            .and_then(|file| sources.get(file))
            .and_then(|source| definition_of(source, &node.name));
        if definition.is_some_and(crate::symbols::stub::is_stub) {
            continue;
        }
        for dependency in rpg.graph().declared_dependencies_of(position) {
            let target = rpg.node(dependency);
            if !target.is_leaf() || target.name == node.name {
                continue;
            }
            result.checked += 1;
            match definition.is_some_and(|d| names(d, &target.name)) {
                true => result.used += 1,
                false => result.unused.push(Unused {
                    from: node.id.clone(),
                    from_name: node.name.clone(),
                    to: target.id.clone(),
                    to_name: target.name.clone(),
                }),
            }
        }
    }
    result
}

/// The source of the top-level definition of `name` (or the method `Class.name`).
fn definition_of<'a>(source: &'a str, name: &str) -> Option<&'a str> {
    let symbols = outline(source).ok()?;
    let symbol = symbols
        .iter()
        .find(|s| s.qualified_name == name)
        .or_else(|| symbols.iter().find(|s| s.name == name))?;
    source.get(symbol.start_byte..symbol.end_byte)
}

/// Whether `definition` uses the name `target` (see the module's rules).
fn names(definition: &str, target: &str) -> bool {
    identifiers_named(definition, target).is_ok_and(|references| {
        references
            .iter()
            .any(|r| r.role != "definition" && r.role != "keyword")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpg(nodes: serde_json::Value) -> ValidRpg {
        let rpg: crate::rpg::Rpg = serde_json::from_value(serde_json::json!({
            "project_name": "p", "nodes": nodes
        }))
        .unwrap();
        crate::rpg::validate(rpg).unwrap()
    }

    fn leaf(id: &str, name: &str, file: &str, deps: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "id": id, "name": name, "type": "function", "node_type": "leaf",
            "file_path": file, "signature": format!("def {name}()"), "docstring": "Do it.",
            "dependencies": deps
        })
    }

    #[test]
    fn a_dependency_holds_when_the_dependents_definition_names_it() {
        let plan = rpg(serde_json::json!([
            leaf("a", "mean", "src/p/m.py", &[]),
            leaf("b", "spread", "src/p/m.py", &["a"]),
            leaf("c", "report", "src/p/r.py", &["a", "b"]),
            leaf("d", "chart", "src/p/r.py", &["b"]),
            leaf("e", "skipped", "src/p/r.py", &["a"]),
        ]));
        let sources = BTreeMap::from([
            (
                "src/p/m.py".to_string(),
                "def mean(xs):\n    return sum(xs) / len(xs)\n\n\
                 def spread(xs):\n    m = mean(xs)\n    return max(xs) - m\n"
                    .to_string(),
            ),
            (
                "src/p/r.py".to_string(),
                // `report` uses `m.mean` as an attribute but `spread` only in a comment, a
                // string and a keyword argument; `chart` is not defined at all.
                "from p import m\n\ndef report(xs):\n    # spread(xs) would be nice\n    \
                 return f(text=\"spread\", spread=m.mean(xs))\n"
                    .to_string(),
            ),
        ]);
        let check = check(&plan, &sources, |n| n.id != "e");
        assert_eq!((check.checked, check.used), (4, 2));
        let unused: Vec<(&str, &str)> = check
            .unused
            .iter()
            .map(|u| (u.from_name.as_str(), u.to_name.as_str()))
            .collect();
        assert_eq!(unused, [("report", "spread"), ("chart", "spread")]);
        assert_eq!(check.share(), Some(0.5));
        assert_eq!(DependencyCheck::default().share(), None);
    }

    #[test]
    fn a_base_class_is_a_use() {
        assert!(names("class Child(Base):\n    pass\n", "Base"));
        assert!(!names("class Base:\n    pass\n", "Base"));
    }
}
