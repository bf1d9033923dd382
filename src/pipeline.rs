//! `zerorepo generate` as one pipeline: the engine's node loop ([`crate::engine`]), then
//! assembly of the repository ([`crate::assemble`]), then the release of the sandbox.
//!
//! The engine and assembly do not know each other; this is the one place that runs both, so
//! the order is visible here and neither layer reaches into the other. Every exit, error or
//! not, goes through [`generate`]'s single release of the test runner: releasing a warm
//! runner awaits the sandbox (a Docker container is removed over the API), which a `Drop`
//! guard cannot do.

use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::assemble::{AssembleError, Assembler, Assembly, GenerationInfo};
use crate::engine::{self, EngineError, GenerateRequest, Handoff, Progress};
use crate::llm::LlmProvider;
use crate::records::IntegrationRecord;
use crate::rpg::ValidRpg;
use crate::sandbox::TestRunner;

/// Why a generation stopped before its summary.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    #[error("integration tests: {0}")]
    Integration(#[from] engine::integration::IntegrationError),
}

impl GenerateError {
    /// The input was at fault (exit 2); nothing was written.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, GenerateError::Engine(e) if e.is_bad_input())
    }
}

/// The summary of a generation: the node loop's counts, then the assembled repository.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    #[serde(flatten)]
    pub nodes: engine::LoopSummary,
    /// The assembly step (metadata, validation, report); `None` when the run was interrupted.
    pub assembly: Option<Assembly>,
    /// Wall time of the assembly step, validation included (part of `duration_ms`).
    pub assembly_ms: u64,
    /// The integration test of every subgraph, through its functions that passed their gates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub integration: Vec<IntegrationRecord>,
}

impl Summary {
    /// Every node passed or needs review, and the repository installs, compiles and passes
    /// its tests.
    pub fn succeeded(&self) -> bool {
        self.nodes.is_complete()
            && self.assembly.as_ref().is_some_and(|a| {
                let v = &a.validation;
                v.install.ok
                    && v.syntax_errors.is_empty()
                    && v.tests.as_ref().is_none_or(|t| t.problem.is_none())
            })
    }
}

/// Generates and assembles the repository; the test runner is released on every exit.
pub async fn generate(
    request: GenerateRequest,
    mut progress: impl FnMut(Progress),
) -> Result<Summary, GenerateError> {
    let runner = request.runner.clone();
    let result = generate_and_assemble(request, &mut progress).await;
    runner.shutdown().await;
    result
}

async fn generate_and_assemble(
    request: GenerateRequest,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, GenerateError> {
    let started = Instant::now();
    let (rpg, llm, runner) = (
        request.rpg.clone(),
        request.llm.clone(),
        request.runner.clone(),
    );
    let cancel = request.cancel.clone();
    // The baseline writes no tests: its `needs_review` nodes never ran, so they are not
    // code that passed its gates, and no integration test is asked for them.
    let one_shot = request.options.settings.one_shot;
    let generation = engine::generate(request, progress).await?;
    let mut summary = Summary {
        nodes: generation.summary,
        assembly: None,
        assembly_ms: 0,
        integration: Vec::new(),
    };
    if let Some(mut handoff) = generation.handoff {
        let context = handoff.context.clone();
        let integration = engine::integration::Integration {
            enabled: !one_shot,
            ctx: &context,
            out: &handoff.out,
            work: &handoff.work,
        };
        let mut notice = |text: String| progress(Progress::Notice(text));
        summary.integration = integration
            .run(&mut handoff.checkpoint, &mut notice)
            .await?;
        for record in &summary.integration {
            summary.nodes.prompt_tokens += record.tokens.prompt_tokens;
            summary.nodes.completion_tokens += record.tokens.completion_tokens;
        }
        progress(Progress::Notice(
            "assembling: package exports, pyproject.toml, README, report; validating the install and tests".into(),
        ));
        let stage = Stage {
            rpg: &rpg,
            llm: llm.as_ref(),
            runner: runner.as_ref(),
            cancel: &cancel,
        };
        let assembling = Instant::now();
        let assembled = stage.assemble(handoff, &summary.integration).await;
        summary.assembly_ms = assembling.elapsed().as_millis() as u64;
        match assembled {
            Ok(assembly) => summary.assembly = Some(assembly),
            // Ctrl-C during validation: nothing is reported or committed; a rerun assembles.
            Err(AssembleError::Interrupted) => summary.nodes.interrupted = true,
            Err(e) => return Err(e.into()),
        }
        summary.nodes.duration_ms = started.elapsed().as_millis() as u64;
    }
    Ok(summary)
}

/// What assembly needs besides the engine's [`Handoff`].
struct Stage<'a> {
    rpg: &'a ValidRpg,
    llm: &'a dyn LlmProvider,
    runner: &'a dyn TestRunner,
    cancel: &'a CancellationToken,
}

impl Stage<'_> {
    async fn assemble(
        &self,
        handoff: Handoff,
        integration: &[IntegrationRecord],
    ) -> Result<Assembly, AssembleError> {
        let Handoff {
            mut checkpoint,
            out,
            work,
            git,
            // Bound, not `_`: the lock stays held until assembly returns.
            lock: _lock,
            ..
        } = handoff;
        let records = checkpoint.records().clone();
        let generation =
            GenerationInfo::new(self.llm.name(), self.runner.name().to_string(), &records);
        let assembler = Assembler {
            rpg: self.rpg,
            records: &records,
            workspace: &out,
            staging: &work,
            git: &git,
            runner: self.runner,
            generation: &generation,
            cancel: self.cancel,
            integration,
        };
        assembler.assemble(&mut checkpoint).await
    }
}
