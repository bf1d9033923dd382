//! Steps 6 and 7 of a change ([`super`]): verify the staged change, and on a failure let
//! the model correct the file at fault, within `--max-corrections` rounds.
//!
//! Each round asks for up to [`CANDIDATES`] answers, decoded together over one reading of
//! the prompt (as many as the context holds). Each usable one is verified in the scratch copy
//! and the best kept: fewest of the request's own checks failing, then fewest in all; when
//! every one is worse than the staged change, the change stays as it was and the round is
//! spent. A correction whose answers cannot be used is asked again with the reason (the check
//! is not run again on a change that did not change), in the same rounds; when they are
//! spent the run rolls back and says the last reason.

use super::answer::apply_answer;
use super::fresh::{Fresh, fresh};
use super::plan::{ChangePlan, TaskKind};
use super::prompt::{self, Correction};
use super::staging::Unusable;
use super::{
    Check, CodeError, Request, Run, Status, budget, fault, list_files, profile_commands, run_check,
    scratch_copy,
};
use crate::fsutil::Workspace;
use crate::llm::{LlmRequest, Usage};

/// Answers asked of the model in one correction round, decoded together: a 1.5B model gave
/// back the code that had just failed in two rounds of three, and one of several samples
/// differs where one alone does not. Each usable one is verified; the best is kept.
const CANDIDATES: u32 = 3;

/// What one correction round is about: `retry` is why the previous answer of this round's
/// failure could not be used.
struct CorrectAsk<'a> {
    spec: &'a str,
    plan: &'a ChangePlan,
    failed: &'a Check,
    round: u32,
    retry: Option<&'a Unusable>,
}

impl Run {
    /// Steps 6 and 7: verify; on failure correct the file at fault and verify again.
    pub(super) async fn verify_and_correct(
        &mut self,
        request: &Request,
        spec: &str,
        plan: &ChangePlan,
    ) -> Result<Option<(Status, String)>, CodeError> {
        // Answers asked again while staging spent rounds of the same budget.
        let mut round = self.outcome.corrections;
        let mut failing: Option<Check> = None;
        let mut unusable: Option<Unusable> = None;
        loop {
            if request.cancel.is_cancelled() {
                return Ok(Some((
                    Status::Interrupted,
                    "interrupted while verifying".into(),
                )));
            }
            if unusable.is_none() || failing.is_none() {
                let mut checks = self.verify(request).await?;
                if checks.iter().any(|c| !c.passed && !c.unavailable) {
                    checks = self.trim(request, checks).await?;
                }
                self.outcome.checks = checks.clone();
                failing = checks.iter().find(|c| !c.passed && !c.unavailable).cloned();
            }
            if let Some(why) = self.probes.unverified.clone() {
                return Ok(Some((Status::RolledBack, why)));
            }
            let Some(failed) = failing.clone() else {
                return Ok(None);
            };
            self.remember_failed()?;
            if round >= request.options.max_corrections {
                let why = match (&unusable, self.accept.is_check(&failed)) {
                    (Some(why), true) => format!(
                        "{}; the last correction could not be used: {why}",
                        self.accept.failure_reason(round)
                    ),
                    (Some(why), false) => format!(
                        "`{}` fails, and the last correction (round {round}) could not be used: \
                         {why}",
                        failed.command
                    ),
                    (None, true) => self.accept.failure_reason(round),
                    (None, false) => format!(
                        "`{}` still fails after {round} correction round(s)",
                        failed.command
                    ),
                };
                return Ok(Some((Status::RolledBack, why)));
            }
            let ask = CorrectAsk {
                spec,
                plan,
                failed: &failed,
                round,
                retry: unusable.as_ref(),
            };
            unusable = self.correct(request, &ask).await?;
            round += 1;
            self.outcome.corrections = round;
        }
    }

    /// The profile's checks on a scratch copy with the overlay applied.
    pub(super) async fn verify(&mut self, request: &Request) -> Result<Vec<Check>, CodeError> {
        let mut checks = Vec::new();
        // Before the copy: it may add names to a staged module's `__all__`.
        if let Some(check) = self.check_exports(request)? {
            self.audit.record(
                "verify",
                None,
                "failed",
                &check.command,
                &check.output,
                None,
            )?;
            checks.push(check);
        }
        let scratch = scratch_copy(&request.repo, &self.overlay)?;
        let commands = crate::detect::detect(scratch.path())?;
        let unparsable = self.overlay.unparsable();
        if !unparsable.is_empty() {
            let output = unparsable
                .iter()
                .map(|(p, why)| format!("{p}: {why}"))
                .collect::<Vec<_>>()
                .join("\n");
            checks.push(Check {
                command: "parse".into(),
                passed: false,
                unavailable: false,
                exit_code: None,
                output,
            });
        }
        let has_python = list_files(scratch.path())?
            .iter()
            .any(|f| f.ends_with(".py"));
        for command in profile_commands(request.options.profile, &commands, has_python) {
            let check = run_check(request, scratch.path(), &command).await?;
            let outcome = if check.unavailable {
                "unavailable"
            } else if check.passed {
                "passed"
            } else {
                "failed"
            };
            self.audit
                .record("verify", None, outcome, &command, &check.output, None)?;
            checks.push(check);
        }
        if has_python && let Some(check) = self.check_examples(request, scratch.path()).await? {
            checks.push(check);
        }
        let examples = match checks.iter().any(|c| self.accept.is_check(c) && !c.passed) {
            true => super::probe::ExampleOutcome::Failed,
            false => super::probe::ExampleOutcome::Passed,
        };
        if has_python
            && let Some(check) = self.check_probes(request, scratch.path(), examples).await?
        {
            checks.push(check);
        }
        if has_python && let Some(check) = self.check_reproduction(request, scratch.path()).await? {
            checks.push(check);
        }
        // The last word, once nothing else stands against the change.
        let passing = checks.iter().all(|c| c.passed || c.unavailable);
        if has_python
            && passing
            && self.probes.unverified.is_none()
            && let Some(why) = self.check_rivals(request, scratch.path()).await?
        {
            self.probes.unverified = Some(why);
        }
        Ok(checks)
    }

    /// Every staged file's text as it is now, which a verification has just seen fail.
    fn remember_failed(&mut self) -> Result<(), CodeError> {
        let paths: Vec<String> = self.overlay.entries().keys().cloned().collect();
        for path in paths {
            if let Some(text) = self.overlay.read(&path)? {
                self.failed_texts.insert((path, text));
            }
        }
        Ok(())
    }

    /// `n` answers to one request, decoded together by the embedded model; their tokens are
    /// counted. A provider error in any ends the run (nothing has been written).
    pub(super) async fn ask_many(
        &mut self,
        request: &Request,
        asked: &LlmRequest,
        n: u32,
    ) -> Result<Vec<String>, CodeError> {
        let (n, max_tokens) = budget::candidates(asked, n);
        if n == 1 {
            return Ok(vec![self.ask(request, asked).await?]);
        }
        let shared = LlmRequest {
            max_tokens,
            ..asked.clone()
        };
        let mut texts = Vec::new();
        let mut usage = Usage::default();
        for response in request.llm.complete_many(&shared, n).await {
            match response {
                Ok(response) => {
                    usage.add(response.usage);
                    texts.push(response.text);
                }
                // The estimate was low for this prompt: one answer, as every prompt is built.
                Err(_) if texts.is_empty() => {
                    return Ok(vec![self.ask(request, asked).await?]);
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.usage.add(usage);
        self.last_usage = Some(usage);
        Ok(texts)
    }

    /// An answer of a correction as the new text of `path`, or why it cannot be used.
    fn usable(
        &self,
        request: &Request,
        ask: &CorrectAsk<'_>,
        path: &str,
        current: &str,
        answer: &str,
        form: super::answer::Form,
    ) -> Result<Result<String, Unusable>, CodeError> {
        let answer = self.accept.scrub(answer);
        Ok(match apply_answer(&answer, path, current, form) {
            Ok(text)
                if self
                    .failed_texts
                    .contains(&(path.to_string(), text.clone())) =>
            {
                Err(Unusable::Reverted {
                    path: path.to_string(),
                    command: ask.failed.command.clone(),
                })
            }
            Ok(text) => match super::staging::dropped(request, path, &text, ask.spec) {
                Some(why) => Err(Unusable::Dropped(why)),
                None => Ok(text),
            },
            Err(why) => Err(Unusable::Apply(why)),
        })
    }

    /// The candidate whose checks score best ([`Run::score`]; the first of equals, and one
    /// that passes them all ends the search), unless every one scores worse than the staged
    /// change: then why, and the change stays as it is. `Err(None)`: no candidate.
    async fn best_of(
        &mut self,
        request: &Request,
        path: &str,
        candidates: Vec<String>,
    ) -> Result<Result<String, Option<Unusable>>, CodeError> {
        // One that does not parse is told apart without a run (write_checked says why).
        let (parsing, broken): (Vec<String>, Vec<String>) = candidates
            .into_iter()
            .partition(|t| !path.ends_with(".py") || crate::symbols::check::parses(t));
        if parsing.len() < 2 {
            return Ok(parsing.into_iter().chain(broken).next().ok_or(None));
        }
        let staged = self.score(&self.outcome.checks);
        let mut best: Option<((usize, usize), String)> = None;
        let count = parsing.len();
        for (i, text) in parsing.into_iter().enumerate() {
            let trial = self.trial(request, path, text.clone()).await?;
            let score = self.score(&trial.checks);
            let detail = format!(
                "candidate {} of {count}: {} of the request's checks and {} in all fail",
                i + 1,
                score.0,
                score.1
            );
            self.audit
                .record("correct", None, "tried", &detail, "", None)?;
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, text));
            }
            if score == (0, 0) {
                break;
            }
        }
        Ok(match best {
            Some((score, text)) if score <= staged => Ok(text),
            Some(_) => Err(Some(Unusable::Worse {
                path: path.to_string(),
            })),
            None => Err(None),
        })
    }

    /// A verification's failures, the request's own checks first (its examples, the
    /// reproduction, the calls of a new function: what the change must do), then all: a
    /// candidate that does what was asked and breaks a test elsewhere is nearer than one that
    /// does not, since [`Run::trim`] may put back what it broke.
    pub(super) fn score(&self, checks: &[Check]) -> (usize, usize) {
        let failed: Vec<&Check> = (checks.iter())
            .filter(|c| !c.passed && !c.unavailable)
            .collect();
        let own = (failed.iter())
            .filter(|c| self.checks_the_request(c) || c.command.contains(super::probe::FILE))
            .count();
        (own, failed.len())
    }

    /// A check written from the request itself: one of its examples, or the reproduction of
    /// the bug it tells.
    fn checks_the_request(&self, check: &Check) -> bool {
        self.accept.is_check(check) || self.reproduction.is_check(check)
    }

    /// The test file the plan updates that a failing repository test is in, once the
    /// request's own checks (its examples, the reproduction) all pass: that test expects what
    /// the request changed, so it is the test's to change. Otherwise a repository test that
    /// fails blames the code the change wrote ([`fault::file_at_fault`]), and a correction
    /// could only undo what was asked (code corpus, dev half: a change of behaviour whose
    /// tests still expected the old one).
    fn planned_test_at_fault(&self, failed: &Check, plan: &ChangePlan) -> Option<String> {
        let own: Vec<&Check> = (self.outcome.checks.iter())
            .filter(|c| self.checks_the_request(c))
            .collect();
        if own.is_empty() || own.iter().any(|c| !c.passed) {
            return None;
        }
        let planned: Vec<String> = (plan.tasks.iter())
            .filter(|t| t.kind == TaskKind::ModifyFile)
            .filter_map(|t| t.path.clone())
            .filter(|p| fault::is_test_file(p))
            .collect();
        fault::mentioned_last(&failed.output, &planned)
    }

    /// One correction round: the file the failure points at, changed by the model.
    /// `Some(why)` when the answer could not be used.
    async fn correct(
        &mut self,
        request: &Request,
        ask: &CorrectAsk<'_>,
    ) -> Result<Option<Unusable>, CodeError> {
        let failed = ask.failed;
        let changed: Vec<String> = self.overlay.entries().keys().cloned().collect();
        let mut files = self.files.clone();
        files.extend(changed.iter().cloned());
        // An example that fails blames the file its function is (or should be) in.
        let blamed = if self.accept.is_check(failed) {
            self.accept.blame()
        } else if self.reproduction.is_check(failed) {
            self.reproduction.blame()
        } else {
            self.planned_test_at_fault(failed, ask.plan)
        };
        let Some(path) = blamed.or_else(|| fault::file_at_fault(&failed.output, &changed, &files))
        else {
            self.audit.record(
                "correct",
                None,
                "no file to blame",
                &failed.command,
                "",
                None,
            )?;
            return Ok(None);
        };
        let current = self.overlay.read(&path)?.unwrap_or_default();
        let original = Workspace::new(&request.repo).read(&path).ok().flatten();
        let fresh = self.fresh_start(ask, &path, original.as_deref(), &current);
        let retry = ask.retry.map(|why| match &fresh {
            Some(fresh) => format!(
                "{why}. `{}` is taken out of the file below: write it again, another way, from \
                 the change and the failure",
                fresh.name
            ),
            None => why.to_string(),
        });
        // The answers apply to the file as the prompt shows it.
        let base = fresh.as_ref().map_or(current.as_str(), |f| f.base.as_str());
        let added = added_start(fresh.as_ref(), &failed.output, &path, &current);
        let context = self.others(&changed, &path)?;
        let original = original.unwrap_or_default();
        let unused = super::built_on::unused_note(ask.spec, &original, &current);
        let (asked, form) = prompt::correct_request(&Correction {
            spec: ask.spec,
            plan: ask.plan,
            failure: prompt::FailedCheck {
                command: &failed.command,
                output: &failed.output,
            },
            path: &path,
            current: base,
            context: &context,
            retry: retry.as_deref(),
            round: ask.round,
            added: added.as_ref(),
            extent: ask
                .retry
                .map_or(prompt::Extent::AsFits, Unusable::next_extent),
            unused: &unused,
        })?;
        let answers = self.ask_many(request, &asked, CANDIDATES).await?;
        let mut usable = Vec::new();
        let mut reasons = Vec::new();
        for answer in &answers {
            match self.usable(request, ask, &path, base, answer, form)? {
                Ok(text) if !usable.contains(&text) => usable.push(text),
                Ok(_) => {}
                Err(why) => reasons.push(why),
            }
        }
        let result = match self.best_of(request, &path, usable).await? {
            Ok(text) => self.write_checked(&path, text)?,
            Err(worse) => Err(worse
                .or(reasons.into_iter().next())
                .unwrap_or(Unusable::Unchanged { path: path.clone() })),
        };
        let outcome = if result.is_ok() {
            "applied"
        } else {
            "unusable"
        };
        let why = result.err();
        let detail = match &fresh {
            Some(fresh) => format!("round {}: {path}, `{}` afresh", ask.round + 1, fresh.name),
            None => format!("round {}: {path}", ask.round + 1),
        };
        self.audit.record(
            "correct",
            None,
            outcome,
            &detail,
            &why.as_ref().map(Unusable::to_string).unwrap_or_default(),
            self.last_usage.take(),
        )?;
        Ok(why)
    }

    /// A function the change added, to be written again without its code in view
    /// ([`super::fresh`]): after a round whose answers all gave the failed file back, when
    /// the failure names one in a file of code.
    fn fresh_start(
        &self,
        ask: &CorrectAsk<'_>,
        path: &str,
        original: Option<&str>,
        current: &str,
    ) -> Option<Fresh> {
        if !matches!(ask.retry, Some(Unusable::Reverted { .. }))
            || !path.ends_with(".py")
            || fault::is_test_file(path)
        {
            return None;
        }
        fresh(original, current, &ask.failed.output)
    }

    /// The staged files of `changed` other than `path`, with their text: shown beside it.
    fn others(&self, changed: &[String], path: &str) -> Result<Vec<(String, String)>, CodeError> {
        let mut context = Vec::new();
        for other in changed.iter().filter(|p| *p != path) {
            if let Some(text) = self.overlay.read(other)? {
                context.push((other.clone(), text));
            }
        }
        Ok(context)
    }
}

/// Where a correction of `path` begins, when it adds a definition: the function a fresh start
/// took out, else, in a module of the repository's code, the name a check could not import
/// from it ([`super::start::for_missing`]).
fn added_start(
    fresh: Option<&Fresh>,
    output: &str,
    path: &str,
    current: &str,
) -> Option<super::start::Start> {
    match fresh {
        Some(fresh) => Some(fresh.start.clone()),
        None if path.ends_with(".py") && !fault::is_test_file(path) => {
            super::start::for_missing(output, path, current)
        }
        None => None,
    }
}
