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
//!   value is not a literal (a compiled pattern, a computed table) is reported, not planned.
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
//! The result is run through [`super::validate`]; a plan that fails it is never returned.
//!
//! Everything here is pure except [`read_sources`], which only reads the source tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tree_sitter::{Node as TsNode, Parser};

use super::model::{Edge, EdgeKind, Node, NodeKind, NodeType, Rpg};
use super::validate::{
    MAX_DOCSTRING_BYTES, file_path_problem, reserved_path, shadowed_module, subgraph_id_is_valid,
    validate,
};
use crate::python::is_identifier;

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
pub struct Options {
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
pub struct Summary {
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
    pub summary: Summary,
}

/// Reads every Python file of the packages and top-level modules under `dir` (or of the
/// package `dir` itself, when it has an `__init__.py`): only directories with an
/// `__init__.py` are descended into, never through a symbolic link, never into test suites
/// (`tests/`, `test_*.py`, `conftest.py`) or `setup.py`. Sorted by dotted name.
pub fn read_sources(dir: &Path) -> Result<Vec<SourceFile>, ExtractError> {
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
pub fn extract(sources: &[SourceFile], options: &Options) -> Result<Extraction, ExtractError> {
    let mut summary = Summary::default();
    let modules = parse_modules(sources, &mut summary)?;
    let selected = select(&modules, &options.modules)?;

    // The leaves: (module, name) -> node, for the selected modules only.
    let mut leaves: BTreeMap<(String, String), Node> = BTreeMap::new();
    let mut calls: LeafCalls = BTreeMap::new();
    for dotted in &selected {
        let Some(module) = modules.get(dotted) else {
            continue;
        };
        let path = module_path(dotted, module.is_package);
        if let Some(reason) = path_problem(&path) {
            summary.skipped.push(Skipped {
                name: dotted.clone(),
                reason: format!("its plan path `{path}` {reason}"),
            });
            continue;
        }
        for skipped in &module.skipped {
            summary.skipped.push(Skipped {
                name: format!("{dotted}.{}", skipped.name),
                reason: skipped.reason.clone(),
            });
        }
        for def in module.defs.values() {
            let qualified = format!("{dotted}.{}", def.name);
            if !module.is_public(&def.name) {
                continue;
            }
            let reason = if module.is_package {
                Some("defined in a package's `__init__.py`, which the engine writes itself".into())
            } else if !is_identifier(&def.name) {
                Some("its name is not a Python identifier the plan accepts".into())
            } else {
                None
            };
            let leaf = reason.map_or_else(|| leaf_node(def, &qualified, &path, options), Err);
            match leaf {
                Ok(node) => {
                    calls.insert(
                        node.id.clone(),
                        LeafUses {
                            module: dotted.clone(),
                            calls: def.calls.clone(),
                            bases: def.bases.clone(),
                            reads: def.reads.clone(),
                        },
                    );
                    leaves.insert((dotted.clone(), def.name.clone()), node);
                }
                Err(reason) => summary.skipped.push(Skipped {
                    name: qualified,
                    reason,
                }),
            }
        }
    }
    for dotted in &selected {
        data_leaves(&modules, dotted, &mut leaves, &mut summary);
    }
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
            .get(&leaf.id)
            .map(|n| n.iter().cloned().collect())
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

/// The composites: the modules that keep a leaf, and the packages above them.
fn composites(
    modules: &BTreeMap<String, Module>,
    kept: &BTreeSet<String>,
    options: &Options,
    summary: &mut Summary,
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
    summary: &mut Summary,
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

/// What a definition leaf uses, as found: its module, the calls in its body, its base classes
/// and the names it reads.
struct LeafUses {
    module: String,
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
    summary: &mut Summary,
) -> (Vec<Edge>, BTreeMap<String, BTreeSet<String>>) {
    let mut wanted: BTreeSet<(String, String, EdgeKindKey)> = BTreeSet::new();
    for (id, uses) in calls {
        let dotted = &uses.module;
        for call in &uses.calls {
            if let Some(target) = resolve_call(modules, dotted, call)
                .and_then(|key| leaves.get(&key))
                .filter(|t| &t.id != id && t.kind != NodeKind::Data)
            {
                wanted.insert((id.clone(), target.id.clone(), EdgeKindKey::Call));
            }
        }
        for base in &uses.bases {
            let call = Call::from_text(base);
            if let Some(target) = call
                .and_then(|c| resolve_call(modules, dotted, &c))
                .and_then(|key| leaves.get(&key))
                .filter(|t| t.kind == NodeKind::Class && &t.id != id)
            {
                wanted.insert((id.clone(), target.id.clone(), EdgeKindKey::Inherits));
            }
        }
        for read in &uses.reads {
            if let Some(target) = resolve_call(modules, dotted, read)
                .and_then(|key| leaves.get(&key))
                .filter(|t| t.kind == NodeKind::Data)
            {
                wanted.insert((id.clone(), target.id.clone(), EdgeKindKey::Reads));
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
            source,
            target,
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
    summary: &Summary,
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
        .map(|(_, node)| node.id.clone())
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
    leaves.retain(|_, node| kept.contains(&node.id));
    edges.retain(|e| kept.contains(&e.source) && kept.contains(&e.target));
    Ok((leaves, edges))
}

/// The plan's metadata: its name, a description from the package's docstring, where it came
/// from and, when given, its reference tests.
fn metadata_of(
    modules: &BTreeMap<String, Module>,
    kept: &BTreeSet<String>,
    options: &Options,
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

fn composite(
    dotted: &str,
    kind: &str,
    file_path: String,
    docstring: Option<&str>,
    subgraph: &str,
    options: &Options,
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
        id: dotted.to_string(),
        name,
        kind: kind.into(),
        node_type: NodeType::Composite,
        file_path: Some(file_path),
        docstring: Some(docstring),
        dependencies: Vec::new(),
        subgraph_id: Some(subgraph.to_string()),
        signature: None,
        examples: Vec::new(),
        parent,
        value: None,
        extra: BTreeMap::new(),
    }
}

/// The data leaves of module `dotted`: its public module-level literals, each with its value
/// (see the module doc); what cannot be one is reported.
fn data_leaves(
    modules: &BTreeMap<String, Module>,
    dotted: &str,
    leaves: &mut BTreeMap<(String, String), Node>,
    summary: &mut Summary,
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
                    data_node(&qualified, name, &path, docstring, value),
                );
            }
            Err(reason) => summary.skipped.push(Skipped {
                name: qualified,
                reason,
            }),
        }
    }
}

fn data_node(id: &str, name: &str, path: &str, docstring: String, value: &str) -> Node {
    Node {
        id: id.to_string(),
        name: name.to_string(),
        kind: NodeKind::Data,
        node_type: NodeType::Leaf,
        file_path: Some(path.to_string()),
        docstring: Some(docstring),
        dependencies: Vec::new(),
        subgraph_id: None,
        signature: None,
        examples: Vec::new(),
        parent: id.rsplit_once('.').map(|(m, _)| m.to_string()),
        value: Some(value.to_string()),
        extra: BTreeMap::new(),
    }
}

/// The leaf of one definition, or why it cannot be one.
fn leaf_node(def: &Def, id: &str, path: &str, options: &Options) -> Result<Node, String> {
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
        id: id.to_string(),
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
        parent: id.rsplit_once('.').map(|(m, _)| m.to_string()),
        value: None,
        extra: BTreeMap::new(),
    })
}

fn first_paragraph(doc: &str) -> String {
    doc.split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------------------------
// Reading one module.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DefKind {
    Function,
    Class,
}

#[derive(Debug, Clone)]
struct Method {
    signature: String,
    docstring: Option<String>,
}

/// One top-level definition.
#[derive(Debug, Clone)]
struct Def {
    name: String,
    kind: DefKind,
    signature: String,
    docstring: Option<String>,
    calls: Vec<Call>,
    /// Names and dotted names read anywhere in the definition (for `uses` edges to data).
    reads: Vec<Call>,
    /// A class's base classes, as written.
    bases: Vec<String>,
    methods: Vec<Method>,
}

/// A called name: `g` or `a.b.g` (the object a dotted path of names).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    object: Vec<String>,
    name: String,
}

impl Call {
    fn from_text(text: &str) -> Option<Call> {
        let mut parts: Vec<String> = text.split('.').map(|p| p.trim().to_string()).collect();
        if parts.iter().any(|p| !is_identifier(p)) {
            return None;
        }
        let name = parts.pop()?;
        Some(Call {
            object: parts,
            name,
        })
    }
}

/// Where a name bound by an import comes from.
#[derive(Debug, Clone)]
enum Binding {
    /// `from module import name`: a name of `module` (or its submodule `module.name`).
    Name { module: String, name: String },
    /// `import a.b as m`: the module itself.
    Module(String),
}

#[derive(Debug, Clone, Default)]
struct Module {
    is_package: bool,
    docstring: Option<String>,
    /// `__all__` when it is a literal list or tuple of strings.
    all: Option<BTreeSet<String>>,
    defs: BTreeMap<String, Def>,
    /// Top-level assignments of one name to a literal, by name.
    data: BTreeMap<String, DataDef>,
    imports: BTreeMap<String, Binding>,
    wildcards: Vec<String>,
    skipped: Vec<Skipped>,
    /// Names of this module that a package's `__init__.py` imports by name.
    reexported: BTreeSet<String>,
}

impl Module {
    fn is_public(&self, name: &str) -> bool {
        self.reexported.contains(name)
            || match &self.all {
                Some(all) => all.contains(name),
                None => !name.starts_with('_'),
            }
    }
}

/// Marks in each module the names a package's `__init__.py` imports from it by name.
fn mark_reexports(modules: &mut BTreeMap<String, Module>) {
    let reexports: Vec<(String, String)> = modules
        .values()
        .filter(|m| m.is_package)
        .flat_map(|m| m.imports.values())
        .filter_map(|binding| match binding {
            Binding::Name { module, name } => Some((module.clone(), name.clone())),
            Binding::Module(_) => None,
        })
        .collect();
    for (module, name) in reexports {
        if let Some(at) = modules.get_mut(&module)
            && (at.defs.contains_key(&name) || at.data.contains_key(&name))
        {
            at.reexported.insert(name);
        }
    }
}

fn text<'a>(node: TsNode<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

fn read_module(file: &SourceFile, root: TsNode<'_>, source: &str) -> Module {
    let mut module = Module {
        is_package: file.is_package,
        docstring: docstring_of(root, source),
        ..Module::default()
    };
    let package = match file.is_package {
        true => file.dotted.clone(),
        false => file
            .dotted
            .rsplit_once('.')
            .map(|(p, _)| p.to_string())
            .unwrap_or_default(),
    };
    // Imports at any depth: a function-local import binds the name where it is called.
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "import_statement" => read_import(node, source, &mut module),
            "import_from_statement" => read_from_import(node, source, &package, &mut module),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
    let mut cursor = root.walk();
    let statements: Vec<TsNode<'_>> = root.named_children(&mut cursor).collect();
    for (at, &statement) in statements.iter().enumerate() {
        let definition = match statement.kind() {
            "decorated_definition" => statement.child_by_field_name("definition"),
            "function_definition" | "class_definition" => Some(statement),
            "expression_statement" => {
                read_all(statement, source, &mut module);
                read_data(&statements, at, source, &mut module);
                None
            }
            _ => None,
        };
        let Some(definition) = definition else {
            continue;
        };
        let Some(def) = read_def(definition, source) else {
            continue;
        };
        if module.defs.contains_key(&def.name) {
            module.skipped.push(Skipped {
                name: def.name.clone(),
                reason: "defined more than once; the last definition is planned".into(),
            });
        }
        module.defs.insert(def.name.clone(), def);
    }
    module.skipped.sort_by(|a, b| a.name.cmp(&b.name));
    module.skipped.dedup();
    module
}

fn read_import(node: TsNode<'_>, source: &str, module: &mut Module) {
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        match name.kind() {
            "aliased_import" => {
                let (Some(dotted), Some(alias)) = (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ) else {
                    continue;
                };
                module.imports.insert(
                    text(alias, source).to_string(),
                    Binding::Module(text(dotted, source).to_string()),
                );
            }
            _ => {
                // `import a.b` binds `a`; `a.b.g(...)` is then resolved through the dotted path.
                let dotted = text(name, source);
                let first = dotted.split('.').next().unwrap_or(dotted);
                module
                    .imports
                    .insert(first.to_string(), Binding::Module(first.to_string()));
            }
        }
    }
}

fn read_from_import(node: TsNode<'_>, source: &str, package: &str, module: &mut Module) {
    let Some(from) = node.child_by_field_name("module_name") else {
        return;
    };
    let from_text = text(from, source);
    let absolute = if from.kind() == "relative_import" {
        let dots = from_text.chars().take_while(|c| *c == '.').count();
        let rest = &from_text[dots..];
        let mut base: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
        for _ in 1..dots {
            base.pop();
        }
        if !rest.is_empty() {
            base.push(rest);
        }
        base.join(".")
    } else {
        from_text.to_string()
    };
    let mut cursor = node.walk();
    if node
        .named_children(&mut cursor)
        .any(|c| c.kind() == "wildcard_import")
    {
        module.wildcards.push(absolute);
        return;
    }
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        let (original, local) = match name.kind() {
            "aliased_import" => {
                let (Some(n), Some(a)) = (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ) else {
                    continue;
                };
                (text(n, source), text(a, source))
            }
            _ => (text(name, source), text(name, source)),
        };
        module.imports.insert(
            local.to_string(),
            Binding::Name {
                module: absolute.clone(),
                name: original.to_string(),
            },
        );
    }
}

/// A module-level assignment of one name as data: its value as written, whether it is a
/// literal, and its docstring.
#[derive(Debug, Clone)]
struct DataDef {
    /// The value's source, or why it is not a literal the plan can hold.
    value: Result<String, crate::python::LiteralError>,
    /// The comment block above the assignment, or the string after it.
    docstring: Option<String>,
    /// What the value is, for a docstring of its own (`a dict of 3 entries`).
    what: String,
    /// How a later module-level statement changed it (`+=`, `NAME[k] = v`, ...), if one did.
    rebound: Option<String>,
}

/// Reads statement `at` of the module for data: `NAME = VALUE` (or `NAME: T = VALUE`) records
/// the name; a later `NAME += ...`, `NAME[k] = v`, `NAME.x = v` or `NAME.method(...)` marks
/// it changed. Dunder names are never data.
fn read_data(statements: &[TsNode<'_>], at: usize, source: &str, module: &mut Module) {
    let Some(expression) = statements[at].named_child(0) else {
        return;
    };
    if let Some((name, how)) = rebinding(expression, source)
        && let Some(data) = module.data.get_mut(name)
    {
        data.rebound.get_or_insert(how);
        return;
    }
    if expression.kind() != "assignment" {
        return;
    }
    let (Some(left), Some(right)) = (
        expression.child_by_field_name("left"),
        expression.child_by_field_name("right"),
    ) else {
        return;
    };
    let name = text(left, source);
    let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    if left.kind() != "identifier" || right.kind() == "assignment" || dunder {
        return;
    }
    let value = text(right, source).replace("\r\n", "\n");
    let checked = crate::python::check_literal(&value).map(|()| value);
    let data = DataDef {
        value: checked,
        docstring: attribute_docstring(statements, at, source)
            .or_else(|| comments_above(statements, at, source)),
        what: describe(right, source),
        rebound: None,
    };
    if module.data.insert(name.to_string(), data).is_some() {
        module.skipped.push(Skipped {
            name: name.to_string(),
            reason: "assigned more than once at module level; the last assignment is planned"
                .into(),
        });
    }
}

/// The name a module-level statement changes without assigning it anew, and how.
fn rebinding<'s>(expression: TsNode<'_>, source: &'s str) -> Option<(&'s str, String)> {
    let root_name = |mut node: TsNode<'_>| {
        while matches!(node.kind(), "attribute" | "subscript") {
            node = node.child_by_field_name(match node.kind() {
                "attribute" => "object",
                _ => "value",
            })?;
        }
        (node.kind() == "identifier").then(|| text(node, source))
    };
    match expression.kind() {
        "augmented_assignment" => {
            let left = expression.child_by_field_name("left")?;
            let operator = expression.child_by_field_name("operator")?;
            (left.kind() == "identifier")
                .then(|| (text(left, source), format!("`{}`", text(operator, source))))
        }
        "assignment" => {
            let left = expression.child_by_field_name("left")?;
            let how = match left.kind() {
                "subscript" => "an item assigned",
                "attribute" => "an attribute assigned",
                _ => return None,
            };
            Some((root_name(left)?, how.to_string()))
        }
        "call" => {
            let function = expression.child_by_field_name("function")?;
            let method = function.child_by_field_name("attribute")?;
            let object = function.child_by_field_name("object")?;
            (function.kind() == "attribute").then_some(())?;
            Some((
                root_name(object)?,
                format!("`.{}(...)` called on it", text(method, source)),
            ))
        }
        _ => None,
    }
}

/// The string statement right after assignment `at`: the attribute docstring convention.
fn attribute_docstring(statements: &[TsNode<'_>], at: usize, source: &str) -> Option<String> {
    let next = statements.get(at + 1)?;
    if next.kind() != "expression_statement" || next.named_child_count() != 1 {
        return None;
    }
    let value = string_value(next.named_child(0)?, source)?;
    let cleaned = cleandoc(&value);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The block of whole-line comments right above statement `at` (`#` or `#:` stripped).
fn comments_above(statements: &[TsNode<'_>], at: usize, source: &str) -> Option<String> {
    let mut lines = Vec::new();
    let mut next_row = statements[at].start_position().row;
    for comment in statements[..at].iter().rev() {
        let adjacent = comment.end_position().row + 1 == next_row;
        if comment.kind() != "comment" || comment.start_position().column != 0 || !adjacent {
            break;
        }
        let line = text(*comment, source).trim_start_matches('#');
        let line = line.strip_prefix(':').unwrap_or(line);
        lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
        next_row = comment.start_position().row;
    }
    lines.reverse();
    let doc = lines.join("\n").trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

/// What a value is, in a few words (`a dict of 3 entries`, `a string`).
fn describe(value: TsNode<'_>, source: &str) -> String {
    let count = |node: TsNode<'_>| {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .count()
    };
    let of = |what: &str, node: TsNode<'_>| match count(node) {
        1 => format!("{what} of 1 entry"),
        n => format!("{what} of {n} entries"),
    };
    match value.kind() {
        "dictionary" => of("a dict", value),
        "list" => of("a list", value),
        "tuple" => of("a tuple", value),
        "set" => of("a set", value),
        "string" | "concatenated_string" => "a string".into(),
        "integer" | "float" | "unary_operator" => "a number".into(),
        "true" | "false" => "a bool".into(),
        "none" => "None".into(),
        "call" => value
            .child_by_field_name("function")
            .map(|f| format!("a `{}(...)`", text(f, source)))
            .unwrap_or_else(|| "a value".into()),
        _ => "a value".into(),
    }
}

/// `__all__ = [...]` or `__all__ += [...]` with string literals only; anything else there
/// makes `__all__` unknown (the `_` rule decides).
fn read_all(statement: TsNode<'_>, source: &str, module: &mut Module) {
    let Some(assignment) = statement.named_child(0) else {
        return;
    };
    let augmented = match assignment.kind() {
        "assignment" => false,
        "augmented_assignment" => true,
        _ => return,
    };
    let (Some(left), Some(right)) = (
        assignment.child_by_field_name("left"),
        assignment.child_by_field_name("right"),
    ) else {
        return;
    };
    if text(left, source) != "__all__" {
        return;
    }
    let mut names = BTreeSet::new();
    let literal = matches!(right.kind(), "list" | "tuple") && {
        let mut cursor = right.walk();
        right
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .all(|item| match string_value(item, source) {
                Some(name) => {
                    names.insert(name);
                    true
                }
                None => false,
            })
    };
    module.all = match (literal, augmented, module.all.take()) {
        (false, _, _) => None,
        (true, true, Some(mut before)) => {
            before.extend(names);
            Some(before)
        }
        (true, true, None) => None,
        (true, false, _) => Some(names),
    };
}

fn read_def(definition: TsNode<'_>, source: &str) -> Option<Def> {
    let name = text(definition.child_by_field_name("name")?, source).to_string();
    let body = definition.child_by_field_name("body")?;
    let docstring = docstring_of(body, source);
    let mut calls = BTreeSet::new();
    collect_calls(body, source, &mut calls);
    let reads = collect_reads(definition, source);
    match definition.kind() {
        "function_definition" => Some(Def {
            signature: function_signature(definition, source)?,
            name,
            kind: DefKind::Function,
            docstring,
            calls: calls.into_iter().collect(),
            reads,
            bases: Vec::new(),
            methods: Vec::new(),
        }),
        "class_definition" => {
            let mut bases = Vec::new();
            let mut signature = format!("class {name}");
            if let Some(params) = definition.child_by_field_name("type_parameters") {
                signature.push_str(&one_line(text(params, source)));
            }
            if let Some(superclasses) = definition.child_by_field_name("superclasses") {
                let mut cursor = superclasses.walk();
                let args: Vec<String> = superclasses
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .map(|c| one_line(text(c, source)))
                    .collect();
                bases = args.clone();
                if !args.is_empty() {
                    signature.push_str(&format!("({})", args.join(", ")));
                }
            }
            Some(Def {
                name,
                kind: DefKind::Class,
                signature,
                docstring,
                calls: calls.into_iter().collect(),
                reads,
                bases,
                methods: methods_of(body, source),
            })
        }
        _ => None,
    }
}

/// A class's public methods (dunders included), in source order.
fn methods_of(body: TsNode<'_>, source: &str) -> Vec<Method> {
    let mut out = Vec::new();
    let mut cursor = body.walk();
    for statement in body.named_children(&mut cursor) {
        let definition = match statement.kind() {
            "decorated_definition" => statement.child_by_field_name("definition"),
            "function_definition" => Some(statement),
            _ => None,
        };
        let Some(definition) = definition.filter(|d| d.kind() == "function_definition") else {
            continue;
        };
        let Some(name) = definition.child_by_field_name("name") else {
            continue;
        };
        let name = text(name, source);
        let dunder = name.starts_with("__") && name.ends_with("__") && name.len() > 4;
        if name.starts_with('_') && !dunder {
            continue;
        }
        let Some(signature) = function_signature(definition, source) else {
            continue;
        };
        let docstring = definition
            .child_by_field_name("body")
            .and_then(|b| docstring_of(b, source));
        out.push(Method {
            signature,
            docstring,
        });
    }
    out
}

/// `def name(params) -> ret` on one line: parameters joined by `, `, comments left out.
fn function_signature(definition: TsNode<'_>, source: &str) -> Option<String> {
    let name = text(definition.child_by_field_name("name")?, source);
    let parameters = definition.child_by_field_name("parameters")?;
    let is_async = {
        let mut cursor = definition.walk();
        definition
            .children(&mut cursor)
            .any(|c| c.kind() == "async")
    };
    let mut cursor = parameters.walk();
    let params: Vec<String> = parameters
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .map(|c| one_line(text(c, source)))
        .collect();
    let mut signature = format!(
        "{}def {name}",
        match is_async {
            true => "async ",
            false => "",
        }
    );
    if let Some(type_params) = definition.child_by_field_name("type_parameters") {
        signature.push_str(&one_line(text(type_params, source)));
    }
    signature.push_str(&format!("({})", params.join(", ")));
    if let Some(returns) = definition.child_by_field_name("return_type") {
        signature.push_str(&format!(" -> {}", one_line(text(returns, source))));
    }
    Some(signature)
}

/// Text spread over lines joined into one: each line break and the indentation after it
/// becomes one space (none after an opening or before a closing bracket).
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = match i {
            0 => line.trim_end(),
            _ => line.trim(),
        };
        if line.is_empty() {
            continue;
        }
        let glue = !out.is_empty()
            && !out.ends_with(['(', '[', '{'])
            && !line.starts_with([')', ']', '}']);
        if glue {
            out.push(' ');
        }
        out.push_str(line);
    }
    out.replace(",)", ")").replace(",]", "]")
}

/// The names and dotted names (`NAME`, `m.NAME`) read anywhere in `definition`: its body,
/// its parameters' defaults and annotations. An attribute of something else (`x.NAME`) and a
/// keyword argument's name are not reads of a module's name.
fn collect_reads(definition: TsNode<'_>, source: &str) -> Vec<Call> {
    let mut reads = BTreeSet::new();
    let mut stack = vec![definition];
    while let Some(node) = stack.pop() {
        let field_of = |parent: &str, field: &str| {
            node.parent().is_some_and(|p| {
                p.kind() == parent
                    && p.child_by_field_name(field)
                        .is_some_and(|c| c.id() == node.id())
            })
        };
        let read = match node.kind() {
            "identifier" => {
                !field_of("attribute", "attribute") && !field_of("keyword_argument", "name")
            }
            "attribute" => true,
            _ => false,
        };
        if read && let Some(call) = Call::from_text(text(node, source)) {
            reads.insert(call);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    reads.into_iter().collect()
}

fn collect_calls(body: TsNode<'_>, source: &str, calls: &mut BTreeSet<Call>) {
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if node.kind() == "call"
            && let Some(function) = node.child_by_field_name("function")
            && matches!(function.kind(), "identifier" | "attribute")
            && let Some(call) = Call::from_text(text(function, source))
        {
            calls.insert(call);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
}

/// The `(module, name)` of the planned definition `call` reaches from `module`, if any.
fn resolve_call(
    modules: &BTreeMap<String, Module>,
    module: &str,
    call: &Call,
) -> Option<(String, String)> {
    if call.object.is_empty() {
        return resolve_name(modules, module, &call.name, 0);
    }
    // `m.g(...)`: `m` (or `a.b`) must name a module of the source.
    let first = &call.object[0];
    let base = match modules.get(module)?.imports.get(first)? {
        Binding::Module(name) => name.clone(),
        Binding::Name { module, name } => format!("{module}.{name}"),
    };
    let target: Vec<&str> = std::iter::once(base.as_str())
        .chain(call.object[1..].iter().map(String::as_str))
        .collect();
    let target = target.join(".");
    modules.contains_key(&target).then_some(())?;
    resolve_name(modules, &target, &call.name, 0)
}

/// Where `name`, as seen from `module`, is defined: in it, or through its imports.
fn resolve_name(
    modules: &BTreeMap<String, Module>,
    module: &str,
    name: &str,
    hops: usize,
) -> Option<(String, String)> {
    if hops > MAX_HOPS {
        return None;
    }
    let at = modules.get(module)?;
    if at.defs.contains_key(name) || at.data.contains_key(name) {
        return Some((module.to_string(), name.to_string()));
    }
    if let Some(Binding::Name {
        module: from,
        name: original,
    }) = at.imports.get(name)
    {
        return resolve_name(modules, from, original, hops + 1);
    }
    at.wildcards.iter().find_map(|from| {
        let found = modules.get(from)?;
        found
            .is_public(name)
            .then(|| resolve_name(modules, from, name, hops + 1))
            .flatten()
    })
}

// ---------------------------------------------------------------------------------------------
// Docstrings.

/// The docstring of a module or a block: its first statement when that is a string literal
/// (implicit concatenation included; f-strings and bytes are not docstrings), cleaned.
fn docstring_of(block: TsNode<'_>, source: &str) -> Option<String> {
    let mut cursor = block.walk();
    let first = block
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let literal = first.named_child(0)?;
    let raw = match literal.kind() {
        "string" => string_value(literal, source)?,
        "concatenated_string" => {
            let mut cursor = literal.walk();
            let parts: Option<Vec<String>> = literal
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "string")
                .map(|c| string_value(c, source))
                .collect();
            parts?.concat()
        }
        _ => return None,
    };
    let cleaned = cleandoc(&raw);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The value of a plain (not f-, not bytes) string literal.
fn string_value(node: TsNode<'_>, source: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let literal = text(node, source);
    let quote_at = literal.find(['"', '\''])?;
    let prefix = literal[..quote_at].to_ascii_lowercase();
    if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
        return None;
    }
    let body = &literal[quote_at..];
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|q| body.starts_with(q) && body.len() >= 2 * q.len() && body.ends_with(q))?;
    let inner = &body[quote.len()..body.len() - quote.len()];
    Some(match prefix.contains('r') {
        true => inner.to_string(),
        false => unescape(inner),
    })
}

/// Python's escape sequences in a non-raw string.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let digits: String = (0..n).filter_map(|_| chars.next()).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or(digits)
        };
        match next {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            'x' | 'u' | 'U' => {
                let n = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                match hex(&mut chars, n) {
                    Ok(c) => out.push(c),
                    Err(digits) => {
                        out.push('\\');
                        out.push(next);
                        out.push_str(&digits);
                    }
                }
            }
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// `inspect.cleandoc`: tabs expanded, the first line stripped, the common indentation of the
/// others removed, blank lines at both ends dropped; trailing spaces are dropped too.
pub fn cleandoc(doc: &str) -> String {
    let lines: Vec<String> = doc.lines().map(expand_tabs).collect();
    let margin = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            0 => l.trim().to_string(),
            _ => l.get(margin..).unwrap_or_default().trim_end().to_string(),
        })
        .collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let start = out.iter().position(|l| !l.is_empty()).unwrap_or(out.len());
    out[start..].join("\n")
}

fn expand_tabs(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c == '\t' {
            let pad = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.push(c);
        }
    }
    out
}

/// A cleaned docstring split into its text without doctest examples, and the examples, one
/// per block (a `>>>` line, its `...` continuations and output, up to a blank line),
/// dedented to their prompt.
pub fn split_examples(doc: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = doc.lines().collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut examples = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.trim_start().starts_with(">>>") {
            kept.push(line);
            i += 1;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut block = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() {
            let l = lines[i];
            let cut = (l.len() - l.trim_start().len()).min(indent);
            block.push(&l[cut..]);
            i += 1;
        }
        examples.push(block.join("\n"));
    }
    (tidy(&kept), examples)
}

/// Text left after examples were taken out: example headings with nothing under them
/// dropped, runs of blank lines made one.
fn tidy(lines: &[&str]) -> String {
    let is_heading = |l: &str| {
        let t = l.trim().trim_end_matches(':').to_ascii_lowercase();
        matches!(
            t.as_str(),
            "example" | "examples" | "usage" | "doctest" | "doctests"
        )
    };
    let is_rule = |l: &str| {
        let t = l.trim();
        t.len() >= 3 && t.chars().all(|c| c == '-' || c == '=')
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_heading(line) {
            let mut next = i + 1;
            if next < lines.len() && is_rule(lines[next]) {
                next += 1;
            }
            let mut after = next;
            while after < lines.len() && lines[after].trim().is_empty() {
                after += 1;
            }
            let ruled = next > i + 1;
            let empty = after == lines.len()
                || match ruled {
                    // numpy style: the section's text is not indented; the next heading is.
                    true => after + 1 < lines.len() && is_rule(lines[after + 1]),
                    false => indent(lines[after]) <= indent(line),
                };
            if empty {
                i = next;
                continue;
            }
        }
        let blank = line.trim().is_empty();
        if blank && out.last().is_none_or(|l| l.trim().is_empty()) {
            i += 1;
            continue;
        }
        out.push(line);
        i += 1;
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests;
