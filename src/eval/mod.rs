//! `zerorepo eval`: a generated repository measured by reference tests the engine never saw.
//!
//! The tests the engine writes come from the same model as the code, and a node passes when
//! its own tests pass, so "every node passed" says the code agrees with itself, not that it is
//! right. Quality is judged here, and only here, by an independent suite: the reference tests
//! of a fixture (`DIR/tests/test_<module>.py`), written against the plan by hand and never
//! shown to the engine. A reference taken from a real library's own suite may narrow it to
//! some files and node ids with `DIR/select.txt` (`select`): the rest of its directory is
//! there for the selected tests' helpers and data, and neither runs nor counts.
//!
//! The evaluation never changes the output directory: the repository is copied to a scratch
//! directory, the reference tests go under [`REFERENCE_DIR`] there (so the generated tests
//! are not run and no reference file replaces a generated one), and each reference file runs
//! through a [`TestRunner`], that is in the sandbox: the code under test is generated, so it
//! is as untrusted here as during generation. No `conftest.py` is added for imports: every
//! runner starts pytest in the repository with `src/` and the root first on the path (the
//! same src layout the generated tests rely on).
//!
//! Each test is attributed to the plan leaf whose name it carries (`test_calculate_mean_empty`
//! belongs to `calculate_mean`), so a score reads per node, next to the node's generation
//! status, and per subgraph. What a score is worth: the generated code runs in pytest's own
//! process, so a repository written to cheat could forge its outcomes; the figure measures a
//! model's mistakes, not an adversary's.

mod cases;
mod decisions;
mod disputes;
mod score;
mod scratch;
mod select;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::localize::{LocalizeError, Statuses};
use crate::records::NodeStatus;
use crate::rpg::Rpg;
use crate::sandbox::{SandboxError, TestRunner};

pub use cases::CaseOutcome;
pub use decisions::{DecisionRow, Decisions};
pub use disputes::Disputes;
pub use scratch::REFERENCE_DIR;
pub use select::SELECTION_FILE;

/// Why an evaluation did not produce its figures. A rejected input says everything in its
/// message (the command line keeps only that); a failure names what failed and keeps the
/// cause as its source, printed once after it.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{0} is not a directory (give an output directory of `zerorepo generate`)")]
    NoOutput(PathBuf),
    #[error("{0} has no tests/ directory (a reference holds tests/test_<module>.py)")]
    NoReferenceTests(PathBuf),
    #[error("{0} holds no test_*.py file")]
    EmptyReference(PathBuf),
    #[error("{path}: {problem}")]
    Selection { path: PathBuf, problem: String },
    #[error("{0}")]
    Plan(LocalizeError),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot prepare the scratch copy from {path}")]
    Scratch {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the sandbox is not ready")]
    NotReady(#[source] SandboxError),
    #[error("the sandbox failed on {file}")]
    Sandbox {
        file: String,
        #[source]
        source: SandboxError,
    },
    #[error("interrupted before every reference file ran")]
    Interrupted,
}

impl EvalError {
    /// The input was rejected before anything ran (exit 2 on the command line).
    pub fn is_bad_input(&self) -> bool {
        match self {
            EvalError::NoOutput(_)
            | EvalError::NoReferenceTests(_)
            | EvalError::EmptyReference(_)
            | EvalError::Selection { .. } => true,
            EvalError::Plan(e) => e.is_bad_input(),
            _ => false,
        }
    }
}

/// What is evaluated: the output directory, its plan and statuses, and the reference files
/// with the tests each declares. Loading it checks the input; nothing runs yet.
#[derive(Debug)]
pub struct Reference {
    out: PathBuf,
    dir: PathBuf,
    rpg: Rpg,
    statuses: Statuses,
    /// The generation's checkpoint, for the disputed tests it records.
    records: Option<crate::records::NodeRecords>,
    files: Vec<ReferenceFile>,
}

/// One `tests/test_<module>.py` of the reference.
#[derive(Debug)]
struct ReferenceFile {
    /// The file name, `test_batching.py`.
    name: String,
    /// The tests its source declares (`test_x`, `TestK::test_m`), read as text, never run:
    /// a file that fails to import still counts every test it holds.
    declared: Vec<String>,
    /// The node ids within the file that run ([`SELECTION_FILE`]); empty: the whole file.
    nodes: Vec<String>,
}

impl Reference {
    /// The plan is `rpg` when given, else the one `zerorepo generate` left in `out`
    /// ([`crate::localize::load_output_dir`]); statuses come from its checkpoint.
    pub fn load(out: &Path, dir: &Path, rpg: Option<&Path>) -> Result<Reference, EvalError> {
        if !out.is_dir() {
            return Err(EvalError::NoOutput(out.to_path_buf()));
        }
        let tests = dir.join("tests");
        if !tests.is_dir() {
            return Err(EvalError::NoReferenceTests(dir.to_path_buf()));
        }
        let (rpg, statuses, records) =
            crate::localize::load_output_dir_with_records(out, rpg).map_err(EvalError::Plan)?;
        let selection = read_selection(dir)?;
        let files = reference_files(&tests, selection.as_ref())?;
        if files.is_empty() {
            return Err(EvalError::EmptyReference(tests));
        }
        Ok(Reference {
            out: out.to_path_buf(),
            dir: dir.to_path_buf(),
            rpg,
            statuses,
            records,
            files,
        })
    }
}

/// `DIR/select.txt` when there is one ([`select`]).
fn read_selection(dir: &Path) -> Result<Option<select::Selection>, EvalError> {
    let path = dir.join(SELECTION_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(EvalError::Read { path, source }),
    };
    select::parse(&text)
        .map(Some)
        .map_err(|problem| EvalError::Selection { path, problem })
}

/// The `test_*.py` files directly in `tests`, by name, with the tests each declares; with a
/// selection, only the files it names, each narrowed to its node ids.
fn reference_files(
    tests: &Path,
    selection: Option<&select::Selection>,
) -> Result<Vec<ReferenceFile>, EvalError> {
    let read_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EvalError::Read { path, source }
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(tests).map_err(read_err(tests))? {
        let path = entry.map_err(read_err(tests))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !(name.starts_with("test_") && name.ends_with(".py") && path.is_file()) {
            continue;
        }
        let nodes = match selection.map(|s| s.get(name)) {
            Some(None) => continue,
            Some(Some(nodes)) => nodes.clone(),
            None => Vec::new(),
        };
        let source = std::fs::read_to_string(&path).map_err(read_err(&path))?;
        files.push(ReferenceFile {
            name: name.to_string(),
            declared: select::narrow(cases::declared_tests(&source), &nodes),
            nodes,
        });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(missing) = selection
        .into_iter()
        .flat_map(|s| s.keys())
        .find(|name| !files.iter().any(|f| &f.name == *name))
    {
        return Err(EvalError::Selection {
            path: tests.to_path_buf(),
            problem: format!("{SELECTION_FILE} names {missing}, which is not a test file here"),
        });
    }
    Ok(files)
}

/// The result of an evaluation, overall and broken down; `--json` prints it as it is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Evaluation {
    /// The output directory evaluated.
    pub out: String,
    /// The reference directory whose `tests/` ran.
    pub reference: String,
    /// The backend that ran the tests; `none` means nothing was isolated.
    pub sandbox: String,
    /// Every reference test, whether or not it names a node.
    pub overall: Tally,
    /// Tests attributed to a node, per subgraph, in plan order.
    pub subgraphs: Vec<SubgraphScore>,
    /// The leaves that reference tests are attributed to, in plan order.
    pub nodes: Vec<NodeScore>,
    /// Per reference file, by name.
    pub files: Vec<FileScore>,
    /// Ids of the leaves no reference test is attributed to: the reference says nothing of them.
    pub untested_leaves: Vec<crate::rpg::NodeId>,
    /// Every reference test, file by file.
    pub tests: Vec<TestResult>,
    /// The disputed tests of the generation judged by the reference implementation, when
    /// the reference has one (`DIR/src/`) and the checkpoint records votes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disputes: Option<Disputes>,
    /// The nodes whose kept code is not the greedy answer, each scored with the greedy answer
    /// put back, and the matrix per kind of decision; `null` when none departed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Decisions>,
}

/// Counts of outcomes. Errors (a collection error, an import that fails, a timeout) and
/// skips are not passes: the rate is `passed / total`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct Tally {
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
    /// `passed / total`, from 0 to 1; `null` when there is no test.
    pub pass_rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SubgraphScore {
    pub subgraph: String,
    #[serde(flatten)]
    pub tally: Tally,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NodeScore {
    pub id: crate::rpg::NodeId,
    pub name: String,
    pub subgraph: String,
    /// The node's status in the generation checkpoint; `null` when none is recorded.
    pub status: Option<NodeStatus>,
    #[serde(flatten)]
    pub tally: Tally,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileScore {
    /// The reference file, `test_batching.py`.
    pub file: String,
    #[serde(flatten)]
    pub tally: Tally,
    /// Why the file as a whole did not run (collection error, timeout), in one line.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TestResult {
    pub file: String,
    /// The test as pytest names it within its file: `test_x`, `test_x[2]`, `TestK::test_m`.
    pub test: String,
    /// The id of the leaf the test is attributed to; `null` when its name matches none.
    pub node: Option<crate::rpg::NodeId>,
    pub outcome: CaseOutcome,
    /// For a test that did not pass: pytest's one-line reason, when it gave one.
    pub reason: Option<String>,
}

/// Runs every reference file against a scratch copy of the output in `runner`, then scores
/// the outcomes. The runner is shut down on every exit, error or not; the scratch copy is
/// removed when this returns.
pub async fn evaluate(
    reference: &Reference,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Evaluation, EvalError> {
    let result = evaluate_in(reference, runner, cancel).await;
    runner.shutdown().await;
    result
}

/// [`evaluate`] without the runner's shutdown.
async fn evaluate_in(
    reference: &Reference,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Evaluation, EvalError> {
    let (runs, sandbox) = run_all(reference, runner, cancel).await?;
    let disputes = match &reference.records {
        Some(records) => disputes::judge(&reference.dir, records, runner, cancel).await?,
        None => None,
    };
    let evaluation = score::score(reference, &runs, sandbox);
    let decisions = decisions::score(reference, &evaluation, runner, cancel).await?;
    Ok(Evaluation {
        disputes,
        decisions,
        ..evaluation
    })
}

/// Each reference file's run, in file order, and the name of the sandbox that ran them.
async fn run_all(
    reference: &Reference,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<(Vec<cases::FileRun>, String), EvalError> {
    runner.check_ready().await.map_err(EvalError::NotReady)?;
    let scratch = scratch::prepare(&reference.out, &reference.dir.join("tests"))?;
    run_files(reference, scratch.path(), runner, cancel).await
}

/// Each reference file's run in `scratch` (a copy made by [`scratch::prepare`]), in file
/// order, with the name of the sandbox that ran it.
async fn run_files(
    reference: &Reference,
    scratch: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<(Vec<cases::FileRun>, String), EvalError> {
    let mut runs = Vec::new();
    let mut sandbox = runner.name().to_string();
    for file in &reference.files {
        if cancel.is_cancelled() {
            return Err(EvalError::Interrupted);
        }
        let run = run_file(file, scratch, runner, cancel).await?;
        if run.cancelled {
            return Err(EvalError::Interrupted);
        }
        sandbox.clone_from(&run.sandbox);
        runs.push(cases::read_run(&file.name, &file.declared, &run));
    }
    Ok((runs, sandbox))
}

/// One reference file's run: the file whole, or each of its selected node ids, merged.
async fn run_file(
    file: &ReferenceFile,
    scratch: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<crate::sandbox::TestRun, EvalError> {
    let rel = format!("{REFERENCE_DIR}/{}", file.name);
    let targets: Vec<String> = match file.nodes.as_slice() {
        [] => vec![rel],
        nodes => nodes.iter().map(|n| format!("{rel}::{n}")).collect(),
    };
    let mut runs = Vec::new();
    for target in &targets {
        let run = runner
            .run_tests(scratch, target, cancel)
            .await
            .map_err(|source| EvalError::Sandbox {
                file: file.name.clone(),
                source,
            })?;
        let stop = run.cancelled;
        runs.push(run);
        if stop {
            break;
        }
    }
    select::merge(runs).ok_or(EvalError::Interrupted)
}
