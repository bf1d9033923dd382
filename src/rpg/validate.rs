//! Validation: every check that must pass before any work starts, reported all at once.
//!
//! Errors name the node and field. Warnings (dependencies and edges that disagree, unknown
//! fields) do not stop generation. The output-path check that needs the file system
//! ([`check_output_paths`]) is separate so `validate` itself stays pure.
//!
//! The rules are the ones `generate` would otherwise trip over later, after work was done, or
//! worse, would not trip over at all: a node's `file_path` must not name a file that packaging
//! tools run or read as configuration (assembly runs `pip install -e .` on the output, so a node
//! writing `setup.py` would run a plan's code on the host), nor a file assembly writes itself;
//! ids and subgraph ids end up in file names and git tag names, so they are held to what those
//! accept. Every user-supplied string shown in a message goes through [`shown`], so a hostile
//! plan cannot put terminal escapes or megabytes of text on the user's screen.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::graph::{DepGraph, NodePos};
use super::model::{EdgeKind, Node, NodeKind, Rpg};
pub(crate) use crate::python::is_bidi_control;
use crate::python::is_identifier;

mod error;
mod paths;
pub use error::shown;
use error::shown_text_problem;
pub(crate) use error::{RpgError, terminal_safe};
#[cfg(test)]
use paths::RESERVED_NAMES;
use paths::tests_dir_problem;
pub(crate) use paths::{check_output_paths, file_path_problem, reserved_path, shadowed_module};

/// The longest node id or path component, in bytes: most file systems' limit on a file name.
pub const MAX_NAME_BYTES: usize = 255;
/// The most components a `file_path` (or a derived test path) may have; deeper package nesting
/// breaks generation long before it is useful.
pub const MAX_PATH_COMPONENTS: usize = 32;
/// The longest `file_path` (or derived test path), in bytes: a path longer than Linux's
/// `PATH_MAX` (4096, less the output directory) fails only after work was done.
pub const MAX_PATH_BYTES: usize = 1024;
/// The longest docstring, in bytes. The docstring is the specification: it goes into every
/// prompt and into the generated module, and 64 KiB is already a long manual.
pub const MAX_DOCSTRING_BYTES: usize = 64 * 1024;
/// The longest `type`, in bytes (`function`, `module`, ...: a word, shown by `plan`).
pub const MAX_KIND_BYTES: usize = 64;
/// Modules that are not in the standard library but that the test runner imports before any
/// generated test runs: a plan module of one of these names at an import root breaks (or
/// takes over) every test run.
pub const TEST_RUNNER_MODULES: &[&str] = &["pytest", "_pytest", "pluggy", "conftest"];
/// The longest `subgraph_id`, in bytes.
pub const MAX_SUBGRAPH_ID_BYTES: usize = 100;
/// The rule a `subgraph_id` must follow, as told to the user.
pub const SUBGRAPH_ID_RULE: &str = "it becomes part of the git tag `phase4-subgraph-<id>`, so it must be 1 to 100 ASCII letters, digits, `.`, `_` or `-`, not start with `.` or `-`, not end with `.` or `.lock`, and not contain `..`";
/// Warnings of one kind shown before the rest are summed up in one line.
pub const MAX_WARNINGS_PER_KIND: usize = 20;
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
///
/// The fields are private: a `ValidRpg` is only made by [`validate`], so its graph and order
/// always describe its plan (no caller can swap the nodes under them).
pub struct ValidRpg {
    rpg: Rpg,
    graph: DepGraph,
    /// Positions in `rpg.nodes`, in generation order.
    order: Vec<NodePos>,
    warnings: Vec<Warning>,
}

impl ValidRpg {
    /// The plan as loaded.
    pub fn rpg(&self) -> &Rpg {
        &self.rpg
    }

    /// The dependency graph over node positions.
    pub fn graph(&self) -> &DepGraph {
        &self.graph
    }

    /// Positions in `rpg().nodes`, in generation order: the node of job `j` is `order()[j]`.
    pub fn order(&self) -> &[NodePos] {
        &self.order
    }

    /// What validation noticed but did not refuse.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub fn node(&self, position: NodePos) -> &Node {
        &self.rpg.nodes[position.index()]
    }

    /// The position of the node with this id (a map lookup, not a scan).
    pub fn position_of(&self, id: &str) -> Option<NodePos> {
        self.graph.position_of(id)
    }

    /// Nodes in generation order.
    pub fn ordered_nodes(&self) -> impl Iterator<Item = &Node> {
        self.order.iter().map(|&p| &self.rpg.nodes[p.index()])
    }
}

/// Checks everything that can be checked without the file system.
pub fn validate(rpg: Rpg) -> Result<ValidRpg, Vec<RpgError>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    if rpg.nodes.is_empty() {
        return Err(vec![RpgError::Empty]);
    }
    let by_id = check_ids(&rpg, &mut errors);
    check_references(&rpg, &by_id, &mut errors);
    for node in &rpg.nodes {
        check_node(node, &mut errors);
    }
    check_duplicate_names(&rpg, &mut errors);
    check_subgraph_ids(&rpg, &mut errors);
    check_metadata(&rpg, &mut errors);
    warn_unknown_fields(&rpg, &mut warnings);
    warn_disagreements(&rpg, &mut warnings);
    if !errors.is_empty() {
        return Err(errors);
    }
    let graph = DepGraph::build(&rpg);
    // Ordering is the cheap test for a cycle; the cycle itself is only looked for on failure.
    let Some(order) = graph.topological_order() else {
        let path = graph.find_cycle().unwrap_or_default();
        let why = path
            .windows(2)
            .map(|w| {
                let kind = graph
                    .link_kind(&w[0], &w[1])
                    .map(|k| k.to_string())
                    .unwrap_or_default();
                format!("{} depends on {} ({kind})", shown(&w[0]), shown(&w[1]))
            })
            .collect();
        return Err(vec![RpgError::Cycle { path, why }]);
    };
    Ok(ValidRpg {
        rpg,
        graph,
        order,
        warnings,
    })
}

/// The metadata keys the engine reads: `reference_tests`, a directory's path.
fn check_metadata(rpg: &Rpg, errors: &mut Vec<RpgError>) {
    let Some(tests) = rpg.metadata.get("reference_tests") else {
        return;
    };
    let reason = match tests.as_str() {
        None => Some("must be a string (the reference tests' directory)"),
        Some("") => Some("is empty"),
        Some(path) => shown_text_problem(path),
    };
    errors.extend(reason.map(|reason| RpgError::BadMetadata {
        key: "reference_tests",
        reason,
    }));
}

/// Why a node id cannot be used, if it cannot: it names files and shows in messages.
fn id_problem(id: &str) -> Option<&'static str> {
    shown_text_problem(id)
        .or_else(|| (id.len() > MAX_NAME_BYTES).then_some("is longer than 255 bytes"))
}

/// Reports empty, unusable and repeated ids; returns every id's first position, which the
/// later checks share (one map of 100,000 ids instead of one per check).
fn check_ids<'a>(rpg: &'a Rpg, errors: &mut Vec<RpgError>) -> HashMap<&'a str, usize> {
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(rpg.nodes.len());
    for (position, node) in rpg.nodes.iter().enumerate() {
        let problem = if node.id.trim().is_empty() {
            Some(RpgError::EmptyId { position })
        } else {
            id_problem(&node.id).map(|reason| RpgError::BadId {
                position,
                id: node.id.clone(),
                reason,
            })
        };
        match by_id.entry(node.id.as_str()) {
            Entry::Vacant(slot) => {
                slot.insert(position);
            }
            // An empty or unusable id is reported as such, not also as a repeat.
            Entry::Occupied(first) if problem.is_none() => {
                errors.push(RpgError::DuplicateId {
                    id: node.id.clone(),
                    first: *first.get(),
                    second: position,
                });
            }
            Entry::Occupied(_) => {}
        }
        errors.extend(problem);
    }
    by_id
}

fn check_references(rpg: &Rpg, by_id: &HashMap<&str, usize>, errors: &mut Vec<RpgError>) {
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
            match by_id.get(parent.as_str()).map(|&p| &rpg.nodes[p]) {
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
    if let Some(reason) = kind_problem(node.kind.as_str()) {
        errors.push(RpgError::BadText {
            node: node.id.clone(),
            field: "type",
            text: node.kind.to_string(),
            reason,
        });
    }
    if let Some(path) = &node.file_path {
        // A package directory may be written with a trailing `/`; a file may not.
        let checked = match path.strip_suffix('/') {
            Some(dir) if !node.is_leaf() && !dir.is_empty() => dir,
            _ => path.as_str(),
        };
        let bad_path = |reason| RpgError::BadFilePath {
            node: node.id.clone(),
            path: path.clone(),
            reason,
        };
        if let Some(reason) = file_path_problem(checked) {
            errors.push(bad_path(reason));
        } else if node.is_leaf() && !path.ends_with(".py") {
            errors.push(RpgError::NotPython {
                node: node.id.clone(),
                path: path.clone(),
            });
        } else if let Some(reason) = composite_path_problem(node, checked) {
            errors.push(bad_path(reason));
        } else if let Some(reason) = tests_dir_problem(checked) {
            errors.push(bad_path(reason));
        } else if let Some((module, what)) = shadowed_module(checked) {
            errors.push(RpgError::ShadowsModule {
                node: node.id.clone(),
                path: path.clone(),
                module: module.to_string(),
                what,
            });
        } else if let Some(test_file) = node.test_file()
            && let Some(reason) = file_path_problem(&test_file)
        {
            errors.push(RpgError::BadTestFile {
                node: node.id.clone(),
                path: test_file,
                reason,
            });
        }
    }
    if let Some(doc) = &node.docstring
        && doc.len() > MAX_DOCSTRING_BYTES
    {
        errors.push(RpgError::DocstringTooLong {
            node: node.id.clone(),
            bytes: doc.len(),
        });
    }
    check_value(node, errors);
    let name_problem = name_problem(node);
    let bad_name = |reason| RpgError::BadName {
        node: node.id.clone(),
        name: node.name.clone(),
        reason,
    };
    if !node.is_leaf() {
        errors.extend(name_problem.map(bad_name));
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
    errors.extend(name_problem.map(bad_name));
}

/// A data node is a leaf, and its `value`, when it has one, a literal expression; no other
/// node has a value.
fn check_value(node: &Node, errors: &mut Vec<RpgError>) {
    let data = node.kind == NodeKind::Data;
    if data && !node.is_leaf() {
        errors.push(RpgError::CompositeData {
            node: node.id.clone(),
        });
    }
    let Some(value) = &node.value else {
        return;
    };
    if !data {
        errors.push(RpgError::ValueNotData {
            node: node.id.clone(),
            kind: node.kind.to_string(),
        });
    } else if let Err(reason) = crate::python::check_literal(value) {
        errors.push(RpgError::BadValue {
            node: node.id.clone(),
            reason,
        });
    }
}

/// Why a node's `type` cannot be shown, if it cannot: it is printed by `plan`.
fn kind_problem(kind: &str) -> Option<&'static str> {
    shown_text_problem(kind)
        .or_else(|| (kind.len() > MAX_KIND_BYTES).then_some("is longer than 64 bytes"))
}

/// Why a node's name cannot be used, if it cannot. Functions, classes, modules and packages
/// are named in Python code (`def name`, `from .name import ...`): an identifier that is not
/// a keyword. Any other node's name is only shown, and held to what a terminal can show.
fn name_problem(node: &Node) -> Option<&'static str> {
    let python_named = node.is_leaf() || matches!(node.kind, NodeKind::Module | NodeKind::Package);
    let dunder = node.name.len() > 4 && node.name.starts_with("__") && node.name.ends_with("__");
    let problem = if !python_named {
        shown_text_problem(&node.name)
    } else if crate::python::KEYWORDS.contains(&node.name.as_str()) {
        Some("is a Python keyword")
    } else if !is_identifier(&node.name) {
        Some("is not a Python identifier")
    } else if node.is_data() && dunder {
        Some(
            "is a dunder name (`__name__`), which Python and the packaging of the repository use; module-level data needs a name of its own",
        )
    } else {
        None
    };
    problem.or_else(|| (node.name.len() > MAX_NAME_BYTES).then_some("is longer than 255 bytes"))
}

/// Why a composite node's path cannot be what it says, if it cannot. A module names its
/// Python file; any other composite whose path is not a `.py` file is a package directory
/// (the engine writes its `__init__.py` there), so every component must be a Python name.
fn composite_path_problem(node: &Node, path: &str) -> Option<&'static str> {
    if node.is_leaf() || path.ends_with(".py") {
        return None;
    }
    if node.kind == NodeKind::Module {
        return Some(
            "does not end in `.py`: a module node names its Python file (any other path would become a package directory)",
        );
    }
    path.split('/').any(|part| !is_identifier(part)).then_some(
        "has a component that is not a Python identifier, or is a keyword: a package node's path is a directory that becomes a Python package (`<dir>/__init__.py`)",
    )
}

/// Two leaves with one name in one file: reported at the second (and every later) one,
/// naming the first.
fn check_duplicate_names(rpg: &Rpg, errors: &mut Vec<RpgError>) {
    let mut seen: HashMap<(&str, &str), &str> = HashMap::new();
    for node in rpg.nodes.iter().filter(|n| n.is_leaf()) {
        let Some(path) = node.file_path.as_deref() else {
            continue;
        };
        match seen.entry((path, node.name.as_str())) {
            Entry::Vacant(slot) => {
                slot.insert(node.id.as_str());
            }
            Entry::Occupied(first) => errors.push(RpgError::DuplicateName {
                node: node.id.clone(),
                first: (*first.get()).into(),
                name: node.name.clone(),
                path: path.to_string(),
            }),
        }
    }
}

/// Whether `id` can be part of a git tag name; see [`SUBGRAPH_ID_RULE`].
pub fn subgraph_id_is_valid(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SUBGRAPH_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !id.starts_with(['.', '-'])
        && !id.ends_with('.')
        && !id.ends_with(".lock")
        && !id.contains("..")
}

/// One error per distinct bad subgraph id, naming its first node, so 100,000 nodes sharing
/// one bad id make one line.
fn check_subgraph_ids(rpg: &Rpg, errors: &mut Vec<RpgError>) {
    let mut bad: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (position, node) in rpg.nodes.iter().enumerate() {
        if let Some(id) = node.subgraph_id.as_deref()
            && !subgraph_id_is_valid(id)
        {
            bad.entry(id).or_insert((position, 0)).1 += 1;
        }
    }
    let mut found: Vec<(usize, &str, usize)> = bad
        .into_iter()
        .map(|(id, (first, count))| (first, id, count - 1))
        .collect();
    found.sort_unstable();
    for (first, id, others) in found {
        errors.push(RpgError::BadSubgraphId {
            node: rpg.nodes[first].id.clone(),
            others,
            subgraph: id.to_string(),
        });
    }
}

/// Adds the first [`MAX_WARNINGS_PER_KIND`] of `found`, and one line counting the rest, so a
/// plan whose 100,000 nodes all carry the same oddity prints 21 lines, not 100,000.
fn push_capped<T>(
    warnings: &mut Vec<Warning>,
    found: impl Iterator<Item = T>,
    say: impl Fn(T) -> String,
    rest: &str,
) {
    let mut found = found;
    warnings.extend(
        found
            .by_ref()
            .take(MAX_WARNINGS_PER_KIND)
            .map(|f| Warning(say(f))),
    );
    let more = found.count();
    if more > 0 {
        warnings.push(Warning(format!("… and {more} more {rest}")));
    }
}

fn warn_unknown_fields(rpg: &Rpg, warnings: &mut Vec<Warning>) {
    push_capped(
        warnings,
        rpg.extra.keys(),
        |key| format!("unknown top-level field `{}` (ignored)", shown(key)),
        "unknown top-level fields (ignored)",
    );
    push_capped(
        warnings,
        rpg.nodes
            .iter()
            .flat_map(|node| node.extra.keys().map(move |key| (node, key))),
        |(node, key)| {
            format!(
                "node `{}`: unknown field `{}` (ignored)",
                shown(&node.id),
                shown(key)
            )
        },
        "unknown node fields (ignored)",
    );
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
    push_capped(
        warnings,
        from_deps
            .iter()
            .filter(|pair| !from_edges.contains_key(*pair)),
        |(dependent, dependency)| {
            format!(
                "node `{}` lists `{}` in dependencies but no edge says so",
                shown(dependent),
                shown(dependency)
            )
        },
        "dependencies that no edge states",
    );
    push_capped(
        warnings,
        from_edges
            .iter()
            .filter(|(pair, _)| !from_deps.contains(*pair)),
        |((dependent, dependency), kind)| {
            let (dependent, dependency) = (shown(dependent), shown(dependency));
            format!(
                "a {} edge makes `{dependent}` depend on `{dependency}`, but `{dependent}`'s dependencies do not list it",
                kind.as_str()
            )
        },
        "edges that no dependencies list",
    );
}

#[cfg(test)]
mod tests;
