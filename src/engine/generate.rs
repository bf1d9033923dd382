//! `generate`: a valid RPG through the node loop, start to end, and the errors that stop it.

use std::sync::Arc;
use std::time::Instant;

use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::context::{Context, GenerateOptions, LoopSummary, Progress};
use super::node::NodeResult;
use super::output::Output;
use super::run::Generated;
use super::run::Generation;
use super::{node, prepare};
use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::fsutil::FsError;
use crate::llm::LlmProvider;
use crate::rpg::{NodePos, RpgError, ValidRpg};
use crate::sandbox::TestRunner;
use crate::schedule::{DependencyQueue, JobOutcome, OnFailure, drain};
use crate::workspace::git::GitError;
use crate::workspace::publish;
use crate::workspace::runlock::RunLockError;

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
    Locked(#[from] RunLockError),
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
                | EngineError::Locked(RunLockError::Busy(_))
                | EngineError::Checkpoint(CheckpointError::DifferentRpg { .. })
        )
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
/// summary. Assembly is the caller's next step (the pipeline module), on the [`super::context::Handoff`].
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
        prepared.lock,
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
        |job, draft_of| {
            let context = context.clone();
            let position = rpg.order()[job];
            let cause = draft_of.map(|d| rpg.node(rpg.order()[d]).id.clone());
            async move { node::run_node(&context, position, cause.as_deref()).await }
        },
        |result: &NodeResult| match result.status.is_usable() {
            true => JobOutcome::Passed,
            // A composite, or a function whose files could not be written at all.
            false if result.keep.is_none() => JobOutcome::FailedEmpty,
            false => JobOutcome::Failed,
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
    // The dependents of a failed node still get a draft (`node::run_node`).
    queue.on_failure(OnFailure::Draft);
    for (job, &position) in rpg.order().iter().enumerate() {
        queue.set_resources(job, node::files_of(rpg.node(position)));
    }
    queue
}

pub(super) fn bad_input(errors: &[RpgError]) -> EngineError {
    EngineError::BadInput(
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
