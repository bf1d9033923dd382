//! Symbol-level edits of Python source: replace a definition, insert code before or after
//! one, give a body its docstring. Pure: source in, source out (the caller writes and checks).
//!
//! Decisions:
//! - Everything outside the replaced region stays byte-exact.
//! - New code is re-indented to the body's (or the definition's) indentation. Lines inside a
//!   multi-line string literal are kept verbatim, because their whitespace is the string's
//!   value; docstrings are the exception and move with the code.

use super::outline::{Located, OutlineError, locate_all, parse};

#[derive(Debug, thiserror::Error)]
pub(crate) enum EditError {
    #[error("no symbol `{name}` here (defined: {available})")]
    SymbolNotFound { name: String, available: String },
    #[error("`{name}` is ambiguous: {candidates}; use the qualified name")]
    Ambiguous { name: String, candidates: String },
    #[error(transparent)]
    Outline(#[from] OutlineError),
}

/// A pure edit's output: the new source and the byte range of the text it put in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edited {
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
pub(crate) fn reindent(code: &str, indent: &str) -> String {
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
pub(crate) fn insert_docstring(source: &str, name: &str, literal: &str) -> Option<String> {
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
#[cfg(test)]
fn insert_after(source: &str, name: &str, code: &str) -> Result<Edited, EditError> {
    insert_after_spaced(source, name, code, 2)
}

/// Inserts `code` as a sibling right after the definition `name` (a method after a method
/// stays inside the class), with `top_blank_lines` blank lines before a top-level definition
/// (the file's own convention; a method gets one).
pub(crate) fn insert_after_spaced(
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
pub(crate) fn replace_definition(
    source: &str,
    name: &str,
    code: &str,
) -> Result<Edited, EditError> {
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

/// Takes the definition `name` (its decorators with it) out of `source`, with the blank lines
/// that followed it, so the definitions around it keep their spacing. Returns the new source
/// and the definition's text (from its first decorator, no trailing newline).
pub(crate) fn remove_definition(source: &str, name: &str) -> Result<(String, String), EditError> {
    let loc = find_located(source, name)?;
    let start = line_start(source, loc.symbol.start_byte);
    let last = trim_end(source, loc.symbol.start_byte, loc.symbol.end_byte);
    let code = source[start..last].to_string();
    let mut end = next_line_start(source, last);
    while end < source.len() {
        let next = next_line_start(source, end);
        if !source[end..next].trim().is_empty() {
            break;
        }
        end = next;
    }
    let mut out = splice(source, start, end, "").source;
    if end >= source.len() {
        // It was the last definition: the blank lines above it end the file now.
        out = format!("{}\n", out.trim_end());
    }
    Ok((out, code))
}

/// Inserts `code` as a sibling right before the definition `name`, above its decorators and
/// the comment lines directly above it.
pub(crate) fn insert_before(source: &str, name: &str, code: &str) -> Result<Edited, EditError> {
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
    fn remove_definition_takes_decorators_and_the_blank_lines_after() {
        let (out, code) = remove_definition(SOURCE, "area").unwrap();
        assert!(code.starts_with("@cache  # keep me\ndef area("), "{code}");
        assert!(code.ends_with("return math.pi * r * r"), "{code}");
        assert_eq!(
            out,
            "import math\n\n\nclass Shape:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
        );
        let (out, code) = remove_definition(SOURCE, "Shape").unwrap();
        assert!(code.starts_with("class Shape:"), "{code}");
        assert!(out.ends_with("return math.pi * r * r\n"), "{out}");
        assert!(remove_definition(SOURCE, "missing").is_err());
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
        let err = insert_after(src, "f", "x = 1").unwrap_err();
        assert!(matches!(err, EditError::Ambiguous { .. }), "{err}");
        assert!(insert_after(src, "B.f", "x = 1").is_ok());
    }
}
