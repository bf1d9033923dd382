//! The pure half of talking to a language server: file URIs, position encodings, and the
//! text edits of a `WorkspaceEdit`, by file.
//!
//! LSP positions count characters in the encoding the server chose (UTF-16 unless both sides
//! agree on UTF-8), so every position is converted against the file's text before bytes are
//! touched. A server answer that creates, renames or deletes files is refused rather than
//! half-applied; the edits themselves are applied by the rename (`code::refactor`), back to
//! front, after its overlap check.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum EditsError {
    #[error("not a file URI: {0}")]
    NotFileUri(String),
    #[error("the server's edit has a position outside {path}: line {line}, character {character}")]
    BadPosition {
        path: PathBuf,
        line: u32,
        character: u32,
    },
    #[error("the server's answer is not a WorkspaceEdit: {0}")]
    Shape(String),
    #[error("the server wants to {0}; only text edits are applied")]
    FileOperation(String),
}

/// How LSP positions count characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    pub(crate) fn from_name(name: Option<&str>) -> Encoding {
        match name {
            Some("utf-8") => Encoding::Utf8,
            _ => Encoding::Utf16,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
pub(crate) struct Position {
    pub line: u32,
    pub character: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
pub(crate) struct Range {
    pub start: Position,
    pub end: Position,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct TextEdit {
    pub range: Range,
    #[serde(rename = "newText")]
    pub new_text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Location {
    pub uri: String,
    pub range: Range,
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
}

/// `file://` URI of an absolute path, percent-encoding everything but unreserved bytes.
pub(crate) fn path_to_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if is_unreserved(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI (percent-decoded).
pub(crate) fn uri_to_path(uri: &str) -> Result<PathBuf, EditsError> {
    use std::os::unix::ffi::OsStringExt;
    let rest = uri
        .strip_prefix("file://")
        .ok_or_else(|| EditsError::NotFileUri(uri.to_string()))?;
    // `file://host/path` is not ours; `file:///path` has an empty host.
    if !rest.starts_with('/') {
        return Err(EditsError::NotFileUri(uri.to_string()));
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = rest.get(i + 1..i + 3);
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// Byte offset of an LSP position in `text`; a character past the line's end clamps to it
/// (the spec says so), a line past the end is an error.
pub(crate) fn byte_offset(text: &str, pos: Position, encoding: Encoding) -> Option<usize> {
    let mut line_start = 0;
    for _ in 0..pos.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    let mut units = 0u32;
    for (i, ch) in line.char_indices() {
        if units >= pos.character {
            return Some(line_start + i);
        }
        units += match encoding {
            Encoding::Utf8 => ch.len_utf8() as u32,
            Encoding::Utf16 => ch.len_utf16() as u32,
        };
    }
    Some(line_end)
}

/// LSP position of a byte offset (which must lie on a character boundary).
pub(crate) fn position_of(text: &str, byte: usize, encoding: Encoding) -> Position {
    let byte = byte.min(text.len());
    let line_start = text[..byte].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..line_start].matches('\n').count() as u32;
    let prefix = &text[line_start..byte];
    let character = match encoding {
        Encoding::Utf8 => prefix.len(),
        Encoding::Utf16 => prefix.encode_utf16().count(),
    } as u32;
    Position { line, character }
}

/// The text edits of a `WorkspaceEdit`, per absolute path (`changes` and `documentChanges`
/// are both accepted; file creation, renaming and deletion are refused).
pub(crate) fn workspace_edit_files(
    edit: &Value,
) -> Result<BTreeMap<PathBuf, Vec<TextEdit>>, EditsError> {
    let mut out: BTreeMap<PathBuf, Vec<TextEdit>> = BTreeMap::new();
    if edit.is_null() {
        return Ok(out);
    }
    let shape = |e: serde_json::Error| EditsError::Shape(e.to_string());
    if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
        for (uri, edits) in changes {
            let edits: Vec<TextEdit> = serde_json::from_value(edits.clone()).map_err(shape)?;
            out.entry(uri_to_path(uri)?).or_default().extend(edits);
        }
    }
    if let Some(changes) = edit.get("documentChanges").and_then(Value::as_array) {
        for change in changes {
            if let Some(kind) = change.get("kind").and_then(Value::as_str) {
                return Err(EditsError::FileOperation(format!("{kind} a file")));
            }
            let uri = change
                .pointer("/textDocument/uri")
                .and_then(Value::as_str)
                .ok_or_else(|| EditsError::Shape("documentChanges entry without a uri".into()))?;
            let edits: Vec<TextEdit> =
                serde_json::from_value(change.get("edits").cloned().unwrap_or(Value::Null))
                    .map_err(shape)?;
            out.entry(uri_to_path(uri)?).or_default().extend(edits);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn uris_round_trip_with_spaces_and_unicode() {
        let path = Path::new("/tmp/a dir/é.py");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///tmp/a%20dir/%C3%A9.py");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        assert!(uri_to_path("untitled:x").is_err());
    }

    #[test]
    fn utf16_positions_count_surrogate_pairs_twice() {
        let text = "x = '😀'; mean\nnext";
        let byte = text.find("mean").unwrap();
        let p16 = position_of(text, byte, Encoding::Utf16);
        assert_eq!(p16, pos(0, 10));
        assert_eq!(byte_offset(text, p16, Encoding::Utf16), Some(byte));
        let p8 = position_of(text, byte, Encoding::Utf8);
        assert_eq!(p8, pos(0, 12));
        assert_eq!(byte_offset(text, p8, Encoding::Utf8), Some(byte));
        assert_eq!(
            byte_offset(text, pos(1, 99), Encoding::Utf16),
            Some(text.len())
        );
        assert_eq!(byte_offset(text, pos(5, 0), Encoding::Utf16), None);
    }

    #[test]
    fn workspace_edits_are_read_per_file_and_file_operations_refused() {
        let edit = serde_json::json!({"changes": {"file:///r/a.py": [
            {"range": {"start": pos(0, 4), "end": pos(0, 8)}, "newText": "avg"},
            {"range": {"start": pos(1, 7), "end": pos(1, 11)}, "newText": "avg"}
        ]}});
        let files = workspace_edit_files(&edit).unwrap();
        let edits = &files[Path::new("/r/a.py")];
        assert_eq!(edits.len(), 2);
        assert_eq!(edits[1].range.start, pos(1, 7));
        assert_eq!(edits[1].new_text, "avg");
        let ops = serde_json::json!({"documentChanges": [{"kind": "rename", "oldUri": "file:///a", "newUri": "file:///b"}]});
        assert!(matches!(
            workspace_edit_files(&ops),
            Err(EditsError::FileOperation(_))
        ));
    }
}
