//! Turning model answers into file contents.
//!
//! [`fence`] pulls the Python code out of a chat answer; [`merge`] merges that code into the
//! current content of a file, definition by definition, so a node's answer replaces only its
//! own function and keeps everything earlier nodes wrote. Both are pure. Search/replace blocks,
//! unified diffs and fuzzy hunk application belong here too when they arrive.

pub mod fence;
pub mod merge;

pub use fence::{ExtractError, extract_code};
pub use merge::{merge_python, shape_implementation, shape_tests};
