//! Running a leaf's tests in the sandbox: a failed run repeated once on identical code when
//! it may be flaky, the tests that then pass flagged, and what a failed run tells the next
//! attempt.

use std::collections::HashSet;

use crate::fsutil::FsError;
use crate::sandbox::{SandboxError, TestRun};

use super::super::machine::{Event, TestsRan};
use super::super::testfile::{flaky_tests, test_file_is_broken};
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
}

impl Leaf<'_> {
    /// Runs the node's tests; a failed run is remembered (the best candidate so far) and
    /// kept for the next prompt.
    pub(super) async fn run_tests(&mut self, attempt: u32) -> Result<Event, FsError> {
        let site = &self.site;
        site.ctx.phases.report(&site.node.id, "running tests");
        let run = match self.run_node_tests().await {
            Ok(run) => run,
            Err(e) => {
                self.ending = Some(format!("cannot run tests: {e}"));
                return Ok(Event::RunError);
            }
        };
        if run.cancelled {
            return Ok(Event::Cancelled);
        }
        let site = &self.site;
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

    /// Runs the node's tests on what the workspace holds (see [`Leaf::run_repeating`]) and
    /// counts a regression it catches: code that broke a test of an earlier function of the
    /// module, which passed before (such code is never kept).
    pub(super) async fn run_node_tests(&mut self) -> Result<TestRun, SandboxError> {
        let run = self.run_repeating().await?;
        if !run.cancelled && self.site.breaks_earlier_tests(&run) {
            self.work.regressions_caught += 1;
        }
        Ok(run)
    }

    /// A failing run is repeated once on identical code when it may be flaky
    /// ([`Runs::worth_repeating`]); tests that pass on the repeat are flagged flaky, and the
    /// repeat is the run that counts.
    async fn run_repeating(&mut self) -> Result<TestRun, SandboxError> {
        let first = self.run_once().await?;
        let state = self.site.code_state();
        if first.succeeded() {
            self.runs.passed_states.insert(state);
            return Ok(first);
        }
        if !self.runs.worth_repeating(&first, &state) {
            return Ok(first);
        }
        tracing::debug!(node = %self.site.node.id, "repeating a failed run on identical code");
        let again = self.run_once().await?;
        self.runs.note_flaky(&first, &again);
        tracing::debug!(node = %self.site.node.id, flaky = ?self.runs.flaky, "the repeat ran");
        Ok(again)
    }

    /// Runs the node's test file in the sandbox once, counted and timed.
    pub(super) async fn run_once(&mut self) -> Result<TestRun, SandboxError> {
        let ctx = self.site.ctx;
        let started = std::time::Instant::now();
        let run = ctx
            .runner
            .run_tests(ctx.workspace.root(), &self.site.test_file, &ctx.cancel)
            .await;
        self.work.sandbox_runs += 1;
        self.work.sandbox_ms += started.elapsed().as_millis() as u64;
        run
    }
}
