//! The running state of a generation, in the shape of cargo's `DrainState`: every piece of
//! state the drain loop changes is a field of [`Generation`], every event of the loop goes through
//! [`Generation::handle_event`], and every error goes through [`Generation::settle`], the one funnel.
//!
//! Do not use `?` across events: once nodes run, an error must stop new nodes from starting
//! (the token is cancelled) but let the nodes in flight finish and be recorded, so the error is
//! latched here and returned by [`Generation::finish`] after the loop has drained.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::output::Output;
use super::{EngineError, Handoff, LoopSummary, NodeResult, Progress};
use crate::checkpoint::Checkpoint;
use crate::layout::SNAPSHOT_DIR;
use crate::records::{NodeRecord, NodeStatus};
use crate::rpg::{Node, ValidRpg};
use crate::schedule::drain::DrainEvent;
use crate::schedule::{DependencyQueue, Finished};
use crate::usage::Usage;

/// A generation between its preparation and its end. Job `j` is the node at
/// `rpg.order()[j]`, so job numbers are priorities in generation order.
pub(super) struct Generation<'a> {
    rpg: &'a ValidRpg,
    checkpoint: Checkpoint,
    output: Output,
    summary: LoopSummary,
    /// Tokens of every node that ended in this run.
    usage: Usage,
    /// When each job started, for its duration.
    starts: Vec<Option<Instant>>,
    progress: &'a mut dyn FnMut(Progress),
    cancel: CancellationToken,
    /// The first error; once set, later events are ignored and no node starts.
    error: Option<EngineError>,
}

impl<'a> Generation<'a> {
    pub(super) fn new(
        rpg: &'a ValidRpg,
        checkpoint: Checkpoint,
        output: Output,
        summary: LoopSummary,
        progress: &'a mut dyn FnMut(Progress),
        cancel: CancellationToken,
    ) -> Generation<'a> {
        Generation {
            starts: vec![None; rpg.order().len()],
            rpg,
            checkpoint,
            output,
            summary,
            usage: Usage::default(),
            progress,
            cancel,
            error: None,
        }
    }

    fn node(&self, job: usize) -> &'a Node {
        self.rpg.node(self.rpg.order()[job])
    }

    /// Presets the queue from the checkpoint: passed nodes are kept (counted as reused); with
    /// `--start-from-node`, the nodes before it that did not pass make their dependents skip.
    pub(super) fn preset(&mut self, queue: &mut DependencyQueue, start: Option<usize>) {
        for job in 0..self.rpg.order().len() {
            let passed = self.checkpoint.status_of(&self.node(job).id).is_usable();
            match start {
                Some(start) if job < start => {
                    if passed {
                        queue.preset_passed(job);
                        self.summary.reused += 1;
                    } else {
                        for finished in queue.preset_unavailable(job) {
                            let result = self.record_skip(finished.job, job);
                            self.settle(result);
                        }
                    }
                }
                None if passed => {
                    queue.preset_passed(job);
                    self.summary.reused += 1;
                }
                _ => {}
            }
        }
    }

    /// The drain loop's one entry point.
    pub(super) fn handle_event(&mut self, event: DrainEvent<&NodeResult>) {
        if self.error.is_some() {
            return;
        }
        let result = match event {
            DrainEvent::Started(job) => self.started(job),
            DrainEvent::Ended(job, result) => self.ended(job, result),
            DrainEvent::Skipped(_) if self.cancel.is_cancelled() => {
                self.summary.not_run += 1;
                Ok(())
            }
            DrainEvent::Skipped(finished) => self.skipped(finished),
        };
        self.settle(result);
    }

    /// The one error funnel: keep the first error and start nothing new.
    fn settle(&mut self, result: Result<(), EngineError>) {
        if let Err(error) = result {
            self.error.get_or_insert(error);
            self.cancel.cancel();
        }
    }

    fn started(&mut self, job: usize) -> Result<(), EngineError> {
        let node = self.node(job);
        self.starts[job] = Some(Instant::now());
        (self.progress)(Progress::Started {
            position: job + 1,
            total: self.summary.total,
            id: node.id.clone(),
            name: node.name.clone(),
        });
        self.checkpoint
            .record(&node.id, NodeRecord::now(NodeStatus::InProgress))?;
        Ok(())
    }

    fn ended(&mut self, job: usize, result: &NodeResult) -> Result<(), EngineError> {
        let node = self.node(job);
        self.usage.add(crate::usage::total(&result.usage));
        let duration = self.starts[job].map(|s| s.elapsed()).unwrap_or_default();
        if result.status == NodeStatus::InProgress {
            self.summary.not_run += 1; // interrupted: stays in_progress, resumed next time
            return Ok(());
        }
        match result.status {
            NodeStatus::Passed => self.summary.passed += 1,
            NodeStatus::NeedsReview => self.summary.needs_review += 1,
            // The vote blamed the environment (see `engine::vote`).
            NodeStatus::Skipped => self.summary.skipped += 1,
            _ => self.summary.failed += 1,
        }
        let record = NodeRecord {
            test_results: result.tests,
            retry_count: result.retries,
            failure_reason: result.failure_reason.clone(),
            duration_ms: Some(duration.as_millis() as u64),
            tokens: result.usage.clone(),
            work: result.work.clone(),
            diagnosis: result.diagnosis.clone(),
            localizations: result.localizations.clone(),
            flaky: result.flaky.clone(),
            departure: result.departure.clone(),
            ..NodeRecord::now(result.status)
        };
        if let Some(work) = &result.work {
            self.summary.work.add(work, duration.as_millis() as u64);
        }
        self.checkpoint.record(&node.id, record)?;
        self.output.work.discard_snapshot(SNAPSHOT_DIR, &node.id)?;
        let passed = result.status.is_usable();
        self.output
            .node_ended(self.rpg, &mut self.checkpoint, node, passed)?;
        (self.progress)(Progress::Finished {
            position: job + 1,
            total: self.summary.total,
            id: node.id.clone(),
            name: node.name.clone(),
            status: result.status,
            attempts: result.retries + 1,
            duration,
            reason: result.failure_reason.clone(),
        });
        Ok(())
    }

    fn skipped(&mut self, finished: Finished) -> Result<(), EngineError> {
        self.record_skip(finished.job, finished.because_of)?;
        let node = self.node(finished.job);
        self.output
            .node_ended(self.rpg, &mut self.checkpoint, node, false)
    }

    fn record_skip(&mut self, job: usize, because_of: usize) -> Result<(), EngineError> {
        let node = self.node(job);
        let cause = &self.node(because_of).id;
        self.summary.skipped += 1;
        let record = NodeRecord {
            failure_reason: Some(format!("skipped: dependency {cause} did not pass")),
            ..NodeRecord::now(NodeStatus::Skipped)
        };
        let recorded = self.checkpoint.record(&node.id, record);
        (self.progress)(Progress::Skipped {
            id: node.id.clone(),
            because_of: cause.clone(),
        });
        Ok(recorded?)
    }

    /// After the loop: the latched error, or the summary with everything that passed
    /// published, and (unless interrupted) every finished subgraph committed.
    pub(super) fn finish(
        mut self,
        queue: &DependencyQueue,
        context: std::sync::Arc<super::Context>,
    ) -> Result<Generated, EngineError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        self.summary.not_run += queue.waiting().len();
        self.summary.interrupted = self.cancel.is_cancelled();
        self.summary.prompt_tokens = self.usage.prompt_tokens;
        self.summary.completion_tokens = self.usage.completion_tokens;
        // What passed before an interruption is published too: nothing is in flight any more.
        self.output.flush(self.rpg, &mut self.checkpoint)?;
        if self.summary.interrupted {
            return Ok(Generated {
                summary: self.summary,
                handoff: None,
            });
        }
        // A crash between a subgraph's last node and its commit leaves it uncommitted.
        self.output
            .commit_finished(self.rpg, &mut self.checkpoint)?;
        Ok(Generated {
            summary: self.summary,
            handoff: Some(Handoff {
                checkpoint: self.checkpoint,
                out: self.output.out,
                work: self.output.work,
                git: self.output.git,
                lock: self.output.lock,
                context,
            }),
        })
    }
}

/// How the node loop ended.
pub struct Generated {
    pub summary: LoopSummary,
    /// What assembly works on; `None` when the run was interrupted (nothing is assembled).
    pub handoff: Option<Handoff>,
}
