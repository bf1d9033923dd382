//! Step 5 of a change ([`super`]): every task into the overlay, in dependency order.
//!
//! A file task's answer that cannot be used (cut off, a SEARCH block not in the file or too
//! long, a definition it names that is not there, a module that no longer parses) is asked
//! again with the reason, in the same budget as the correction rounds (`--max-corrections`),
//! under `--yes` too: a small model's first answer fails that way often, and the reason is
//! what it needs to answer better. Only a spent budget rolls the run back, with the last
//! reason.

use super::answer::apply_answer;
use super::plan::{self, ChangePlan, Task, TaskKind};
use super::prompt::{self, EditAsk};
use super::{Approver, CodeError, Request, Run, Status, audit, run_check, scratch_copy};
use crate::workspace::overlay::Author;

/// Why a task failed.
pub(super) struct Failed {
    pub reason: String,
    /// The model's answer was at fault: asking again, with the reason, may help.
    pub answer: bool,
}

/// A task as it is asked: `retry` is why the previous answer could not be used.
pub(super) struct TaskAsk<'a> {
    spec: &'a str,
    plan: &'a ChangePlan,
    task: &'a Task,
    retry: Option<&'a str>,
    attempt: u32,
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
                };
                let Err(failed) = self.run_task(request, &ask).await? else {
                    break;
                };
                // The single-answer baseline asks each task once, whatever came of it.
                let again = failed.answer
                    && !request.options.single_answer
                    && (self.outcome.corrections < request.options.max_corrections
                        || approver.repair(task, &failed.reason));
                if !again {
                    return Ok(Some((
                        Status::RolledBack,
                        format!("task {} failed: {}", task.id, failed.reason),
                    )));
                }
                self.outcome.corrections += 1;
                attempt += 1;
                retry = Some(failed.reason);
            }
        }
        Ok(None)
    }

    /// One task into the overlay. `Ok(Err(why))` when the task failed.
    async fn run_task(
        &mut self,
        request: &Request,
        ask: &TaskAsk<'_>,
    ) -> Result<Result<(), Failed>, CodeError> {
        let task = ask.task;
        let path = task.path.clone().unwrap_or_default();
        // The gate refused such paths already; this holds whatever path reaches here.
        let refused = match task.kind {
            TaskKind::ShellCommand => None,
            _ => plan::inside_repository(&path).err(),
        };
        let answerable =
            matches!(task.kind, TaskKind::CreateFile | TaskKind::ModifyFile) && refused.is_none();
        let result = match task.kind {
            _ if refused.is_some() => Err(format!("refused: {}", refused.unwrap_or_default())),
            TaskKind::DeleteFile => match self.overlay.read(&path)? {
                Some(_) => {
                    self.overlay.remove(&path, Author::Generated)?;
                    Ok(())
                }
                None => Err(format!("{path} does not exist")),
            },
            TaskKind::ShellCommand => {
                let command = task.command.clone().unwrap_or_default();
                let scratch = scratch_copy(&request.repo, &self.overlay)?;
                let check = run_check(request, scratch.path(), &command).await?;
                if check.passed || check.unavailable {
                    Ok(())
                } else {
                    Err(format!(
                        "`{command}` failed:\n{}",
                        audit::tail(&check.output, 1_500)
                    ))
                }
            }
            TaskKind::CreateFile | TaskKind::ModifyFile => {
                self.edit_file(request, ask, &path).await?
            }
        };
        let result = result.map_err(|reason| Failed {
            answer: answerable,
            reason,
        });
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
            .map(|f| f.reason.clone())
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
    ) -> Result<Result<(), String>, CodeError> {
        let current = self.overlay.read(path)?.unwrap_or_default();
        let context = self.context_of(ask.plan, ask.task)?;
        let (asked, form) = prompt::edit_request(&EditAsk {
            spec: ask.spec,
            task: ask.task,
            current: &current,
            context: &context,
            retry: ask.retry,
            attempt: ask.attempt,
        })?;
        let answer = self.ask(request, &asked).await?;
        match apply_answer(&answer, path, &current, form) {
            // A change of nothing is no answer: the 1.5B model re-typed a module unchanged
            // for a request to add a function, and it was written as done (dev half).
            Ok(text) if ask.task.kind == TaskKind::ModifyFile && text == current => Ok(Err(
                format!("the answer leaves {path} as it is, and the task asks for a change"),
            )),
            Ok(text) => match dropped(request, path, &text, ask.spec) {
                Some(why) => Ok(Err(why)),
                None => self.write_checked(path, text),
            },
            Err(why) => Ok(Err(why)),
        }
    }

    /// Writes `text` to the overlay unless it is Python that does not parse, or a test file
    /// that copies the repository's code ([`super::answer::copied_code`]).
    pub(super) fn write_checked(
        &mut self,
        path: &str,
        text: String,
    ) -> Result<Result<(), String>, CodeError> {
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
                return Ok(Err(why));
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
        self.overlay.discard(path);
        if let Some(entry) = before {
            match entry.content {
                Some(old) => self.overlay.write(path, old, Author::Generated)?,
                None => self.overlay.remove(path, Author::Generated)?,
            }
        }
        Ok(Err(format!("the new {path} does not parse: {why}")))
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
/// has it ([`super::answer::dropped_names`]); `None` for a file the change creates, and in a
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
}
