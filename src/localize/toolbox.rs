//! The one interface a debug iteration uses to find and change code: the plan side
//! (search over node descriptions, dependency views) and the code side (a node's source, any
//! symbol's source, outlines, symbol edits, syntax checks, references and rename).
//!
//! Every *query* (search, deps, source) counts against the iteration's attempt budget, so a
//! model that keeps looking around ends with `LocalizationExhausted` and the history of what it
//! looked at; *edits* and checks are actions, not queries, and are not counted.

use std::path::Path;

use super::{
    DepsView, LocalizeError, Localizer, LocalizerOptions, Query, QueryRecord, SearchResult,
};
use crate::code::{CodeTools, ToolsError, View};

#[derive(Debug, thiserror::Error)]
pub enum ToolboxError {
    #[error(transparent)]
    Localize(#[from] LocalizeError),
    #[error(transparent)]
    Code(#[from] ToolsError),
    #[error("no node `{0}` in the plan")]
    UnknownNode(String),
    #[error("node `{0}` has no file path")]
    NoFile(String),
}

pub struct Toolbox {
    localizer: Localizer,
    code: CodeTools,
}

impl Toolbox {
    /// Opens a generated output directory: its plan, statuses and code.
    pub fn open(dir: &Path, options: LocalizerOptions) -> Result<Toolbox, ToolboxError> {
        Ok(Toolbox {
            localizer: Localizer::open_dir(dir, None, options)?,
            code: CodeTools::new(dir)?,
        })
    }

    pub fn search(
        &mut self,
        query: &str,
        k: usize,
        subgraph: Option<&str>,
    ) -> Result<SearchResult, ToolboxError> {
        Ok(self.localizer.search(query, k, subgraph)?)
    }

    pub fn deps(&mut self, node: &str, hops: usize) -> Result<DepsView, ToolboxError> {
        Ok(self.localizer.deps(node, hops)?)
    }

    /// The source of the function a node produced, found in the node's own file (a name may
    /// be defined in several files; only the node's counts).
    pub fn node_source(&mut self, id: &str) -> Result<View, ToolboxError> {
        let node = self
            .localizer
            .rpg()
            .nodes
            .iter()
            .find(|n| n.id == id)
            .ok_or_else(|| ToolboxError::UnknownNode(id.into()))?;
        let file = node
            .file_path
            .clone()
            .ok_or_else(|| ToolboxError::NoFile(id.into()))?;
        let name = node.name.clone();
        let code = &self.code;
        let view = self.localizer.charged(
            Query::Source { target: id.into() },
            || -> Result<(View, Vec<String>), ToolsError> {
                let view = match code.view(&name)? {
                    View::Symbols { query, matches } => View::Symbols {
                        query,
                        matches: matches
                            .into_iter()
                            .filter(|m| m.found.file == Path::new(&file))
                            .collect(),
                    },
                    outline => outline,
                };
                match &view {
                    View::Symbols { matches, .. } if matches.is_empty() => {
                        Err(ToolsError::NotFound(format!("{name} in {file}")))
                    }
                    _ => Ok((view, vec![file.clone()])),
                }
            },
        )?;
        Ok(view?)
    }

    /// The source of any symbol, or a file's outline (what `zerorepo view` shows).
    pub fn view(&mut self, target: &str) -> Result<View, ToolboxError> {
        let code = &self.code;
        let view = self.localizer.charged(
            Query::Source {
                target: target.into(),
            },
            || code.view(target).map(|v| (v, Vec::new())),
        )?;
        Ok(view?)
    }

    /// Symbol edits, syntax checks, references and rename (not counted against the budget).
    pub fn code(&self) -> &CodeTools {
        &self.code
    }

    /// Starts the next debug iteration with a full budget; the history is kept.
    pub fn next_iteration(&mut self) -> u32 {
        self.localizer.next_iteration()
    }

    pub fn remaining(&self) -> u32 {
        self.localizer.remaining()
    }

    pub fn history(&self) -> &[QueryRecord] {
        self.localizer.history()
    }
}
