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
//! carries out its actions (ask, write, run, vote) and reports what came of them. Asking is
//! [`super::ask`], the repairs and refusals of an answer [`super::repair`], reading test runs
//! and test files [`super::testfile`], and what a localization reads [`super::ground`].
//!
//! Before touching anything the node's files are snapshotted to disk; the snapshot is what a
//! failure reverts to, and what a resumed run restores after a crash in the middle of the node.

use std::collections::BTreeSet;

use crate::checkpoint::{
    Departure, Diagnosis, LocalizedFix, NodeStatus, NodeWork, TestCounts, Verdict,
};
use crate::edit::{code_for_target, merge_python, shape_correction, shape_tests};
use crate::fsutil::{FsError, Snapshot};
use crate::llm::{Role, UsageByRole};
use crate::rpg::{Node, NodePos};

use super::ask::{Ahead, AskError, Sampling, ask, ask_many, ask_vote, unusable};
use super::ground::LeafGround;
use super::machine::{Action, Event, Failure, Limits, Machine, Outcome, Run, Standing, Step};
use super::prompt::{self, PromptInputs, TestsAsked};
use super::repair::{
    bound_names, refuse_foreign, repoint_imports, stub, with_missing_imports, with_plan_docstring,
    without_src_prefix,
};
use super::suspects::{self, PlanFunction};
use super::testfile::{
    crashed_tests, disputed_tests, failing_functions, flaky_tests, focus, only_tests,
    test_file_is_broken, test_function, without_broken_units, without_tests,
};
use super::{Context, examples, vote};

mod choice;
mod flowfix;
use crate::layout::SNAPSHOT_DIR;
use crate::localize::Budget;
use choice::{Candidate, Evidence, Lineage, Sample, Weighing, pick};
pub use flowfix::{FlowFailure, FlowFix, debug_flow_failure};

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
    let result = if node.is_data() {
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
    if ctx.one_shot {
        return leaf.one_shot().await;
    }
    let limits = Limits {
        spend: ctx.spend(),
        candidates: ctx.candidates,
        has_examples: leaf.has_examples(),
    };
    leaf.first_round = limits.first_round();
    let mut machine = Machine::new(limits);
    // The machine decides; the driver only carries out its actions. A cancellation is an
    // event like any other, seen before every action.
    let mut event = Event::Start;
    let result = loop {
        let action = match machine.step(event) {
            Step::Do(action) => action,
            Step::Finish(outcome) => break leaf.finish(outcome, &machine)?,
        };
        event = match ctx.cancel.is_cancelled() {
            true => Event::Cancelled,
            false => leaf.execute(action, machine.attempt()).await?,
        };
    };
    let departure = leaf.departure(&result)?;
    ctx.record_returns(&machine.returns());
    leaf.work.returns = machine.returns();
    let work = (result.status != NodeStatus::InProgress).then_some(leaf.work);
    let diagnosis = leaf.diagnosis.take();
    Ok(NodeResult {
        work,
        departure,
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
    /// Which round made each module, and the greedy answer.
    lineage: Lineage,
    /// The first implementation round, asked while the tests are written ([`Ahead`]).
    ahead: Option<Ahead>,
    /// Candidates of the first implementation round ([`Limits::first_round`]).
    first_round: u32,
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
        let node = ctx.rpg.node(position);
        let (Some(file), Some(test_file)) = (node.file_path.clone(), node.test_file()) else {
            return Ok(None);
        };
        ensure_packages(ctx, &file)?;
        // The node's files as they were before it: a fresh start goes back to them.
        let before = ctx.workspace.snapshot(&[file.clone(), test_file.clone()])?;
        Ok(Some(Leaf {
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
            lineage: Lineage::default(),
            ahead: None,
            first_round: ctx.candidates.max(1),
        }))
    }

    /// Carries out one action of the machine and says what came of it.
    async fn execute(&mut self, action: Action, attempt: u32) -> Result<Event, FsError> {
        match action {
            Action::StartOver { keep_tests } => self.start_over(keep_tests).map(|()| Event::Done),
            Action::AskTests => self.write_tests(attempt, false).await,
            Action::PlanTestsOnly => self.plan_tests_only().map(|()| Event::Done),
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
            Outcome::Untested => self.untested(retries),
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
            tests_asked: match self.has_examples() {
                true => TestsAsked::Cases,
                false => TestsAsked::Probes,
            },
            name: node.name.clone(),
            file_path: self.file.clone(),
            import_line: format!("from {} import {}", self.module, node.name),
            context: prompt::dependency_context(&ctx.rpg, self.position, &ctx.workspace),
            current: ctx.workspace.read(&self.file)?.unwrap_or_default(),
            tests: self.test_text()?,
            failure: self.failure.clone().unwrap_or_default(),
            attempt,
            options: String::new(),
            head: prompt::answer_head(node, &self.helpers()),
            suspects: String::new(),
        })
    }

    /// The node's planned dependencies that are leaves ([`prompt::answer_head`] names the
    /// functions among them).
    fn helpers(&self) -> Vec<&'a Node> {
        let rpg = &self.ctx.rpg;
        rpg.graph()
            .dependencies_of(self.position)
            .into_iter()
            .map(|p| rpg.node(p))
            .filter(|n| n.is_leaf())
            .collect()
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
        if !rewrite && attempt == 0 && self.lineage.first_round() {
            self.ahead = Ahead::ask(
                self.ctx,
                self.node,
                (Role::Impl, attempt),
                &self.inputs(attempt)?,
                (self.first_round, Sampling::GreedyFirst),
            );
        }
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
            // A test that forgets `import datetime` fails in its own frame and says nothing
            // of the code: the imports are added as for an implementation.
            Ok(code) => with_missing_imports(self.ctx, self.position, &code, &base),
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
        let sampling = match role == Role::Impl && self.lineage.first_round() {
            true => Sampling::GreedyFirst,
            false => Sampling::ByAttempt,
        };
        let asked = ask_many(
            self.ctx,
            self.node,
            (role, attempt),
            &inputs,
            &mut self.usage,
            (n, sampling),
            self.ahead.take(),
        )
        .await;
        self.work.waited_for_model(role, started);
        self.work.asked_ahead += u32::from(asked.ahead);
        if role == Role::Fix
            && let Some(fix) = self.localizations.last_mut()
        {
            fix.prompt_tokens = asked.prompt_tokens;
        }
        let answers = asked.answers;
        self.work.rounds += 1;
        self.work.answers += n;
        let greedy_first = answers.first().is_some_and(|a| a.is_ok());
        let (mut modules, refused) = self.distinct_modules(answers, &inputs.current);
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
        self.lineage.round(role, &texts, greedy_first);
        let (chosen, evidence) = match (texts.len(), refused) {
            (0, Some(e)) => return self.asked_in_vain(e, "implementation"),
            (0, None) => return self.asked_in_vain(unusable("no answer"), "implementation"),
            (1, _) => (0, vec![None]),
            _ => {
                let copies: Vec<usize> = modules.iter().map(|(_, c)| *c).collect();
                self.choose(&texts, &copies, &self.judged_right(role))
                    .await?
            }
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

    /// The distinct modules the answers make, with how many answers gave each (identical
    /// samples agree), and the first reason an answer was refused.
    fn distinct_modules(
        &self,
        answers: Vec<Result<String, AskError>>,
        current: &str,
    ) -> (Vec<(String, usize)>, Option<AskError>) {
        let mut modules: Vec<(String, usize)> = Vec::new();
        let mut refused = None;
        for answer in answers {
            match self.module_with(answer, current) {
                Ok(module) => match modules.iter_mut().find(|(m, _)| *m == module) {
                    Some((_, copies)) => *copies += 1,
                    None => modules.push((module, 1)),
                },
                Err(e) => {
                    refused.get_or_insert(e);
                }
            }
        }
        (modules, refused)
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

    /// The model gave no usable tests: the test file gets the plan's tests for the node (the
    /// examples test, else a test that the function is defined) beside the earlier ones.
    fn plan_tests_only(&mut self) -> Result<(), FsError> {
        let own = examples::examples_test(self.node, &self.module)
            .or_else(|| examples::defined_test(self.node, &self.module));
        let base = self.test_text()?;
        let merged = match own {
            Some(own) => merge_python(&base, &own),
            None => base,
        };
        tracing::info!(node = %self.node.id, "no usable tests from the model: the plan's tests judge the code");
        self.ctx
            .workspace
            .write_if_changed(&self.test_file, &merged)
    }

    /// Code that passed tests none of which the model wrote: kept, with those tests, for
    /// review; its dependents build on it.
    fn untested(&mut self, retries: u32) -> Result<NodeResult, FsError> {
        let ws = &self.ctx.workspace;
        let reason = format!(
            "the model wrote no usable tests ({} answers); the code passes {}",
            super::machine::TEST_ANSWERS,
            match self.has_examples() {
                true => "the specification's examples and the module's earlier tests",
                false =>
                    "a test that it is defined and the module's earlier tests (the plan gives no examples)",
            }
        );
        tracing::info!(node = %self.node.id, "needs review: {reason}");
        Ok(NodeResult {
            status: NodeStatus::NeedsReview,
            tests: self.last_run.as_ref().map(counts_of),
            retries,
            failure_reason: Some(reason),
            usage: std::mem::take(&mut self.usage),
            keep: ws.read(&self.file)?,
            keep_tests: ws.read(&self.test_file)?,
            ..NodeResult::new(NodeStatus::NeedsReview)
        })
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
        let code = prompt::without_helper_notes(&code);
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
        copies: &[usize],
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
                Ok(run) if !run.cancelled => Some(self.evidence(&run, module)),
                _ => None,
            });
        }
        let chosen = pick(&evidence, copies, wanted, self.weighing());
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

    /// How this node's candidates are weighed: by agreement when its examples are a gate,
    /// against the greedy answer when the model's tests are the only evidence.
    fn weighing(&self) -> Weighing {
        Weighing::for_node(self.has_examples())
    }

    /// The node's generated tests in which the code in place crashed (an undocumented
    /// exception raised in its module).
    fn crashes(&self, run: &crate::sandbox::TestRun) -> Vec<String> {
        let documented = vote::documented_errors(self.node.docstring.as_deref().unwrap_or(""));
        let earlier = self.earlier_tests();
        crashed_tests(run, &self.file, &documented)
            .into_iter()
            .filter(|t| !earlier.contains(t))
            .collect()
    }

    /// Whether the node's function in `module` has no body (only a docstring, `pass`, `...`
    /// or `raise NotImplementedError`): never an implementation, whatever tests it passes.
    fn bodiless(&self, module: &str) -> bool {
        crate::code::stub::is_bodiless(module, &self.node.name)
    }

    /// The names the node's function in `module` uses and nothing defines
    /// ([`crate::code::check::undefined_in_function`]), as strong evidence as a crash.
    /// Weighed only against the prior: with examples, the examples gate and the vote judge
    /// the code as measured on the fixtures.
    fn undefined(&self, module: &str) -> Vec<String> {
        match self.weighing() {
            Weighing::Prior => crate::code::check::undefined_in_function(module, &self.node.name),
            Weighing::Agreement => Vec::new(),
        }
    }

    /// What a run says about the implementation in place (`module`). A function without a
    /// body passes no gate.
    fn evidence(&self, run: &crate::sandbox::TestRun, module: &str) -> Evidence {
        let examples = examples::test_name(self.node);
        let passed: BTreeSet<String> = run
            .tests
            .iter()
            .filter(|t| t.outcome == "passed")
            .map(|t| t.name.clone())
            .collect();
        Evidence {
            usable: run.passed + run.failed > 0 && !self.breaks_earlier_tests(run),
            gated: !self.bodiless(module)
                && (passed.iter().any(|n| test_function(n) == examples) || !self.has_examples()),
            has_body: !self.bodiless(module),
            passed,
            crashed: self.crashes(run).len() + self.undefined(module).len(),
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
        // Read once: against the prior it runs ruff over the module.
        let undefined = self.undefined_in_place()?;
        let event = if test_file_is_broken(&run, &self.test_file) {
            tracing::debug!(node = %self.node.id, attempt, "the test file is broken");
            Event::Ran(Run::TestFileBroken)
        } else if run.succeeded() && !self.bodiless_in_place()? && undefined.is_empty() {
            Event::Ran(Run::Passed)
        } else {
            tracing::debug!(node = %self.node.id, attempt, "tests failed: {}", run.failure_reason());
            self.remember(&run)?;
            self.focus = self.focus(&run);
            self.failure = Some(match (run.succeeded(), undefined.is_empty()) {
                (true, true) => NO_BODY.to_string(),
                (true, false) => undefined_message(&undefined),
                (false, true) => run.failure_reason() + "\n\n" + &run.output_of(&self.focus),
                (false, false) => {
                    run.failure_reason()
                        + "\n\n"
                        + &run.output_of(&self.focus)
                        + "\n\n"
                        + &undefined_message(&undefined)
                }
            });
            Event::Ran(Run::Failed {
                breaks_earlier: self.breaks_earlier_tests(&run),
                best: self.standing(),
            })
        };
        self.last_run = Some(run);
        Ok(event)
    }

    /// What the best candidate so far has against it.
    fn standing(&self) -> Standing {
        match &self.best {
            Some(best) if best.gated && best.crashed.is_empty() && best.undefined.is_empty() => {
                Standing::Disputed
            }
            Some(best) if best.gated => Standing::Crashes,
            _ => Standing::Ungated,
        }
    }

    /// How the module the node leaves departs from the greedy answer (see [`Lineage`]).
    fn departure(&self, result: &NodeResult) -> Result<Option<Departure>, FsError> {
        if result.status == NodeStatus::InProgress {
            return Ok(None);
        }
        let kept = match &result.keep {
            Some(kept) => kept.clone(),
            None => self.ctx.workspace.read(&self.file)?.unwrap_or_default(),
        };
        Ok(self.lineage.departure(&kept))
    }

    /// The names the node's function in place uses and nothing defines ([`Leaf::undefined`]).
    fn undefined_in_place(&self) -> Result<Vec<String>, FsError> {
        let module = self.ctx.workspace.read(&self.file)?.unwrap_or_default();
        Ok(self.undefined(&module))
    }

    /// Whether the module in place leaves the node's function without a body.
    fn bodiless_in_place(&self) -> Result<bool, FsError> {
        let module = self.ctx.workspace.read(&self.file)?.unwrap_or_default();
        Ok(self.bodiless(&module))
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
        // Against the prior only its crashes are evidence: the fix answers those.
        self.focus = match self.weighing() {
            Weighing::Agreement => best.disputed.clone(),
            Weighing::Prior => best.crashed.clone(),
        };
        let mut failure = best.disputed_output_of(&self.focus);
        if !best.undefined.is_empty() {
            failure = format!("{failure}\n\n{}", undefined_message(&best.undefined));
        }
        self.failure = Some(failure.trim_start().to_string());
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
        // Votes are asked only when the runs do not decide alone.
        let votes = match vote::decisive(&execution) {
            Some(_) => Vec::new(),
            None => self.votes(&inputs, attempt).await,
        };
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

    /// The model's votes on the failing tests `inputs` show (see [`vote`]).
    async fn votes(&mut self, inputs: &PromptInputs, attempt: u32) -> Vec<Verdict> {
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
        votes
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
            misused_pytest: !best.disputed_tests.is_empty()
                && best
                    .disputed_tests
                    .iter()
                    .all(|t| vote::misuses_pytest(&t.output)),
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
        let text = self.ctx.workspace.read(&self.file)?.unwrap_or_default();
        let evidence = self.evidence(run, &text);
        if !evidence.usable {
            return Ok(());
        }
        let disputed = failing_functions(run);
        let tests = self.test_text()?;
        let candidate = Candidate {
            crashed: self.crashes(run),
            undefined: self.undefined(&text),
            text,
            gated: evidence.gated,
            passed: run.passed,
            undisputed_tests: without_tests(&tests, &disputed),
            disputed_tests: disputed_tests(&tests, &disputed, run),
            disputed,
        };
        if self
            .best
            .as_ref()
            .is_none_or(|best| candidate.beats(best, self.weighing()))
        {
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
        // A function without a body would answer `None` silently; the stub says why it fails.
        if let Some(best) = self.best.take()
            && !self.bodiless(&best.text)
        {
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
