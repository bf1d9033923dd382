//! The plan's nodes for what was read: a package or module composite, a definition's leaf,
//! a module's data leaves. Pure.

use std::collections::BTreeMap;

use super::docstring::split_examples;
use super::read::{Def, DefKind, Module};
use super::{ExtractOptions, ExtractSummary, Skipped, module_path, path_problem};
use crate::python::is_identifier;
use crate::rpg::model::{Node, NodeId, NodeKind, NodeType};
use crate::rpg::validate::MAX_DOCSTRING_BYTES;

pub(super) fn composite(
    dotted: &str,
    kind: &str,
    file_path: String,
    docstring: Option<&str>,
    subgraph: &str,
    options: &ExtractOptions,
) -> Node {
    let name = dotted.rsplit('.').next().unwrap_or(dotted).to_string();
    let parent = dotted.rsplit_once('.').map(|(p, _)| p.to_string());
    let docstring = docstring
        .map(|d| match options.examples {
            true => d.to_string(),
            false => split_examples(d).0,
        })
        .filter(|d| !d.trim().is_empty() && d.len() <= MAX_DOCSTRING_BYTES)
        .unwrap_or_else(|| format!("The `{dotted}` {kind}."));
    Node {
        id: dotted.into(),
        name,
        kind: kind.into(),
        node_type: NodeType::Composite,
        file_path: Some(file_path),
        docstring: Some(docstring),
        dependencies: Vec::new(),
        subgraph_id: Some(subgraph.to_string()),
        signature: None,
        examples: Vec::new(),
        parent: parent.map(NodeId::from),
        value: None,
        extra: BTreeMap::new(),
    }
}

/// The data leaves of module `dotted`: its public module-level literals, each with its value
/// (see the module doc); what cannot be one is reported.
pub(super) fn data_leaves(
    modules: &BTreeMap<String, Module>,
    dotted: &str,
    leaves: &mut BTreeMap<(String, String), Node>,
    summary: &mut ExtractSummary,
) {
    let Some(module) = modules.get(dotted) else {
        return;
    };
    let path = module_path(dotted, module.is_package);
    if path_problem(&path).is_some() {
        return; // reported with the module's definitions
    }
    for (name, data) in module.data.iter().filter(|(n, _)| module.is_public(n)) {
        let qualified = format!("{dotted}.{name}");
        let value = match &data.value {
            _ if module.is_package => Err(
                "assigned in a package's `__init__.py`, which the engine writes itself".to_string(),
            ),
            _ if module.defs.contains_key(name) => {
                Err("also defined by a `def` or `class`, which is planned".to_string())
            }
            _ if !is_identifier(name) => {
                Err("its name is not a Python identifier the plan accepts".to_string())
            }
            _ if data.rebound.is_some() => Err(format!(
                "changed at module level after its assignment ({}), so its value at import is not the one written",
                data.rebound.as_deref().unwrap_or_default()
            )),
            Err(e) => Err(format!("its value {e}")),
            Ok(value) => Ok(value),
        };
        let docstring = data
            .docstring
            .clone()
            .unwrap_or_else(|| format!("The module-level `{name}` of `{dotted}`: {}.", data.what));
        match value {
            Ok(_) if docstring.len() > MAX_DOCSTRING_BYTES => summary.skipped.push(Skipped {
                name: qualified,
                reason: "its docstring is over the 64 KiB a plan allows".into(),
            }),
            Ok(value) => {
                leaves.insert(
                    (dotted.to_string(), name.clone()),
                    data_node(&qualified, name, &path, docstring, Some(value)),
                );
            }
            Err(reason) => summary.skipped.push(Skipped {
                name: qualified,
                reason,
            }),
        }
    }
}

/// A data leaf; without a value, the model writes the assignment from the docstring.
pub(super) fn data_node(
    id: &str,
    name: &str,
    path: &str,
    docstring: String,
    value: Option<&str>,
) -> Node {
    Node {
        id: id.into(),
        name: name.to_string(),
        kind: NodeKind::Data,
        node_type: NodeType::Leaf,
        file_path: Some(path.to_string()),
        docstring: Some(docstring),
        dependencies: Vec::new(),
        subgraph_id: None,
        signature: None,
        examples: Vec::new(),
        parent: id.rsplit_once('.').map(|(m, _)| m.into()),
        value: value.map(str::to_string),
        extra: BTreeMap::new(),
    }
}

/// The leaf of one definition, or why it cannot be one.
pub(super) fn leaf_node(
    def: &Def,
    id: &str,
    path: &str,
    options: &ExtractOptions,
) -> Result<Node, String> {
    let (mut docstring, mut examples) = match &def.docstring {
        Some(doc) => split_examples(doc),
        None => (String::new(), Vec::new()),
    };
    if def.kind == DefKind::Class {
        let mut section = Vec::new();
        for method in &def.methods {
            section.push(format!("    {}", method.signature));
            if let Some(doc) = &method.docstring {
                let (text, more) = split_examples(doc);
                examples.extend(more);
                for line in text.lines() {
                    section.push(match line.is_empty() {
                        true => String::new(),
                        false => format!("        {line}"),
                    });
                }
            }
        }
        let documented = def.methods.iter().any(|m| m.docstring.is_some());
        if !section.is_empty() && (documented || !docstring.trim().is_empty()) {
            if !docstring.is_empty() {
                docstring.push_str("\n\n");
            }
            docstring.push_str("Methods:\n");
            docstring.push_str(&section.join("\n"));
        }
    }
    if docstring.trim().is_empty() {
        return Err(match def.docstring {
            None => "no docstring (the docstring is the specification)".into(),
            Some(_) => "its docstring holds only examples".into(),
        });
    }
    if docstring.len() > MAX_DOCSTRING_BYTES {
        return Err(format!(
            "its docstring is {} bytes, over the 64 KiB a plan allows",
            docstring.len()
        ));
    }
    if !options.examples {
        examples.clear();
    }
    Ok(Node {
        id: id.into(),
        name: def.name.clone(),
        kind: match def.kind {
            DefKind::Function => "function".into(),
            DefKind::Class => "class".into(),
        },
        node_type: NodeType::Leaf,
        file_path: Some(path.to_string()),
        docstring: Some(docstring),
        dependencies: Vec::new(),
        subgraph_id: None,
        signature: Some(def.signature.clone()),
        examples,
        parent: id.rsplit_once('.').map(|(m, _)| m.into()),
        value: None,
        extra: BTreeMap::new(),
    })
}

pub(super) fn first_paragraph(doc: &str) -> String {
    doc.split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
