//! Python source structure, read and edited by symbol: the line splitter the engine's answer
//! merger uses, and the symbol tools behind `zerorepo view` (the node loop does not call those
//! yet).
//!
//! - [`units`] splits a module into top-level units with a small line lexer (used by the
//!   answer merger; it needs no parser and never fails).
//! - [`outline`] (tree-sitter) lists definitions with qualified names, ranges and signatures.
//! - [`repo`] finds symbols across a repository (cached outlines) and name-based references.
//! - [`edit`] replaces a body or inserts beside a definition, checked and written atomically.
//! - [`check`] is the syntax check every write goes through (tree-sitter, then ruff/CPython).
//! - [`lsp`] is a small stdio client for ty or pyright; [`refactor`] uses it for references
//!   and rename, with a tree-sitter fallback that says it is approximate.
//! - [`stub`] is the stand-in for a function that could not be generated.
//! - [`repair`] fixes a local variable that shadows the module function it calls.
//! - [`tools`] is the one interface over all of it: [`CodeTools`].
//! - ruff and the language servers are found by [`crate::programs`].

pub mod check;
pub mod edit;
pub mod lsp;
pub mod outline;
pub mod refactor;
pub mod repair;
pub mod repo;
pub mod stub;
pub mod tools;
pub mod units;

pub use tools::{CodeTools, ToolsError, View};
pub use units::{Unit, UnitKind, attribute_bases, identifiers, split_units};
