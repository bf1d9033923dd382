//! Answers that edit a Python file by symbol, so that a model never re-types the text around
//! its change. Pure.
//!
//! A small model asked for SEARCH/REPLACE blocks on a module of a few hundred lines began
//! re-typing it from its first line and ran out of tokens (issue 40). Here the answer gives
//! only what changes, as code blocks, each optionally after a line that places it:
//! - `ADD AFTER name` then a new definition: inserted after the definition `name` (a method
//!   after `Class.method`), with the file's blank lines between top-level definitions;
//! - `ADD AT END` then a new definition: at the end of the module (above an
//!   `if __name__ == "__main__":` block);
//! - `REPLACE name` then the whole new definition: the old one is replaced by name
//!   (tree-sitter), its decorators kept when the new one brings none; when the definition
//!   is another one the module has, that one is replaced;
//! - a block with no such line: each definition in it replaces the one of its name; a new
//!   one goes after the definition before it in the block, or at the end.
//!
//! Imports in a block join the module's import lines unless already there; other statements
//! (a constant) go right above the definition that follows them. Everything else keeps its
//! bytes. [`unglue`] puts the blank lines back above a definition an answer glued to the
//! line above it.

use std::collections::BTreeSet;

use crate::python::is_name_char;
use crate::symbols::edit::{
    EditError, find_located, insert_after_spaced, insert_before, reindent, remove_definition,
    replace_definition,
};
use crate::symbols::outline::outline;
use crate::symbols::{UnitKind, split_units};

/// Where a block of code goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Place {
    After(String),
    End,
    Replace(String),
    /// No placing line: by the names it defines.
    ByName,
}

/// One block of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block {
    pub place: Place,
    pub code: String,
}

/// The placed blocks of `answer` (a placing line, then a fenced block) and the rest of the
/// answer without them.
pub(super) fn placed_blocks(answer: &str) -> (Vec<Block>, String) {
    let answer = hoist_placing(answer);
    let lines: Vec<&str> = answer.lines().collect();
    let mut blocks = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(place) = placing(lines[i]) else {
            rest.push(lines[i]);
            i += 1;
            continue;
        };
        let open = (i + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
        let Some(open) = open.filter(|&j| lines[j].trim_start().starts_with("```")) else {
            rest.push(lines[i]);
            i += 1;
            continue;
        };
        let close = (open + 1..lines.len()).find(|&j| lines[j].trim_start().starts_with("```"));
        let close = close.unwrap_or(lines.len());
        blocks.push(Block {
            place,
            code: lines[open + 1..close].join("\n"),
        });
        i = close + 1;
    }
    (blocks, rest.join("\n"))
}

/// `answer` with every placing line written inside a fenced block (at its top level) moved
/// out in front of a block of its own: the 1.5B model wrote `ADD AFTER camel2under` as the
/// first line of its code block, which then reached the module as a statement that does not
/// parse (issue 40's dev half). An indented line stays code.
fn hoist_placing(answer: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    let mut body = 0;
    for line in answer.lines() {
        let trimmed = line.trim_start();
        match &fence {
            None => {
                if trimmed.starts_with("```") {
                    fence = Some(trimmed.to_string());
                    body = 0;
                }
                out.push(line.to_string());
            }
            Some(_) if trimmed.starts_with("```") => {
                fence = None;
                out.push(line.to_string());
            }
            Some(open) => {
                let top = !line.starts_with([' ', '\t']);
                if let Some(definition) = glued_definition(line).filter(|_| top) {
                    // `ADD AFTER def f(x):`: the definition itself, placed by its name.
                    body += 1;
                    out.push(definition.to_string());
                    continue;
                }
                match placing(line).filter(|_| top) {
                    Some(_) if body == 0 => {
                        // In front of the fence just opened.
                        let open_line = out.pop().unwrap_or_default();
                        out.push(line.trim().to_string());
                        out.push(open_line);
                    }
                    Some(_) => {
                        let open = open.clone();
                        out.push("```".to_string());
                        out.push(line.trim().to_string());
                        out.push(open);
                        body = 0;
                    }
                    None => {
                        if !line.trim().is_empty() {
                            body += 1;
                        }
                        out.push(line.to_string());
                    }
                }
            }
        }
    }
    out.join("\n")
}

/// The definition line in `ADD AFTER def f(x):` (or `REPLACE class K:`): the 1.5B model
/// glued the placing words to the line they should stand above.
fn glued_definition(line: &str) -> Option<&str> {
    let upper = line.to_ascii_uppercase();
    let rest = ["ADD AFTER ", "ADD AT END ", "ADD AT THE END ", "REPLACE "]
        .iter()
        .find(|p| upper.starts_with(*p))
        .map(|p| line[p.len()..].trim_start())?;
    ["def ", "class ", "async def "]
        .iter()
        .any(|k| rest.starts_with(k))
        .then_some(rest)
}

/// The place a line names: `ADD AFTER name`, `ADD AT END`, `REPLACE name` (any case, with
/// markdown around it).
fn placing(line: &str) -> Option<Place> {
    let line = line
        .trim()
        .trim_start_matches(['#', '*', '-', '>', ' '])
        .trim_end_matches([':', '*', ' ']);
    let words: Vec<&str> = line.split_whitespace().collect();
    // `name`, `` `name` ``, `name()`, `name(a, b)`: the 1.5B model wrote the signature.
    let name = |w: &str| {
        let name = w.trim_matches(['`', '"', '\'', ':', '*']);
        let name = name.split('(').next().unwrap_or(name);
        let ok = !name.is_empty() && name.chars().all(|c| is_name_char(c) || c == '.');
        ok.then(|| name.to_string())
    };
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let upper: Vec<&str> = upper.iter().map(String::as_str).collect();
    // A signature's arguments may hold spaces (`f(a, b)`): the name is what comes before
    // them, and the line ends with them; "REPLACE f(x) with g(x)" is prose.
    let called = |at: usize| {
        let rest = words[at..].join(" ");
        let rest = rest.trim_end_matches(['`', ':', '*']);
        let signature = rest.matches('(').count() == 1 && rest.ends_with(')');
        words.len() == at + 1 || (words[at].contains('(') && signature)
    };
    match upper.as_slice() {
        ["ADD", "AT", "END"] | ["ADD", "AT", "THE", "END"] => Some(Place::End),
        ["ADD", "AFTER", _, ..] if called(2) => name(words[2]).map(Place::After),
        ["REPLACE", _, ..] if called(1) => name(words[1]).map(Place::Replace),
        _ => None,
    }
}

/// `text` with `block` applied; `gap` is the file's blank lines between top-level
/// definitions. `Err` says why it cannot be, in words for the model.
pub(super) fn apply_block(text: &str, block: &Block, gap: usize) -> Result<String, String> {
    let code = reindent(&block.code, "");
    let mut text = text.to_string();
    // `ADD AFTER f` above the new `def f`, f not in the file: the model named what it adds,
    // not where (code corpus, dev half); it goes at the end.
    let own = |name: &str| {
        split_units(&code)
            .iter()
            .any(|u| u.def_name() == Some(name))
            && !defines(&text, name)
    };
    let mut anchor = match &block.place {
        Place::After(name) if own(name) => None,
        Place::After(name) => Some(name.clone()),
        _ => None,
    };
    let mut target = match &block.place {
        Place::Replace(name) => Some(name.clone()),
        _ => None,
    };
    let mut above: Vec<String> = Vec::new();
    let mut defined = false;
    for unit in split_units(&code) {
        match &unit.kind {
            UnitKind::Docstring => {}
            UnitKind::Import => text = add_import(&text, &unit.text),
            UnitKind::Other if text.contains(unit.text.trim()) => {}
            UnitKind::Other => above.push(unit.text.clone()),
            UnitKind::Def(name) => {
                defined = true;
                let definition = Definition {
                    name,
                    code: &unit.text,
                    above: &above.join("\n\n"),
                };
                let scoped = matches!(block.place, Place::After(_));
                let (new, placed) = place_definition(
                    &text,
                    &definition,
                    target.take(),
                    (anchor.as_deref(), scoped),
                    gap,
                )?;
                above.clear();
                text = new;
                anchor = placed;
            }
        }
    }
    if !above.is_empty() {
        let rest = above.join("\n\n");
        text = match anchor.as_deref() {
            Some(anchor) => insert_after(&text, anchor, &rest, gap)?,
            None => append(&text, &rest, gap),
        };
    }
    if !defined && matches!(block.place, Place::Replace(_)) {
        return Err(
            "a REPLACE block must hold the whole new definition, from its `def` or `class` line"
                .into(),
        );
    }
    Ok(text)
}

/// A definition of a block, with the statements of the block that go right above it.
struct Definition<'a> {
    name: &'a str,
    code: &'a str,
    above: &'a str,
}

/// One definition into `text`: replacing `target`, or the definition of its name, or
/// inserted after `anchor` (else at the end). A `scoped` anchor (`ADD AFTER`) names the
/// scope too: a definition beside a method is a method, and replaces only one of its class.
/// Returns the text and the anchor for the next definition of the block.
fn place_definition(
    text: &str,
    definition: &Definition<'_>,
    target: Option<String>,
    (anchor, scoped): (Option<&str>, bool),
    gap: usize,
) -> Result<(String, Option<String>), String> {
    let (name, code) = (definition.name, definition.code);
    let replace = |target: &str| -> Result<String, String> {
        let done = replace_definition(text, target, code).map_err(|e| why(&e, "REPLACE"))?;
        match definition.above.is_empty() {
            true => Ok(done.source),
            false => insert_before(&done.source, target, definition.above)
                .map(|e| e.source)
                .map_err(|e| why(&e, "REPLACE")),
        }
    };
    if let Some(target) = target {
        // `REPLACE f` over `def g`, g another definition of the module: the code says which
        // it replaces (an answer begun at `def f` may go on to name `f_iter`).
        let target = match !target.contains('.') && target != name && defines(text, name) {
            true => name.to_string(),
            false => target,
        };
        return Ok((replace(&target)?, Some(target)));
    }
    // Beside a method, a new definition is a method of the same class.
    let scope = anchor
        .and_then(|a| a.rsplit_once('.'))
        .map(|(class, _)| class);
    let qualified = match scope {
        Some(class) => format!("{class}.{name}"),
        None => name.to_string(),
    };
    let exists = match scoped {
        true => defines(text, &qualified),
        false => match find_located(text, name) {
            Ok(_) => true,
            Err(EditError::SymbolNotFound { .. }) => false,
            Err(e) => return Err(why(&e, "REPLACE")),
        },
    };
    if exists {
        let target = if scoped { &qualified } else { name };
        return Ok((replace(target)?, Some(target.to_string())));
    }
    let mut piece = definition.above.to_string();
    if !piece.is_empty() {
        piece.push_str(&"\n".repeat(gap + 1));
    }
    piece.push_str(code);
    let text = match anchor {
        Some(anchor) => insert_after(text, anchor, &piece, gap)?,
        None => append(text, &piece, gap),
    };
    Ok((text, Some(qualified)))
}

fn insert_after(text: &str, anchor: &str, code: &str, gap: usize) -> Result<String, String> {
    insert_after_spaced(text, anchor, code, gap)
        .map(|e| e.source)
        .map_err(|e| why(&e, "ADD AFTER"))
}

/// An edit error in words that tell the model what to do instead.
fn why(error: &EditError, form: &str) -> String {
    match error {
        EditError::SymbolNotFound { name, available } => format!(
            "{form} {name}: the file defines no `{name}` (it defines: {available}); name one of \
             those, or use ADD AT END"
        ),
        other => format!("{form}: {other}"),
    }
}

/// Whether `text` has a definition of exactly this qualified name.
pub(super) fn defines(text: &str, qualified: &str) -> bool {
    outline(text).is_ok_and(|all| all.iter().any(|s| s.qualified_name == qualified))
}

/// `code` at the end of the module, or above its `if __name__ == "__main__":` block, with
/// `gap` blank lines around it.
pub(super) fn append(text: &str, code: &str, gap: usize) -> String {
    let blank = "\n".repeat(gap);
    let main = text
        .rfind("\nif __name__")
        .map(|at| at + 1)
        .or_else(|| text.starts_with("if __name__").then_some(0));
    match main {
        Some(at) => {
            let before = text[..at].trim_end();
            let lead = if before.is_empty() {
                String::new()
            } else {
                format!("\n{blank}")
            };
            format!("{before}{lead}{code}\n{blank}{}", &text[at..])
        }
        None => {
            let before = text.trim_end();
            match before.is_empty() {
                true => format!("{code}\n"),
                false => format!("{before}\n{blank}{code}\n"),
            }
        }
    }
}

/// `import` joined to the module's imports, unless a line of the module is already it.
pub(super) fn add_import(text: &str, import: &str) -> String {
    let present = |line: &str| text.lines().any(|l| l.trim_end() == line.trim_end());
    if import.lines().count() == 1 && present(import) {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let is_import =
        |l: &str| l.starts_with("import ") || (l.starts_with("from ") && l.contains(" import"));
    let Some(last) = lines.iter().rposition(|l| is_import(l)) else {
        return match text.starts_with("\"\"\"") || text.starts_with("'''") {
            // After the module docstring: its first statement must stay first.
            true => {
                let at = docstring_end(text);
                format!("{}\n{import}\n{}", &text[..at], &text[at..])
            }
            false => format!("{import}\n\n{text}"),
        };
    };
    // A bracketed import ends at its closing bracket.
    let mut end = last;
    if lines[last].contains('(') && !lines[last].contains(')') {
        end = (last..lines.len())
            .find(|&i| lines[i].contains(')'))
            .unwrap_or(last);
    }
    let at: usize = lines[..=end]
        .iter()
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(text.len());
    let sep = if text[..at].ends_with('\n') { "" } else { "\n" };
    format!("{}{sep}{import}\n{}", &text[..at], &text[at..])
}

/// The byte after the line that closes the module docstring.
fn docstring_end(text: &str) -> usize {
    let quote = &text[..3];
    let close = text[3..].find(quote).map_or(text.len(), |i| i + 6);
    text[close.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| close + i + 1)
}

/// `after` with each top-level definition that `before` did not have moved below the
/// definitions its header needs when the module is imported (a decorator `@wraps(g)`, a base
/// class, a default value): a new `def` placed above the `g` it decorates with raised
/// `NameError` at import, so no test of the package could even be collected, and three
/// correction rounds never saw why (code corpus, dev half). Only new definitions move;
/// existing code keeps its place and bytes.
pub(super) fn import_order(before: &str, after: &str, gap: usize) -> String {
    let old: BTreeSet<String> = split_units(before)
        .iter()
        .filter_map(|u| u.def_name().map(str::to_string))
        .collect();
    let mut text = after.to_string();
    for _ in 0..split_units(after).len() {
        let Some((name, anchor)) = misplaced(&text, &old) else {
            break;
        };
        let Ok((rest, code)) = remove_definition(&text, &name) else {
            break;
        };
        match insert_after_spaced(&rest, &anchor, &code, gap) {
            Ok(moved) => text = moved.source,
            Err(_) => break,
        }
    }
    text
}

/// The first new definition whose header uses a name the module defines only further down,
/// and the last such definition (where it must go).
fn misplaced(text: &str, old: &BTreeSet<String>) -> Option<(String, String)> {
    let units = split_units(text);
    // Where each top-level name is first bound: a definition, an assignment or an import.
    let mut first: std::collections::BTreeMap<String, usize> = Default::default();
    for (i, unit) in units.iter().enumerate() {
        for name in unit.bound_names() {
            first.entry(name).or_insert(i);
        }
    }
    for (i, unit) in units.iter().enumerate() {
        let Some(name) = unit.def_name().filter(|n| !old.contains(*n)) else {
            continue;
        };
        let later = crate::symbols::identifiers(header(&unit.text))
            .into_iter()
            .filter(|used| used != name)
            .filter_map(|used| first.get(&used).copied())
            .filter(|&at| at > i)
            .max()?;
        if let Some(anchor) = units[later].def_name() {
            return Some((name.to_string(), anchor.to_string()));
        }
    }
    None
}

/// A definition's text up to the end of its `def` or `class` line(s): the decorators and
/// the signature, what runs when the module is imported.
fn header(definition: &str) -> &str {
    let mut end = 0;
    let mut in_signature = false;
    for line in definition.split_inclusive('\n') {
        end += line.len();
        let code = line.split('#').next().unwrap_or_default().trim_end();
        let trimmed = code.trim_start();
        if trimmed.starts_with("def ")
            || trimmed.starts_with("async def ")
            || trimmed.starts_with("class ")
        {
            in_signature = true;
        }
        if in_signature && code.ends_with(':') {
            break;
        }
    }
    &definition[..end.min(definition.len())]
}

/// The blank lines this file puts above a top-level definition (the most common count; 2,
/// PEP 8's, when it shows none).
pub(super) fn top_gap(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut counts = [0usize; 3];
    for (i, line) in lines.iter().enumerate() {
        let def = ["def ", "class ", "async def ", "@"]
            .iter()
            .any(|k| line.starts_with(k));
        if !def || (i > 0 && lines[i - 1].starts_with('@')) {
            continue;
        }
        let blanks = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        if blanks < i && (1..=2).contains(&blanks) {
            counts[blanks] += 1;
        }
    }
    if counts[1] > counts[2] { 1 } else { 2 }
}

/// `after` with blank lines put back above each definition glued to the line above it
/// (`return x` then `def g():` on the next line) that was not glued in `before`: `gap`
/// above a top-level one, one above a method.
pub(super) fn unglue(before: &str, after: &str, gap: usize) -> String {
    let glued_before: BTreeSet<String> = glued(before).into_iter().map(|(n, _, _)| n).collect();
    let mut lines: Vec<String> = after.split('\n').map(str::to_string).collect();
    let mut fixes: Vec<(usize, usize)> = glued(after)
        .into_iter()
        .filter(|(name, _, _)| !glued_before.contains(name))
        .map(|(_, row, top)| (row, if top { gap } else { 1 }))
        .collect();
    if fixes.is_empty() {
        return after.to_string();
    }
    fixes.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (row, blank) in fixes {
        for _ in 0..blank {
            lines.insert(row, String::new());
        }
    }
    lines.join("\n")
}

/// The definitions of `text` (top-level and methods) glued to a statement above them: the
/// qualified name, the 0-based row to put blank lines at, whether it is top-level.
fn glued(text: &str) -> Vec<(String, usize, bool)> {
    let Ok(symbols) = outline(text) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    for symbol in symbols
        .iter()
        .filter(|s| !s.qualified_name.contains("<locals>"))
    {
        let mut row = symbol.start_line - 1;
        let Some(first) = lines.get(row) else {
            continue;
        };
        let own = indent(first);
        // Comment lines directly above belong to the definition.
        while row > 0
            && lines[row - 1].trim_start().starts_with('#')
            && indent(lines[row - 1]) == own
        {
            row -= 1;
        }
        let Some(above) = row.checked_sub(1).map(|r| lines[r]) else {
            continue;
        };
        if !above.trim().is_empty() && indent(above) >= own {
            out.push((symbol.qualified_name.clone(), row, own == 0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\"\"\"Text helpers.\"\"\"\n\nimport re\n\n\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\n@cache\ndef join_dashes(s):\n    return \"-\".join(s.split())\n\n\nif __name__ == \"__main__\":\n    print(lower_words(\"A\"))\n";

    fn apply(answer: &str) -> Result<String, String> {
        let (blocks, _) = placed_blocks(answer);
        let mut text = MODULE.to_string();
        for block in &blocks {
            text = apply_block(&text, block, top_gap(MODULE))?;
        }
        Ok(text)
    }

    #[test]
    fn placing_lines_are_read_in_their_common_shapes() {
        assert_eq!(
            placing("ADD AFTER lower_words"),
            Some(Place::After("lower_words".into()))
        );
        assert_eq!(
            placing("**Add after `Shape.area`:**"),
            Some(Place::After("Shape.area".into()))
        );
        assert_eq!(
            placing("### REPLACE join_dashes()"),
            Some(Place::Replace("join_dashes".into()))
        );
        assert_eq!(
            placing("ADD AFTER pairwise(iterable, n=2)"),
            Some(Place::After("pairwise".into()))
        );
        assert_eq!(placing("add at the end:"), Some(Place::End));
        assert_eq!(placing("ADD AFTER the last function"), None);
        assert_eq!(placing("# Replace old_api(x) with new_api(x) below"), None);
        assert_eq!(
            placing("Replace `foo(x)` calls with `bar(x)` in baz:"),
            None
        );
        assert_eq!(
            placing("REPLACE `f(a, b)`:"),
            Some(Place::Replace("f".into()))
        );
        assert_eq!(placing("Replace the old code with this"), None);
        assert_eq!(placing("def add(a, b):"), None);
    }

    #[test]
    fn a_new_function_goes_after_its_anchor_with_two_blank_lines() {
        let answer = "ADD AFTER lower_words\n```python\ndef slug(s):\n    return join_dashes(lower_words(s))\n```";
        let text = apply(answer).unwrap();
        let new = "\n\ndef slug(s):\n    return join_dashes(lower_words(s))\n";
        assert_eq!(
            text,
            MODULE.replacen(
                "    return s.lower()\n",
                &format!("    return s.lower()\n{new}"),
                1
            )
        );
    }

    #[test]
    fn a_replace_over_another_definition_of_the_module_replaces_that_one() {
        let answer = "REPLACE lower_words\n```python\ndef join_dashes(s):\n    return \"_\".join(s.split())\n```";
        let text = apply(answer).unwrap();
        assert!(text.contains("    return s.lower()\n"), "{text}");
        assert!(
            text.contains("@cache\ndef join_dashes(s):\n    return \"_\""),
            "{text}"
        );
        // Over a name the module does not have, it is a renaming: the target goes.
        let text =
            apply("REPLACE lower_words\n```python\ndef lower(s):\n    return s\n```").unwrap();
        assert!(
            !text.contains("def lower_words") && text.contains("def lower(s):"),
            "{text}"
        );
    }

    #[test]
    fn an_anchor_naming_the_new_definition_itself_puts_it_at_the_end() {
        let answer = "```python\nADD AFTER slug(s)\ndef slug(s):\n    return s\n```";
        let text = apply(answer).unwrap();
        assert!(
            text.contains("\n\n\ndef slug(s):\n    return s\n\n\nif __name__"),
            "{text}"
        );
    }

    #[test]
    fn at_the_end_is_above_the_main_block_and_a_replace_keeps_the_decorator() {
        let answer = "ADD AT END\n```python\ndef slug(s):\n    return s\n```\n\nREPLACE join_dashes\n```python\ndef join_dashes(s):\n    return \"_\".join(s.split())\n```";
        let text = apply(answer).unwrap();
        assert!(text.contains("@cache\ndef join_dashes(s):\n    return \"_\".join(s.split())\n\n\ndef slug(s):\n    return s\n\n\nif __name__"), "{text}");
        assert!(
            text.starts_with("\"\"\"Text helpers.\"\"\"\n\nimport re\n\n\ndef lower_words(s):\n")
        );
    }

    #[test]
    fn a_block_without_a_place_replaces_by_name_and_adds_imports_once() {
        let answer = "```python\nimport re\nimport string\n\nSEP = \"-\"\n\n\ndef lower_words(s):\n    return s.casefold()\n\n\ndef title(s):\n    return s.title()\n```";
        let (blocks, rest) = placed_blocks(answer);
        assert!(blocks.is_empty() && rest == answer);
        let code = answer
            .trim_start_matches("```python\n")
            .trim_end_matches("```");
        let text = apply_block(
            MODULE,
            &Block {
                place: Place::ByName,
                code: code.into(),
            },
            2,
        )
        .unwrap();
        assert_eq!(text.matches("import re\n").count(), 1);
        assert!(text.contains("import re\nimport string\n"), "{text}");
        // A statement goes right above the definition after it in the block, and a new
        // definition after the one before it.
        assert!(
            text.contains("SEP = \"-\"\n\n\ndef lower_words(s):\n    return s.casefold()\n\n\ndef title(s):\n    return s.title()\n\n\n@cache"),
            "{text}"
        );
    }

    #[test]
    fn a_placing_line_inside_the_code_block_places_it() {
        let answer = "```python\nADD AFTER lower_words\ndef slug(s):\n    return s\n\nREPLACE join_dashes\ndef join_dashes(s):\n    return s\n```";
        let (blocks, rest) = placed_blocks(answer);
        assert_eq!(rest, "");
        assert_eq!(
            blocks,
            vec![
                Block {
                    place: Place::After("lower_words".into()),
                    code: "def slug(s):\n    return s\n".into(),
                },
                Block {
                    place: Place::Replace("join_dashes".into()),
                    code: "def join_dashes(s):\n    return s".into(),
                },
            ]
        );
        let text = apply(answer).unwrap();
        assert!(
            !text.contains("ADD AFTER") && text.contains("return s.lower()\n\n\ndef slug(s):"),
            "{text}"
        );
        // The placing words glued to the definition: placed by its name.
        let glued = "```python\nADD AFTER def join_dashes(s):\n    return s\n\nADD AT END\n```";
        let (blocks, rest) = placed_blocks(glued);
        assert!(
            rest.starts_with("```python\ndef join_dashes(s):\n    return s\n"),
            "{rest}"
        );
        assert!(
            blocks.iter().all(|b| b.code.trim().is_empty()),
            "{blocks:?}"
        );
        let by_name = Block {
            place: Place::ByName,
            code: "def join_dashes(s):\n    return s\n".into(),
        };
        let text = apply_block(MODULE, &by_name, 2).unwrap();
        assert!(
            text.contains("@cache\ndef join_dashes(s):\n    return s\n"),
            "{text}"
        );
        // Indented, it is code (a method's body may say anything).
        let code = "```python\ndef f():\n    replace x\n```";
        assert_eq!(hoist_placing(code), code);
    }

    #[test]
    fn an_unknown_anchor_says_what_the_file_defines() {
        let why = apply("ADD AFTER slugify\n```python\ndef f():\n    pass\n```").unwrap_err();
        assert!(
            why.contains("defines no `slugify`") && why.contains("lower_words"),
            "{why}"
        );
        let why = apply("REPLACE lower_words\n```python\nx = 1\n```").unwrap_err();
        assert!(why.contains("whole new definition"), "{why}");
    }

    #[test]
    fn glued_definitions_get_their_blank_lines_back() {
        let glued = "import re\n\n\ndef a():\n    return 1\ndef b():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n    def n(self):\n        return 2\n";
        let fixed = unglue("", glued, 2);
        assert_eq!(
            fixed,
            "import re\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 2\n"
        );
        // A file glued that way already keeps its style.
        assert_eq!(unglue(glued, glued, 2), glued);
        assert_eq!(
            top_gap("def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n"),
            1
        );
        assert_eq!(top_gap(MODULE), 2);
    }

    #[test]
    fn a_new_definition_goes_below_what_its_decorator_needs() {
        let before = "from functools import wraps\n\n\ndef cut(s):\n    return s\n\n\ndef other():\n    pass\n";
        let after = "from functools import wraps\n\n\n@wraps(cut)\ndef both(s):\n    return cut(s)\n\n\ndef cut(s):\n    return s\n\n\ndef other():\n    pass\n";
        assert_eq!(
            import_order(before, after, 2),
            "from functools import wraps\n\n\ndef cut(s):\n    return s\n\n\n@wraps(cut)\ndef both(s):\n    return cut(s)\n\n\ndef other():\n    pass\n"
        );
        // A body may call what comes later: only the header runs at import.
        let calls = "def both(s):\n    return cut(s)\n\n\ndef cut(s):\n    return s\n";
        assert_eq!(import_order("def cut(s):\n    return s\n", calls, 2), calls);
        // Existing definitions never move.
        assert_eq!(import_order(after, after, 2), after);
    }
}
