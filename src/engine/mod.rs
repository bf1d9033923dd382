//! The generation engine: from a valid RPG to files on disk, node by node.
//!
//! [`generate`] owns the run: it checks the output directory, opens the checkpoint, puts back
//! the files of any node a crash interrupted, builds the dependency queue (presetting what the
//! checkpoint says passed), and drains it. Every state change is journalled before the next
//! node starts, on the one task that owns the checkpoint. [`node`] is the per-node test-first
//! loop; [`prompt`] builds what the model sees.

pub mod examples;
pub mod node;
pub mod outdir;
pub mod prompt;
mod rollback;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::checkpoint::{Checkpoint, CheckpointError, NodeRecord, NodeStatus};
use crate::layout::{ASSEMBLY_FILES, ENGINE_FILES, GITIGNORE, RPG_COPY, SNAPSHOT_DIR, WORK_DIR};
use crate::llm::{LlmProvider, Usage};
use crate::rpg::{RpgError, ValidRpg, check_output_paths};
use crate::sandbox::TestRunner;
use crate::schedule::drain::Event;
use crate::schedule::{DependencyQueue, JobOutcome, drain};
use crate::workspace::git::{Git, GitError};
use crate::fsutil::{FsError, Workspace};
use crate::workspace::publish;

pub use node::NodeResult;
pub use rollback::{Rollback, rollback};

const OUTPUT_GITIGNORE: &str = "__pycache__/\n*.pyc\n.pytest_cache/\n*.egg-info/\n.zerorepo/\ndocs/generation_checkpoint.json\n";

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub out: PathBuf,
    /// Regenerate this node and every node after it in the order; leave earlier ones as they are.
    pub start_from: Option<String>,
    /// Fix attempts after the first implementation (the seed's 8).
    pub max_retries: u32,
    /// Nodes run at once (nodes that share a file never do).
    pub jobs: usize,
    /// Passed nodes between two flushes of the staging copy to the output tree (at least 1;
    /// a subgraph's end and the run's end always flush).
    pub flush_every: usize,
    /// Told what each node in flight is doing, for progress display.
    pub phases: PhaseSink,
}

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
    #[error(transparent)]
    Assemble(#[from] crate::assemble::AssembleError),
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
pub struct Summary {
    pub total: usize,
    pub passed: usize,
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
    pub out: PathBuf,
    /// The assembly step (metadata, validation, report); `None` when the run was interrupted.
    pub assembly: Option<crate::assemble::Assembly>,
}

impl Summary {
    pub fn all_passed(&self) -> bool {
        !self.interrupted && self.failed == 0 && self.skipped == 0 && self.not_run == 0
    }

    /// Every node passed and the repository installs, compiles and passes its tests.
    pub fn succeeded(&self) -> bool {
        self.all_passed()
            && self.assembly.as_ref().is_some_and(|a| {
                let v = &a.validation;
                v.install.ok
                    && v.syntax_errors.is_empty()
                    && v.tests.as_ref().is_none_or(|t| t.problem.is_none())
            })
    }
}

/// Shared, read-only context of every node task.
pub struct Context {
    pub rpg: Arc<ValidRpg>,
    pub llm: Arc<dyn LlmProvider>,
    pub runner: Arc<dyn TestRunner>,
    pub workspace: Workspace,
    pub max_retries: u32,
    pub cancel: CancellationToken,
    pub phases: PhaseSink,
}

/// The sha256 that ties a checkpoint to its RPG.
pub fn rpg_sha256(rpg: &ValidRpg) -> String {
    let bytes = serde_json::to_vec(&rpg.rpg).unwrap_or_default();
    format!("{:x}", Sha256::digest(bytes))
}

/// Runs a whole generation. Errors are returned before any file is written when the input is
/// at fault; once nodes run, failures are recorded per node and reported in the summary.
pub async fn generate(
    rpg: Arc<ValidRpg>,
    llm: Arc<dyn LlmProvider>,
    runner: Arc<dyn TestRunner>,
    options: GenerateOptions,
    cancel: CancellationToken,
    progress: impl FnMut(Progress),
) -> Result<Summary, EngineError> {
    // One exit: whatever the run ends with, the sandbox's warm runner is released.
    let result = run(rpg, llm, runner.clone(), options, cancel, progress).await;
    runner.shutdown().await;
    result
}

async fn run(
    rpg: Arc<ValidRpg>,
    llm: Arc<dyn LlmProvider>,
    runner: Arc<dyn TestRunner>,
    options: GenerateOptions,
    cancel: CancellationToken,
    mut progress: impl FnMut(Progress),
) -> Result<Summary, EngineError> {
    let started = Instant::now();
    check_output_paths(&rpg.rpg, &options.out, ENGINE_FILES)
        .map_err(|errors| bad_input(&errors))?;
    let problems = outdir::problems(&options.out);
    if !problems.is_empty() {
        return Err(EngineError::BadInput(problems.join("\n")));
    }
    let start_index = match &options.start_from {
        Some(id) => Some(
            rpg.order
                .iter()
                .position(|&p| rpg.node(p).id == *id)
                .ok_or_else(|| {
                    EngineError::BadInput(format!(
                        "--start-from-node {id}: no such node in the RPG"
                    ))
                })?,
        ),
        None => None,
    };
    let out = Workspace::new(&options.out);
    if let Some(index) = start_index {
        check_start_node(&rpg, &options.out, index)?;
    }
    runner
        .check_ready()
        .await
        .map_err(|e| EngineError::BadInput(e.to_string()))?;
    std::fs::create_dir_all(&options.out).map_err(|source| FsError::Io {
        path: options.out.clone(),
        source,
    })?;
    let leftovers = crate::sandbox::leftovers::clean();
    if leftovers > 0 {
        progress(Progress::Notice(format!(
            "removed {leftovers} temp dir(s) and cgroup(s) left by a killed run"
        )));
    }
    let stale = out.remove_stale_temp_files()?;
    if stale > 0 {
        progress(Progress::Notice(format!(
            "removed {stale} temp file(s) left by an interrupted write"
        )));
    }
    let hash = rpg_sha256(&rpg);
    let (mut checkpoint, opened) = Checkpoint::open(&options.out, &hash)?;
    if let Some((moved, why)) = &opened.corrupt {
        let moved: Vec<String> = moved.iter().map(|p| p.display().to_string()).collect();
        progress(Progress::Notice(format!(
            "checkpoint was corrupt ({why}); backed up to {} and starting over",
            moved.join(", ")
        )));
    } else if opened.resumed > 0 {
        progress(Progress::Notice(format!(
            "resuming: {} node record(s) in the checkpoint",
            opened.resumed
        )));
    }
    let found = publish::check_output(&out, &mut checkpoint);
    let (rebuilt, edited): (Vec<String>, Vec<String>) = found
        .edited
        .into_iter()
        .partition(|path| ASSEMBLY_FILES.contains(&path.as_str()));
    if !rebuilt.is_empty() {
        progress(Progress::Notice(format!(
            "{} changed by hand; assembly rebuilds {} from the plan (edit the RPG's metadata instead)",
            rebuilt.join(", "),
            if rebuilt.len() == 1 { "it" } else { "them" }
        )));
    }
    if !edited.is_empty() {
        return Err(EngineError::BadInput(format!(
            "{} changed since zerorepo wrote {}: {}\nzerorepo would overwrite or revert {}. \
             Save your changes elsewhere (or put the files back, e.g. `git -C {} checkout -- FILE`) and run again; nothing was written.",
            options.out.display(),
            if edited.len() == 1 {
                "this file"
            } else {
                "these files"
            },
            edited.join(", "),
            if edited.len() == 1 { "it" } else { "them" },
            options.out.display(),
        )));
    }
    // A batch a crash cut short was taken back in memory (its files still hold what they held
    // before it); journal that, or a second crash before the next flush would replay the
    // batch as published and mistake the untouched files for hand edits.
    checkpoint.record_flush(found.taken_back)?;
    out.write_if_changed(GITIGNORE, OUTPUT_GITIGNORE)?;
    let git = Git::open_or_init(&options.out)?;
    let rpg_json = serde_json::to_string_pretty(&rpg.rpg).unwrap_or_default() + "\n";
    out.write_if_changed(RPG_COPY, &rpg_json)?;
    publish::ensure_staging(&options.out, &options.out.join(WORK_DIR))?;
    let workspace = Workspace::new(options.out.join(WORK_DIR));
    strip_exports(&rpg, &workspace)?;
    restore_interrupted_nodes(&workspace, &checkpoint, &mut progress)?;

    let total = rpg.order.len();
    let mut queue = build_queue(&rpg, options.jobs);
    let mut summary = Summary {
        total,
        out: options.out.clone(),
        ..Summary::default()
    };
    let mut first_error: Option<EngineError> = None;
    for (job, &position) in rpg.order.iter().enumerate() {
        let id = &rpg.node(position).id;
        let passed = checkpoint.status_of(id) == NodeStatus::Passed;
        match start_index {
            Some(start) if job < start => {
                if passed {
                    queue.preset_passed(job);
                    summary.reused += 1;
                } else {
                    for finished in queue.preset_unavailable(job) {
                        record_skip(
                            &rpg,
                            &mut checkpoint,
                            finished.job,
                            job,
                            &mut summary,
                            &mut progress,
                            &mut first_error,
                        );
                    }
                }
            }
            None if passed => {
                queue.preset_passed(job);
                summary.reused += 1;
            }
            _ => {}
        }
    }

    let context = Arc::new(Context {
        rpg: rpg.clone(),
        llm,
        runner,
        workspace: workspace.clone(),
        max_retries: options.max_retries,
        cancel: cancel.clone(),
        phases: options.phases.clone(),
    });
    let mut usage = Usage::default();
    let mut starts: Vec<Option<Instant>> = vec![None; total];
    let mut output = Output::new(out.clone(), workspace.clone(), git, options.flush_every);
    drain(
        &mut queue,
        &cancel,
        |job| {
            let context = context.clone();
            let position = rpg.order[job];
            async move { node::run_node(&context, position).await }
        },
        |result: &NodeResult| {
            if result.status == NodeStatus::Passed {
                JobOutcome::Passed
            } else {
                JobOutcome::Failed
            }
        },
        |event| {
            if first_error.is_some() {
                return;
            }
            match event {
                Event::Started(job) => {
                    let node = rpg.node(rpg.order[job]);
                    starts[job] = Some(Instant::now());
                    progress(Progress::Started {
                        position: job + 1,
                        total,
                        id: node.id.clone(),
                        name: node.name.clone(),
                    });
                    if let Err(e) =
                        checkpoint.record(&node.id, NodeRecord::now(NodeStatus::InProgress))
                    {
                        first_error = Some(e.into());
                        cancel.cancel();
                    }
                }
                Event::Ended(job, result) => {
                    let node = rpg.node(rpg.order[job]);
                    usage.add(crate::llm::total(&result.usage));
                    let duration = starts[job].map(|s| s.elapsed()).unwrap_or_default();
                    if result.status == NodeStatus::InProgress {
                        summary.not_run += 1; // interrupted: stays in_progress, resumed next time
                        return;
                    }
                    match result.status {
                        NodeStatus::Passed => summary.passed += 1,
                        _ => summary.failed += 1,
                    }
                    let record = NodeRecord {
                        test_results: result.tests,
                        retry_count: result.retries,
                        failure_reason: result.failure_reason.clone(),
                        duration_ms: Some(duration.as_millis() as u64),
                        tokens: result.usage.clone(),
                        ..NodeRecord::now(result.status)
                    };
                    if let Err(e) = checkpoint.record(&node.id, record) {
                        first_error = Some(e.into());
                        cancel.cancel();
                        return;
                    }
                    if let Err(e) = workspace.discard_snapshot(SNAPSHOT_DIR, &node.id) {
                        first_error = Some(e.into());
                        cancel.cancel();
                        return;
                    }
                    let passed = result.status == NodeStatus::Passed;
                    if let Err(e) = output.node_ended(&rpg, &mut checkpoint, node, passed) {
                        first_error = Some(e);
                        cancel.cancel();
                        return;
                    }
                    progress(Progress::Finished {
                        position: job + 1,
                        total,
                        id: node.id.clone(),
                        name: node.name.clone(),
                        status: result.status,
                        attempts: result.retries + 1,
                        duration,
                        reason: result.failure_reason.clone(),
                    });
                }
                Event::Skipped(_) if cancel.is_cancelled() => summary.not_run += 1,
                Event::Skipped(finished) => {
                    record_skip(
                        &rpg,
                        &mut checkpoint,
                        finished.job,
                        finished.because_of,
                        &mut summary,
                        &mut progress,
                        &mut first_error,
                    );
                    let node = rpg.node(rpg.order[finished.job]);
                    if let Err(e) = output.node_ended(&rpg, &mut checkpoint, node, false) {
                        first_error.get_or_insert(e);
                    }
                }
            }
        },
    )
    .await;
    if let Some(error) = first_error {
        return Err(error);
    }
    summary.not_run += queue.waiting().len();
    summary.interrupted = cancel.is_cancelled();
    summary.prompt_tokens = usage.prompt_tokens;
    summary.completion_tokens = usage.completion_tokens;
    // What passed before an interruption is published too: nothing is in flight any more.
    output.flush(&rpg, &mut checkpoint)?;
    if !summary.interrupted {
        // A crash between a subgraph's last node and its commit leaves it uncommitted.
        output.commit_finished(&rpg, &mut checkpoint)?;
        progress(Progress::Notice(
            "assembling: package exports, pyproject.toml, README, report; validating the install and tests".into(),
        ));
        let generation = crate::assemble::GenerationInfo::new(
            context.llm.name(),
            context.runner.name().to_string(),
            checkpoint.records(),
        );
        let records = checkpoint.records().clone();
        let assembly = crate::assemble::assemble(
            &rpg,
            &records,
            &mut checkpoint,
            &out,
            &output.work,
            &output.git,
            context.runner.as_ref(),
            &generation,
            &cancel,
        )
        .await;
        match assembly {
            Ok(assembly) => summary.assembly = Some(assembly),
            // Ctrl-C during validation: nothing is reported or committed; a rerun assembles.
            Err(crate::assemble::AssembleError::Interrupted) => summary.interrupted = true,
            Err(e) => return Err(e.into()),
        }
    }
    summary.duration_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// The output tree's side of a run: flushes of the staging copy and a commit per finished
/// subgraph (see [`crate::workspace::publish`] and [`crate::workspace::git`]).
struct Output {
    out: Workspace,
    work: Workspace,
    git: Git,
    flush_every: usize,
    passed_since_flush: usize,
    /// Subgraphs committed (or found committed) in this run.
    done: std::collections::BTreeSet<String>,
    /// Subgraphs with a node that finished in this run: their tag, if any, is out of date.
    touched: std::collections::BTreeSet<String>,
}

impl Output {
    fn new(out: Workspace, work: Workspace, git: Git, flush_every: usize) -> Output {
        Output {
            out,
            work,
            git,
            flush_every: flush_every.max(1),
            passed_since_flush: 0,
            done: Default::default(),
            touched: Default::default(),
        }
    }

    /// Files a flush may publish: every node's files, and the package markers created for
    /// them; never the files of a node still in flight.
    fn candidates(&self, rpg: &ValidRpg, checkpoint: &Checkpoint) -> Vec<String> {
        let mut in_flight = std::collections::BTreeSet::new();
        let mut files = std::collections::BTreeSet::new();
        for &position in &rpg.order {
            let node = rpg.node(position);
            let target = if checkpoint.status_of(&node.id) == NodeStatus::InProgress {
                &mut in_flight
            } else {
                &mut files
            };
            target.extend(node::files_of(node));
        }
        files.extend(
            publish::files_under(self.work.root())
                .into_iter()
                .filter(|p| p.ends_with("__init__.py") && !p.starts_with(".zerorepo/")),
        );
        files.difference(&in_flight).cloned().collect()
    }

    fn flush(&mut self, rpg: &ValidRpg, checkpoint: &mut Checkpoint) -> Result<(), EngineError> {
        let candidates = self.candidates(rpg, checkpoint);
        let flushed = publish::flush(&self.work, &self.out, checkpoint, &candidates)?;
        for (path, why) in &flushed.refused {
            tracing::warn!("{path} was not published because it does not parse: {why}");
        }
        self.passed_since_flush = 0;
        Ok(())
    }

    fn node_ended(
        &mut self,
        rpg: &ValidRpg,
        checkpoint: &mut Checkpoint,
        node: &crate::rpg::Node,
        passed: bool,
    ) -> Result<(), EngineError> {
        self.touched.insert(node.subgraph().to_string());
        self.passed_since_flush += usize::from(passed);
        if self.passed_since_flush >= self.flush_every
            || subgraph_finished(rpg, checkpoint, node.subgraph())
        {
            self.flush(rpg, checkpoint)?;
        }
        self.commit_finished(rpg, checkpoint)
    }

    fn commit_finished(
        &mut self,
        rpg: &ValidRpg,
        checkpoint: &mut Checkpoint,
    ) -> Result<(), EngineError> {
        let mut subgraphs: std::collections::BTreeMap<&str, Vec<&crate::rpg::Node>> =
            Default::default();
        for &position in &rpg.order {
            let node = rpg.node(position);
            subgraphs.entry(node.subgraph()).or_default().push(node);
        }
        for (subgraph, nodes) in subgraphs {
            if self.done.contains(subgraph) || !subgraph_finished(rpg, checkpoint, subgraph) {
                continue;
            }
            if self.touched.contains(subgraph) || !self.git.has_subgraph_tag(subgraph) {
                let paths: Vec<String> = nodes.iter().flat_map(|n| node::files_of(n)).collect();
                let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
                ids.sort();
                let range = format!("{}-{}", ids[0], ids[ids.len() - 1]);
                self.git.commit_paths(
                    &paths,
                    &format!("feat: complete {subgraph} (nodes {range})"),
                )?;
                self.git.tag_subgraph(subgraph)?;
            }
            self.done.insert(subgraph.to_string());
        }
        Ok(())
    }
}

fn subgraph_finished(rpg: &ValidRpg, checkpoint: &Checkpoint, subgraph: &str) -> bool {
    rpg.order
        .iter()
        .map(|&p| rpg.node(p))
        .filter(|n| n.subgraph() == subgraph)
        .all(|n| {
            matches!(
                checkpoint.status_of(&n.id),
                NodeStatus::Passed | NodeStatus::Failed | NodeStatus::Skipped
            )
        })
}

/// Removes the export blocks that assembly added to package `__init__.py` files: while nodes
/// are regenerated they could name functions that do not exist yet. Assembly adds them back.
fn strip_exports(rpg: &ValidRpg, workspace: &Workspace) -> Result<(), FsError> {
    for &position in &rpg.order {
        for file in node::files_of(rpg.node(position)) {
            if !file.ends_with("__init__.py") {
                continue;
            }
            if let Some(text) = workspace.read(&file)?
                && let Some(kept) = crate::python::without_exports(&text)
            {
                workspace.write(&file, &kept)?;
            }
        }
    }
    Ok(())
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

/// `--start-from-node` is only safe when everything the node needs has passed.
fn check_start_node(
    rpg: &ValidRpg,
    out: &std::path::Path,
    index: usize,
) -> Result<(), EngineError> {
    let position = rpg.order[index];
    let records = crate::checkpoint::load_compact(out)
        .map_err(EngineError::BadInput)?
        .unwrap_or_default();
    let missing: Vec<String> = rpg
        .graph
        .transitive_dependencies_of(position)
        .into_iter()
        .map(|p| &rpg.node(p).id)
        .filter(|id| {
            records
                .get(*id)
                .is_none_or(|r| r.status != NodeStatus::Passed)
        })
        .map(|id| {
            format!(
                "{id} ({})",
                records.get(id).map_or("pending", |r| r.status.as_str())
            )
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(EngineError::BadInput(format!(
        "cannot start from {}: these dependencies have not passed: {}",
        rpg.node(position).id,
        missing.join(", ")
    )))
}

/// Job `j` is the node at `rpg.order[j]`, so job numbers are priorities in generation order.
fn build_queue(rpg: &ValidRpg, jobs: usize) -> DependencyQueue {
    let job_of: std::collections::HashMap<usize, usize> =
        rpg.order.iter().enumerate().map(|(j, &p)| (p, j)).collect();
    let deps = rpg
        .order
        .iter()
        .map(|&p| {
            rpg.graph
                .dependencies_of(p)
                .into_iter()
                .filter_map(|d| job_of.get(&d).copied())
                .collect()
        })
        .collect();
    let mut queue = DependencyQueue::new(deps, jobs);
    for (job, &position) in rpg.order.iter().enumerate() {
        queue.set_resources(job, node::files_of(rpg.node(position)));
    }
    queue
}

#[allow(clippy::too_many_arguments)]
fn record_skip(
    rpg: &ValidRpg,
    checkpoint: &mut Checkpoint,
    job: usize,
    because_of: usize,
    summary: &mut Summary,
    progress: &mut impl FnMut(Progress),
    first_error: &mut Option<EngineError>,
) {
    let node = rpg.node(rpg.order[job]);
    let cause = &rpg.node(rpg.order[because_of]).id;
    summary.skipped += 1;
    let record = NodeRecord {
        failure_reason: Some(format!("skipped: dependency {cause} did not pass")),
        ..NodeRecord::now(NodeStatus::Skipped)
    };
    if let Err(e) = checkpoint.record(&node.id, record) {
        first_error.get_or_insert(e.into());
    }
    progress(Progress::Skipped {
        id: node.id.clone(),
        because_of: cause.clone(),
    });
}

/// After a crash, a node that had started but not passed may have half its answer on disk:
/// put its files back as they were before it started, so the re-run starts from the same
/// state an uninterrupted run would have had.
fn restore_interrupted_nodes(
    workspace: &Workspace,
    checkpoint: &Checkpoint,
    progress: &mut impl FnMut(Progress),
) -> Result<(), EngineError> {
    for (id, snapshot) in workspace.pending_snapshots(SNAPSHOT_DIR)? {
        if checkpoint.status_of(&id) != NodeStatus::Passed {
            workspace.restore(&snapshot)?;
            progress(Progress::Notice(format!(
                "{id} was interrupted: its files were restored to their state before it started"
            )));
        }
        workspace.discard_snapshot(SNAPSHOT_DIR, &id)?;
    }
    Ok(())
}
