//! Python source structure: what the engine and the debug loop read and edit by symbol.
//!
//! - [`units`] splits a module into top-level units with a small line lexer (used by the
//!   answer merger; it needs no parser and never fails).
//! - [`outline`] (tree-sitter) lists definitions with qualified names, ranges and signatures.
//! - [`edit`] replaces a body or inserts beside a definition, checked and written atomically.
//! - [`check`] is the syntax check every write goes through (tree-sitter, then ruff/CPython).
//! - [`programs`] finds ruff and the language servers (on `PATH` or in the set-up venv).

pub mod check;
pub mod edit;
pub mod outline;
pub mod programs;
pub mod units;

pub use units::{Unit, UnitKind, identifiers, split_units};
