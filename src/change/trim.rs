//! Unasked changes put back. A small model asked to correct one function re-types its
//! neighbours too, and now and then breaks one: a correction round that made the request's
//! example pass had also rewritten `indent` of the same module, so the repository's suite
//! failed and the whole change was rolled back (code corpus, dev half). After a verification
//! that failed, each definition the repository already had and the staged change altered is
//! put back as it was, one at a time, and stays put back when the checks then fail on
//! strictly fewer commands. Sandbox runs are cheap beside a model call; this asks the model
//! nothing. What the checks need changed stays changed, so a fix or a change of behaviour is
//! never undone by it.

use std::collections::BTreeSet;

use super::{Check, CodeError, Request, Run};
use crate::symbols::edit::replace_definition;
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
            let unasked = altered(&original, &current)
                .into_iter()
                .filter(|(name, _)| !named.contains(name));
            for (name, code) in unasked {
                if tried == MAX_TRIED || failing(&checks).is_empty() {
                    return Ok(checks);
                }
                tried += 1;
                let Some(now) = self.overlay.read(&path)? else {
                    break;
                };
                let Ok(back) = replace_definition(&now, &name, &code) else {
                    continue;
                };
                let trial = self.trial(request, &path, back.source).await?;
                let better = failing(&trial.checks).is_subset(&failing(&checks))
                    && failing(&trial.checks) != failing(&checks);
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
}
