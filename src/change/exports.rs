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
//! The check runs on the staged text, with no sandbox, and fails into the ordinary
//! correction loop, with the file and the missing names in its output.

use super::probe::new_functions;
use super::{Check, CodeError, Request, Run};

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

impl Run {
    /// The failing check when a staged module leaves a new public function out of its
    /// `__all__`; `None` when none does.
    pub(super) fn check_exports(&self, request: &Request) -> Result<Option<Check>, CodeError> {
        let disk = crate::fsutil::Workspace::new(&request.repo);
        let mut lines = Vec::new();
        for (path, entry) in self.overlay.entries() {
            let Some(after) = &entry.content else {
                continue;
            };
            // Beneath the repository, never through a link; unreadable counts as new.
            let before = disk.read(path).ok().flatten().unwrap_or_default();
            let missing = unexported(path, &before, after);
            if !missing.is_empty() {
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
}
