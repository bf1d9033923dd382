//! One integration test per subgraph (the seed's §4.5): once a subgraph's functions are
//! done, the model writes tests in which data flows from the subgraph's entry functions (no
//! dependency inside it) through the functions that use their results to its exit functions
//! (no dependent inside it), and they run in the sandbox. At least 80% of the cases must pass.
//!
//! The flow runs through the functions whose code passed the gates (`passed`, or
//! `needs_review`: the specification's examples and the module's earlier tests pass, only
//! model-written tests are disputed). Functions that failed or were skipped are left out and
//! named in the record: on real runs some function of a large subgraph nearly always fails,
//! and waiting for all of them meant no integration test ever ran.
//!
//! It runs after the node loop, on the published output, so that it sees the code exactly as
//! the repository will hold it. The subgraphs' tests are asked of the model together first
//! ([`ASKED_AT_ONCE`] at a time: their prompts come from the plan alone); the runs and the
//! debugging follow one subgraph at a time. Only subgraphs with two or more functions joined
//! by a dependency get one: a single function's integration test would repeat its unit tests.
//!
//! A failing case is evidence, not truth (a third of the 1.5B model's unit tests are wrong).
//! It is blamed on one function of the flow ([`blame`]) and goes through that node's
//! diagnosis and debugging ([`super::node::debug_flow_failure`]): a vote, and when the code
//! is blamed, fixes run with the whole test suite in a scratch copy of the output, the first
//! that makes the case pass without breaking a test that passed before kept in the output.
//! At most [`DEBUGGED`] cases of a subgraph are debugged. A case that still fails is taken
//! out of the file and listed with what pytest said of it, so the repository's own suite
//! stays green and a reader can judge each one. A file kept from an earlier run is run again
//! rather than asked for again.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::StreamExt;

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::fsutil::{FsError, Workspace};
use crate::layout::{INTEGRATION, INTEGRATION_TESTS};
use crate::llm::{LlmRequest, Message, Role};
use crate::prompts;
use crate::records::{DisputedTest, FlowDebug, IntegrationRecord, NodeStatus, Spared};
use crate::rpg::flow::{Flow, flows, identifier};
use crate::rpg::{NodeId, NodePos, ValidRpg};
use crate::sandbox::TestRun;
use crate::usage::Usage;

use super::Context;
use super::node::{FlowFailure, FlowFix};

/// The share of cases that must pass.
pub(crate) const THRESHOLD: f64 = 0.8;

/// Failing cases of one subgraph sent to diagnosis and debugging: each costs five votes and
/// up to two fix rounds of the model.
pub(crate) const DEBUGGED: usize = 2;

/// Integration tests asked of the model at once. Their prompts come from the plan alone, so
/// they need not wait for each other: the embedded model decodes up to four requests in
/// shared steps, a remote model answers them in parallel. On ml_lib, after the node loop with
/// nothing else to decode, five asks took 209 s where four had taken 199 s one after another:
/// about 1.18 times the throughput (reports/debugging.md), since two cores are compute-bound
/// and an integration request is mostly its prompt.
pub(crate) const ASKED_AT_ONCE: usize = 4;

/// Where a subgraph's integration test comes from: the file kept from an earlier run, or the
/// model's answer (what is unusable in it, and the tokens it spent either way).
enum FlowTests {
    Kept(String),
    Asked {
        text: Result<String, FlowProblem>,
        tokens: Usage,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum IntegrationError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// The nodes whose own fix rounds in the loop never made them pass: the same model asked
/// again about the same function, now through a model-written integration case (weaker
/// evidence than the node's own tests), has bought nothing on any run measured (one case
/// fixed in twenty debugged, `reports/eval-corpus.md`).
fn fixes_bought_nothing(records: &crate::records::NodeRecords) -> BTreeMap<NodeId, Spared> {
    records
        .iter()
        .filter(|(_, r)| {
            r.work
                .as_ref()
                .is_some_and(|w| w.returns.fixes.bought_nothing())
        })
        .map(|(id, _)| (id.clone(), Spared::FixesBoughtNothing))
        .collect()
}

/// `tests/integration/test_<subgraph>_flow.py`, the subgraph name made an identifier.
pub(crate) fn file_of(subgraph: &str) -> String {
    format!("{INTEGRATION_TESTS}/test_{}_flow.py", identifier(subgraph))
}

/// The model's request for `flow`'s integration test.
pub fn request(rpg: &ValidRpg, flow: &Flow) -> Result<LlmRequest, prompts::PromptError> {
    let names = |positions: &[NodePos]| -> String {
        let names: Vec<String> = positions
            .iter()
            .map(|&p| format!("`{}`", rpg.node(p).name))
            .collect();
        names.join(", ")
    };
    let functions: Vec<String> = flow
        .functions
        .iter()
        .map(|&p| super::prompt::describe_node(rpg.node(p)))
        .collect();
    let imports: BTreeSet<String> = flow
        .functions
        .iter()
        .map(|&p| {
            let node = rpg.node(p);
            let module = super::prompt::import_path(node.file_path.as_deref().unwrap_or(""));
            format!("from {module} import {}", node.name)
        })
        .collect();
    let mut values: BTreeMap<&str, String> = BTreeMap::new();
    values.insert("subgraph", flow.subgraph.clone());
    values.insert("functions", functions.join("\n"));
    values.insert("entries", names(&flow.entries));
    values.insert("exits", names(&flow.exits));
    values.insert("ident", identifier(&flow.subgraph));
    values.insert(
        "imports",
        imports.into_iter().collect::<Vec<_>>().join("\n"),
    );
    let template = prompts::WRITE_INTEGRATION;
    Ok(LlmRequest {
        node_id: format!("integration:{}", flow.subgraph),
        role: Role::Test,
        attempt: 0,
        messages: vec![
            Message {
                role: "system".into(),
                content: prompts::SYSTEM.into(),
            },
            Message {
                role: "user".into(),
                content: template.render(&values)?,
            },
        ],
        temperature: 0.0,
        max_tokens: 1024,
        seed: Some(0),
        template: template.label(),
        candidate: 0,
        prefill: None,
    })
}

/// What the integration step needs: the node loop's context (the plan, the model, the
/// sandbox, cancellation) and the output trees.
pub(crate) struct Integration<'a> {
    /// `false` for the one-shot baseline, which writes no tests: the step records nothing.
    pub enabled: bool,
    pub ctx: &'a Context,
    /// The published output.
    pub out: &'a Workspace,
    /// The staging copy the nodes work in: a fix that is kept goes there too, so that a node
    /// run again later starts from it.
    pub work: &'a Workspace,
}

impl Integration<'_> {
    /// Writes and runs the integration test of every eligible subgraph, records each file's
    /// hash in the checkpoint like any published file, and keeps the records in
    /// [`INTEGRATION`].
    /// `progress` hears of each subgraph as it starts.
    pub async fn run(
        &self,
        checkpoint: &mut Checkpoint,
        progress: &mut dyn FnMut(String),
    ) -> Result<Vec<IntegrationRecord>, IntegrationError> {
        let rpg = &self.ctx.rpg;
        let trusted = |p: NodePos| {
            matches!(
                checkpoint.status_of(&rpg.node(p).id),
                NodeStatus::Passed | NodeStatus::NeedsReview
            )
        };
        let flows = match self.enabled {
            true => flows(rpg, trusted),
            false => Vec::new(),
        };
        let mut records = Vec::new();
        let mut spared = fixes_bought_nothing(checkpoint.records());
        let tests = self.tests_for(&flows, progress).await?;
        for (i, (flow, tests)) in flows.iter().zip(tests).enumerate() {
            if self.ctx.cancel.is_cancelled() {
                break;
            }
            progress(format!(
                "integration test {}/{}: subgraph {}",
                i + 1,
                flows.len(),
                flow.subgraph
            ));
            let (record, fixed) = self.one(flow, tests, &mut spared, progress).await?;
            let written = record.file.iter().chain(fixed.iter());
            let hashes = written
                .map(|file| {
                    let text = self.out.read(file)?.unwrap_or_default();
                    Ok((file.clone(), crate::fsutil::content_hash(text.as_bytes())))
                })
                .collect::<Result<_, FsError>>()?;
            checkpoint.record_flush(hashes)?;
            records.push(record);
        }
        let json = serde_json::to_string_pretty(&records).unwrap_or_default();
        self.out.write(INTEGRATION, &(json + "\n"))?;
        Ok(records)
    }

    /// The tests of each of `flows`, in order: the file the output keeps from an earlier run,
    /// else the model's answer, asked [`ASKED_AT_ONCE`] at a time. The runs and the debugging
    /// that follow stay one subgraph at a time, since a kept fix changes the output the next
    /// subgraph's tests run against (not the integration files).
    async fn tests_for(
        &self,
        flows: &[Flow],
        progress: &mut dyn FnMut(String),
    ) -> Result<Vec<FlowTests>, FsError> {
        let mut kept = Vec::with_capacity(flows.len());
        for flow in flows {
            kept.push(self.out.read(&file_of(&flow.subgraph))?);
        }
        let asking = kept.iter().filter(|k| k.is_none()).count();
        if asking > 1 {
            progress(format!(
                "integration tests: asking the model for {asking} subgraphs' tests, up to {ASKED_AT_ONCE} at once"
            ));
        }
        let tests = flows.iter().zip(kept).map(|(flow, kept)| async move {
            match kept {
                Some(text) => FlowTests::Kept(text),
                None => {
                    let mut tokens = Usage::default();
                    let text = self.ask(flow, &mut tokens).await;
                    FlowTests::Asked { text, tokens }
                }
            }
        });
        Ok(futures_util::stream::iter(tests)
            .buffered(ASKED_AT_ONCE)
            .collect()
            .await)
    }

    /// The record of `flow`'s integration test, and the modules a kept fix changed.
    async fn one(
        &self,
        flow: &Flow,
        tests: FlowTests,
        spared: &mut BTreeMap<NodeId, Spared>,
        progress: &mut dyn FnMut(String),
    ) -> Result<(IntegrationRecord, Vec<String>), FsError> {
        let rpg = &self.ctx.rpg;
        let file = file_of(&flow.subgraph);
        let mut record = IntegrationRecord {
            subgraph: flow.subgraph.clone(),
            left_out: flow
                .left_out
                .iter()
                .map(|&p| rpg.node(p).name.clone())
                .collect(),
            ..IntegrationRecord::default()
        };
        record.reused = matches!(tests, FlowTests::Kept(_));
        let answer = match tests {
            FlowTests::Kept(text) => Ok(text),
            FlowTests::Asked { text, tokens } => {
                record.tokens.add(tokens);
                text
            }
        };
        let text = match answer {
            Ok(text) => text,
            Err(problem) => {
                record.problem = Some(problem.to_string());
                return Ok((record, Vec::new()));
            }
        };
        self.out.write(&file, &text)?;
        let mut run = match self.run_file(&file).await {
            Ok(run) => run,
            Err(problem) => {
                // A file asked for in this run goes with it; one kept from before stays.
                match record.reused {
                    true => record.file = Some(file),
                    false => self.out.remove(&file)?,
                }
                record.problem = Some(problem.to_string());
                return Ok((record, Vec::new()));
            }
        };
        let fixed = self
            .debug(flow, &text, &mut run, &mut record, spared, progress)
            .await?;
        let (passed, failed) = outcomes(&run);
        record.cases = (passed.len() + failed.len()) as u32;
        record.passed = passed.len() as u32;
        record.threshold_met =
            record.cases > 0 && f64::from(record.passed) >= THRESHOLD * f64::from(record.cases);
        if record.cases == 0 {
            record.problem = Some(run.failure_reason());
        }
        record.dropped = failed
            .iter()
            .map(|name| DisputedTest {
                name: name.clone(),
                source: unit_named(&text, name).unwrap_or_default(),
                output: run.output_of(std::slice::from_ref(name)),
            })
            .collect();
        let kept = super::testfile::without_tests(&text, &failed);
        match passed.is_empty() {
            true => self.out.remove(&file)?,
            false => {
                self.out.write(&file, &kept)?;
                record.file = Some(file);
            }
        }
        Ok((record, fixed))
    }

    /// Runs the test file `file` of the output; why it could not, or was interrupted.
    async fn run_file(&self, file: &str) -> Result<TestRun, FlowProblem> {
        let ctx = self.ctx;
        match ctx
            .runner
            .run_tests(self.out.root(), file, &ctx.cancel)
            .await
        {
            Ok(run) if !run.cancelled => Ok(run),
            Ok(_) => Err(FlowProblem::Interrupted),
            Err(e) => Err(FlowProblem::Sandbox(e.to_string())),
        }
    }

    /// Sends up to [`DEBUGGED`] failing cases of `run` to the diagnosis and debugging of the
    /// function each is blamed on, in a scratch copy of the output; a fix kept there is
    /// written to the output and the staging copy, and `run` becomes the file's run after
    /// it. A function in `spared` is not diagnosed or fixed again; one debugged here without
    /// a fix kept joins it. Returns the modules changed.
    async fn debug(
        &self,
        flow: &Flow,
        text: &str,
        run: &mut TestRun,
        record: &mut IntegrationRecord,
        spared: &mut BTreeMap<NodeId, Spared>,
        progress: &mut dyn FnMut(String),
    ) -> Result<Vec<String>, FsError> {
        let file = &file_of(&flow.subgraph);
        let mut changed: Vec<String> = Vec::new();
        let (_, failed) = outcomes(run);
        if failed.is_empty() {
            return Ok(changed);
        }
        let scratch = match scratch_copy(self.out.root()) {
            Ok(scratch) => scratch,
            Err(e) => {
                tracing::warn!("integration cases not debugged: no scratch copy ({e})");
                return Ok(changed);
            }
        };
        let ctx = self.ctx.over(Workspace::new(scratch.path()));
        let mut tried: Vec<String> = Vec::new();
        loop {
            let (_, failed) = outcomes(run);
            let Some(case) = failed.into_iter().find(|c| !tried.contains(c)) else {
                break;
            };
            if tried.len() >= DEBUGGED || self.ctx.cancel.is_cancelled() {
                break;
            }
            tried.push(case.clone());
            let failure = FlowFailure {
                file: file.to_string(),
                source: unit_named(text, &case).unwrap_or_default(),
                output: run.output_of(std::slice::from_ref(&case)),
                case,
            };
            let Some(position) = blame(&self.ctx.rpg, flow, &failure.source, &failure.output)
            else {
                record.debugged.push(FlowDebug {
                    case: failure.case.clone(),
                    ..FlowDebug::default()
                });
                continue;
            };
            let id = &self.ctx.rpg.node(position).id;
            if let Some(&why) = spared.get(id) {
                record.debugged.push(FlowDebug {
                    case: failure.case.clone(),
                    node: Some(id.clone()),
                    spared: Some(why),
                    ..FlowDebug::default()
                });
                continue;
            }
            progress(format!(
                "integration test of {}: `{}` fails; diagnosing it in {} ({})",
                flow.subgraph,
                failure.case,
                self.ctx.rpg.node(position).id,
                self.ctx.rpg.node(position).name
            ));
            let fix: FlowFix = super::node::debug_flow_failure(&ctx, position, &failure).await?;
            record.tokens.add(fix.tokens);
            let debugged = fix.record.attempts > 0;
            record.debugged.push(fix.record);
            let Some((module, code)) = fix.kept else {
                if debugged {
                    spared.insert(id.clone(), Spared::DebuggedBefore);
                }
                continue;
            };
            self.work.write(&module, &code)?;
            self.out.write(&module, &code)?;
            if !changed.contains(&module) {
                changed.push(module);
            }
            match self.run_file(file).await {
                Ok(after) => *run = after,
                Err(_) => break,
            }
        }
        Ok(changed)
    }

    /// The tests the model wrote for `flow`, shaped like a node's; the tokens it spent are
    /// added to `tokens` whatever became of its answer.
    async fn ask(&self, flow: &Flow, tokens: &mut Usage) -> Result<String, FlowProblem> {
        let ctx = self.ctx;
        let request = request(&ctx.rpg, flow).map_err(|e| FlowProblem::Prompt(e.to_string()))?;
        let response = tokio::select! {
            r = ctx.llm.complete(&request) => r,
            _ = ctx.cancel.cancelled() => return Err(FlowProblem::Interrupted),
        };
        let answer = response.map_err(|e| FlowProblem::NoAnswer(e.to_string()))?;
        tokens.add(answer.usage);
        // Cases are independent: those an answer cut off at its limit completed are kept.
        let cut_off = answer.usage.completion_tokens >= u64::from(request.max_tokens)
            && !answer.text.trim_end().ends_with("```");
        let text = match cut_off {
            true => crate::edit::cutoff::drop_unfinished_tail(&answer.text)
                .ok_or(FlowProblem::CutOff(request.max_tokens))?,
            false => answer.text,
        };
        let file = file_of(&flow.subgraph);
        let code = crate::edit::code_for_target(&text, &file, "")
            .map_err(|e| FlowProblem::Unusable(e.to_string()))?;
        let specifications: String = flow
            .functions
            .iter()
            .filter_map(|&p| ctx.rpg.node(p).docstring.clone())
            .collect::<Vec<_>>()
            .join("\n");
        let code = crate::edit::shape_tests(&code, &specifications)
            .map_err(|e| FlowProblem::Unusable(e.to_string()))?;
        // The standard library, the project and pytest: all a test may import.
        let packages = &ctx.packages;
        let foreign = super::repair::foreign_imports(&code, packages, &["pytest"]);
        if !foreign.is_empty() {
            return Err(FlowProblem::ForeignImports(foreign.join(", ")));
        }
        Ok(with_flow_imports(&code, &ctx.rpg, flow))
    }
}

/// Why a flow's test could not be asked or run: recorded in its integration record (as
/// text, the record being plain data), never fatal to the run.
#[derive(Debug, thiserror::Error)]
enum FlowProblem {
    #[error("interrupted")]
    Interrupted,
    #[error("the sandbox could not run it: {0}")]
    Sandbox(String),
    #[error("{0}")]
    Prompt(String),
    #[error("the model gave no answer: {0}")]
    NoAnswer(String),
    #[error("the answer was cut off at the {0} token limit with no complete test")]
    CutOff(u32),
    #[error("the answer was unusable: {0}")]
    Unusable(String),
    #[error("the answer imports {0}, which is neither the standard library nor this project")]
    ForeignImports(String),
}

/// A temp directory (named for [`crate::sandbox::leftovers`], which removes a killed run's)
/// holding a copy of the output without git's store, the engine's state and caches.
fn scratch_copy(out: &std::path::Path) -> std::io::Result<tempfile::TempDir> {
    let scratch = tempfile::Builder::new()
        .prefix(&crate::sandbox::leftovers::temp_prefix("integration"))
        .tempdir()?;
    crate::fsutil::copy_tree(out, scratch.path(), crate::fsutil::NOT_THE_REPOSITORY)?;
    Ok(scratch)
}

/// The flow function a failing case is blamed on: the innermost frame of its traceback that
/// lies in one of the flow's functions (the function that raised); else, of the flow's
/// functions that pytest's report of the case names (the failing line and its `where`
/// lines), or failing that the case's source names, the one latest in generation order: the
/// furthest downstream, whose result is what the case checks. `None` when the case names
/// none of them.
pub fn blame(rpg: &ValidRpg, flow: &Flow, source: &str, output: &str) -> Option<NodePos> {
    let function = |path: &str, name: &str| {
        flow.functions.iter().copied().find(|&p| {
            let node = rpg.node(p);
            node.name == name && node.file_path.as_deref() == Some(path)
        })
    };
    let frames = super::suspects::frames(output);
    if let Some(raised) = frames
        .iter()
        .rev()
        .find_map(|f| function(f.path, f.function))
    {
        return Some(raised);
    }
    let latest_named = |text: &str| {
        let names = crate::symbols::identifiers(text);
        flow.functions
            .iter()
            .rev()
            .copied()
            .find(|&p| names.contains(&rpg.node(p).name))
    };
    latest_named(output).or_else(|| latest_named(source))
}

/// `from <module> import <name>` for each function of the flow's subgraph that the tests
/// use and do not import, as for a node's code ([`super::repair`]): the embedded model wrote
/// the chain flow's three cases without one import, though the prompt lists them, and every
/// case failed on a `NameError` that said nothing of the code.
fn with_flow_imports(code: &str, rpg: &ValidRpg, flow: &Flow) -> String {
    let functions = flow
        .functions
        .iter()
        .chain(&flow.left_out)
        .map(|&p| rpg.node(p));
    let bound = super::repair::bound_names(code);
    let imports =
        super::repair::plan_imports(functions, &bound, &crate::symbols::identifiers(code));
    match imports.is_empty() {
        true => code.to_string(),
        false => crate::edit::merge_python(&imports.join("\n"), code),
    }
}

/// The test functions that passed and those that failed (a parametrized case counts as its
/// function), each once.
fn outcomes(run: &TestRun) -> (Vec<String>, Vec<String>) {
    let function = |name: &str| super::testfile::test_function(name).to_string();
    let mut failed: Vec<String> = Vec::new();
    let mut passed: Vec<String> = Vec::new();
    for test in &run.tests {
        let name = function(&test.name);
        let list = match test.outcome.as_str() {
            "passed" => &mut passed,
            "failed" | "error" => &mut failed,
            _ => continue,
        };
        if !list.contains(&name) {
            list.push(name);
        }
    }
    passed.retain(|p| !failed.contains(p));
    (passed, failed)
}

fn unit_named(code: &str, name: &str) -> Option<String> {
    crate::symbols::split_units(code)
        .into_iter()
        .find(|u| u.def_name() == Some(name))
        .map(|u| u.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpg(json: serde_json::Value) -> ValidRpg {
        crate::rpg::validate(serde_json::from_value(json).unwrap()).unwrap()
    }

    fn function(id: &str, subgraph: &str, deps: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "id": id, "name": format!("f_{id}"), "type": "function", "node_type": "leaf",
            "file_path": format!("src/p/{subgraph}.py"), "docstring": "Doc.",
            "signature": format!("def f_{id}(x: int) -> int"), "subgraph_id": subgraph,
            "dependencies": deps,
        })
    }

    #[test]
    fn a_failing_case_is_blamed_on_the_function_that_raised_else_the_latest_it_names() {
        let plan = rpg(serde_json::json!({ "nodes": [
            function("a", "s", &[]),
            function("b", "s", &["a"]),
            function("c", "s", &["b"]),
        ]}));
        let flow = &flows(&plan, |_| true)[0];
        let id = |p: Option<NodePos>| p.map(|p| plan.node(p).id.clone());
        // The innermost frame in a flow function is the one that raised.
        let raised = "tests/integration/test_s_flow.py:4: in test_s\n    f_c(f_b(1))\n\
            src/p/s.py:9: in f_c\n    return f_b(x) / 0\n\
            src/p/s.py:5: in f_b\n    return f_a(x)[0]\nE   TypeError: boom";
        assert_eq!(id(blame(&plan, flow, "", raised)).as_deref(), Some("b"));
        // An assertion in the test: the latest function its report names.
        let asserted = "tests/integration/test_s_flow.py:4: in test_s\n\
            assert f_c(f_a(1)) == 3\nE   assert 2 == 3\nE    +  where 2 = f_c(1)";
        assert_eq!(id(blame(&plan, flow, "", asserted)).as_deref(), Some("c"));
        // A frame of another file is no flow function; the report still names `f_c`.
        let helper = "src/p/other.py:3: in f_c\nE   ValueError";
        assert_eq!(
            id(blame(&plan, flow, "def test_s():\n    f_b(2)", helper)).as_deref(),
            Some("c")
        );
        // Else the case's source; a case that names no function of the flow is not blamed.
        assert_eq!(
            id(blame(&plan, flow, "def test_s():\n    f_b(2)", "E   x")).as_deref(),
            Some("b")
        );
        assert_eq!(
            blame(&plan, flow, "def test_s():\n    assert 1", "E   x"),
            None
        );
    }

    #[test]
    fn a_subgraphs_trusted_functions_flow_from_entries_to_exits() {
        let plan = rpg(serde_json::json!({ "nodes": [
            function("a", "s", &[]),
            function("b", "s", &["a"]),
            function("c", "s", &["b"]),
            function("d", "s", &["a"]),
            function("e", "lonely", &[]),
            function("f", "apart", &[]),
            function("g", "apart", &[]),
            function("h", "failing", &[]),
            function("i", "failing", &["h"]),
            function("j", "partial", &[]),
            function("k", "partial", &["j"]),
            function("l", "partial", &["k"]),
        ]}));
        let names = |ps: &[NodePos]| -> Vec<String> {
            ps.iter().map(|&p| plan.node(p).id.to_string()).collect()
        };
        let found = flows(&plan, |p| !["i", "l"].contains(&plan.node(p).id.as_str()));
        assert_eq!(found.len(), 2, "{found:?}");
        // An untrusted function is left out of its subgraph's flow; what stays must still
        // hold two functions joined by a dependency.
        assert_eq!(found[0].subgraph, "partial");
        assert_eq!(names(&found[0].functions), ["j", "k"]);
        assert_eq!(names(&found[0].exits), ["k"]);
        assert_eq!(names(&found[0].left_out), ["l"]);
        let found = &found[1..];
        assert!(found[0].left_out.is_empty());
        assert_eq!(found[0].subgraph, "s");
        assert_eq!(names(&found[0].entries), ["a"]);
        assert_eq!(names(&found[0].exits), ["c", "d"]);
        let request = request(&plan, &found[0]).unwrap();
        let user = &request.messages[1].content;
        assert!(user.contains("Data goes in through `f_a`"), "{user}");
        assert!(
            user.contains("the results of `f_c`, `f_d` are checked"),
            "{user}"
        );
        assert!(
            user.contains("from p.s import f_a\nfrom p.s import f_b"),
            "{user}"
        );
        assert_eq!(request.node_id, "integration:s");
        assert_eq!(
            file_of("Data Loading"),
            "tests/integration/test_data_loading_flow.py"
        );
        assert_eq!(file_of("3d"), "tests/integration/test_s3d_flow.py");
    }

    #[test]
    fn functions_the_tests_use_without_importing_them_are_imported() {
        let plan = rpg(serde_json::json!({ "nodes": [
            function("a", "s", &[]),
            function("b", "s", &["a"]),
            function("c", "s", &["b"]),
        ]}));
        let flow = &flows(&plan, |_| true)[0];
        let code = "from p.s import f_c\n\n\ndef test_flow():\n    assert f_c(f_b(f_a(1))) == 1\n";
        let fixed = with_flow_imports(code, &plan, flow);
        assert!(
            fixed.starts_with("from p.s import f_a\nfrom p.s import f_b\nfrom p.s import f_c\n"),
            "{fixed}"
        );
        assert!(fixed.contains("def test_flow():"), "{fixed}");
        assert_eq!(with_flow_imports(&fixed, &plan, flow), fixed);
    }

    #[test]
    fn a_node_whose_own_fixes_bought_nothing_is_spared_the_integration_fixes() {
        use crate::records::{NodeRecord, NodeStatus, NodeWork};
        use crate::returns::{Payoff, Returns};
        let record = |tries: u32, paid: u32| NodeRecord {
            work: Some(NodeWork {
                returns: Returns {
                    fixes: Payoff { tries, paid },
                    ..Returns::default()
                },
                ..NodeWork::default()
            }),
            ..NodeRecord::now(NodeStatus::NeedsReview)
        };
        let records: crate::records::NodeRecords = [
            (NodeId::from("barren"), record(3, 0)),
            (NodeId::from("paid"), record(2, 1)),
            (NodeId::from("untried"), record(0, 0)),
            (NodeId::from("no_work"), NodeRecord::now(NodeStatus::Passed)),
        ]
        .into_iter()
        .collect();
        let spared = fixes_bought_nothing(&records);
        assert_eq!(
            spared.into_iter().collect::<Vec<_>>(),
            vec![(NodeId::from("barren"), Spared::FixesBoughtNothing)]
        );
    }

    #[test]
    fn failing_cases_are_taken_out_and_the_rest_kept() {
        let code =
            "import pytest\n\n\ndef test_a():\n    assert 1\n\n\ndef test_b():\n    assert 0\n";
        let kept = super::super::testfile::without_tests(code, &["test_b".to_string()]);
        assert!(
            kept.contains("def test_a") && !kept.contains("def test_b"),
            "{kept}"
        );
        assert_eq!(
            unit_named(code, "test_b").unwrap().trim_end(),
            "def test_b():\n    assert 0"
        );
    }
}
