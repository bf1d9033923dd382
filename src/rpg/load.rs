//! Reading `rpg.json`: the only I/O of the `rpg` module.
//!
//! Bytes become text first: a UTF-8 byte-order mark is dropped (editors on Windows write one),
//! and bytes that are not UTF-8 are located by offset, line and column.
//!
//! A well-formed plan is then read by serde in one pass. Only when that fails is the text read
//! again, more slowly, so the user sees every problem at once instead of serde's first one:
//!
//! 1. text → JSON tree: syntax errors keep serde_json's line and column, and a key repeated in
//!    one object is refused with its place (serde refuses a repeated field of a node, an edge
//!    or the top level; a plain `serde_json::Value` would keep the last one silently);
//! 2. tree → [`Rpg`]: the top level, each node and each edge are checked on their own, and
//!    every field of the wrong type is reported as `node #3 (`id`): field `name`: expected a
//!    string, got the number 5`.
//!
//! Two passes rather than one because the tree costs: on a 100,000-node plan serde alone reads
//! it in about a tenth of the time (see reports/validate.md). Nesting is bounded by
//! serde_json's recursion limit (128) in both, so a hostile `[[[[...` is an error, not a stack
//! overflow.

use std::path::{Path, PathBuf};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::model::{Edge, Node, Rpg};
use super::validate::shown;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `offset` counts bytes from the start of the file (a byte-order mark included); `line`
    /// and `column` are 1-based, the column in bytes, as serde_json counts them.
    #[error("{path}: not UTF-8: invalid byte at offset {offset} (line {line}, column {column})")]
    NotUtf8 {
        path: PathBuf,
        offset: usize,
        line: usize,
        column: usize,
    },
    #[error("{path}: invalid RPG JSON at line {line}, column {column}: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Valid JSON that is not an RPG: every misplaced or mistyped field, each naming its node
    /// (or edge) and field.
    #[error("{path}: not a valid RPG ({} problem(s)):{}", problems.len(), bullets(problems))]
    Format {
        path: PathBuf,
        problems: Vec<String>,
    },
}

fn bullets(problems: &[String]) -> String {
    problems.iter().map(|p| format!("\n  - {p}")).collect()
}

/// Reads and parses an RPG file (no validation).
pub fn load_file(path: &Path) -> Result<Rpg, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bytes(&bytes, path)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses RPG JSON bytes; `path` only labels errors. Accepts a leading UTF-8 byte-order mark.
pub(crate) fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Rpg, LoadError> {
    let skipped = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    match std::str::from_utf8(&bytes[skipped..]) {
        Ok(text) => parse_str(text, path),
        Err(err) => {
            let offset = skipped + err.valid_up_to();
            let before = &bytes[skipped..offset];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |newline| newline + 1);
            Err(LoadError::NotUtf8 {
                path: path.to_path_buf(),
                offset,
                line,
                column: before.len() - line_start + 1,
            })
        }
    }
}

/// Parses RPG JSON text; `path` only labels errors. Accepts a leading byte-order mark.
pub fn parse_str(text: &str, path: &Path) -> Result<Rpg, LoadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Ok(rpg) = serde_json::from_str::<Rpg>(text) {
        return Ok(rpg);
    }
    let tree = parse_tree(text).map_err(|err| {
        // serde_json appends " at line L column C" to its message; we report them as fields.
        let message = err.to_string();
        let message = match message.rfind(" at line ") {
            Some(cut) => message[..cut].to_string(),
            None => message,
        };
        LoadError::Json {
            path: path.to_path_buf(),
            line: err.line(),
            column: err.column(),
            message,
        }
    })?;
    to_rpg(tree).map_err(|problems| LoadError::Format {
        path: path.to_path_buf(),
        problems,
    })
}

/// The JSON tree of `text`, refusing a key repeated within one object.
fn parse_tree(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let StrictValue(value) = StrictValue::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A `serde_json::Value` whose objects may not repeat a key.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity, so this is always a number.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key `{}` in one object",
                    shown(&key)
                )));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// What a JSON value is, for "expected X, got Y" messages.
fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{}\"", shown(s)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The JSON type a field must have.
#[derive(Clone, Copy)]
enum Want {
    Text,
    /// A string or null.
    OptionalText,
    /// An array of strings.
    TextList,
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

/// The fields of a node, as `Node`'s serde attributes define them: name, type, required.
const NODE_FIELDS: &[(&str, Want, bool)] = &[
    ("id", Want::Text, true),
    ("name", Want::Text, true),
    ("type", Want::Text, true),
    ("node_type", Want::OneOf(&["leaf", "composite"]), true),
    ("file_path", Want::OptionalText, false),
    ("docstring", Want::OptionalText, false),
    ("dependencies", Want::TextList, false),
    ("subgraph_id", Want::OptionalText, false),
    ("signature", Want::OptionalText, false),
    ("examples", Want::TextList, false),
    ("parent", Want::OptionalText, false),
];

const EDGE_KINDS: &[&str] = &[
    "function_call",
    "imports",
    "inherits",
    "uses",
    "data_flow",
    "contains",
];

const EDGE_FIELDS: &[(&str, Want, bool)] = &[
    ("source", Want::Text, true),
    ("target", Want::Text, true),
    ("type", Want::OneOf(EDGE_KINDS), true),
];

/// Checks `object`'s known fields against `fields`, adding one problem per wrong field.
/// `label` names the element; it is only formatted when something is wrong.
fn check_fields(
    label: &dyn Fn() -> String,
    object: &Map<String, Value>,
    fields: &[(&str, Want, bool)],
    problems: &mut Vec<String>,
) {
    for &(name, want, required) in fields {
        let Some(value) = object.get(name) else {
            if required {
                problems.push(format!("{}: missing field `{name}`", label()));
            }
            continue;
        };
        let expected = match (want, value) {
            (Want::Text, Value::String(_))
            | (Want::OptionalText, Value::String(_) | Value::Null) => {
                continue;
            }
            (Want::Text, _) => "a string".to_string(),
            (Want::OptionalText, _) => "a string or null".to_string(),
            (Want::TextList, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        problems.push(format!(
                            "{}: field `{name}`[{i}]: expected a string, got {}",
                            label(),
                            kind_of(item)
                        ));
                    }
                }
                continue;
            }
            (Want::TextList, _) => "an array of strings".to_string(),
            (Want::OneOf(allowed), Value::String(s)) if allowed.contains(&s.as_str()) => continue,
            (Want::OneOf(allowed), _) => {
                let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                format!("one of {}", quoted.join(", "))
            }
        };
        problems.push(format!(
            "{}: field `{name}`: expected {expected}, got {}",
            label(),
            kind_of(value)
        ));
    }
}

/// Checks one element of `nodes` or `edges`; returns its object when every field is right.
fn checked(
    what: &str,
    position: usize,
    value: Value,
    fields: &[(&str, Want, bool)],
    problems: &mut Vec<String>,
) -> Option<Map<String, Value>> {
    let Value::Object(object) = value else {
        problems.push(format!(
            "{what} #{position}: expected an object, got {}",
            kind_of(&value)
        ));
        return None;
    };
    let label = || match object.get("id") {
        Some(Value::String(id)) => format!("{what} #{position} (`{}`)", shown(id)),
        _ => format!("{what} #{position}"),
    };
    let before = problems.len();
    check_fields(&label, &object, fields, problems);
    (problems.len() == before).then_some(object)
}

/// Checks and converts one element: serde builds it once its fields are right, and says why
/// not should it still fail (which the checks, being complete, leave for none).
fn convert<T: serde::de::DeserializeOwned>(
    what: &str,
    position: usize,
    value: Value,
    fields: &[(&str, Want, bool)],
    problems: &mut Vec<String>,
) -> Option<T> {
    let object = checked(what, position, value, fields, problems)?;
    serde_json::from_value(Value::Object(object))
        .map_err(|err| problems.push(format!("{what} #{position}: {err}")))
        .ok()
}

/// Builds the RPG from its JSON tree, or says everything that is wrong with it.
fn to_rpg(tree: Value) -> Result<Rpg, Vec<String>> {
    let Value::Object(mut top) = tree else {
        return Err(vec![format!(
            "the top level must be an object with a `nodes` array, got {}",
            kind_of(&tree)
        )]);
    };
    let mut problems = Vec::new();
    let mut list = |key: &str, required: bool, problems: &mut Vec<String>| match top.remove(key) {
        Some(Value::Array(items)) => items,
        None if !required => Vec::new(),
        None => {
            problems.push(format!("missing field `{key}`"));
            Vec::new()
        }
        Some(other) => {
            problems.push(format!(
                "field `{key}`: expected an array, got {}",
                kind_of(&other)
            ));
            Vec::new()
        }
    };
    let node_values = list("nodes", true, &mut problems);
    let edge_values = list("edges", false, &mut problems);
    let metadata = match top.remove("metadata") {
        None => Map::new(),
        Some(Value::Object(metadata)) => metadata,
        Some(other) => {
            problems.push(format!(
                "field `metadata`: expected an object, got {}",
                kind_of(&other)
            ));
            Map::new()
        }
    };
    let mut nodes = Vec::with_capacity(node_values.len());
    for (position, value) in node_values.into_iter().enumerate() {
        nodes.extend(convert::<Node>(
            "node",
            position,
            value,
            NODE_FIELDS,
            &mut problems,
        ));
    }
    let mut edges = Vec::with_capacity(edge_values.len());
    for (position, value) in edge_values.into_iter().enumerate() {
        edges.extend(convert::<Edge>(
            "edge",
            position,
            value,
            EDGE_FIELDS,
            &mut problems,
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Rpg {
        nodes,
        edges,
        metadata,
        extra: top.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpg::model::{EdgeKind, NodeType};

    fn problems_of(text: &str) -> Vec<String> {
        match parse_str(text, Path::new("p.json")) {
            Err(LoadError::Format { problems, .. }) => problems,
            other => panic!("expected a format error, got {other:?}"),
        }
    }

    #[test]
    fn invalid_json_reports_line_and_column() {
        let err = parse_str("{\n  \"nodes\": [\n    {,\n", Path::new("x.json")).unwrap_err();
        let LoadError::Json { line, column, .. } = &err else {
            panic!("expected a JSON error, got {err}");
        };
        assert_eq!((*line, *column), (3, 6));
        assert!(
            err.to_string()
                .starts_with("x.json: invalid RPG JSON at line 3, column 6")
        );
    }

    #[test]
    fn missing_required_field_is_named() {
        let err = parse_str(
            r#"{"nodes": [{"id": "a", "name": "a", "type": "function"}]}"#,
            Path::new("p"),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("node #0 (`a`): missing field `node_type`"),
            "{err}"
        );
    }

    #[test]
    fn every_mistyped_field_is_reported_with_its_node_and_field() {
        let problems = problems_of(
            r#"{"nodes": [
                {"id": "a", "name": 5, "type": "function", "node_type": "leaf"},
                {"id": "b", "name": "b", "type": "function", "node_type": "leef",
                 "dependencies": ["a", 7], "docstring": ["x"]},
                {"name": "c", "type": "function", "node_type": "leaf"},
                {"id": 3, "name": "d", "type": "function", "node_type": "leaf"},
                "not a node"
            ],
            "edges": [{"source": "a", "target": "b", "type": "calls"}]}"#,
        );
        assert_eq!(
            problems,
            [
                "node #0 (`a`): field `name`: expected a string, got the number 5",
                "node #1 (`b`): field `node_type`: expected one of \"leaf\", \"composite\", got the string \"leef\"",
                "node #1 (`b`): field `docstring`: expected a string or null, got an array",
                "node #1 (`b`): field `dependencies`[1]: expected a string, got the number 7",
                "node #2: missing field `id`",
                "node #3: field `id`: expected a string, got the number 3",
                "node #4: expected an object, got the string \"not a node\"",
                "edge #0: field `type`: expected one of \"function_call\", \"imports\", \"inherits\", \"uses\", \"data_flow\", \"contains\", got the string \"calls\"",
            ]
        );
    }

    #[test]
    fn top_level_of_the_wrong_shape_is_named() {
        assert_eq!(
            problems_of("[1, 2]"),
            ["the top level must be an object with a `nodes` array, got an array"]
        );
        assert_eq!(
            problems_of(r#"{"nodes": {}, "edges": 3, "metadata": []}"#),
            [
                "field `nodes`: expected an array, got an object",
                "field `edges`: expected an array, got the number 3",
                "field `metadata`: expected an object, got an array",
            ]
        );
        assert_eq!(problems_of("{}"), ["missing field `nodes`"]);
    }

    #[test]
    fn a_well_typed_plan_keeps_unknown_fields_for_the_warnings() {
        let rpg = parse_str(
            r#"{"nodes": [{"id": "a", "name": "a", "type": "function", "node_type": "leaf",
                "file_path": null, "dependancies": ["x"]}],
               "edges": [], "metadata": {"phase": 3}, "extra_top": 1}"#,
            Path::new("p"),
        )
        .unwrap();
        assert_eq!(rpg.nodes[0].file_path, None);
        assert!(rpg.nodes[0].extra.contains_key("dependancies"));
        assert!(rpg.extra.contains_key("extra_top"));
        assert_eq!(rpg.metadata["phase"], 3);
    }

    #[test]
    fn a_repeated_key_is_refused_with_its_line() {
        let err = parse_str(
            "{\"nodes\": [\n {\"id\": \"a\", \"id\": \"b\"}]}",
            Path::new("p"),
        )
        .unwrap_err();
        let LoadError::Json { line, message, .. } = &err else {
            panic!("expected a JSON error, got {err}");
        };
        assert_eq!(*line, 2);
        assert_eq!(message, "duplicate key `id` in one object");
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let text = "\u{feff}{\"nodes\": []}";
        assert!(parse_str(text, Path::new("p")).is_ok());
        assert!(parse_bytes(text.as_bytes(), Path::new("p")).is_ok());
    }

    #[test]
    fn bytes_that_are_not_utf8_are_located() {
        let mut bytes = b"\xEF\xBB\xBF{\"nodes\": [\n  {\"id\": \"ab".to_vec();
        bytes.push(0xFF);
        bytes.extend_from_slice(b"\"}]}");
        let err = parse_bytes(&bytes, Path::new("p.json")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.json: not UTF-8: invalid byte at offset 27 (line 2, column 13)"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!("{{\"nodes\": {}", "[".repeat(200_000));
        let err = parse_str(&text, Path::new("p")).unwrap_err();
        assert!(
            err.to_string().contains("recursion limit exceeded"),
            "{err}"
        );
    }

    #[test]
    fn the_detailed_pass_reads_a_valid_plan_as_serde_does_and_checks_every_field() {
        let node = r#"{"id": "a", "name": "alpha", "type": "function", "node_type": "composite",
            "file_path": "src/m.py", "docstring": "Doc.", "dependencies": ["b", "c"],
            "subgraph_id": "s", "signature": "def alpha(x)", "examples": [">>> alpha(1)"],
            "parent": "p", "status": "passed", "other": {"k": [1]}}"#;
        let text = format!(
            r#"{{"nodes": [{node}], "edges": [{{"source": "a", "target": "a", "type": "uses", "x": 1}}],
                "metadata": {{"phase": 3}}, "extra_top": true}}"#
        );
        let by_serde: Rpg = serde_json::from_str(&text).unwrap();
        let detailed = to_rpg(parse_tree(&text).unwrap()).unwrap();
        assert_eq!(detailed, by_serde);
        assert_eq!(parse_str(&text, Path::new("p")).unwrap(), by_serde);
        // Every field of the model is listed for the type checks.
        let listed: Vec<&str> = NODE_FIELDS.iter().map(|(name, _, _)| *name).collect();
        let serialized = serde_json::to_value(&by_serde.nodes[0]).unwrap();
        let keys: Vec<&str> = serialized
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, listed);
    }

    #[test]
    fn the_allowed_names_are_the_models() {
        for name in EDGE_KINDS {
            let kind: EdgeKind = serde_json::from_value(Value::from(*name)).unwrap();
            assert_eq!(kind.as_str(), *name);
        }
        let Want::OneOf(node_types) = NODE_FIELDS[3].1 else {
            panic!("node_type is a choice")
        };
        for name in node_types {
            let parsed: NodeType = serde_json::from_value(Value::from(*name)).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), *name);
        }
    }
}
