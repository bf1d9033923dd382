//! Python naming and source text built from untrusted strings.
//!
//! [`import_path`] is how a file path becomes a module name, in one place for the engine and
//! assembly (a base-layer helper: it uses nothing of ours); [`without_exports`] reads the
//! exports block assembly appends to package `__init__.py` files, which the engine strips
//! before nodes run again.
//!
//! Plan text (docstrings above all) ends up inside generated Python files. Pasted between
//! triple quotes as it is, a `"""` in a docstring closes the string and whatever follows runs
//! when the module is imported: a plan could inject code. Everything here turns text into a
//! literal that Python reads back as exactly that text, and nothing more.
//!
//! Ordinary text (no backslash, no run of quotes, no control character) is written unchanged,
//! so the literal still reads like the docstring it is. A data node's value goes the other
//! way: it is Python source already, and is written only once [`check_literal`] found it to
//! be nothing but a literal.

/// `src/ml_lib/data/loader.py` → `ml_lib.data.loader` (a leading `src/` is the src layout).
/// Used by the prompts (what to import) and by assembly (exports, scripts, README).
pub fn import_path(file_path: &str) -> String {
    let trimmed = file_path.strip_prefix("src/").unwrap_or(file_path);
    let trimmed = trimmed.strip_suffix(".py").unwrap_or(trimmed);
    let trimmed = trimmed.strip_suffix("/__init__").unwrap_or(trimmed);
    trimmed.replace('/', ".")
}

/// `text` as a triple-quoted docstring literal: `"""text"""`, or with the closing quotes on
/// their own line when `text` has several lines. `ast.literal_eval` of the result is `text`.
pub(crate) fn docstring_literal(text: &str) -> String {
    let multi_line = text.contains('\n');
    let body = escape_triple_quoted(text, !multi_line);
    if multi_line {
        format!("\"\"\"{body}\n\"\"\"")
    } else {
        format!("\"\"\"{body}\"\"\"")
    }
}

/// `text` as the docstring of a function body indented by `indent`: the literal opens on the
/// first line, the other lines and the closing quotes are indented.
pub(crate) fn body_docstring_literal(text: &str, indent: &str) -> String {
    let indented: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| match i {
            0 => line.to_string(),
            _ if line.trim().is_empty() => String::new(),
            _ => format!("{indent}{line}"),
        })
        .collect();
    let literal = docstring_literal(&indented.join("\n"));
    match literal.strip_suffix("\n\"\"\"") {
        Some(open) => format!("{open}\n{indent}\"\"\""),
        None => literal,
    }
}

/// The entries of a docstring's Google-style `Raises:` section, each as one line
/// (`ValueError: If the lists differ in length or are empty.`), continuation lines joined.
///
/// Grammar: the section starts at a line that is `Raises:` once trimmed; it holds the
/// following lines indented deeper than that header (blank lines inside are skipped) and ends
/// at the first non-blank line that is not. An entry starts at a line indented like the first
/// one; deeper lines continue it. No section gives no entries.
pub(crate) fn documented_raises(doc: &str) -> Vec<String> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut lines = doc.lines();
    let Some(header) = lines.by_ref().find(|l| l.trim() == "Raises:") else {
        return Vec::new();
    };
    let header_indent = indent(header);
    let mut entries: Vec<String> = Vec::new();
    let mut entry_indent = None;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let at = indent(line);
        if at <= header_indent {
            break;
        }
        match entry_indent {
            Some(first) if at > first => {
                if let Some(last) = entries.last_mut() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
            _ => {
                entry_indent.get_or_insert(at);
                entries.push(line.trim().to_string());
            }
        }
    }
    entries
}

/// The alternatives of a documented error's condition, each a check of its own:
/// `ValueError: If values is empty, ``margin < 0`` or ``size <= 2 * margin``.` gives
/// `values is empty`, ``` ``margin < 0`` ``` and ``` ``size <= 2 * margin`` ```. An English list
/// ("A, B or C") is split on its commas and its last " or ", never inside a ``` `` ``` code
/// span; a condition with no " or " is one check, and so gives nothing (the entry says it).
pub(crate) fn raise_conditions(entry: &str) -> Vec<String> {
    let condition = entry.split_once(':').map_or(entry, |(_, c)| c).trim();
    let condition = condition.trim_end_matches('.');
    let condition = ["If ", "if ", "When ", "when "]
        .iter()
        .find_map(|p| condition.strip_prefix(p))
        .unwrap_or(condition);
    let parts = split_outside_code(condition, " or ");
    if parts.len() < 2 {
        return Vec::new();
    }
    let Some((last, listed)) = parts.split_last() else {
        return Vec::new();
    };
    let mut pieces: Vec<String> = listed
        .iter()
        .flat_map(|p| split_outside_code(p, ", "))
        .collect();
    pieces.push(last.clone());
    // "a label in y_true or y_pred is missing": a piece that states nothing joins the next.
    let mut checks: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for piece in pieces {
        let piece = piece.trim().trim_end_matches(',').trim();
        let piece = piece.strip_prefix("if ").unwrap_or(piece);
        let piece = match pending.take() {
            Some(head) => format!("{head} or {piece}"),
            None => piece.to_string(),
        };
        match states_something(&piece) {
            true => checks.push(piece),
            false => pending = Some(piece),
        }
    }
    match (pending, checks.last_mut()) {
        (Some(rest), Some(last)) => last.push_str(&format!(" or {rest}")),
        (Some(rest), None) => checks.push(rest),
        _ => {}
    }
    // "the lists have different lengths or are empty": the second check borrows the subject.
    let subject = checks.first().and_then(|c| subject_of(c));
    if let Some(subject) = subject {
        for check in checks.iter_mut().skip(1) {
            if subject_of(check) == Some(String::new()) {
                *check = format!("{subject} {check}");
            }
        }
    }
    match checks.len() {
        0 | 1 => Vec::new(),
        _ => checks,
    }
}

/// The words of `clause` before its first verb (`the lists` of `the lists have …`); `None`
/// when it has no verb.
fn subject_of(clause: &str) -> Option<String> {
    const VERBS: [&str; 10] = [
        "is", "are", "has", "have", "does", "do", "contains", "contain", "differ", "differs",
    ];
    let words: Vec<&str> = clause.split_whitespace().collect();
    let at = words.iter().position(|w| VERBS.contains(w))?;
    Some(words[..at].join(" "))
}

/// Whether a piece of a condition states something (a verb, a negation, a comparison, or
/// code), rather than naming a thing that the next piece states something of.
fn states_something(piece: &str) -> bool {
    const WORDS: [&str; 24] = [
        "is", "are", "has", "have", "had", "does", "do", "did", "not", "no", "differ", "differs",
        "contains", "contain", "exceeds", "exceed", "equals", "rejects", "gives", "fails", "lacks",
        "fewer", "empty", "negative",
    ];
    piece.contains("``")
        || piece.contains(['<', '>', '='])
        || piece
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .any(|w| WORDS.contains(&w))
}

/// `text` split on `separator` where it is not inside a ``` `` ``` code span.
fn split_outside_code(text: &str, separator: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with("``") {
            in_code = !in_code;
            current.push_str("``");
            rest = &rest[2..];
        } else if !in_code && rest.starts_with(separator) {
            parts.push(std::mem::take(&mut current));
            rest = &rest[separator.len()..];
        } else if let Some(c) = rest.chars().next() {
            current.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    parts.push(current);
    parts
}

/// The special cases a docstring states outside its `Raises:` and `Examples:` sections: the
/// sentences that begin with "When", "If" or "Unless" (`When hi == lo every value maps to
/// size / 2.`). A small model computes the general formula and leaves them out; on ml_lib
/// most reference tests that code passing every generated test still failed were such a case
/// (a constant input falling through to a division by zero) or a documented error.
pub(crate) fn special_cases(doc: &str) -> Vec<String> {
    // One chunk per section, so that no sentence runs across a header.
    let mut chunks: Vec<String> = vec![String::new()];
    let mut skipping = false;
    for line in doc.lines() {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_suffix(':')
            && !header.contains(' ')
            && header.chars().next().is_some_and(char::is_uppercase)
        {
            skipping = matches!(header, "Raises" | "Examples" | "Example");
            chunks.push(String::new());
            continue;
        }
        if !skipping
            && !trimmed.starts_with(">>>")
            && let Some(chunk) = chunks.last_mut()
        {
            chunk.push(' ');
            chunk.push_str(trimmed);
        }
    }
    chunks
        .iter()
        .flat_map(|c| sentences(c))
        .filter(|s| ["When ", "If ", "Unless "].iter().any(|p| s.starts_with(p)))
        .collect()
}

/// `text`'s sentences: a sentence ends at a `.` followed by a space and a capital letter (so
/// `1.0` and `e.g. the` do not end one), or at the end.
fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        let ends = c == '.'
            && chars.get(i + 1).is_some_and(|n| n.is_whitespace())
            && chars
                .get(i + 2..)
                .and_then(|rest| rest.iter().find(|n| !n.is_whitespace()))
                .is_some_and(|n| n.is_uppercase());
        if ends {
            out.push(comment_text(&current));
            current.clear();
        }
    }
    out.push(comment_text(&current));
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// `text` as the text of one `#` comment line: line breaks and control characters become
/// spaces, so plan text in a comment can never start a line of code.
pub(crate) fn comment_text(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    flat.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Escapes `text` for the inside of a `"""` literal: backslashes doubled, control characters
/// (but newline and tab) as `\xNN`, and every `"` that could join the delimiters (the first
/// character, the last when the closing quotes follow it directly, or next to another `"`) as
/// `\"`.
fn escape_triple_quoted(text: &str, closes_after_last: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => {
                let risky = i == 0
                    || (closes_after_last && i + 1 == chars.len())
                    || chars[i - 1] == '"'
                    || chars.get(i + 1) == Some(&'"');
                out.push_str(if risky { "\\\"" } else { "\"" });
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// The line that starts the exports block assembly writes at the end of a package
/// `__init__.py`; everything after it is rebuilt on every run.
pub(crate) const EXPORTS_MARKER: &str =
    "# --- exports (written by zerorepo; rebuilt on every run) ---";

/// An `__init__.py` without the exports block, as its composite node wrote it; `None` when
/// it has no block.
pub(crate) fn without_exports(text: &str) -> Option<String> {
    let (kept, _) = text.split_once(EXPORTS_MARKER)?;
    let kept = kept.trim_end();
    Some(if kept.is_empty() {
        String::new()
    } else {
        format!("{kept}\n")
    })
}

mod literal;
mod stdlib;
mod traceback;

pub(crate) use literal::{CONSTRUCTORS, LiteralError, check_literal};
pub(crate) use stdlib::STDLIB_MODULES;
pub(crate) use traceback::crashed_in;

/// Unicode's bidirectional formatting characters (embeddings, overrides, isolates and marks):
/// invisible, and they reorder the text around them on a terminal or in an editor, so an id
/// could read as another, or code otherwise than it runs (the "Trojan Source" trick).
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Whether `module` is a top-level module of the standard library (Python 3.11's
/// `sys.stdlib_module_names`, [`STDLIB_MODULES`]).
pub(crate) fn is_stdlib(module: &str) -> bool {
    STDLIB_MODULES.binary_search(&module).is_ok()
}

/// Python's hard keywords: no function, class, module or package may be named one (`def
/// class():` does not parse, and `import None` neither). The soft keywords (`match`, `case`,
/// `_`) are names Python accepts.
pub(crate) const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `c` can be part of a Python name (a letter, a digit or `_`).
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The runs of name characters in `text` ([`is_name_char`]), in order: its identifiers,
/// keywords and numbers, each a piece of `text`.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_name_char(c))
        .filter(|w| !w.is_empty())
}

/// Whether `name` can be a Python name: an identifier (a letter or `_`, then letters, digits
/// and `_`) that is not a keyword.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(is_name_char)
        && !KEYWORDS.contains(&name)
}

/// Python's builtin functions, types and constants: a plan function of the same name is never
/// imported in their place.
pub(crate) const BUILTINS: &[&str] = &[
    "abs",
    "all",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "None",
    "True",
    "False",
    "NotImplemented",
    "Ellipsis",
];

/// The names of `typing` that annotations use most; a module that uses one without binding
/// it fails at import with a `NameError`.
pub(crate) const TYPING_NAMES: &[&str] = &[
    "Any",
    "Callable",
    "Dict",
    "FrozenSet",
    "Generator",
    "Iterable",
    "Iterator",
    "List",
    "Mapping",
    "MutableMapping",
    "Optional",
    "Sequence",
    "Set",
    "Tuple",
    "Type",
    "TypeVar",
    "Union",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raises_section_is_read_entry_by_entry() {
        let doc = "Mean.\n\nArgs:\n    xs: Values.\nRaises:\n    ValueError: If xs is\n        empty.\n\n    TypeError: If a value is not a number.\nExamples:\n>>> mean([1])\n1.0";
        assert_eq!(
            documented_raises(doc),
            [
                "ValueError: If xs is empty.",
                "TypeError: If a value is not a number."
            ]
        );
        let indented = "    Raises:\n        KeyError: If missing.\n    Returns:\n        int";
        assert_eq!(documented_raises(indented), ["KeyError: If missing."]);
        assert!(documented_raises("Mean.\n\nReturns:\n    float").is_empty());
        assert!(documented_raises("Raises:\nValueError: not indented").is_empty());
    }

    #[test]
    fn a_comment_keeps_plan_text_on_its_line() {
        assert_eq!(
            comment_text("If x\nimport os\r\u{0}  is bad."),
            "If x import os is bad."
        );
    }

    #[test]
    fn ordinary_docstrings_are_written_unchanged() {
        assert_eq!(docstring_literal("Mean of xs."), "\"\"\"Mean of xs.\"\"\"");
        assert_eq!(
            docstring_literal("Mean.\n\nArgs:\n\txs: \"numbers\""),
            "\"\"\"Mean.\n\nArgs:\n\txs: \"numbers\"\n\"\"\""
        );
    }

    #[test]
    fn triple_quotes_backslashes_and_control_characters_cannot_close_the_literal() {
        assert_eq!(
            docstring_literal("x.\"\"\"\nimport os\n\"\"\""),
            "\"\"\"x.\\\"\\\"\\\"\nimport os\n\\\"\\\"\\\"\n\"\"\""
        );
        assert_eq!(docstring_literal("a\\\"b"), "\"\"\"a\\\\\"b\"\"\"");
        assert_eq!(docstring_literal("\"q\""), "\"\"\"\\\"q\\\"\"\"\"");
        assert_eq!(
            docstring_literal("nul\0cr\r"),
            "\"\"\"nul\\x00cr\\x0d\"\"\""
        );
    }

    #[test]
    fn a_documented_error_with_alternatives_gives_one_check_each() {
        assert_eq!(
            raise_conditions("ValueError: If the lists have different lengths or are empty."),
            ["the lists have different lengths", "the lists are empty"]
        );
        assert_eq!(
            raise_conditions(
                "ValueError: If values is empty, ``margin < 0`` or ``size <= 2 * margin``."
            ),
            [
                "values is empty",
                "``margin < 0``",
                "``size <= 2 * margin``"
            ]
        );
        // One condition, or an "or" inside code: nothing to split.
        assert!(raise_conditions("ValueError: If ``k < 1``.").is_empty());
        assert!(raise_conditions("ValueError: If ``a or b`` is false.").is_empty());
        // An Oxford comma, a repeated "if", a noun joined by "or" that states nothing alone.
        assert_eq!(
            raise_conditions(
                "ValueError: If the lists differ, if there are fewer than 2 rows, or a label \
                 in y_true or y_pred is missing."
            ),
            [
                "the lists differ",
                "there are fewer than 2 rows",
                "a label in y_true or y_pred is missing"
            ]
        );
        assert!(
            raise_conditions("ValueError: If a label in y_true or y_pred is missing.").is_empty()
        );
    }

    #[test]
    fn special_cases_are_the_when_and_if_sentences_outside_raises_and_examples() {
        let doc = "Count values in bins.\n\nWith ``lo = min(values)``, a value v goes to bin \
                   ``int(v * 1.0)``. When ``hi == lo`` every value\ngoes to bin 0.\n\nArgs:\n    \
                   labels: Labels to use. If None, the sorted union, e.g. the\n        \
                   labels seen.\nReturns:\n    list[int]: Counts.\nRaises:\n    \
                   ValueError: If values is empty.\nExamples:\n>>> f([1])\n[1]";
        assert_eq!(
            special_cases(doc),
            [
                "When ``hi == lo`` every value goes to bin 0.",
                "If None, the sorted union, e.g. the labels seen."
            ]
        );
        assert!(special_cases("Return the sum.\n\nArgs:\n    x: Numbers.").is_empty());
    }

    #[test]
    fn the_stdlib_list_is_sorted_and_holds_private_and_package_names() {
        assert!(STDLIB_MODULES.windows(2).all(|w| w[0] < w[1]));
        for name in [
            "json",
            "linecache",
            "_thread",
            "_collections_abc",
            "__future__",
            "email",
        ] {
            assert!(is_stdlib(name), "{name}");
        }
        for name in ["numpy", "pytest", "ml_lib", "Json", ""] {
            assert!(!is_stdlib(name), "{name}");
        }
    }

    #[test]
    fn keywords_and_non_identifiers_are_not_python_names() {
        for name in [
            "mean", "_private", "Table", "match", "case", "_", "données", "x1",
        ] {
            assert!(is_identifier(name), "{name}");
        }
        for name in [
            "def", "class", "None", "True", "lambda", "", "1st", "a-b", "a b", "a.b",
        ] {
            assert!(!is_identifier(name), "{name}");
        }
    }
}
