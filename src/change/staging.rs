//! Step 5 of a change ([`super`]): every task into the overlay, in dependency order.
//!
//! A file task's answer that cannot be used (cut off, a SEARCH block not in the file or too
//! long, a definition it names that is not there, a module that no longer parses) is asked
//! again with the reason, in the same budget as the correction rounds (`--max-corrections`),
//! under `--yes` too: a small model's first answer fails that way often, and the reason is
//! what it needs to answer better. Only a spent budget rolls the run back, with the last
//! reason. Two kinds of task are the exception, their first unusable answer leaving the file
//! as it is ([`when_unusable`]): one that updates the repository's tests (a 1.5B model asked
//! to "update the test of f" with no failure to go by answered with unrelated definitions
//! four times, code corpus, dev half), and one on a type stub, which no check can judge.

use super::answer::apply_answer;
use super::plan::{self, ChangePlan, Task, TaskKind};
use super::prompt::{self, EditAsk, Extent};
use super::reproduce::{Asks, asks};
use super::{Approver, CodeError, Request, Run, Status, audit, run_check, scratch_copy};
use crate::workspace::overlay::Author;

/// What becomes of a task whose answer could not be used.
#[derive(Debug, PartialEq)]
enum WhenUnusable {
    /// Asked again with the reason, within the correction budget.
    AskAgain,
    /// Left as it is, with the trail entry's outcome: what the task asked is decided, or
    /// cannot be, by something else than another answer.
    Leave(&'static str),
}

/// A task that changes tests the repository has (not one that adds tests) is left to the
/// checks: the tests that must change show themselves by failing once the code is changed,
/// and the correction of that failure shows the model which assertion and why
/// ([`super::correct`]). A task on a type stub (`.pyi`) is left as it is: nothing runs a
/// stub, so no check can tell a right answer from a wrong one, and a change whose code does
/// what was asked is not rolled back for want of one (code corpus, dev half: a 700-line
/// stub's task answered unusably four times stopped a change of behaviour).
fn when_unusable(task: &Task) -> WhenUnusable {
    let Some(path) = task.path.as_deref() else {
        return WhenUnusable::AskAgain;
    };
    let writes = matches!(task.kind, TaskKind::CreateFile | TaskKind::ModifyFile);
    if writes && path.ends_with(".pyi") {
        WhenUnusable::Leave("left as it was (a type stub: no check runs it)")
    } else if task.kind == TaskKind::ModifyFile
        && super::fault::is_test_file(path)
        && asks(&task.description) != Asks::New
    {
        WhenUnusable::Leave("left to the checks")
    } else {
        WhenUnusable::AskAgain
    }
}

/// Why a task did not land; its text is the reason the model is told when asked again.
#[derive(Debug)]
pub(super) enum TaskFailure {
    /// A path outside the repository (the gate refused such paths already).
    Refused(String),
    /// A delete of a file that is not there.
    Missing { path: String },
    /// The task's own shell command failed.
    Command { command: String, output: String },
    /// The model's answer could not be used: asking again, with the reason, may help.
    Answer(Unusable),
}

impl TaskFailure {
    fn answer_at_fault(&self) -> bool {
        matches!(self, TaskFailure::Answer(_))
    }
}

impl std::fmt::Display for TaskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskFailure::Refused(why) => write!(f, "refused: {why}"),
            TaskFailure::Missing { path } => write!(f, "{path} does not exist"),
            TaskFailure::Command { command, output } => {
                write!(f, "`{command}` failed:\n{}", audit::tail(output, 1_500))
            }
            TaskFailure::Answer(why) => why.fmt(f),
        }
    }
}

/// Why a model's answer to a file task or a correction could not be used.
#[derive(Debug)]
pub(super) enum Unusable {
    /// It could not be applied to the file (cut off, a SEARCH block not in the file, ...).
    Apply(String),
    /// A modify task whose answer leaves the file as it is.
    Unchanged { path: String },
    /// A task that adds the function `name` ([`super::start::added`]) whose answer never
    /// names it.
    Missing { path: String, name: String },
    /// It drops or renames what the request did not ask to, or defines a name the module
    /// imports ([`dropped`]).
    Dropped(String),
    /// A test file that copies the repository's code.
    CopiedCode(String),
    /// The new module does not parse.
    Unparsable { path: String, why: String },
    /// A correction that gives the file back as it was when `command` failed.
    Reverted { path: String, command: String },
    /// Every candidate of a correction left more of the checks failing than the change had.
    Worse { path: String },
}

impl Unusable {
    /// How much of the file the next answer may give: in part once a whole answer dropped
    /// or shadowed names (asked again whole, the 1.5B model dropped the constants it had
    /// dropped before: code corpus, dev half). Not after a whole answer that changed
    /// nothing: asked again whole at 0.7, funcy-cut-affixes was written correct; asked by
    /// symbol, its new function copied its neighbour's body and the change was not made.
    /// In part after a whole answer that re-typed the file without the function the task
    /// adds: in part, the answer is begun at that function's `def`, so it cannot be left out
    /// again, and the model does not spend a whole file's tokens to reach it.
    pub(super) fn next_extent(&self) -> Extent {
        match self {
            Unusable::Dropped(_) | Unusable::Missing { .. } => Extent::InPart,
            _ => Extent::AsFits,
        }
    }
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Apply(why) | Unusable::Dropped(why) | Unusable::CopiedCode(why) => {
                f.write_str(why)
            }
            Unusable::Unchanged { path } => write!(
                f,
                "the answer leaves {path} as it is, and the task asks for a change"
            ),
            Unusable::Missing { path, name } => write!(
                f,
                "the answer does not define `{name}`, which the task adds to {path}; write \
                 its definition"
            ),
            Unusable::Unparsable { path, why } => {
                write!(f, "the new {path} does not parse: {why}")
            }
            Unusable::Worse { path } => write!(
                f,
                "the answers for {path} made more checks fail than before; change only what \
                 the failure shows"
            ),
            Unusable::Reverted { path, command } => write!(
                f,
                "the answer gives {path} back as it was when `{command}` failed; change the \
                 code where the failure shows"
            ),
        }
    }
}

/// The function the task adds to `path` ([`super::start::added`]) when the answer's `text`
/// never names it: neither defines nor imports it (a package's `__init__.py` may rightly
/// only import what another task defines).
fn missing(ask: &TaskAsk<'_>, path: &str, current: &str, text: &str) -> Option<String> {
    let name = super::start::added(path, ask.spec, &ask.task.description, current)?;
    (!crate::python::words(text).any(|w| w == name)).then_some(name)
}

/// A task as it is asked: `retry` is why the previous answer could not be used.
pub(super) struct TaskAsk<'a> {
    spec: &'a str,
    plan: &'a ChangePlan,
    task: &'a Task,
    retry: Option<&'a str>,
    attempt: u32,
    extent: Extent,
}

impl Run {
    /// Step 5: every task, in order, into the overlay. An answer that cannot be used is asked
    /// again with the reason while correction rounds are left (on a terminal, once more if
    /// the approver allows). `Some` stops the run.
    pub(super) async fn stage(
        &mut self,
        request: &Request,
        approver: &mut dyn Approver,
        spec: &str,
        plan: &ChangePlan,
    ) -> Result<Option<(Status, String)>, CodeError> {
        for index in plan.order()? {
            let task = &plan.tasks[index];
            let mut retry: Option<String> = None;
            let mut attempt = 0;
            let mut extent = Extent::AsFits;
            loop {
                if request.cancel.is_cancelled() {
                    return Ok(Some((
                        Status::Interrupted,
                        "interrupted while staging".into(),
                    )));
                }
                let ask = TaskAsk {
                    spec,
                    plan,
                    task,
                    retry: retry.as_deref(),
                    attempt,
                    extent,
                };
                let Err(failed) = self.run_task(request, &ask).await? else {
                    break;
                };
                let reason = failed.to_string();
                // The single-answer baseline asks each task once, whatever came of it.
                let answerable = failed.answer_at_fault() && !request.options.single_answer;
                if let (true, WhenUnusable::Leave(outcome)) = (answerable, when_unusable(task)) {
                    let path = task.path.as_deref().unwrap_or_default();
                    self.audit
                        .record("task", Some(&task.id.0), outcome, path, &reason, None)?;
                    self.outcome.left.push(super::LeftFile {
                        path: path.to_string(),
                        why: outcome.to_string(),
                    });
                    break;
                }
                let again = answerable
                    && (self.outcome.corrections < request.options.max_corrections
                        || approver.repair(task, &reason));
                if !again {
                    return Ok(Some((
                        Status::RolledBack,
                        format!("task {} failed: {reason}", task.id),
                    )));
                }
                self.outcome.corrections += 1;
                attempt += 1;
                retry = Some(reason);
                // Once a whole answer could not be used for what it re-typed, the file is
                // asked in part.
                if let TaskFailure::Answer(why) = &failed
                    && why.next_extent() == Extent::InPart
                {
                    extent = Extent::InPart;
                }
            }
        }
        Ok(None)
    }

    /// One task into the overlay. `Ok(Err(why))` when the task failed.
    async fn run_task(
        &mut self,
        request: &Request,
        ask: &TaskAsk<'_>,
    ) -> Result<Result<(), TaskFailure>, CodeError> {
        let task = ask.task;
        let path = task.path.clone().unwrap_or_default();
        // The gate refused such paths already; this holds whatever path reaches here.
        let refused = match task.kind {
            TaskKind::ShellCommand => None,
            _ => plan::inside_repository(&path).err(),
        };
        let result = match (task.kind, refused) {
            (_, Some(why)) => Err(TaskFailure::Refused(why)),
            (TaskKind::DeleteFile, None) => match self.overlay.read(&path)? {
                Some(_) => {
                    self.overlay.remove(&path, Author::Generated)?;
                    Ok(())
                }
                None => Err(TaskFailure::Missing { path }),
            },
            (TaskKind::ShellCommand, None) => {
                let command = task.command.clone().unwrap_or_default();
                let scratch = scratch_copy(&request.repo, &self.overlay)?;
                let check = run_check(request, scratch.path(), &command).await?;
                if check.passed || check.unavailable {
                    Ok(())
                } else {
                    Err(TaskFailure::Command {
                        command,
                        output: check.output,
                    })
                }
            }
            (TaskKind::CreateFile | TaskKind::ModifyFile, None) => (self
                .edit_file(request, ask, &path))
            .await?
            .map_err(TaskFailure::Answer),
        };
        let outcome = if result.is_ok() { "ok" } else { "failed" };
        let detail = format!(
            "{} {}",
            task.kind.as_str(),
            task.path
                .as_deref()
                .or(task.command.as_deref())
                .unwrap_or_default()
        );
        let why = result
            .as_ref()
            .err()
            .map(|f| f.to_string())
            .unwrap_or_default();
        self.audit.record(
            "task",
            Some(&task.id.0),
            outcome,
            &detail,
            &why,
            self.last_usage.take(),
        )?;
        Ok(result)
    }

    /// A file task: its prompt, the answer, the answer applied to the overlay.
    async fn edit_file(
        &mut self,
        request: &Request,
        ask: &TaskAsk<'_>,
        path: &str,
    ) -> Result<Result<(), Unusable>, CodeError> {
        let current = self.overlay.read(path)?.unwrap_or_default();
        let context = self.context_of(ask.plan, ask.task)?;
        let (asked, form) = prompt::edit_request(&EditAsk {
            spec: ask.spec,
            task: ask.task,
            current: &current,
            context: &context,
            retry: ask.retry,
            attempt: ask.attempt,
            extent: ask.extent,
        })?;
        let answer = self.ask(request, &asked).await?;
        let answer = self.accept.scrub(&answer);
        match apply_answer(&answer, path, &current, form) {
            // A change of nothing is no answer: the 1.5B model re-typed a module unchanged
            // for a request to add a function, and it was written as done (dev half).
            Ok(text) if ask.task.kind == TaskKind::ModifyFile && text == current => {
                Ok(Err(Unusable::Unchanged { path: path.into() }))
            }
            // Re-typing a short module whole, the 1.5B model left out the one function the
            // task adds (code corpus, dev half: isodate-duration-seconds), and every check
            // after that could only say the name does not import. The single-answer baseline
            // writes what it is given, as it was measured.
            Ok(text)
                if !request.options.single_answer
                    && let Some(name) = missing(ask, path, &current, &text) =>
            {
                Ok(Err(Unusable::Missing {
                    path: path.into(),
                    name,
                }))
            }
            Ok(text) => match dropped(request, path, &text, ask.spec) {
                Some(why) => Ok(Err(Unusable::Dropped(why))),
                None => self.write_checked(path, text),
            },
            Err(why) => Ok(Err(Unusable::Apply(why))),
        }
    }

    /// Writes `text` to the overlay unless it is Python that does not parse, or a test file
    /// that copies the repository's code ([`super::answer::copied_code`]).
    pub(super) fn write_checked(
        &mut self,
        path: &str,
        text: String,
    ) -> Result<Result<(), Unusable>, CodeError> {
        if super::fault::is_test_file(path) {
            let current = self.overlay.read(path)?.unwrap_or_default();
            // The repository's modules as staged, new ones included.
            let files: std::collections::BTreeSet<String> = (self.files.iter())
                .chain(self.overlay.entries().keys())
                .filter(|f| f.ends_with(".py"))
                .cloned()
                .collect();
            let mut sources = Vec::new();
            for file in &files {
                if let Some(source) = self.overlay.read(file)? {
                    sources.push((file.as_str(), source));
                }
            }
            let sources = sources.iter().map(|(p, t)| (*p, t.as_str()));
            if let Some(why) = super::answer::copied_code(path, &current, &text, sources) {
                return Ok(Err(Unusable::CopiedCode(why)));
            }
        }
        let before = self.overlay.entries().get(path).cloned();
        self.overlay.write(path, text, Author::Generated)?;
        let Some((_, why)) = self
            .overlay
            .unparsable()
            .into_iter()
            .find(|(p, _)| p == path)
        else {
            return Ok(Ok(()));
        };
        self.put_back(path, before)?;
        Ok(Err(Unusable::Unparsable {
            path: path.into(),
            why,
        }))
    }

    /// `path` in the overlay as `before` had it (not staged at all when `None`).
    pub(super) fn put_back(
        &mut self,
        path: &str,
        before: Option<crate::workspace::overlay::Entry>,
    ) -> Result<(), CodeError> {
        self.overlay.discard(path);
        if let Some(entry) = before {
            match entry.content {
                Some(old) => self.overlay.write(path, old, Author::Generated)?,
                None => self.overlay.remove(path, Author::Generated)?,
            }
        }
        Ok(())
    }

    /// The staged text of the files of the tasks `task` depends on.
    fn context_of(
        &self,
        plan: &ChangePlan,
        task: &Task,
    ) -> Result<Vec<(String, String)>, CodeError> {
        let mut context = Vec::new();
        for dep in &task.depends_on {
            let Some(path) = plan.task(dep).and_then(|t| t.path.clone()) else {
                continue;
            };
            if let Some(text) = self.overlay.read(&path)? {
                context.push((path, text));
            }
        }
        Ok(context)
    }
}

/// Why `text`, an answer's new content of `path`, drops names of the file as the repository
/// has it ([`super::answer::dropped_names`]) or defines one it imports
/// ([`super::answer::shadowed_imports`]); `None` for a file the change creates, and in a
/// self-heal run, whose request is the failing output, not a description of the change.
pub(super) fn dropped(request: &Request, path: &str, text: &str, spec: &str) -> Option<String> {
    if request.options.mode == super::Mode::SelfHeal {
        return None;
    }
    let original = crate::fsutil::Workspace::new(&request.repo)
        .read(path)
        .ok()
        .flatten()?;
    super::answer::dropped_names(path, &original, text, spec)
        .or_else(|| super::answer::shadowed_imports(path, &original, text))
}

#[cfg(test)]
mod tests {
    use super::super::plan::file_task;
    use super::*;

    fn task(kind: TaskKind, path: &str, description: &str) -> Task {
        file_task("t", kind, path, description)
    }

    #[test]
    fn only_tests_to_update_and_type_stubs_are_left_as_they_are() {
        let of = |kind, path, description| when_unusable(&task(kind, path, description));
        let modify = TaskKind::ModifyFile;
        let update = "Update the test of all_equal for an empty iterable";
        assert_eq!(
            of(modify, "tests/test_recipes.py", update),
            WhenUnusable::Leave("left to the checks")
        );
        assert!(matches!(
            of(modify, "pkg/more.pyi", "Change all_equal's signature"),
            WhenUnusable::Leave(why) if why.contains("type stub")
        ));
        assert!(matches!(
            of(TaskKind::CreateFile, "pkg/new.pyi", "Declare f"),
            WhenUnusable::Leave(_)
        ));
        for (kind, path, description) in [
            (
                modify,
                "pkg/more.py",
                "Change all_equal for an empty iterable",
            ),
            (TaskKind::CreateFile, "tests/test_new.py", "Add tests for f"),
            (TaskKind::DeleteFile, "pkg/old.pyi", "Remove the stub"),
        ] {
            assert_eq!(
                of(kind, path, description),
                WhenUnusable::AskAgain,
                "{path}"
            );
        }
    }
}
