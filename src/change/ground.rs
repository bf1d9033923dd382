//! The model's plan held against the repository it is about. Pure.
//!
//! The model's labels and paths are guesses; the disk and the repository's definitions are
//! facts. [`normalise`] makes a CREATE of an existing file a MODIFY and a MODIFY of a missing
//! one a CREATE. [`retarget`] moves a task on a Python module to the module that defines the
//! functions the request is about, when the planned one defines none of them: on the code
//! corpus's dev half the 1.5B model planned the fix of `funcy.cut_suffix` (defined in
//! `funcy/strings.py`, its failing test in `tests/test_strings.py`) as a change of
//! `funcy/calc.py`, and every later answer re-typed that file unchanged. A module the
//! request itself names by its path never moves: there the user's words are the fact.

use std::collections::{BTreeMap, BTreeSet};

use super::fault::is_test_file;
use super::plan::{ChangePlan, TaskKind};
use crate::python::words;

/// CREATE of an existing file is a MODIFY, MODIFY of a missing one a CREATE: the model's
/// label is a guess, the disk is a fact.
pub(super) fn normalise(mut plan: ChangePlan, files: &[String]) -> ChangePlan {
    let mut created: BTreeSet<String> = BTreeSet::new();
    for task in &mut plan.tasks {
        let Some(path) = task.path.as_mut() else {
            continue;
        };
        if let Some(stripped) = path.strip_prefix("./") {
            *path = stripped.to_string();
        }
        let exists = files.contains(path) || created.contains(path);
        task.kind = match task.kind {
            TaskKind::CreateFile if exists => TaskKind::ModifyFile,
            TaskKind::ModifyFile if !exists => TaskKind::CreateFile,
            kind => kind,
        };
        if task.kind == TaskKind::CreateFile {
            created.insert(path.clone());
        }
    }
    plan
}

/// Top-level functions and classes by name, and the modules (not test files) that define
/// them.
pub(super) type Definitions = BTreeMap<String, BTreeSet<String>>;

/// The definitions of `sources` (path, text); a module that does not parse defines nothing.
pub(super) fn definitions<'a>(
    sources: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Definitions {
    let mut all = Definitions::new();
    for (path, text) in sources {
        if !path.ends_with(".py") || is_test_file(path) {
            continue;
        }
        let Ok(symbols) = crate::symbols::outline::outline(text) else {
            continue;
        };
        for symbol in symbols.iter().filter(|s| s.qualified_name == s.name) {
            all.entry(symbol.name.clone())
                .or_default()
                .insert(path.to_string());
        }
    }
    all
}

/// A task moved to another module, for the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Moved {
    pub task: String,
    pub from: String,
    pub to: String,
    /// The names the new module defines.
    pub names: Vec<String>,
}

/// Each MODIFY task of a module that defines none of the names its description mentions,
/// while exactly one other module defines them all, moved there (unless another task
/// already has that file). A plan with one such task reads the request's names too, since
/// the description may have lost them.
pub(super) fn retarget(plan: &mut ChangePlan, spec: &str, defined: &Definitions) -> Vec<Moved> {
    let modules = |t: &super::plan::Task| {
        t.kind == TaskKind::ModifyFile
            && t.path
                .as_deref()
                .is_some_and(|p| p.ends_with(".py") && !is_test_file(p))
    };
    let alone = plan.tasks.iter().filter(|t| modules(t)).count() == 1;
    let mut moved = Vec::new();
    for i in 0..plan.tasks.len() {
        let task = &plan.tasks[i];
        if !modules(task) {
            continue;
        }
        let mut names = mentioned(&task.description, defined);
        if names.is_empty() && alone {
            names = mentioned(spec, defined);
        }
        let path = task.path.clone().unwrap_or_default();
        if names.is_empty() || names.iter().any(|n| defined[n].contains(&path)) {
            continue;
        }
        // The user's words are a fact, the plan's a guess: a module the request names by
        // its path stays (the dev half's "Add `cut_prefix_strict` to funcy/strings.py" was
        // planned there, worded "returns s without prefix", and moved to where funcy's
        // `without` is defined).
        if names_path(spec, &path) {
            continue;
        }
        let homes: BTreeSet<&String> = names.iter().flat_map(|n| &defined[n]).collect();
        let [home] = homes.into_iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        if plan.tasks.iter().any(|t| t.path.as_ref() == Some(home)) {
            continue;
        }
        moved.push(Moved {
            task: task.id.to_string(),
            from: path,
            to: home.clone(),
            names: names.into_iter().collect(),
        });
        plan.tasks[i].path = Some(home.clone());
    }
    moved
}

/// Whether `text` names `path` (`funcy/strings.py`), not as a piece of a longer path.
fn names_path(text: &str, path: &str) -> bool {
    let part_of_a_path = |c: char| c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-');
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + path.len()..].chars().next();
        !before.is_some_and(part_of_a_path)
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The names `text` mentions (as words, or the last part of a dotted name) that the
/// repository defines; only those written as code when there are any. A plain word may be a
/// name by chance: a task worded "to remove exactly the suffix" mentioned funcy's `remove`
/// beside `cut_suffix`, two modules, and the task stayed on a third (code corpus, dev half).
fn mentioned(text: &str, defined: &Definitions) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut code = BTreeSet::new();
    for word in words(text) {
        // A piece of `text`, so its offset is where it begins (separators may be wide).
        let start = word.as_ptr() as usize - text.as_ptr() as usize;
        if word.len() <= 2 || !defined.contains_key(word) {
            continue;
        }
        names.insert(word.to_string());
        if written_as_code(word, &text[..start], &text[start + word.len()..]) {
            code.insert(word.to_string());
        }
    }
    match code.is_empty() {
        true => names,
        false => code,
    }
}

/// `word`, between `before` and `after`, is written as code: `snake_case`, with a digit or a
/// capital inside, after a backtick or a dot, or called.
fn written_as_code(word: &str, before: &str, after: &str) -> bool {
    word.contains('_')
        || word
            .chars()
            .skip(1)
            .any(|c| c.is_ascii_digit() || c.is_uppercase())
        || before.ends_with(['`', '.'])
        || after.starts_with('(')
}

#[cfg(test)]
mod tests {
    use super::super::plan::file_task as task;
    use super::*;

    #[test]
    fn labels_follow_the_disk() {
        let plan = ChangePlan {
            tasks: vec![
                task("1", TaskKind::CreateFile, "./calc.py", ""),
                task("2", TaskKind::ModifyFile, "new.py", ""),
            ],
        };
        let plan = normalise(plan, &["calc.py".to_string()]);
        assert_eq!(plan.tasks[0].kind, TaskKind::ModifyFile);
        assert_eq!(plan.tasks[0].path.as_deref(), Some("calc.py"));
        assert_eq!(plan.tasks[1].kind, TaskKind::CreateFile);
    }

    const STRINGS: &str =
        "def cut_prefix(s, p):\n    return s\n\n\ndef cut_suffix(s, x):\n    return s\n";
    const CALC: &str = "def memoize(f):\n    return f\n";

    fn defined() -> Definitions {
        definitions([
            ("funcy/strings.py", STRINGS),
            ("funcy/calc.py", CALC),
            ("tests/test_strings.py", "def cut_suffix():\n    pass\n"),
        ])
    }

    #[test]
    fn a_task_on_a_module_that_defines_none_of_its_names_moves_to_the_one_that_does() {
        let mut plan = ChangePlan {
            tasks: vec![task(
                "1",
                TaskKind::ModifyFile,
                "funcy/calc.py",
                "Fix the function cut_suffix so that it removes exactly the suffix.",
            )],
        };
        let moved = retarget(&mut plan, "", &defined());
        assert_eq!(plan.tasks[0].path.as_deref(), Some("funcy/strings.py"));
        assert_eq!(
            moved,
            vec![Moved {
                task: "1".into(),
                from: "funcy/calc.py".into(),
                to: "funcy/strings.py".into(),
                names: vec!["cut_suffix".into()],
            }]
        );
        // A plain word that names a definition elsewhere does not outweigh a name in code.
        let mut with_remove = defined();
        (with_remove.entry("remove".into()).or_default()).insert("funcy/seqs.py".into());
        let mut plan = ChangePlan {
            tasks: vec![task(
                "1",
                TaskKind::ModifyFile,
                "funcy/calc.py",
                "Fix the function cut_suffix to remove exactly the suffix.",
            )],
        };
        retarget(&mut plan, "", &with_remove);
        assert_eq!(plan.tasks[0].path.as_deref(), Some("funcy/strings.py"));
        for written in ["Fix `remove`.", "Fix funcy.remove.", "Fix remove(seq)."] {
            let mut plan = ChangePlan {
                tasks: vec![task("1", TaskKind::ModifyFile, "funcy/calc.py", written)],
            };
            retarget(&mut plan, "", &with_remove);
            assert_eq!(
                plan.tasks[0].path.as_deref(),
                Some("funcy/seqs.py"),
                "{written}"
            );
        }
        // The request's names count when the description lost them.
        let mut plan = ChangePlan {
            tasks: vec![task("1", TaskKind::ModifyFile, "funcy/calc.py", "Fix it.")],
        };
        retarget(
            &mut plan,
            "`funcy.cut_suffix` cuts one too many",
            &defined(),
        );
        assert_eq!(plan.tasks[0].path.as_deref(), Some("funcy/strings.py"));
    }

    #[test]
    fn a_module_the_request_names_by_its_path_stays() {
        let mut defined = defined();
        (defined.entry("without".into()).or_default()).insert("funcy/seqs.py".into());
        let planned = || ChangePlan {
            tasks: vec![task(
                "1",
                TaskKind::ModifyFile,
                "funcy/strings.py",
                "Add cut_prefix_strict(s, prefix) that returns s without prefix.",
            )],
        };
        let mut plan = planned();
        let spec = "Add `cut_prefix_strict(s, prefix)` to funcy/strings.py, built on `cut_prefix`";
        assert!(retarget(&mut plan, spec, &defined).is_empty());
        assert_eq!(plan.tasks[0].path.as_deref(), Some("funcy/strings.py"));
        // Not named, it moves to where the plain word is defined, as before.
        let mut plan = planned();
        assert_eq!(retarget(&mut plan, "Add it.", &defined).len(), 1);
        assert!(names_path("see `funcy/strings.py`.", "funcy/strings.py"));
        assert!(!names_path("see old/funcy/strings.py", "funcy/strings.py"));
        assert!(!names_path("see funcy/strings.pyi", "funcy/strings.py"));
    }

    #[test]
    fn a_task_stays_where_it_names_a_definition_or_where_the_names_are_ambiguous() {
        let defined = definitions([
            ("funcy/strings.py", STRINGS),
            ("funcy/calc.py", CALC),
            ("funcy/other.py", "def cut_prefix(s):\n    return s\n"),
        ]);
        let stays = |path: &str, description: &str| {
            let mut plan = ChangePlan {
                tasks: vec![task("1", TaskKind::ModifyFile, path, description)],
            };
            retarget(&mut plan, "", &defined).is_empty()
        };
        // A new function next to one its module has.
        assert!(stays("funcy/calc.py", "Add memoize2 next to memoize."));
        // New names only: nothing to go by.
        assert!(stays("funcy/calc.py", "Add re_count(regex, s)."));
        // Defined in two modules.
        assert!(stays("funcy/calc.py", "Fix cut_prefix."));
        // A test file is the model's to choose.
        assert!(stays("tests/test_calc.py", "Test cut_suffix."));
    }
}
