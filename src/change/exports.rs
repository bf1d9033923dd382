//! A new public function in a module that lists its public names in `__all__` must be
//! listed there too.
//!
//! Why: such a module says which names it exports, and a package that re-exports
//! `from .m import *`, or a user's star import, sees only those; a new function left out of
//! the list is written but not exported. On the code corpus's dev half a right
//! `count_where` was written as done without it, though the request said "export it in
//! `__all__`". The rule holds whatever the request says: a module that keeps the list keeps
//! it whole. Only a literal list or tuple of strings is read (as `rpg extract` reads it); a
//! computed `__all__` is left alone, and so is a module that had none before the change.
//! The names are added to the list by zerorepo, at its end, before verification: the edit
//! is mechanical, and on the dev half three correction rounds asked of the model gave the
//! file back unchanged each time. Only when the list cannot be found to edit does the check
//! fail, into the ordinary correction loop, with the file and the missing names.

use super::probe::new_functions;
use super::{Check, CodeError, Request, Run};
use crate::workspace::overlay::Author;

/// The check's name in the trail and in the correction prompt.
const COMMAND: &str = "__all__";

/// The new public functions of `path` that its `__all__` leaves out, when the module kept a
/// literal `__all__` before the change and after it.
pub(super) fn unexported(path: &str, before: &str, after: &str) -> Vec<String> {
    let (Some(_), Some(listed)) = (
        crate::rpg::extract::literal_all(before),
        crate::rpg::extract::literal_all(after),
    ) else {
        return Vec::new();
    };
    new_functions(path, before, after)
        .into_iter()
        .map(|f| f.name)
        .filter(|name| !listed.contains(name))
        .collect()
}

/// `source` with `names` added at the end of its `__all__` list, in the quotes the list
/// uses; `None` when there is no literal list to add to.
pub(super) fn with_exported(source: &str, names: &[String]) -> Option<String> {
    let end = crate::rpg::extract::all_list_end(source)?;
    let before = source[..end].trim_end();
    let quote = match before.rfind(['"', '\'']) {
        Some(at) => &before[at..=at],
        None => "'",
    };
    let items: Vec<String> = names.iter().map(|n| format!("{quote}{n}{quote}")).collect();
    // A list written one name a line gets one name a line, in its indentation and commas.
    let last_line = &before[before.rfind('\n').map_or(0, |at| at + 1)..];
    let indent = &last_line[..last_line.len() - last_line.trim_start().len()];
    let list = &before[before.rfind("__all__").unwrap_or(0)..];
    let mut lines = list.lines();
    let one_a_line = lines
        .next()
        .is_some_and(|first| !first.contains(['"', '\'']))
        && lines.all(|l| l.matches(['"', '\'']).count() <= 2);
    if one_a_line && !indent.is_empty() && last_line.trim_start().starts_with(quote) {
        let trailing = before.ends_with(',');
        let mut text = before.trim_end_matches(',').to_string();
        for item in &items {
            text.push_str(&format!(",\n{indent}{item}"));
        }
        if trailing {
            text.push(',');
        }
        return Some(format!("{text}{}", &source[before.len()..]));
    }
    let (separator, last) = match before.chars().last() {
        Some('[') => ("", ""),
        // A tuple of one needs its comma.
        Some('(') => ("", ","),
        Some(',') => (" ", ""),
        _ => (", ", ""),
    };
    let joined = items.join(", ");
    Some(format!(
        "{before}{separator}{joined}{last}{}",
        &source[before.len()..]
    ))
}

impl Run {
    /// Adds to their module's `__all__` the new public functions a staged module leaves out
    /// of it; the failing check when a list cannot be edited, `None` otherwise.
    pub(super) fn check_exports(&mut self, request: &Request) -> Result<Option<Check>, CodeError> {
        let disk = crate::fsutil::Workspace::new(&request.repo);
        let mut lines = Vec::new();
        let staged: Vec<(String, String)> = (self.overlay.entries().iter())
            .filter_map(|(path, entry)| Some((path.clone(), entry.content.clone()?)))
            .collect();
        for (path, after) in staged {
            // Beneath the repository, never through a link; unreadable counts as new.
            let before = disk.read(&path).ok().flatten().unwrap_or_default();
            let missing = unexported(&path, &before, &after);
            if missing.is_empty() {
                continue;
            }
            if let Some(text) = with_exported(&after, &missing) {
                self.overlay.write(&path, text, Author::Generated)?;
                let detail = format!("{path}: added {} to `__all__`", missing.join(", "));
                self.audit
                    .record("exports", None, "added", &detail, "", None)?;
                continue;
            }
            {
                let quoted: Vec<String> = missing.iter().map(|n| format!("\"{n}\"")).collect();
                lines.push(format!(
                    "{path}: the new public {} not in its `__all__`, which lists the module's \
                     public names: add {} to `__all__` in {path}",
                    match missing.len() {
                        1 => format!("function `{}` is", missing[0]),
                        _ => format!("functions {} are", quoted.join(", ")),
                    },
                    quoted.join(", ")
                ));
            }
        }
        Ok((!lines.is_empty()).then(|| Check {
            command: COMMAND.into(),
            passed: false,
            unavailable: false,
            exit_code: None,
            output: lines.join("\n"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "__all__ = ['where']\n\n\ndef where(rows, **cond):\n    return rows\n";

    #[test]
    fn a_new_public_function_must_be_in_a_literal_all() {
        let added = format!(
            "{BEFORE}\n\ndef count_where(rows, **cond):\n    return 0\n\n\ndef _helper():\n    pass\n"
        );
        assert_eq!(unexported("m.py", BEFORE, &added), ["count_where"]);
        let listed = added.replace("['where']", "['where', 'count_where']");
        assert!(unexported("m.py", BEFORE, &listed).is_empty());
        let no_all = "def where(rows):\n    return rows\n";
        let grown = format!("{no_all}\n\ndef count_where(rows):\n    return 0\n");
        assert!(
            unexported("m.py", no_all, &grown).is_empty(),
            "a module without `__all__` exports by the leading underscore"
        );
        let computed = added.replace("['where']", "[n for n in dir() if n[0] != '_']");
        assert!(unexported("m.py", BEFORE, &computed).is_empty());
        assert!(unexported("tests/test_m.py", BEFORE, &added).is_empty());
    }

    #[test]
    fn names_are_added_at_the_end_of_the_list_in_its_quotes() {
        let names = vec!["count_where".to_string()];
        assert_eq!(
            with_exported(BEFORE, &names).unwrap(),
            BEFORE.replace("['where']", "['where', 'count_where']")
        );
        let multiline = "__all__ = [\n    \"a\",\n    \"b\",\n]\nX = 1\n";
        assert_eq!(
            with_exported(multiline, &names).unwrap(),
            "__all__ = [\n    \"a\",\n    \"b\",\n    \"count_where\",\n]\nX = 1\n"
        );
        assert_eq!(
            with_exported("__all__ = [\n    'a',\n    'b'\n]\n", &names).unwrap(),
            "__all__ = [\n    'a',\n    'b',\n    'count_where'\n]\n"
        );
        let two_a_line = "__all__ = ['a', 'b',\n           'c']\n";
        assert_eq!(
            with_exported(two_a_line, &names).unwrap(),
            "__all__ = ['a', 'b',\n           'c', 'count_where']\n",
            "a list that wraps several names a line is not one name a line"
        );
        assert_eq!(
            with_exported("__all__ = ()\n", &names).unwrap(),
            "__all__ = ('count_where',)\n"
        );
        assert_eq!(with_exported("X = 1\n", &names), None);
    }
}
