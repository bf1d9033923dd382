//! What a run of the engine is given and shares: the options a command hands in, the loop's
//! settings, the context every node task reads, what the user sees while it runs, and what
//! the engine hands on to assembly.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::DEFAULT_MAX_RETRIES;
use crate::checkpoint::Checkpoint;
use crate::fsutil::Workspace;
use crate::llm::LlmProvider;
use crate::records::NodeStatus;
use crate::rpg::{NodeId, NodePos, ValidRpg};
use crate::sandbox::TestRunner;
use crate::workspace::git::Git;
use crate::workspace::runlock::RunLock;

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub out: PathBuf,
    /// Regenerate this node and every node after it in the order; leave earlier ones as they are.
    pub start_from: Option<String>,
    /// How each node's loop runs.
    pub settings: LoopSettings,
    /// Nodes run at once (nodes that share a file never do).
    pub jobs: usize,
    /// Passed nodes between two flushes of the staging copy to the output tree (at least 1;
    /// a subgraph's end and the run's end always flush).
    pub flush_every: usize,
    /// Told what each node in flight is doing, for progress display.
    pub phases: PhaseSink,
}

/// How each node's loop runs: read from the command line once and handed, as one value,
/// through the run's [`Context`] to each node's [`super::machine::Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    /// Answers asked after the first implementation round: a round of k
    /// candidates spends k.
    pub max_retries: u32,
    /// The baseline the engine is measured against: one implementation per node, asked once,
    /// with no tests, never run, never reverted (every node ends `needs_review`).
    pub one_shot: bool,
    /// Candidates asked for a node's first implementation, all run, the best kept.
    pub candidates: u32,
    /// Whether a dispute between gated code and the model's tests goes to a vote (`--votes`).
    /// Off by default: over the runs a decision may read (ml_lib twice, the corpus's dev
    /// plan intervals) 1 of 18 votes was followed by a passed node, and the project's own
    /// reading found the 1.5B model's votes no better than chance; each costs about 5,000
    /// prompt tokens. Without a vote a disputed node ends `needs_review` with its
    /// gated code.
    pub votes: bool,
}

impl Default for LoopSettings {
    /// The engine's defaults, as `zerorepo generate` has them.
    fn default() -> LoopSettings {
        LoopSettings {
            max_retries: DEFAULT_MAX_RETRIES,
            one_shot: false,
            candidates: DEFAULT_CANDIDATES,
            votes: false,
        }
    }
}

/// Candidates per fix round and fresh start by default (`--candidates`). Two, not three:
/// the machine is compute-bound, so a third candidate costs about half a round more
/// (reports/batching.md); the corpus's dev half and test half with each are in
/// docs/loop.md ("Two candidates a round").
pub(crate) const DEFAULT_CANDIDATES: u32 = 2;

type PhaseReport = dyn Fn(&str, &str) + Send + Sync;

/// Receives `(node id, phase)` while a node works: "writing tests", "running tests", ...
#[derive(Clone, Default)]
pub struct PhaseSink(Option<Arc<PhaseReport>>);

impl PhaseSink {
    pub fn new(report: impl Fn(&str, &str) + Send + Sync + 'static) -> PhaseSink {
        PhaseSink(Some(Arc::new(report)))
    }

    pub fn report(&self, id: &str, phase: &str) {
        if let Some(report) = &self.0 {
            report(id, phase);
        }
    }
}

impl std::fmt::Debug for PhaseSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "PhaseSink(set)"
        } else {
            "PhaseSink(none)"
        })
    }
}

/// What the user sees while the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Notice(String),
    Started {
        position: usize,
        total: usize,
        id: NodeId,
        name: String,
    },
    Finished {
        position: usize,
        total: usize,
        id: NodeId,
        name: String,
        status: NodeStatus,
        attempts: u32,
        duration: Duration,
        reason: Option<String>,
    },
    Skipped {
        id: NodeId,
        because_of: NodeId,
    },
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LoopSummary {
    pub total: usize,
    pub passed: usize,
    /// Kept and built on, but some model-written tests still fail (see `NodeStatus::NeedsReview`).
    pub needs_review: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Nodes not finished because the run was interrupted.
    pub not_run: usize,
    /// Nodes that were already passed in the checkpoint and not run again.
    pub reused: usize,
    pub interrupted: bool,
    pub duration_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// What the loops of the nodes run this time did: first-try rate, rounds, time split.
    pub work: crate::status::WorkSummary,
    pub out: PathBuf,
}

impl LoopSummary {
    /// Every node has usable code: it passed, or it needs review (complete code whose
    /// disputed tests are listed), and nothing failed, was skipped or is left to run.
    pub(crate) fn is_complete(&self) -> bool {
        !self.interrupted && self.failed == 0 && self.skipped == 0 && self.not_run == 0
    }
}

/// What the engine hands to assembly after a run that was not interrupted: the checkpoint,
/// the output tree, the staging copy and the output's git repository.
pub struct Handoff {
    pub checkpoint: Checkpoint,
    pub out: Workspace,
    pub work: Workspace,
    pub git: Git,
    /// The output's run lock, held through assembly.
    pub lock: RunLock,
    /// The node loop's context, for the integration step's debugging.
    pub context: Arc<Context>,
}

/// Shared, read-only context of every node task.
pub struct Context {
    pub rpg: Arc<ValidRpg>,
    pub llm: Arc<dyn LlmProvider>,
    pub runner: Arc<dyn TestRunner>,
    pub workspace: Workspace,
    pub settings: LoopSettings,
    pub cancel: CancellationToken,
    pub phases: PhaseSink,
    /// The plan's top-level functions by name, for imports the plan did not declare.
    pub functions: std::collections::HashMap<String, Vec<NodePos>>,
    /// The project's top-level import names: with the standard library, all code may import.
    pub packages: std::collections::BTreeSet<String>,
    /// The plan's search index (BM25 over node names and docstrings), built by the first
    /// fix that localizes.
    pub index: std::sync::OnceLock<crate::localize::Index>,
    /// What the run's votes, fix rounds and fresh starts bought so far (with the nodes of
    /// the run this one resumes): each node's [`crate::returns::Spend`] comes from it.
    pub returns: Arc<std::sync::Mutex<crate::returns::Returns>>,
}

impl Context {
    /// The same context over another copy of the output tree (the integration step debugs in
    /// a scratch copy, so the output changes only by a fix that is kept).
    pub fn over(&self, workspace: Workspace) -> Context {
        Context {
            rpg: self.rpg.clone(),
            llm: self.llm.clone(),
            runner: self.runner.clone(),
            workspace,
            settings: self.settings,
            cancel: self.cancel.clone(),
            phases: self.phases.clone(),
            functions: self.functions.clone(),
            packages: self.packages.clone(),
            index: std::sync::OnceLock::new(),
            returns: self.returns.clone(),
        }
    }

    /// What a node may spend now.
    pub(crate) fn spend(&self) -> crate::returns::Spend {
        let returns = *self.returns.lock().unwrap_or_else(|e| e.into_inner());
        let mut spend = returns.policy(self.settings.max_retries);
        spend.votes &= self.settings.votes;
        spend
    }

    /// Adds a node's returns to the run's.
    pub(crate) fn record_returns(&self, node: &crate::returns::Returns) {
        self.returns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(node);
    }
}
