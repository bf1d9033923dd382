//! `rpg extract`: a plan read from existing Python source (RepoCraft's method), parsed with
//! tree-sitter and never executed.
//!
//! What is extracted, from the modules the caller hands in (dotted name and text):
//!
//! - **Packages** (a directory with `__init__.py`) become `package` composites at
//!   `src/<a>/<b>`, with the `__init__.py` docstring; **modules** become `module` composites at
//!   `src/<a>/<b>/<m>.py` with the module docstring. Only modules that keep at least one leaf
//!   are planned, with the packages above them.
//! - **Leaves** are the module's top-level `def`/`async def`/`class` statements (decorated or
//!   not; definitions inside `if`/`try` blocks are not read). A name is public when the module's
//!   `__all__` (a literal list or tuple of strings, `=` or `+=`) lists it, or, without such an
//!   `__all__`, when it does not start with `_`; and whatever the module says, when a
//!   package's `__init__.py` imports it by name (`from .m import _helper`): what a package
//!   re-exports is its interface, and a library's tests reach it there. A later definition of a name replaces an
//!   earlier one, as it does at run time.
//! - A **function** leaf's `signature` is its header on one line (`async`, type parameters,
//!   parameters with hints and defaults, return type; comments and decorators left out), its
//!   `docstring` the literal's value cleaned like `inspect.cleandoc`.
//! - A **class** leaf (`type: "class"`) has `class Name(bases)` as its signature, and its
//!   docstring followed by a `Methods:` section with the signature and docstring of every
//!   public method (`__init__` and other dunders included, `_private` ones not).
//! - **Data** leaves (`type: "data"`) are the module's top-level assignments of one public
//!   name (`NAME = VALUE` or `NAME: T = VALUE`; the `__all__` rule as above, dunders such as
//!   `__version__` never) whose value is a literal ([`crate::python::check_literal`]:
//!   strings, numbers, containers of them, `frozenset({...})` and the like; no name, no
//!   operator, no other call), with that value as the node's `value`. Its docstring is the
//!   comment block right above the assignment, or the string right after it (the attribute
//!   docstring convention), else a sentence naming what the value is. Nothing is evaluated:
//!   a name rebound at module level after its assignment (`+=`, `NAME[k] = v`,
//!   `NAME.update(...)`, `NAME.x = v`) is left out, since its value at import is not the one
//!   written, and so is one also defined by a `def` or `class`. A public assignment whose
//!   value is not a literal (a compiled pattern, a computed table) is reported, not planned,
//!   unless a planned definition reads it.
//! - **Data a definition reads** ([`needed`]): any other module-level assignment a planned
//!   definition reads (a private sentinel in a default, a table imported from a module the
//!   plan leaves out, a value computed from other constants) is planned too, where it is
//!   defined or, from a module left out, beside its reader; a value that is not a literal
//!   gives a leaf without a value whose docstring quotes the library's assignment. A
//!   function or class of a planned module that such a value calls is planned as well, public
//!   or not (`DEACCENT_MAP = DeaccenterDict(...)`, a class `__all__` leaves out): the value
//!   cannot be written without it.
//! - **Doctest examples** (a `>>>` line, its `...` continuations and the output lines after
//!   it, up to a blank line) move from the docstring to the node's `examples`, one entry per
//!   block; with `examples: false` they are dropped. A heading (`Examples:`, `Example::`, or
//!   numpy's `Examples` + `--------`) left with nothing under it goes too.
//! - **Edges**: a call `g(...)` or `m.g(...)` anywhere in a leaf's body, where `g` resolves to
//!   another planned leaf (defined in the same module, or imported by name, through
//!   `from x import g [as h]`, a wildcard import or a package's re-export, up to 8 hops),
//!   gives a `function_call` edge (the caller depends on the callee) and a dependency; a base
//!   class that is a planned class gives an `inherits` edge; a name read anywhere in a
//!   definition (its body, its parameters' defaults, `m.NAME` through a module) that resolves
//!   the same way to a planned data leaf gives a `uses` edge, so the data is written first. Edges are added in sorted order,
//!   and one that would close a cycle (mutual recursion) is dropped and reported.
//! - Each module is its own **subgraph** (its dotted name); a package joins the subgraph of
//!   the first module beneath it.
//!
//! What cannot be planned is skipped and reported, never written: a definition without
//! docstring (the docstring is the specification), one in a package's `__init__.py` (the
//! engine writes that file itself), a docstring over 64 KiB, a module whose path the
//! validator refuses (a test file, a name shadowing the standard library at the root, ...).
//! The result is run through [`super::validate`](fn@super::validate); a plan that fails it is never returned.
//!
//! Everything here is pure except [`read_sources`], which only reads the source tree.

mod docstring;
mod needed;
mod nodes;
mod read;

pub(crate) use read::{all_list_end, literal_all};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tree_sitter::Parser;

use super::model::{Edge, EdgeKind, Node, NodeId, NodeKind, Rpg};
use super::validate::{
    file_path_problem, reserved_path, shadowed_module, subgraph_id_is_valid, validate,
};
use crate::python::is_identifier;
use needed::{data_target, needed_data};
use nodes::{composite, data_leaves, first_paragraph, leaf_node};
use read::{Call, Module, mark_reexports, read_module, resolve_call};

/// How many re-exports a name is followed through before it is left unresolved.
const MAX_HOPS: usize = 8;
/// Directory names never read as packages: a library's own test suites.
const TEST_DIRS: &[&str] = &["tests", "test", "testing"];

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: no Python package or module found there")]
    NoPython(PathBuf),
    #[error("--module {name}: no such module under the source directory (found: {found})")]
    UnknownModule { name: String, found: String },
    #[error("no public function or class with a docstring in the selected modules")]
    NothingExtracted,
    #[error("function {names}: not a planned leaf of the selected modules")]
    UnknownFunction { names: String },
    #[error("the tree-sitter Python grammar could not be loaded: {0}")]
    Grammar(String),
    #[error("the extracted plan does not validate (a bug in `rpg extract`): {}", .0.join("; "))]
    Invalid(Vec<String>),
}

impl ExtractError {
    /// Whether the user's input (the directory, a `--module`) is at fault.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ExtractError::Io { .. }
                | ExtractError::NoPython(_)
                | ExtractError::UnknownModule { .. }
                | ExtractError::NothingExtracted
                | ExtractError::UnknownFunction { .. }
        )
    }
}

/// One Python file of the source tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The module's dotted name (`pkg.sub.mod`; `pkg.sub` for `pkg/sub/__init__.py`).
    pub dotted: String,
    /// Whether this is a package's `__init__.py`.
    pub is_package: bool,
    pub text: String,
}

/// What to extract.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Dotted names of the modules (or packages, meaning every module beneath) to plan;
    /// empty: all.
    pub modules: Vec<String>,
    /// Keep doctest examples (moved into `examples`); `false` drops them.
    pub examples: bool,
    /// Recorded as the plan's `metadata.reference_tests`.
    pub reference_tests: Option<String>,
    /// `metadata.project_name`; default: the first top-level package or module.
    pub project_name: Option<String>,
    /// When not empty, only the leaves of these names (functions or classes, in any selected
    /// module) and the leaves they depend on, at any depth, are planned.
    pub functions: Vec<String>,
}

/// Something of the source that is not in the plan, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Dotted name (`pkg.mod.func`, or a module's).
    pub name: String,
    pub reason: String,
}

/// A call edge left out because it would close a dependency cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedEdge {
    pub source: String,
    pub target: String,
    /// The path that already led from the target back to the source.
    pub cycle: Vec<String>,
}

/// What `extract` did, besides the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExtractSummary {
    pub packages: usize,
    pub modules: usize,
    pub functions: usize,
    pub classes: usize,
    /// Data leaves (module-level literals).
    pub data: usize,
    pub edges: usize,
    pub examples: usize,
    pub dropped_edges: Vec<DroppedEdge>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone)]
pub struct Extraction {
    pub rpg: Rpg,
    pub summary: ExtractSummary,
}

/// Reads every Python file of the packages and top-level modules under `dir` (or of the
/// package `dir` itself, when it has an `__init__.py`): only directories with an
/// `__init__.py` are descended into, never through a symbolic link, never into test suites
/// (`tests/`, `test_*.py`, `conftest.py`) or `setup.py`. Sorted by dotted name.
pub(crate) fn read_sources(dir: &Path) -> Result<Vec<SourceFile>, ExtractError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ExtractError::Io { path, source }
    };
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, Vec<String>)> = Vec::new();
    if dir.join("__init__.py").is_file() {
        let name = dir
            .canonicalize()
            .map_err(io(dir))?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        stack.push((dir.to_path_buf(), vec![name]));
    } else {
        stack.push((dir.to_path_buf(), Vec::new()));
    }
    while let Some((at, prefix)) = stack.pop() {
        let entries = std::fs::read_dir(&at).map_err(io(&at))?;
        for entry in entries {
            let entry = entry.map_err(io(&at))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(io(&path))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                if !TEST_DIRS.contains(&name.as_str()) && path.join("__init__.py").is_file() {
                    let mut inner = prefix.clone();
                    inner.push(name);
                    stack.push((path, inner));
                }
                continue;
            }
            let Some(stem) = name.strip_suffix(".py") else {
                continue;
            };
            let test_file = stem.starts_with("test_") || stem.ends_with("_test");
            if !kind.is_file() || test_file || matches!(stem, "conftest" | "setup") {
                continue;
            }
            let is_package = stem == "__init__";
            let mut parts = prefix.clone();
            if !is_package {
                parts.push(stem.to_string());
            }
            if parts.is_empty() {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            out.push(SourceFile {
                dotted: parts.join("."),
                is_package,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
    }
    if out.is_empty() {
        return Err(ExtractError::NoPython(dir.to_path_buf()));
    }
    out.sort_by(|a, b| a.dotted.cmp(&b.dotted));
    Ok(out)
}

/// The plan for `sources`, as the module doc describes it.
pub fn extract(
    sources: &[SourceFile],
    options: &ExtractOptions,
) -> Result<Extraction, ExtractError> {
    let mut summary = ExtractSummary::default();
    let modules = parse_modules(sources, &mut summary)?;
    let selected = select(&modules, &options.modules)?;

    // The leaves: (module, name) -> node, for the selected modules only.
    let mut leaves: BTreeMap<(String, String), Node> = BTreeMap::new();
    let mut calls: LeafCalls = BTreeMap::new();
    for dotted in &selected {
        if let Some(module) = modules.get(dotted) {
            function_leaves(
                dotted,
                module,
                options,
                (&mut leaves, &mut calls),
                &mut summary,
            );
        }
    }
    for dotted in &selected {
        data_leaves(&modules, dotted, &mut leaves, &mut summary);
    }
    let read = needed_data(
        (&modules, &selected, options),
        &mut leaves,
        &mut calls,
        &mut summary,
    );
    // A value reported as not plannable on its own, planned since a definition reads it.
    summary.skipped.retain(|s| !read.contains(&s.name));
    if leaves.is_empty() {
        return Err(ExtractError::NothingExtracted);
    }

    let (edges, needs) = edges_of(&modules, &leaves, &calls, &mut summary);
    let (leaves, edges) = keep_functions(leaves, edges, &needs, &summary, &options.functions)?;

    let kept: BTreeSet<String> = leaves.keys().map(|(m, _)| m.clone()).collect();
    let mut nodes = composites(&modules, &kept, options, &mut summary);
    for ((dotted, _), mut leaf) in leaves {
        leaf.subgraph_id = Some(subgraph_of(&dotted));
        leaf.dependencies = needs
            .get(leaf.id.as_str())
            .map(|n| n.iter().map(NodeId::from).collect())
            .unwrap_or_default();
        match leaf.kind {
            NodeKind::Class => summary.classes += 1,
            NodeKind::Data => summary.data += 1,
            _ => summary.functions += 1,
        }
        summary.examples += leaf.examples.len();
        nodes.push(leaf);
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    summary.edges = edges.len();
    summary.skipped.sort_by(|a, b| a.name.cmp(&b.name));

    let metadata = metadata_of(&modules, &kept, options);
    let rpg = Rpg {
        nodes,
        edges,
        metadata,
        extra: BTreeMap::new(),
    };
    validate(rpg.clone())
        .map_err(|errors| ExtractError::Invalid(errors.iter().map(|e| e.to_string()).collect()))?;
    Ok(Extraction { rpg, summary })
}

/// The public functions and classes of the selected module `dotted` as leaves, with what each
/// calls, reads and inherits; what cannot be planned goes to `summary.skipped` with why.
fn function_leaves(
    dotted: &str,
    module: &Module,
    options: &ExtractOptions,
    (leaves, calls): (&mut BTreeMap<(String, String), Node>, &mut LeafCalls),
    summary: &mut ExtractSummary,
) {
    let path = module_path(dotted, module.is_package);
    if let Some(reason) = path_problem(&path) {
        summary.skipped.push(Skipped {
            name: dotted.to_string(),
            reason: format!("its plan path `{path}` {reason}"),
        });
        return;
    }
    for skipped in &module.skipped {
        summary.skipped.push(Skipped {
            name: format!("{dotted}.{}", skipped.name),
            reason: skipped.reason.clone(),
        });
    }
    for def in module.defs.values() {
        if !module.is_public(&def.name) {
            continue;
        }
        match definition_leaf(dotted, module, def, options) {
            Ok((node, uses)) => {
                calls.insert(node.id.to_string(), uses);
                leaves.insert((dotted.to_string(), def.name.clone()), node);
            }
            Err(reason) => summary.skipped.push(Skipped {
                name: format!("{dotted}.{}", def.name),
                reason,
            }),
        }
    }
}

/// The leaf of the definition `def` of module `dotted`, with what it uses, or why it cannot
/// be one.
fn definition_leaf(
    dotted: &str,
    module: &Module,
    def: &read::Def,
    options: &ExtractOptions,
) -> Result<(Node, LeafUses), String> {
    let path = module_path(dotted, module.is_package);
    if module.is_package {
        return Err("defined in a package's `__init__.py`, which the engine writes itself".into());
    }
    if let Some(reason) = path_problem(&path) {
        return Err(format!("its plan path `{path}` {reason}"));
    }
    if !is_identifier(&def.name) {
        return Err("its name is not a Python identifier the plan accepts".into());
    }
    let node = leaf_node(def, &format!("{dotted}.{}", def.name), &path, options)?;
    let uses = LeafUses {
        module: dotted.to_string(),
        home: dotted.to_string(),
        calls: def.calls.clone(),
        bases: def.bases.clone(),
        reads: def.reads.clone(),
    };
    Ok((node, uses))
}

/// The composites: the modules that keep a leaf, and the packages above them.
fn composites(
    modules: &BTreeMap<String, Module>,
    kept: &BTreeSet<String>,
    options: &ExtractOptions,
    summary: &mut ExtractSummary,
) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut package_subgraph: BTreeMap<String, String> = BTreeMap::new();
    for dotted in kept {
        let subgraph = subgraph_of(dotted);
        let parts: Vec<&str> = dotted.split('.').collect();
        for end in 1..parts.len() {
            package_subgraph
                .entry(parts[..end].join("."))
                .or_insert_with(|| subgraph.clone());
        }
        let module = modules.get(dotted);
        nodes.push(composite(
            dotted,
            "module",
            module_path(dotted, false),
            module.and_then(|m| m.docstring.as_deref()),
            &subgraph,
            options,
        ));
        summary.modules += 1;
    }
    for (dotted, subgraph) in &package_subgraph {
        let docstring = modules
            .get(dotted)
            .filter(|m| m.is_package)
            .and_then(|m| m.docstring.as_deref());
        nodes.push(composite(
            dotted,
            "package",
            format!("src/{}", dotted.replace('.', "/")),
            docstring,
            subgraph,
            options,
        ));
        summary.packages += 1;
    }
    nodes
}

/// Every source parsed into a [`Module`]; a module shadowed by a package of its name is
/// skipped and said so.
fn parse_modules(
    sources: &[SourceFile],
    summary: &mut ExtractSummary,
) -> Result<BTreeMap<String, Module>, ExtractError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| ExtractError::Grammar(e.to_string()))?;
    let mut modules: BTreeMap<String, Module> = BTreeMap::new();
    let packages: BTreeSet<&str> = sources
        .iter()
        .filter(|s| s.is_package)
        .map(|s| s.dotted.as_str())
        .collect();
    for source in sources {
        if !source.is_package && packages.contains(source.dotted.as_str()) {
            summary.skipped.push(Skipped {
                name: source.dotted.clone(),
                reason: "a package of the same name takes its place on import".into(),
            });
            continue;
        }
        let Some(tree) = parser.parse(&source.text, None) else {
            return Err(ExtractError::Grammar("the parse was cancelled".into()));
        };
        modules.insert(
            source.dotted.clone(),
            read_module(source, tree.root_node(), &source.text),
        );
    }
    mark_reexports(&mut modules);
    Ok(modules)
}

/// What a leaf uses, as found: the module whose names it reads, the calls in its body, its
/// base classes and the names it reads.
struct LeafUses {
    /// The module in whose namespace its names resolve.
    module: String,
    /// The module it is planned in: `module`, but for a data leaf copied from a module the
    /// plan leaves out ([`needed`]).
    home: String,
    calls: Vec<Call>,
    bases: Vec<String>,
    reads: Vec<Call>,
}

type LeafCalls = BTreeMap<String, LeafUses>;
/// The planned leaves by (dotted module, name).
type Leaves = BTreeMap<(String, String), Node>;

/// The edges between leaves, in sorted order, and what each leaf needs; an edge that would
/// close a cycle is dropped and said so.
fn edges_of(
    modules: &BTreeMap<String, Module>,
    leaves: &BTreeMap<(String, String), Node>,
    calls: &LeafCalls,
    summary: &mut ExtractSummary,
) -> (Vec<Edge>, BTreeMap<String, BTreeSet<String>>) {
    let mut wanted: BTreeSet<(String, String, EdgeKindKey)> = BTreeSet::new();
    for (id, uses) in calls {
        let dotted = &uses.module;
        for call in &uses.calls {
            if let Some(target) = resolve_call(modules, dotted, call)
                .and_then(|key| leaves.get(&key))
                .filter(|t| &t.id != id && t.kind != NodeKind::Data)
            {
                wanted.insert((id.clone(), target.id.to_string(), EdgeKindKey::Call));
            }
        }
        for base in &uses.bases {
            let call = Call::from_text(base);
            if let Some(target) = call
                .and_then(|c| resolve_call(modules, dotted, &c))
                .and_then(|key| leaves.get(&key))
                .filter(|t| t.kind == NodeKind::Class && &t.id != id)
            {
                wanted.insert((id.clone(), target.id.to_string(), EdgeKindKey::Inherits));
            }
        }
        for read in &uses.reads {
            if let Some(target) =
                data_target(modules, leaves, dotted, &uses.home, read).filter(|t| &t.id != id)
            {
                wanted.insert((id.clone(), target.id.to_string(), EdgeKindKey::Reads));
            }
        }
    }
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut edges = Vec::new();
    for (source, target, kind) in wanted {
        if needs.get(&source).is_some_and(|n| n.contains(&target)) {
            continue; // a call and a base class: one dependency, the first edge says it
        }
        if let Some(cycle) = path_between(&needs, &target, &source) {
            summary.dropped_edges.push(DroppedEdge {
                source,
                target,
                cycle,
            });
            continue;
        }
        needs
            .entry(source.clone())
            .or_default()
            .insert(target.clone());
        edges.push(Edge {
            source: source.into(),
            target: target.into(),
            kind: match kind {
                EdgeKindKey::Call => EdgeKind::FunctionCall,
                EdgeKindKey::Inherits => EdgeKind::Inherits,
                EdgeKindKey::Reads => EdgeKind::Uses,
            },
        });
    }
    (edges, needs)
}

/// With `functions`, only the leaves of those names and what they need (a call dropped for
/// closing a cycle included: the caller still calls it), with the edges between them.
fn keep_functions(
    mut leaves: Leaves,
    mut edges: Vec<Edge>,
    needs: &BTreeMap<String, BTreeSet<String>>,
    summary: &ExtractSummary,
    functions: &[String],
) -> Result<(Leaves, Vec<Edge>), ExtractError> {
    if functions.is_empty() {
        return Ok((leaves, edges));
    }
    let unknown: Vec<&str> = functions
        .iter()
        .filter(|f| !leaves.keys().any(|(_, name)| name == *f))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(ExtractError::UnknownFunction {
            names: unknown.join(", "),
        });
    }
    let mut kept: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<String> = leaves
        .iter()
        .filter(|((_, name), _)| functions.contains(name))
        .map(|(_, node)| node.id.to_string())
        .collect();
    while let Some(id) = stack.pop() {
        if !kept.insert(id.clone()) {
            continue;
        }
        let dropped = summary
            .dropped_edges
            .iter()
            .filter(|d| d.source == id)
            .map(|d| &d.target);
        stack.extend(needs.get(&id).into_iter().flatten().chain(dropped).cloned());
    }
    leaves.retain(|_, node| kept.contains(node.id.as_str()));
    edges.retain(|e| kept.contains(e.source.as_str()) && kept.contains(e.target.as_str()));
    Ok((leaves, edges))
}

/// The plan's metadata: its name, a description from the package's docstring, where it came
/// from and, when given, its reference tests.
fn metadata_of(
    modules: &BTreeMap<String, Module>,
    kept: &BTreeSet<String>,
    options: &ExtractOptions,
) -> serde_json::Map<String, serde_json::Value> {
    let mut metadata = serde_json::Map::new();
    let project = options
        .project_name
        .clone()
        .or_else(|| {
            kept.first()
                .map(|d| d.split('.').next().unwrap_or(d).to_string())
        })
        .unwrap_or_default();
    metadata.insert("project_name".into(), project.clone().into());
    let description = modules
        .get(&project)
        .and_then(|m| m.docstring.as_deref())
        .map(first_paragraph)
        .unwrap_or_else(|| format!("`{project}`, extracted from its Python source."));
    metadata.insert("description".into(), description.into());
    metadata.insert("source".into(), "zerorepo rpg extract".into());
    if let Some(tests) = &options.reference_tests {
        metadata.insert("reference_tests".into(), tests.clone().into());
    }
    metadata
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EdgeKindKey {
    Call,
    Inherits,
    Reads,
}

/// The shortest path of dependencies from `from` to `to`, if there is one.
fn path_between(
    needs: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen = BTreeSet::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![to.to_string()];
            let mut step = to;
            while let Some(prev) = came_from.get(step) {
                path.push(prev.to_string());
                step = prev;
            }
            path.reverse();
            return Some(path);
        }
        for next in needs.get(at).into_iter().flatten() {
            if seen.insert(next.as_str()) {
                came_from.insert(next.as_str(), at);
                queue.push_back(next.as_str());
            }
        }
    }
    None
}

/// The modules to plan: all, or those `wanted` names (a package name means every module
/// beneath it).
fn select(
    modules: &BTreeMap<String, Module>,
    wanted: &[String],
) -> Result<Vec<String>, ExtractError> {
    if wanted.is_empty() {
        return Ok(modules.keys().cloned().collect());
    }
    let mut out = BTreeSet::new();
    for name in wanted {
        let inside = format!("{name}.");
        let matched: Vec<&String> = modules
            .keys()
            .filter(|m| *m == name || m.starts_with(&inside))
            .collect();
        if matched.is_empty() {
            let found: Vec<&str> = modules.keys().take(20).map(String::as_str).collect();
            return Err(ExtractError::UnknownModule {
                name: name.clone(),
                found: found.join(", "),
            });
        }
        out.extend(matched.into_iter().cloned());
    }
    Ok(out.into_iter().collect())
}

/// The plan path of a module: `src/a/b/m.py`, or a package's `__init__.py`.
fn module_path(dotted: &str, is_package: bool) -> String {
    let base = format!("src/{}", dotted.replace('.', "/"));
    match is_package {
        true => format!("{base}/__init__.py"),
        false => format!("{base}.py"),
    }
}

/// Why the validator would refuse `path` for a plan module, if it would.
fn path_problem(path: &str) -> Option<String> {
    if let Some(reason) = file_path_problem(path).or_else(|| reserved_path(path)) {
        return Some(reason.to_string());
    }
    if let Some((module, what)) = shadowed_module(path) {
        return Some(format!("would shadow {what} `{module}`"));
    }
    let parts: Vec<&str> = path.trim_end_matches(".py").split('/').collect();
    if parts.iter().any(|p| !is_identifier(p)) {
        return Some("has a component that is not a Python identifier".into());
    }
    let stem = parts.last().copied().unwrap_or_default();
    file_path_problem(&format!("tests/test_{stem}.py"))
        .map(|r| format!("gives a test file that {r}"))
}

/// A module's subgraph: its dotted name where a git tag takes it, else a cleaned form.
fn subgraph_of(dotted: &str) -> String {
    if subgraph_id_is_valid(dotted) {
        return dotted.to_string();
    }
    let cleaned: String = dotted
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                true => c,
                false => '_',
            },
        )
        .take(90)
        .collect();
    let cleaned = cleaned.trim_start_matches(['.', '_']).replace("..", ".");
    match subgraph_id_is_valid(&cleaned) {
        true => cleaned,
        false => "extracted".to_string(),
    }
}

#[cfg(test)]
mod tests;
