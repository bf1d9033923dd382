//! `zerorepo code`: a change to an existing repository, approved, verified and written all at
//! once, or not at all. The flow is [`crate::change`]'s; this module owns the flags and the
//! two approvers: a dialogue on the terminal, and the policy of `--yes`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::error::CliError;
use super::llm_args::LlmArgs;
use super::render;
use super::sandbox_args::SandboxArgs;
use crate::change::plan::{ChangePlan, Task, TaskId};
use crate::change::{self, Approver, Mode, Options, Profile, Review, Reviewed, Status};
use crate::exit;

/// Change an existing repository as a spec says: a verified change, or nothing written.
///
/// Runs the repository's diagnostic command first (in the sandbox), asks the model for a plan
/// of tasks (CREATE_FILE, MODIFY_FILE, DELETE_FILE, SHELL_COMMAND, each with a risk level),
/// shows it for approval, stages every change in memory, verifies the result in the sandbox,
/// lets the model correct it (--max-corrections), and writes every changed file at once. If
/// anything fails, nothing is written. Every action is appended to
/// .zerorepo/execution_history.json in the repository (`zerorepo history DIR`).
///
/// On a terminal the plan is approved interactively; otherwise pass --yes. HIGH-risk tasks
/// (deleting a directory or many files, network access, commands outside the allowlist of
/// checks) need an explicit confirmation, or --allow-high-risk under --yes; writes outside the
/// repository are always refused.
///
/// Exit codes: 0 written (or dry run, plan written, nothing to do), 1 nothing written (failed,
/// refused or declined), 2 bad input, 130 interrupted (nothing written).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// A file that describes the change (Markdown or text); not needed with --prompt,
    /// --plan or --mode self-heal.
    #[arg(conflicts_with = "prompt")]
    spec: Option<PathBuf>,
    /// The change, in words, instead of a SPEC file.
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// The repository to change.
    #[arg(long, value_name = "DIR", default_value = ".")]
    repo: PathBuf,
    /// `improve` an existing repository, `generate` a project into an empty directory, or
    /// `self-heal`: make the repository's diagnostic command pass (no spec needed).
    #[arg(long, value_enum, default_value = "improve")]
    mode: Mode,
    /// What verifies the change: `strict` (diagnostic, tests, build, lint), `fast` (the
    /// diagnostic command) or `smoke` (the code parses and compiles).
    #[arg(long, value_enum, default_value = "fast")]
    profile: Profile,
    /// Correction rounds after a failed verification.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10))]
    max_corrections: u32,
    /// Approve the plan without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// With --yes: run HIGH-risk tasks instead of refusing them.
    #[arg(long, requires = "yes")]
    allow_high_risk: bool,
    /// Show the diff of the verified change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Commit the written files to git (when the repository is a git work tree).
    #[arg(long)]
    git_commit: bool,
    /// The baseline of `bench --code-corpus`: ask each task once and write its answer as
    /// applied, with no verification, acceptance tests or correction rounds.
    #[arg(long, conflicts_with = "dry_run")]
    single_answer: bool,
    /// Use this plan file instead of asking the model for a plan.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Write the plan to this file and stop (edit it, then run again with --plan).
    #[arg(long, value_name = "FILE", conflicts_with = "plan")]
    plan_out: Option<PathBuf>,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Print the outcome as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Rolls back a change that kill -9 cut off during its final write, if `repo` holds the
/// record of one, and says so; every command that takes a repository runs this first.
pub(crate) fn recover(repo: &std::path::Path) -> Result<(), CliError> {
    if !repo.is_dir() {
        return Ok(());
    }
    change::check_state_dir(repo).map_err(CliError::bad_input)?;
    match change::intent::recover(repo) {
        Ok(Some(restored)) => {
            eprintln!("an interrupted change was rolled back: {restored} files restored");
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => {
            Err(CliError::Failed(anyhow::Error::new(e))
                .context("rolling back an interrupted change"))
        }
    }
}

pub(crate) async fn run(args: Args) -> Result<u8, CliError> {
    let spec = spec_text(&args)?;
    let plan = match &args.plan {
        Some(path) => Some(read_plan(path)?),
        None => None,
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let needs_approval = args.plan_out.is_none() && !args.dry_run && !args.yes;
    if needs_approval && !interactive {
        return Err(CliError::bad_input(
            "approving the plan needs a terminal: pass --yes, or --plan-out FILE to review it in a file",
        ));
    }
    recover(&args.repo)?;
    if args.git_commit {
        refuse_a_git_it_cannot_commit_into(&args.repo)?;
    }
    let runner = args.sandbox.runner()?;
    let llm = args.llm.provider()?;
    let cancel = CancellationToken::new();
    super::generate::spawn_signal_handler(cancel.clone());
    let request = change::Request {
        repo: args.repo.clone(),
        spec,
        plan,
        llm,
        runner: runner.clone(),
        options: Options {
            mode: args.mode,
            profile: args.profile,
            max_corrections: args.max_corrections,
            dry_run: args.dry_run,
            allow_high_risk: args.allow_high_risk,
            git_commit: args.git_commit,
            plan_out: args.plan_out.clone(),
            single_answer: args.single_answer,
        },
        cancel,
    };
    let mut approver: Box<dyn Approver> = if args.yes || !interactive {
        Box::new(Policy)
    } else {
        Box::new(Dialogue)
    };
    let outcome = change::run(request, approver.as_mut()).await;
    runner.shutdown().await;
    let outcome = outcome.map_err(|e| match e.is_bad_input() {
        true => CliError::bad_input(e),
        false => CliError::Failed(anyhow::Error::new(e)).context("the change stopped"),
    })?;
    if args.json {
        print!("{}", render::json(&outcome)?);
    } else {
        print!("{}", render::code_outcome(&outcome));
    }
    Ok(match outcome.status {
        Status::Committed | Status::DryRun | Status::Planned | Status::NothingToDo => exit::OK,
        Status::Interrupted => exit::INTERRUPTED,
        Status::RolledBack | Status::Declined => exit::FAILED,
    })
}

/// `--git-commit` commits into the repository's own `.git` only, and through nothing the
/// repository links elsewhere ([`crate::workspace::git::refuse_foreign_store`]); and not
/// while its index is locked, or the files would be written and the commit fail after them.
/// Both are refused before any work.
fn refuse_a_git_it_cannot_commit_into(repo: &std::path::Path) -> Result<(), CliError> {
    crate::workspace::git::refuse_foreign_store(repo)
        .map_err(|why| CliError::bad_input(format!("--git-commit: {why}")))?;
    let lock = repo.join(".git").join("index.lock");
    if std::fs::symlink_metadata(&lock).is_ok() {
        return Err(CliError::bad_input(format!(
            "--git-commit: {} exists: another git command is running in the repository, or one was stopped and left it; when none runs, remove it and run again",
            lock.display()
        )));
    }
    Ok(())
}

fn spec_text(args: &Args) -> Result<String, CliError> {
    if let Some(text) = &args.prompt {
        return Ok(text.clone());
    }
    match &args.spec {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            CliError::bad_input(format!("cannot read the spec {}: {e}", path.display()))
        }),
        None if args.plan.is_some() || args.mode == Mode::SelfHeal => Ok(String::new()),
        None => Err(CliError::bad_input(
            "say what to change: a SPEC file or --prompt TEXT (or --mode self-heal, or --plan FILE)",
        )),
    }
}

fn read_plan(path: &std::path::Path) -> Result<ChangePlan, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::bad_input(format!("cannot read the plan {}: {e}", path.display()))
    })?;
    ChangePlan::from_json(&text)
        .map_err(|e| CliError::bad_input(format!("{}: {e}", path.display())))
}

/// `--yes` (or no terminal with `--dry-run`): the plan as shown; HIGH risk only with
/// `--allow-high-risk` (decided in the flow); a failed task rolls the run back.
pub(crate) struct Policy;

impl Approver for Policy {
    fn review(&mut self, plan: &Reviewed) -> Review {
        Review::Approve(plan.plan.clone())
    }
    fn confirm_high_risk(&mut self, _: &Task, _: &[String]) -> bool {
        false
    }
    fn repair(&mut self, _: &Task, _: &str) -> bool {
        false
    }
}

/// The terminal dialogue: the plan as a tree, then commands until it is approved or declined.
struct Dialogue;

const DIALOGUE_HELP: &str = "[a]pprove all · [d N] delete task N · [p N PATH] set task N's path · [c N COMMAND] set task N's command · [q]uit (nothing is written)";

impl Approver for Dialogue {
    fn review(&mut self, reviewed: &Reviewed) -> Review {
        let mut plan = reviewed.plan.clone();
        let mut shown = reviewed.clone();
        loop {
            eprint!("{}", render::code_plan(&shown));
            eprintln!("{DIALOGUE_HELP}");
            let Some(line) = ask("> ") else {
                return Review::Decline;
            };
            match edit_plan(&mut plan, line.trim()) {
                PlanEdit::Approve => return Review::Approve(plan),
                PlanEdit::Quit => return Review::Decline,
                PlanEdit::Changed => {
                    shown = Reviewed {
                        risks: Vec::new(),
                        plan: plan.clone(),
                    };
                }
                PlanEdit::Unknown(why) => eprintln!("{why}"),
            }
        }
    }

    fn confirm_high_risk(&mut self, task: &Task, reasons: &[String]) -> bool {
        eprint!(
            "{}",
            render::terminal(&format!(
                "task {} is HIGH risk: {}\n",
                task.id,
                reasons.join("; ")
            ))
        );
        yes_no(&render::terminal(&format!(
            "run task {} anyway? [y/N] ",
            task.id
        )))
    }

    fn repair(&mut self, task: &Task, failure: &str) -> bool {
        eprint!(
            "{}",
            render::terminal(&format!("task {} failed: {failure}\n", task.id))
        );
        yes_no(
            "the correction rounds are spent; let the model try once more? (no: roll back, nothing is written) [y/N] ",
        )
    }
}

/// What one line of the dialogue did to the plan.
#[derive(Debug, PartialEq, Eq)]
enum PlanEdit {
    Approve,
    Quit,
    Changed,
    Unknown(String),
}

/// Applies one dialogue command to `plan` (pure, so the dialogue is testable without a
/// terminal).
fn edit_plan(plan: &mut ChangePlan, line: &str) -> PlanEdit {
    let mut words = line.splitn(3, ' ');
    let verb = words.next().unwrap_or_default();
    let id = words.next().map(|w| TaskId(w.to_string()));
    let rest = words.next().map(str::trim).filter(|r| !r.is_empty());
    let known = id.as_ref().is_some_and(|id| plan.task(id).is_some());
    match (verb, id, rest) {
        ("a" | "approve", None, None) => PlanEdit::Approve,
        ("q" | "quit", None, None) => PlanEdit::Quit,
        ("d" | "delete", Some(id), None) if known => {
            plan.tasks.retain(|t| t.id != id);
            for task in &mut plan.tasks {
                task.depends_on.retain(|d| *d != id);
            }
            PlanEdit::Changed
        }
        ("p" | "path", Some(id), Some(path)) if known => {
            set(plan, &id, |t| t.path = Some(path.to_string()));
            PlanEdit::Changed
        }
        ("c" | "command", Some(id), Some(command)) if known => {
            set(plan, &id, |t| t.command = Some(command.to_string()));
            PlanEdit::Changed
        }
        (_, Some(id), _) if !known => PlanEdit::Unknown(format!("no task {id}")),
        _ => PlanEdit::Unknown(format!("not understood: {line:?}")),
    }
}

fn set(plan: &mut ChangePlan, id: &TaskId, change: impl FnOnce(&mut Task)) {
    if let Some(task) = plan.tasks.iter_mut().find(|t| &t.id == id) {
        change(task);
    }
}

/// One line from the terminal, `None` at its end.
fn ask(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

fn yes_no(prompt: &str) -> bool {
    ask(prompt).is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::plan::{Risk, TaskKind};

    fn plan() -> ChangePlan {
        let task = |id: &str, deps: &[&str]| Task {
            id: TaskId(id.into()),
            kind: TaskKind::ModifyFile,
            description: String::new(),
            path: Some(format!("{id}.py")),
            command: None,
            depends_on: deps.iter().map(|d| TaskId(d.to_string())).collect(),
            risk: Risk::Low,
        };
        ChangePlan {
            tasks: vec![task("1", &[]), task("2", &["1"])],
        }
    }

    #[test]
    fn the_dialogue_edits_deletes_approves_and_quits() {
        let mut p = plan();
        assert_eq!(edit_plan(&mut p, "p 2 pkg/two.py"), PlanEdit::Changed);
        assert_eq!(p.tasks[1].path.as_deref(), Some("pkg/two.py"));
        assert_eq!(edit_plan(&mut p, "d 1"), PlanEdit::Changed);
        assert_eq!(p.tasks.len(), 1);
        assert!(
            p.tasks[0].depends_on.is_empty(),
            "a deleted task is no dependency"
        );
        assert!(matches!(edit_plan(&mut p, "d 9"), PlanEdit::Unknown(_)));
        assert!(matches!(
            edit_plan(&mut p, "frobnicate"),
            PlanEdit::Unknown(_)
        ));
        assert_eq!(edit_plan(&mut p, "a"), PlanEdit::Approve);
        assert_eq!(edit_plan(&mut p, "q"), PlanEdit::Quit);
    }
}
