//! A model's answer applied to a file's text, or the reason it cannot be.
//!
//! An answer that was cut off (it ran out of tokens: a code block that never closes, a
//! SEARCH block with no REPLACE) is never applied: the fence parser would close it at the
//! end, and a truncated whole file that still parses would drop everything after the cut.
//! A SEARCH block longer than [`MAX_SEARCH_LINES`] is refused: it is the model re-typing the
//! file, which runs out of tokens on a real module. Code for an existing Python file is
//! placed by symbol ([`super::anchor`]), so the lines it does not change keep their bytes,
//! and a definition glued to the line above it gets its blank lines back.
//!
//! A test file never gets a copy of the code it tests ([`copied_code`]): a correction that
//! defines `double` inside `tests/test_core.py`, where the package defines it, makes the
//! suite pass against the copy while the package stays as it was.

use std::collections::BTreeSet;

use super::anchor::{Block, Place, apply_block, import_order, placed_blocks, top_gap, unglue};
use crate::edit::hunk::Hunk;
use crate::edit::parse::{EditKind, parse_answer};
use crate::python::words;

/// The most lines a SEARCH block (or a diff hunk) may quote.
pub(super) const MAX_SEARCH_LINES: usize = 30;

/// The form an answer was asked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// The whole file in one block (new and short files); a fragment is placed by symbol.
    Whole,
    /// Python by symbol: new and changed definitions only, short SEARCH blocks for the rest.
    Symbols,
    /// Short SEARCH/REPLACE blocks (long files of other languages).
    Search,
}

/// The model's answer applied to the text of `path`: hunks in place, code as the whole file
/// or, for Python, placed by symbol. `Err` says why there is nothing to apply.
pub(super) fn apply_answer(
    answer: &str,
    path: &str,
    current: &str,
    form: Form,
) -> Result<String, String> {
    if let Some(why) = cut_off(answer) {
        return Err(why);
    }
    let python = path.ends_with(".py") && !current.trim().is_empty();
    let (mut blocks, rest) = match python {
        true => placed_blocks(answer),
        false => (Vec::new(), answer.to_string()),
    };
    let parsed = parse_answer(&rest);
    let mut text = current.to_string();
    let mut used = !blocks.is_empty();
    for edit in parsed.edits {
        if edit
            .path
            .as_deref()
            .is_some_and(|p| !crate::edit::apply::same_file(p, path))
        {
            continue;
        }
        match edit.kind {
            EditKind::Hunks(hunks) => {
                short_enough(&hunks)?;
                text = crate::edit::hunk::apply_all(&text, &hunks)
                    .map_err(|e| e.to_string())?
                    .0;
            }
            EditKind::Code(code)
                if python && (form == Form::Symbols || is_fragment(&code, &text)) =>
            {
                blocks.push(Block {
                    place: Place::ByName,
                    code,
                });
            }
            // Asked for short blocks, a code block would be the long file re-typed, or a
            // piece of it written over the whole (a 700-line stub became 50 lines: dev half).
            EditKind::Code(_) if form == Form::Search && !current.trim().is_empty() => {
                return Err(format!(
                    "{path} is changed with SEARCH/REPLACE blocks only; the answer's code block \
                     would replace all {} of its lines",
                    current.lines().count()
                ));
            }
            EditKind::Code(code) if has_markers(&code) => {
                return Err(format!(
                    "the answer's code for {path} holds SEARCH/REPLACE markers (`<<<<<<<`, \
                     `>>>>>>>`) that are not a block: a block begins with `<<<<<<< SEARCH`"
                ));
            }
            EditKind::Code(code) => text = ensure_newline(code),
        }
        used = true;
    }
    if !used {
        let notes = parsed.diagnostics.join("; ");
        return Err(if notes.is_empty() {
            format!("the answer has no code for {path}")
        } else {
            format!("the answer has no code for {path} ({notes})")
        });
    }
    let gap = top_gap(current);
    for block in &blocks {
        text = apply_block(&text, block, gap)?;
    }
    if path.ends_with(".py") {
        text = import_order(current, &unglue(current, &text, gap), gap);
    }
    Ok(text)
}

/// `code` has a line that opens and one that closes a merge-style block: markers, never
/// file content.
fn has_markers(code: &str) -> bool {
    let line = |marker: &str| code.lines().any(|l| l.starts_with(marker));
    line("<<<<<<< ") && line(">>>>>>> ")
}

/// Why `after`, the new text of test file `path`, cannot be written: the top-level functions
/// and classes it defines that its text `before` did not, and that a source module of the
/// repository (`sources`: path and text, test files left out) defines. `None` for a file that
/// is not a test, or that copies nothing.
pub(super) fn copied_code<'a>(
    path: &str,
    before: &str,
    after: &str,
    sources: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<String> {
    if !path.ends_with(".py") || !super::fault::is_test_file(path) {
        return None;
    }
    let defined = |text: &str| -> Vec<String> {
        crate::symbols::split_units(text)
            .iter()
            .filter_map(|u| u.def_name().map(str::to_string))
            .collect()
    };
    let old = defined(before);
    let new: Vec<String> = defined(after)
        .into_iter()
        .filter(|name| !old.contains(name) && !name.starts_with("test"))
        .collect();
    if new.is_empty() {
        return None;
    }
    let mut copied = Vec::new();
    for (source, text) in sources {
        if source == path || !source.ends_with(".py") || super::fault::is_test_file(source) {
            continue;
        }
        let theirs = defined(text);
        for name in new.iter().filter(|n| theirs.contains(n)) {
            copied.push(format!("`{name}` (defined in {source})"));
        }
    }
    (!copied.is_empty()).then(|| {
        format!(
            "the new {path} defines {} again: a test imports the code it tests and never \
             holds a copy of it; change the code in its own module",
            copied.join(", ")
        )
    })
}

/// Why the new text `after` of the Python module `path` cannot be used: names that its text
/// in the repository (`original`) binds at the top level (definitions, constants, imported
/// names) no longer occur in it anywhere, and the request (`spec`) does not name them (nor,
/// for an imported name, speak of imports). `None` otherwise, and for other files.
///
/// Why: asked again at a wider temperature, the 1.5B model re-typed a short module from
/// memory: the fix was in it, but the pattern constants the package's other modules import
/// were gone, so nothing could be collected and three correction rounds never brought them
/// back (code corpus, dev half). A change removes a name only when it is asked to, and then
/// the request names it. A name still present anywhere (moved into a `try`, used as an
/// attribute) is not counted: this rule is about text that vanished.
pub(super) fn dropped_names(path: &str, original: &str, after: &str, spec: &str) -> Option<String> {
    if !path.ends_with(".py") || original.trim().is_empty() {
        return None;
    }
    let present: BTreeSet<&str> = words(after).collect();
    let named: BTreeSet<&str> = words(spec).collect();
    let imports_named = named.contains("import") || named.contains("imports");
    let mut gone: Vec<String> = Vec::new();
    for unit in crate::symbols::split_units(original) {
        let own = unit.def_name().into_iter().chain(unit.assigned_name());
        let bound = own
            .map(|n| (n.to_string(), false))
            .chain(unit.imported_names().into_iter().map(|n| (n, true)));
        for (name, imported) in bound {
            let kept = name == "*"
                || present.contains(name.as_str())
                || named.contains(name.as_str())
                || (imported && imports_named);
            if !kept && !gone.contains(&name) {
                gone.push(name);
            }
        }
    }
    (!gone.is_empty()).then(|| {
        format!(
            "the answer drops {} from {path}, which the request does not ask to remove: keep \
             every line you do not change",
            gone.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Why the new text `after` of the Python module `path` cannot be used: it defines at the top
/// level a name it also imports there, which its text in the repository (`original`) did not.
/// `None` otherwise, and for other files.
///
/// Why: the definition takes the imported object's place for every user of the module (a
/// redefinition of an unused import, to pyflakes), whatever the request. Asked to fix a
/// function of a module that imports `FixedOffset`, the 1.5B model wrote a class of that name
/// into it from memory, on a base class the module never imports: the package could not be
/// imported, and three correction rounds re-typed the module around it (code corpus, dev half).
pub(super) fn shadowed_imports(path: &str, original: &str, after: &str) -> Option<String> {
    if !path.ends_with(".py") {
        return None;
    }
    let both = |text: &str| -> BTreeSet<String> {
        let units = crate::symbols::split_units(text);
        let imported: BTreeSet<String> = units.iter().flat_map(|u| u.imported_names()).collect();
        (units.iter().filter_map(|u| u.def_name()))
            .filter(|name| imported.contains(*name))
            .map(String::from)
            .collect()
    };
    let before = both(original);
    let shadowed: Vec<String> = both(after)
        .into_iter()
        .filter(|name| !before.contains(name))
        .map(|name| format!("`{name}`"))
        .collect();
    (!shadowed.is_empty()).then(|| {
        format!(
            "the answer defines {} in {path}, which imports it: a definition there takes the \
             imported one's place; change the code that uses it, and the imported one only in \
             its own module",
            shadowed.join(", ")
        )
    })
}

/// `Err` for a hunk that quotes more than [`MAX_SEARCH_LINES`] lines.
fn short_enough(hunks: &[Hunk]) -> Result<(), String> {
    match hunks.iter().find(|h| h.old.len() > MAX_SEARCH_LINES) {
        Some(long) => Err(format!(
            "a SEARCH block of {} lines was refused (at most {MAX_SEARCH_LINES}): quote only the \
             lines that change and a line around them; give a new function as ADD AFTER name, \
             a changed one as REPLACE name, without copying the rest of the file",
            long.old.len()
        )),
        None => Ok(()),
    }
}

/// Python code that looks like part of the file, not all of it: it leaves out more than
/// half of the file's top-level definitions.
fn is_fragment(code: &str, current: &str) -> bool {
    let names = |text: &str| -> std::collections::BTreeSet<String> {
        crate::symbols::split_units(text)
            .iter()
            .filter_map(|u| u.def_name().map(String::from))
            .collect()
    };
    let have = names(current);
    let kept = names(code).intersection(&have).count();
    !have.is_empty() && kept * 2 < have.len()
}

fn ensure_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Why `answer` looks cut off, if it does.
fn cut_off(answer: &str) -> Option<String> {
    let starting = |mark: &str| {
        answer
            .lines()
            .filter(|l| l.trim_start().starts_with(mark))
            .count()
    };
    if starting("```") % 2 == 1 {
        return Some(
            "the answer was cut off: its code block never closes (it ran out of tokens?), so \
             none of it was applied"
                .into(),
        );
    }
    if starting("<<<<<<< SEARCH") > starting(">>>>>>> REPLACE") {
        return Some(
            "the answer was cut off inside a SEARCH/REPLACE block (it ran out of tokens?), so \
             none of it was applied"
                .into(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_drops_a_name_the_request_does_not_name_is_refused() {
        let before = "import re\n\nfrom pkg.tz import UTC, ZERO, FixedOffset\n\nTZ_REGEX = r\"[+-]\"\n\n\ndef build(sign):\n    return sign or UTC\n";
        let retyped = "import re\n\n\nclass FixedOffset:\n    pass\n\n\ndef build(sign):\n    return -sign or UTC\n";
        let why = dropped_names("pkg/iso.py", before, retyped, "Fix the sign in `build`.").unwrap();
        assert!(
            why.contains("`ZERO`") && why.contains("`TZ_REGEX`"),
            "{why}"
        );
        assert!(
            !why.contains("FixedOffset") && !why.contains("`UTC`") && !why.contains("`build`"),
            "a name still in the text is kept: {why}"
        );
        let fixed = before.replace("return sign", "return -sign");
        assert_eq!(
            dropped_names("pkg/iso.py", before, &fixed, "Fix build."),
            None
        );
        let removed = before.replace("TZ_REGEX = r\"[+-]\"\n", "");
        assert_eq!(
            dropped_names(
                "pkg/iso.py",
                before,
                &removed,
                "Don't keep TZ_REGEX, it's unused."
            ),
            None,
            "a name the request names may go"
        );
        let tidied = before.replace(", ZERO", "");
        assert_eq!(
            dropped_names("pkg/iso.py", before, &tidied, "Remove the unused imports."),
            None,
            "a request about imports may drop one"
        );
        let star = "from pkg.tz import *\n\n\ndef build(sign):\n    return sign\n";
        let explicit = star.replace("*", "UTC");
        assert_eq!(
            dropped_names("pkg/iso.py", star, &explicit, "Import explicitly."),
            None
        );
        assert_eq!(dropped_names("notes.txt", before, "", ""), None);
    }

    #[test]
    fn an_answer_that_defines_a_name_the_module_imports_is_refused() {
        let before =
            "from pkg.tz import UTC, FixedOffset\n\n\ndef build(sign):\n    return sign or UTC\n";
        let copied = format!("{before}\n\nclass FixedOffset(tzinfo):\n    pass\n");
        let why = shadowed_imports("pkg/iso.py", before, &copied).unwrap();
        assert!(
            why.contains("`FixedOffset`") && !why.contains("UTC"),
            "{why}"
        );
        let fixed = before.replace("return sign", "return -sign");
        assert_eq!(shadowed_imports("pkg/iso.py", before, &fixed), None);
        let moved = copied.replace(", FixedOffset", "");
        assert_eq!(
            shadowed_imports("pkg/iso.py", before, &moved),
            None,
            "a definition that replaces its import is no copy beside it"
        );
        let fallback = "from json import loads\n\n\ndef loads(s):\n    return s\n";
        assert_eq!(
            shadowed_imports("pkg/j.py", fallback, fallback),
            None,
            "what the repository already had is not the answer's"
        );
        assert_eq!(shadowed_imports("notes.txt", before, &copied), None);
    }

    #[test]
    fn answers_apply_as_whole_files_fragments_or_hunks() {
        let current = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        let whole = "```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n```";
        let text = apply_answer(whole, "calc.py", current, Form::Whole).unwrap();
        assert!(text.contains("def mul") && text.contains("def sub"));
        let fragment = "```python\ndef mul(a, b):\n    return a * b\n```";
        let text = apply_answer(fragment, "calc.py", current, Form::Whole).unwrap();
        assert!(
            text.contains("def mul") && text.contains("def sub"),
            "{text}"
        );
        let hunk = "```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return b - a\n>>>>>>> REPLACE\n```";
        assert!(
            apply_answer(hunk, "calc.py", current, Form::Whole)
                .unwrap()
                .contains("return b - a")
        );
        assert!(apply_answer("I cannot do that.", "calc.py", current, Form::Whole).is_err());
        let other = "```python other.py\nX = 1\n```";
        assert!(apply_answer(other, "calc.py", current, Form::Whole).is_err());
    }

    #[test]
    fn a_long_file_asked_for_blocks_is_never_written_over_by_one_code_block() {
        let stub = "def add(a: int, b: int) -> int: ...\n".repeat(300);
        let piece = "```python\ndef add(a: int, b: int) -> int: ...\n```";
        let why = apply_answer(piece, "m.pyi", &stub, Form::Search).unwrap_err();
        assert!(why.contains("would replace all 300 of its lines"), "{why}");
        let marked = "```python\n<<<<<<< m.pyi\ndef add(a, b): ...\n=======\ndef add(a, b, c): ...\n>>>>>>> REPLACE\n```";
        let why = apply_answer(marked, "m.txt", "", Form::Whole).unwrap_err();
        assert!(why.contains("markers"), "{why}");
        let block = "<<<<<<< SEARCH\ndef add(a: int, b: int) -> int: ...\n=======\ndef add(a: int, b: int, c: int) -> int: ...\n>>>>>>> REPLACE\n";
        let short = "x = 1\ndef add(a: int, b: int) -> int: ...\n";
        let text = apply_answer(block, "m.pyi", short, Form::Search).unwrap();
        assert!(
            text.contains("c: int"),
            "a real block still applies: {text}"
        );
    }

    #[test]
    fn a_test_file_never_gets_a_copy_of_the_code_it_tests() {
        let sources = [
            ("pkg/core.py", "def double(x):\n    return 2 * x\n"),
            ("tests/test_core.py", "def helper():\n    pass\n"),
        ];
        let before =
            "from pkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n";
        let copied = format!("{before}\n\ndef double(x):\n    return x + x\n");
        let why = copied_code("tests/test_core.py", before, &copied, sources).unwrap();
        assert!(why.contains("`double` (defined in pkg/core.py)"), "{why}");
        // New tests, a new helper, a definition the file already had, a source file: fine.
        let more =
            format!("{before}\n\ndef test_triple():\n    assert 1\n\n\ndef helper():\n    pass\n");
        assert_eq!(
            copied_code("tests/test_core.py", before, &more, sources),
            None
        );
        assert_eq!(
            copied_code("tests/test_core.py", &copied, &copied, sources),
            None
        );
        assert_eq!(copied_code("pkg/other.py", "", &copied, sources), None);
    }

    #[test]
    fn a_cut_off_answer_is_never_applied() {
        let current = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        // Cut after the first function: it parses, and would drop `sub`.
        let cut = "```python\ndef add(a, b):\n    return a + b\n";
        let why = apply_answer(cut, "calc.py", current, Form::Symbols).unwrap_err();
        assert!(why.contains("cut off"), "{why}");
        let cut = "<<<<<<< SEARCH\n    return a - b\n=======\n    return b";
        let why = apply_answer(cut, "calc.py", current, Form::Symbols).unwrap_err();
        assert!(why.contains("cut off"), "{why}");
        let whole = "```python\ndef add(a, b):\n    return a + b\n```";
        assert!(apply_answer(whole, "calc.py", "", Form::Whole).is_ok());
    }

    #[test]
    fn a_long_search_block_is_refused_and_a_short_one_applies() {
        let current: String = (0..100).map(|i| format!("x{i} = {i}\n")).collect();
        let old: String = (0..40).map(|i| format!("x{i} = {i}\n")).collect();
        let long = format!("<<<<<<< SEARCH\n{old}=======\nx0 = 1\n>>>>>>> REPLACE");
        let why = apply_answer(&long, "data.py", &current, Form::Symbols).unwrap_err();
        assert!(why.contains("40 lines was refused (at most 30)"), "{why}");
        let short = "<<<<<<< SEARCH\nx7 = 7\n=======\nx7 = 70\n>>>>>>> REPLACE";
        let text = apply_answer(short, "data.py", &current, Form::Symbols).unwrap();
        assert_eq!(text, current.replace("x7 = 7\n", "x7 = 70\n"));
    }

    #[test]
    fn in_the_symbol_form_a_whole_looking_answer_is_placed_by_name() {
        let current = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        // Every definition again, one changed and one new: the others keep their bytes.
        let answer = "```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\ndef mul(a, b):\n    return a * b\n```";
        let text = apply_answer(answer, "calc.py", current, Form::Symbols).unwrap();
        assert_eq!(
            text,
            "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\n\n\ndef mul(a, b):\n    return a * b\n"
        );
    }
}
