//! Serde model of `rpg.json` (the seed PRD's appendix A plus `signature`, `examples`, `parent`).
//!
//! The JSON Schema in `schemas/rpg.schema.json` is generated from these types; a test fails when
//! the committed schema is stale. Unknown fields are kept in `extra` so validation can warn about
//! typos such as `dependancies` instead of silently ignoring them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole plan: nodes, edges and free-form metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rpg {
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    /// Free-form facts about the plan (phase, timestamp, project_name, description, ...).
    /// One key is read and checked: `reference_tests`.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(extend("properties" = {
        "reference_tests": {
            "description": "The directory of the reference tests that measure code generated from this plan (`zerorepo eval`), relative to the plan file's directory; `rpg extract --tests` writes it. A non-empty string without control characters.",
            "type": "string"
        }
    }))]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// One unit of the plan: a function/class/data to write (leaf) or a module/package (composite).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Node {
    /// Unique id, for example `node_001`. Ties in the generation order are broken by id. At
    /// most 255 bytes, with no control or Unicode bidirectional-control characters.
    pub id: NodeId,
    /// The Python name of the function/class/data, or the module/package name: an identifier
    /// that is not a keyword, unique among the leaves of one file.
    pub name: String,
    /// What the node is: `function`, `class`, `method`, `data`, `module`, `package`, or any
    /// other word (at most 64 bytes), kept as written.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub kind: NodeKind,
    pub node_type: NodeType,
    /// Path relative to the output repository, at most 1024 bytes (255 per component); leaves
    /// and modules name a `.py` file, packages a directory; every directory and module name is
    /// a Python identifier. Not under `tests/` (the generated tests' place), and not named like
    /// a standard-library module (or `pytest`, `pluggy`, `conftest`) at the root or in `src/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// The specification the code and tests are written from; required for leaves. At most
    /// 64 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docstring: Option<String>,
    /// Ids of the nodes this node needs; they are generated first.
    #[serde(default)]
    pub dependencies: Vec<NodeId>,
    /// The subgraph (functional area) the node belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgraph_id: Option<String>,
    /// The exact `def`/`class` line without the trailing colon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Usage examples (doctest style) that tests should cover.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// The composite node (module/package) that contains this node; it is generated first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<NodeId>,
    /// A `data` node's value, as the Python source of a literal expression: strings, bytes,
    /// numbers, `True`/`False`/`None`, and lists, tuples, sets and dicts of them, with `-`/`+`
    /// before a number, and calls of `frozenset`, `set`, `tuple`, `list`, `dict`, `str`,
    /// `bytes`, `int`, `float`, `complex` or `bool` on such a literal or on nothing
    /// (`frozenset({"a", "b"})`, `float("inf")`, `dict(a=1)`). No name, attribute, operator,
    /// comprehension, f-string or other call. At most 1 MiB. Written into the module as
    /// `NAME = VALUE`; without it the value is written from the docstring. Only data nodes
    /// have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A node's identity in the plan (`node_001`): what edges, dependencies, parents, the
/// checkpoint and `--start-from-node` name. A string in JSON; a type of its own in Rust so that
/// an id is never confused with a name, a path or a subgraph. It reads as a `&str` (through
/// `Deref`) wherever text is wanted.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(String);

impl NodeId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl JsonSchema for NodeId {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

impl std::ops::Deref for NodeId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for NodeId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for NodeId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for NodeId {
    fn from(id: String) -> NodeId {
        NodeId(id)
    }
}

impl From<&str> for NodeId {
    fn from(id: &str) -> NodeId {
        NodeId(id.to_string())
    }
}

impl From<&String> for NodeId {
    fn from(id: &String) -> NodeId {
        NodeId(id.clone())
    }
}

impl From<NodeId> for String {
    fn from(id: NodeId) -> String {
        id.0
    }
}

impl PartialEq<str> for NodeId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for NodeId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for NodeId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<NodeId> for str {
    fn eq(&self, other: &NodeId) -> bool {
        self == other.0
    }
}

impl PartialEq<NodeId> for &str {
    fn eq(&self, other: &NodeId) -> bool {
        *self == other.0
    }
}

impl PartialEq<NodeId> for String {
    fn eq(&self, other: &NodeId) -> bool {
        *self == other.0
    }
}

/// What a node is (its `type`). The kinds the engine treats apart are variants; any other
/// word a plan uses (`feature`, `service`, ...) is kept as written in [`NodeKind::Other`], so
/// a plan reads and writes back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum NodeKind {
    /// A function: tests and an implementation.
    Function,
    /// A class (its methods are in its docstring).
    Class,
    /// A method.
    Method,
    /// Module-level data (a constant, a table, a default mapping): one assignment
    /// `NAME = VALUE` in its file, written before the functions that read it.
    Data,
    /// A module (`.py` file).
    Module,
    /// A package (directory).
    Package,
    /// Any other word, kept as written.
    Other(String),
}

impl NodeKind {
    /// The word used in JSON.
    pub fn as_str(&self) -> &str {
        match self {
            NodeKind::Function => "function",
            NodeKind::Class => "class",
            NodeKind::Method => "method",
            NodeKind::Data => "data",
            NodeKind::Module => "module",
            NodeKind::Package => "package",
            NodeKind::Other(word) => word,
        }
    }
}

impl From<&str> for NodeKind {
    fn from(word: &str) -> NodeKind {
        match word {
            "function" => NodeKind::Function,
            "class" => NodeKind::Class,
            "method" => NodeKind::Method,
            "data" => NodeKind::Data,
            "module" => NodeKind::Module,
            "package" => NodeKind::Package,
            other => NodeKind::Other(other.to_string()),
        }
    }
}

impl From<String> for NodeKind {
    fn from(word: String) -> NodeKind {
        match NodeKind::from(word.as_str()) {
            NodeKind::Other(_) => NodeKind::Other(word),
            known => known,
        }
    }
}

impl From<NodeKind> for String {
    fn from(kind: NodeKind) -> String {
        match kind {
            NodeKind::Other(word) => word,
            known => known.as_str().to_string(),
        }
    }
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeType {
    /// A function, class, method or data: gets an implementation (a data node, its
    /// assignment) and tests.
    Leaf,
    /// A module or package: its file or directory is created before its leaves.
    Composite,
}

/// A typed relation between two nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Edge {
    pub source: NodeId,
    pub target: NodeId,
    #[serde(rename = "type")]
    pub kind: EdgeKind,
}

/// Edge types and their direction (see docs/rpg-format.md): for every kind but `data_flow` and
/// `contains` the source depends on the target, so the target is generated first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// source calls target: target first.
    FunctionCall,
    /// source imports target: target first.
    Imports,
    /// source inherits from target: target first.
    Inherits,
    /// source uses target: target first.
    Uses,
    /// data flows from source to target: source first.
    DataFlow,
    /// source (a composite) contains target: source first.
    Contains,
}

impl EdgeKind {
    /// The name used in JSON (`function_call`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::FunctionCall => "function_call",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Uses => "uses",
            EdgeKind::DataFlow => "data_flow",
            EdgeKind::Contains => "contains",
        }
    }

    /// Returns `(dependency, dependent)` for an edge of this kind.
    pub(crate) fn dependency_pair<'a>(
        self,
        source: &'a str,
        target: &'a str,
    ) -> (&'a str, &'a str) {
        match self {
            EdgeKind::FunctionCall | EdgeKind::Imports | EdgeKind::Inherits | EdgeKind::Uses => {
                (target, source)
            }
            EdgeKind::DataFlow | EdgeKind::Contains => (source, target),
        }
    }
}

#[cfg(test)]
impl Node {
    /// A function leaf `name` at `path`, docstring `Does it.`, nothing else set: what tests
    /// build their nodes from, changing the fields they are about.
    pub(crate) fn function_for_test(id: &str, name: &str, path: &str) -> Node {
        Node {
            id: id.into(),
            name: name.into(),
            kind: "function".into(),
            node_type: NodeType::Leaf,
            file_path: Some(path.into()),
            docstring: Some("Does it.".into()),
            dependencies: vec![],
            subgraph_id: None,
            signature: None,
            examples: vec![],
            parent: None,
            value: None,
            extra: Default::default(),
        }
    }
}

impl Node {
    pub fn is_leaf(&self) -> bool {
        self.node_type == NodeType::Leaf
    }

    /// Whether the node is module-level data (a leaf of type `data`).
    pub fn is_data(&self) -> bool {
        self.is_leaf() && self.kind == NodeKind::Data
    }

    /// The subgraph name used for grouping; nodes without one share `default`.
    pub fn subgraph(&self) -> &str {
        self.subgraph_id.as_deref().unwrap_or("default")
    }

    /// The module stem of the node's file (`descriptive` for `src/stats/descriptive.py`).
    pub fn module_stem(&self) -> Option<&str> {
        let path = self.file_path.as_deref()?;
        let file = path.rsplit('/').next()?;
        file.strip_suffix(".py")
    }

    /// Where the node's tests live: `tests/test_<module>.py`.
    pub fn test_file(&self) -> Option<String> {
        self.module_stem()
            .map(|stem| format!("tests/test_{stem}.py"))
    }
}
