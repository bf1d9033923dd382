//! References and rename across a repository: a language server when one is installed,
//! tree-sitter names otherwise, and the same safety rules either way.
//!
//! A rename is a transaction: every file's new text is computed in memory, each is
//! syntax-checked, and only then are they written (atomic per file, the earlier ones put back
//! if a later write fails). Nothing is written when the new name would collide with a name
//! already bound in the scope that holds the definition, or at module level of a file whose
//! import the rename touches (`from m import old` next to an existing `new`).
//!
//! Without a server the rename is name-based and says so (`approximate: true`): it renames
//! plain uses of the name, attribute uses only where they can belong to the symbol (any
//! `x.name` for a method, `module.name` for a module-level symbol), never keyword arguments,
//! and it refuses a name defined more than once in the repository.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tree_sitter::Node;

use super::check::{CheckError, CheckReport, check_source};
use super::lsp::edits::{self, EditsError, Encoding, TextEdit};
use super::lsp::{LspClient, LspError, ServerSpec};
use super::outline::{Located, OutlineError, locate_all, parse};
use super::repo::{
    NameUse, References, RepoError, SymbolIndex, TREE_SITTER_BACKEND, identifiers_named,
    name_references, python_files,
};
use crate::fsutil::{FsError, Workspace, write_atomic};
use crate::python::is_name_char;

#[derive(Debug, thiserror::Error)]
pub enum RefactorError {
    #[error("no symbol `{0}` in the repository")]
    NotFound(String),
    #[error("`{query}` is ambiguous: {candidates}; use a qualified name")]
    Ambiguous { query: String, candidates: String },
    #[error("`{name}` cannot be the new name: {why}")]
    BadName { name: String, why: &'static str },
    #[error("refusing to rename: `{name}` is already bound in {scope} of {}", file.display())]
    Collision {
        name: String,
        file: PathBuf,
        scope: String,
    },
    #[error("refusing to rename: {} would have a syntax error at {}", file.display(), report.summary())]
    Refused { file: PathBuf, report: CheckReport },
    #[error("the language server wants to edit {}, outside the repository", .0.display())]
    OutsideRoot(PathBuf),
    #[error("the language server found nothing to rename at `{0}`")]
    NothingToRename(String),
    /// Two edits of one file cover the same bytes: applied one after the other, the second
    /// would cut into the first one's new text (or into a character).
    #[error("refusing to rename: two edits of {} overlap (bytes {first:?} and {second:?})", file.display())]
    Overlap {
        file: PathBuf,
        first: (usize, usize),
        second: (usize, usize),
    },
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error(transparent)]
    Outline(#[from] OutlineError),
    #[error(transparent)]
    Lsp(#[from] LspError),
    #[error(transparent)]
    Edits(#[from] EditsError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Write(#[from] FsError),
}

/// What a rename changed.
#[derive(Debug, Clone, Serialize)]
pub struct RenameResult {
    pub query: String,
    pub old_name: String,
    pub new_name: String,
    pub backend: String,
    pub approximate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub files: Vec<RenamedFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RenamedFile {
    pub file: PathBuf,
    pub edits: usize,
    pub check: CheckReport,
}

/// The definition a query names, read from disk.
struct RenameTarget {
    file: PathBuf,
    source: String,
    module: String,
    located: Located,
}

fn read(path: &Path) -> Result<String, RefactorError> {
    std::fs::read_to_string(path).map_err(|source| RefactorError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn resolve(root: &Path, index: &SymbolIndex, query: &str) -> Result<RenameTarget, RefactorError> {
    let found = index.find(root, query)?;
    let one = match found.as_slice() {
        [] => return Err(RefactorError::NotFound(query.into())),
        [one] => one,
        many => {
            return Err(RefactorError::Ambiguous {
                query: query.into(),
                candidates: many
                    .iter()
                    .map(|m| {
                        format!(
                            "{}:{} {}",
                            m.file.display(),
                            m.symbol.start_line,
                            m.symbol.qualified_name
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    let abs = root.join(&one.file);
    let source = read(&abs)?;
    let located = locate_all(&source)?
        .into_iter()
        .find(|l| l.symbol.qualified_name == one.symbol.qualified_name)
        .ok_or_else(|| RefactorError::NotFound(query.into()))?;
    Ok(RenameTarget {
        file: one.file.clone(),
        source,
        module: one.module.clone(),
        located,
    })
}

fn canonical(root: &Path) -> Result<PathBuf, RefactorError> {
    root.canonicalize().map_err(|source| RefactorError::Read {
        path: root.to_path_buf(),
        source,
    })
}

/// References of the symbol `query` names: the language server's when one is installed and
/// answers, else name-based (and labelled so, with the reason).
pub(crate) async fn references(
    root: &Path,
    index: &SymbolIndex,
    server: Option<&ServerSpec>,
    query: &str,
) -> Result<References, RefactorError> {
    let target = resolve(root, index, query)?;
    let note = match server {
        Some(spec) => match lsp_references(root, spec, &target).await {
            Ok(found) => return Ok(found),
            Err(e) => format!("{} failed ({e}); name-based references instead", spec.name),
        },
        None => "no language server installed (ty or pyright): name-based references".into(),
    };
    let mut found = name_references(root, &target.located.symbol.name)?;
    found.name = query.to_string();
    found.note = Some(note);
    Ok(found)
}

/// A language server that has indexed the repository, and where the target's name is in
/// the server's coordinates: the common start of references and rename.
struct LspSession {
    root: PathBuf,
    file: PathBuf,
    client: LspClient,
    at: edits::Position,
}

impl LspSession {
    async fn open(
        root: &Path,
        spec: &ServerSpec,
        target: &RenameTarget,
    ) -> Result<LspSession, RefactorError> {
        let root = canonical(root)?;
        let file = root.join(&target.file);
        let all: Vec<PathBuf> = python_files(&root)?
            .into_iter()
            .map(|p| root.join(p))
            .collect();
        let mut client = LspClient::start(spec, &root).await?;
        if let Err(e) = client.prepare(&file, &all).await {
            client.shutdown().await;
            return Err(e.into());
        }
        let at = edits::position_of(
            &target.source,
            target.located.name_range.0,
            client.encoding(),
        );
        Ok(LspSession {
            root,
            file,
            client,
            at,
        })
    }
}

async fn lsp_references(
    root: &Path,
    spec: &ServerSpec,
    target: &RenameTarget,
) -> Result<References, RefactorError> {
    let session = LspSession::open(root, spec, target).await?;
    let root = session.root.clone();
    let mut client = session.client;
    let answer = client.references(&session.file, session.at).await;
    let encoding = client.encoding();
    client.shutdown().await;
    // Each file is read and parsed once, however many references it holds.
    let mut files: HashMap<PathBuf, (String, HashMap<usize, &'static str>)> = HashMap::new();
    let mut references = Vec::new();
    for location in answer? {
        let path = edits::uri_to_path(&location.uri)?;
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        if !files.contains_key(&path) {
            let text = read(&path)?;
            let roles = identifiers_named(&text, &target.located.symbol.name)?
                .into_iter()
                .map(|r| (r.start_byte, r.role))
                .collect();
            files.insert(path.clone(), (text, roles));
        }
        let (text, roles) = &files[&path];
        references.push(lsp_reference(rel, text, location.range, encoding, roles));
    }
    Ok(References {
        name: target.located.symbol.qualified_name.clone(),
        backend: spec.name.to_string(),
        approximate: false,
        note: None,
        references,
    })
}

fn lsp_reference(
    file: PathBuf,
    text: &str,
    range: edits::Range,
    encoding: Encoding,
    roles: &HashMap<usize, &'static str>,
) -> NameUse {
    let start = edits::byte_offset(text, range.start, encoding).unwrap_or(0);
    let end = edits::byte_offset(text, range.end, encoding).unwrap_or(start);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let role = roles.get(&start).copied().unwrap_or("reference");
    NameUse {
        file,
        line: range.start.line as usize + 1,
        column: start - line_start + 1,
        start_byte: start,
        end_byte: end,
        role,
        text: text[line_start..line_end].trim().to_string(),
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `name` is a Python identifier that is not a keyword.
fn check_identifier(name: &str) -> Result<(), RefactorError> {
    let bad = |why| {
        Err(RefactorError::BadName {
            name: name.into(),
            why,
        })
    };
    let mut chars = name.chars();
    match chars.next() {
        None => return bad("it is empty"),
        Some(c) if !(c == '_' || c.is_alphabetic()) => {
            return bad("an identifier starts with a letter or `_`");
        }
        _ => {}
    }
    if !chars.all(is_name_char) {
        return bad("an identifier has only letters, digits and `_`");
    }
    if KEYWORDS.contains(&name) {
        return bad("it is a Python keyword");
    }
    Ok(())
}

/// Names bound directly in a scope node (module or a class/function body): definitions,
/// assignment targets and imports, looking through `if`/`try`/`with` but not into nested
/// definitions.
fn scope_bindings(scope: Node, source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    collect_bindings(scope, source, &mut out);
    out
}

fn node_text<'a>(node: Node, source: &'a str) -> &'a str {
    source.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

fn collect_bindings(node: Node, source: &str, out: &mut BTreeSet<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = child.child_by_field_name("name") {
                    out.insert(node_text(name, source).to_string());
                }
            }
            "decorated_definition" => {
                if let Some(name) = child
                    .child_by_field_name("definition")
                    .and_then(|d| d.child_by_field_name("name"))
                {
                    out.insert(node_text(name, source).to_string());
                }
            }
            "expression_statement" => {
                let mut inner = child.walk();
                for statement in child.named_children(&mut inner) {
                    if matches!(statement.kind(), "assignment" | "augmented_assignment")
                        && let Some(left) = statement.child_by_field_name("left")
                    {
                        target_names(left, source, out);
                    }
                }
            }
            "import_statement" | "import_from_statement" => {
                let mut inner = child.walk();
                for name in child.children_by_field_name("name", &mut inner) {
                    let bound = match name.kind() {
                        "aliased_import" => name.child_by_field_name("alias"),
                        // `import a.b` binds `a`.
                        _ => name.named_child(0),
                    };
                    if let Some(bound) = bound {
                        out.insert(node_text(bound, source).to_string());
                    }
                }
            }
            "block" | "if_statement" | "elif_clause" | "else_clause" | "try_statement"
            | "except_clause" | "finally_clause" | "with_statement" | "for_statement"
            | "while_statement" => collect_bindings(child, source, out),
            _ => {}
        }
    }
}

fn target_names(node: Node, source: &str, out: &mut BTreeSet<String>) {
    match node.kind() {
        "identifier" => {
            out.insert(node_text(node, source).to_string());
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                target_names(child, source, out);
            }
        }
        _ => {}
    }
}

/// The scope node that holds the definition whose name starts at `name_start`, and a label.
fn enclosing_scope<'t>(root: Node<'t>, name_start: usize) -> Option<(Node<'t>, String)> {
    let name = root.descendant_for_byte_range(name_start, name_start + 1)?;
    let mut up = name.parent()?.parent();
    while let Some(node) = up {
        if node.kind() == "module" {
            return Some((node, "the module".into()));
        }
        if node.kind() == "block"
            && let Some(owner) = node
                .parent()
                .filter(|p| matches!(p.kind(), "class_definition" | "function_definition"))
        {
            let kind = if owner.kind() == "class_definition" {
                "class"
            } else {
                "function"
            };
            return Some((node, format!("the body of that {kind}")));
        }
        up = node.parent();
    }
    None
}

fn collision_in_scope(target: &RenameTarget, new_name: &str) -> Result<(), RefactorError> {
    let tree = parse(&target.source)?;
    if let Some((scope, label)) = enclosing_scope(tree.root_node(), target.located.name_range.0)
        && scope_bindings(scope, &target.source).contains(new_name)
    {
        return Err(RefactorError::Collision {
            name: new_name.into(),
            file: target.file.clone(),
            scope: label,
        });
    }
    Ok(())
}

/// Byte spans to replace, per file relative to the root.
type Spans = BTreeMap<PathBuf, Vec<(usize, usize)>>;

/// Renames the symbol `query` names to `new_name` in every file that uses it.
pub(crate) async fn rename(
    root: &Path,
    index: &SymbolIndex,
    server: Option<&ServerSpec>,
    query: &str,
    new_name: &str,
) -> Result<RenameResult, RefactorError> {
    check_identifier(new_name)?;
    let target = resolve(root, index, query)?;
    let old_name = target.located.symbol.name.clone();
    if old_name == new_name {
        return Err(RefactorError::BadName {
            name: new_name.into(),
            why: "it is the current name",
        });
    }
    collision_in_scope(&target, new_name)?;
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    let found = find_spans(root, index, server, &target, new_name, &mut texts).await?;
    if found.spans.values().all(Vec::is_empty) {
        return Err(RefactorError::NothingToRename(query.into()));
    }
    collision_in_importers(&found.spans, &texts, &target, &old_name, new_name)?;
    let new_texts = renamed_texts(&found.spans, &texts, new_name)?;
    write_all(root, &new_texts)?;
    Ok(RenameResult {
        query: query.into(),
        old_name,
        new_name: new_name.into(),
        backend: found.backend,
        approximate: found.approximate,
        note: found.note,
        files: new_texts
            .into_iter()
            .map(|renamed| RenamedFile {
                file: renamed.file,
                edits: renamed.edits,
                check: renamed.check,
            })
            .collect(),
    })
}

/// The spans to rename and how they were found.
struct FoundSpans {
    spans: Spans,
    backend: String,
    approximate: bool,
    note: Option<String>,
}

/// The spans from the language server when there is one, from tree-sitter names otherwise
/// (then the result says it is approximate). Fills `texts` with every file read.
async fn find_spans(
    root: &Path,
    index: &SymbolIndex,
    server: Option<&ServerSpec>,
    target: &RenameTarget,
    new_name: &str,
    texts: &mut BTreeMap<PathBuf, String>,
) -> Result<FoundSpans, RefactorError> {
    Ok(match server {
        Some(spec) => FoundSpans {
            spans: lsp_rename_spans(root, spec, target, new_name, texts).await?,
            backend: spec.name.to_string(),
            approximate: false,
            note: None,
        },
        None => FoundSpans {
            spans: fallback_spans(root, index, target, texts)?,
            backend: TREE_SITTER_BACKEND.to_string(),
            approximate: true,
            note: Some("no language server installed (ty or pyright): name-based rename".into()),
        },
    })
}

/// A touched import must not shadow a name the importing module already has
/// (`from m import old` renamed next to an existing `new`).
fn collision_in_importers(
    spans: &Spans,
    texts: &BTreeMap<PathBuf, String>,
    target: &RenameTarget,
    old_name: &str,
    new_name: &str,
) -> Result<(), RefactorError> {
    for (file, file_spans) in spans {
        if *file == target.file {
            continue;
        }
        let text = &texts[file];
        let imports: BTreeSet<usize> = identifiers_named(text, old_name)?
            .into_iter()
            .filter(|r| r.role == "import")
            .map(|r| r.start_byte)
            .collect();
        if file_spans.iter().any(|(s, _)| imports.contains(s)) {
            let tree = parse(text)?;
            if scope_bindings(tree.root_node(), text).contains(new_name) {
                return Err(RefactorError::Collision {
                    name: new_name.into(),
                    file: file.clone(),
                    scope: "the module that imports it".into(),
                });
            }
        }
    }
    Ok(())
}

/// A file's text after the rename, checked, not yet written.
struct Renamed {
    file: PathBuf,
    text: String,
    edits: usize,
    check: CheckReport,
}

/// Every file's new text, computed in memory; the first one with a syntax error refuses the
/// whole rename before anything is written.
fn renamed_texts(
    spans: &Spans,
    texts: &BTreeMap<PathBuf, String>,
    new_name: &str,
) -> Result<Vec<Renamed>, RefactorError> {
    let mut new_texts = Vec::new();
    for (file, file_spans) in spans {
        let mut text = texts[file].clone();
        let mut sorted = file_spans.clone();
        sorted.sort();
        sorted.dedup();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0].1 > pair[1].0) {
            return Err(RefactorError::Overlap {
                file: file.clone(),
                first: pair[0],
                second: pair[1],
            });
        }
        for (start, end) in sorted.iter().rev() {
            text.replace_range(*start..*end, new_name);
        }
        let check = check_source(&text, &file.display().to_string())?;
        if !check.ok {
            return Err(RefactorError::Refused {
                file: file.clone(),
                report: check,
            });
        }
        new_texts.push(Renamed {
            file: file.clone(),
            text,
            edits: sorted.len(),
            check,
        });
    }
    Ok(new_texts)
}

/// Writes every file or none: on a failed write the files already written are put back.
fn write_all(root: &Path, files: &[Renamed]) -> Result<(), RefactorError> {
    let workspace = Workspace::new(root);
    let rels: Vec<String> = files
        .iter()
        .map(|renamed| renamed.file.to_string_lossy().into_owned())
        .collect();
    let snapshot = workspace.snapshot(&rels)?;
    for (rel, renamed) in rels.iter().zip(files) {
        let written = workspace
            .path(rel)
            .and_then(|path| write_atomic(&path, renamed.text.as_bytes()));
        if let Err(e) = written {
            if let Err(undo) = workspace.restore(&snapshot) {
                tracing::error!("rename: could not put files back after a failed write: {undo}");
            }
            return Err(e.into());
        }
    }
    Ok(())
}

async fn lsp_rename_spans(
    root: &Path,
    spec: &ServerSpec,
    target: &RenameTarget,
    new_name: &str,
    texts: &mut BTreeMap<PathBuf, String>,
) -> Result<Spans, RefactorError> {
    let session = LspSession::open(root, spec, target).await?;
    let root = session.root.clone();
    let mut client = session.client;
    let answer = client.rename(&session.file, session.at, new_name).await;
    let encoding = client.encoding();
    client.shutdown().await;
    let per_file: BTreeMap<PathBuf, Vec<TextEdit>> = edits::workspace_edit_files(&answer?)?;
    let mut spans = Spans::new();
    for (path, file_edits) in per_file {
        let rel = path
            .strip_prefix(&root)
            .map_err(|_| RefactorError::OutsideRoot(path.clone()))?
            .to_path_buf();
        let text = read(&path)?;
        let mut file_spans = Vec::new();
        for edit in &file_edits {
            let bad = || EditsError::BadPosition {
                path: path.clone(),
                line: edit.range.start.line,
                character: edit.range.start.character,
            };
            let start = edits::byte_offset(&text, edit.range.start, encoding).ok_or_else(bad)?;
            let end = edits::byte_offset(&text, edit.range.end, encoding).ok_or_else(bad)?;
            // A rename replaces the old name with the new one; an edit that inserts anything
            // else (a server adding an `as` alias, say) is refused rather than guessed at.
            if edit.new_text != new_name {
                return Err(RefactorError::Edits(EditsError::Shape(format!(
                    "rename edit in {} inserts `{}`",
                    rel.display(),
                    edit.new_text
                ))));
            }
            file_spans.push((start, end));
        }
        texts.insert(rel.clone(), text);
        spans.insert(rel, file_spans);
    }
    Ok(spans)
}

fn fallback_spans(
    root: &Path,
    index: &SymbolIndex,
    target: &RenameTarget,
    texts: &mut BTreeMap<PathBuf, String>,
) -> Result<Spans, RefactorError> {
    let name = &target.located.symbol.name;
    let defined = index.find(root, name)?;
    if defined.len() > 1 {
        return Err(RefactorError::Ambiguous {
            query: name.clone(),
            candidates: format!(
                "{} definitions in the repository, and without a language server a name-based rename cannot tell them apart",
                defined.len()
            ),
        });
    }
    let in_class = target.located.symbol.qualified_name.contains('.')
        && !target.located.symbol.qualified_name.contains("<locals>");
    let module_last = target.module.rsplit('.').next().unwrap_or("").to_string();
    let mut spans = Spans::new();
    for found in name_references(root, name)?.references {
        if !texts.contains_key(&found.file) {
            texts.insert(found.file.clone(), read(&root.join(&found.file))?);
        }
        let text = &texts[&found.file];
        let keep = match found.role {
            "keyword" => false,
            "attribute" if in_class => true,
            "attribute" => text[..found.start_byte]
                .trim_end()
                .strip_suffix('.')
                .is_some_and(|head| head.trim_end().ends_with(&module_last)),
            _ => true,
        };
        if keep {
            spans
                .entry(found.file.clone())
                .or_default()
                .push((found.start_byte, found.end_byte));
        }
    }
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_checked_before_any_rename() {
        assert!(check_identifier("arithmetic_mean").is_ok());
        assert!(check_identifier("_x2").is_ok());
        assert!(check_identifier("match").is_ok(), "soft keywords are names");
        for bad in ["", "2x", "a-b", "class", "None", "a b"] {
            assert!(check_identifier(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scope_bindings_see_defs_assignments_and_imports_but_not_nested_scopes() {
        let src = "import os.path\nfrom m import a, b as c\nx, y = 1, 2\nif True:\n    def f():\n        inner = 1\nclass K:\n    attr = 1\n    def m(self): pass\n";
        let tree = parse(src).unwrap();
        let names: Vec<String> = scope_bindings(tree.root_node(), src).into_iter().collect();
        assert_eq!(names, ["K", "a", "c", "f", "os", "x", "y"]);
    }

    #[test]
    fn the_scope_of_a_method_is_its_class_body() {
        let src = "def mean(): pass\nclass K:\n    def mean(self): pass\n    def avg(self): pass\n";
        let tree = parse(src).unwrap();
        let method = locate_all(src).unwrap()[2].clone();
        assert_eq!(method.symbol.qualified_name, "K.mean");
        let (scope, label) = enclosing_scope(tree.root_node(), method.name_range.0).unwrap();
        assert_eq!(label, "the body of that class");
        let names: Vec<String> = scope_bindings(scope, src).into_iter().collect();
        assert_eq!(names, ["avg", "mean"]);
    }

    #[test]
    fn overlapping_edits_refuse_the_rename_and_repeated_ones_count_once() {
        let file = PathBuf::from("m.py");
        let texts = BTreeMap::from([(file.clone(), "def mean(): return mean\n".to_string())]);
        let spans = Spans::from([(file.clone(), vec![(19, 23), (4, 8), (19, 23)])]);
        let renamed = renamed_texts(&spans, &texts, "average").unwrap();
        assert_eq!(renamed[0].text, "def average(): return average\n");
        assert_eq!(renamed[0].edits, 2);
        let overlapping = Spans::from([(file.clone(), vec![(4, 8), (6, 10)])]);
        let refused = renamed_texts(&overlapping, &texts, "average")
            .err()
            .unwrap();
        assert!(
            matches!(
                refused,
                RefactorError::Overlap {
                    first: (4, 8),
                    second: (6, 10),
                    ..
                }
            ),
            "{refused}"
        );
    }
}
