//! The outline of one Python file from tree-sitter: every function, class and method with its
//! qualified name, kind, line and byte range and signature.
//!
//! Qualified names follow Python's own `__qualname__` (`Class.method`,
//! `outer.<locals>.inner`), so a name the model reads in a traceback is the name it can ask
//! for. Definitions inside `if`/`try`/`with` blocks belong to the enclosing scope, as they do
//! at run time. This module only reads; the edits built on these positions live in `edit`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tree_sitter::{Node, Parser, Tree};

#[derive(Debug, thiserror::Error)]
pub enum OutlineError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: not UTF-8 text")]
    NotUtf8(PathBuf),
    #[error("the tree-sitter Python grammar could not be loaded: {0}")]
    Grammar(String),
    #[error("tree-sitter gave no tree (the parse was cancelled)")]
    NoTree,
}

/// What kind of definition a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Function,
    #[serde(rename = "async function")]
    AsyncFunction,
    Method,
    #[serde(rename = "async method")]
    AsyncMethod,
    Staticmethod,
    Classmethod,
    Class,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::AsyncFunction => "async function",
            SymbolKind::Method => "method",
            SymbolKind::AsyncMethod => "async method",
            SymbolKind::Staticmethod => "staticmethod",
            SymbolKind::Classmethod => "classmethod",
            SymbolKind::Class => "class",
        }
    }
}

/// One definition of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// The plain name (`mean`).
    pub name: String,
    /// Python's `__qualname__` (`Stats.mean`, `outer.<locals>.inner`).
    pub qualified_name: String,
    pub kind: SymbolKind,
    /// 1-based, inclusive; decorators included.
    pub start_line: usize,
    pub end_line: usize,
    /// Byte range of the whole definition, decorators included.
    pub start_byte: usize,
    pub end_byte: usize,
    /// Decorators and the `def`/`class` header up to its colon, without the body; continuation
    /// lines are dedented by the definition's own indentation.
    pub signature: String,
}

/// Positions the editing tools need beyond what the outline shows.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub symbol: Symbol,
    /// Byte range of the name identifier (where a language server is asked about it).
    pub name_range: (usize, usize),
    /// Byte just after the header's `:`.
    pub colon_end: usize,
    /// Where the body block's first statement starts.
    pub block_start: usize,
    /// Byte range of the docstring statement, when the body starts with one.
    pub docstring: Option<(usize, usize)>,
}

/// The outline of a file, or the news that it does not exist yet.
#[derive(Debug, Clone, Serialize)]
pub struct FileOutline {
    pub path: PathBuf,
    /// `"generated"`, or `"not yet generated"` when the file does not exist (the engine asks
    /// for files of nodes it has not reached; that is not an error).
    pub status: &'static str,
    /// tree-sitter found ERROR or MISSING nodes: the symbols may be incomplete.
    pub has_syntax_errors: bool,
    pub symbols: Vec<Symbol>,
}

pub(crate) const NOT_YET_GENERATED: &str = "not yet generated";

/// Parses Python source (tree-sitter never fails on bad input: it marks ERROR nodes).
pub(crate) fn parse(source: &str) -> Result<Tree, OutlineError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| OutlineError::Grammar(e.to_string()))?;
    parser.parse(source, None).ok_or(OutlineError::NoTree)
}

/// The text of every import statement of `source`, at any depth (an `import` inside a
/// function body imports as surely as one at the top), in source order.
pub(crate) fn import_statements(source: &str) -> Vec<String> {
    let Ok(tree) = parse(source) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "import_statement" | "import_from_statement") {
            out.push((node.start_byte(), source[node.byte_range()].to_string()));
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort();
    out.into_iter().map(|(_, text)| text).collect()
}

/// Every definition of `source`, in source order (outer before inner).
pub fn outline(source: &str) -> Result<Vec<Symbol>, OutlineError> {
    Ok(locate_all(source)?.into_iter().map(|l| l.symbol).collect())
}

pub(crate) fn locate_all(source: &str) -> Result<Vec<Located>, OutlineError> {
    let tree = parse(source)?;
    let mut out = Vec::new();
    walk(tree.root_node(), source, "", Scope::Module, &mut out);
    Ok(out)
}

/// The outline of a file on disk; a missing file is `not yet generated`.
pub(crate) fn outline_file(path: &Path) -> Result<FileOutline, OutlineError> {
    let source = match read_source(path)? {
        Some(s) => s,
        None => {
            return Ok(FileOutline {
                path: path.to_path_buf(),
                status: NOT_YET_GENERATED,
                has_syntax_errors: false,
                symbols: Vec::new(),
            });
        }
    };
    let tree = parse(&source)?;
    let mut located = Vec::new();
    walk(tree.root_node(), &source, "", Scope::Module, &mut located);
    Ok(FileOutline {
        path: path.to_path_buf(),
        status: "generated",
        has_syntax_errors: tree.root_node().has_error(),
        symbols: located.into_iter().map(|l| l.symbol).collect(),
    })
}

/// The file's text; `None` when it does not exist.
pub(crate) fn read_source(path: &Path) -> Result<Option<String>, OutlineError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| OutlineError::NotUtf8(path.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(OutlineError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Module,
    Class,
    Function,
}

/// Statement nodes whose children may hold definitions of the same scope.
fn is_container(kind: &str) -> bool {
    matches!(
        kind,
        "module"
            | "block"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "try_statement"
            | "except_clause"
            | "except_group_clause"
            | "finally_clause"
            | "for_statement"
            | "while_statement"
            | "with_statement"
            | "match_statement"
            | "case_clause"
    )
}

fn walk(node: Node, source: &str, prefix: &str, scope: Scope, out: &mut Vec<Located>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = child.kind();
        let (outer, def) = match kind {
            "function_definition" | "class_definition" => (child, child),
            "decorated_definition" => match child.child_by_field_name("definition") {
                Some(def) => (child, def),
                None => continue,
            },
            _ if is_container(kind) => {
                walk(child, source, prefix, scope, out);
                continue;
            }
            _ => continue,
        };
        let Some(located) = locate(outer, def, source, prefix, scope) else {
            continue;
        };
        let (inner_prefix, inner_scope) = if def.kind() == "class_definition" {
            (format!("{}.", located.symbol.qualified_name), Scope::Class)
        } else {
            (
                format!("{}.<locals>.", located.symbol.qualified_name),
                Scope::Function,
            )
        };
        out.push(located);
        if let Some(body) = def.child_by_field_name("body") {
            walk(body, source, &inner_prefix, inner_scope, out);
        }
    }
}

fn text<'a>(node: Node, source: &'a str) -> &'a str {
    source.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// The definition `def` (inside `outer`, its decorated form, or itself) as a symbol with the
/// byte positions edits need; `None` for a definition tree-sitter could not make sense of.
fn locate(outer: Node, def: Node, source: &str, prefix: &str, scope: Scope) -> Option<Located> {
    let name_node = def.child_by_field_name("name")?;
    let name = text(name_node, source).to_string();
    let body = def.child_by_field_name("body")?;
    let colon_end = header_colon_end(def, body)?;
    let kind = symbol_kind(outer, def, source, scope);
    let column = outer.start_position().column;
    let signature = dedent_continuations(source.get(outer.start_byte()..colon_end)?, column);
    Some(Located {
        symbol: Symbol {
            qualified_name: format!("{prefix}{name}"),
            name,
            kind,
            start_line: outer.start_position().row + 1,
            end_line: last_row(outer) + 1,
            start_byte: outer.start_byte(),
            end_byte: outer.end_byte(),
            signature,
        },
        name_range: (name_node.start_byte(), name_node.end_byte()),
        colon_end,
        block_start: body.start_byte(),
        docstring: docstring_of(body),
    })
}

/// The end of the header's colon: the last `:` token before the body (a comment may sit
/// between them).
fn header_colon_end(def: Node, body: Node) -> Option<usize> {
    let mut colon_end = None;
    let mut cursor = def.walk();
    for child in def.children(&mut cursor) {
        if child.start_byte() >= body.start_byte() {
            break;
        }
        if child.kind() == ":" {
            colon_end = Some(child.end_byte());
        }
    }
    colon_end
}

/// Class, or which kind of function: a function in a class body is a method, and its
/// decorators say whether it is a static or class method.
fn symbol_kind(outer: Node, def: Node, source: &str, scope: Scope) -> SymbolKind {
    if def.kind() == "class_definition" {
        return SymbolKind::Class;
    }
    let is_async = def.child(0).is_some_and(|c| c.kind() == "async");
    if scope != Scope::Class {
        return if is_async {
            SymbolKind::AsyncFunction
        } else {
            SymbolKind::Function
        };
    }
    let decorators = decorators(outer, def, source);
    if decorators.contains(&"staticmethod") {
        SymbolKind::Staticmethod
    } else if decorators.contains(&"classmethod") {
        SymbolKind::Classmethod
    } else if is_async {
        SymbolKind::AsyncMethod
    } else {
        SymbolKind::Method
    }
}

/// The decorator expressions (without `@`) when `outer` is a decorated definition.
fn decorators<'s>(outer: Node, def: Node, source: &'s str) -> Vec<&'s str> {
    if outer.id() == def.id() {
        return Vec::new();
    }
    let mut cursor = outer.walk();
    outer
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "decorator")
        .map(|c| text(c, source).trim_start_matches('@').trim())
        .collect()
}

/// The 0-based row of the node's last character: a node that ends at column 0 ends with the
/// newline of the row before.
fn last_row(node: Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// The body's leading string statement, if any.
fn docstring_of(body: Node) -> Option<(usize, usize)> {
    let mut cursor = body.walk();
    let first = body
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let value = first.named_child(0)?;
    matches!(value.kind(), "string" | "concatenated_string")
        .then(|| (first.start_byte(), first.end_byte()))
}

/// Removes up to `column` leading spaces/tabs from every line but the first.
fn dedent_continuations(text: &str, column: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            let strip = line
                .bytes()
                .take(column)
                .take_while(|b| *b == b' ' || *b == b'\t')
                .count();
            out.push_str(&line[strip..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"import functools


@functools.cache
def load(path: str, *, strict: bool = False) -> dict[str, int]:
    """Loads."""
    return {}


async def fetch(
    url: str,
    timeout: float = 1.0,
) -> bytes:
    return b""


class Stats(Base, metaclass=Meta):
    def mean(self, values: list[float]) -> float:
        def helper(x):
            return x
        return sum(values) / len(values)

    @staticmethod
    def zero() -> int:
        return 0

    @classmethod
    def make(cls) -> "Stats":
        return cls()

    async def stream(self): ...

    class Inner:
        def deep(self): pass


if True:
    def conditional(): pass
"#;

    #[test]
    fn outline_lists_every_definition_with_qualified_names_and_kinds() {
        let symbols = outline(SOURCE).unwrap();
        let got: Vec<(&str, &str)> = symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("load", "function"),
                ("fetch", "async function"),
                ("Stats", "class"),
                ("Stats.mean", "method"),
                ("Stats.mean.<locals>.helper", "function"),
                ("Stats.zero", "staticmethod"),
                ("Stats.make", "classmethod"),
                ("Stats.stream", "async method"),
                ("Stats.Inner", "class"),
                ("Stats.Inner.deep", "method"),
                ("conditional", "function"),
            ]
        );
    }

    #[test]
    fn signatures_keep_decorators_hints_and_multi_line_parameters_without_body() {
        let symbols = outline(SOURCE).unwrap();
        let sig = |q: &str| {
            symbols
                .iter()
                .find(|s| s.qualified_name == q)
                .unwrap()
                .signature
                .clone()
        };
        assert_eq!(
            sig("load"),
            "@functools.cache\ndef load(path: str, *, strict: bool = False) -> dict[str, int]:"
        );
        assert_eq!(
            sig("fetch"),
            "async def fetch(\n    url: str,\n    timeout: float = 1.0,\n) -> bytes:"
        );
        assert_eq!(sig("Stats.zero"), "@staticmethod\ndef zero() -> int:");
        assert_eq!(sig("Stats"), "class Stats(Base, metaclass=Meta):");
        assert_eq!(sig("Stats.stream"), "async def stream(self):");
    }

    #[test]
    fn line_and_byte_ranges_cover_decorators_and_body() {
        let symbols = outline(SOURCE).unwrap();
        let load = &symbols[0];
        assert_eq!((load.start_line, load.end_line), (4, 7));
        assert!(SOURCE[load.start_byte..load.end_byte].starts_with("@functools.cache"));
        assert!(SOURCE[load.start_byte..load.end_byte].ends_with("return {}"));
        let zero = symbols.iter().find(|s| s.name == "zero").unwrap();
        assert_eq!((zero.start_line, zero.end_line), (23, 25));
    }

    #[test]
    fn missing_file_is_not_yet_generated() {
        let dir = tempfile::tempdir().unwrap();
        let outline = outline_file(&dir.path().join("nope.py")).unwrap();
        assert_eq!(outline.status, NOT_YET_GENERATED);
        assert!(outline.symbols.is_empty());
    }

    #[test]
    fn docstring_is_found_only_as_the_first_statement() {
        let located = locate_all(SOURCE).unwrap();
        let load = &located[0];
        let (a, b) = load.docstring.unwrap();
        assert_eq!(&SOURCE[a..b], "\"\"\"Loads.\"\"\"");
        assert!(located[1].docstring.is_none());
    }
}
