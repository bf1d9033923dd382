//! Symbol-level edits: replace a body, insert code before or after a definition.
//!
//! The text work is pure (`replace_body`, `insert_before`, `insert_after` map source to
//! source); `apply_to_file` adds the I/O: read, edit, syntax-check, then an atomic write
//! through `fsutil::write_atomic`. A file whose edited text fails the check is never
//! written: the caller gets the check report and the file keeps its old bytes.
//!
//! Decisions:
//! - Everything outside the replaced region stays byte-exact: decorators, the header with its
//!   trailing comment, and every line after the body.
//! - The docstring is kept when the new body brings none (a model fixing a bug rarely
//!   repeats it, and losing it would lose the spec the tests were written from); a new body
//!   that starts with its own docstring replaces it.
//! - New code is re-indented to the body's (or the definition's) indentation. Lines inside a
//!   multi-line string literal are kept verbatim, because their whitespace is the string's
//!   value; docstrings are the exception and move with the code.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::check::{CheckError, CheckReport, check_source};
use super::outline::{Located, OutlineError, locate_all, parse, read_source};
use crate::fsutil::{FsError, write_atomic};

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("no symbol `{name}` here (defined: {available})")]
    SymbolNotFound { name: String, available: String },
    #[error("`{name}` is ambiguous: {candidates}; use the qualified name")]
    Ambiguous { name: String, candidates: String },
    #[error("{0}: the file does not exist")]
    NoFile(PathBuf),
    #[error("refused to write {}: the result has a syntax error at {}", path.display(), report.summary())]
    Refused { path: PathBuf, report: CheckReport },
    #[error(transparent)]
    Outline(#[from] OutlineError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Write(#[from] FsError),
}

/// What an edit did to a file.
#[derive(Debug, Clone, Serialize)]
pub struct EditResult {
    pub path: PathBuf,
    pub symbol: String,
    /// 1-based inclusive lines of the new text in the edited file.
    pub start_line: usize,
    pub end_line: usize,
    pub check: CheckReport,
}

/// A pure edit's output: the new source and the byte range of the text it put in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub source: String,
    pub inserted: (usize, usize),
}

/// The definition named `name`: an exact qualified name wins; a plain name must be unique.
pub(crate) fn find_located(source: &str, name: &str) -> Result<Located, EditError> {
    let all = locate_all(source)?;
    if let Some(exact) = all.iter().find(|l| l.symbol.qualified_name == name) {
        return Ok(exact.clone());
    }
    let by_name: Vec<&Located> = all.iter().filter(|l| l.symbol.name == name).collect();
    match by_name.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(EditError::SymbolNotFound {
            name: name.into(),
            available: all
                .iter()
                .map(|l| l.symbol.qualified_name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        many => Err(EditError::Ambiguous {
            name: name.into(),
            candidates: many
                .iter()
                .map(|l| format!("{} (line {})", l.symbol.qualified_name, l.symbol.start_line))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

fn line_start(source: &str, byte: usize) -> usize {
    source[..byte].rfind('\n').map_or(0, |i| i + 1)
}

/// The byte after the newline ending the line that holds `byte` (or the end of the text).
fn next_line_start(source: &str, byte: usize) -> usize {
    source[byte..]
        .find('\n')
        .map_or(source.len(), |i| byte + i + 1)
}

/// End of the last non-whitespace byte before `end`.
fn trim_end(source: &str, start: usize, end: usize) -> usize {
    start + source[start..end].trim_end().len()
}

fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// One level of indentation as this file writes it.
fn indent_unit(base: &str) -> &'static str {
    if base.contains('\t') { "\t" } else { "    " }
}

/// Rows (0-based) of `code` that lie inside a multi-line string and are not its first row,
/// leaving out bare string statements (docstrings), whose layout is free.
fn string_interior_rows(code: &str) -> Vec<usize> {
    let Ok(tree) = parse(code) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "string" {
            let (a, b) = (node.start_position().row, node.end_position().row);
            let docstring = node
                .parent()
                .is_some_and(|p| p.kind() == "expression_statement" && p.named_child_count() == 1);
            if b > a && !docstring {
                rows.extend(a + 1..=b);
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    rows
}

/// `code` re-indented to `indent`: its common indentation is replaced, blank lines are kept
/// empty, multi-line string contents are left alone. No trailing newline.
pub fn reindent(code: &str, indent: &str) -> String {
    let lines: Vec<&str> = code.trim_end().lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let lines = &lines[first.min(lines.len())..];
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| leading_ws(l))
        .reduce(|a, b| {
            let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            &a[..n]
        })
        .unwrap_or("");
    let dedented: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_prefix(common).unwrap_or(l.trim_start()))
        .collect();
    let interior = string_interior_rows(&dedented.join("\n"));
    let mut out = Vec::with_capacity(lines.len());
    for (row, (original, stripped)) in lines.iter().zip(&dedented).enumerate() {
        if interior.contains(&row) {
            out.push((*original).to_string());
        } else if stripped.trim().is_empty() {
            out.push(String::new());
        } else {
            out.push(format!("{indent}{stripped}"));
        }
    }
    out.join("\n")
}

/// Puts the docstring statement `literal` first in the body of `name` (after leading
/// comments, which do not count as statements), at the body's
/// indentation, when that body has none of its own. `literal`'s later lines are inserted as
/// they are (they are inside the string). `None` when `name` is not defined, already has a
/// docstring, or keeps its body on the `def` line.
pub fn insert_docstring(source: &str, name: &str, literal: &str) -> Option<String> {
    let loc = find_located(source, name).ok()?;
    if loc.docstring.is_some() || !source[loc.colon_end..loc.block_start].contains('\n') {
        return None;
    }
    let first = line_start(source, loc.block_start);
    let indent = &source[first..loc.block_start];
    if !indent.chars().all(|c| c == ' ' || c == '\t') {
        return None;
    }
    Some(format!(
        "{}{indent}{literal}\n{}",
        &source[..first],
        &source[first..]
    ))
}

/// Whether `code` starts with a string statement.
fn starts_with_docstring(code: &str) -> bool {
    let Ok(tree) = parse(code.trim_start()) else {
        return false;
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let first = root
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment");
    first.is_some_and(|s| {
        s.kind() == "expression_statement"
            && s.named_child(0)
                .is_some_and(|v| matches!(v.kind(), "string" | "concatenated_string"))
    })
}

/// Replaces the body of `name` with `new_body` (any indentation); see the module doc for
/// what is kept.
pub fn replace_body(source: &str, name: &str, new_body: &str) -> Result<Edited, EditError> {
    let loc = find_located(source, name)?;
    let def_line = line_start(source, loc.symbol.start_byte);
    let base = leading_ws(&source[def_line..loc.symbol.start_byte]).to_string();
    let same_line = !source[loc.colon_end..loc.block_start].contains('\n');
    let body_indent = if same_line {
        format!("{base}{}", indent_unit(&base))
    } else {
        let first = line_start(source, loc.block_start);
        source[first..loc.block_start].to_string()
    };
    let mut body = String::new();
    match loc.docstring {
        Some((a, b)) if !starts_with_docstring(new_body) => {
            body.push_str(&body_indent);
            body.push_str(&source[a..b]);
            body.push('\n');
        }
        _ => {}
    }
    let code = if new_body.trim().is_empty() {
        "pass"
    } else {
        new_body
    };
    body.push_str(&reindent(code, &body_indent));
    let last = trim_end(source, loc.block_start, loc.block_end);
    let (start, end, text) = if same_line {
        let end = source[last..].find('\n').map_or(source.len(), |i| last + i);
        (loc.colon_end, end, format!("\n{body}"))
    } else {
        let end = next_line_start(source, last);
        let newline = if source[..end].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        (
            next_line_start(source, loc.colon_end),
            end,
            format!("{body}{newline}"),
        )
    };
    Ok(splice(source, start, end, &text))
}

fn splice(source: &str, start: usize, end: usize, text: &str) -> Edited {
    let mut out = String::with_capacity(source.len() + text.len());
    out.push_str(&source[..start]);
    out.push_str(text);
    out.push_str(&source[end..]);
    Edited {
        source: out,
        inserted: (start, start + text.len()),
    }
}

/// Blank lines that separate definitions at this indentation (PEP 8).
fn separator(base: &str) -> &'static str {
    if base.is_empty() { "\n\n" } else { "\n" }
}

/// Inserts `code` as a sibling right after the definition `name` (a method after a method
/// stays inside the class).
pub fn insert_after(source: &str, name: &str, code: &str) -> Result<Edited, EditError> {
    insert_after_spaced(source, name, code, 2)
}

/// [`insert_after`] with `top_blank_lines` blank lines before a top-level definition (the
/// file's own convention; a method gets one).
pub fn insert_after_spaced(
    source: &str,
    name: &str,
    code: &str,
    top_blank_lines: usize,
) -> Result<Edited, EditError> {
    let loc = find_located(source, name)?;
    let def_line = line_start(source, loc.symbol.start_byte);
    let base = leading_ws(&source[def_line..loc.symbol.start_byte]).to_string();
    let last = trim_end(source, loc.symbol.start_byte, loc.symbol.end_byte);
    let at = next_line_start(source, last);
    let lead = if source[..at].ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let blank = match base.is_empty() {
        true => "\n".repeat(top_blank_lines.max(1)),
        false => "\n".into(),
    };
    let text = format!("{lead}{blank}{}\n", reindent(code, &base));
    Ok(splice(source, at, at, &text))
}

/// Replaces the whole definition `name` (header, docstring, body) with `code`, re-indented
/// to its place. Decorators `code` does not bring are kept (a model rewriting a body rarely
/// repeats them), and so is everything outside the definition, byte for byte.
pub fn replace_definition(source: &str, name: &str, code: &str) -> Result<Edited, EditError> {
    let loc = find_located(source, name)?;
    let first = line_start(source, loc.symbol.start_byte);
    let base = leading_ws(&source[first..loc.symbol.start_byte]).to_string();
    let brings_decorators = code
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('@'));
    let start = match brings_decorators {
        true => first,
        false => line_start(source, loc.name_range.0),
    };
    let last = trim_end(source, loc.symbol.start_byte, loc.symbol.end_byte);
    let end = next_line_start(source, last);
    let newline = if source[..end].ends_with('\n') {
        "\n"
    } else {
        ""
    };
    let text = format!("{}{newline}", reindent(code, &base));
    Ok(splice(source, start, end, &text))
}

/// Inserts `code` as a sibling right before the definition `name`, above its decorators and
/// the comment lines directly above it.
pub fn insert_before(source: &str, name: &str, code: &str) -> Result<Edited, EditError> {
    let loc = find_located(source, name)?;
    let mut at = line_start(source, loc.symbol.start_byte);
    let base = leading_ws(&source[at..loc.symbol.start_byte]).to_string();
    while at > 0 {
        let above = line_start(source, at - 1);
        let line = &source[above..at - 1];
        if leading_ws(line) == base && line.trim_start().starts_with('#') {
            at = above;
        } else {
            break;
        }
    }
    let text = format!("{}\n{}", reindent(code, &base), separator(&base));
    Ok(splice(source, at, at, &text))
}

/// Reads `path`, applies `edit`, checks the result and writes it atomically; a result with a
/// syntax error is refused and the file is left as it was.
pub fn apply_to_file(
    path: &Path,
    symbol: &str,
    edit: impl FnOnce(&str) -> Result<Edited, EditError>,
) -> Result<EditResult, EditError> {
    let source = read_source(path)?.ok_or_else(|| EditError::NoFile(path.to_path_buf()))?;
    let edited = edit(&source)?;
    let name = path.display().to_string();
    let check = check_source(&edited.source, &name)?;
    if !check.ok {
        return Err(EditError::Refused {
            path: path.to_path_buf(),
            report: check,
        });
    }
    write_atomic(path, edited.source.as_bytes())?;
    let (a, b) = edited.inserted;
    let text = edited.source[a..b].trim_matches('\n');
    let start = a + edited.source[a..b].len() - edited.source[a..b].trim_start_matches('\n').len();
    let start_line = edited.source[..start].matches('\n').count() + 1;
    Ok(EditResult {
        path: path.to_path_buf(),
        symbol: symbol.to_string(),
        start_line,
        end_line: start_line + text.matches('\n').count(),
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "import math\n\n\n@cache  # keep me\ndef area(\n    r: float,\n) -> float:  # header comment\n    \"\"\"Area of a circle.\"\"\"\n    # old comment\n    return math.pi * r * r\n\n\nclass Shape:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n";

    #[test]
    fn a_docstring_goes_first_in_a_body_without_one() {
        let source = "import os\n\n\ndef f(x):\n    # why\n    return x\n";
        let done = insert_docstring(source, "f", "\"\"\"Doc.\n\n    More.\n    \"\"\"").unwrap();
        assert_eq!(
            done,
            "import os\n\n\ndef f(x):\n    # why\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n    return x\n"
        );
        assert!(insert_docstring(&done, "f", "\"\"\"Other.\"\"\"").is_none());
        assert!(insert_docstring("def f(x): return x\n", "f", "\"\"\"D.\"\"\"").is_none());
        assert!(insert_docstring(source, "g", "\"\"\"D.\"\"\"").is_none());
    }

    #[test]
    fn replace_body_keeps_every_non_body_line_byte_exact_and_the_docstring() {
        let out = replace_body(SOURCE, "area", "return r ** 2 * math.pi\n").unwrap();
        let expected = SOURCE.replace(
            "    # old comment\n    return math.pi * r * r\n",
            "    return r ** 2 * math.pi\n",
        );
        assert_eq!(out.source, expected);
    }

    #[test]
    fn replace_body_with_its_own_docstring_replaces_the_old_one() {
        let out = replace_body(SOURCE, "Shape.a", "\"\"\"New.\"\"\"\nreturn 10").unwrap();
        assert!(out.source.contains(
            "    def a(self):\n        \"\"\"New.\"\"\"\n        return 10\n\n    def b"
        ));
    }

    #[test]
    fn replace_body_reindents_and_handles_a_body_on_the_header_line() {
        let src = "class K:\n    def f(self): return 1\nx = 1\n";
        let out = replace_body(
            src,
            "K.f",
            "        if self:\n            return 2\n        return 3",
        )
        .unwrap();
        assert_eq!(
            out.source,
            "class K:\n    def f(self):\n        if self:\n            return 2\n        return 3\nx = 1\n"
        );
    }

    #[test]
    fn reindent_keeps_multi_line_string_contents_verbatim() {
        let code = "x = '''a\n  b\nc'''\nif x:\n    y = 1";
        assert_eq!(
            reindent(code, "    "),
            "    x = '''a\n  b\nc'''\n    if x:\n        y = 1"
        );
    }

    #[test]
    fn insert_after_a_method_stays_inside_the_class() {
        let out = insert_after(SOURCE, "Shape.a", "def mid(self):\n    return 1.5").unwrap();
        assert!(
            out.source.contains(
                "        return 1\n\n    def mid(self):\n        return 1.5\n\n    def b(self):"
            ),
            "{}",
            out.source
        );
    }

    #[test]
    fn insert_before_goes_above_decorators_with_top_level_spacing() {
        let out = insert_before(SOURCE, "area", "PI = 3.14").unwrap();
        assert!(
            out.source
                .contains("import math\n\n\nPI = 3.14\n\n\n@cache")
        );
    }

    #[test]
    fn insert_after_the_last_symbol_without_final_newline() {
        let out = insert_after("def f():\n    pass", "f", "def g():\n    pass").unwrap();
        assert_eq!(out.source, "def f():\n    pass\n\n\ndef g():\n    pass\n");
    }

    #[test]
    fn replace_definition_keeps_decorators_and_every_other_byte() {
        let out = replace_definition(
            SOURCE,
            "area",
            "def area(r):\n    \"\"\"Area.\"\"\"\n    return r * r",
        )
        .unwrap();
        let expected = SOURCE.replace(
            "def area(\n    r: float,\n) -> float:  # header comment\n    \"\"\"Area of a circle.\"\"\"\n    # old comment\n    return math.pi * r * r\n",
            "def area(r):\n    \"\"\"Area.\"\"\"\n    return r * r\n",
        );
        assert_eq!(out.source, expected);
        let out = replace_definition(
            SOURCE,
            "Shape.b",
            "    @staticmethod\n    def b():\n        return 3\n",
        )
        .unwrap();
        assert!(
            out.source.ends_with(
                "        return 1\n\n    @staticmethod\n    def b():\n        return 3\n"
            ),
            "{}",
            out.source
        );
        let spaced =
            insert_after_spaced("def f():\n    pass\n", "f", "def g():\n    pass", 1).unwrap();
        assert_eq!(spaced.source, "def f():\n    pass\n\ndef g():\n    pass\n");
    }

    #[test]
    fn ambiguous_plain_names_ask_for_the_qualified_name() {
        let src = "class A:\n    def f(self): pass\nclass B:\n    def f(self): pass\n";
        let err = replace_body(src, "f", "return 1").unwrap_err();
        assert!(matches!(err, EditError::Ambiguous { .. }), "{err}");
        assert!(replace_body(src, "B.f", "return 1").is_ok());
    }
}
