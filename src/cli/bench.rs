//! `zerorepo bench`: the nightly benchmark. Runs the fixture with the scripted provider (the
//! engine's own cost) and, with `--real`, with a real model followed by `zerorepo eval`; writes
//! `reports/nightly/DATE.json` and `.md`, compared with the previous report, a line of
//! `history.jsonl` and the plot `history.svg`. The figures and the comparison are [`crate::nightly`]'s.
//!
//! With `--corpus FILE` it is the other benchmark instead, the evaluation corpus (`corpus`):
//! a mode of the same command rather than a command of its own, since both are "measure the
//! engine" runs the nightly job starts, sharing the model, sandbox, work-directory and date
//! flags; the flags of one mode are refused in the other.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod code_corpus;
mod corpus;

use tokio_util::sync::CancellationToken;

use super::error::CliError;
use super::llm_args::LlmArgs;
use super::sandbox_args::SandboxArgs;
use super::validate::load_valid;
use crate::engine::{GenerateOptions, GenerateRequest, LoopSettings};
use crate::exit;
use crate::llm::LlmProvider;
use crate::llm::scripted::{Fault, ScriptEntry, ScriptedProvider};
use crate::nightly::{self, EngineRun, NightlyReport, NodeCounts, RealRun, RealRunFacts};
use crate::pipeline::{self, Summary};

/// Every how many function nodes the engine run injects a wrong first answer.
const WRONG_FIRST_EVERY: usize = 10;

/// The nightly benchmark: the engine's overhead on a fixture (scripted provider, wrong first
/// answers injected) and, with --real, a generation by a real model measured by the fixture's
/// hidden reference tests. With --corpus, the evaluation corpus instead: engine against the
/// one-shot baseline on every selected plan.
///
/// Nightly: writes DIR/DATE.json (schema: `zerorepo schema nightly`) and DIR/DATE.md, compares
/// every figure with the newest earlier report in DIR (better / worse / same within the
/// machine's noise), appends to DIR/history.jsonl and redraws DIR/history.svg. The real run's
/// output is WORK/real-DATE: a night cut short resumes from its checkpoint when run again the
/// same day.
///
/// Corpus (`--corpus fixtures/corpus.toml`): for each selected plan, a hand-written fixture is
/// used as it is; a plan from a pinned sdist is fetched with `pip download` run in the sandbox
/// (with the network, in hash-checking mode) into ~/.cache/zerorepo/corpus (or
/// $ZEROREPO_CORPUS_CACHE), its SHA-256 checked
/// before every use, unpacked (refused whole if a member is a link or leaves the directory),
/// extracted like `rpg extract` (`--no-examples` when `examples = false`, only `functions`
/// when given), and its reference built from the sdist's test directory with a `select.txt`
/// naming the listed files and node ids. Then `generate` and `generate --one-shot` run one
/// after the other (or the one `--side` names) into WORK/corpus-DATE/PLAN/{engine,one-shot} (same --llm and sandbox),
/// the plan's `support` modules are copied into both (never generated, never scored), and
/// each is measured like `zerorepo eval --reference`. A plan that cannot be fetched or
/// extracted is reported with the reason; the others go on. Prints a Markdown table (JSON
/// with --json) ending with the command that reproduces it; exit 1 when a plan or a side did
/// not finish. The nightly job runs `--corpus fixtures/corpus.toml --half test`.
///
/// Code corpus (`--code-corpus fixtures/code-corpus.toml`): change requests on real libraries
/// (the generation corpus's pinned sdists, fetched the same way). For each selected request,
/// the library's listed files are copied into a fresh git repository under
/// WORK/code-corpus-DATE/REQUEST, its suite run first, the request's bug planted when it is a
/// fix; then `zerorepo code --yes --git-commit` (the engine) and the same with
/// `--single-answer` (the baseline) each change their own copy, and each is judged by the
/// request's acceptance tests (never shown to the model) and the library's suite, in the
/// sandbox: correct, wrong or unchanged, with time and tokens. `--self-check` applies each
/// request's reference change instead of asking a model, and checks the acceptance tests fail
/// before it and pass after. Exit 1 when a request did not run (or, in a self-check, was not
/// correct). Interrupted (Ctrl-C), it writes the report of the requests that finished, names
/// the others, and exits 130.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("corpus_mode").args(["corpus", "code_corpus"])))]
pub(crate) struct Args {
    /// The fixture: a directory with rpg.json, script.jsonl and reference/tests.
    #[arg(
        long,
        default_value = "fixtures/ml_lib",
        conflicts_with = "corpus_mode"
    )]
    fixture: PathBuf,
    /// Also run the real model (--llm, default the embedded one) and `zerorepo eval`.
    #[arg(long, conflicts_with = "corpus_mode")]
    real: bool,
    /// Where the reports go.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "reports/nightly",
        conflicts_with = "corpus_mode"
    )]
    reports: PathBuf,
    /// Run the evaluation corpus in this file (fixtures/corpus.toml) instead of the nightly.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// Run the code corpus in this file (fixtures/code-corpus.toml) instead of the nightly.
    #[arg(long, value_name = "FILE")]
    code_corpus: Option<PathBuf>,
    /// With --corpus or --code-corpus: the half to run. Default `dev` (the half that may be
    /// tuned on); `test` is for reporting figures only.
    #[arg(long, value_enum, requires = "corpus_mode")]
    half: Option<crate::corpus::HalfChoice>,
    /// With --corpus: only this plan (repeatable); with --half too, it must be in that half.
    #[arg(long = "plan", value_name = "NAME", requires = "corpus")]
    plans: Vec<String>,
    /// With --code-corpus: only this request (repeatable); with --half too, it must be in
    /// that half.
    #[arg(long = "request", value_name = "NAME", requires = "code_corpus")]
    requests: Vec<String>,
    /// With --code-corpus: apply each request's reference change instead of asking a model,
    /// and check its acceptance tests fail before and pass after.
    #[arg(long, requires = "code_corpus")]
    self_check: bool,
    /// With --corpus or --code-corpus: which side runs: the engine, the baseline (`generate
    /// --one-shot` for --corpus, `code --single-answer` for --code-corpus) or both, the
    /// default. One side alone halves a tuning round; the report shows the other as "—".
    #[arg(
        long,
        value_enum,
        default_value = "both",
        requires = "corpus_mode",
        conflicts_with = "self_check"
    )]
    side: Sides,
    /// With --corpus or --code-corpus: also write the Markdown table to PATH and the JSON to
    /// PATH with `.json`.
    #[arg(long, value_name = "PATH", requires = "corpus_mode")]
    report: Option<PathBuf>,
    /// With --code-corpus and --report: keep each request the report's JSON (PATH.json)
    /// already holds, judged on every side this run asks for, and run only the rest: a run
    /// cut off (a machine lost, Ctrl-C) goes on where it stopped. The report must be of the
    /// same corpus, model and kind of run.
    #[arg(long, requires = "code_corpus", requires = "report")]
    resume: bool,
    /// Where the real run's and the corpus's outputs go (default ~/.cache/zerorepo/nightly).
    #[arg(long, value_name = "DIR")]
    work: Option<PathBuf>,
    /// Nodes generated at once in the engine run (default: one per core).
    #[arg(long, conflicts_with = "corpus_mode",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    jobs: Option<usize>,
    /// Nodes generated at once in the real run and in both sides of a corpus plan
    /// (`generate`'s default; the embedded model decodes their requests together).
    #[arg(long, default_value_t = crate::engine::DEFAULT_JOBS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    real_jobs: usize,
    /// The report's date (YYYY-MM-DD; default today, UTC).
    #[arg(long)]
    date: Option<String>,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Print the report as JSON on stdout instead of Markdown.
    #[arg(long)]
    json: bool,
}

/// Which sides of each corpus plan or request run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Sides {
    Both,
    /// The engine only (`generate`, `code`).
    Engine,
    /// The baseline only (`generate --one-shot`, `code --single-answer`).
    Baseline,
}

impl Sides {
    fn engine(self) -> bool {
        self != Sides::Baseline
    }

    fn baseline(self) -> bool {
        self != Sides::Engine
    }
}

pub(crate) async fn run(args: Args, quiet: bool) -> Result<u8, CliError> {
    let date = args
        .date
        .clone()
        .unwrap_or_else(|| chrono::Utc::now().format("%Y-%m-%d").to_string());
    if let Some(file) = &args.corpus {
        return corpus::run(&args, file, &date, quiet).await;
    }
    if let Some(file) = &args.code_corpus {
        return code_corpus::run(&args, file, &date).await;
    }
    let script = args.fixture.join("script.jsonl");
    let entries = read_script(&script)?;
    let cancel = CancellationToken::new();
    super::generate::spawn_signal_handler(cancel.clone());
    let mut report = NightlyReport {
        date: date.clone(),
        version: env!("CARGO_PKG_VERSION").into(),
        fixture: args.fixture.display().to_string(),
        cpus: report_cpus(),
        note: None,
        engine: None,
        real: None,
    };
    let mut commands = vec![format!(
        "zerorepo bench --fixture {}{} --date {date}",
        args.fixture.display(),
        if args.real {
            format!(" --real --real-jobs {}", args.real_jobs)
        } else {
            String::new()
        }
    )];
    report.engine = Some(engine_run(&args, entries, &cancel).await?);
    if args.real {
        let work = args.work.clone().unwrap_or_else(default_work);
        let out = work.join(format!("real-{date}"));
        commands.push(format!("# the real run's output: {}", out.display()));
        report.real = Some(real_run(&args, &out, &cancel).await?);
    }
    if cancel.is_cancelled() {
        eprintln!("interrupted: no report written; run the same command again to resume");
        return Ok(exit::INTERRUPTED);
    }
    let markdown = write_reports(&args.reports, &report, &commands)?;
    if args.json {
        print!("{}", super::render::json(&report)?);
    } else {
        print!("{markdown}");
    }
    Ok(exit::OK)
}

fn report_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Where a corpus run of `date` keeps its outputs: `--work` (or the nightly directory), then
/// `NAME-DATE`.
fn run_dir(work: Option<&Path>, name: &str, date: &str) -> PathBuf {
    work.map(Path::to_path_buf)
        .unwrap_or_else(default_work)
        .join(format!("{name}-{date}"))
}

fn default_work() -> PathBuf {
    crate::programs::venv_dir()
        .and_then(|v| v.parent().map(|c| c.join("nightly")))
        .unwrap_or_else(|| PathBuf::from("nightly"))
}

fn read_script(path: &Path) -> Result<Vec<ScriptEntry>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                CliError::bad_input(format!("{}, line {}: {e}", path.display(), i + 1))
            })
        })
        .collect()
}

/// The script with a wrong first answer injected into every tenth node that has an
/// implementation; the names of those nodes.
fn with_faults(mut entries: Vec<ScriptEntry>) -> (Vec<ScriptEntry>, Vec<String>) {
    let mut nodes: Vec<String> = entries
        .iter()
        .filter(|e| e.role == crate::llm::Role::Impl && e.fault.is_none())
        .map(|e| e.node.clone())
        .collect();
    nodes.dedup();
    let chosen: Vec<String> = nodes.into_iter().step_by(WRONG_FIRST_EVERY).collect();
    for entry in &mut entries {
        if entry.role == crate::llm::Role::Impl && chosen.contains(&entry.node) {
            entry.fault = Some(Fault::WrongFirst);
        }
    }
    let faults = chosen
        .iter()
        .map(|n| format!("wrong first answer: {n}"))
        .collect();
    (entries, faults)
}

/// One generation of the fixture. With `progress`, a line per node on stderr (the real run
/// takes the better part of an hour); the engine run's seconds need none.
async fn generate(
    args: &Args,
    out: &Path,
    llm: Arc<dyn LlmProvider>,
    jobs: usize,
    progress: bool,
    cancel: &CancellationToken,
) -> Result<Summary, CliError> {
    let valid = Arc::new(load_valid(&args.fixture.join("rpg.json"))?);
    let mut view = crate::progress::ProgressView::new(false, !progress);
    let request = GenerateRequest {
        rpg: valid,
        llm,
        runner: args.sandbox.runner()?,
        options: GenerateOptions {
            out: out.to_path_buf(),
            start_from: None,
            settings: LoopSettings::default(),
            jobs,
            flush_every: crate::workspace::publish::FLUSH_EVERY,
            phases: view.phases(),
        },
        cancel: cancel.clone(),
    };
    let summary = pipeline::generate(request, |event| view.show(&event)).await;
    view.finish();
    summary.map_err(|e| CliError::from(e).context("the benchmark's generation stopped"))
}

async fn engine_run(
    args: &Args,
    entries: Vec<ScriptEntry>,
    cancel: &CancellationToken,
) -> Result<EngineRun, CliError> {
    let (entries, faults) = with_faults(entries);
    let llm: Arc<dyn LlmProvider> = Arc::new(ScriptedProvider::from_entries(entries));
    let scratch = tempfile::Builder::new()
        .prefix("zerorepo-bench-")
        .tempdir()
        .map_err(|e| CliError::Failed(e.into()))?;
    eprintln!("== engine run (scripted) -> {}", scratch.path().display());
    let started = Instant::now();
    let jobs = args.jobs.unwrap_or(report_cpus());
    let summary = generate(args, &scratch.path().join("out"), llm, jobs, false, cancel).await?;
    let wall_s = started.elapsed().as_secs_f64();
    let work = &summary.nodes.work;
    let ms = |x: u64| x as f64 / 1000.0;
    let waiting = work.totals.model_ms + work.totals.sandbox_ms;
    let loops_ms = summary
        .nodes
        .duration_ms
        .saturating_sub(summary.assembly_ms);
    Ok(EngineRun {
        jobs,
        faults,
        wall_s,
        loops_s: ms(loops_ms),
        assembly_s: ms(summary.assembly_ms),
        sandbox_s: ms(work.totals.sandbox_ms),
        model_s: ms(work.totals.model_ms),
        engine_s: ms(work.node_ms.saturating_sub(waiting)),
        sandbox_runs: work.totals.sandbox_runs,
        runs_per_s: f64::from(work.totals.sandbox_runs) / wall_s.max(1e-9),
        nodes: counts(&summary),
    })
}

fn counts(summary: &Summary) -> NodeCounts {
    NodeCounts {
        passed: summary.nodes.passed,
        needs_review: summary.nodes.needs_review,
        failed: summary.nodes.failed,
        skipped: summary.nodes.skipped,
    }
}

async fn real_run(
    args: &Args,
    out: &Path,
    cancel: &CancellationToken,
) -> Result<RealRun, CliError> {
    let resumed = out.join(crate::layout::JOURNAL).is_file();
    let llm = args.llm.provider()?;
    eprintln!(
        "== real run ({}) -> {}{}",
        llm.name(),
        out.display(),
        if resumed { " (resuming)" } else { "" }
    );
    let provider = llm.name();
    let started = Instant::now();
    generate(args, out, llm, args.real_jobs, true, cancel).await?;
    let wall_s = started.elapsed().as_secs_f64();
    eprintln!(
        "== zerorepo eval {} --reference {}",
        out.display(),
        args.fixture.join("reference").display()
    );
    let reference = crate::eval::Reference::load(out, &args.fixture.join("reference"), None)?;
    let runner = args.sandbox.runner()?;
    let evaluation = crate::eval::evaluate(&reference, runner.as_ref(), cancel).await;
    runner.shutdown().await;
    let evaluation = evaluation.map_err(|e| CliError::from(e).context("the evaluation stopped"))?;
    let records = crate::checkpoint::load_compact(out)
        .map_err(|e| CliError::Failed(e.into()))?
        .unwrap_or_default();
    let facts = RealRunFacts {
        provider,
        jobs: args.real_jobs,
        wall_s,
        reference_passed: evaluation.overall.passed,
        reference_total: evaluation.overall.total,
        resumed,
    };
    Ok(RealRun::from_records(facts, &records))
}

/// Writes the night's files and returns the Markdown report.
fn write_reports(
    dir: &Path,
    report: &NightlyReport,
    commands: &[String],
) -> Result<String, CliError> {
    let failed = |e: std::io::Error| {
        CliError::Failed(
            anyhow::Error::new(e).context(format!("writing the report in {}", dir.display())),
        )
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    let previous = nightly::previous(dir, &report.date);
    let comparisons = previous
        .as_ref()
        .map(|(_, before)| nightly::compare(before, report));
    let against = previous
        .as_ref()
        .zip(comparisons.as_deref())
        .map(|((path, _), c)| (path.as_path(), c));
    let markdown = nightly::render_markdown(report, against, commands);
    let json = serde_json::to_string_pretty(report)? + "\n";
    std::fs::write(dir.join(format!("{}.json", report.date)), &json).map_err(failed)?;
    std::fs::write(dir.join(format!("{}.md", report.date)), &markdown).map_err(failed)?;
    let history = dir.join("history.jsonl");
    let kept: String = std::fs::read_to_string(&history)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.contains(&format!("\"date\":\"{}\"", report.date)))
        .map(|l| format!("{l}\n"))
        .collect();
    let history_text = kept + &nightly::history_line(report);
    std::fs::write(&history, &history_text).map_err(failed)?;
    std::fs::write(dir.join("history.svg"), nightly::history_svg(&history_text)).map_err(failed)?;
    Ok(markdown)
}
