//! Unasked changes put back. A small model asked to correct one function re-types its
//! neighbours too, and now and then breaks one: a correction round that made the request's
//! example pass had also rewritten `indent` of the same module, so the repository's suite
//! failed and the whole change was rolled back (code corpus, dev half). After a verification
//! that failed, what the repository's file had and the staged change lost or altered is put
//! back, one step at a time (the lost imports; the lost definitions, together; each altered
//! definition), and stays put back when the checks then fail on strictly fewer commands.
//! Sandbox runs are cheap beside a model call; this asks the model nothing. What the checks
//! need changed stays changed, so a fix or a change of behaviour is never undone by it.

use std::collections::BTreeSet;

use super::anchor::{add_import, append, defines, top_gap};
use super::{Check, CodeError, Request, Run};
use crate::symbols::edit::{insert_after_spaced, insert_before, replace_definition};
use crate::symbols::{Unit, UnitKind, split_units};
use crate::workspace::overlay::Author;

/// The most definitions tried back in one verification's trim.
const MAX_TRIED: usize = 8;

impl Run {
    /// `checks` (a verification that failed) trimmed: returns the checks of the state kept.
    pub(super) async fn trim(
        &mut self,
        request: &Request,
        mut checks: Vec<Check>,
    ) -> Result<Vec<Check>, CodeError> {
        let disk = crate::fsutil::Workspace::new(&request.repo);
        let staged: Vec<String> = (self.overlay.entries().keys())
            .filter(|p| p.ends_with(".py"))
            .cloned()
            .collect();
        let mut tried = 0;
        for path in staged {
            let Some(original) = disk.read(&path).ok().flatten() else {
                continue;
            };
            let Some(current) = self.overlay.read(&path)? else {
                continue;
            };
            // A definition the request names is what it asks about: tried only when a check
            // beside the request's own fails (the suite, the module's import).
            let (own, all) = self.score(&checks);
            let named = match own < all {
                true => BTreeSet::new(),
                false => crate::symbols::identifiers(&request.spec),
            };
            for back in put_backs(&original, &current, &named) {
                if tried == MAX_TRIED || failing(&checks).is_empty() {
                    return Ok(checks);
                }
                tried += 1;
                let Some(now) = self.overlay.read(&path)? else {
                    break;
                };
                let Some(text) = back.apply(&original, &now) else {
                    continue;
                };
                let name = back.name();
                let trial = self.trial(request, &path, text).await?;
                let better = better(&checks, &trial.checks, back.carries_behaviour());
                let (outcome, detail) = match better {
                    true => (
                        "put back",
                        format!("{path}: {name} as the repository has it"),
                    ),
                    false => ("kept", format!("{path}: {name} as the change has it")),
                };
                self.audit
                    .record("trim", None, outcome, &detail, "", None)?;
                if better {
                    checks = self.keep(trial)?;
                }
            }
        }
        Ok(checks)
    }
}

/// One thing of the repository's file the change altered or dropped, to put back.
#[derive(Debug, PartialEq, Eq)]
enum PutBack {
    /// A definition kept under its name with other text: its original text.
    Altered { name: String, code: String },
    /// The definitions the change no longer has, all at once (lost together, and needed
    /// together): a small model re-typing a module left out the two functions its own new
    /// code called (code corpus, dev half: `NameError` at import).
    Dropped(Vec<String>),
    /// The import lines the change lost (a re-typed module without `import textwrap` broke
    /// `indent`, dev half).
    Imports,
}

impl PutBack {
    /// Whether what is put back can hold what the request asked for: an altered definition
    /// can (a fix undone by it may make more old tests pass), an import or a definition the
    /// change lost cannot.
    fn carries_behaviour(&self) -> bool {
        matches!(self, PutBack::Altered { .. })
    }

    fn name(&self) -> String {
        match self {
            PutBack::Altered { name, .. } => name.clone(),
            PutBack::Dropped(names) => names.join(", "),
            PutBack::Imports => "its imports".into(),
        }
    }

    /// `now` with this put back; `None` when it cannot be.
    fn apply(&self, original: &str, now: &str) -> Option<String> {
        match self {
            PutBack::Altered { name, code } => {
                replace_definition(now, name, code).ok().map(|e| e.source)
            }
            PutBack::Dropped(names) => names.iter().try_fold(now.to_string(), |text, name| {
                restore_definition(original, &text, name)
            }),
            PutBack::Imports => restore_imports(original, now),
        }
    }
}

/// What of `original` the staged `current` lost or altered: lost imports first, then the
/// lost definitions (one trial for all), then each altered one whose name is not in `named`.
fn put_backs(original: &str, current: &str, named: &BTreeSet<String>) -> Vec<PutBack> {
    let imports = restore_imports(original, current).map(|_| PutBack::Imports);
    // Named or not: one the request asked to remove never makes fewer checks fail put back.
    let dropped = dropped_definitions(original, current);
    let dropped = (!dropped.is_empty()).then_some(PutBack::Dropped(dropped));
    let altered = altered(original, current)
        .into_iter()
        .filter(|(name, _)| !named.contains(name))
        .map(|(name, code)| PutBack::Altered { name, code });
    imports.into_iter().chain(dropped).chain(altered).collect()
}

/// The top-level definitions of `original` that `staged` no longer binds (by a definition,
/// an assignment or an import), in their order.
fn dropped_definitions(original: &str, staged: &str) -> Vec<String> {
    let bound: BTreeSet<String> = (split_units(staged).iter())
        .flat_map(|u| u.bound_names())
        .collect();
    let mut seen = BTreeSet::new();
    split_units(original)
        .iter()
        .filter_map(|u| u.def_name())
        .filter(|name| !bound.contains(*name) && seen.insert(name.to_string()))
        .map(str::to_string)
        .collect()
}

/// `staged` with `original`'s top-level definition `name` put back where it was: after the
/// nearest definition above it in `original` that `staged` still has, else before the
/// nearest one below it, else at the end. `None` when `original` does not define it.
fn restore_definition(original: &str, staged: &str, name: &str) -> Option<String> {
    let units = split_units(original);
    let at = units.iter().position(|u| u.def_name() == Some(name))?;
    let code = &units[at].text;
    fn kept<'u>(unit: &'u Unit, staged: &str) -> Option<&'u str> {
        unit.def_name().filter(|n| defines(staged, n))
    }
    if let Some(above) = units[..at].iter().rev().find_map(|u| kept(u, staged))
        && let Ok(edited) = insert_after_spaced(staged, above, code, top_gap(staged))
    {
        return Some(edited.source);
    }
    if let Some(below) = units[at + 1..].iter().find_map(|u| kept(u, staged))
        && let Ok(edited) = insert_before(staged, below, code)
    {
        return Some(edited.source);
    }
    Some(append(staged, code, top_gap(staged)))
}

/// `staged` with each import line of `original` it lost joined back to its imports, and each
/// import line it re-typed dropped; `None` when it lost none. A re-typed line binds only
/// names a lost line binds: a small model re-typing a module wrote
/// `from pkg.iserror import Error` for `from pkg.isoerror import Error`, so the whole suite
/// failed to import, and the lost line joined back beside it changed nothing (code corpus,
/// dev half). Which line was meant is left to the trial: it stays only when fewer checks fail.
fn restore_imports(original: &str, staged: &str) -> Option<String> {
    let imports = |text: &str| -> Vec<Unit> {
        (split_units(text).into_iter())
            .filter(|u| u.kind == UnitKind::Import)
            .collect()
    };
    let (had, has) = (imports(original), imports(staged));
    let missing = |u: &Unit, among: &[Unit]| !among.iter().any(|o| o.text.trim() == u.text.trim());
    let lost: Vec<&Unit> = had.iter().filter(|u| missing(u, &has)).collect();
    if lost.is_empty() {
        return None;
    }
    let lost_names: BTreeSet<String> = lost.iter().flat_map(|u| u.imported_names()).collect();
    let retyped = (has.iter())
        .filter(|u| missing(u, &had))
        .filter(|u| (u.imported_names().iter()).all(|n| lost_names.contains(n)));
    let kept = retyped.fold(staged.to_string(), |t, u| drop_lines(&t, &u.text));
    Some(lost.iter().fold(kept, |t, u| add_import(&t, &u.text)))
}

/// `text` without the whole lines `unit` spans (its first occurrence that is whole lines:
/// `import re` is not the start of `import requests`).
fn drop_lines(text: &str, unit: &str) -> String {
    let found = text.match_indices(unit).find(|(at, _)| {
        let end = at + unit.len();
        (*at == 0 || text[..*at].ends_with('\n'))
            && (end == text.len() || text[end..].starts_with('\n'))
    });
    match found {
        Some((at, _)) => {
            let end = (at + unit.len() + 1).min(text.len());
            format!("{}{}", &text[..at], &text[end..])
        }
        None => text.to_string(),
    }
}

/// A state tried: `path` written, verified, and everything put back as it was, the checks
/// kept here until [`Run::keep`] takes them.
pub(super) struct Trial {
    path: String,
    text: String,
    pub checks: Vec<Check>,
    seen: Seen,
}

/// What a verification records of the state it saw.
type Seen = (
    super::accept::Acceptance,
    super::probe::Probes,
    super::reproduce::Reproduction,
    Vec<super::accept::ExampleReport>,
);

impl Run {
    fn seen(&self) -> Seen {
        (
            self.accept.clone(),
            self.probes.clone(),
            self.reproduction.clone(),
            self.outcome.examples.clone(),
        )
    }

    /// `text` as `path`, verified; then the overlay and what the verification recorded are
    /// as they were.
    pub(super) async fn trial(
        &mut self,
        request: &Request,
        path: &str,
        text: String,
    ) -> Result<Trial, CodeError> {
        let before = self.overlay.entries().get(path).cloned();
        let seen = self.seen();
        self.overlay.write(path, text.clone(), Author::Generated)?;
        let checks = self.verify(request).await?;
        let trial = Trial {
            path: path.to_string(),
            text,
            checks,
            seen: self.seen(),
        };
        self.put_back(path, before)?;
        (
            self.accept,
            self.probes,
            self.reproduction,
            self.outcome.examples,
        ) = seen;
        Ok(trial)
    }

    /// The state of `trial` made the staged one; its checks.
    pub(super) fn keep(&mut self, trial: Trial) -> Result<Vec<Check>, CodeError> {
        self.overlay
            .write(&trial.path, trial.text, Author::Generated)?;
        (
            self.accept,
            self.probes,
            self.reproduction,
            self.outcome.examples,
        ) = trial.seen;
        Ok(trial.checks)
    }
}

/// Whether the checks of `trial` are better than `before`'s: no command fails that did not,
/// and fewer fail; or, for a put-back that carries no behaviour, the same fail and more of
/// their tests pass. A re-typed import broke a whole suite's collection, and the suite still
/// failed once it was put back, on the three tests the fix was for (code corpus, dev half):
/// counted by commands alone, the put-back that brought 274 tests back looked like nothing.
fn better(before: &[Check], trial: &[Check], carries_behaviour: bool) -> bool {
    let (was, now) = (failing(before), failing(trial));
    let passed = |checks: &[Check]| -> u32 {
        (checks.iter())
            .filter(|c| !c.passed && !c.unavailable)
            .filter_map(|c| super::failures::passed_tests(&c.output))
            .sum()
    };
    match (now.is_subset(&was), now == was) {
        (true, false) => true,
        (true, true) => !carries_behaviour && passed(trial) > passed(before),
        (false, _) => false,
    }
}

/// The commands of the checks that failed (a check that could not run is neither).
pub(super) fn failing(checks: &[Check]) -> BTreeSet<&str> {
    checks
        .iter()
        .filter(|c| !c.passed && !c.unavailable)
        .map(|c| c.command.as_str())
        .collect()
}

/// The top-level definitions of `original` that `staged` still has under the same name but
/// with other text: each name and its original text.
fn altered(original: &str, staged: &str) -> Vec<(String, String)> {
    let defined = |text: &str| -> Vec<(String, String)> {
        crate::symbols::split_units(text)
            .into_iter()
            .filter_map(|u| Some((u.def_name()?.to_string(), u.text.trim_end().to_string())))
            .collect()
    };
    let now = defined(staged);
    let mut seen = BTreeSet::new();
    defined(original)
        .into_iter()
        .filter(|(name, text)| {
            seen.insert(name.clone())
                && (now.iter().filter(|(n, _)| n == name).count() == 1)
                && now.iter().any(|(n, t)| n == name && t != text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_definitions_kept_under_their_name_with_other_text_are_altered() {
        let original = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n";
        let staged = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 20\n\n\ndef new():\n    return 4\n";
        assert_eq!(
            altered(original, staged),
            vec![("b".to_string(), "def b():\n    return 2".to_string())],
            "a kept as it was, c dropped (another rule's matter), new is new"
        );
        let back = replace_definition(staged, "b", "def b():\n    return 2").unwrap();
        assert!(
            back.source
                .contains("def b():\n    return 2\n\n\ndef new():")
        );
    }

    #[test]
    fn lost_imports_and_definitions_are_put_back_where_they_were() {
        let original = "import re\nimport textwrap\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return textwrap.dedent('x')\n\n\ndef c():\n    return 3\n";
        // Re-typed: textwrap's import and b lost, a new d that calls b added after a.
        let staged = "import re\n\n\ndef a():\n    return 1\n\n\ndef d():\n    return b()\n\n\ndef c():\n    return 3\n";
        let backs = put_backs(original, staged, &BTreeSet::new());
        assert_eq!(
            backs,
            vec![PutBack::Imports, PutBack::Dropped(vec!["b".into()])]
        );
        let mut text = staged.to_string();
        for back in &backs {
            text = back.apply(original, &text).unwrap();
        }
        assert_eq!(
            text,
            "import re\nimport textwrap\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return textwrap.dedent('x')\n\n\ndef d():\n    return b()\n\n\ndef c():\n    return 3\n"
        );
        // A lost definition the request names is tried too: kept back only when fewer checks
        // fail, which one the request asked to remove never does.
        let named = BTreeSet::from(["b".to_string()]);
        assert_eq!(put_backs(original, staged, &named), backs);
        // Nothing lost, nothing to put back; a name bound by an import is not lost.
        assert!(put_backs(original, original, &BTreeSet::new()).is_empty());
        let imported = original
            .replace("def b():\n    return textwrap.dedent('x')\n\n\n", "")
            .replace("import re\n", "import re\nfrom other import b\n");
        assert!(dropped_definitions(original, &imported).is_empty());
    }

    #[test]
    fn a_retyped_import_line_goes_when_the_lost_one_comes_back() {
        let original = "import re\nfrom pkg.isoerror import Error\nfrom pkg.tz import UTC\n\n\ndef a():\n    return re, Error, UTC\n";
        let staged = "from pkg.iserror import Error\nfrom pkg.tz import UTC\nimport math\n\n\ndef a():\n    return re, Error, UTC, math\n";
        let back = PutBack::Imports.apply(original, staged).unwrap();
        assert!(!back.contains("iserror"), "{back}");
        assert!(
            back.contains("import math\n"),
            "a new name's import stays: {back}"
        );
        for line in [
            "import re\n",
            "from pkg.isoerror import Error\n",
            "def a():",
        ] {
            assert!(back.contains(line), "{line:?} in {back}");
        }
        // A re-typed line is dropped whole, never the start of a longer one.
        let longer = "import requests\nimport re\n\n\ndef a():\n    return re\n";
        let back = PutBack::Imports
            .apply("from pkg import re\n\n\ndef a():\n    return re\n", longer)
            .unwrap();
        assert!(
            back.starts_with("import requests\nfrom pkg import re\n\n\ndef a"),
            "{back}"
        );
        // A module that lost nothing has nothing put back, whatever it added.
        assert_eq!(
            restore_imports(original, &format!("import math\n{original}")),
            None
        );
    }

    #[test]
    fn a_lost_first_definition_goes_back_above_the_next_one() {
        let original = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n";
        let staged = "import os\n\n\ndef b():\n    return 2\n";
        let back = PutBack::Dropped(vec!["a".into()])
            .apply(original, staged)
            .unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn failing_counts_failed_checks_that_ran() {
        let check = |command: &str, passed: bool, unavailable: bool| Check {
            command: command.into(),
            passed,
            unavailable,
            exit_code: None,
            output: String::new(),
        };
        let checks = [
            check("pytest", false, false),
            check("ruff", false, true),
            check("accept", true, false),
        ];
        assert_eq!(failing(&checks), BTreeSet::from(["pytest"]));
    }

    #[test]
    fn a_put_back_without_behaviour_is_better_when_more_of_a_failing_suite_passes() {
        let suite = |output: &str| Check {
            command: "pytest".into(),
            passed: false,
            unavailable: false,
            exit_code: Some(1),
            output: output.into(),
        };
        let broken = [suite("ERROR collecting tests/test_a.py\n1 error")];
        let three = [suite("FAILED tests/test_b.py::t\n3 failed, 274 passed")];
        assert!(better(&broken, &three, false), "imports put back");
        assert!(
            !better(&broken, &three, true),
            "an altered definition: commands only"
        );
        assert!(!better(&three, &broken, false));
        assert!(!better(&three, &three, false), "as many pass: not better");
        let mut passing = three.clone();
        passing[0].passed = true;
        assert!(better(&three, &passing, true), "fewer commands fail");
    }
}
