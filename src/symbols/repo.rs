//! Repository-wide views built on the outline: the Python files of a repository, symbol
//! lookup by plain or qualified name, and name-based references.
//!
//! Lookups go through [`SymbolIndex`], which keeps each file's outline keyed by its size,
//! mtime and inode, so a caller asking for symbol after symbol re-parses only files
//! that changed. A file is parsed at all only if its text contains the name asked for.
//!
//! Name-based references are the fallback when no language server is installed: every
//! identifier spelled like the name, in code (strings and comments are not identifiers to
//! tree-sitter). They cannot tell two `mean`s apart, so every result says `approximate`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tree_sitter::Node;

use super::outline::{OutlineError, Symbol, locate_all, parse};
use crate::python::is_name_char;

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Outline(#[from] OutlineError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RepoError + '_ {
    move |source| RepoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The label of name-based results.
pub(crate) const TREE_SITTER_BACKEND: &str = "tree-sitter (approximate)";

/// A definition somewhere in the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolMatch {
    /// Relative to the repository root.
    pub file: PathBuf,
    /// Dotted module path of the file (`pkg.stats`).
    pub module: String,
    pub symbol: Symbol,
}

/// One place a name is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameUse {
    pub file: PathBuf,
    /// 1-based line and column (column counted in bytes).
    pub line: usize,
    pub column: usize,
    pub start_byte: usize,
    pub end_byte: usize,
    /// `definition`, `import`, `attribute`, `keyword` or `reference`.
    pub role: &'static str,
    /// The line, trimmed.
    pub text: String,
}

/// References of a symbol, with the backend that found them.
#[derive(Debug, Clone, Serialize)]
pub struct References {
    pub name: String,
    pub backend: String,
    /// True when the result may hold unrelated uses of the same name or miss aliased ones.
    pub approximate: bool,
    /// Why the backend was chosen (e.g. no language server installed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub references: Vec<NameUse>,
}

/// Directories never searched: hidden ones, caches, and virtual environments (recognised by
/// their `pyvenv.cfg`, whatever they are called).
fn skip_dir(path: &Path, name: &str) -> bool {
    name.starts_with('.')
        || name == "__pycache__"
        || name == "node_modules"
        || path.join("pyvenv.cfg").is_file()
}

/// Every `*.py` file under `root`, relative, sorted.
pub(crate) fn python_files(root: &Path) -> Result<Vec<PathBuf>, RepoError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().map_err(io_err(&path))?;
            if kind.is_dir() {
                if !skip_dir(&path, &name) {
                    stack.push(path);
                }
            } else if kind.is_file()
                && name.ends_with(".py")
                && let Ok(rel) = path.strip_prefix(root)
            {
                out.push(rel.to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `pkg/stats.py` → `pkg.stats`; `pkg/__init__.py` → `pkg`.
pub(crate) fn module_name(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "__init__") {
        parts.pop();
    }
    parts.join(".")
}

/// Whether `query` names `symbol` of `module`: the plain name, the qualified name, or a
/// dotted suffix of `module.qualified_name` (`stats.Summary.mean`).
pub fn matches(query: &str, module: &str, symbol: &Symbol) -> bool {
    if symbol.name == query || symbol.qualified_name == query {
        return true;
    }
    if !query.contains('.') {
        return false;
    }
    let full = format!("{module}.{}", symbol.qualified_name);
    full == query
        || full
            .strip_suffix(query)
            .is_some_and(|head| head.ends_with('.'))
}

/// The last dotted component: the text a file must contain to define or use `query`.
fn needle(query: &str) -> &str {
    query.rsplit('.').next().unwrap_or(query)
}

/// Whether `name` occurs right after the keyword `def` or `class` (and whitespace).
fn defines(source: &str, name: &str) -> bool {
    source.match_indices(name).any(|(at, _)| {
        let after = source[at + name.len()..].chars().next();
        if after.is_some_and(is_name_char) {
            return false;
        }
        let head = source[..at].trim_end_matches([' ', '\t', '\\', '\n', '\r']);
        if head.len() == at {
            return false;
        }
        ["def", "class"].iter().any(|kw| {
            head.strip_suffix(kw)
                .is_some_and(|before| !before.chars().next_back().is_some_and(is_name_char))
        })
    })
}

/// A cheap text test that never rejects a file defining `query` (so only files that pass
/// are parsed): the last component must follow `def`/`class`, and for a dotted query the
/// component before it must be in the text (a class or function) or be the file's own
/// module name (`stats.mean` in `pkg/stats.py`).
fn could_define(source: &str, query: &str, module: &str) -> bool {
    let mut parts = query.rsplit('.');
    let Some(last) = parts.next() else {
        return false;
    };
    if !defines(source, last) {
        return false;
    }
    match parts.next() {
        None | Some("<locals>") => true,
        Some(outer) => source.contains(outer) || module.rsplit('.').next() == Some(outer),
    }
}

#[derive(Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    Stamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: meta.ino(),
    }
}

/// A file's outline and the stamp of the text it came from.
type Cached = (Stamp, Arc<Vec<Symbol>>);

/// Outlines of a repository's files, re-parsed only when a file changes.
#[derive(Default)]
pub struct SymbolIndex {
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

impl SymbolIndex {
    /// Every definition `query` names, in file order then source order.
    pub fn find(&self, root: &Path, query: &str) -> Result<Vec<SymbolMatch>, RepoError> {
        let mut out = Vec::new();
        for rel in python_files(root)? {
            let path = root.join(&rel);
            let meta = std::fs::metadata(&path).map_err(io_err(&path))?;
            let stamp = stamp(&meta);
            let cached = self
                .cache
                .lock()
                .ok()
                .and_then(|c| c.get(&rel).filter(|(s, _)| *s == stamp).cloned());
            let symbols = match cached {
                Some((_, symbols)) => symbols,
                None => {
                    let bytes = std::fs::read(&path).map_err(io_err(&path))?;
                    let Ok(source) = String::from_utf8(bytes) else {
                        continue;
                    };
                    if !could_define(&source, query, &module_name(&rel)) {
                        continue;
                    }
                    let symbols: Arc<Vec<Symbol>> =
                        Arc::new(locate_all(&source)?.into_iter().map(|l| l.symbol).collect());
                    if let Ok(mut cache) = self.cache.lock() {
                        cache.insert(rel.clone(), (stamp, symbols.clone()));
                    }
                    symbols
                }
            };
            let module = module_name(&rel);
            out.extend(
                symbols
                    .iter()
                    .filter(|s| matches(query, &module, s))
                    .map(|s| SymbolMatch {
                        file: rel.clone(),
                        module: module.clone(),
                        symbol: s.clone(),
                    }),
            );
        }
        Ok(out)
    }
}

/// One-shot lookup without a cache.
pub fn find_symbol(root: &Path, query: &str) -> Result<Vec<SymbolMatch>, RepoError> {
    SymbolIndex::default().find(root, query)
}

/// Every identifier spelled `name` (the last component of a dotted name) in the repository.
pub(crate) fn name_references(root: &Path, name: &str) -> Result<References, RepoError> {
    let needle = needle(name);
    let mut references = Vec::new();
    for rel in python_files(root)? {
        let path = root.join(&rel);
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        if source.contains(needle) {
            references.extend(
                identifiers_named(&source, needle)?
                    .into_iter()
                    .map(|mut r| {
                        r.file = rel.clone();
                        r
                    }),
            );
        }
    }
    Ok(References {
        name: name.to_string(),
        backend: TREE_SITTER_BACKEND.into(),
        approximate: true,
        note: None,
        references,
    })
}

/// Identifiers of one source spelled `name` (file left empty for the caller to fill).
pub(crate) fn identifiers_named(source: &str, name: &str) -> Result<Vec<NameUse>, OutlineError> {
    let tree = parse(source)?;
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" {
            if source.get(node.start_byte()..node.end_byte()) == Some(name) {
                out.push(reference(node, source));
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort_by_key(|r| r.start_byte);
    Ok(out)
}

fn role(node: Node) -> &'static str {
    let Some(parent) = node.parent() else {
        return "reference";
    };
    let is_field = |field: &str| {
        parent
            .child_by_field_name(field)
            .is_some_and(|c| c.id() == node.id())
    };
    match parent.kind() {
        "function_definition" | "class_definition" if is_field("name") => "definition",
        "attribute" if is_field("attribute") => "attribute",
        "keyword_argument" if is_field("name") => "keyword",
        _ => {
            let mut up = Some(parent);
            while let Some(n) = up {
                if matches!(n.kind(), "import_statement" | "import_from_statement") {
                    return "import";
                }
                up = n.parent();
            }
            "reference"
        }
    }
}

fn reference(node: Node, source: &str) -> NameUse {
    let at = node.start_position();
    let line_start = source[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[node.start_byte()..]
        .find('\n')
        .map_or(source.len(), |i| node.start_byte() + i);
    NameUse {
        file: PathBuf::new(),
        line: at.row + 1,
        column: at.column + 1,
        start_byte: node.start_byte(),
        end_byte: node.end_byte(),
        role: role(node),
        text: source[line_start..line_end].trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, qualified: &str) -> Symbol {
        Symbol {
            name: name.into(),
            qualified_name: qualified.into(),
            kind: super::super::outline::SymbolKind::Method,
            start_line: 1,
            end_line: 1,
            start_byte: 0,
            end_byte: 0,
            signature: String::new(),
        }
    }

    #[test]
    fn queries_match_plain_qualified_and_module_suffix_names() {
        let s = sym("mean", "Summary.mean");
        for yes in [
            "mean",
            "Summary.mean",
            "stats.Summary.mean",
            "pkg.stats.Summary.mean",
        ] {
            assert!(matches(yes, "pkg.stats", &s), "{yes}");
        }
        for no in ["Summ", "ary.mean", "other.Summary.mean", "Summary"] {
            assert!(!matches(no, "pkg.stats", &s), "{no}");
        }
    }

    #[test]
    fn the_text_prefilter_keeps_every_file_that_can_define_the_name() {
        let src =
            "class Model:\n    async def  fit(self): pass\ndef\\\n  go(): pass\nx = fit_all\n";
        assert!(could_define(src, "fit", "m"));
        assert!(could_define(src, "Model.fit", "m"));
        assert!(could_define(src, "pkg.m.fit", "pkg.m"));
        assert!(
            could_define(src, "go", "m"),
            "a line continuation after def"
        );
        assert!(!could_define(src, "fit_all", "m"), "used, not defined");
        assert!(!could_define(src, "Other.fit", "m"));
        assert!(could_define(src, "Model", "m"));
        assert!(!could_define("undef fit(): pass", "fit", "m"));
    }

    #[test]
    fn module_names_drop_init_and_extension() {
        assert_eq!(module_name(Path::new("pkg/stats.py")), "pkg.stats");
        assert_eq!(module_name(Path::new("pkg/__init__.py")), "pkg");
    }

    #[test]
    fn identifiers_skip_strings_and_comments_and_say_their_role() {
        let src = "from m import mean\n# mean\ndef mean(x):\n    'mean'\n    return s.mean(mean=x) + mean(x)\n";
        let roles: Vec<(usize, &str)> = identifiers_named(src, "mean")
            .unwrap()
            .iter()
            .map(|r| (r.line, r.role))
            .collect();
        assert_eq!(
            roles,
            vec![
                (1, "import"),
                (3, "definition"),
                (5, "attribute"),
                (5, "keyword"),
                (5, "reference"),
            ]
        );
    }
}
