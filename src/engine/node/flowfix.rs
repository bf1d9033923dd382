//! Debugging a failing case of a subgraph's integration test in the function it was blamed
//! on (the seed's §4.5; the integration step in [`crate::engine::integration`] finds the
//! function). The failure goes through the node's own machinery:
//!
//! 1. **Diagnosis**: the same vote as a node's disputed tests ([`vote`]), the case shown as
//!    the failing test (no vote is asked when the run decides alone: pytest refused the
//!    case's use of it). Only a majority for the code (A) goes on: a third of the model's
//!    tests are wrong, and an integration case is one more model-written test. A function
//!    whose specification gives no examples is weighed as its node was (the greedy answer
//!    is the prior): no vote; the code is blamed only when it crashed in its own module
//!    with an exception the specification does not name, and otherwise the case is taken
//!    out.
//! 2. **Debugging**, up to [`ATTEMPTS`] rounds: the failure is localized as a node's fix is
//!    (the traceback, the function, its dependencies, the plan search; 20 queries a round),
//!    `--candidates` fixes are asked in one request, and each new one runs with the
//!    repository's whole test suite. Code an earlier round ran is never run again.
//! 3. **Regression**: a fix is kept only when the case passes and every test that passed
//!    before still passes; one that breaks a test is reverted and counted.
//!
//! It works in the workspace of the context it is given. The integration step gives it a
//! scratch copy of the output, so that the output changes only by a fix that is kept.

use std::collections::{BTreeSet, HashSet};

use crate::fsutil::FsError;
use crate::llm::{Role, UsageByRole};
use crate::records::{FlowDebug, NodeWork, Verdict};
use crate::rpg::NodePos;
use crate::sandbox::TestRun;
use crate::usage::Usage;

use super::super::ask::{Sampling, ask_many};
use super::super::prompt::PromptInputs;
use super::choice::Weighing;
use super::dispute::ask_votes;
use super::fixing::Fixing;
use super::rounds::normalized;
use super::runs::run_counted;
use super::site::Site;
use super::{Context, vote};

/// Fix rounds for one failing case.
pub(crate) const ATTEMPTS: u32 = 2;

/// The regression suite: every test of the repository.
const SUITE: &str = "tests";

/// A failing integration case, blamed on one function.
#[derive(Debug, Clone)]
pub(crate) struct FlowFailure {
    /// The integration test file, relative to the output.
    pub file: String,
    /// The test function.
    pub case: String,
    /// Its source.
    pub source: String,
    /// What pytest said of it.
    pub output: String,
}

/// What debugging one case came to.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowFix {
    pub record: FlowDebug,
    /// The blamed function's module with the fix that was kept: `(file, text)`.
    pub kept: Option<(String, String)>,
    /// Model tokens spent on the votes and the fixes.
    pub tokens: Usage,
}

/// Diagnoses `failure` as a failure of the function at `position` and, when the vote blames
/// the code, debugs it (see the module doc). The context's workspace ends as it began unless
/// a fix was kept.
pub(crate) async fn debug_flow_failure(
    ctx: &Context,
    position: NodePos,
    failure: &FlowFailure,
) -> Result<FlowFix, FsError> {
    let mut fix = FlowFix {
        record: FlowDebug {
            case: failure.case.clone(),
            node: Some(ctx.rpg.node(position).id.clone()),
            ..FlowDebug::default()
        },
        ..FlowFix::default()
    };
    let Some(site) = Site::new(ctx, position)? else {
        return Ok(fix);
    };
    let mut debug = CaseDebug {
        site,
        usage: UsageByRole::new(),
        work: NodeWork::default(),
        fixing: Fixing::new(),
        tried: HashSet::new(),
        failure: failure.output.clone(),
    };
    let verdict = debug.diagnose(failure, &mut fix.record).await?;
    if verdict == Some(Verdict::Implementation) && !ctx.cancel.is_cancelled() {
        fix.kept = debug.debug(failure, &mut fix.record).await?;
    }
    fix.record.localizations = std::mem::take(&mut debug.fixing.localizations);
    fix.tokens = crate::usage::total(&debug.usage);
    Ok(fix)
}

/// The debugging of one integration case in the function it was blamed on.
struct CaseDebug<'a> {
    site: Site<'a>,
    usage: UsageByRole,
    /// The sandbox runs and model waits (not recorded: the case's record says what counts).
    work: NodeWork,
    fixing: Fixing,
    /// Every module a round ran, normalised ([`normalized`]): none runs twice.
    tried: HashSet<String>,
    /// What the case said last, which the next fix answers.
    failure: String,
}

impl CaseDebug<'_> {
    /// The vote on `failure`, recorded in `record`.
    async fn diagnose(
        &mut self,
        failure: &FlowFailure,
        record: &mut FlowDebug,
    ) -> Result<Option<Verdict>, FsError> {
        let inputs = PromptInputs {
            tests: failure.source.clone(),
            ..self.site.inputs(0, &failure.output)?
        };
        let documented = vote::documented_errors(self.site.node.docstring.as_deref().unwrap_or(""));
        let weighing = self.site.weighing();
        // Without examples, a crash in the function's own module is the strong evidence a
        // model-written case gives (as in the node loop, `testfile::crashed_tests`).
        let crashed = vote::crashed_instead_of_documented_error(
            &failure.source,
            &failure.output,
            &documented,
        ) || (weighing == Weighing::Prior
            && crate::python::crashed_in(&failure.output, &self.site.file, &documented));
        let execution = vote::Execution {
            environment: vote::blames_environment(&failure.output),
            crashed,
            misused_pytest: vote::misuses_pytest(&failure.output),
            ..vote::Execution::default()
        };
        // Without examples, a value the case disputes is weak evidence against the greedy
        // answer, and the vote decides no better than chance: only the runs decide, and a
        // case they do not decide is taken out, as a disputed node ends for review.
        let votes = match (vote::decisive(&execution), weighing) {
            (Some(_), _) | (None, Weighing::Prior) => Vec::new(),
            (None, Weighing::Agreement) => {
                ask_votes(&self.site, &inputs, 0, (&mut self.usage, &mut self.work)).await
            }
        };
        let evidence = vote::evidence(&execution);
        record.votes = votes.iter().chain(&evidence).map(|v| v.letter()).collect();
        record.verdict = match weighing {
            Weighing::Agreement => vote::decide(&votes, &execution),
            Weighing::Prior => evidence,
        };
        tracing::info!(node = %self.site.node.id, case = %failure.case, votes = %record.votes, verdict = ?record.verdict, "diagnosis of an integration case");
        Ok(record.verdict)
    }

    /// Fix rounds for `failure`; the module with the fix kept, if one was.
    async fn debug(
        &mut self,
        failure: &FlowFailure,
        record: &mut FlowDebug,
    ) -> Result<Option<(String, String)>, FsError> {
        let original = self.site.module_text()?;
        let baseline = match self.run_suite().await {
            Ok(run) if !run.cancelled => run,
            _ => return Ok(None),
        };
        let passed_before = passed(&baseline);
        self.tried.insert(normalized(&original));
        for attempt in 0..ATTEMPTS {
            if self.site.ctx.cancel.is_cancelled() {
                break;
            }
            record.attempts += 1;
            for module in self.fixes(failure, attempt).await? {
                self.site
                    .ctx
                    .workspace
                    .write_if_changed(&self.site.file, &module)?;
                let run = match self.run_suite().await {
                    Ok(run) if !run.cancelled => run,
                    _ => break,
                };
                let broken = regressions(&passed_before, &run);
                if !broken.is_empty() {
                    tracing::info!(node = %self.site.node.id, ?broken, "an integration fix broke tests that passed: reverted");
                    record.regressions += 1;
                } else if case_passed(&run, &failure.file, &failure.case) {
                    self.fixing.note_corrected(&original, &module);
                    record.fixed = true;
                    return Ok(Some((self.site.file.clone(), module)));
                }
                self.failure = run.output_of(std::slice::from_ref(&failure.case));
            }
            // Every fix of the round is reverted: the next round starts from the original.
            self.site
                .ctx
                .workspace
                .write_if_changed(&self.site.file, &original)?;
        }
        Ok(None)
    }

    /// Runs the repository's whole test suite on what the workspace holds.
    async fn run_suite(&mut self) -> Result<TestRun, crate::sandbox::SandboxError> {
        let site = &self.site;
        site.ctx
            .phases
            .report(&site.node.id, "running the test suite");
        run_counted(site, SUITE, &mut self.work).await
    }

    /// The modules of one fix round's answers that no round ran before.
    async fn fixes(&mut self, failure: &FlowFailure, attempt: u32) -> Result<Vec<String>, FsError> {
        let mut inputs = PromptInputs {
            tests: failure.source.clone(),
            ..self.site.inputs(attempt, &self.failure)?
        };
        self.fixing.editable.clear();
        inputs.suspects = self.fixing.localize(&self.site, &self.failure, attempt);
        let super::super::ask::Asked {
            answers,
            prompt_tokens,
            ..
        } = ask_many(
            self.site.ctx,
            self.site.node,
            (Role::Fix, attempt),
            &inputs,
            &mut self.usage,
            (self.site.ctx.settings.candidates, Sampling::ByAttempt),
            None,
        )
        .await;
        self.fixing.note_prompt_tokens(prompt_tokens);
        let (modules, _) =
            self.site
                .distinct_modules(answers, &inputs.current, &self.fixing.editable);
        let fresh: Vec<String> = modules
            .into_iter()
            .map(|(m, _)| m)
            .filter(|m| self.tried.insert(normalized(m)))
            .collect();
        Ok(fresh)
    }
}

/// The tests a run passed, by their full names (`module::function[params]`).
fn passed(run: &TestRun) -> BTreeSet<String> {
    run.tests
        .iter()
        .filter(|t| t.outcome == "passed")
        .map(|t| t.name.clone())
        .collect()
}

/// The tests of `before` that `run` did not pass (failed, erred, or never ran because a
/// module no longer imports).
fn regressions(before: &BTreeSet<String>, run: &TestRun) -> Vec<String> {
    let now = passed(run);
    before.difference(&now).cloned().collect()
}

/// Whether `case` of the test file `file` ran in `run` and passed, every parametrization.
fn case_passed(run: &TestRun, file: &str, case: &str) -> bool {
    let module = file.trim_end_matches(".py").replace('/', ".");
    let ours = |name: &str| {
        let Some(function) = name
            .strip_prefix(module.as_str())
            .and_then(|rest| rest.strip_prefix("::"))
        else {
            return false;
        };
        function == case
            || function
                .strip_prefix(case)
                .is_some_and(|p| p.starts_with('['))
    };
    let outcomes: Vec<&str> = run
        .tests
        .iter()
        .filter(|t| ours(&t.name))
        .map(|t| t.outcome.as_str())
        .collect();
    !outcomes.is_empty() && outcomes.iter().all(|o| *o == "passed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::TestOutcome;

    fn run(tests: &[(&str, &str)]) -> TestRun {
        TestRun {
            tests: tests
                .iter()
                .map(|(name, outcome)| TestOutcome {
                    name: name.to_string(),
                    outcome: outcome.to_string(),
                })
                .collect(),
            ..TestRun::cancelled("test")
        }
    }

    #[test]
    fn a_case_passes_only_when_every_parametrization_of_it_in_its_file_passes() {
        let file = "tests/integration/test_numbers_flow.py";
        let module = "tests.integration.test_numbers_flow";
        let passing = run(&[
            (&format!("{module}::test_flow[1]"), "passed"),
            (&format!("{module}::test_flow[2]"), "passed"),
            (&format!("{module}::test_flow_more"), "failed"),
            ("tests.test_stats::test_flow", "failed"),
        ]);
        assert!(case_passed(&passing, file, "test_flow"));
        assert!(!case_passed(&passing, file, "test_flow_more"));
        let half = run(&[
            (&format!("{module}::test_flow[1]"), "passed"),
            (&format!("{module}::test_flow[2]"), "failed"),
        ]);
        assert!(!case_passed(&half, file, "test_flow"));
        // A case that did not run did not pass.
        assert!(!case_passed(&run(&[]), file, "test_flow"));
    }

    #[test]
    fn a_regression_is_a_test_that_passed_before_and_does_not_now() {
        let before = passed(&run(&[
            ("tests.test_a::test_one", "passed"),
            ("tests.test_a::test_two", "passed"),
            ("tests.test_b::test_three", "failed"),
        ]));
        let now = run(&[
            ("tests.test_a::test_one", "passed"),
            ("tests.test_b::test_three", "passed"),
        ]);
        // test_two no longer ran (its module stopped importing): that is a regression too.
        assert_eq!(regressions(&before, &now), vec!["tests.test_a::test_two"]);
        let same = run(&[
            ("tests.test_a::test_one", "passed"),
            ("tests.test_a::test_two", "passed"),
        ]);
        assert!(regressions(&before, &same).is_empty());
    }
}
