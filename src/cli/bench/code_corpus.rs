//! `zerorepo bench --code-corpus FILE`: change requests on real libraries, `zerorepo code`
//! against the single-answer baseline, each judged by acceptance tests the model never sees.
//!
//! For each selected request: the library's pinned sdist (fetched in the sandbox, digest-
//! checked, unpacked, all by [`crate::corpus`]), its listed files copied into a fresh
//! directory, whose suite is run first ("before": it should pass, and the acceptance tests
//! should fail once the bug is planted). Then, each on its own fresh git copy with the bug
//! planted: the engine (`zerorepo code --yes --git-commit`, the command's defaults) and the
//! baseline (the same with `--single-answer`), each judged correct, wrong or unchanged.
//! With `--self-check` the request's hand-written reference change is applied instead of
//! asking any model, to show each request's tests can be failed and passed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{Args, Sides};
use crate::change::{self, Mode, Options, Profile, Status};
use crate::cli::error::CliError;
use crate::code_corpus::{
    self, Before, CodeCorpusReport, CodeRequest, RequestResult, RequestSide, RequestVerdict,
    SidesAsked,
};
use crate::corpus::{self as gen_corpus, Pin};
use crate::exit;
use crate::llm::LlmProvider;
use crate::sandbox::TestRunner;

/// What every request's run shares.
struct CodeCorpusBench {
    runner: Arc<dyn TestRunner>,
    fetcher: Arc<dyn TestRunner>,
    /// `None` in a self-check: no model is asked.
    llm: Option<Arc<dyn LlmProvider>>,
    cache: PathBuf,
    cancel: CancellationToken,
}

/// A side's run stopped because the user interrupted it.
struct Interrupted;

pub(super) async fn run(args: &Args, file: &Path, date: &str) -> Result<u8, CliError> {
    let requests = code_corpus::load(file).map_err(CliError::bad_input)?;
    let chosen =
        code_corpus::select(&requests, args.half, &args.requests).map_err(CliError::bad_input)?;
    if chosen.is_empty() {
        return Err(CliError::bad_input("no request selected"));
    }
    let ctx = CodeCorpusBench {
        runner: args.sandbox.runner()?,
        fetcher: args.sandbox.download_runner()?,
        llm: match args.self_check {
            true => None,
            false => Some(args.llm.provider()?),
        },
        cache: super::corpus::cache_dir(),
        cancel: CancellationToken::new(),
    };
    super::super::generate::spawn_signal_handler(ctx.cancel.clone());
    let run_dir = super::run_dir(args.work.as_deref(), "code-corpus", date);
    let mut report = CodeCorpusReport {
        date: date.to_string(),
        version: env!("CARGO_PKG_VERSION").into(),
        corpus: file.display().to_string(),
        provider: match &ctx.llm {
            Some(llm) => llm.name().to_string(),
            None => "reference (self-check)".into(),
        },
        self_check: args.self_check,
        requests: Vec::new(),
        not_reached: chosen.iter().map(|r| r.name.clone()).collect(),
        command: super::corpus::reproducing_command(),
    };
    let earlier = match args.resume {
        true => Some(earlier_report(args, &report)?),
        false => None,
    };
    let sides = match args.self_check {
        true => None,
        false => Some(args.side),
    };
    let wanted = SidesAsked {
        engine: sides.is_some_and(Sides::engine),
        baseline: sides.is_some_and(Sides::baseline),
        reference: sides.is_none(),
    };
    for request in chosen {
        if ctx.cancel.is_cancelled() {
            break;
        }
        if let Some(kept) = earlier
            .as_ref()
            .and_then(|e| e.finished(&request.name, wanted))
        {
            eprintln!("== {}: kept from the report (--resume)", request.name);
            report.not_reached.retain(|name| *name != request.name);
            report.requests.push(kept.clone());
            continue;
        }
        eprintln!("== {} ({} half)", request.name, request.half.as_str());
        match one(&ctx, sides, request, &run_dir.join(&request.name)).await {
            Ok(result) => {
                report.not_reached.retain(|name| *name != request.name);
                report.requests.push(result);
                // The report so far, the requests not yet run named as such: a second
                // Ctrl-C, which quits at once, or a crash keeps every finished request.
                super::corpus::save_so_far(args, &report, code_corpus::render_markdown)?;
            }
            // What finished is reported; the request cut off and the rest are named.
            Err(Interrupted) => break,
        }
    }
    ctx.fetcher.shutdown().await;
    ctx.runner.shutdown().await;
    let markdown = code_corpus::render_markdown(&report);
    super::corpus::write_outputs(args, &markdown, &crate::cli::render::json(&report)?)?;
    Ok(match (report.not_reached.is_empty(), report.complete()) {
        (false, _) => {
            eprintln!("interrupted: the report holds the requests that finished");
            exit::INTERRUPTED
        }
        (true, true) => exit::OK,
        (true, false) => exit::FAILED,
    })
}

/// The report a `--resume` run goes on from: the JSON beside `--report`, of the same corpus,
/// model and kind of run as `now`.
fn earlier_report(args: &Args, now: &CodeCorpusReport) -> Result<CodeCorpusReport, CliError> {
    let Some(path) = &args.report else {
        return Err(CliError::bad_input("--resume needs --report PATH"));
    };
    let json = path.with_extension("json");
    let text = std::fs::read_to_string(&json).map_err(|e| {
        CliError::bad_input(format!(
            "--resume: cannot read {}: {e} (a run with --report writes it after each request)",
            json.display()
        ))
    })?;
    let earlier: CodeCorpusReport = serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(format!(
            "--resume: {} is not a code-corpus report: {e}",
            json.display()
        ))
    })?;
    match earlier.resume_conflict(&now.corpus, &now.provider, now.self_check) {
        Some(why) => Err(CliError::bad_input(format!(
            "--resume: {}: {why}; give another --report, or run without --resume",
            json.display()
        ))),
        None => Ok(earlier),
    }
}

/// One request: ready, judged before, then each side (`None`: the reference change alone,
/// a self-check).
async fn one(
    ctx: &CodeCorpusBench,
    sides: Option<Sides>,
    request: &CodeRequest,
    work: &Path,
) -> Result<RequestResult, Interrupted> {
    let mut result = RequestResult {
        name: request.name.clone(),
        library: request.library.pypi.clone(),
        half: request.half,
        kind: request.kind,
        examples: request.examples,
        before: None,
        not_run: None,
        engine: None,
        baseline: None,
        reference: None,
    };
    let root = match ready(ctx, request, work).await {
        Ok(root) => root,
        Err(why) => {
            eprintln!("   not run: {}", crate::cli::render::terminal(&why));
            result.not_run = Some(why);
            return Ok(result);
        }
    };
    match before(ctx, request, &root, &work.join("before")).await {
        Ok(before) => result.before = Some(before),
        Err(why) => {
            eprintln!("   not run: {}", crate::cli::render::terminal(&why));
            result.not_run = Some(why);
            return Ok(result);
        }
    }
    let Some(sides) = sides else {
        result.reference = Some(side(ctx, request, &root, &work.join("reference"), None).await?);
        return Ok(result);
    };
    if sides.engine() {
        result.engine = Some(side(ctx, request, &root, &work.join("engine"), Some(false)).await?);
    }
    if sides.baseline() {
        result.baseline =
            Some(side(ctx, request, &root, &work.join("baseline"), Some(true)).await?);
    }
    Ok(result)
}

/// The sdist fetched and unpacked afresh into `work/sdist`; its root directory.
async fn ready(
    ctx: &CodeCorpusBench,
    request: &CodeRequest,
    work: &Path,
) -> Result<PathBuf, String> {
    let (package, version) = request.library.pin().unwrap_or_default();
    let pin = Pin {
        package,
        version,
        sha256: &request.library.sha256,
    };
    let sdist = gen_corpus::fetch(pin, &ctx.cache, ctx.fetcher.as_ref(), &ctx.cancel)
        .await
        .map_err(|e| format!("the sdist: {e}"))?;
    if work.exists() {
        std::fs::remove_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    gen_corpus::unpack(&sdist, &work.join("sdist")).map_err(|e| format!("the sdist: {e}"))
}

/// The library's suite on the published files, and the acceptance tests once the bug is
/// planted: the first should pass, the second fail.
async fn before(
    ctx: &CodeCorpusBench,
    request: &CodeRequest,
    root: &Path,
    dir: &Path,
) -> Result<Before, String> {
    code_corpus::copy_library(request, root, dir).map_err(|e| format!("the copy: {e}"))?;
    let judged = |dir: PathBuf| async move {
        code_corpus::judge(request, &dir, ctx.runner.as_ref(), &ctx.cancel)
            .await
            .map_err(|e| format!("the judge: {e}"))
    };
    let published = judged(dir.to_path_buf()).await?;
    let planted = match &request.plant {
        None => published.clone(),
        Some(plant) => {
            code_corpus::apply_edits(dir, std::slice::from_ref(plant))
                .map_err(|e| format!("the plant: {e}"))?;
            judged(dir.to_path_buf()).await?
        }
    };
    let before = Before {
        suite_passed: published.suite_passed,
        acceptance_failed: !planted.acceptance_passed,
    };
    if !before.suite_passed {
        eprintln!("   the library's suite fails before any change (recorded)");
    }
    if !before.acceptance_failed {
        eprintln!("   the acceptance tests pass before any change: they judge nothing");
    }
    Ok(before)
}

/// One side on a fresh repository in `dir`: `Some(single_answer)` asks the model through
/// `zerorepo code`; `None` applies the reference change.
async fn side(
    ctx: &CodeCorpusBench,
    request: &CodeRequest,
    root: &Path,
    dir: &Path,
    single_answer: Option<bool>,
) -> Result<RequestSide, Interrupted> {
    let name = match single_answer {
        None => "reference",
        Some(false) => "engine",
        Some(true) => "single answer",
    };
    let mut side = RequestSide {
        verdict: RequestVerdict::NotJudged,
        reason: None,
        acceptance_passed: None,
        suite_passed: None,
        wall_s: 0.0,
        prompt_tokens: 0,
        completion_tokens: 0,
        repo: dir.display().to_string(),
    };
    if let Err(e) = code_corpus::make_repository(request, root, dir) {
        side.reason = Some(format!("the copy: {e}"));
        return Ok(side);
    }
    let started = Instant::now();
    let written = match single_answer {
        None => match code_corpus::apply_edits(dir, &request.reference) {
            Ok(()) => Written::Changed,
            Err(e) => Written::Stopped(format!("the reference change: {e}")),
        },
        Some(single) => change(ctx, request, dir, single, &mut side).await?,
    };
    side.wall_s = started.elapsed().as_secs_f64();
    match written {
        Written::Stopped(why) => side.reason = Some(why),
        Written::Unchanged => side.verdict = RequestVerdict::Unchanged,
        Written::Changed => judge_side(ctx, request, dir, &mut side).await?,
    }
    eprintln!(
        "   {name}: {} ({:.0} s){}",
        side.verdict.as_str(),
        side.wall_s,
        side.reason
            .as_deref()
            .map(|r| format!(": {}", crate::cli::render::terminal(first_line(r))))
            .unwrap_or_default()
    );
    Ok(side)
}

async fn judge_side(
    ctx: &CodeCorpusBench,
    request: &CodeRequest,
    dir: &Path,
    side: &mut RequestSide,
) -> Result<(), Interrupted> {
    match code_corpus::judge(request, dir, ctx.runner.as_ref(), &ctx.cancel).await {
        Ok(j) => {
            side.suite_passed = Some(j.suite_passed);
            side.acceptance_passed = Some(j.acceptance_passed);
            side.verdict = match j.suite_passed && j.acceptance_passed {
                true => RequestVerdict::Correct,
                false => RequestVerdict::Wrong,
            };
            if !j.output.is_empty() {
                side.reason = Some(j.output);
            }
        }
        Err(_) if ctx.cancel.is_cancelled() => return Err(Interrupted),
        Err(e) => side.reason = Some(format!("the judge: {e}")),
    }
    Ok(())
}

/// What one side did to its copy of the repository.
enum Written {
    /// The change was written (and committed): the judge decides whether it is correct.
    Changed,
    /// Nothing was written; the side's reason says why.
    Unchanged,
    /// The side could not run to an end (no model, the command stopped): why.
    Stopped(String),
}

/// `zerorepo code --yes --git-commit --prompt TEXT --repo DIR` (`--single-answer` for the
/// baseline) with the command's defaults.
async fn change(
    ctx: &CodeCorpusBench,
    request: &CodeRequest,
    dir: &Path,
    single_answer: bool,
    side: &mut RequestSide,
) -> Result<Written, Interrupted> {
    let Some(llm) = ctx.llm.clone() else {
        return Ok(Written::Stopped("no model".into()));
    };
    let asked = change::Request {
        repo: dir.to_path_buf(),
        spec: request.text.clone(),
        plan: None,
        llm,
        runner: ctx.runner.clone(),
        options: Options {
            mode: Mode::Improve,
            profile: Profile::Fast,
            max_corrections: 3,
            dry_run: false,
            allow_high_risk: false,
            git_commit: true,
            plan_out: None,
            single_answer,
        },
        cancel: ctx.cancel.clone(),
    };
    let outcome = change::run(asked, &mut crate::cli::code::Policy).await;
    if ctx.cancel.is_cancelled() {
        return Err(Interrupted);
    }
    Ok(match outcome {
        Err(e) => Written::Stopped(format!("zerorepo code stopped: {e}")),
        Ok(outcome) => {
            side.prompt_tokens = outcome.usage.prompt_tokens;
            side.completion_tokens = outcome.usage.completion_tokens;
            match outcome.status {
                Status::Committed => Written::Changed,
                _ => {
                    side.reason = outcome.reason.clone();
                    Written::Unchanged
                }
            }
        }
    })
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}
