//! `zerorepo code`: a change to an existing repository that is either verified and written
//! whole, or not written at all.
//!
//! The flow, each step recorded in the audit trail ([`audit`]) as it happens:
//! 1. **Error-first**: the repository's diagnostic command ([`crate::detect`]) runs once, in
//!    the sandbox, on a scratch copy; its real errors go to the planner. The request's
//!    examples are read ([`examples`]: `'A B' becomes 'a-b'`, `f(a)` returns `b`, doctests,
//!    raises `E`); a bug report's are run first ([`accept`]), and one that passes before the
//!    change does not reproduce: the trail says so and the suite stays its only check.
//! 2. **Plan**: the model turns the spec into a task graph ([`plan`]); planning runs nothing.
//!    Each Python task's description ends with the request's examples, and a task on a
//!    module that defines none of the functions it names moves to the one that does
//!    ([`ground`]). A plan file given by the user replaces this step.
//! 3. **Review**: the plan and each task's risk (rules, never lower than the model said) go
//!    to an [`Approver`], which approves, edits or declines it.
//! 4. **Risk gate**: a REFUSED task (a path outside the repository) stops the run; a HIGH
//!    one needs the approver's explicit confirmation. Then a request that gives no example
//!    and asks for no new thing, on a repository whose tests pass, is reproduced
//!    ([`reproduce`]): the model's tests of it run on the repository as it is, and those that
//!    fail there are kept for step 6; when none fails (asked twice), nothing is staged and the
//!    run ends saying so, since no check could tell the change from the code as it is.
//! 5. **Stage** ([`staging`]): tasks run in dependency order into an in-memory [`Overlay`].
//!    Each prompt is built to the model's context ([`budget`]; the file cut to what the task
//!    touches, [`focus`]). New and short files are answered whole; longer Python files by
//!    symbol ([`anchor`]: a new definition inserted after a named one or at the end, a
//!    changed one replaced by name, the rest byte for byte), the answer begun at the
//!    definition the request or the failure names ([`start`]); SEARCH blocks are short
//!    ([`answer`]). An answer that cannot be used (cut off, not in the file, a module that
//!    does not parse, a whole file without the function the task adds, which is then asked
//!    in part, begun at it) is asked again with the reason within `max_corrections`; when they are
//!    spent the run rolls back with it (the approver may allow one more try); a task that
//!    updates the repository's tests, or writes a type stub, is left as it is instead.
//! 6. **Verify**: a new public function is added to its module's literal `__all__` when the
//!    module keeps one ([`exports`]); the overlay is materialised in a scratch copy and the
//!    profile's checks run there, in the sandbox; then, when the copy has Python files, the
//!    request's examples, as acceptance tests written into that copy only (never into the
//!    overlay, so never committed), in every profile (a list given to a parameter named
//!    `iterable` is given again as an iterator); a new public function is called on inputs
//!    the model picks, asserting the values it expects, and fails by crashing in its own
//!    code or by returning where the request names the error it raises ([`probe`]; when
//!    the asserts dispute as many calls as they confirm, or, for one no example covers, no
//!    call reaches it, asked twice, the change is not written; one its
//!    examples call is probed once they pass, and weighed against them; last, when all else
//!    passed, the probed functions run beside versions written apart from the change, and
//!    one that such versions agree against is not written, [`rival`]); the tests kept in
//!    step 4 must pass, one of them at least, the module's functions that take an iterable
//!    checked again with an iterator on each call ([`reproduce::render`]).
//!    When they fail, each definition of the repository the change altered is put back as it
//!    was, one at a time, and stays back when fewer checks fail ([`trim`]: a small model's
//!    correction re-types and breaks neighbours it was not asked about).
//! 7. **Self-correct** ([`correct`]): on failure the model gets the error, cut to its
//!    failures ([`failures`]), and the file it points at ([`fault`]; for a failing example,
//!    the file its function is or should be in), up to `max_corrections` rounds shared with
//!    step 5; each round's few answers are verified and the best kept (when a check could
//!    not import a name from the file, begun as that name's definition); an unusable
//!    correction is asked again with the reason. A change is written only
//!    when the checks and the examples pass; otherwise the reason names the example that
//!    failed and why.
//! 8. **Commit or roll back**: the overlay commits all at once, refusing files changed on
//!    disk since they were read; otherwise nothing is written. An intent record ([`intent`])
//!    holds the old content of every path until the last write is done, so a commit cut off
//!    by kill -9 is rolled back by the next command on the repository.
//!
//! A request too large for any prompt is refused before step 1 ([`budget::check_spec`]).
//! The repository is only read until step 8; a cancelled run stops between steps, before it.
//! The repository is hostile: every read, write and delete resolves beneath its root with no
//! symbolic link on the way ([`crate::fsutil::beneath`]), no path inside `.git` or
//! `.zerorepo` (in any case) or with a control character is ever a task's, and the scratch
//! copies for the sandbox hold its regular files only (links are left out).

mod accept;
mod anchor;
mod answer;
pub mod audit;
mod budget;
mod built_on;
mod checks;
mod correct;
mod examples;
mod exports;
mod failures;
pub mod fault;
mod focus;
mod fresh;
mod ground;
pub mod intent;
mod outcome;
pub mod plan;
mod probe;
mod prompt;
mod reproduce;
mod rival;
mod staging;
mod start;
mod trim;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::detect::Commands;
use crate::fsutil::Workspace;
use crate::llm::{LlmProvider, LlmRequest, Usage};
use crate::sandbox::TestRunner;
use crate::workspace::overlay::Overlay;
use audit::Audit;
use checks::{directories, list_files, profile_commands, run_check, scratch_copy};
pub(crate) use outcome::{Check, LeftFile, Outcome, Status};
use plan::{ChangePlan, Risk, RiskContext, Task, TaskKind};

/// What kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Change an existing repository as the spec says.
    Improve,
    /// Create a project from the spec in an empty directory.
    Generate,
    /// No spec: make the repository's diagnostic command pass.
    SelfHeal,
}

/// What verification runs on the staged change (defined with the config file, which can set it).
pub use crate::config::Profile;

#[derive(Debug, Clone)]
pub struct Options {
    pub mode: Mode,
    pub profile: Profile,
    pub max_corrections: u32,
    /// Print the diff, write nothing (not even the audit trail).
    pub dry_run: bool,
    /// Under a non-interactive approver, run HIGH-risk tasks instead of refusing them.
    pub allow_high_risk: bool,
    /// Commit the written files to git when the repository is a git work tree.
    pub git_commit: bool,
    /// Write the reviewed plan here and stop before staging.
    pub plan_out: Option<PathBuf>,
    /// The baseline `bench --code-corpus` compares with: each task asked once and applied,
    /// no examples, checks or correction rounds.
    pub single_answer: bool,
}

pub struct Request {
    pub repo: PathBuf,
    /// The change, in words (empty in self-heal mode).
    pub spec: String,
    /// A plan to use instead of asking the model (`--plan`).
    pub plan: Option<ChangePlan>,
    pub llm: Arc<dyn LlmProvider>,
    pub runner: Arc<dyn TestRunner>,
    pub options: Options,
    pub cancel: CancellationToken,
}

/// A task's risk as the rules judged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assessed {
    pub risk: Risk,
    pub reasons: Vec<String>,
}

/// The plan as it is shown for approval.
#[derive(Debug, Clone, Serialize)]
pub struct Reviewed {
    pub plan: ChangePlan,
    /// One per task, in plan order.
    pub risks: Vec<Assessed>,
}

/// What an approver decided about a plan.
pub enum Review {
    /// Run this plan (the one shown, or the approver's edit of it).
    Approve(ChangePlan),
    Decline,
}

/// The person (or policy) that approves: a terminal dialogue, or `--yes`.
pub trait Approver: Send {
    fn review(&mut self, plan: &Reviewed) -> Review;
    /// A HIGH-risk task about to run, after the plan was approved.
    fn confirm_high_risk(&mut self, task: &Task, reasons: &[String]) -> bool;
    /// A task's answer could not be used and the correction rounds are spent: let the model
    /// try once more with the reason? (the seed's "stop and ask"; `false` rolls the run back).
    fn repair(&mut self, task: &Task, failure: &str) -> bool;
}

#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("{0} is not empty; `--mode generate` creates a project in an empty directory")]
    NotEmpty(PathBuf),
    #[error("self-heal needs a diagnostic command, and no stack was detected in {0}")]
    NothingToHeal(PathBuf),
    #[error("the plan: {0}")]
    Plan(#[from] plan::PlanError),
    #[error(transparent)]
    Detect(#[from] crate::detect::DetectError),
    #[error(transparent)]
    Audit(#[from] audit::AuditError),
    #[error("the sandbox: {0}")]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error(transparent)]
    Prompt(#[from] crate::prompts::PromptError),
    #[error("the model: {0}")]
    Llm(#[from] crate::llm::LlmError),
    #[error(transparent)]
    Overlay(#[from] crate::workspace::overlay::OverlayError),
    #[error(transparent)]
    Git(#[from] crate::workspace::git::GitError),
    #[error("cannot write the plan to {path}: {source}")]
    PlanOut {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Refused(String),
    #[error("the intent record: {0}")]
    Intent(#[from] intent::IntentError),
    /// A request too large for the model's context, found before any model call.
    #[error(transparent)]
    TooLarge(#[from] budget::TooLarge),
}

impl From<prompt::FitError> for CodeError {
    fn from(error: prompt::FitError) -> CodeError {
        match error {
            prompt::FitError::Template(e) => CodeError::Prompt(e),
            prompt::FitError::TooLarge(e) => CodeError::TooLarge(e),
        }
    }
}

impl CodeError {
    /// Errors in what the user gave (the directory, the plan file, the mode).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            CodeError::NotADirectory(_)
                | CodeError::NotEmpty(_)
                | CodeError::NothingToHeal(_)
                | CodeError::Plan(_)
                | CodeError::Refused(_)
                | CodeError::TooLarge(_)
        )
    }
}

/// Directories never copied, listed or planned over: version control, zerorepo's own,
/// dependencies and build output.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".zerorepo",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
];

/// zerorepo's own state in `repo` (`.zerorepo`, `.zerorepo/work`) must be directories of
/// the repository's, not links elsewhere (the trail and the staging copy would be written
/// wherever they point): refused before anything is read or written.
pub(crate) fn check_state_dir(repo: &Path) -> Result<(), CodeError> {
    for state in [".zerorepo", ".zerorepo/work"] {
        if std::fs::symlink_metadata(repo.join(state)).is_ok_and(|m| !m.is_dir()) {
            return Err(CodeError::Refused(format!(
                "{} is a symbolic link or a file, not zerorepo's directory; remove it first",
                repo.join(state).display()
            )));
        }
    }
    Ok(())
}

/// Runs a change to the end. `Err` only when nothing could start (bad input, a broken
/// sandbox or model); every later failure is an [`Outcome`] with nothing written.
pub async fn run(request: Request, approver: &mut dyn Approver) -> Result<Outcome, CodeError> {
    let mut run = Run::start(&request)?;
    let outcome = run.drive(&request, approver).await;
    // Whatever stopped the run before its commit, the trail ends saying nothing was written.
    let reason = match &outcome {
        Ok(o) if matches!(o.status, Status::Committed | Status::DryRun) => None,
        Ok(o) => Some(o.reason.clone().unwrap_or_default()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(reason) = reason {
        run.audit
            .record("rollback", None, "nothing written", &reason, "", None)?;
    }
    outcome
}

/// The state of one run: what it knows of the repository and what it staged.
struct Run {
    audit: Audit,
    overlay: Overlay,
    files: Vec<String>,
    commands: Vec<Commands>,
    usage: Usage,
    /// The tokens of the last model call, for its audit entry.
    last_usage: Option<Usage>,
    /// The request's examples, checked as acceptance tests.
    accept: accept::Acceptance,
    outcome: Outcome,
    /// Every file's staged texts that a verification saw fail: a correction that gives one
    /// back is asked again instead of run (the 1.5B model answered two correction rounds
    /// with the code that had just failed, token for token).
    failed_texts: std::collections::BTreeSet<(String, String)>,
    /// The calls of the change's new functions that no example covers ([`probe`]).
    probes: probe::Probes,
    /// The model's tests of the request that failed before the change ([`reproduce`]).
    reproduction: reproduce::Reproduction,
    /// Versions of the change's new functions written apart from it ([`rival`]).
    rivals: rival::Rivals,
    /// The model's calls of new functions, by the prompt that asked them: kept across the
    /// trials that put [`Run::probes`] back, so that a prompt asked again is not answered
    /// again.
    probe_answers: std::collections::BTreeMap<String, String>,
}

impl Run {
    fn start(request: &Request) -> Result<Run, CodeError> {
        let repo = &request.repo;
        if request.options.mode == Mode::Generate && !repo.exists() {
            std::fs::create_dir_all(repo)?;
        }
        if !repo.is_dir() {
            return Err(CodeError::NotADirectory(repo.clone()));
        }
        check_state_dir(repo)?;
        // Every task and correction quotes the request: one too large for any prompt is
        // said now, before any work, not as a run stopped by the model.
        budget::check_spec(&request.spec, &prompt::bare_template()?)?;
        let files = list_files(repo)?;
        if request.options.mode == Mode::Generate && !files.is_empty() {
            return Err(CodeError::NotEmpty(repo.clone()));
        }
        let commands = crate::detect::detect(repo)?;
        if request.options.mode == Mode::SelfHeal && commands.is_empty() {
            return Err(CodeError::NothingToHeal(repo.clone()));
        }
        let audit = Audit::open((!request.options.dry_run).then_some(repo.as_path()))?;
        let history = (!request.options.dry_run).then(|| repo.join(audit::HISTORY_FILE));
        Ok(Run {
            audit,
            overlay: Overlay::new(Workspace::new(repo)),
            files,
            commands,
            usage: Usage::default(),
            last_usage: None,
            accept: accept::Acceptance::default(),
            outcome: Outcome {
                status: Status::RolledBack,
                reason: None,
                diagnosis: None,
                plan: None,
                files: Vec::new(),
                checks: Vec::new(),
                examples: Vec::new(),
                left: Vec::new(),
                corrections: 0,
                git_commit: None,
                usage: Usage::default(),
                history,
            },
            failed_texts: std::collections::BTreeSet::new(),
            probes: probe::Probes::default(),
            reproduction: reproduce::Reproduction::default(),
            rivals: rival::Rivals::default(),
            probe_answers: std::collections::BTreeMap::new(),
        })
    }

    async fn drive(
        &mut self,
        request: &Request,
        approver: &mut dyn Approver,
    ) -> Result<Outcome, CodeError> {
        let diagnosis = self.diagnose(request).await?;
        self.outcome.diagnosis = diagnosis.clone();
        let spec = match request.options.mode {
            Mode::SelfHeal => match &diagnosis {
                Some(check) if check.passed => {
                    return Ok(self.end(Status::NothingToDo, "the diagnostic already passes"));
                }
                Some(check) => format!(
                    "Make the command `{}` pass. It fails now; its output is below.",
                    check.command
                ),
                None => unreachable!("self-heal starts only where a diagnostic exists"),
            },
            _ => request.spec.clone(),
        };
        if request.options.mode != Mode::SelfHeal && !request.options.single_answer {
            self.find_examples(request, &spec).await?;
        }
        if request.cancel.is_cancelled() {
            return Ok(self.end(Status::Interrupted, "interrupted before planning"));
        }
        let plan = match &request.plan {
            Some(plan) => {
                self.audit
                    .record("plan", None, "imported", "from the plan file", "", None)?;
                plan.clone()
            }
            None => match self.ask_plan(request, &spec, diagnosis.as_ref()).await? {
                Ok(plan) => {
                    let plan = self.retarget(ground::normalise(plan, &self.files), &spec)?;
                    self.accept.hand_on(plan)
                }
                Err(e) => {
                    let why = format!("the model's plan could not be used: {e}");
                    return Ok(self.end(Status::RolledBack, &why));
                }
            },
        };
        let plan = ground::normalise(plan, &self.files);
        let reviewed = self.assess(plan);
        if let Some(path) = &request.options.plan_out {
            std::fs::write(path, reviewed.plan.to_json()).map_err(|source| CodeError::PlanOut {
                path: path.clone(),
                source,
            })?;
            self.outcome.plan = Some(reviewed);
            return Ok(self.end(Status::Planned, "the plan was written; nothing was run"));
        }
        let Some(reviewed) = self.review(approver, reviewed)? else {
            return Ok(self.end(Status::Declined, "the plan was declined"));
        };
        self.outcome.plan = Some(reviewed.clone());
        self.accept.set_planned(&reviewed.plan);
        if let Some(why) = self.gate(request, approver, &reviewed)? {
            return Ok(self.end(Status::RolledBack, &why));
        }
        if let Some(why) = self
            .reproduce_first(request, &spec, &reviewed.plan, diagnosis.as_ref())
            .await?
        {
            return Ok(self.end(Status::RolledBack, &why));
        }
        if let Some(status_why) = self.stage(request, approver, &spec, &reviewed.plan).await? {
            return Ok(self.end(status_why.0, &status_why.1));
        }
        if !request.options.single_answer
            && let Some(status_why) = self
                .verify_and_correct(request, &spec, &reviewed.plan)
                .await?
        {
            return Ok(self.end(status_why.0, &status_why.1));
        }
        self.finish(request).await
    }

    fn end(&mut self, status: Status, reason: &str) -> Outcome {
        self.outcome.status = status;
        self.outcome.reason = Some(reason.to_string());
        self.outcome.usage = self.usage;
        self.outcome.files = self.overlay.diff_with_disk().unwrap_or_default();
        self.outcome.clone()
    }

    /// Step 1: the diagnostic command on the repository as it is.
    async fn diagnose(&mut self, request: &Request) -> Result<Option<Check>, CodeError> {
        let Some(command) = self.commands.first().map(|c| c.diagnostic_command.clone()) else {
            self.audit
                .record("diagnose", None, "skipped", "no stack detected", "", None)?;
            return Ok(None);
        };
        let scratch = scratch_copy(&request.repo, &self.overlay)?;
        let check = run_check(request, scratch.path(), &command).await?;
        let outcome = if check.passed { "passed" } else { "failed" };
        self.audit
            .record("diagnose", None, outcome, &command, &check.output, None)?;
        Ok(Some(check))
    }

    /// Step 2: the model's plan, asked twice at most. `Ok(Err(e))` with the second answer's
    /// fault when neither could be used.
    async fn ask_plan(
        &mut self,
        request: &Request,
        spec: &str,
        diagnosis: Option<&Check>,
    ) -> Result<Result<ChangePlan, plan::PlanError>, CodeError> {
        let mut why: Option<plan::PlanError> = None;
        for _ in 0..2 {
            let retry = why.as_ref().map(|e| e.to_string());
            let asked = prompt::plan_request(spec, &self.files, diagnosis, retry.as_deref())?;
            let answer = self.ask(request, &asked).await?;
            match plan::from_answer(&answer) {
                Ok(plan) => {
                    let detail = format!("{} tasks", plan.tasks.len());
                    self.audit.record(
                        "plan",
                        None,
                        "ok",
                        &detail,
                        &answer,
                        self.last_usage.take(),
                    )?;
                    return Ok(Ok(plan));
                }
                Err(e) => {
                    self.audit.record(
                        "plan",
                        None,
                        "unusable",
                        &e.to_string(),
                        &answer,
                        self.last_usage.take(),
                    )?;
                    why = Some(e);
                }
            }
        }
        Ok(Err(why.unwrap_or(plan::PlanError::NoPlan)))
    }

    /// The model's plan with each task on a module moved to the module that defines what it
    /// is about ([`ground::retarget`]); each move is in the trail.
    fn retarget(&mut self, mut plan: ChangePlan, spec: &str) -> Result<ChangePlan, CodeError> {
        let mut sources = Vec::new();
        for file in self.files.iter().filter(|f| f.ends_with(".py")) {
            if let Some(text) = self.overlay.read(file)? {
                sources.push((file.clone(), text));
            }
        }
        let defined = ground::definitions(sources.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        for moved in ground::retarget(&mut plan, spec, &defined) {
            let detail = format!("task {}: {} -> {}", moved.task, moved.from, moved.to);
            let why = format!("{} defines {}", moved.to, moved.names.join(", "));
            self.audit
                .record("plan", None, "retargeted", &detail, &why, None)?;
        }
        Ok(plan)
    }

    /// One model call; its tokens are counted. A provider error ends the run (nothing has
    /// been written).
    async fn ask(&mut self, request: &Request, asked: &LlmRequest) -> Result<String, CodeError> {
        let response = request.llm.complete(asked).await?;
        self.usage.add(response.usage);
        self.last_usage = Some(response.usage);
        Ok(response.text)
    }

    fn assess(&self, plan: ChangePlan) -> Reviewed {
        let context = RiskContext {
            directories: directories(&self.files),
            known_commands: self
                .commands
                .iter()
                .flat_map(|c| {
                    [
                        Some(c.diagnostic_command.clone()),
                        c.primary_test.clone(),
                        c.build.clone(),
                        c.lint.clone(),
                    ]
                })
                .flatten()
                .collect(),
        };
        let risks = plan
            .tasks
            .iter()
            .map(|t| {
                let (risk, reasons) = plan::assess(t, &plan, &context);
                Assessed { risk, reasons }
            })
            .collect();
        Reviewed { plan, risks }
    }

    /// Step 3: the approver's decision; an edited plan is checked and assessed again.
    fn review(
        &mut self,
        approver: &mut dyn Approver,
        reviewed: Reviewed,
    ) -> Result<Option<Reviewed>, CodeError> {
        match approver.review(&reviewed) {
            Review::Decline => {
                self.audit
                    .record("approval", None, "declined", "", "", None)?;
                Ok(None)
            }
            Review::Approve(plan) => {
                plan.check()?;
                let edited = plan != reviewed.plan;
                let detail = if edited { "with edits" } else { "as shown" };
                self.audit
                    .record("approval", None, "approved", detail, &plan.to_json(), None)?;
                Ok(Some(if edited {
                    self.assess(ground::normalise(plan, &self.files))
                } else {
                    reviewed
                }))
            }
        }
    }

    /// Step 4: refuses REFUSED tasks, asks about HIGH ones. `Some(why)` stops the run.
    fn gate(
        &mut self,
        request: &Request,
        approver: &mut dyn Approver,
        reviewed: &Reviewed,
    ) -> Result<Option<String>, CodeError> {
        for (task, assessed) in reviewed.plan.tasks.iter().zip(&reviewed.risks) {
            let mut reasons = assessed.reasons.join("; ");
            // A path through a link in the repository would reach whatever the link names.
            let linked = match (task.kind, task.path.as_deref()) {
                (TaskKind::ShellCommand, _) | (_, None) => None,
                (_, Some(path)) => {
                    let path = path.strip_suffix('/').unwrap_or(path);
                    crate::fsutil::beneath::no_link(&request.repo, path).err()
                }
            };
            if let Some(why) = &linked {
                reasons = why.to_string();
            }
            let refused = linked.is_some()
                || match assessed.risk {
                    Risk::Refused => true,
                    Risk::High => {
                        !(request.options.allow_high_risk
                            || approver.confirm_high_risk(task, &assessed.reasons))
                    }
                    _ => false,
                };
            let outcome = if refused { "refused" } else { "allowed" };
            let level = match linked {
                Some(_) => Risk::Refused.as_str(),
                None => assessed.risk.as_str(),
            };
            let detail = match reasons.is_empty() {
                true => level.to_string(),
                false => format!("{level}: {reasons}"),
            };
            self.audit
                .record("risk", Some(&task.id.0), outcome, &detail, "", None)?;
            if refused {
                return Ok(Some(format!(
                    "task {} is {level} risk and was refused ({reasons})",
                    task.id
                )));
            }
        }
        Ok(None)
    }

    /// Step 8: the dry run's diff, or the commit (and the optional git commit).
    async fn finish(&mut self, request: &Request) -> Result<Outcome, CodeError> {
        self.outcome.files = self.overlay.diff_with_disk()?;
        self.outcome.usage = self.usage;
        if self.outcome.files.is_empty() {
            return Ok(self.end(Status::RolledBack, "the answers changed no file"));
        }
        if request.options.dry_run {
            self.outcome.status = Status::DryRun;
            self.outcome.reason = Some("--dry-run: nothing was written".into());
            return Ok(self.outcome.clone());
        }
        if request.cancel.is_cancelled() {
            return Ok(self.end(Status::Interrupted, "interrupted before writing"));
        }
        let overlay = std::mem::replace(
            &mut self.overlay,
            Overlay::new(Workspace::new(&request.repo)),
        );
        let audit = &mut self.audit;
        let repo = request.repo.clone();
        let mut begun = false;
        let committed = overlay.commit(|batch| {
            let detail = format!("{} file(s)", batch.len());
            audit
                .record("commit", None, "writing", &detail, "", None)
                .map_err(|e| e.to_string())?;
            // Before the first byte: the old content of every path, fsync'd.
            let paths: Vec<String> = batch.into_keys().collect();
            intent::begin(&repo, &paths).map_err(|e| e.to_string())?;
            begun = true;
            Ok::<(), String>(())
        });
        let committed = match committed {
            Ok(committed) => committed,
            Err(e) => {
                // A write that failed half-way (a full disk): put back what was written.
                if begun {
                    intent::recover(&request.repo)?;
                }
                return Ok(self.end(Status::RolledBack, &e.to_string()));
            }
        };
        intent::end(&request.repo)?;
        self.audit.record(
            "commit",
            None,
            "ok",
            &committed.written.join(", "),
            "",
            None,
        )?;
        if request.options.git_commit
            && let Some(git) = crate::workspace::git::Git::open(&request.repo)
        {
            let mut paths = committed.written.clone();
            paths.extend(committed.removed.iter().cloned());
            let message = format!("zerorepo code: {}", first_line(&request.spec));
            let oid = git.commit_paths(&paths, &message)?;
            self.outcome.git_commit = oid.map(|o| o.to_string());
        }
        self.outcome.status = Status::Committed;
        self.outcome.reason = None;
        Ok(self.outcome.clone())
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("change")
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_choose_their_checks() {
        let python = crate::detect::detect_from_files(&crate::detect::Files {
            python: true,
            python_tests: true,
            ..Default::default()
        });
        assert_eq!(
            profile_commands(Profile::Fast, &python, true),
            vec!["python -m pytest -q"]
        );
        assert_eq!(
            profile_commands(Profile::Smoke, &python, true),
            vec!["python -m compileall -q ."]
        );
        assert!(profile_commands(Profile::Strict, &python, true).len() >= 2);
        assert_eq!(
            profile_commands(Profile::Fast, &[], true),
            vec!["python -m compileall -q ."]
        );
        assert!(profile_commands(Profile::Fast, &[], false).is_empty());
    }
}
