//! Top-level units of a Python module.
//!
//! A new unit starts at a line that begins in column 0 outside any string or bracket and not
//! after a line continuation. Comment lines and decorators directly above a definition belong
//! to it. Everything else (constants, `if __name__ ...`) is an `Other` unit kept verbatim.

use crate::python::is_name_char;

/// What a top-level unit is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UnitKind {
    /// The module docstring (first statement, a string literal).
    Docstring,
    /// `import x` / `from x import y` (possibly wrapped in brackets).
    Import,
    /// `def name`, `async def name` or `class name`, with its decorators and leading comments.
    Def(String),
    /// Any other statement.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub kind: UnitKind,
    /// The unit's lines, without trailing blank lines, without a final newline.
    pub text: String,
}

impl Unit {
    pub(crate) fn def_name(&self) -> Option<&str> {
        match &self.kind {
            UnitKind::Def(name) => Some(name),
            _ => None,
        }
    }

    /// The name a top-level assignment statement binds first: `NAME = ...` or
    /// `NAME: T = ...` (comment lines above it skipped); `None` for any other statement (an
    /// augmented assignment, a comparison, a tuple or attribute target, a bare annotation).
    /// Read from the text alone, for finding a module's constants: a data node's assignment
    /// is replaced in place, and an answer's copy of a constant is told apart.
    pub(crate) fn assigned_name(&self) -> Option<&str> {
        if self.kind != UnitKind::Other {
            return None;
        }
        let line = self
            .text
            .lines()
            .find(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())?;
        let end = line
            .char_indices()
            .find(|(_, c)| !is_name_char(*c))
            .map_or(line.len(), |(i, _)| i);
        let (name, rest) = line.split_at(end);
        let rest = rest.trim_start();
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        let binds = match rest.strip_prefix(':') {
            // An annotation: the value follows the first `=` that is not part of `==`.
            Some(annotated) => annotated
                .find('=')
                .is_some_and(|at| !annotated[at + 1..].starts_with('=')),
            None => rest.starts_with('=') && !rest.starts_with("=="),
        };
        (is_name && binds).then_some(name)
    }

    /// Modules an import statement imports from (`from a.b import c` gives `a.b`; `import
    /// x, y.z as w` gives `x` and `y.z`; a relative `from . import x` gives `.`).
    pub(crate) fn imported_modules(&self) -> Vec<String> {
        if self.kind != UnitKind::Import {
            return Vec::new();
        }
        let flat: String = self.text.replace(['(', ')', '\\', '\n'], " ");
        let flat = flat.trim();
        match flat.strip_prefix("from ") {
            Some(rest) => rest
                .split_whitespace()
                .next()
                .map(str::to_string)
                .into_iter()
                .collect(),
            None => flat
                .strip_prefix("import ")
                .unwrap_or("")
                .split(',')
                .filter_map(|item| item.split_whitespace().next().map(str::to_string))
                .collect(),
        }
    }

    /// Every name the unit binds at the top level: a definition's, an assignment's, an
    /// import's.
    pub(crate) fn bound_names(&self) -> Vec<String> {
        let own = self.def_name().into_iter().chain(self.assigned_name());
        own.map(str::to_string)
            .chain(self.imported_names())
            .collect()
    }

    /// Names an import statement binds (`import a.b` binds `a`; `from m import x as y` binds `y`).
    pub(crate) fn imported_names(&self) -> Vec<String> {
        if self.kind != UnitKind::Import {
            return Vec::new();
        }
        let flat: String = self.text.replace(['(', ')', '\\', '\n'], " ");
        let flat = flat.trim();
        let names_part = if let Some(rest) = flat.strip_prefix("from ") {
            rest.split_once(" import ")
                .map(|(_, names)| names)
                .unwrap_or("")
        } else {
            flat.strip_prefix("import ").unwrap_or("")
        };
        let is_from = flat.starts_with("from ");
        names_part
            .split(',')
            .filter_map(|item| {
                let words: Vec<&str> = item.split_whitespace().collect();
                match words.as_slice() {
                    [_, "as", alias] => Some(alias.to_string()),
                    [name] if is_from => Some(name.to_string()),
                    [name] => name.split('.').next().map(str::to_string),
                    _ => None,
                }
            })
            .collect()
    }
}

/// A plain import statement read as data: `from m import a, b as c` (`from` is `m`, with
/// its leading dots when relative) or `import x.y, z as w` (`from` is `None`). Only what
/// [`ImportItems::parse`] can read back exactly: a statement with a comment or a `;` is
/// not one, so nothing written from these items ever drops a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImportItems {
    pub from: Option<String>,
    /// What is imported (a module for `import`; a name or `*` for `from`) and its alias.
    pub items: Vec<(String, Option<String>)>,
}

impl ImportItems {
    /// Reads one import statement (brackets and line continuations allowed); `None` for
    /// anything else.
    pub fn parse(statement: &str) -> Option<ImportItems> {
        if statement.contains(['#', ';']) {
            return None;
        }
        let flat = statement.replace(['(', ')', '\\', '\n'], " ");
        let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
        let (from, names) = match flat.strip_prefix("from ") {
            Some(rest) => {
                let (module, names) = rest.split_once(" import ")?;
                (Some(module.to_string()), names)
            }
            None => (None, flat.strip_prefix("import ")?),
        };
        let mut items = Vec::new();
        for item in names.split(',').map(str::trim) {
            let words: Vec<&str> = item.split(' ').filter(|w| !w.is_empty()).collect();
            match words.as_slice() {
                [] => continue, // the trailing comma of a bracketed list
                [name] => items.push((name.to_string(), None)),
                [name, "as", alias] => items.push((name.to_string(), Some(alias.to_string()))),
                _ => return None,
            }
        }
        let valid = |word: &str| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| is_name_char(c) || c == '.' || c == '*')
        };
        let all_valid = from.as_deref().is_none_or(valid)
            && items
                .iter()
                .all(|(name, alias)| valid(name) && alias.as_deref().is_none_or(valid));
        (all_valid && !items.is_empty()).then_some(ImportItems { from, items })
    }

    /// The statement on one line.
    pub fn render(&self) -> String {
        let items: Vec<String> = self
            .items
            .iter()
            .map(|(name, alias)| match alias {
                Some(alias) => format!("{name} as {alias}"),
                None => name.clone(),
            })
            .collect();
        match &self.from {
            Some(module) => format!("from {module} import {}", items.join(", ")),
            None => format!("import {}", items.join(", ")),
        }
    }
}

/// Lexer state carried from one line to the next.
#[derive(Debug, Clone, Copy, Default)]
struct LineState {
    /// Inside a triple-quoted string opened with this quote character.
    triple: Option<u8>,
    depth: usize,
    continued: bool,
}

/// Advances the lexer over one line (without its newline).
fn scan_line(line: &str, mut st: LineState) -> LineState {
    let b = line.as_bytes();
    let mut i = 0;
    st.continued = false;
    while i < b.len() {
        if let Some(q) = st.triple {
            if b[i] == b'\\' {
                i += 2;
                continue;
            }
            if b[i] == q && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                st.triple = None;
                i += 3;
                continue;
            }
            i += 1;
            continue;
        }
        match b[i] {
            b'#' => break,
            b'(' | b'[' | b'{' => st.depth += 1,
            b')' | b']' | b'}' => st.depth = st.depth.saturating_sub(1),
            b'\\' if i + 1 == b.len() => st.continued = true,
            q @ (b'"' | b'\'') => {
                if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                    st.triple = Some(q);
                    i += 3;
                    continue;
                }
                // A single-quoted string ends on this line (or the line is broken anyway).
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    st
}

/// Splits Python source into top-level units, in order. Lossless up to blank lines between
/// units: joining the units' texts with blank lines gives back every non-blank line.
pub(crate) fn split_units(source: &str) -> Vec<Unit> {
    let source = source.replace("\r\n", "\n");
    let mut starts_unit = Vec::new();
    let mut st = LineState::default();
    let lines: Vec<&str> = source.lines().collect();
    for line in &lines {
        let top = st.triple.is_none() && st.depth == 0 && !st.continued;
        let begins = top && !line.is_empty() && !line.starts_with([' ', '\t']);
        starts_unit.push(begins);
        st = scan_line(line, st);
    }
    let mut units: Vec<Unit> = Vec::new();
    let mut pending_prefix: Vec<&str> = Vec::new(); // comments/decorators awaiting their statement
    let mut current: Option<(UnitKind, Vec<&str>)> = None;
    let mut seen_statement = false;
    for (i, line) in lines.iter().enumerate() {
        if !starts_unit[i] {
            match current.as_mut() {
                Some((_, body)) => body.push(line),
                None if line.trim().is_empty() => {}
                None => pending_prefix.push(line),
            }
            continue;
        }
        if line.starts_with('#') || line.starts_with('@') {
            if let Some(unit) = current.take() {
                units.push(finish(unit));
            }
            pending_prefix.push(line);
            continue;
        }
        if let Some(unit) = current.take() {
            units.push(finish(unit));
        }
        let kind = classify(line, !seen_statement);
        seen_statement = true;
        let mut body: Vec<&str> = std::mem::take(&mut pending_prefix);
        body.push(line);
        current = Some((kind, body));
    }
    if let Some(unit) = current.take() {
        units.push(finish(unit));
    }
    if !pending_prefix.is_empty() {
        units.push(finish((UnitKind::Other, pending_prefix)));
    }
    units
}

fn finish((kind, mut lines): (UnitKind, Vec<&str>)) -> Unit {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    Unit {
        kind,
        text: lines.join("\n"),
    }
}

fn classify(line: &str, first_statement: bool) -> UnitKind {
    let trimmed = line.trim_start();
    if first_statement
        && (trimmed.starts_with("\"\"\"")
            || trimmed.starts_with("'''")
            || trimmed.starts_with("r\"\"\""))
    {
        return UnitKind::Docstring;
    }
    if trimmed.starts_with("import ")
        || (trimmed.starts_with("from ") && trimmed.contains(" import"))
    {
        return UnitKind::Import;
    }
    let rest = trimmed.strip_prefix("async ").unwrap_or(trimmed);
    for keyword in ["def ", "class "] {
        if let Some(after) = rest.strip_prefix(keyword) {
            let name: String = after.chars().take_while(|c| is_name_char(*c)).collect();
            if !name.is_empty() {
                return UnitKind::Def(name);
            }
        }
    }
    UnitKind::Other
}

/// Identifiers used in code, ignoring strings and comments (for "which imports does this
/// function need").
pub(crate) fn identifiers(code: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut st = LineState::default();
    for line in code.lines() {
        let visible = code_outside_strings(line, st);
        st = scan_line(line, st);
        let mut word = String::new();
        for c in visible.chars().chain(std::iter::once(' ')) {
            if is_name_char(c) {
                word.push(c);
            } else if !word.is_empty() {
                if !word.starts_with(|c: char| c.is_ascii_digit()) {
                    names.insert(std::mem::take(&mut word));
                }
                word.clear();
            }
        }
    }
    names
}

/// Names called as plain functions (`f` in `f(x)`, not `g` in `x.g(y)`, not `def h(`),
/// ignoring strings and comments.
pub(crate) fn called_names(code: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut st = LineState::default();
    for line in code.lines() {
        let visible: Vec<char> = code_outside_strings(line, st).chars().collect();
        st = scan_line(line, st);
        let mut i = 0;
        while i < visible.len() {
            let start = i;
            while i < visible.len() && is_name_char(visible[i]) {
                i += 1;
            }
            if i == start {
                i += 1;
                continue;
            }
            let word: String = visible[start..i].iter().collect();
            let before = visible[..start].iter().rev().find(|c| !c.is_whitespace());
            let after = visible[i..].iter().find(|c| !c.is_whitespace());
            let defined = visible[..start]
                .iter()
                .collect::<String>()
                .trim_end()
                .ends_with("def");
            if after == Some(&'(')
                && before != Some(&'.')
                && !defined
                && !word.starts_with(|c: char| c.is_ascii_digit())
            {
                names.insert(word);
            }
        }
    }
    names
}

/// Names used as the base of an attribute (`math` in `math.sqrt(x)`, not `sqrt`, not `self`
/// in `x.self.y`), ignoring strings and comments: the modules code reaches into.
pub(crate) fn attribute_bases(code: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut st = LineState::default();
    for line in code.lines() {
        let visible: Vec<char> = code_outside_strings(line, st).chars().collect();
        st = scan_line(line, st);
        let mut start = 0;
        while start < visible.len() {
            if !is_name_char(visible[start]) {
                start += 1;
                continue;
            }
            let end = (start..visible.len())
                .find(|&i| !is_name_char(visible[i]))
                .unwrap_or(visible.len());
            let after_dot = start > 0 && visible[start - 1] == '.';
            let before_dot = visible.get(end) == Some(&'.');
            let word: String = visible[start..end].iter().collect();
            if before_dot && !after_dot && !word.starts_with(|c: char| c.is_ascii_digit()) {
                names.insert(word);
            }
            start = end;
        }
    }
    names
}

/// The parts of a line that are code: strings and comments blanked out, except the
/// `{expressions}` of f-strings, which are code. A triple-quoted f-string spanning lines is
/// treated as plain text after its first line (rare in generated code, and only costs an import).
fn code_outside_strings(line: &str, st: LineState) -> String {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    // (quote, is_triple, is_f) of the string we are in, if any.
    let mut open: Option<(u8, bool, bool)> = st.triple.map(|q| (q, true, false));
    let mut braces = 0usize;
    let mut i = 0;
    while i < b.len() {
        if let Some((q, triple, is_f)) = open {
            let c = b[i];
            if c == b'\\' {
                i += 2;
                out.push(b' ');
                continue;
            }
            let closes =
                c == q && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q)));
            if closes && braces == 0 {
                open = None;
                i += if triple { 3 } else { 1 };
                out.push(b' ');
                continue;
            }
            if is_f && c == b'{' {
                braces += 1;
                out.push(b' ');
            } else if is_f && c == b'}' {
                braces = braces.saturating_sub(1);
                out.push(b' ');
            } else {
                out.push(if braces > 0 { c } else { b' ' });
            }
            i += 1;
            continue;
        }
        match b[i] {
            b'#' => break,
            q @ (b'"' | b'\'') => {
                let prefix_start = out
                    .iter()
                    .rposition(|c| !c.is_ascii_alphabetic())
                    .map_or(0, |p| p + 1);
                let is_f = out[prefix_start..].iter().any(|c| *c == b'f' || *c == b'F');
                let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                open = Some((q, triple, is_f));
                braces = 0;
                i += if triple { 3 } else { 1 };
                out.push(b' ');
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {

    #[test]
    fn attribute_bases_are_the_names_before_a_dot() {
        let code =
            "def f(x):\n    s = 'math.pi'  # re.x\n    return math.sqrt(os.path.join(x).y) + 1.5\n";
        let bases: Vec<String> = attribute_bases(code).into_iter().collect();
        assert_eq!(bases, ["math", "os"]);
    }
    use super::*;

    #[test]
    fn an_assignment_names_what_it_binds_and_nothing_else_does() {
        let names: Vec<Option<String>> = split_units(
            "# the table\nTABLE = {\n    'a': 1,\n}\nLIMIT: int = 3\nx == 1\ncount += 1\nobj.attr = 2\nBARE: int\ndef f():\n    return TABLE\n",
        )
        .iter()
        .map(|u| u.assigned_name().map(str::to_string))
        .collect();
        assert_eq!(
            names,
            [Some("TABLE"), Some("LIMIT"), None, None, None, None, None]
                .map(|n| n.map(str::to_string))
        );
    }

    #[test]
    fn plain_imports_are_read_as_items_and_written_back_on_one_line() {
        let read = ImportItems::parse("from .m import (\n    a,\n    b as c,\n)").unwrap();
        assert_eq!(
            read,
            ImportItems {
                from: Some(".m".into()),
                items: vec![("a".into(), None), ("b".into(), Some("c".into()))],
            }
        );
        assert_eq!(read.render(), "from .m import a, b as c");
        let plain = ImportItems::parse("import os.path, numpy as np").unwrap();
        assert_eq!(plain.from, None);
        assert_eq!(plain.render(), "import os.path, numpy as np");
        assert_eq!(
            ImportItems::parse("from m import *").unwrap().render(),
            "from m import *"
        );
        for not_plain in [
            "from m import a  # why",
            "import os; import sys",
            "x = 1",
            "from m import a b",
            "from m import",
        ] {
            assert_eq!(ImportItems::parse(not_plain), None, "{not_plain}");
        }
    }

    fn kinds(src: &str) -> Vec<UnitKind> {
        split_units(src).into_iter().map(|u| u.kind).collect()
    }

    #[test]
    fn splits_docstring_imports_and_defs() {
        let src = "\"\"\"Module doc.\n\nMore.\n\"\"\"\nimport math\nfrom typing import Optional\n\n\ndef a(x: int) -> int:\n    return x\n\n\n@decorator\nasync def b():\n    pass\n";
        assert_eq!(
            kinds(src),
            vec![
                UnitKind::Docstring,
                UnitKind::Import,
                UnitKind::Import,
                UnitKind::Def("a".into()),
                UnitKind::Def("b".into())
            ]
        );
        assert_eq!(
            split_units(src)[4].text,
            "@decorator\nasync def b():\n    pass"
        );
    }

    #[test]
    fn strings_and_brackets_at_column_zero_stay_inside_their_function() {
        let src = "def svg(w):\n    return f'''<svg>\n<rect/>\ndef not_a_def():\n</svg>'''\n\n\ndef wrapped(\na: int,\n) -> int:\n    return a\n";
        let units = split_units(src);
        assert_eq!(
            kinds(src),
            vec![UnitKind::Def("svg".into()), UnitKind::Def("wrapped".into())]
        );
        assert!(units[0].text.contains("def not_a_def"));
        assert!(units[1].text.ends_with("return a"));
    }

    #[test]
    fn comments_above_a_def_belong_to_it() {
        let src = "X = 1\n\n# helper\ndef f():\n    return X\n";
        let units = split_units(src);
        assert_eq!(kinds(src), vec![UnitKind::Other, UnitKind::Def("f".into())]);
        assert_eq!(units[1].text, "# helper\ndef f():\n    return X");
    }

    #[test]
    fn import_names() {
        let unit = |t: &str| Unit {
            kind: UnitKind::Import,
            text: t.into(),
        };
        assert_eq!(unit("import os.path").imported_names(), vec!["os"]);
        assert_eq!(unit("import numpy as np").imported_names(), vec!["np"]);
        assert_eq!(
            unit("from a.b import c, d as e").imported_names(),
            vec!["c", "e"]
        );
        assert_eq!(
            unit("from a import (\n    x,\n    y,\n)").imported_names(),
            vec!["x", "y"]
        );
    }

    #[test]
    fn identifiers_skip_strings_and_comments() {
        let ids = identifiers(
            "def f(x):\n    \"\"\"Uses Counter.\"\"\"\n    return math.sqrt(x)  # not sqrt2\n",
        );
        assert!(ids.contains("math") && ids.contains("sqrt") && ids.contains("x"));
        assert!(!ids.contains("Counter") && !ids.contains("sqrt2"));
    }

    #[test]
    fn f_string_expressions_are_code() {
        let ids = identifiers(
            "def row(label):\n    return f\"{to_snake_case(label)}: {{literal}} done\"\n",
        );
        assert!(ids.contains("to_snake_case") && ids.contains("label"));
        assert!(!ids.contains("done"));
    }
}
