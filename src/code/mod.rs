//! Python source structure, as much as the engine needs without a parser.
//!
//! [`units`] splits a module into top-level units (docstring, imports, definitions, other
//! statements) with a small lexer that understands strings, comments and brackets, so a
//! multi-line SVG template or a wrapped signature never splits a function. The tree-sitter
//! based tools (outline, symbol edits, references) will live beside it.

pub mod units;

pub use units::{Unit, UnitKind, identifiers, split_units};
