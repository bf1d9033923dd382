//! Validation: every check that must pass before any work starts, reported all at once.
//!
//! Errors name the node and field. Warnings (dependencies and edges that disagree, unknown
//! fields) do not stop generation. The output-path check that needs the file system
//! ([`check_output_paths`]) is separate so `validate` itself stays pure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

use super::graph::DepGraph;
use super::model::{EdgeKind, Node, Rpg};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpgError {
    #[error("the RPG has no nodes")]
    Empty,
    #[error("node #{position}: empty id")]
    EmptyId { position: usize },
    #[error("duplicate node id `{id}` (nodes #{first} and #{second})")]
    DuplicateId {
        id: String,
        first: usize,
        second: usize,
    },
    #[error("node `{node}`: {field} refers to unknown node `{missing}`")]
    UnknownReference {
        node: String,
        field: &'static str,
        missing: String,
    },
    #[error("edge #{position} ({source_id} -> {target}): unknown node `{missing}`")]
    UnknownEdgeEnd {
        position: usize,
        source_id: String,
        target: String,
        missing: String,
    },
    #[error("node `{node}`: parent `{parent}` is a leaf; a parent must be a composite node")]
    LeafParent { node: String, parent: String },
    #[error("leaf node `{node}`: missing docstring (the docstring is the specification)")]
    MissingDocstring { node: String },
    #[error("leaf node `{node}`: missing file_path")]
    MissingFilePath { node: String },
    #[error("node `{node}`: file_path `{}` {reason}", path.escape_debug())]
    BadFilePath {
        node: String,
        path: String,
        reason: &'static str,
    },
    #[error("leaf node `{node}`: file_path `{path}` is not a .py file")]
    NotPython { node: String, path: String },
    #[error("leaf node `{node}`: name `{name}` is not a Python identifier")]
    BadName { node: String, name: String },
    #[error("dependency cycle: {}", path.join(" -> "))]
    Cycle { path: Vec<String>, why: Vec<String> },
    #[error(
        "node `{node}`: file_path `{path}` escapes the output directory through symlink `{link}`"
    )]
    SymlinkEscape {
        node: String,
        path: String,
        link: PathBuf,
    },
}

/// Something worth telling the user that does not stop generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning(pub String);

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An RPG that passed validation, with its dependency graph and deterministic order.
#[derive(Debug, Clone)]
pub struct ValidRpg {
    pub rpg: Rpg,
    pub graph: DepGraph,
    /// Positions in `rpg.nodes`, in generation order.
    pub order: Vec<usize>,
    pub warnings: Vec<Warning>,
}

impl ValidRpg {
    pub fn node(&self, position: usize) -> &Node {
        &self.rpg.nodes[position]
    }

    pub fn position_of(&self, id: &str) -> Option<usize> {
        self.rpg.nodes.iter().position(|n| n.id == id)
    }

    /// Nodes in generation order.
    pub fn ordered_nodes(&self) -> impl Iterator<Item = &Node> {
        self.order.iter().map(|&p| &self.rpg.nodes[p])
    }
}

/// Checks everything that can be checked without the file system.
pub fn validate(rpg: Rpg) -> Result<ValidRpg, Vec<RpgError>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    if rpg.nodes.is_empty() {
        return Err(vec![RpgError::Empty]);
    }
    check_ids(&rpg, &mut errors);
    check_references(&rpg, &mut errors);
    for node in &rpg.nodes {
        check_node(node, &mut errors);
    }
    warn_unknown_fields(&rpg, &mut warnings);
    warn_disagreements(&rpg, &mut warnings);
    if !errors.is_empty() {
        return Err(errors);
    }
    let graph = DepGraph::build(&rpg);
    if let Some(path) = graph.find_cycle() {
        let why = path
            .windows(2)
            .map(|w| {
                let kind = graph
                    .link_kind(&w[0], &w[1])
                    .map(|k| k.to_string())
                    .unwrap_or_default();
                format!("{} depends on {} ({kind})", w[0], w[1])
            })
            .collect();
        return Err(vec![RpgError::Cycle { path, why }]);
    }
    let Some(order) = graph.topological_order() else {
        return Err(vec![RpgError::Cycle {
            path: Vec::new(),
            why: Vec::new(),
        }]);
    };
    Ok(ValidRpg {
        rpg,
        graph,
        order,
        warnings,
    })
}

fn check_ids(rpg: &Rpg, errors: &mut Vec<RpgError>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (position, node) in rpg.nodes.iter().enumerate() {
        if node.id.trim().is_empty() {
            errors.push(RpgError::EmptyId { position });
        } else if let Some(&first) = seen.get(node.id.as_str()) {
            errors.push(RpgError::DuplicateId {
                id: node.id.clone(),
                first,
                second: position,
            });
        } else {
            seen.insert(&node.id, position);
        }
    }
}

fn check_references(rpg: &Rpg, errors: &mut Vec<RpgError>) {
    let by_id: HashMap<&str, &Node> = rpg.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    for node in &rpg.nodes {
        for dep in &node.dependencies {
            if !by_id.contains_key(dep.as_str()) {
                errors.push(RpgError::UnknownReference {
                    node: node.id.clone(),
                    field: "dependencies",
                    missing: dep.clone(),
                });
            }
        }
        if let Some(parent) = &node.parent {
            match by_id.get(parent.as_str()) {
                None => errors.push(RpgError::UnknownReference {
                    node: node.id.clone(),
                    field: "parent",
                    missing: parent.clone(),
                }),
                Some(p) if p.is_leaf() => errors.push(RpgError::LeafParent {
                    node: node.id.clone(),
                    parent: parent.clone(),
                }),
                Some(_) => {}
            }
        }
    }
    for (position, edge) in rpg.edges.iter().enumerate() {
        for end in [&edge.source, &edge.target] {
            if !by_id.contains_key(end.as_str()) {
                errors.push(RpgError::UnknownEdgeEnd {
                    position,
                    source_id: edge.source.clone(),
                    target: edge.target.clone(),
                    missing: end.clone(),
                });
            }
        }
    }
}

fn check_node(node: &Node, errors: &mut Vec<RpgError>) {
    if let Some(path) = &node.file_path {
        if let Err(reason) = check_relative_path(path) {
            errors.push(RpgError::BadFilePath {
                node: node.id.clone(),
                path: path.clone(),
                reason,
            });
        } else if node.is_leaf() && !path.ends_with(".py") {
            errors.push(RpgError::NotPython {
                node: node.id.clone(),
                path: path.clone(),
            });
        }
    }
    if !node.is_leaf() {
        return;
    }
    if node
        .docstring
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        errors.push(RpgError::MissingDocstring {
            node: node.id.clone(),
        });
    }
    if node.file_path.is_none() {
        errors.push(RpgError::MissingFilePath {
            node: node.id.clone(),
        });
    }
    if !is_identifier(&node.name) {
        errors.push(RpgError::BadName {
            node: node.id.clone(),
            name: node.name.clone(),
        });
    }
}

/// A file_path must stay inside the output repository by construction.
fn check_relative_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("is empty");
    }
    if path.contains('\0') {
        return Err("contains a NUL byte");
    }
    if path.contains('\\') {
        return Err("contains a backslash (use `/`)");
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && bytes.get(2).is_none_or(|&c| c == b'/');
    if path.starts_with('/') || drive {
        return Err("is absolute (it must be relative to the output directory)");
    }
    if path.split('/').any(|part| part == "..") {
        return Err("contains `..`");
    }
    Ok(())
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn warn_unknown_fields(rpg: &Rpg, warnings: &mut Vec<Warning>) {
    for key in rpg.extra.keys() {
        warnings.push(Warning(format!(
            "unknown top-level field `{key}` (ignored)"
        )));
    }
    for node in &rpg.nodes {
        for key in node.extra.keys() {
            warnings.push(Warning(format!(
                "node `{}`: unknown field `{key}` (ignored)",
                node.id
            )));
        }
    }
}

/// `dependencies` and dependency-carrying edges should say the same thing; when they do not,
/// both are honoured (the union orders generation) and the user is told.
fn warn_disagreements(rpg: &Rpg, warnings: &mut Vec<Warning>) {
    let from_deps: BTreeSet<(&str, &str)> = rpg
        .nodes
        .iter()
        .flat_map(|n| {
            n.dependencies
                .iter()
                .map(move |d| (n.id.as_str(), d.as_str()))
        })
        .collect();
    let mut from_edges: BTreeMap<(&str, &str), EdgeKind> = BTreeMap::new();
    for edge in rpg.edges.iter().filter(|e| e.kind != EdgeKind::Contains) {
        let (dependency, dependent) = edge.kind.dependency_pair(&edge.source, &edge.target);
        from_edges.insert((dependent, dependency), edge.kind);
    }
    for (dependent, dependency) in &from_deps {
        if !from_edges.contains_key(&(dependent, dependency)) {
            warnings.push(Warning(format!(
                "node `{dependent}` lists `{dependency}` in dependencies but no edge says so"
            )));
        }
    }
    for ((dependent, dependency), kind) in &from_edges {
        if !from_deps.contains(&(dependent, dependency)) {
            let kind = kind.as_str();
            warnings.push(Warning(format!(
                "a {kind} edge makes `{dependent}` depend on `{dependency}`, but `{dependent}`'s dependencies do not list it"
            )));
        }
    }
}

/// Checks, against the real output directory, that no node's path (nor any of `extra`, the
/// engine's own files) escapes it through a symlink (a link inside `out` pointing outside).
/// Missing components are fine: they will be created as plain directories.
pub fn check_output_paths(rpg: &Rpg, out: &Path, extra: &[&str]) -> Result<(), Vec<RpgError>> {
    let Ok(root) = out.canonicalize() else {
        return Ok(()); // the directory does not exist yet: nothing can be a link
    };
    let mut errors = Vec::new();
    let mut paths: Vec<(&Node, String)> = rpg
        .nodes
        .iter()
        .filter_map(|n| n.file_path.clone().map(|p| (n, p)))
        .collect();
    paths.extend(
        rpg.nodes
            .iter()
            .filter_map(|n| n.test_file().map(|p| (n, p))),
    );
    let engine = Node {
        id: "(engine state)".into(),
        ..rpg.nodes[0].clone()
    };
    paths.extend(extra.iter().map(|p| (&engine, p.to_string())));
    for (node, path) in paths {
        let mut at = root.clone();
        for part in Path::new(&path).components() {
            let Component::Normal(part) = part else {
                continue;
            };
            at.push(part);
            let Ok(meta) = std::fs::symlink_metadata(&at) else {
                break;
            };
            if meta.file_type().is_symlink() {
                let escapes = at
                    .canonicalize()
                    .map_or(true, |real| !real.starts_with(&root));
                if escapes {
                    errors.push(RpgError::SymlinkEscape {
                        node: node.id.clone(),
                        path: path.clone(),
                        link: at.clone(),
                    });
                }
                break;
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
