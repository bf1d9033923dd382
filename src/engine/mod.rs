//! The generation engine: from a valid RPG to tested files on disk, node by node.
//!
//! [`generate`] runs the node loop in three steps, each in its own file: [`prepare`] checks
//! the input and the output directory, opens the checkpoint and puts back the files of any
//! node a crash interrupted; [`run`] drains the dependency queue as a drain state (all running
//! state in one struct, one event handler, one error funnel), journalling every state change
//! on the one task that owns the checkpoint; [`output`] publishes passed work from the
//! staging copy and commits each finished subgraph. [`integration`] is the step after the
//! loop: one integration test per subgraph, through its functions that passed their gates, run on the published
//! output. [`node`] is the per-node test-first loop, whose decisions are the pure state
//! machine [`machine`]; a data node (module-level data) is one assignment, written and checked
//! before the functions that read it, in [`data`]; it asks the model through [`ask`], repairs answers before they run
//! ([`repair`]) and reads test runs and test files through [`testfile`]; [`suspects`]
//! localizes a failure before a fix, over the code and plan that [`ground`] reads; [`prompt`] builds
//! what the model sees; [`rollback`] is `zerorepo rollback`. The engine knows nothing of
//! assembly: the pipeline module runs that after the engine, on the [`Handoff`].

mod ask;
mod data;
mod examples;
mod ground;
pub mod integration;
mod machine;
pub use machine::DEFAULT_MAX_RETRIES;

/// Nodes generated at once unless `--jobs` says otherwise. Measured on 2 cores with the
/// embedded model (reports/batching.md, reports/speed.md): 2 jobs finished subgraphs20 in
/// 504 s against 616 s for 1 and 597 s for 4, and ml_lib in 49.7 min against 52.1 min, with
/// the tokens of concurrent nodes decoded in shared steps. Latency-bound providers gain far
/// more from more jobs (`--jobs 4`: 3.24×).
pub const DEFAULT_JOBS: usize = 2;
mod node;
pub mod outdir;
mod output;
mod prepare;
mod prompt;
mod repair;
mod rollback;
mod run;
mod suspects;
pub(crate) mod testfile;
pub mod vote;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::fsutil::{FsError, Workspace};
use crate::llm::LlmProvider;
use crate::records::NodeStatus;
use crate::rpg::{NodePos, RpgError, ValidRpg};
use crate::sandbox::TestRunner;
use crate::schedule::{DependencyQueue, JobOutcome, drain};
use crate::workspace::git::{Git, GitError};
use crate::workspace::publish;
use output::Output;
use run::Generation;

pub use node::NodeResult;
pub use rollback::{Rollback, rollback};
pub use run::Generated;

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
/// through the run's [`Context`] to each node's [`machine::Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    /// Answers asked after the first implementation round (the seed's 8): a round of k
    /// candidates spends k.
    pub max_retries: u32,
    /// The baseline the engine is measured against: one implementation per node, asked once,
    /// with no tests, never run, never reverted (every node ends `needs_review`).
    pub one_shot: bool,
    /// Candidates asked for a node's first implementation, all run, the best kept.
    pub candidates: u32,
}

impl Default for LoopSettings {
    /// The engine's defaults, as `zerorepo generate` has them.
    fn default() -> LoopSettings {
        LoopSettings {
            max_retries: DEFAULT_MAX_RETRIES,
            one_shot: false,
            candidates: DEFAULT_CANDIDATES,
        }
    }
}

/// Candidates per implementation round by default (`--candidates`).
pub const DEFAULT_CANDIDATES: u32 = 3;

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

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The input cannot be generated as asked; nothing was written.
    #[error("{0}")]
    BadInput(String),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Workspace(#[from] FsError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Publish(#[from] publish::PublishError),
    #[error("cannot serialise the RPG: {0}")]
    Serialize(#[from] serde_json::Error),
}

impl EngineError {
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            EngineError::BadInput(_)
                | EngineError::Checkpoint(CheckpointError::DifferentRpg { .. })
        )
    }
}

/// What the user sees while the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Notice(String),
    Started {
        position: usize,
        total: usize,
        id: String,
        name: String,
    },
    Finished {
        position: usize,
        total: usize,
        id: String,
        name: String,
        status: NodeStatus,
        attempts: u32,
        duration: Duration,
        reason: Option<String>,
    },
    Skipped {
        id: String,
        because_of: String,
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
    pub work: crate::report::WorkSummary,
    pub out: PathBuf,
}

impl LoopSummary {
    /// Every node has usable code: it passed, or it needs review (complete code whose
    /// disputed tests are listed), and nothing failed, was skipped or is left to run.
    pub fn is_complete(&self) -> bool {
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
    pub fn spend(&self) -> crate::returns::Spend {
        let returns = *self.returns.lock().unwrap_or_else(|e| e.into_inner());
        returns.policy(self.settings.max_retries)
    }

    /// Adds a node's returns to the run's.
    pub fn record_returns(&self, node: &crate::returns::Returns) {
        self.returns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(node);
    }
}

/// What the votes, fix rounds and fresh starts of the nodes already recorded bought (a
/// resumed run goes on with the figures of the run it resumes).
fn earlier_returns(checkpoint: &Checkpoint) -> crate::returns::Returns {
    let mut returns = crate::returns::Returns::default();
    for record in checkpoint.records().values() {
        if let Some(work) = &record.work {
            returns.add(&work.returns);
        }
    }
    returns
}

/// The top-level import names of the plan's files (`src/ml_lib/x.py` gives `ml_lib`).
fn packages_of(rpg: &ValidRpg) -> std::collections::BTreeSet<String> {
    rpg.order()
        .iter()
        .filter_map(|&p| rpg.node(p).file_path.as_deref())
        .filter_map(|f| {
            crate::python::import_path(f)
                .split('.')
                .next()
                .map(str::to_string)
        })
        .filter(|top| !top.is_empty())
        .collect()
}

/// The plan's leaf functions by name.
fn functions_by_name(rpg: &ValidRpg) -> std::collections::HashMap<String, Vec<NodePos>> {
    let mut functions: std::collections::HashMap<String, Vec<NodePos>> = Default::default();
    for &position in rpg.order() {
        let node = rpg.node(position);
        if node.is_leaf() && node.kind == crate::rpg::NodeKind::Function {
            functions
                .entry(node.name.clone())
                .or_default()
                .push(position);
        }
    }
    functions
}

/// The sha256 that ties a checkpoint to its RPG.
pub fn rpg_sha256(rpg: &ValidRpg) -> Result<String, serde_json::Error> {
    let bytes = serde_json::to_vec(rpg.rpg())?;
    Ok(format!("{:x}", Sha256::digest(bytes)))
}

/// What a generation runs with: the plan, the model, the sandbox, the options, and the
/// token that stops it (Ctrl-C).
pub struct GenerateRequest {
    pub rpg: Arc<ValidRpg>,
    pub llm: Arc<dyn LlmProvider>,
    pub runner: Arc<dyn TestRunner>,
    pub options: GenerateOptions,
    pub cancel: CancellationToken,
}

/// Runs the node loop of a generation: prepares the output directory, drains the queue, and
/// publishes and commits what finished. Errors are returned before any file is written when
/// the input is at fault; once nodes run, failures are recorded per node and counted in the
/// summary. Assembly is the caller's next step (the pipeline module), on the [`Handoff`].
pub async fn generate(
    request: GenerateRequest,
    progress: &mut dyn FnMut(Progress),
) -> Result<Generated, EngineError> {
    let GenerateRequest {
        rpg,
        llm,
        runner,
        options,
        cancel,
    } = request;
    let started = Instant::now();
    let prepared = prepare::prepare(&rpg, runner.as_ref(), &options, progress).await?;
    let mut queue = build_queue(&rpg, options.jobs);
    let summary = LoopSummary {
        total: rpg.order().len(),
        out: options.out.clone(),
        ..LoopSummary::default()
    };
    let context = Arc::new(Context {
        rpg: rpg.clone(),
        llm,
        runner,
        workspace: prepared.work.clone(),
        settings: options.settings,
        cancel: cancel.clone(),
        phases: options.phases.clone(),
        functions: functions_by_name(&rpg),
        packages: packages_of(&rpg),
        index: std::sync::OnceLock::new(),
        returns: Arc::new(std::sync::Mutex::new(earlier_returns(&prepared.checkpoint))),
    });
    let output = Output::new(
        prepared.out,
        prepared.work,
        prepared.git,
        options.flush_every,
    );
    let mut run = Generation::new(
        &rpg,
        prepared.checkpoint,
        output,
        summary,
        progress,
        cancel.clone(),
    );
    run.preset(&mut queue, prepared.start);
    drain(
        &mut queue,
        &cancel,
        |job| {
            let context = context.clone();
            let position = rpg.order()[job];
            async move { node::run_node(&context, position).await }
        },
        |result: &NodeResult| {
            if result.status.is_usable() {
                JobOutcome::Passed
            } else {
                JobOutcome::Failed
            }
        },
        |event| run.handle_event(event),
    )
    .await;
    let mut generated = run.finish(&queue, context)?;
    generated.summary.duration_ms = started.elapsed().as_millis() as u64;
    Ok(generated)
}

/// Job `j` is the node at `rpg.order()[j]`, so job numbers are priorities in generation order.
fn build_queue(rpg: &ValidRpg, jobs: usize) -> DependencyQueue {
    let job_of: std::collections::HashMap<NodePos, usize> = rpg
        .order()
        .iter()
        .enumerate()
        .map(|(j, &p)| (p, j))
        .collect();
    let deps = rpg
        .order()
        .iter()
        .map(|&p| {
            rpg.graph()
                .dependencies_of(p)
                .into_iter()
                .filter_map(|d| job_of.get(&d).copied())
                .collect()
        })
        .collect();
    let mut queue = DependencyQueue::new(deps, jobs);
    for (job, &position) in rpg.order().iter().enumerate() {
        queue.set_resources(job, node::files_of(rpg.node(position)));
    }
    queue
}

fn bad_input(errors: &[RpgError]) -> EngineError {
    EngineError::BadInput(
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
