//! [`SymbolTools`]: the one interface to read a repository by symbol and rename one, behind
//! `zerorepo view` and `zerorepo rename`. Every result is a serde type, so `--json` prints it
//! as it is.
//!
//! Paths given to the tools are relative to the repository root and may not leave it (the
//! same rule as `workspace`). Reads are synchronous; references and rename are async because
//! they may talk to a language server.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::lsp::ServerSpec;
use super::outline::{FileOutline, OutlineError, outline_file, read_source};
use super::refactor::{self, RefactorError, RenameResult};
use super::repo::{References, RepoError, SymbolIndex, SymbolMatch};
use crate::fsutil::{FsError, Workspace};

#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    #[error("{0}: not a directory")]
    NoRepo(PathBuf),
    #[error("no file or symbol `{0}` in the repository")]
    NotFound(String),
    #[error(transparent)]
    Path(#[from] FsError),
    #[error(transparent)]
    Outline(#[from] OutlineError),
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error(transparent)]
    Refactor(#[from] RefactorError),
}

impl ToolsError {
    /// Whether the caller asked for something that is not there or not allowed (exit 2),
    /// rather than an operation failing.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ToolsError::NoRepo(_)
                | ToolsError::NotFound(_)
                | ToolsError::Path(FsError::OutsideRoot(_))
                | ToolsError::Refactor(
                    RefactorError::NotFound(_)
                        | RefactorError::Ambiguous { .. }
                        | RefactorError::BadName { .. }
                        | RefactorError::Collision { .. }
                )
        )
    }
}

/// One definition with its source text.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolSource {
    #[serde(flatten)]
    pub found: SymbolMatch,
    pub source: String,
}

/// What `view` shows: a file's outline, or the source of every definition a name matches.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum View {
    Outline(FileOutline),
    Symbols {
        query: String,
        /// More than one when the name is ambiguous: all are shown.
        matches: Vec<SymbolSource>,
    },
}

/// Symbol-level reading and editing of one repository. The language server is chosen once,
/// when the tools are made.
pub struct SymbolTools {
    root: PathBuf,
    workspace: Workspace,
    index: SymbolIndex,
    server: Option<ServerSpec>,
}

impl SymbolTools {
    pub fn new(root: impl Into<PathBuf>) -> Result<SymbolTools, ToolsError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(ToolsError::NoRepo(root));
        }
        Ok(SymbolTools {
            workspace: Workspace::new(root.clone()),
            root,
            index: SymbolIndex::default(),
            server: ServerSpec::detect(),
        })
    }

    /// Uses this language server (or none: name-based references and rename) instead of
    /// the one [`ServerSpec::detect`] found.
    pub fn with_server(mut self, server: Option<ServerSpec>) -> SymbolTools {
        self.server = server;
        self
    }

    /// The language server references and rename will use, if any.
    pub fn server(&self) -> Option<&ServerSpec> {
        self.server.as_ref()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn file(&self, rel: &str) -> Result<PathBuf, ToolsError> {
        Ok(self.workspace.path(rel)?)
    }

    /// The outline of a file (`not yet generated` when it does not exist).
    pub fn outline(&self, rel: &str) -> Result<FileOutline, ToolsError> {
        let mut outline = outline_file(&self.file(rel)?)?;
        outline.path = PathBuf::from(rel);
        Ok(outline)
    }

    /// Every definition the plain or qualified name matches.
    pub fn find_symbol(&self, query: &str) -> Result<Vec<SymbolMatch>, ToolsError> {
        Ok(self.index.find(&self.root, query)?)
    }

    /// A path (an existing file, or any `*.py` path) → its outline; otherwise a symbol →
    /// the source of every match.
    pub fn view(&self, target: &str) -> Result<View, ToolsError> {
        let looks_like_path = target.ends_with(".py") || target.contains('/');
        if looks_like_path || self.root.join(target).is_file() {
            return Ok(View::Outline(self.outline(target)?));
        }
        let found = self.find_symbol(target)?;
        if found.is_empty() {
            return Err(ToolsError::NotFound(target.into()));
        }
        let mut matches = Vec::with_capacity(found.len());
        for m in found {
            let source = read_source(&self.root.join(&m.file))?.unwrap_or_default();
            // From the start of the first line, so a method shows at its real indentation.
            let start = source
                .get(..m.symbol.start_byte)
                .and_then(|head| head.rfind('\n'))
                .map_or(0, |i| i + 1);
            let text = source
                .get(start..m.symbol.end_byte)
                .unwrap_or("")
                .to_string();
            matches.push(SymbolSource {
                found: m,
                source: text,
            });
        }
        Ok(View::Symbols {
            query: target.into(),
            matches,
        })
    }

    /// References of a symbol: language server when installed, else name-based.
    pub async fn references(&self, query: &str) -> Result<References, ToolsError> {
        Ok(refactor::references(&self.root, &self.index, self.server.as_ref(), query).await?)
    }

    /// Renames a symbol everywhere (all files or none; syntax-checked; collisions refused).
    pub async fn rename(&self, query: &str, new_name: &str) -> Result<RenameResult, ToolsError> {
        Ok(refactor::rename(
            &self.root,
            &self.index,
            self.server.as_ref(),
            query,
            new_name,
        )
        .await?)
    }
}

/// `view` as text: an outline one definition a line, or each match's source with line
/// numbers under a `file:line` header.
pub fn render_text(view: &View) -> String {
    let mut out = String::new();
    match view {
        View::Outline(outline) => {
            let path = outline.path.display();
            if outline.status == super::outline::NOT_YET_GENERATED {
                return format!("{path}: {}\n", outline.status);
            }
            out.push_str(&format!("{path}: {} definition(s)", outline.symbols.len()));
            if outline.has_syntax_errors {
                out.push_str(" (the file has syntax errors; the outline may be incomplete)");
            }
            out.push('\n');
            for s in &outline.symbols {
                let signature: Vec<&str> = s.signature.lines().map(str::trim).collect();
                out.push_str(&format!(
                    "{:>5}-{:<5} {:<14} {:<32} {}\n",
                    s.start_line,
                    s.end_line,
                    s.kind.as_str(),
                    s.qualified_name,
                    signature.join(" ")
                ));
            }
        }
        View::Symbols { query, matches } => {
            if matches.len() > 1 {
                out.push_str(&format!(
                    "`{query}` is ambiguous: {} matches\n\n",
                    matches.len()
                ));
            }
            for m in matches {
                let s = &m.found.symbol;
                out.push_str(&format!(
                    "==> {}:{} {} ({})\n",
                    m.found.file.display(),
                    s.start_line,
                    s.qualified_name,
                    s.kind.as_str()
                ));
                for (i, line) in m.source.lines().enumerate() {
                    out.push_str(&format!("{:>5} | {line}\n", s.start_line + i));
                }
                out.push('\n');
            }
        }
    }
    out
}
