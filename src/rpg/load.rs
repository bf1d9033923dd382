//! Reading `rpg.json`: the only I/O of the `rpg` module. Errors carry the path and, for bad
//! JSON, the line and column serde_json reports.

use std::path::{Path, PathBuf};

use super::model::Rpg;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid RPG JSON at line {line}, column {column}: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Reads and parses an RPG file (no validation).
pub fn load_file(path: &Path) -> Result<Rpg, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, path)
}

/// Parses RPG JSON text; `path` only labels errors.
pub fn parse_str(text: &str, path: &Path) -> Result<Rpg, LoadError> {
    serde_json::from_str(text).map_err(|err| {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            err.to_string().contains("missing field `node_type`"),
            "{err}"
        );
    }
}
