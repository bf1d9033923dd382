//! Python source by symbol (named apart from `zerorepo code`, whose module is `change`): the
//! line splitter of the engine's answer merger, the outlines and edits the engine and
//! `zerorepo code` ground their answers in, and the tools behind `zerorepo view` and
//! `zerorepo rename`.
//!
//! - [`units`] splits a module into top-level units with a small line lexer (used by the
//!   answer merger; it needs no parser and never fails).
//! - [`outline`] (tree-sitter) lists definitions with qualified names, ranges and signatures.
//! - [`repo`] finds symbols across a repository (cached outlines) and name-based references.
//! - [`edit`] replaces a definition or inserts code beside one, source to source.
//! - [`check`] is the syntax check (tree-sitter, then ruff/CPython): of a rename's writes, of
//!   an overlay's Python files, of the node loop's modules and tests; [`cpython`] keeps one
//!   interpreter a process for CPython's verdict.
//! - [`lsp`] is a small stdio client for ty or pyright; [`refactor`] uses it for references
//!   and rename, with a tree-sitter fallback that says it is approximate.
//! - [`stub`] is the stand-in for a function that could not be generated.
//! - [`repair`] fixes a local variable that shadows the module function it calls.
//! - [`tools`] is the one interface over all of it: [`SymbolTools`].
//! - ruff and the language servers are found by [`crate::programs`].

pub mod check;
mod cpython;
pub mod edit;
pub mod lsp;
pub mod outline;
pub mod refactor;
pub mod repair;
pub mod repo;
pub mod stub;
pub mod tools;
pub mod units;

pub use tools::{SymbolTools, ToolsError};
pub(crate) use units::{Unit, UnitKind, attribute_bases, identifiers, split_units};
