//! Why a plan is refused, and how plan text is shown in the messages: every user-supplied
//! string goes through [`shown`], so a hostile plan cannot put terminal escapes or megabytes
//! of text on the user's screen, and a long cycle is one line, not 20,000.

use std::path::PathBuf;

use super::{MAX_DOCSTRING_BYTES, SUBGRAPH_ID_RULE, is_bidi_control};
use crate::rpg::model::NodeId;

/// Steps shown at each end of a long cycle; the middle is summed up in one line.
pub(super) const CYCLE_ENDS: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpgError {
    #[error("the RPG has no nodes")]
    Empty,
    #[error("node #{position}: empty id")]
    EmptyId { position: usize },
    #[error("node #{position}: id `{}` {reason}", shown(id))]
    BadId {
        position: usize,
        id: NodeId,
        reason: &'static str,
    },
    #[error("duplicate node id `{}` (nodes #{first} and #{second})", shown(id))]
    DuplicateId {
        id: NodeId,
        first: usize,
        second: usize,
    },
    #[error(
        "node `{}`: {field} refers to unknown node `{}`",
        shown(node),
        shown(missing)
    )]
    UnknownReference {
        node: NodeId,
        field: &'static str,
        missing: NodeId,
    },
    #[error(
        "edge #{position} ({} -> {}): unknown node `{}`",
        shown(source_id),
        shown(target),
        shown(missing)
    )]
    UnknownEdgeEnd {
        position: usize,
        source_id: NodeId,
        target: NodeId,
        missing: NodeId,
    },
    #[error(
        "node `{}`: parent `{}` is a leaf; a parent must be a composite node",
        shown(node),
        shown(parent)
    )]
    LeafParent { node: NodeId, parent: NodeId },
    #[error(
        "leaf node `{}`: missing docstring (the docstring is the specification)",
        shown(node)
    )]
    MissingDocstring { node: NodeId },
    #[error("leaf node `{}`: missing file_path", shown(node))]
    MissingFilePath { node: NodeId },
    #[error("node `{}`: file_path `{}` {reason}", shown(node), shown(path))]
    BadFilePath {
        node: NodeId,
        path: String,
        reason: &'static str,
    },
    /// The test file derived from the node's module (`tests/test_<module>.py`) is unusable.
    #[error(
        "node `{}`: its tests would go to `{}`, which {reason}",
        shown(node),
        shown(path)
    )]
    BadTestFile {
        node: NodeId,
        path: String,
        reason: &'static str,
    },
    #[error(
        "leaf node `{}`: file_path `{}` is not a .py file",
        shown(node),
        shown(path)
    )]
    NotPython { node: NodeId, path: String },
    #[error("node `{}`: name `{}` {reason}", shown(node), shown(name))]
    BadName {
        node: NodeId,
        name: String,
        reason: &'static str,
    },
    /// A field shown on the terminal (`plan`, `status`) holds what could move the cursor or
    /// reorder the text around it, or is absurdly long.
    #[error("node `{}`: {field} `{}` {reason}", shown(node), shown(text))]
    BadText {
        node: NodeId,
        field: &'static str,
        text: String,
        reason: &'static str,
    },
    /// Two leaves define one name in one file: the second would replace the first.
    #[error(
        "node `{}`: name `{}` is also the name of node `{}` in `{}`; one file cannot define two functions or classes of one name (the second would replace the first)",
        shown(node),
        shown(name),
        shown(first),
        shown(path)
    )]
    DuplicateName {
        node: NodeId,
        first: NodeId,
        name: String,
        path: String,
    },
    /// A module or package at an import root (the repository root or `src/`) named like a
    /// module Python or the test runner imports.
    #[error(
        "node `{}`: file_path `{}` would shadow {what} `{module}`: the repository root and `src/` are on `sys.path` when tests run, so every `import {module}` would load the plan's module instead; rename it or move it into a package",
        shown(node),
        shown(path)
    )]
    ShadowsModule {
        node: NodeId,
        path: String,
        module: String,
        what: &'static str,
    },
    #[error(
        "node `{}`: docstring is {bytes} bytes, more than the {MAX_DOCSTRING_BYTES} (64 KiB) allowed (the docstring is the specification, sent in every prompt and written into the module)",
        shown(node)
    )]
    DocstringTooLong { node: NodeId, bytes: usize },
    /// Reported once per distinct id: `node` is the first node with it, `others` how many more.
    #[error("node `{}`{}: subgraph_id `{}` is not allowed: {SUBGRAPH_ID_RULE}", shown(node), and_more(*others), shown(subgraph))]
    BadSubgraphId {
        node: NodeId,
        others: usize,
        subgraph: String,
    },
    /// `path` is the whole cycle and `why` one line per step; the message shows only both ends
    /// of a long one (see [`RpgError::details`]).
    #[error(
        "dependency cycle{}: {}",
        cycle_size(path),
        elide(path, " -> ", "nodes")
    )]
    Cycle { path: Vec<NodeId>, why: Vec<String> },
    /// A metadata key the engine reads holds what it cannot use.
    #[error("metadata `{key}` {reason}")]
    BadMetadata {
        key: &'static str,
        reason: &'static str,
    },
    /// A data node's `value` is not a literal expression ([`crate::python::check_literal`]).
    #[error("data node `{}`: value {reason}", shown(node))]
    BadValue {
        node: NodeId,
        reason: crate::python::LiteralError,
    },
    /// A `value` on a node that is not data: nothing would write it.
    #[error(
        "node `{}`: only a data node (type `data`) has a value; this one's type is `{}`",
        shown(node),
        shown(kind)
    )]
    ValueNotData { node: NodeId, kind: String },
    /// A `data` node that is not a leaf.
    #[error(
        "node `{}`: type `data` is module-level data, a leaf written into its module; its node_type must be `leaf`",
        shown(node)
    )]
    CompositeData { node: NodeId },
    #[error(
        "node `{node}`: file_path `{path}` escapes the output directory through symlink `{link}`"
    )]
    SymlinkEscape {
        node: NodeId,
        path: String,
        link: PathBuf,
    },
}

impl RpgError {
    /// Lines that explain the error beyond its one-line message: for a cycle, why each step is
    /// there, both ends of a long cycle only.
    pub(crate) fn details(&self) -> Vec<String> {
        match self {
            RpgError::Cycle { why, .. } if why.len() > 2 * CYCLE_ENDS + 2 => {
                let hidden = why.len() - 2 * CYCLE_ENDS;
                let mut lines = why[..CYCLE_ENDS].to_vec();
                lines.push(format!("… {hidden} more steps …"));
                lines.extend_from_slice(&why[why.len() - CYCLE_ENDS..]);
                lines
            }
            RpgError::Cycle { why, .. } => why.clone(),
            _ => Vec::new(),
        }
    }
}

/// A user-supplied string as it may appear in a message: control characters, Unicode
/// bidirectional controls and backslashes escaped (so `\0` means NUL and nothing reaches the
/// terminal raw: no escape sequence moves the cursor, no override reorders the line), at most
/// 200 characters.
pub fn shown(text: &str) -> String {
    const MAX_CHARS: usize = 200;
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || c == '\\' {
            out.extend(c.escape_debug());
        } else if is_bidi_control(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with every character that could act on a terminal escaped as `\u{..}`: control
/// characters but the newline and the tab, and the bidirectional controls
/// ([`is_bidi_control`]). Text without them is returned unchanged. For whole outputs (a plan,
/// a status) that show plan or model text; [`shown`] is for one string inside a message.
pub(crate) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Why a short piece of plan text shown on the terminal (an id, a name, a type) cannot be
/// used, if it cannot.
pub(super) fn shown_text_problem(text: &str) -> Option<&'static str> {
    if text.contains('\0') {
        Some("contains a NUL byte")
    } else if text.chars().any(char::is_control) {
        Some("contains a control character")
    } else if text.chars().any(is_bidi_control) {
        Some(
            "contains a Unicode bidirectional control character (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F or U+061C), which reorders the text shown around it",
        )
    } else {
        None
    }
}

pub(super) fn and_more(others: usize) -> String {
    match others {
        0 => String::new(),
        n => format!(" (and {n} more node(s))"),
    }
}

/// ` of N nodes` for a cycle long enough to be shortened, so the size is never hidden.
pub(super) fn cycle_size(path: &[NodeId]) -> String {
    if path.len() > 2 * CYCLE_ENDS + 2 {
        format!(" of {} nodes", path.len() - 1)
    } else {
        String::new()
    }
}

/// `items` joined by `sep`; a long list keeps its first and last few and says how many lie
/// between, so a 20,000-node cycle is one line, not 20,000.
pub(super) fn elide(items: &[NodeId], sep: &str, what: &str) -> String {
    if items.len() <= 2 * CYCLE_ENDS + 2 {
        return items.iter().map(|s| shown(s)).collect::<Vec<_>>().join(sep);
    }
    let hidden = items.len() - 2 * CYCLE_ENDS;
    let head = items[..CYCLE_ENDS].iter().map(|s| shown(s));
    let tail = items[items.len() - CYCLE_ENDS..].iter().map(|s| shown(s));
    head.chain(std::iter::once(format!("… {hidden} more {what} …")))
        .chain(tail)
        .collect::<Vec<_>>()
        .join(sep)
}
