//! The test-first loop of one node: tests, candidate implementations chosen by running them,
//! fix rounds while a gate fails (`max_retries` answers), then `passed`, `needs_review` or
//! `failed`.
//!
//! Ground truth is the plan: the examples test from the specification and the earlier
//! functions' tests are gates; the model's own tests are evidence, since a third of them are
//! wrong. Code that passes the gates is never thrown away for failing a generated test: the
//! dispute goes to a majority vote ([`super::vote`]) that has the tests written once more
//! and drops those still failing (B), asks for one fix (A), skips the node (C), or, without a
//! majority, keeps the code as `needs_review`; its dependents run on it.
//! A failed node keeps its best candidate (or a stub), so its module stays importable.
//!
//! What to do next is decided by [`super::machine`], which does no I/O; this file only
//! carries out its actions (ask, write, run, vote) and reports what came of them.
//!
//! Before touching anything the node's files are snapshotted to disk; the snapshot is what a
//! failure reverts to, and what a resumed run restores after a crash in the middle of the node.

use std::collections::BTreeSet;

use crate::checkpoint::{
    Diagnosis, DisputedTest, LocalizedFix, NodeStatus, NodeWork, TestCounts, Verdict,
};
use crate::edit::{code_for_target, merge_python, shape_correction, shape_tests};
use crate::fsutil::{FsError, Snapshot};
use crate::llm::{LlmError, Role, UsageByRole};
use crate::rpg::{Node, NodePos};

use super::machine::{Action, Event, Failure, Limits, Machine, Outcome, Run};
use super::prompt::{self, PromptInputs};
use super::suspects::{self, Ground, PlanFunction};
use super::{Context, examples, vote};
use crate::layout::SNAPSHOT_DIR;
use crate::localize::Budget;

/// How one node ended. `status` is `InProgress` when the run was interrupted.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeResult {
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
}

impl NodeResult {
    fn new(status: NodeStatus) -> NodeResult {
        NodeResult {
            keep: None,
            keep_tests: None,
            work: None,
            diagnosis: None,
            localizations: Vec::new(),
            flaky: Vec::new(),
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

    fn failed(reason: String) -> NodeResult {
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
pub fn files_of(node: &Node) -> Vec<String> {
    let mut files: Vec<String> = node.file_path.iter().cloned().collect();
    if node.is_leaf() {
        files.extend(node.test_file());
    } else if let Some(dir) = node.file_path.as_deref().filter(|p| !p.ends_with(".py")) {
        files = vec![format!("{}/__init__.py", dir.trim_end_matches('/'))];
    }
    files
}

pub async fn run_node(ctx: &Context, position: NodePos) -> NodeResult {
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
    let result = if node.is_leaf() {
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
fn ensure_packages(ctx: &Context, file: &str) -> Result<(), FsError> {
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

/// An answer that could not be used, as the reason fed back to the next attempt.
fn unusable(error: impl std::fmt::Display) -> AskError {
    AskError::Unusable(error.to_string())
}

enum AskError {
    /// The answer had no usable code: worth another attempt, with the reason fed back.
    Unusable(String),
    /// The provider cannot answer: the node fails now.
    Provider(String),
}

async fn run_leaf(ctx: &Context, position: NodePos) -> Result<NodeResult, FsError> {
    let node = ctx.rpg.node(position);
    let (Some(file), Some(test_file)) = (node.file_path.clone(), node.test_file()) else {
        return Ok(NodeResult::failed("leaf without a file path".into()));
    };
    ensure_packages(ctx, &file)?;
    // The node's files as they were before it: a fresh start goes back to them.
    let before = ctx.workspace.snapshot(&[file.clone(), test_file.clone()])?;
    let mut leaf = Leaf {
        ctx,
        position,
        node,
        module: prompt::import_path(&file),
        file,
        test_file,
        before,
        usage: UsageByRole::new(),
        work: NodeWork::default(),
        failure: None,
        ending: None,
        last_run: None,
        best: None,
        focus: Vec::new(),
        samples: Vec::new(),
        diagnosis: None,
        budget: Budget::new(crate::localize::DEFAULT_LIMIT),
        localizations: Vec::new(),
        passed_states: Default::default(),
        flaky: Vec::new(),
        tried: Default::default(),
        editable: Vec::new(),
    };
    if ctx.one_shot {
        return leaf.one_shot().await;
    }
    let mut machine = Machine::new(Limits {
        max_retries: ctx.max_retries,
        candidates: ctx.candidates,
        has_examples: leaf.has_examples(),
    });
    // The machine decides; the driver only carries out its actions. A cancellation is an
    // event like any other, seen before every action.
    let mut event = Event::Start;
    let result = loop {
        let action = machine.step(event);
        if let Action::Finish(outcome) = action {
            break leaf.finish(outcome, &machine)?;
        }
        event = match ctx.cancel.is_cancelled() {
            true => Event::Cancelled,
            false => leaf.execute(action, machine.attempt()).await?,
        };
    };
    let work = (result.status != NodeStatus::InProgress).then_some(leaf.work);
    let diagnosis = leaf.diagnosis.take();
    Ok(NodeResult {
        work,
        diagnosis,
        localizations: std::mem::take(&mut leaf.localizations),
        flaky: std::mem::take(&mut leaf.flaky),
        ..result
    })
}

/// The state of one leaf across its attempts.
struct Leaf<'a> {
    ctx: &'a Context,
    position: NodePos,
    node: &'a Node,
    file: String,
    /// `file` as a Python module path.
    module: String,
    test_file: String,
    before: Snapshot,
    usage: UsageByRole,
    /// What the loop did, for the checkpoint and the run's statistics.
    work: NodeWork,
    /// What went wrong in the last attempt, fed back to the next prompt.
    failure: Option<String>,
    /// Why the node ends when the provider or the sandbox gave up.
    ending: Option<String>,
    /// The last run of the node's tests.
    last_run: Option<crate::sandbox::TestRun>,
    /// The best implementation that ran so far, kept if no attempt passes.
    best: Option<Candidate>,
    /// The failing test functions the next fix must answer (see [`Leaf::focus`]).
    focus: Vec<String>,
    /// The distinct modules of the last implementation round, for the vote's evidence.
    samples: Vec<Sample>,
    /// The vote, once taken (a node is diagnosed at most once).
    diagnosis: Option<Diagnosis>,
    /// Localization queries: 20 per fix (a debug iteration), every query kept.
    budget: Budget,
    /// Where each fix looked first.
    localizations: Vec<LocalizedFix>,
    /// Fingerprints of the module and tests that passed ([`Leaf::code_state`]).
    passed_states: std::collections::HashSet<[u8; 32]>,
    /// Tests that failed and then passed on identical code.
    flaky: Vec<String>,
    /// Every module an implementation round put in place, normalised ([`normalized`]).
    tried: std::collections::HashSet<String>,
    /// The module's functions the fix under way may correct besides the node's own
    /// ([`suspects::Localization::editable`]); empty outside a fix.
    editable: Vec<String>,
}

/// One distinct module of an implementation round.
struct Sample {
    text: String,
    /// How many answers gave it.
    copies: usize,
    /// What running it said (`None` when it was the round's only module, not run apart).
    evidence: Option<Evidence>,
}

/// An implementation that imported and ran, with the evidence it earned.
struct Candidate {
    /// The module's text with it.
    text: String,
    /// It passed the gates: the specification's examples test (when the plan gives examples)
    /// and every earlier function's tests. Only the gates are ground truth; the generated
    /// tests are evidence, and a third of them are wrong.
    gated: bool,
    /// Generated tests passed.
    passed: u32,
    /// The generated tests of this node it failed.
    disputed: Vec<String>,
    /// Those tests' sources with what it did in them.
    disputed_tests: Vec<DisputedTest>,
    /// The test file without the disputed tests.
    undisputed_tests: String,
}

impl Candidate {
    /// Better evidence wins; on a tie the earlier candidate stays (`>`, not `>=`): a later
    /// one was bent towards tests that may be wrong.
    fn beats(&self, other: &Candidate) -> bool {
        (self.gated, self.passed) > (other.gated, other.passed)
    }

    /// What pytest said of each disputed test, one after another.
    fn disputed_output(&self) -> String {
        let outputs: Vec<&str> = self
            .disputed_tests
            .iter()
            .map(|t| t.output.as_str())
            .collect();
        outputs.join("\n")
    }
}

impl Leaf<'_> {
    /// Carries out one action of the machine and says what came of it.
    async fn execute(&mut self, action: Action, attempt: u32) -> Result<Event, FsError> {
        match action {
            Action::StartOver { keep_tests } => self.start_over(keep_tests).map(|()| Event::Done),
            Action::AskTests => self.write_tests(attempt, false).await,
            Action::RewriteTests => self.write_tests(attempt, true).await,
            Action::AskImplementation { role, candidates } => {
                let mut inputs = self.inputs(attempt)?;
                self.editable.clear();
                if role == Role::Fix {
                    inputs.suspects = self.localize(attempt);
                }
                self.write_implementation(inputs, role, candidates, attempt)
                    .await
            }
            Action::RunTests => self.run_tests(attempt).await,
            Action::DiscardTests => self.discard_tests().map(|()| Event::Done),
            Action::DropDisputed => self.drop_disputed().await,
            Action::Diagnose => self.diagnose(attempt).await,
            Action::FixBest => self.fix_best().map(|()| Event::Done),
            // The driver never executes a finish.
            Action::Finish(_) => Ok(Event::Cancelled),
        }
    }

    /// Localizes the failure a fix answers ([`suspects`]): records the suspects and returns
    /// the prompt's section on what the failure points at outside the function.
    fn localize(&mut self, attempt: u32) -> String {
        let Some(failure) = self.failure.clone() else {
            return String::new();
        };
        let own = PlanFunction {
            id: self.node.id.clone(),
            name: self.node.name.clone(),
            file: self.file.clone(),
        };
        let ground = LeafGround {
            ctx: self.ctx,
            position: self.position,
        };
        let found = suspects::localize(&own, &failure, &ground, &mut self.budget);
        self.budget.next_iteration();
        tracing::debug!(
            node = %self.node.id,
            queries = found.queries,
            suspects = ?found.suspects.iter().map(|s| s.symbol.as_str()).collect::<Vec<_>>(),
            "localized a failure"
        );
        // The node's own function, unless the chosen answer corrects a suspect of its module
        // instead (set once the candidates ran).
        self.localizations
            .push(found.record(attempt, &self.node.name));
        self.editable = found.editable(&own);
        suspects::prompt_section(&own.name, &found.shown(&own), &self.editable)
    }

    /// The node's result for the machine's outcome.
    fn finish(&mut self, outcome: Outcome, machine: &Machine) -> Result<NodeResult, FsError> {
        let retries = machine.retries();
        match outcome {
            Outcome::Passed => {
                self.work.first_try = self.work.rounds == 1;
                let usage = std::mem::take(&mut self.usage);
                Ok(match &self.last_run {
                    Some(run) => NodeResult::passed(run, retries, usage),
                    None => NodeResult::new(NodeStatus::Passed),
                })
            }
            Outcome::PassedWithoutDisputed => Ok(self.without_disputed(retries)),
            Outcome::SkippedEnvironment => Ok(self.skipped_for_environment(retries)),
            // Both keep a gated candidate for review, else the node failed.
            Outcome::NeedsReview | Outcome::Failed(Failure::Exhausted) => {
                self.exhausted(retries + 1)
            }
            Outcome::Failed(Failure::Provider | Failure::CannotRun) => {
                let reason = self.ending.take().unwrap_or_default();
                self.end(NodeResult::failed(reason))
            }
            Outcome::Interrupted => self.end(NodeResult::new(NodeStatus::InProgress)),
        }
    }

    /// The baseline: one implementation, no tests, nothing run; what came back is kept.
    async fn one_shot(mut self) -> Result<NodeResult, FsError> {
        let inputs = self.inputs(0)?;
        match self.write_implementation(inputs, Role::Impl, 1, 0).await? {
            Event::ImplementationWritten { .. } => {}
            _ => {
                let reason = self.ending.take().or(self.failure.take());
                return self.end(NodeResult::failed(reason.unwrap_or_default()));
            }
        }
        Ok(NodeResult {
            failure_reason: Some("one-shot baseline: written once, never run".into()),
            usage: std::mem::take(&mut self.usage),
            keep: self.ctx.workspace.read(&self.file)?,
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
    }

    /// A fresh start: the node's files as they were before it (the tests kept when the plan
    /// gives examples: then the examples test is what failed, and it stays).
    fn start_over(&mut self, keep_tests: bool) -> Result<(), FsError> {
        tracing::debug!(node = %self.node.id, keep_tests, "starting over");
        let tests = self.ctx.workspace.read(&self.test_file)?;
        self.ctx.workspace.restore(&self.before)?;
        if let Some(tests) = tests.filter(|_| keep_tests) {
            self.ctx
                .workspace
                .write_if_changed(&self.test_file, &tests)?;
        }
        self.failure = None;
        self.focus.clear();
        Ok(())
    }

    fn inputs(&self, attempt: u32) -> Result<PromptInputs, FsError> {
        let (ctx, node) = (self.ctx, self.node);
        Ok(PromptInputs {
            node: prompt::describe_node(node),
            name: node.name.clone(),
            file_path: self.file.clone(),
            import_line: format!("from {} import {}", self.module, node.name),
            context: prompt::dependency_context(&ctx.rpg, self.position, &ctx.workspace),
            current: ctx.workspace.read(&self.file)?.unwrap_or_default(),
            tests: self.test_text()?,
            failure: self.failure.clone().unwrap_or_default(),
            attempt,
            options: String::new(),
            head: prompt::answer_head(node),
            suspects: String::new(),
        })
    }

    /// Asks for tests and writes them with the specification's examples test beside them.
    /// With `rewrite`, the best candidate is put back with its undisputed tests, and its
    /// disputed tests are asked again with what it did in them.
    async fn write_tests(&mut self, attempt: u32, rewrite: bool) -> Result<Event, FsError> {
        let mut inputs = PromptInputs {
            failure: String::new(),
            ..self.inputs(attempt)?
        };
        if rewrite && let Some(best) = &self.best {
            let ws = &self.ctx.workspace;
            ws.write_if_changed(&self.file, &best.text)?;
            ws.write_if_changed(&self.test_file, &best.undisputed_tests)?;
            let sources: Vec<&str> = best
                .disputed_tests
                .iter()
                .map(|t| t.source.as_str())
                .collect();
            inputs.failure = best.disputed_output();
            inputs.tests = sources.join("\n\n");
            inputs.current = best.text.clone();
        }
        let inputs = &inputs;
        let base = self.test_text()?;
        let started = std::time::Instant::now();
        let asked = ask(
            self.ctx,
            self.node,
            Role::Test,
            attempt,
            inputs,
            &mut self.usage,
        )
        .await;
        self.work.waited_for_model(Role::Test, started);
        let specification = self.node.docstring.as_deref().unwrap_or("");
        let code = asked
            .and_then(|answer| code_for_target(&answer, &self.test_file, &base).map_err(unusable))
            .and_then(|code| {
                shape_tests(&without_broken_units(&code), specification).map_err(unusable)
            })
            .and_then(|code| refuse_foreign(code, &self.ctx.packages, &["pytest"]));
        let code = match code {
            Ok(code) => code,
            Err(e) => return self.asked_in_vain(e, "test"),
        };
        let mut merged = merge_python(&base, &code);
        if let Some(from_spec) = examples::examples_test(self.node, &self.module) {
            merged = merge_python(&merged, &from_spec);
        }
        self.ctx
            .workspace
            .write_if_changed(&self.test_file, &merged)?;
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
        let inputs = PromptInputs {
            tests: self.prompt_tests(role)?,
            ..inputs
        };
        // Implementations and fixes are asked as several candidates, chosen by running them:
        // a warm sandbox run costs less than a token, and k sequences decode together.
        let started = std::time::Instant::now();
        let (answers, prompt_tokens) = ask_many(
            self.ctx,
            self.node,
            role,
            attempt,
            &inputs,
            &mut self.usage,
            n,
        )
        .await;
        self.work.waited_for_model(role, started);
        if role == Role::Fix
            && let Some(fix) = self.localizations.last_mut()
        {
            fix.prompt_tokens = prompt_tokens;
        }
        self.work.rounds += 1;
        self.work.answers += n;
        // Distinct modules, with how many answers gave each: identical samples agree.
        let mut modules: Vec<(String, usize)> = Vec::new();
        let mut refused = None;
        for answer in answers {
            match self.module_with(answer, &inputs.current) {
                Ok(module) => match modules.iter_mut().find(|(m, _)| *m == module) {
                    Some((_, copies)) => *copies += 1,
                    None => modules.push((module, 1)),
                },
                Err(e) => {
                    refused.get_or_insert(e);
                }
            }
        }
        // The same fix is never tried twice: a fix answer that gives back code an earlier
        // round already ran (and that is not the code in place, which says the model holds it
        // right) is dropped before it runs.
        if role == Role::Fix {
            let current = normalized(&inputs.current);
            let before = modules.len();
            modules.retain(|(m, _)| {
                let code = normalized(m);
                code == current || !self.tried.contains(&code)
            });
            if modules.is_empty() && before > 0 {
                self.work.repeated_fixes += 1;
                return self.asked_in_vain(
                    unusable("every answer repeated code an earlier attempt ran and saw fail"),
                    "fix",
                );
            }
        }
        self.tried
            .extend(modules.iter().map(|(m, _)| normalized(m)));
        let texts: Vec<String> = modules.iter().map(|(m, _)| m.clone()).collect();
        let (chosen, evidence) = match (texts.len(), refused) {
            (0, Some(e)) => return self.asked_in_vain(e, "implementation"),
            (0, None) => return self.asked_in_vain(unusable("no answer"), "implementation"),
            (1, _) => (0, vec![None]),
            _ => self.choose(&texts, &self.judged_right(role)).await?,
        };
        self.samples = modules
            .into_iter()
            .zip(evidence)
            .map(|((text, copies), evidence)| Sample {
                text,
                copies,
                evidence,
            })
            .collect();
        let merged = self.samples[chosen].text.clone();
        if role == Role::Fix
            && let Some(fix) = self.localizations.last_mut()
            && let Some(symbol) = corrected_suspect(&inputs.current, &merged, &self.editable)
        {
            fix.edited = symbol;
        }
        self.ctx.workspace.write_if_changed(&self.file, &merged)?;
        Ok(Event::ImplementationWritten {
            unchanged: merged == inputs.current,
        })
    }

    /// The tests a prompt shows: a fix sees only the failing tests it must answer; a first
    /// implementation sees this node's tests, not those of the module's earlier functions.
    fn prompt_tests(&self, role: Role) -> Result<String, FsError> {
        let tests = self.test_text()?;
        Ok(match role {
            Role::Fix if !self.focus.is_empty() => only_tests(&tests, &self.focus),
            _ => without_tests(&tests, &self.earlier_tests()),
        })
    }

    /// The one module the plan defines function `name` in; `None` when it defines none or
    /// several.
    fn plan_home(&self, name: &str) -> Option<String> {
        match self.ctx.functions.get(name)?.as_slice() {
            [only] => self
                .ctx
                .rpg
                .node(*only)
                .file_path
                .as_deref()
                .map(prompt::import_path),
            _ => None,
        }
    }

    /// The node's test file as it is now (empty when there is none yet).
    fn test_text(&self) -> Result<String, FsError> {
        Ok(self
            .ctx
            .workspace
            .read(&self.test_file)?
            .unwrap_or_default())
    }

    /// The test functions the test file had before this node: the module's earlier functions'.
    fn earlier_tests(&self) -> Vec<String> {
        let before = self
            .before
            .content(&self.test_file)
            .flatten()
            .unwrap_or_default();
        crate::code::split_units(&String::from_utf8_lossy(before))
            .iter()
            .filter_map(|u| u.def_name().map(str::to_string))
            .collect()
    }

    /// The failing test functions a fix must answer, strongest evidence first: the earlier
    /// functions' tests it broke, else the specification's examples, else the generated
    /// tests that fail. A fix shown every failure bends code to the wrong tests too.
    fn focus(&self, run: &crate::sandbox::TestRun) -> Vec<String> {
        let examples = examples::test_name(self.node);
        focus(failing_functions(run), &self.earlier_tests(), &examples)
    }

    /// The module as it would be with this answer: the function shaped, the plan's docstring
    /// and the forgotten imports added, a variable that shadows a module function it calls
    /// renamed ([`crate::code::repair`]), merged into `current`.
    fn module_with(
        &self,
        answer: Result<String, AskError>,
        current: &str,
    ) -> Result<String, AskError> {
        let src_layout = self.file.starts_with("src/");
        let code = answer
            .and_then(|answer| code_for_target(&answer, &self.file, current).map_err(unusable))
            .map(|code| match src_layout {
                true => without_src_prefix(&code),
                false => code,
            })
            .and_then(|code| {
                shape_correction(
                    &code,
                    &self.node.name,
                    &self.editable,
                    &self.module,
                    current,
                )
                .map_err(unusable)
            })
            .and_then(|code| refuse_foreign(code, &self.ctx.packages, &[]))?;
        let code = with_plan_docstring(self.node, code);
        // A corrected suspect keeps its plan docstring like the node's own function.
        let code = self
            .editable
            .iter()
            .filter_map(|name| self.ctx.functions.get(name.as_str()))
            .flatten()
            .map(|&p| self.ctx.rpg.node(p))
            .filter(|n| n.file_path.as_deref() == Some(self.file.as_str()))
            .fold(code, |code, n| with_plan_docstring(n, code));
        let code = repoint_imports(&code, &|name| self.plan_home(name), &self.ctx.packages);
        let code = with_missing_imports(self.ctx, self.position, &code, current);
        let globals: BTreeSet<String> = bound_names(&code)
            .into_iter()
            .chain(bound_names(current))
            .collect();
        let code = crate::code::repair::unshadow_called_globals(&code, &self.node.name, &globals);
        let module = merge_python(current, &code);
        // A module that does not parse breaks every import of its package (the exports
        // import it): such an answer is unusable, never kept, not even by the one-shot.
        match crate::code::check::tree_sitter_errors(&module) {
            Ok(errors) if errors.is_empty() => Ok(module),
            Ok(errors) => Err(unusable(format!(
                "the module would not parse: {}",
                errors
                    .first()
                    .map_or(String::new(), |e| format!("line {}: {}", e.line, e.message))
            ))),
            Err(e) => Err(unusable(format!("the module would not parse: {e}"))),
        }
    }

    /// Runs the node's tests with each candidate module in place and returns the index of
    /// the one to keep (see [`pick`]) with what each run said. A warm sandbox run costs far less than a token.
    async fn choose(
        &mut self,
        modules: &[String],
        wanted: &[String],
    ) -> Result<(usize, Vec<Option<Evidence>>), FsError> {
        let ctx = self.ctx;
        let mut evidence = Vec::with_capacity(modules.len());
        for (i, module) in modules.iter().enumerate() {
            ctx.phases.report(
                &self.node.id,
                &format!("running candidate {}/{}", i + 1, modules.len()),
            );
            ctx.workspace.write_if_changed(&self.file, module)?;
            let run = self.run_node_tests().await;
            evidence.push(match run {
                Ok(run) if !run.cancelled => Some(self.evidence(&run)),
                _ => None,
            });
        }
        let chosen = pick(&evidence, wanted);
        tracing::debug!(node = %self.node.id, candidates = modules.len(), chosen, "candidates ran");
        Ok((chosen, evidence))
    }

    /// The disputed tests a fix round must make pass, whatever the samples agree on: after a
    /// vote for A, those where the kept code crashed instead of raising a documented error
    /// ([`vote::crashed_instead_of_documented_error`]). Not every test the vote judged right:
    /// on ml_lib the vote's A was right for 2 of 14 decided tests. None for any other round.
    fn judged_right(&self, role: Role) -> Vec<String> {
        let voted_code_wrong = self
            .diagnosis
            .as_ref()
            .is_some_and(|d| d.outcome == Some(Verdict::Implementation));
        match (role == Role::Fix && voted_code_wrong, &self.best) {
            (true, Some(best)) => self.crashed_tests(best),
            _ => Vec::new(),
        }
    }

    /// `best`'s disputed tests in which it crashed instead of raising a documented error.
    fn crashed_tests(&self, best: &Candidate) -> Vec<String> {
        let documented = vote::documented_errors(self.node.docstring.as_deref().unwrap_or(""));
        best.disputed_tests
            .iter()
            .filter(|t| {
                vote::crashed_instead_of_documented_error(&t.source, &t.output, &documented)
            })
            .map(|t| t.name.clone())
            .collect()
    }

    /// Whether the plan gives this node examples that make a test (the strongest gate).
    fn has_examples(&self) -> bool {
        examples::examples_test(self.node, &self.module).is_some()
    }

    /// What a run says about the implementation in place.
    fn evidence(&self, run: &crate::sandbox::TestRun) -> Evidence {
        let examples = examples::test_name(self.node);
        let passed: BTreeSet<String> = run
            .tests
            .iter()
            .filter(|t| t.outcome == "passed")
            .map(|t| t.name.clone())
            .collect();
        Evidence {
            usable: run.passed + run.failed > 0 && !self.breaks_earlier_tests(run),
            gated: passed.iter().any(|n| test_function(n) == examples) || !self.has_examples(),
            passed,
        }
    }

    /// An unusable answer is fed back to the next attempt; a provider failure ends the node.
    fn asked_in_vain(&mut self, error: AskError, what: &str) -> Result<Event, FsError> {
        Ok(match error {
            AskError::Unusable(why) => {
                self.failure = Some(format!("the {what} answer was unusable: {why}"));
                Event::Unusable
            }
            AskError::Provider(why) => {
                self.ending = Some(why);
                Event::ProviderFailed
            }
        })
    }

    /// Runs the node's tests; a failed run is remembered (the best candidate so far) and
    /// kept for the next prompt.
    async fn run_tests(&mut self, attempt: u32) -> Result<Event, FsError> {
        self.ctx.phases.report(&self.node.id, "running tests");
        let run = match self.run_node_tests().await {
            Ok(run) => run,
            Err(e) => {
                self.ending = Some(format!("cannot run tests: {e}"));
                return Ok(Event::RunError);
            }
        };
        if run.cancelled {
            return Ok(Event::Cancelled);
        }
        let event = if test_file_is_broken(&run, &self.test_file) {
            tracing::debug!(node = %self.node.id, attempt, "the test file is broken");
            Event::Ran(Run::TestFileBroken)
        } else if run.succeeded() {
            Event::Ran(Run::Passed)
        } else {
            tracing::debug!(node = %self.node.id, attempt, "tests failed: {}", run.failure_reason());
            self.remember(&run)?;
            self.focus = self.focus(&run);
            self.failure = Some(run.failure_reason() + "\n\n" + &run.output_of(&self.focus));
            Event::Ran(Run::Failed {
                breaks_earlier: self.breaks_earlier_tests(&run),
                best_gated: self.best.as_ref().is_some_and(|b| b.gated),
            })
        };
        self.last_run = Some(run);
        Ok(event)
    }

    /// A test fault, never sent to an implementation fix: the test file goes back to what it
    /// was before the node, and new tests are written for the same code.
    fn discard_tests(&mut self) -> Result<(), FsError> {
        match self.before.content(&self.test_file).flatten() {
            Some(text) => self
                .ctx
                .workspace
                .write_if_changed(&self.test_file, &String::from_utf8_lossy(text))?,
            None => self.ctx.workspace.remove(&self.test_file)?,
        }
        self.failure = None;
        Ok(())
    }

    /// The fix changed nothing: the model holds the code right, so the failing generated
    /// tests are dropped when the plan's examples pass (see [`drop_disputed_tests`]).
    async fn drop_disputed(&mut self) -> Result<Event, FsError> {
        let Some(run) = &self.last_run else {
            return Ok(Event::Dropped { passed: false });
        };
        let dropped = drop_disputed_tests(self.ctx, self.node, &self.test_file, run).await?;
        let passed = dropped.is_some();
        if let Some(run) = dropped {
            self.last_run = Some(run);
        }
        Ok(Event::Dropped { passed })
    }

    /// The vote blamed the implementation: one fix of the kept code, answering the disputed
    /// tests.
    fn fix_best(&mut self) -> Result<(), FsError> {
        let Some(best) = &self.best else {
            return Ok(());
        };
        self.ctx
            .workspace
            .write_if_changed(&self.file, &best.text)?;
        self.focus = best.disputed.clone();
        self.failure = Some(best.disputed_output());
        Ok(())
    }

    /// The vote blamed the tests: the kept candidate passes without them.
    fn without_disputed(&mut self, retries: u32) -> NodeResult {
        let Some(best) = self.best.take() else {
            return NodeResult::new(NodeStatus::Passed);
        };
        NodeResult {
            tests: Some(TestCounts {
                passed: best.passed,
                failed: 0,
            }),
            retries,
            usage: std::mem::take(&mut self.usage),
            keep: Some(best.text),
            keep_tests: Some(best.undisputed_tests),
            ..NodeResult::new(NodeStatus::Passed)
        }
    }

    /// The vote blamed the environment: the node is skipped, its module kept importable for
    /// the rest of the file.
    fn skipped_for_environment(&mut self, retries: u32) -> NodeResult {
        let best = self.best.take();
        let failure = best.as_ref().map(Candidate::disputed_output);
        NodeResult {
            failure_reason: Some(format!(
                "environment (diagnosis by vote): {}",
                failure
                    .as_deref()
                    .and_then(|f| f.lines().last())
                    .unwrap_or("")
                    .trim()
            )),
            retries,
            usage: std::mem::take(&mut self.usage),
            keep: best.map(|b| b.text),
            ..NodeResult::new(NodeStatus::Skipped)
        }
    }

    /// Asks for the votes on the kept candidate's disputed tests (see [`super::vote`]).
    async fn diagnose(&mut self, attempt: u32) -> Result<Event, FsError> {
        let Some(best) = self.best.as_ref() else {
            return Ok(Event::Voted(None));
        };
        let tests = self.test_text()?;
        let inputs = PromptInputs {
            current: best.text.clone(),
            tests: only_tests(&tests, &best.disputed),
            failure: best.disputed_output(),
            ..self.inputs(attempt)?
        };
        let execution = self.execution(best);
        let disputed = best.disputed_tests.clone();
        let started = std::time::Instant::now();
        let mut votes = Vec::new();
        for i in 0..vote::VOTERS {
            if self.ctx.cancel.is_cancelled() {
                break;
            }
            let inputs = PromptInputs {
                options: vote::options(i),
                ..inputs.clone()
            };
            let answer = ask_vote(self.ctx, self.node, attempt, &inputs, i, &mut self.usage).await;
            votes.extend(answer.ok().and_then(|a| vote::parse(&a, i)));
        }
        self.work.waited_for_model(Role::Diagnose, started);
        let evidence = vote::evidence(&execution);
        let outcome = vote::decide(&votes, &execution);
        let letters: String = votes.iter().chain(&evidence).map(|v| v.letter()).collect();
        tracing::info!(node = %self.node.id, votes = %letters, outcome = ?outcome, "diagnosis of {} disputed test(s)", disputed.len());
        if self.ctx.cancel.is_cancelled() {
            return Ok(Event::Cancelled);
        }
        self.diagnosis = Some(Diagnosis {
            votes,
            evidence,
            outcome,
            disputed,
        });
        Ok(Event::Voted(outcome))
    }

    /// What the last implementation round's runs say about `best`'s disputed tests.
    fn execution(&self, best: &Candidate) -> vote::Execution {
        let gated: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| {
                s.text == best.text || s.evidence.as_ref().is_some_and(|e| e.usable && e.gated)
            })
            .collect();
        let passes_disputed = |e: &Evidence| {
            e.passed
                .iter()
                .any(|p| best.disputed.iter().any(|d| d == test_function(p)))
        };
        vote::Execution {
            environment: best
                .disputed_tests
                .iter()
                .any(|t| vote::blames_environment(&t.output)),
            crashed: !self.crashed_tests(best).is_empty(),
            gated_candidates: gated.iter().map(|s| s.copies).sum(),
            any_passes_a_disputed_test: gated
                .iter()
                .filter_map(|s| s.evidence.as_ref())
                .any(passes_disputed),
        }
    }

    /// Runs the node's tests on what the workspace holds (see [`Leaf::run_repeating`]) and
    /// counts a regression it catches.
    async fn run_node_tests(
        &mut self,
    ) -> Result<crate::sandbox::TestRun, crate::sandbox::SandboxError> {
        let run = self.run_repeating().await?;
        self.count_regression(&run);
        Ok(run)
    }

    /// A failing run is repeated once on identical code when it failed for something other
    /// than an assertion (a timeout, a sandbox limit) or when the same code and tests passed
    /// before; tests that pass on the repeat are flagged flaky, and the repeat is the run that
    /// counts.
    async fn run_repeating(
        &mut self,
    ) -> Result<crate::sandbox::TestRun, crate::sandbox::SandboxError> {
        let first = self.run_once().await?;
        let state = self.code_state();
        if first.succeeded() {
            self.passed_states.insert(state);
            return Ok(first);
        }
        let transient =
            first.timed_out || first.killed_by.as_deref().is_some_and(|k| k != "cancelled");
        if first.cancelled || !(transient || self.passed_states.contains(&state)) {
            return Ok(first);
        }
        tracing::debug!(node = %self.node.id, "repeating a failed run on identical code");
        let again = self.run_once().await?;
        let flaky = flaky_tests(&first, &again);
        tracing::debug!(node = %self.node.id, ?flaky, "the repeat ran");
        for name in flaky {
            if !self.flaky.contains(&name) {
                self.flaky.push(name);
            }
        }
        Ok(again)
    }

    /// A regression caught: the code in place broke a test of an earlier function of the
    /// module, which passed before (such code is never kept; see [`Leaf::evidence`]).
    fn count_regression(&mut self, run: &crate::sandbox::TestRun) {
        if !run.cancelled && self.breaks_earlier_tests(run) {
            self.work.regressions_caught += 1;
        }
    }

    /// Runs the node's test file in the sandbox once, counted and timed.
    async fn run_once(&mut self) -> Result<crate::sandbox::TestRun, crate::sandbox::SandboxError> {
        let ctx = self.ctx;
        let started = std::time::Instant::now();
        let run = ctx
            .runner
            .run_tests(ctx.workspace.root(), &self.test_file, &ctx.cancel)
            .await;
        self.work.sandbox_runs += 1;
        self.work.sandbox_ms += started.elapsed().as_millis() as u64;
        run
    }

    /// A fingerprint of the node's module and test file as they are now.
    fn code_state(&self) -> [u8; 32] {
        let read = |f: &str| {
            self.ctx
                .workspace
                .read(f)
                .ok()
                .flatten()
                .unwrap_or_default()
        };
        use sha2::Digest;
        let mut hash = sha2::Sha256::new();
        for text in [read(&self.file), read(&self.test_file)] {
            hash.update((text.len() as u64).to_le_bytes());
            hash.update(text.as_bytes());
        }
        hash.finalize().into()
    }

    /// Ends the node with its gated candidate kept: `needs_review`, or `None` without one.
    fn review(&mut self, retries: u32) -> Option<NodeResult> {
        let best = self.best.take_if(|b| b.gated)?;
        let reason = format!(
            "{} model-written test(s) fail against code that passes {}: {}",
            best.disputed.len(),
            if self.has_examples() {
                "the specification's examples and the module's earlier tests"
            } else {
                "the module's earlier tests (the plan gives no examples)"
            },
            best.disputed.join(", ")
        );
        tracing::info!(node = %self.node.id, "needs review: {reason}");
        Some(NodeResult {
            status: NodeStatus::NeedsReview,
            tests: Some(TestCounts {
                passed: best.passed,
                failed: best.disputed.len() as u32,
            }),
            retries,
            failure_reason: Some(reason),
            usage: std::mem::take(&mut self.usage),
            keep: Some(best.text),
            keep_tests: Some(best.undisputed_tests),
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
    }

    /// Keeps the implementation just run if it imported (some test passed or failed rather
    /// than erred) and has better evidence than the best so far.
    fn remember(&mut self, run: &crate::sandbox::TestRun) -> Result<(), FsError> {
        let evidence = self.evidence(run);
        if !evidence.usable {
            return Ok(());
        }
        let disputed = failing_functions(run);
        let tests = self.test_text()?;
        let candidate = Candidate {
            text: self.ctx.workspace.read(&self.file)?.unwrap_or_default(),
            gated: evidence.gated,
            passed: run.passed,
            undisputed_tests: without_tests(&tests, &disputed),
            disputed_tests: disputed_tests(&tests, &disputed, run),
            disputed,
        };
        if self.best.as_ref().is_none_or(|best| candidate.beats(best)) {
            self.best = Some(candidate);
        }
        Ok(())
    }

    /// Whether a test that was in the test file before this node (an earlier function's, in
    /// the same module) failed: a candidate that breaks working code is never kept.
    fn breaks_earlier_tests(&self, run: &crate::sandbox::TestRun) -> bool {
        let earlier = self.earlier_tests();
        failing_functions(run)
            .iter()
            .any(|n| earlier.iter().any(|e| e == n))
    }

    /// What a failed node leaves in its module: its best candidate, else a stub that says
    /// why it is missing. Reverted to nothing, a failed function breaks every module and
    /// test that imports anything from its file.
    fn kept_text(&mut self, reason: &str) -> Result<Option<String>, FsError> {
        if let Some(best) = self.best.take() {
            return Ok(Some(best.text));
        }
        let Some(stub) = stub(self.node, reason) else {
            return Ok(None);
        };
        let before = self
            .before
            .content(&self.file)
            .flatten()
            .unwrap_or_default();
        Ok(Some(merge_python(&String::from_utf8_lossy(before), &stub)))
    }

    /// `result` with the tokens this node spent, and for a failure what its module keeps.
    fn end(&mut self, result: NodeResult) -> Result<NodeResult, FsError> {
        let keep = match (&result.status, &result.failure_reason) {
            (NodeStatus::Failed, Some(reason)) => self.kept_text(reason)?,
            _ => None,
        };
        Ok(NodeResult {
            usage: std::mem::take(&mut self.usage),
            keep,
            ..result
        })
    }

    /// The node ends without passing: a gated candidate is kept for review, else the node
    /// failed after `attempts` attempts.
    fn exhausted(&mut self, attempts: u32) -> Result<NodeResult, FsError> {
        if let Some(review) = self.review(attempts.saturating_sub(1)) {
            return Ok(review);
        }
        let reason = self
            .failure
            .as_deref()
            .and_then(|f| f.lines().next())
            .unwrap_or("no attempt succeeded")
            .to_string();
        let failed = NodeResult {
            status: NodeStatus::Failed,
            tests: self.last_run.as_ref().map(counts_of),
            retries: attempts.saturating_sub(1),
            failure_reason: Some(format!("{reason} (after {attempts} attempts)")),
            ..NodeResult::new(NodeStatus::Failed)
        };
        self.end(failed)
    }
}

/// The first of `editable` whose definition differs between the module `before` a fix and
/// `after` it: the suspect the fix corrected.
fn corrected_suspect(before: &str, after: &str, editable: &[String]) -> Option<String> {
    let definition = |code: &str, name: &str| {
        crate::code::split_units(code)
            .into_iter()
            .find(|u| u.def_name() == Some(name))
            .map(|u| normalized(&u.text))
    };
    editable
        .iter()
        .find(|name| definition(before, name) != definition(after, name))
        .cloned()
}

/// `code` without comments, blank lines and trailing spaces: two answers that differ only
/// there are the same fix.
fn normalized(code: &str) -> String {
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    lines.join("\n")
}

/// The tests that failed in `first` and passed in `again`; when `first` ended before pytest
/// could report its tests (a timeout, a sandbox limit) and `again` passed, the whole run.
fn flaky_tests(first: &crate::sandbox::TestRun, again: &crate::sandbox::TestRun) -> Vec<String> {
    if first.tests.is_empty() && again.succeeded() {
        return vec![format!("the whole run ({})", first.failure_reason())];
    }
    let passed: BTreeSet<&str> = again
        .tests
        .iter()
        .filter(|t| t.outcome == "passed")
        .map(|t| t.name.as_str())
        .collect();
    first
        .tests
        .iter()
        .filter(|t| matches!(t.outcome.as_str(), "failed" | "error"))
        .filter(|t| passed.contains(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect()
}

/// What a node's localization reads: the staged code and the plan around the node.
struct LeafGround<'a> {
    ctx: &'a Context,
    position: NodePos,
}

impl LeafGround<'_> {
    fn function(&self, position: NodePos) -> Option<PlanFunction> {
        let node = self.ctx.rpg.node(position);
        let file = node.file_path.clone()?;
        (node.is_leaf() && node.kind == "function").then(|| PlanFunction {
            id: node.id.clone(),
            name: node.name.clone(),
            file,
        })
    }
}

impl Ground for LeafGround<'_> {
    fn source_of(&self, file: &str, symbol: &str) -> Option<String> {
        let source = self.ctx.workspace.read(file).ok().flatten()?;
        let symbols = crate::code::outline::outline(&source).ok()?;
        let found = symbols.iter().find(|s| s.qualified_name == symbol)?;
        let lines: Vec<&str> = source.lines().collect();
        let (start, end) = (found.start_line.max(1) - 1, found.end_line.min(lines.len()));
        Some(lines.get(start..end)?.join("\n"))
    }

    fn node_of(&self, file: &str, symbol: &str) -> Option<String> {
        let positions = self.ctx.functions.get(symbol)?;
        positions
            .iter()
            .map(|&p| self.ctx.rpg.node(p))
            .find(|n| n.file_path.as_deref() == Some(file))
            .map(|n| n.id.clone())
    }

    fn dependencies(&self) -> Vec<PlanFunction> {
        let graph = self.ctx.rpg.graph();
        let near = graph.dependencies_of(self.position);
        let far = near.iter().flat_map(|&p| graph.dependencies_of(p));
        let mut seen = BTreeSet::from([self.position]);
        near.iter()
            .copied()
            .chain(far)
            .filter(|&p| seen.insert(p))
            .filter_map(|p| self.function(p))
            .collect()
    }

    fn search(&self, text: &str, k: usize) -> Vec<PlanFunction> {
        let index = self
            .ctx
            .index
            .get_or_init(|| crate::localize::Index::build(self.ctx.rpg.rpg()));
        index
            .search_lexical(text, k, None)
            .into_iter()
            .filter_map(|(i, _)| self.function(NodePos::new(i)))
            .collect()
    }
}

/// The stub a failed function leaves (see [`crate::code::stub`]); `None` for methods and
/// classes, whose place is inside a class.
fn stub(node: &Node, reason: &str) -> Option<String> {
    if node.kind != "function" {
        return None;
    }
    let doc = node.docstring.as_deref().unwrap_or("");
    crate::code::stub::function_stub(&node.name, doc, reason)
}

/// The function with the plan's docstring as its own when the answer brings none: the
/// prompt no longer asks the model to re-type it (about half of what it wrote was the
/// docstring again). Plan text enters only as an escaped literal.
fn with_plan_docstring(node: &Node, code: String) -> String {
    let doc = node.docstring.as_deref().unwrap_or("").trim();
    if node.kind != "function" || doc.is_empty() {
        return code;
    }
    let literal = crate::python::body_docstring_literal(doc, "    ");
    crate::code::edit::insert_docstring(&code, &node.name, &literal).unwrap_or(code)
}

/// Project imports written as `from src.pkg.mod import f` without the `src.`: in a src
/// layout the directory is not part of the import path, and models often write it (the
/// one-shot baseline imported its own module that way, which is circular). `import src.x`
/// stays: the code names `src.x.f`, and rewriting the import would break that.
fn without_src_prefix(code: &str) -> String {
    let units = crate::code::split_units(code);
    let fixed: Vec<crate::code::Unit> = units
        .into_iter()
        .map(|mut unit| {
            if unit.kind == crate::code::UnitKind::Import {
                let text = unit.text.trim_start();
                if let Some(rest) = text.strip_prefix("from src.") {
                    unit.text = format!("from {rest}");
                }
            }
            unit
        })
        .collect();
    crate::edit::merge::render(&fixed)
}

/// Names a piece of Python binds at its top level: imports and definitions.
fn bound_names(code: &str) -> BTreeSet<String> {
    crate::code::split_units(code)
        .iter()
        .flat_map(|u| {
            u.imported_names()
                .into_iter()
                .chain(u.def_name().map(str::to_string))
        })
        .collect()
}

/// Adds the imports the code needs and forgets, before anything runs (the seed's "missing
/// imports: detect and add"): a dependency in another module it calls, a `typing` name it
/// annotates with, a standard-library module it reaches into (`math.sqrt`). A 1.5B model
/// forgets these often, and each one fails every test of the module at import.
fn with_missing_imports(ctx: &Context, position: NodePos, code: &str, current: &str) -> String {
    let used = crate::code::identifiers(code);
    let bound: BTreeSet<String> = bound_names(code)
        .into_iter()
        .chain(bound_names(current))
        .collect();
    let mut imports = dependency_imports(ctx, position, &bound_names(code), &used);
    imports.extend(standard_imports(code, current));
    let called = crate::code::units::called_names(code);
    imports.extend(plan_function_imports(ctx, position, &bound, &called));
    let mut seen = BTreeSet::new();
    imports.retain(|line| seen.insert(line.clone()));
    if imports.is_empty() {
        return code.to_string();
    }
    merge_python(&imports.join("\n"), code)
}

/// Imports of plan functions from the wrong project module, pointed at the one module the
/// plan defines them in: with `is_palindrome` planned only in `textops.analysis`,
/// `from numops.text_metrics import is_palindrome, vowel_ratio` (where `vowel_ratio` is
/// planned) becomes `from numops.text_metrics import vowel_ratio` and
/// `from textops.analysis import is_palindrome`. A small model guesses module paths; the plan
/// knows them. Only single-line top-level `from` imports of the project's own packages
/// (`packages`) change; a name without one `home` module is left as written.
fn repoint_imports(
    code: &str,
    home: &dyn Fn(&str) -> Option<String>,
    packages: &BTreeSet<String>,
) -> String {
    let repoint = |line: &str| -> Option<Vec<String>> {
        let rest = line.strip_prefix("from ")?;
        let (module, names) = rest.split_once(" import ")?;
        let top = module.split('.').next()?;
        if !packages.contains(top) || names.contains(['(', ')', '\\', '#', '*']) {
            return None;
        }
        let mut stay = Vec::new();
        let mut moved = Vec::new();
        for entry in names.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let name = entry.split(" as ").next().unwrap_or(entry).trim();
            match home(name) {
                Some(home) if home != module => moved.push(format!("from {home} import {entry}")),
                _ => stay.push(entry),
            }
        }
        if moved.is_empty() {
            return None;
        }
        if !stay.is_empty() {
            moved.insert(0, format!("from {module} import {}", stay.join(", ")));
        }
        Some(moved)
    };
    let mut out: Vec<String> = Vec::new();
    for line in code.lines() {
        match repoint(line.trim_end()) {
            Some(lines) => out.extend(lines),
            None => out.push(line.to_string()),
        }
    }
    let mut text = out.join("\n");
    if code.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The `typing` names and standard-library modules `code` uses that neither it nor the
/// module it goes into (`current`) binds, as import lines.
fn standard_imports(code: &str, current: &str) -> Vec<String> {
    let used = crate::code::identifiers(code);
    let bound: BTreeSet<String> = bound_names(code)
        .into_iter()
        .chain(bound_names(current))
        .collect();
    let mut imports = Vec::new();
    let typing: Vec<&str> = crate::python::TYPING_NAMES
        .iter()
        .copied()
        .filter(|n| used.contains(*n) && !bound.contains(*n))
        .collect();
    if !typing.is_empty() {
        imports.push(format!("from typing import {}", typing.join(", ")));
    }
    for module in crate::code::attribute_bases(code) {
        if crate::python::is_stdlib(&module) && !bound.contains(&module) {
            imports.push(format!("import {module}"));
        }
    }
    imports
}

/// `from m import f` for a plan function `f` the code calls without importing that is not a
/// declared dependency (the plan missed the edge, or the model used a helper it knew of):
/// only from another module that already defines `f`, and only when `f`'s node does not
/// depend on this one (the import would be circular). Builtins are never shadowed.
fn plan_function_imports(
    ctx: &Context,
    position: NodePos,
    bound: &BTreeSet<String>,
    used: &BTreeSet<String>,
) -> Vec<String> {
    let own = ctx.rpg.node(position).file_path.as_deref();
    let mut imports = Vec::new();
    let unbound = used
        .iter()
        .filter(|n| !bound.contains(*n) && !crate::python::BUILTINS.contains(&n.as_str()));
    for name in unbound {
        let Some(nodes) = ctx.functions.get(name) else {
            continue;
        };
        let source = nodes.iter().find_map(|&other| {
            let file = ctx.rpg.node(other).file_path.as_deref()?;
            let defined = ctx
                .workspace
                .read(file)
                .ok()
                .flatten()
                .is_some_and(|text| crate::code::stub::defines(&text, name));
            let usable = Some(file) != own
                && file.ends_with(".py")
                && defined
                && !ctx
                    .rpg
                    .graph()
                    .transitive_dependencies_of(other)
                    .contains(&position);
            usable.then(|| prompt::import_path(file))
        });
        if let Some(module) = source {
            imports.push(format!("from {module} import {name}"));
        }
    }
    imports
}

/// `from <module> import <name>` for each dependency in another module that the code uses but
/// does not import: the model often calls a dependency it was shown and forgets the import.
fn dependency_imports(
    ctx: &Context,
    position: NodePos,
    bound: &BTreeSet<String>,
    used: &BTreeSet<String>,
) -> Vec<String> {
    let own_file = ctx.rpg.node(position).file_path.clone();
    let mut imports = Vec::new();
    for dep in ctx
        .rpg
        .graph()
        .dependencies_of(position)
        .into_iter()
        .map(|p| ctx.rpg.node(p))
    {
        let Some(file) = dep
            .file_path
            .as_deref()
            .filter(|f| dep.is_leaf() && Some(*f) != own_file.as_deref())
        else {
            continue;
        };
        if used.contains(&dep.name) && !bound.contains(&dep.name) {
            imports.push(format!(
                "from {} import {}",
                prompt::import_path(file),
                dep.name
            ));
        }
    }
    imports
}

/// When the model keeps the code as it is, the plan's own examples pass, and only
/// model-written tests fail, those tests are judged wrong: they are removed and the rest must
/// pass. Returns the passing run, or `None` when the evidence is not there.
async fn drop_disputed_tests(
    ctx: &Context,
    node: &Node,
    test_file: &str,
    run: &crate::sandbox::TestRun,
) -> Result<Option<crate::sandbox::TestRun>, FsError> {
    let examples_test = examples::test_name(node);
    let outcome_of = |name: &str| {
        run.tests
            .iter()
            .find(|t| test_function(&t.name) == name)
            .map(|t| t.outcome.as_str())
    };
    if outcome_of(&examples_test) != Some("passed") {
        return Ok(None);
    }
    let disputed = failing_functions(run);
    if disputed.is_empty() {
        return Ok(None);
    }
    let Some(current) = ctx.workspace.read(test_file)? else {
        return Ok(None);
    };
    let kept = without_tests(&current, &disputed);
    ctx.workspace.write_if_changed(test_file, &kept)?;
    let rerun = match ctx
        .runner
        .run_tests(ctx.workspace.root(), test_file, &ctx.cancel)
        .await
    {
        Ok(r) if r.succeeded() => r,
        _ => {
            ctx.workspace.write_if_changed(test_file, &current)?;
            return Ok(None);
        }
    };
    tracing::info!(node = %node.id, "dropped {} generated test(s) that contradicted passing spec examples: {}", disputed.len(), disputed.join(", "));
    Ok(Some(rerun))
}

/// The test function a pytest node id names: `tests/t.py::test_f[1-2]` is `test_f` (every
/// case of a parametrized test belongs to one function, which is what the file defines).
pub(super) fn test_function(id: &str) -> &str {
    let last = id.rsplit("::").next().unwrap_or(id);
    last.split('[').next().unwrap_or(last)
}

/// The test functions with a case that did not pass, once each, in run order.
fn failing_functions(run: &crate::sandbox::TestRun) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let failed = |outcome: &str| !matches!(outcome, "passed" | "skipped" | "xfailed");
    for t in run.tests.iter().filter(|t| failed(&t.outcome)) {
        let name = test_function(&t.name);
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// The top-level modules `code` imports anywhere (a function body's `import numpy` too)
/// that are neither the standard library, nor one of the project's `packages`, nor in
/// `allowed`: they are not installed in the sandbox (the system prompt asks for the
/// standard library only), so code that needs them cannot run.
pub(super) fn foreign_imports(
    code: &str,
    packages: &BTreeSet<String>,
    allowed: &[&str],
) -> Vec<String> {
    let mut foreign: Vec<String> = Vec::new();
    for statement in crate::code::outline::import_statements(code) {
        let unit = crate::code::Unit {
            kind: crate::code::UnitKind::Import,
            text: statement,
        };
        let modules = unit.imported_modules();
        for module in modules {
            let top = module.split('.').next().unwrap_or("");
            let known = top.is_empty() // a relative import: the project's own
                || crate::python::is_stdlib(top)
                || packages.contains(top)
                || allowed.contains(&top);
            if !known && !foreign.iter().any(|f| f == top) {
                foreign.push(top.to_string());
            }
        }
    }
    foreign
}

/// The answer refused when it imports what the sandbox does not have.
fn refuse_foreign(
    code: String,
    packages: &BTreeSet<String>,
    allowed: &[&str],
) -> Result<String, AskError> {
    match foreign_imports(&code, packages, allowed).as_slice() {
        [] => Ok(code),
        foreign => Err(unusable(format!(
            "it imports {}, which is neither the standard library nor this project; only those are installed",
            foreign.join(", ")
        ))),
    }
}

/// Whether nothing ran because of `test_file` itself: it does not compile (pytest reports the
/// syntax error with the file's path and line), or importing it failed in its own code (a
/// module-level statement raised, or it imports a name that does not exist), not in the code
/// under test. Either is a test fault, never the implementation's.
fn test_file_is_broken(run: &crate::sandbox::TestRun, test_file: &str) -> bool {
    if run.passed + run.failed > 0 {
        return false;
    }
    let syntax = run.output.contains("SyntaxError") || run.output.contains("IndentationError");
    let located = run.output.contains(&format!("{test_file}\", line"));
    syntax && located || failing_frame(&run.output).is_some_and(|path| path.ends_with(test_file))
}

/// The file of the innermost frame of the first error in pytest's short traceback: the
/// `PATH:LINE: in NAME` line nearest above the first `E   ` line.
fn failing_frame(output: &str) -> Option<&str> {
    let lines: Vec<&str> = output.lines().collect();
    let error = lines.iter().position(|l| l.starts_with("E   "))?;
    lines[..error].iter().rev().find_map(|line| {
        let (location, _) = line.split_once(": in ")?;
        let (path, number) = location.rsplit_once(':')?;
        number.parse::<u32>().ok().map(|_| path)
    })
}

/// `code` without the top-level units that do not parse: one broken test function must not
/// stop the file from being collected.
fn without_broken_units(code: &str) -> String {
    let parses =
        |text: &str| crate::code::check::tree_sitter_errors(text).is_ok_and(|e| e.is_empty());
    crate::edit::merge::render(
        &crate::code::split_units(code)
            .into_iter()
            .filter(|u| parses(&u.text))
            .collect::<Vec<_>>(),
    )
}

/// See [`Leaf::focus`]: of the `failing` test functions, those a fix must answer.
fn focus(failing: Vec<String>, earlier: &[String], examples: &str) -> Vec<String> {
    let broken: Vec<String> = failing
        .iter()
        .filter(|n| earlier.contains(n))
        .cloned()
        .collect();
    if !broken.is_empty() {
        return broken;
    }
    match failing.iter().any(|n| n == examples) {
        true => vec![examples.to_string()],
        false => failing,
    }
}

/// The `disputed` test functions of `tests`, each with the file's imports and fixtures (so
/// that it runs alone, against a reference implementation say) and what pytest said of it.
fn disputed_tests(
    tests: &str,
    disputed: &[String],
    run: &crate::sandbox::TestRun,
) -> Vec<DisputedTest> {
    /// Enough of a pytest section for its assertion line, which comes last.
    const MOST_OUTPUT: usize = 1500;
    disputed
        .iter()
        .map(|name| {
            let names = std::slice::from_ref(name);
            let output = run.output_of(names);
            let cut = output.len().saturating_sub(MOST_OUTPUT);
            let cut = (cut..=output.len())
                .find(|i| output.is_char_boundary(*i))
                .unwrap_or(0);
            DisputedTest {
                name: name.clone(),
                source: only_tests(tests, names),
                output: output[cut..].to_string(),
            }
        })
        .collect()
}

/// A test file without the test functions named in `names`.
pub(super) fn without_tests(tests: &str, names: &[String]) -> String {
    tests_where(tests, |name| !names.iter().any(|d| d == name))
}

/// A test file with only the test functions named in `names` (and everything not a function).
fn only_tests(tests: &str, names: &[String]) -> String {
    tests_where(tests, |name| names.iter().any(|d| d == name))
}

fn tests_where(tests: &str, keep: impl Fn(&str) -> bool) -> String {
    crate::edit::merge::render(
        &crate::code::split_units(tests)
            .into_iter()
            .filter(|u| u.def_name().is_none_or(&keep))
            .collect::<Vec<_>>(),
    )
}

/// One answer of the model for this node and role.
async fn ask(
    ctx: &Context,
    node: &Node,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    ask_many(ctx, node, role, attempt, inputs, usage, 1)
        .await
        .0
        .into_iter()
        .next()
        .unwrap_or_else(|| Err(AskError::Provider("the provider gave no answer".into())))
}

/// Vote `i` of a diagnosis: its own request (its options, temperature and seed; see
/// [`vote`]), which shares all of its prompt but the options with the other votes.
async fn ask_vote(
    ctx: &Context,
    node: &Node,
    attempt: u32,
    inputs: &PromptInputs,
    i: u32,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    ctx.phases.report(
        &node.id,
        &format!("diagnosing: vote {}/{}", i + 1, vote::VOTERS),
    );
    let request = prompt::request(&node.id, Role::Diagnose, attempt, inputs)
        .map_err(|e| AskError::Provider(e.to_string()))?
        .candidate(i);
    let response = tokio::select! {
        r = ctx.llm.complete(&request) => r,
        _ = ctx.cancel.cancelled() => return Err(AskError::Unusable("interrupted".into())),
    };
    judge(node, Role::Diagnose, request.max_tokens, response, usage)
}

/// `n` candidate answers to one prompt (the local model decodes them together), and the
/// prompt's size in tokens.
async fn ask_many(
    ctx: &Context,
    node: &Node,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
    usage: &mut UsageByRole,
    n: u32,
) -> (Vec<Result<String, AskError>>, u64) {
    let phase = match (role, n) {
        (Role::Test, _) => "writing tests".to_string(),
        (Role::Impl, 1) => "writing code".to_string(),
        (Role::Impl, n) => format!("writing {n} candidates"),
        (Role::Fix, _) => format!("fixing (attempt {})", attempt + 1),
        (Role::Diagnose, _) => "diagnosing".to_string(),
    };
    ctx.phases.report(&node.id, &phase);
    let request = match prompt::request(&node.id, role, attempt, inputs) {
        Ok(request) => request,
        Err(e) => return (vec![Err(AskError::Provider(e.to_string()))], 0),
    };
    let responses = tokio::select! {
        r = ctx.llm.complete_many(&request, n) => r,
        _ = ctx.cancel.cancelled() => {
            return (vec![Err(AskError::Unusable("interrupted".into()))], 0);
        }
    };
    // The prompt's size: a provider that evaluates it once for all candidates counts it on
    // one answer, one asked once per candidate on each.
    let prompt_tokens = responses
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|r| r.usage.prompt_tokens)
        .max()
        .unwrap_or(0);
    let answers = responses
        .into_iter()
        .map(|response| judge(node, role, request.max_tokens, response, usage))
        .collect();
    (answers, prompt_tokens)
}

/// An answer as the node loop can use it: its tokens counted, a cut-off answer refused (but
/// the complete tests of one kept), a provider failure told apart from a transient one.
fn judge(
    node: &Node,
    role: Role,
    max_tokens: u32,
    response: Result<crate::llm::LlmResponse, LlmError>,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    match response {
        // A vote is one letter: its token limit is a cap, not a sign of a runaway answer.
        Ok(response)
            if role != Role::Diagnose
                && response.usage.completion_tokens >= u64::from(max_tokens) =>
        {
            usage.entry(role).or_default().add(response.usage);
            // Tests are independent: the complete ones of a long answer are still useful.
            // A cut-off implementation is not, whatever it parses to.
            if role == Role::Test
                && let Some(kept) = crate::edit::cutoff::drop_unfinished_tail(&response.text)
            {
                tracing::info!(node = %node.id, "kept the complete tests of an answer cut off at the token limit");
                return Ok(kept);
            }
            Err(AskError::Unusable(format!(
                "the answer was cut off at the {max_tokens} token limit (it probably repeated itself)"
            )))
        }
        Ok(response) => {
            usage.entry(role).or_default().add(response.usage);
            Ok(response.text)
        }
        Err(e @ LlmError::Transient { .. }) => Err(AskError::Unusable(e.to_string())),
        Err(e) => Err(AskError::Provider(format!("LLM provider failed: {e}"))),
    }
}

/// What running the node's tests said about one candidate.
#[derive(Debug, Clone, PartialEq)]
struct Evidence {
    /// It imported and left every earlier function's tests green.
    usable: bool,
    /// It passed the gates (see [`Candidate::gated`]).
    gated: bool,
    /// The generated tests it passed.
    passed: BTreeSet<String>,
}

/// The candidate to keep, by execution (CodeT's dual agreement): usable before not, gated
/// before not, passing every `wanted` test before not; then candidates are grouped by the
/// exact set of tests they pass and scored by group size times tests passed, so code that
/// several samples agree on outranks a lone sample bent to one test; ties go to the earlier
/// candidate (the first is sampled greedily).
///
/// `wanted` is not empty only in a fix round after a vote for A, and holds the tests where
/// the kept code crashed instead of raising a documented error: there, agreement is no
/// evidence against them. Measured on ml_lib, two fix samples that still crashed on an empty
/// list outvoted the one that raised the documented error.
fn pick(evidence: &[Option<Evidence>], wanted: &[String]) -> usize {
    let score = |e: &Option<Evidence>| match e {
        None => (false, false, false, 0),
        Some(e) => {
            let agreeing = evidence
                .iter()
                .flatten()
                .filter(|o| o.usable && o.passed == e.passed)
                .count();
            let answers = wanted
                .iter()
                .all(|w| e.passed.iter().any(|p| test_function(p) == w));
            (e.usable, e.gated, answers, agreeing * e.passed.len())
        }
    };
    let mut best = 0;
    for i in 1..evidence.len() {
        if score(&evidence[i]) > score(&evidence[best]) {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, name: &str, signature: &str, docstring: &str) -> Node {
        serde_json::from_value(serde_json::json!({
            "id": "n", "name": name, "type": kind, "node_type": "leaf",
            "file_path": "src/m.py", "signature": signature, "docstring": docstring,
        }))
        .unwrap()
    }

    #[test]
    fn candidates_are_picked_by_gates_then_agreement_and_ties_go_to_the_first() {
        let e = |usable, gated, passed: &[&str]| {
            Some(Evidence {
                usable,
                gated,
                passed: passed.iter().map(|s| s.to_string()).collect(),
            })
        };
        // The gated one wins over one that passes more generated tests.
        assert_eq!(
            pick(
                &[e(true, false, &["a", "b", "c"]), e(true, true, &["a"])],
                &[]
            ),
            1
        );
        // Two that agree on {a, b} outrank a lone one passing {a, b, c}.
        assert_eq!(
            pick(
                &[
                    e(true, true, &["a", "b", "c"]),
                    e(true, true, &["a", "b"]),
                    e(true, true, &["a", "b"]),
                ],
                &[]
            ),
            1
        );
        // Unless the vote judged c right: then the one that passes it is what a fix was for.
        let judged_right = ["c".to_string()];
        assert_eq!(
            pick(
                &[
                    e(true, true, &["a", "b"]),
                    e(true, true, &["a", "b", "c[1]"]),
                    e(true, true, &["a", "b"]),
                ],
                &judged_right
            ),
            1
        );
        // Unusable (did not import, or broke earlier tests) and missing ones come last.
        assert_eq!(
            pick(&[None, e(false, true, &["a"]), e(true, false, &[])], &[]),
            2
        );
        assert_eq!(
            pick(&[e(true, true, &["a"]), e(true, true, &["b"])], &[]),
            0
        );
    }

    #[test]
    fn a_fix_answers_broken_earlier_tests_then_the_examples_then_the_rest() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let failing = names(&["test_f_ex", "test_f_zero", "test_g_one"]);
        let earlier = names(&["test_g_one"]);
        assert_eq!(
            focus(failing.clone(), &earlier, "test_f_ex"),
            names(&["test_g_one"])
        );
        assert_eq!(
            focus(failing[..2].to_vec(), &earlier, "test_f_ex"),
            names(&["test_f_ex"])
        );
        assert_eq!(
            focus(failing[1..2].to_vec(), &earlier, "test_f_ex"),
            names(&["test_f_zero"])
        );
        let tests = "import pytest\n\ndef test_f_ex():\n    pass\n\ndef test_f_zero():\n    pass\n";
        assert_eq!(
            only_tests(tests, &names(&["test_f_zero"])),
            "import pytest\n\n\ndef test_f_zero():\n    pass\n"
        );
    }

    #[test]
    fn only_the_standard_library_the_project_and_what_is_allowed_may_be_imported() {
        let packages: BTreeSet<String> = ["ml_lib".to_string()].into();
        let code = "import math, numpy as np\nfrom ml_lib.data import load\nfrom . import x\n\
                    from pandas.core import (\n    frame,\n)\nimport pytest\nfrom __future__ import annotations\n\n\ndef f():\n    import scipy\n";
        assert_eq!(
            foreign_imports(code, &packages, &[]),
            ["numpy", "pandas", "pytest", "scipy"]
        );
        assert_eq!(
            foreign_imports(code, &packages, &["pytest"]),
            ["numpy", "pandas", "scipy"]
        );
        assert!(refuse_foreign("import os\n".into(), &packages, &[]).is_ok());
    }

    #[test]
    fn a_test_that_does_not_parse_is_dropped_and_a_broken_test_file_is_recognised_by_where_it_fails()
     {
        let code =
            "import pytest\n\n\ndef test_a():\n    assert f(1) == 2\n\n\ndef test_b(:\n    pass\n";
        assert_eq!(
            without_broken_units(code),
            "import pytest\n\n\ndef test_a():\n    assert f(1) == 2\n"
        );
        let raised = |output: &str| crate::sandbox::TestRun {
            output: output.into(),
            errors: 1,
            ..crate::sandbox::TestRun::cancelled("t")
        };
        let syntax = "E     File \"/repo/tests/test_m.py\", line 5\nE   SyntaxError: invalid syntax\n1 error in 0.1s";
        assert!(test_file_is_broken(&raised(syntax), "tests/test_m.py"));
        assert!(!test_file_is_broken(&raised(syntax), "tests/test_other.py"));
        let in_the_tests = "_ ERROR collecting tests/test_m.py _\ntests/test_m.py:2: in <module>\n    X = pytest.approx(1.0)(2)\nE   TypeError: 'ApproxScalar' object is not callable\n1 error in 0.1s";
        assert!(test_file_is_broken(
            &raised(in_the_tests),
            "tests/test_m.py"
        ));
        let in_the_code = "_ ERROR collecting tests/test_m.py _\ntests/test_m.py:1: in <module>\n    from m import f\nsrc/m.py:3: in <module>\n    x = 1 / 0\nE   ZeroDivisionError: division by zero\n1 error in 0.1s";
        assert!(!test_file_is_broken(
            &raised(in_the_code),
            "tests/test_m.py"
        ));
    }

    #[test]
    fn every_case_of_a_parametrized_test_belongs_to_its_function() {
        assert_eq!(test_function("tests/t.py::test_f[a,b\\n1-:-x2]"), "test_f");
        assert_eq!(test_function("tests/t.py::test_g"), "test_g");
        assert_eq!(test_function("test_h[1]"), "test_h");
    }

    #[test]
    fn an_import_of_a_plan_function_from_the_wrong_module_is_pointed_at_the_plans() {
        let plan: std::collections::BTreeMap<String, Vec<String>> = [
            ("is_palindrome", vec!["textops.analysis"]),
            ("vowel_ratio", vec!["numops.text_metrics"]),
            ("twice", vec!["a.x", "a.y"]),
        ]
        .into_iter()
        .map(|(n, m)| (n.to_string(), m.into_iter().map(String::from).collect()))
        .collect();
        let packages: BTreeSet<String> = ["numops", "textops", "a"].map(String::from).into();
        let home = |name: &str| match plan.get(name).map(Vec::as_slice) {
            Some([only]) => Some(only.clone()),
            _ => None,
        };
        let code = "from numops.text_metrics import is_palindrome as pal, vowel_ratio\nfrom textops.analysis import is_palindrome\nfrom os.path import is_palindrome\nfrom a.z import twice\n\ndef f():\n    from numops.basic import is_palindrome\n    return pal\n";
        assert_eq!(
            repoint_imports(code, &home, &packages),
            "from numops.text_metrics import vowel_ratio\nfrom textops.analysis import is_palindrome as pal\nfrom textops.analysis import is_palindrome\nfrom os.path import is_palindrome\nfrom a.z import twice\n\ndef f():\n    from numops.basic import is_palindrome\n    return pal\n"
        );
    }

    #[test]
    fn the_src_directory_is_not_part_of_an_import() {
        let code = "from src.numops.basic import *\nimport src.textops.case\nimport os\n\n\ndef f():\n    return 1\n";
        let fixed = without_src_prefix(code);
        assert!(fixed.contains("from numops.basic import *\n"), "{fixed}");
        assert!(fixed.contains("import src.textops.case\n"), "{fixed}");
        assert!(
            fixed.contains("import os\n") && fixed.contains("def f():"),
            "{fixed}"
        );
    }

    #[test]
    fn called_names_are_plain_calls_only() {
        let code = "def f(x):\n    y = percentage(x, 2) + obj.mean(x)\n    return helper (y)  # other(z)\n";
        let called: Vec<String> = crate::code::units::called_names(code).into_iter().collect();
        assert_eq!(called, ["helper", "percentage"]);
    }

    #[test]
    fn no_stub_for_methods_or_classes() {
        assert!(stub(&node("method", "f", "def f(self)", "d"), "r").is_none());
        assert!(stub(&node("class", "C", "class C", "d"), "r").is_none());
        assert!(stub(&node("function", "f", "def f()", "d"), "r").is_some());
    }

    #[test]
    fn forgotten_typing_names_and_standard_modules_are_imported() {
        let code =
            "def f(x: Optional[List[int]]) -> float:\n    return math.sqrt(len(x)) + self_made.y\n";
        assert_eq!(
            standard_imports(code, ""),
            ["from typing import List, Optional", "import math"]
        );
        // What the module or the answer already binds is left alone.
        let current = "from typing import Optional, List\nimport math\n";
        assert!(standard_imports(code, current).is_empty());
        let answer =
            "import math\nfrom typing import *\ndef f(x: Optional[int]):\n    return math.pi\n";
        assert_eq!(
            standard_imports(answer, ""),
            ["from typing import Optional"]
        );
    }

    #[test]
    fn the_specification_outranks_generated_tests_and_a_tie_keeps_the_earlier() {
        let c = |gated, passed| Candidate {
            text: String::new(),
            gated,
            passed,
            disputed: Vec::new(),
            disputed_tests: Vec::new(),
            undisputed_tests: String::new(),
        };
        assert!(c(true, 0).beats(&c(false, 9)));
        assert!(c(false, 3).beats(&c(false, 2)));
        assert!(!c(false, 2).beats(&c(false, 2)));
    }
}
