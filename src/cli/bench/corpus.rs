//! `zerorepo bench --corpus FILE`: the evaluation corpus, engine against the one-shot
//! baseline. For each selected plan: make it ready ([`crate::corpus::prepare`]: a hand-written
//! fixture as it is, an sdist fetched in the sandbox, digest-checked, unpacked and extracted),
//! then generate it with the engine and with `--one-shot`, one after the other, with the same
//! model and sandbox, copy the support modules into both repositories, and measure each with
//! `zerorepo eval`'s reference tests. A plan that cannot be made ready is reported with the
//! reason, and the others go on. The table is [`crate::corpus::render_markdown`]'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::Args;
use crate::cli::error::CliError;
use crate::cli::validate::load_valid;
use crate::corpus::{
    self, CorpusPlan, CorpusReport, PlanOutcome, PlanResult, PlanSide, PreparedPlan,
};
use crate::engine::{GenerateOptions, GenerateRequest, LoopSettings};
use crate::exit;
use crate::llm::LlmProvider;
use crate::pipeline;

/// What every plan's run shares.
struct CorpusBench<'a> {
    args: &'a Args,
    /// `--quiet`: no progress lines from the generations.
    quiet: bool,
    llm: Arc<dyn LlmProvider>,
    cancel: CancellationToken,
}

pub(super) async fn run(
    args: &Args,
    corpus_file: &Path,
    date: &str,
    quiet: bool,
) -> Result<u8, CliError> {
    let text = std::fs::read_to_string(corpus_file)
        .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", corpus_file.display())))?;
    let plans = corpus::parse(&text)
        .map_err(|e| CliError::bad_input(format!("{}: {e}", corpus_file.display())))?;
    let chosen = corpus::select(&plans, args.half, &args.plans).map_err(CliError::bad_input)?;
    if chosen.is_empty() {
        return Err(CliError::bad_input("no plan selected"));
    }
    // Everything that can reject the input does so before any plan runs.
    args.sandbox.runner()?;
    let fetcher = args.sandbox.download_runner()?;
    let ctx = CorpusBench {
        args,
        quiet,
        llm: args.llm.provider()?,
        cancel: CancellationToken::new(),
    };
    super::super::generate::spawn_signal_handler(ctx.cancel.clone());
    let run_dir = super::run_dir(args.work.as_deref(), "corpus", date);
    let cache = cache_dir();
    let mut report = CorpusReport {
        date: date.to_string(),
        version: env!("CARGO_PKG_VERSION").into(),
        corpus: corpus_file.display().to_string(),
        provider: ctx.llm.name().to_string(),
        cpus: super::report_cpus(),
        command: reproducing_command(),
        plans: Vec::new(),
        not_reached: chosen.iter().map(|p| p.name.clone()).collect(),
    };
    for plan in chosen {
        eprintln!("== {} ({} half)", plan.name, plan.half.as_str());
        let work = run_dir.join(&plan.name);
        let outcome =
            match corpus::prepare(plan, &work, &cache, fetcher.as_ref(), &ctx.cancel).await {
                Ok(prepared) => measure(&ctx, &prepared, &work).await?,
                Err(e) => {
                    eprintln!(
                        "   not run ({}): {}",
                        e.stage(),
                        crate::cli::render::terminal(&e.to_string())
                    );
                    PlanOutcome::NotRun {
                        stage: e.stage().into(),
                        reason: e.to_string(),
                    }
                }
            };
        // The plan cut off stays not reached: its sides did not finish.
        if ctx.cancel.is_cancelled() {
            break;
        }
        report.not_reached.retain(|name| *name != plan.name);
        report.plans.push(result_of(plan, outcome));
        // The report so far: a second Ctrl-C, which quits at once, or a crash keeps every
        // finished plan.
        save_so_far(args, &report, corpus::render_markdown)?;
    }
    fetcher.shutdown().await;
    write_report(args, &report)?;
    if !report.not_reached.is_empty() {
        eprintln!(
            "interrupted: the report holds the plans that finished; the same command resumes the generations"
        );
        return Ok(exit::INTERRUPTED);
    }
    let complete = report.plans.iter().all(|p| match &p.outcome {
        PlanOutcome::Measured {
            engine, one_shot, ..
        } => [engine, one_shot]
            .iter()
            .all(|side| side.as_ref().is_none_or(|s| s.problem.is_none())),
        PlanOutcome::NotRun { .. } => false,
    });
    Ok(if complete { exit::OK } else { exit::FAILED })
}

/// `$ZEROREPO_CORPUS_CACHE`, else `~/.cache/zerorepo/corpus`: the fetched sdists, kept
/// between runs.
pub(super) fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZEROREPO_CORPUS_CACHE") {
        return PathBuf::from(dir);
    }
    crate::programs::venv_dir()
        .and_then(|v| v.parent().map(|c| c.join("corpus")))
        .unwrap_or_else(|| PathBuf::from("corpus-cache"))
}

fn result_of(plan: &CorpusPlan, outcome: PlanOutcome) -> PlanResult {
    PlanResult {
        name: plan.name.clone(),
        half: plan.half,
        domain: plan.domain.clone(),
        examples: plan.examples,
        source: match &plan.source {
            corpus::PlanSource::HandWritten { .. } => "hand-written".into(),
            corpus::PlanSource::Sdist(s) => format!("{}=={}", s.package, s.version),
        },
        outcome,
    }
}

/// The sides `--side` names of a ready plan, engine first. Only an error of the command
/// itself (none today) stops the corpus; a side that fails is recorded in its `problem`.
async fn measure(
    ctx: &CorpusBench<'_>,
    prepared: &PreparedPlan,
    work: &Path,
) -> Result<PlanOutcome, CliError> {
    let sides = ctx.args.side;
    let engine = match sides.engine() {
        true => Some(side(ctx, prepared, &work.join("engine"), false).await),
        false => None,
    };
    if ctx.cancel.is_cancelled() {
        return Ok(PlanOutcome::NotRun {
            stage: "interrupted".into(),
            reason: "interrupted".into(),
        });
    }
    let one_shot = match sides.baseline() {
        true => Some(side(ctx, prepared, &work.join("one-shot"), true).await),
        false => None,
    };
    Ok(PlanOutcome::Measured {
        wall_ratio: engine
            .as_ref()
            .zip(one_shot.as_ref())
            .and_then(|(e, o)| corpus::wall_ratio(e, o)),
        engine: engine.map(Box::new),
        one_shot: one_shot.map(Box::new),
    })
}

/// One generation of the plan into `out`, the support modules copied in, and its evaluation.
async fn side(
    ctx: &CorpusBench<'_>,
    prepared: &PreparedPlan,
    out: &Path,
    one_shot: bool,
) -> PlanSide {
    let name = if one_shot { "one-shot" } else { "engine" };
    let resumed = out.join(crate::layout::JOURNAL).is_file();
    eprintln!(
        "   {name} -> {}{}",
        out.display(),
        if resumed { " (resuming)" } else { "" }
    );
    let mut side = PlanSide {
        out: out.display().to_string(),
        resumed,
        ..PlanSide::default()
    };
    let started = Instant::now();
    let generated = generate(ctx, &prepared.plan, out, one_shot).await;
    side.wall_s = started.elapsed().as_secs_f64();
    match generated {
        Ok(summary) => {
            let n = &summary.nodes;
            side.nodes = Some([n.passed, n.needs_review, n.failed, n.skipped]);
        }
        Err(e) => {
            side.problem = Some(format!("generation: {}", error_line(&e)));
            return side;
        }
    }
    if ctx.cancel.is_cancelled() {
        return side;
    }
    if let Err(e) = corpus::copy_support(out, &prepared.support) {
        side.problem = Some(format!("support modules: {e}"));
        return side;
    }
    if let Err(e) = corpus::add_rest(out, &prepared.rest) {
        side.problem = Some(format!("the library's left-out names: {e}"));
        return side;
    }
    match evaluate(ctx, out, &prepared.reference).await {
        Ok(evaluation) => {
            side.passed = Some(evaluation.overall.passed);
            side.total = Some(evaluation.overall.total);
            side.decisions = evaluation.decisions.map(|d| d.matrix).unwrap_or_default();
            side.file_problems = evaluation
                .files
                .iter()
                .filter_map(|f| f.problem.as_ref().map(|p| format!("{}: {p}", f.file)))
                .collect();
            eprintln!(
                "   {name}: {} of {} reference tests, {:.0} s",
                evaluation.overall.passed, evaluation.overall.total, side.wall_s
            );
        }
        Err(e) => side.problem = Some(format!("evaluation: {}", error_line(&e))),
    }
    side
}

/// The error and its causes on one line.
fn error_line(e: &CliError) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `generate PLAN --out OUT [--one-shot]` with the bench's model, sandbox and `--real-jobs`,
/// and generate's defaults for the rest.
async fn generate(
    ctx: &CorpusBench<'_>,
    plan: &Path,
    out: &Path,
    one_shot: bool,
) -> Result<pipeline::Summary, CliError> {
    let valid = Arc::new(load_valid(plan)?);
    let mut view = crate::progress::ProgressView::new(false, ctx.quiet);
    let request = GenerateRequest {
        rpg: valid,
        llm: ctx.llm.clone(),
        runner: ctx.args.sandbox.runner()?,
        options: GenerateOptions {
            out: out.to_path_buf(),
            start_from: None,
            settings: LoopSettings {
                one_shot,
                ..LoopSettings::default()
            },
            jobs: ctx.args.real_jobs,
            flush_every: crate::workspace::publish::FLUSH_EVERY,
            phases: view.phases(),
        },
        cancel: ctx.cancel.clone(),
    };
    let summary = pipeline::generate(request, |event| view.show(&event)).await;
    view.finish();
    summary.map_err(|e| CliError::from(e).context("the generation stopped"))
}

/// `zerorepo eval OUT --reference DIR`, in a fresh sandbox.
async fn evaluate(
    ctx: &CorpusBench<'_>,
    out: &Path,
    reference: &Path,
) -> Result<crate::eval::Evaluation, CliError> {
    let reference = crate::eval::Reference::load(out, reference, None)?;
    let runner = ctx.args.sandbox.runner()?;
    crate::eval::evaluate(&reference, runner.as_ref(), &ctx.cancel)
        .await
        .map_err(|e| CliError::from(e).context("the evaluation stopped"))
}

/// This invocation's own command line, with the program called `zerorepo`.
pub(super) fn reproducing_command() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words = std::iter::once("zerorepo").chain(args.iter().map(String::as_str));
    shlex::try_join(words).unwrap_or_else(|_| format!("zerorepo {}", args.join(" ")))
}

/// `--report PATH`: the Markdown there and the JSON beside it (`PATH` with `.json`); stdout:
/// the Markdown, or the JSON with `--json`.
fn write_report(args: &Args, report: &CorpusReport) -> Result<(), CliError> {
    let markdown = corpus::render_markdown(report);
    let json = crate::cli::render::json(report)?;
    write_outputs(args, &markdown, &json)
}

/// The report files (`--report`) of a corpus run as they stand, and nothing on standard
/// output: saved after each plan or request, so an interrupted or crashed run keeps them.
pub(super) fn save_so_far<R: serde::Serialize>(
    args: &Args,
    report: &R,
    render: fn(&R) -> String,
) -> Result<(), CliError> {
    let Some(path) = &args.report else {
        return Ok(());
    };
    write_report_files(path, &render(report), &crate::cli::render::json(report)?)
}

/// The report at `path` and its JSON beside it (`.json`), each written atomically.
pub(super) fn write_report_files(path: &Path, markdown: &str, json: &str) -> Result<(), CliError> {
    let failed = |e: crate::fsutil::FsError| {
        CliError::Failed(anyhow::Error::new(e).context("writing the corpus report"))
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            CliError::Failed(
                anyhow::Error::new(e).context(format!("creating {}", parent.display())),
            )
        })?;
    }
    crate::fsutil::write_atomic(path, markdown.as_bytes()).map_err(failed)?;
    crate::fsutil::write_atomic(&path.with_extension("json"), json.as_bytes()).map_err(failed)
}

/// Writes a corpus report's Markdown and JSON where `--report` and `--json` say (shared by
/// `--corpus` and `--code-corpus`).
pub(super) fn write_outputs(args: &Args, markdown: &str, json: &str) -> Result<(), CliError> {
    if let Some(path) = &args.report {
        write_report_files(path, markdown, json)?;
        eprintln!("report: {} (and .json)", path.display());
    }
    if args.json {
        print!("{json}");
    } else {
        print!("{markdown}");
    }
    Ok(())
}
