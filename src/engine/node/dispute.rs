//! A leaf's disputes: code that passes the gates while model-written tests fail against it.
//! The runs decide when they can ([`vote::decisive`]); otherwise the model votes on whether
//! the code (A), the tests (B) or the environment (C) is wrong, and the machine carries out
//! the verdict: one fix of the kept code, the disputed tests dropped, or the node skipped.

use crate::fsutil::FsError;
use crate::llm::{Role, UsageByRole};
use crate::records::{Diagnosis, NodeWork, Verdict};
use crate::rpg::Node;
use crate::sandbox::TestRun;

use super::super::ask::ask_vote;
use super::super::machine::Event;
use super::super::prompt::PromptInputs;
use super::super::testfile::{failing_functions, only_tests, test_function, without_tests};
use super::super::{Context, examples, vote};
use super::Leaf;
use super::site::Site;

impl Leaf<'_> {
    /// Asks for the votes on the kept candidate's disputed tests (see [`super::super::vote`]).
    pub(super) async fn diagnose(&mut self, attempt: u32) -> Result<Event, FsError> {
        let Some(best) = self.rounds.best.as_ref() else {
            return Ok(Event::Voted(None));
        };
        let tests = self.site.test_text()?;
        let inputs = PromptInputs {
            current: best.text.clone(),
            tests: only_tests(&tests, &best.disputed),
            failure: best.disputed_output(),
            ..self.inputs(attempt)?
        };
        let execution = self.rounds.execution(&self.site, best);
        let disputed = best.disputed_tests.clone();
        // Votes are asked only when the runs do not decide alone.
        let votes = match vote::decisive(&execution) {
            Some(_) => Vec::new(),
            None => {
                ask_votes(
                    &self.site,
                    &inputs,
                    attempt,
                    (&mut self.usage, &mut self.work),
                )
                .await
            }
        };
        let diagnosis = judged(&self.site, votes, &execution, disputed);
        let outcome = diagnosis.outcome;
        if self.site.ctx.cancel.is_cancelled() {
            return Ok(Event::Cancelled);
        }
        self.diagnosis = Some(diagnosis);
        Ok(Event::Voted(outcome))
    }

    /// The vote blamed the implementation: one fix of the kept code, answering the disputed
    /// tests ([`super::fixing::Fixing::aim_at`]).
    pub(super) fn fix_best(&mut self) -> Result<(), FsError> {
        if let Some(best) = &self.rounds.best {
            self.failure = Some(self.fixing.aim_at(&self.site, best)?);
        }
        Ok(())
    }

    /// The fix changed nothing: the model holds the code right, so the failing generated
    /// tests are dropped when the plan's examples pass (see [`drop_disputed_tests`]).
    pub(super) async fn drop_disputed(&mut self) -> Result<Event, FsError> {
        let Some(run) = &self.last_run else {
            return Ok(Event::Dropped { passed: false });
        };
        let site = &self.site;
        let dropped = drop_disputed_tests(site.ctx, site.node, &site.test_file, run).await?;
        let passed = dropped.is_some();
        if let Some(run) = dropped {
            self.last_run = Some(run);
        }
        Ok(Event::Dropped { passed })
    }

    /// A test fault, never sent to an implementation fix: the test file goes back to what it
    /// was before the node, and new tests are written for the same code.
    pub(super) fn discard_tests(&mut self) -> Result<(), FsError> {
        self.site.restore_tests()?;
        self.failure = None;
        Ok(())
    }
}

/// What the votes and the runs (`execution`) say of the `disputed` tests, as the node records
/// it.
fn judged(
    site: &Site,
    votes: Vec<Verdict>,
    execution: &vote::Execution,
    disputed: Vec<crate::records::DisputedTest>,
) -> Diagnosis {
    let evidence = vote::evidence(execution);
    let outcome = vote::decide(&votes, execution);
    let letters: String = votes.iter().chain(&evidence).map(|v| v.letter()).collect();
    tracing::info!(node = %site.node.id, votes = %letters, outcome = ?outcome, "diagnosis of {} disputed test(s)", disputed.len());
    Diagnosis {
        votes,
        evidence,
        outcome,
        disputed,
    }
}

/// The model's votes on the failing tests `inputs` show (see [`vote`]); their tokens go to
/// the node's usage and the wait to its work (`spent`).
pub(super) async fn ask_votes(
    site: &Site<'_>,
    inputs: &PromptInputs,
    attempt: u32,
    (usage, work): (&mut UsageByRole, &mut NodeWork),
) -> Vec<Verdict> {
    let (ctx, node) = (site.ctx, site.node);
    let started = std::time::Instant::now();
    let mut votes = Vec::new();
    for i in 0..vote::VOTERS {
        if ctx.cancel.is_cancelled() {
            break;
        }
        let inputs = PromptInputs {
            options: vote::options(i),
            ..inputs.clone()
        };
        let answer = ask_vote(ctx, node, attempt, &inputs, i, usage).await;
        votes.extend(answer.ok().and_then(|a| vote::parse(&a, i)));
    }
    work.waited_for_model(Role::Diagnose, started);
    votes
}

/// When the model keeps the code as it is, the plan's own examples pass, and only
/// model-written tests fail, those tests are judged wrong: they are removed and the rest must
/// pass. Returns the passing run, or `None` when the evidence is not there.
async fn drop_disputed_tests(
    ctx: &Context,
    node: &Node,
    test_file: &str,
    run: &TestRun,
) -> Result<Option<TestRun>, FsError> {
    let examples_test = examples::test_name(node);
    let outcome_of = |name: &str| {
        run.tests
            .iter()
            .find(|t| test_function(&t.name) == name)
            .map(|t| t.outcome.as_str())
    };
    if outcome_of(&examples_test) != Some("passed") {
        return Ok(None);
    }
    let disputed = failing_functions(run);
    if disputed.is_empty() {
        return Ok(None);
    }
    let Some(current) = ctx.workspace.read(test_file)? else {
        return Ok(None);
    };
    let kept = without_tests(&current, &disputed);
    ctx.workspace.write_if_changed(test_file, &kept)?;
    let rerun = match ctx
        .runner
        .run_tests(ctx.workspace.root(), test_file, &ctx.cancel)
        .await
    {
        Ok(r) if r.succeeded() => r,
        _ => {
            ctx.workspace.write_if_changed(test_file, &current)?;
            return Ok(None);
        }
    };
    tracing::info!(node = %node.id, "dropped {} generated test(s) that contradicted passing spec examples: {}", disputed.len(), disputed.join(", "));
    Ok(Some(rerun))
}
