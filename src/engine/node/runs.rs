//! Running a leaf's tests in the sandbox: each candidate of a round in place in turn, a
//! failed run repeated once on identical code when it may be flaky, the tests that then pass
//! flagged, and what a failed run tells the next attempt. Every run is counted and timed in
//! the node's work ([`run_counted`]).

use std::collections::HashSet;

use crate::fsutil::FsError;
use crate::records::NodeWork;
use crate::sandbox::{SandboxError, TestRun};

use super::super::machine::{Event, TestsRan};
use super::super::testfile::{flaky_tests, test_file_is_broken};
use super::choice::{Evidence, pick};
use super::site::Site;
use super::{Leaf, NO_BODY, undefined_message};

/// What a leaf's runs remember across attempts.
#[derive(Default)]
pub(super) struct Runs {
    /// Fingerprints of the module and tests that passed ([`super::site::Site::code_state`]).
    passed_states: HashSet<[u8; 32]>,
    /// Tests that failed and then passed on identical code.
    pub(super) flaky: Vec<String>,
}

impl Runs {
    /// Whether a run that failed (`first`, on code fingerprinted `state`) is run again: when
    /// it failed for something other than an assertion (a timeout, a sandbox limit), or when
    /// the same code and tests passed before.
    fn worth_repeating(&self, first: &TestRun, state: &[u8; 32]) -> bool {
        let transient =
            first.timed_out || first.killed_by.as_deref().is_some_and(|k| k != "cancelled");
        !first.cancelled && (transient || self.passed_states.contains(state))
    }

    /// Flags the tests that failed in `first` and passed in `again`.
    fn note_flaky(&mut self, first: &TestRun, again: &TestRun) {
        for name in flaky_tests(first, again) {
            if !self.flaky.contains(&name) {
                self.flaky.push(name);
            }
        }
    }

    /// Runs the node's tests with each candidate module in place and returns the index of
    /// the one to keep (see [`pick`]) with what each run said. A warm sandbox run costs far
    /// less than a token. `modules` are the candidates with how many answers gave each.
    pub(super) async fn candidates(
        &mut self,
        site: &Site<'_>,
        work: &mut NodeWork,
        (modules, copies): (&[String], &[usize]),
        wanted: &[String],
    ) -> Result<(usize, Vec<Option<Evidence>>), FsError> {
        let ctx = site.ctx;
        let mut evidence = Vec::with_capacity(modules.len());
        for (i, module) in modules.iter().enumerate() {
            ctx.phases.report(
                &site.node.id,
                &format!("running candidate {}/{}", i + 1, modules.len()),
            );
            ctx.workspace.write_if_changed(&site.file, module)?;
            evidence.push(match self.node_tests(site, work).await {
                Ok(run) if !run.cancelled => Some(site.evidence(&run, module)),
                _ => None,
            });
        }
        let chosen = pick(&evidence, copies, wanted, site.weighing());
        tracing::debug!(node = %site.node.id, candidates = modules.len(), chosen, "candidates ran");
        Ok((chosen, evidence))
    }

    /// Runs the node's tests on what the workspace holds (see [`Runs::repeating`]) and
    /// counts a regression it catches: code that broke a test of an earlier function of the
    /// module, which passed before (such code is never kept).
    pub(super) async fn node_tests(
        &mut self,
        site: &Site<'_>,
        work: &mut NodeWork,
    ) -> Result<TestRun, SandboxError> {
        let run = self.repeating(site, work).await?;
        if !run.cancelled && site.breaks_earlier_tests(&run) {
            work.regressions_caught += 1;
        }
        Ok(run)
    }

    /// A failing run is repeated once on identical code when it may be flaky
    /// ([`Runs::worth_repeating`]); tests that pass on the repeat are flagged flaky, and the
    /// repeat is the run that counts.
    async fn repeating(
        &mut self,
        site: &Site<'_>,
        work: &mut NodeWork,
    ) -> Result<TestRun, SandboxError> {
        let first = run_counted(site, &site.test_file, work).await?;
        let state = site.code_state();
        if first.succeeded() {
            self.passed_states.insert(state);
            return Ok(first);
        }
        if !self.worth_repeating(&first, &state) {
            return Ok(first);
        }
        tracing::debug!(node = %site.node.id, "repeating a failed run on identical code");
        let again = run_counted(site, &site.test_file, work).await?;
        self.note_flaky(&first, &again);
        tracing::debug!(node = %site.node.id, flaky = ?self.flaky, "the repeat ran");
        Ok(again)
    }
}

impl Leaf<'_> {
    /// Runs the node's tests; a failed run is remembered (the best candidate so far) and
    /// kept for the next prompt.
    pub(super) async fn run_tests(&mut self, attempt: u32) -> Result<Event, FsError> {
        let site = &self.site;
        site.ctx.phases.report(&site.node.id, "running tests");
        let run = match self.runs.node_tests(site, &mut self.work).await {
            Ok(run) => run,
            Err(e) => {
                self.gave_up = Some(format!("cannot run tests: {e}"));
                return Ok(Event::RunError);
            }
        };
        if run.cancelled {
            return Ok(Event::Cancelled);
        }
        let module = site.module_text()?;
        // Read once: against the prior it runs ruff over the module.
        let undefined = site.undefined(&module);
        let event = if test_file_is_broken(&run, &site.test_file) {
            tracing::debug!(node = %site.node.id, attempt, "the test file is broken");
            Event::Ran(TestsRan::TestFileBroken)
        } else if run.succeeded() && !site.bodiless(&module) && undefined.is_empty() {
            Event::Ran(TestsRan::Passed)
        } else {
            tracing::debug!(node = %site.node.id, attempt, "tests failed: {}", run.failure_reason());
            self.rounds.remember(site, &run)?;
            self.fixing.focus = site.focus(&run);
            let output = || run.failure_reason() + "\n\n" + &run.output_of(&self.fixing.focus);
            self.failure = Some(match (run.succeeded(), undefined.is_empty()) {
                (true, true) => NO_BODY.to_string(),
                (true, false) => undefined_message(&undefined),
                (false, true) => output(),
                (false, false) => output() + "\n\n" + &undefined_message(&undefined),
            });
            Event::Ran(TestsRan::Failed {
                breaks_earlier: site.breaks_earlier_tests(&run),
                best: self.rounds.standing(),
            })
        };
        self.last_run = Some(run);
        Ok(event)
    }
}

/// Runs `path` (a test file or directory of the workspace) in the sandbox once, counted and
/// timed in `work`.
pub(super) async fn run_counted(
    site: &Site<'_>,
    path: &str,
    work: &mut NodeWork,
) -> Result<TestRun, SandboxError> {
    let ctx = site.ctx;
    let started = std::time::Instant::now();
    let run = ctx
        .runner
        .run_tests(ctx.workspace.root(), path, &ctx.cancel)
        .await;
    work.sandbox_runs += 1;
    work.sandbox_ms += started.elapsed().as_millis() as u64;
    run
}
