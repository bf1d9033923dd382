//! The test-first loop of one node: tests, candidate implementations chosen by running them,
//! fresh rounds and fix rounds while a gate fails (`max_retries` answers; the order is
//! [`super::machine`]'s), then `passed`, `needs_review` or `failed`.
//!
//! Ground truth is the plan: the examples test from the specification and the earlier
//! functions' tests are gates; the model's own tests are evidence, since a third of them are
//! wrong. Code that passes the gates is never thrown away for failing a generated test: the
//! dispute goes to a majority vote ([`super::vote`]) that has the tests written once more
//! and drops those still failing (B), asks for one fix (A), skips the node (C), or, without a
//! majority, keeps the code as `needs_review`; its dependents run on it.
//! A failed node keeps its best candidate (or a stub), so its module stays importable; its
//! dependents are skipped, each function among them written as its greedy answer (a draft)
//! when one sandbox run shows its module still imports with it.
//!
//! What to do next is decided by [`super::machine`], which does no I/O; [`Leaf`] only
//! carries out its actions (ask, write, run, vote) and reports what came of them. Its state is
//! in parts that own it: [`site`] (the node and its files, and what can be read of them and
//! of an answer), [`rounds`] (the candidates, the best so far, where each came from),
//! [`fixing`] (what a fix answers and where it looked) and [`runs`] (the sandbox runs, each
//! candidate's, repeated when flaky); the disputes and their votes are [`dispute`], and the
//! node's result is an [`ending::Ending`], which takes from the leaf what only the result
//! reads. An integration case blamed on the function is debugged by [`flowfix`] with the same
//! parts and none of the leaf. Asking is [`super::ask`], the repairs and refusals of an answer
//! [`super::repair`], reading test runs and test files [`super::testfile`], and what a
//! localization reads [`super::ground`].
//!
//! Before touching anything the node's files are snapshotted to disk; the snapshot is what a
//! failure reverts to, and what a resumed run restores after a crash in the middle of the node.

use crate::edit::merge_python;
use crate::fsutil::FsError;
use crate::llm::{Role, UsageByRole};
use crate::records::{Departure, Diagnosis, LocalizedFix, NodeStatus, NodeWork, TestCounts};
use crate::rpg::{Node, NodePos};

use super::ask::{Ahead, AskError, Sampling, ask, ask_many, unusable};
use super::machine::{Action, Event, FIRST_ROUND, Limits, LoopEnd, Machine, Step};
use super::prompt::PromptInputs;
use super::{Context, vote};

mod choice;
mod dispute;
mod ending;
mod fixing;
mod flowfix;
mod rounds;
mod runs;
mod site;
use crate::layout::SNAPSHOT_DIR;
use choice::Sample;
use ending::Ending;
use fixing::Fixing;
pub(crate) use flowfix::{FlowFailure, FlowFix, debug_flow_failure};
use rounds::Rounds;
use runs::Runs;
use site::Site;

/// How one node ended. `status` is `InProgress` when the run was interrupted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeResult {
    pub status: NodeStatus,
    pub tests: Option<TestCounts>,
    pub retries: u32,
    pub failure_reason: Option<String>,
    /// Tokens per role spent on this node in this run.
    pub usage: UsageByRole,
    /// A failed node's module text to keep after its files are reverted (its best candidate,
    /// or a stub), so the module stays importable for every other function in it.
    pub keep: Option<String>,
    /// The test file to keep with `keep`: the earlier functions' tests and those of this node
    /// that its kept candidate passes. `None` reverts the test file.
    pub keep_tests: Option<String>,
    /// What the loop did (`None` for nodes without one: composites, interrupted runs).
    pub work: Option<NodeWork>,
    /// The vote on its disputed tests, when there was one.
    pub diagnosis: Option<Diagnosis>,
    /// Where each of its fixes looked first.
    pub localizations: Vec<LocalizedFix>,
    /// Its tests that failed, then passed on identical code.
    pub flaky: Vec<String>,
    /// How the code it keeps departs from the greedy answer.
    pub departure: Option<Departure>,
}

impl NodeResult {
    pub(super) fn new(status: NodeStatus) -> NodeResult {
        NodeResult {
            keep: None,
            keep_tests: None,
            work: None,
            diagnosis: None,
            localizations: Vec::new(),
            flaky: Vec::new(),
            departure: None,
            status,
            tests: None,
            retries: 0,
            failure_reason: None,
            usage: UsageByRole::new(),
        }
    }

    fn passed(run: &crate::sandbox::TestRun, retries: u32, usage: UsageByRole) -> NodeResult {
        NodeResult {
            status: NodeStatus::Passed,
            tests: Some(counts_of(run)),
            retries,
            failure_reason: None,
            usage,
            ..NodeResult::new(NodeStatus::Passed)
        }
    }

    pub(super) fn failed(reason: String) -> NodeResult {
        NodeResult {
            failure_reason: Some(reason),
            ..NodeResult::new(NodeStatus::Failed)
        }
    }
}

/// The seed's `test_results`: errors count as failures.
fn counts_of(run: &crate::sandbox::TestRun) -> TestCounts {
    TestCounts {
        passed: run.passed,
        failed: run.failed + run.errors,
    }
}

/// The files a node writes (its module and, for leaves, its test file): two nodes sharing one
/// never run at the same time.
pub(crate) fn files_of(node: &Node) -> Vec<String> {
    let mut files: Vec<String> = node.file_path.iter().cloned().collect();
    if node.is_leaf() {
        files.extend(node.test_file());
    } else if let Some(dir) = node.file_path.as_deref().filter(|p| !p.ends_with(".py")) {
        files = vec![format!("{}/__init__.py", dir.trim_end_matches('/'))];
    }
    files
}

pub(crate) async fn run_node(
    ctx: &Context,
    position: NodePos,
    draft_of: Option<&str>,
) -> NodeResult {
    let node = ctx.rpg.node(position);
    let files = files_of(node);
    let snapshot = match ctx.workspace.snapshot(&files) {
        Ok(s) => s,
        Err(e) => return NodeResult::failed(format!("cannot read the node's files: {e}")),
    };
    if let Err(e) = ctx
        .workspace
        .save_snapshot(SNAPSHOT_DIR, &node.id, &snapshot)
    {
        return NodeResult::failed(format!("cannot save the node's snapshot: {e}"));
    }
    let result = if let Some(cause) = draft_of {
        draft(ctx, position, cause).await
    } else if node.is_data() {
        super::data::run_data(ctx, position).await
    } else if node.is_leaf() {
        run_leaf(ctx, position).await
    } else {
        write_composite(ctx, node)
    };
    let result = match result {
        Ok(result) => result,
        Err(e) => NodeResult::failed(format!("write failed: {e}")),
    };
    if result.status != NodeStatus::Passed
        && let Err(e) = ctx.workspace.restore(&snapshot)
    {
        tracing::error!(node = %node.id, "could not revert the node's files: {e}");
    }
    if let (Some(text), Some(file)) = (&result.keep, &node.file_path)
        && let Err(e) = ctx.workspace.write_if_changed(file, text)
    {
        tracing::error!(node = %node.id, "could not keep the node's best candidate: {e}");
    }
    if let (Some(text), Some(file)) = (&result.keep_tests, node.test_file())
        && let Err(e) = ctx.workspace.write_if_changed(&file, text)
    {
        tracing::error!(node = %node.id, "could not keep the node's undisputed tests: {e}");
    }
    result
}

/// A node whose dependency `cause` did not pass. The seed skips it, and it stays `skipped`;
/// but a function still gets what `--one-shot` writes, its greedy answer, when its module
/// still imports with it ([`Leaf::draft`]), so that a failure upstream never leaves the
/// repository with less than asking once gives (on the dev plan boltons-strutils, six skipped
/// dependents put the engine one reference test below one-shot). Anything else is only
/// skipped.
async fn draft(ctx: &Context, position: NodePos, cause: &str) -> Result<NodeResult, FsError> {
    let node = ctx.rpg.node(position);
    let skipped = format!("skipped: dependency {cause} did not pass");
    let leaf = match node.is_leaf() && !node.is_data() {
        true => Leaf::new(ctx, position)?,
        false => None,
    };
    let Some(leaf) = leaf else {
        return Ok(NodeResult {
            failure_reason: Some(skipped),
            ..NodeResult::new(NodeStatus::Skipped)
        });
    };
    let drafted = leaf.draft().await?;
    // Without a draft that holds, the node is skipped as the seed says, and assembly writes
    // the stub that says why.
    let (reason, keep) = match drafted.status {
        NodeStatus::NeedsReview => (format!("{skipped}; {DRAFTED}"), drafted.keep),
        _ => {
            let why = drafted.failure_reason.as_deref().unwrap_or_default();
            let why = why.lines().next().unwrap_or("no answer");
            (
                format!("{skipped}; its greedy answer is not written: {why}"),
                None,
            )
        }
    };
    Ok(NodeResult {
        status: NodeStatus::Skipped,
        failure_reason: Some(reason),
        keep,
        ..drafted
    })
}

/// What a skipped node's reason adds when its draft is written.
const DRAFTED: &str = "its greedy answer is written: it imports and breaks no earlier test";

/// A module gets its file with the module docstring; a package its `__init__.py`.
fn write_composite(ctx: &Context, node: &Node) -> Result<NodeResult, FsError> {
    let Some(path) = node.file_path.as_deref() else {
        return Ok(NodeResult::new(NodeStatus::Passed));
    };
    let file = files_of(node)
        .into_iter()
        .next()
        .unwrap_or_else(|| path.to_string());
    ensure_packages(ctx, &file)?;
    let existing = ctx.workspace.read(&file)?.unwrap_or_default();
    let doc = node.docstring.as_deref().unwrap_or("").trim();
    // Plan text is untrusted: escaped, so a `"""` in it cannot end the string and inject code.
    let quoted = crate::python::docstring_literal(doc);
    let merged = if doc.is_empty() {
        existing
    } else {
        merge_python(&existing, &quoted)
    };
    ctx.workspace.write_if_changed(&file, &merged)?;
    Ok(NodeResult::new(NodeStatus::Passed))
}

/// Creates a missing `__init__.py` in every package directory above `file` (below `src/`).
/// They are never reverted: an empty package marker is harmless and other nodes may need it.
pub(super) fn ensure_packages(ctx: &Context, file: &str) -> Result<(), FsError> {
    let parts: Vec<&str> = file.split('/').collect();
    let skip = usize::from(parts.first() == Some(&"src"));
    for depth in (skip + 1)..parts.len() {
        let init = format!("{}/__init__.py", parts[..depth].join("/"));
        if init != file && ctx.workspace.read(&init)?.is_none() {
            ctx.workspace.write(&init, "")?;
        }
    }
    Ok(())
}

async fn run_leaf(ctx: &Context, position: NodePos) -> Result<NodeResult, FsError> {
    let Some(mut leaf) = Leaf::new(ctx, position)? else {
        return Ok(NodeResult::failed("leaf without a file path".into()));
    };
    if ctx.settings.one_shot {
        return leaf.one_shot().await;
    }
    let limits = Limits {
        spend: ctx.spend(),
        candidates: ctx.settings.candidates,
        has_examples: leaf.site.has_examples(),
    };
    let mut machine = Machine::new(limits);
    // The machine decides; the driver only carries out its actions. A cancellation is an
    // event like any other, seen before every action.
    let mut event = Event::Start;
    let result = loop {
        let action = match machine.step(event) {
            Step::Do(action) => action,
            Step::Finish(outcome) => break leaf.finish(outcome, machine.retries())?,
        };
        event = match ctx.cancel.is_cancelled() {
            true => Event::Cancelled,
            false => leaf.execute(action, machine.attempt()).await?,
        };
    };
    ctx.record_returns(&machine.returns());
    leaf.work.returns = machine.returns();
    let work = (result.status != NodeStatus::InProgress).then_some(leaf.work);
    let diagnosis = leaf.diagnosis.take();
    Ok(NodeResult {
        work,
        diagnosis,
        localizations: std::mem::take(&mut leaf.fixing.localizations),
        flaky: std::mem::take(&mut leaf.runs.flaky),
        ..result
    })
}

/// The state of one leaf across its attempts: where it works ([`Site`]), what its
/// implementation rounds made ([`Rounds`]), what its fixes carry ([`Fixing`]) and what its
/// runs remember ([`Runs`]); the rest is what every part reads.
struct Leaf<'a> {
    site: Site<'a>,
    usage: UsageByRole,
    /// What the loop did, for the checkpoint and the run's statistics.
    work: NodeWork,
    /// What went wrong in the last attempt, fed back to the next prompt.
    failure: Option<String>,
    /// Why the node ends when the provider or the sandbox gave up.
    gave_up: Option<String>,
    /// The last run of the node's tests.
    last_run: Option<crate::sandbox::TestRun>,
    rounds: Rounds,
    fixing: Fixing,
    runs: Runs,
    /// The vote, once taken (a node is diagnosed at most once).
    diagnosis: Option<Diagnosis>,
}

/// Why a run whose tests all pass is still a failure when the function has no body; it is
/// also what the fix prompt reads.
const NO_BODY: &str = "the function has no body: it is only its docstring, `pass`, `...` or `raise NotImplementedError`, so it does nothing the specification asks; write the body";

/// What a fix is told of the names the function uses and nothing defines.
fn undefined_message(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    format!(
        "the function uses {} that nothing defines, so it raises NameError wherever that line \
         runs; compute it in the function or use what the module and its imports provide",
        quoted.join(", ")
    )
}

impl<'a> Leaf<'a> {
    /// The leaf at `position` with nothing done yet; `None` when the plan gives it no file.
    fn new(ctx: &'a Context, position: NodePos) -> Result<Option<Leaf<'a>>, FsError> {
        let Some(site) = Site::new(ctx, position)? else {
            return Ok(None);
        };
        Ok(Some(Leaf {
            site,
            usage: UsageByRole::new(),
            work: NodeWork::default(),
            failure: None,
            gave_up: None,
            last_run: None,
            rounds: Rounds::new(),
            fixing: Fixing::new(),
            runs: Runs::default(),
            diagnosis: None,
        }))
    }

    /// Carries out one action of the machine and says what came of it.
    async fn execute(&mut self, action: Action, attempt: u32) -> Result<Event, FsError> {
        match action {
            Action::StartOver { keep_tests } => self.start_over(keep_tests).map(|()| Event::Done),
            Action::AskTests => self.write_tests(attempt, false).await,
            Action::PlanTestsOnly => self.site.plan_tests_only().map(|()| Event::Done),
            Action::RewriteTests => self.write_tests(attempt, true).await,
            Action::AskImplementation { role, candidates } => {
                let mut inputs = self.inputs(attempt)?;
                self.fixing.editable.clear();
                if role == Role::Fix
                    && let Some(failure) = &self.failure
                {
                    inputs.suspects = self.fixing.localize(&self.site, failure, attempt);
                }
                self.write_implementation(inputs, role, candidates, attempt)
                    .await
            }
            Action::RunTests => self.run_tests(attempt).await,
            Action::DiscardTests => self.discard_tests().map(|()| Event::Done),
            Action::DropDisputed => self.drop_disputed().await,
            Action::Diagnose => self.diagnose(attempt).await,
            Action::FixBest => self.fix_best().map(|()| Event::Done),
        }
    }

    /// The baseline: one implementation, no tests, nothing run; what came back is kept.
    async fn one_shot(mut self) -> Result<NodeResult, FsError> {
        if let Some(failed) = self.write_greedy().await? {
            return Ok(failed);
        }
        self.written("one-shot baseline: written once, never run")
    }

    /// A dependent of a node that did not pass ([`draft`]): the greedy answer as
    /// [`Leaf::one_shot`] writes it, kept (`needs_review`) only when it has a body, its
    /// module still imports with it and every earlier test of the module still passes, in
    /// one sandbox run of [`super::examples::imports_test`] beside them; else `failed`. An unchecked
    /// draft once made its module raise at import (a default argument naming what the
    /// module never defines), and every later test of that module failed with it.
    async fn draft(mut self) -> Result<NodeResult, FsError> {
        if let Some(failed) = self.write_greedy().await? {
            return Ok(failed);
        }
        self.site.draft_test_only()?;
        let refused =
            match runs::run_counted(&self.site, &self.site.test_file, &mut self.work).await {
                _ if self.site.bodiless(&self.site.module_text()?) => Some("it has no body".into()),
                Ok(run) if run.succeeded() => None,
                Ok(run) => Some(format!("its check failed: {}", run.failure_reason())),
                Err(e) => Some(format!("its check did not run: {e}")),
            };
        match refused {
            None => self.written(DRAFTED),
            Some(why) => self.end(NodeResult::failed(why)),
        }
    }

    /// Writes one implementation, the greedy answer; the node's failed result when none
    /// could be written.
    async fn write_greedy(&mut self) -> Result<Option<NodeResult>, FsError> {
        let inputs = self.inputs(0)?;
        match self.write_implementation(inputs, Role::Impl, 1, 0).await? {
            Event::ImplementationWritten { .. } => Ok(None),
            _ => {
                let reason = self.gave_up.take().or(self.failure.take());
                self.end(NodeResult::failed(reason.unwrap_or_default()))
                    .map(Some)
            }
        }
    }

    /// The node's result for the machine's outcome (see [`Ending`]).
    fn finish(&mut self, outcome: LoopEnd, retries: u32) -> Result<NodeResult, FsError> {
        if outcome == LoopEnd::Passed {
            self.work.first_try = self.work.rounds == 1;
        }
        self.ending().finish(outcome, retries)
    }

    /// `result` with the tokens this node spent, and for a failure what its module keeps.
    fn end(&mut self, result: NodeResult) -> Result<NodeResult, FsError> {
        self.ending().end(result)
    }

    /// What only the node's ending reads, taken from the leaf.
    fn ending(&mut self) -> Ending<'_, 'a> {
        Ending {
            site: &self.site,
            lineage: &self.rounds.lineage,
            best: self.rounds.best.take(),
            last_run: self.last_run.take(),
            failure: self.failure.take(),
            gave_up: self.gave_up.take(),
            usage: std::mem::take(&mut self.usage),
        }
    }

    /// What the workspace holds now, kept for review with `reason`.
    fn written(&mut self, reason: &str) -> Result<NodeResult, FsError> {
        Ok(NodeResult {
            failure_reason: Some(reason.into()),
            usage: std::mem::take(&mut self.usage),
            work: Some(std::mem::take(&mut self.work)),
            keep: self.site.ctx.workspace.read(&self.site.file)?,
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
    }

    /// A fresh start: the node's files as they were before it (the tests kept when the plan
    /// gives examples: then the examples test is what failed, and it stays).
    fn start_over(&mut self, keep_tests: bool) -> Result<(), FsError> {
        self.site.start_over(keep_tests)?;
        self.failure = None;
        self.fixing.focus.clear();
        Ok(())
    }

    fn inputs(&self, attempt: u32) -> Result<PromptInputs, FsError> {
        self.site
            .inputs(attempt, self.failure.as_deref().unwrap_or_default())
    }

    /// Asks for tests and writes them with the specification's examples test beside them.
    /// With `rewrite`, the best candidate is put back with its undisputed tests, and its
    /// disputed tests are asked again with what it did in them.
    async fn write_tests(&mut self, attempt: u32, rewrite: bool) -> Result<Event, FsError> {
        let (ctx, node) = (self.site.ctx, self.site.node);
        let mut inputs = PromptInputs {
            failure: String::new(),
            ..self.inputs(attempt)?
        };
        if rewrite {
            self.rounds.put_back_best(&self.site, &mut inputs)?;
        }
        let inputs = &inputs;
        let base = self.site.test_text()?;
        if !rewrite && attempt == 0 && self.rounds.lineage.first_round() {
            self.rounds.ahead = Ahead::ask(
                ctx,
                node,
                (Role::Impl, attempt),
                &self.inputs(attempt)?,
                (FIRST_ROUND, Sampling::GreedyFirst),
            );
        }
        let started = std::time::Instant::now();
        let asked = ask(ctx, node, Role::Test, attempt, inputs, &mut self.usage).await;
        self.work.waited_for_model(Role::Test, started);
        match asked.and_then(|answer| self.site.tests_of(&answer, &base)) {
            Ok(merged) => ctx
                .workspace
                .write_if_changed(&self.site.test_file, &merged)?,
            Err(e) => return self.asked_in_vain(e, "test"),
        }
        Ok(Event::TestsWritten)
    }

    /// Asks for the implementation (a fix once an attempt failed) and merges it into the
    /// module, with the imports of dependencies it uses.
    async fn write_implementation(
        &mut self,
        inputs: PromptInputs,
        role: Role,
        n: u32,
        attempt: u32,
    ) -> Result<Event, FsError> {
        let (ctx, node) = (self.site.ctx, self.site.node);
        let inputs = PromptInputs {
            tests: self.site.prompt_tests(role, &self.fixing.focus)?,
            ..inputs
        };
        // Implementations and fixes are asked as several candidates, chosen by running them:
        // a warm sandbox run costs less than a token, and k sequences decode together.
        let started = std::time::Instant::now();
        let sampling = match role == Role::Impl && self.rounds.lineage.first_round() {
            true => Sampling::GreedyFirst,
            false => Sampling::ByAttempt,
        };
        let ahead = self.rounds.ahead.take();
        let asked = ask_many(
            ctx,
            node,
            (role, attempt),
            &inputs,
            &mut self.usage,
            (n, sampling),
            ahead,
        )
        .await;
        self.work.waited_for_model(role, started);
        self.work.asked_ahead += u32::from(asked.ahead);
        if role == Role::Fix {
            self.fixing.note_prompt_tokens(asked.prompt_tokens);
        }
        let answers = asked.answers;
        self.work.rounds += 1;
        self.work.answers += n;
        let greedy_first = answers.first().is_some_and(|a| a.is_ok());
        let (mut modules, refused) =
            self.site
                .distinct_modules(answers, &inputs.current, &self.fixing.editable);
        if self
            .rounds
            .drop_repeated_fixes(role, &inputs.current, &mut modules)
        {
            self.work.repeated_fixes += 1;
            return self.asked_in_vain(
                unusable("every answer repeated code an earlier attempt ran and saw fail"),
                "fix",
            );
        }
        let texts: Vec<String> = modules.iter().map(|(m, _)| m.clone()).collect();
        self.rounds.note_round(role, &texts, greedy_first);
        let (chosen, evidence) = match (texts.len(), refused) {
            (0, Some(e)) => return self.asked_in_vain(e, "implementation"),
            (0, None) => return self.asked_in_vain(unusable("no answer"), "implementation"),
            (1, _) => (0, vec![None]),
            _ => {
                let copies: Vec<usize> = modules.iter().map(|(_, c)| *c).collect();
                let wanted = self
                    .rounds
                    .judged_right(&self.site, self.diagnosis.as_ref(), role);
                self.runs
                    .candidates(&self.site, &mut self.work, (&texts, &copies), &wanted)
                    .await?
            }
        };
        self.rounds.samples = modules
            .into_iter()
            .zip(evidence)
            .map(|((text, copies), evidence)| Sample {
                text,
                copies,
                evidence,
            })
            .collect();
        let merged = self.rounds.samples[chosen].text.clone();
        if role == Role::Fix {
            self.fixing.note_corrected(&inputs.current, &merged);
        }
        ctx.workspace.write_if_changed(&self.site.file, &merged)?;
        Ok(Event::ImplementationWritten {
            unchanged: merged == inputs.current,
        })
    }

    /// An unusable answer is fed back to the next attempt; a provider failure ends the node.
    fn asked_in_vain(&mut self, error: AskError, what: &str) -> Result<Event, FsError> {
        Ok(match error {
            AskError::Unusable(why) => {
                self.failure = Some(format!("the {what} answer was unusable: {why}"));
                Event::Unusable
            }
            AskError::Provider(why) => {
                self.gave_up = Some(why);
                Event::ProviderFailed
            }
        })
    }
}
