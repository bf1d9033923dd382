//! Turning model answers into file contents.
//!
//! [`parse`] turns a chat answer into edits (fenced code, SEARCH/REPLACE blocks, unified
//! diffs, file paths), [`hunk`] applies replacements with fuzzy location, [`apply`] keeps what
//! is meant for one target file, and [`merge`] merges code into a module definition by
//! definition, so a node's answer replaces only its own function and keeps everything earlier
//! nodes wrote; [`cutoff`] ends answers that run long. All pure.

pub mod apply;
pub mod cutoff;
pub mod hunk;
pub mod merge;
pub mod parse;

pub use apply::code_for_target;
pub(crate) use merge::merge_python;
pub(crate) use merge::shape_correction;
pub(crate) use merge::without_self_imports;
pub use merge::{shape_implementation, shape_tests};
