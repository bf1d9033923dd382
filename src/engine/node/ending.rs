//! How a leaf ends: the machine's outcome turned into the node's result, with what its
//! module keeps when it did not pass (a gated candidate for review, else its best candidate or
//! a stub, so the module stays importable).
//!
//! An [`Ending`] takes from the leaf what only the ending reads (the best candidate, the last
//! run, the last failure, the tokens spent), so a leaf cannot go on using what its result
//! already holds.

use crate::fsutil::FsError;
use crate::llm::UsageByRole;
use crate::records::{NodeStatus, TestCounts};
use crate::sandbox::TestRun;

use super::super::machine::{Failure, LoopEnd};
use super::choice::{Candidate, Lineage};
use super::site::Site;
use super::{NodeResult, counts_of};

/// What a leaf's attempts leave for its result.
pub(super) struct Ending<'l, 'a> {
    pub(super) site: &'l Site<'a>,
    /// Where each module came from, to say how the kept one departs from the greedy answer.
    pub(super) lineage: &'l Lineage,
    /// The best implementation that ran ([`super::rounds::Rounds::best`]).
    pub(super) best: Option<Candidate>,
    /// The last run of the node's tests.
    pub(super) last_run: Option<TestRun>,
    /// What went wrong in the last attempt.
    pub(super) failure: Option<String>,
    /// Why the provider or the sandbox gave up, when one did.
    pub(super) gave_up: Option<String>,
    /// The tokens the node spent, which its result carries.
    pub(super) usage: UsageByRole,
}

impl Ending<'_, '_> {
    /// The node's result for the machine's outcome after `retries` retries, with how the
    /// module it leaves departs from the greedy answer ([`Lineage::departure`]).
    pub(super) fn finish(self, outcome: LoopEnd, retries: u32) -> Result<NodeResult, FsError> {
        let (site, lineage) = (self.site, self.lineage);
        let result = self.result(outcome, retries)?;
        if result.status == NodeStatus::InProgress {
            return Ok(result);
        }
        let kept = match &result.keep {
            Some(kept) => kept.clone(),
            None => site.module_text()?,
        };
        Ok(NodeResult {
            departure: lineage.departure(&kept),
            ..result
        })
    }

    /// The node's result for the machine's outcome after `retries` retries.
    fn result(mut self, outcome: LoopEnd, retries: u32) -> Result<NodeResult, FsError> {
        match outcome {
            LoopEnd::Passed => {
                let usage = std::mem::take(&mut self.usage);
                Ok(match &self.last_run {
                    Some(run) => NodeResult::passed(run, retries, usage),
                    None => NodeResult::new(NodeStatus::Passed),
                })
            }
            LoopEnd::PassedWithoutDisputed => Ok(self.without_disputed(retries)),
            LoopEnd::Untested => self.untested(retries),
            LoopEnd::SkippedEnvironment => Ok(self.skipped_for_environment(retries)),
            // Both keep a gated candidate for review, else the node failed.
            LoopEnd::NeedsReview | LoopEnd::Failed(Failure::Exhausted) => {
                self.exhausted(retries + 1)
            }
            LoopEnd::Failed(Failure::Provider | Failure::CannotRun) => {
                let reason = self.gave_up.take().unwrap_or_default();
                self.end(NodeResult::failed(reason))
            }
            LoopEnd::Interrupted => self.end(NodeResult::new(NodeStatus::InProgress)),
        }
    }

    /// What the plan's tests are, in a reason for review.
    fn gates(&self) -> &'static str {
        match self.site.has_examples() {
            true => "the specification's examples and the module's earlier tests",
            false => "the module's earlier tests (the plan gives no examples)",
        }
    }

    /// Code that passed tests none of which the model wrote: kept, with those tests, for
    /// review; its dependents build on it.
    fn untested(&mut self, retries: u32) -> Result<NodeResult, FsError> {
        let ws = &self.site.ctx.workspace;
        let reason = format!(
            "the model wrote no usable tests ({} answers); the code passes {}",
            super::super::machine::TEST_ANSWERS,
            match self.site.has_examples() {
                true => "the specification's examples and the module's earlier tests",
                false =>
                    "a test that it is defined and the module's earlier tests (the plan gives no examples)",
            }
        );
        tracing::info!(node = %self.site.node.id, "needs review: {reason}");
        Ok(NodeResult {
            status: NodeStatus::NeedsReview,
            tests: self.last_run.as_ref().map(counts_of),
            retries,
            failure_reason: Some(reason),
            usage: std::mem::take(&mut self.usage),
            keep: ws.read(&self.site.file)?,
            keep_tests: ws.read(&self.site.test_file)?,
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
    }

    /// The vote blamed the tests: the kept candidate passes without them.
    fn without_disputed(&mut self, retries: u32) -> NodeResult {
        let Some(best) = self.best.take() else {
            return NodeResult::new(NodeStatus::Passed);
        };
        NodeResult {
            tests: Some(TestCounts {
                passed: best.passed,
                failed: 0,
            }),
            retries,
            usage: std::mem::take(&mut self.usage),
            keep: Some(best.text),
            keep_tests: Some(best.undisputed_tests),
            ..NodeResult::new(NodeStatus::Passed)
        }
    }

    /// The vote blamed the environment: the node is skipped, its module kept importable for
    /// the rest of the file.
    fn skipped_for_environment(&mut self, retries: u32) -> NodeResult {
        let best = self.best.take();
        let failure = best.as_ref().map(Candidate::disputed_output);
        NodeResult {
            failure_reason: Some(format!(
                "environment (diagnosis by vote): {}",
                failure
                    .as_deref()
                    .and_then(|f| f.lines().last())
                    .unwrap_or("")
                    .trim()
            )),
            retries,
            usage: std::mem::take(&mut self.usage),
            keep: best.map(|b| b.text),
            ..NodeResult::new(NodeStatus::Skipped)
        }
    }

    /// Ends the node with its gated candidate kept: `needs_review`, or `None` without one.
    fn review(&mut self, retries: u32) -> Option<NodeResult> {
        let best = self.best.take_if(|b| b.gated)?;
        let reason = format!(
            "{} model-written test(s) fail against code that passes {}: {}",
            best.disputed.len(),
            self.gates(),
            best.disputed.join(", ")
        );
        tracing::info!(node = %self.site.node.id, "needs review: {reason}");
        Some(NodeResult {
            status: NodeStatus::NeedsReview,
            tests: Some(TestCounts {
                passed: best.passed,
                failed: best.disputed.len() as u32,
            }),
            retries,
            failure_reason: Some(reason),
            usage: std::mem::take(&mut self.usage),
            keep: Some(best.text),
            keep_tests: Some(best.undisputed_tests),
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
    }

    /// What a failed node leaves in its module: its best candidate, else a stub that says
    /// why it is missing. Reverted to nothing, a failed function breaks every module and
    /// test that imports anything from its file.
    fn kept_text(&mut self, reason: &str) -> Option<String> {
        // A function without a body would answer `None` silently; the stub says why it fails.
        if let Some(best) = self.best.take()
            && !self.site.bodiless(&best.text)
        {
            return Some(best.text);
        }
        self.site.stubbed(reason)
    }

    /// `result` with the tokens this node spent, and for a failure what its module keeps.
    pub(super) fn end(mut self, result: NodeResult) -> Result<NodeResult, FsError> {
        let keep = match (&result.status, &result.failure_reason) {
            (NodeStatus::Failed, Some(reason)) => self.kept_text(reason),
            _ => None,
        };
        Ok(NodeResult {
            usage: std::mem::take(&mut self.usage),
            keep,
            ..result
        })
    }

    /// The node ends without passing: a gated candidate is kept for review, else the node
    /// failed after `attempts` attempts.
    fn exhausted(mut self, attempts: u32) -> Result<NodeResult, FsError> {
        if let Some(review) = self.review(attempts.saturating_sub(1)) {
            return Ok(review);
        }
        let reason = self
            .failure
            .as_deref()
            .and_then(|f| f.lines().next())
            .unwrap_or("no attempt succeeded")
            .to_string();
        let failed = NodeResult {
            status: NodeStatus::Failed,
            tests: self.last_run.as_ref().map(counts_of),
            retries: attempts.saturating_sub(1),
            failure_reason: Some(format!("{reason} (after {attempts} attempts)")),
            ..NodeResult::new(NodeStatus::Failed)
        };
        self.end(failed)
    }
}
