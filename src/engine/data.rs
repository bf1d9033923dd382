//! A data node: one module-level assignment, `NAME = VALUE`, written into its module and
//! checked before any function that reads it runs (a reader depends on it, so the schedule
//! puts it first).
//!
//! Real libraries keep tables and constants beside their functions, and their tests import
//! them; one name missing stops a whole test module from being collected. So the data is
//! written first and checked on its own, in the sandbox like all generated code:
//!
//! - The plan's value ([`crate::rpg::Node::value`]) is written as it is, after it was checked
//!   once more to be nothing but a literal ([`crate::python::check_literal`]; `validate`
//!   checked it first). Without a value, the model is asked for the assignment from the
//!   docstring (one short prompt, [`crate::prompts::WRITE_DATA`]), and its answer is used only
//!   when it parses to import lines and one assignment that binds exactly `NAME`: no function,
//!   no other name, no `:=`. The specification goes above it as comment lines, where plan text
//!   cannot start a line of code ([`crate::python::comment_text`]).
//! - An earlier assignment of the name in the module is replaced in place, so a rerun gives
//!   the same file.
//! - The check is a test in the module's test file, run in the sandbox: the module imports and
//!   binds the name, holds the plan's value when the plan gives one, and passes the plan's
//!   examples. The test stays, so a later function whose code breaks the data breaks an
//!   earlier test, and the node loop never keeps such code.
//!
//! An answer that fails is asked again with the failure, [`DATA_ATTEMPTS`] answers in all; a
//! plan's value that fails fails the node (its readers are skipped). The one-shot baseline
//! writes the assignment once and runs nothing, as it does for functions.

use std::collections::BTreeMap;

use tree_sitter::{Node as TsNode, Parser};

use crate::edit::{code_for_target, merge_python, without_self_imports};
use crate::fsutil::FsError;
use crate::llm::{LlmRequest, Message, Role, UsageByRole};
use crate::prompts::{self, PromptError};
use crate::records::{NodeStatus, NodeWork, TestCounts};
use crate::rpg::{Node, NodePos};
use crate::sandbox::TestRun;
use crate::symbols::{Unit, UnitKind, split_units};

use super::ask::{AskError, judge};
use super::node::{NodeResult, ensure_packages};
use super::repair::{refuse_foreign, with_missing_imports, without_src_prefix};
use super::{Context, examples, prompt};

/// Answers asked for a data node without a value: the first, then two with the failure.
pub(super) const DATA_ATTEMPTS: u32 = 3;

/// Why an attempt at the assignment ended without one to run.
enum Refusal {
    /// The answer was unusable: the reason goes to the next attempt.
    Retry(String),
    /// Nothing more can be done: the node fails with this reason.
    Stop(String),
    Cancelled,
}

impl From<AskError> for Refusal {
    fn from(error: AskError) -> Refusal {
        match error {
            AskError::Unusable(why) => Refusal::Retry(why),
            AskError::Provider(why) => Refusal::Stop(why),
        }
    }
}

/// Writes and checks the data node at `position` (see the module doc).
pub(super) async fn run_data(ctx: &Context, position: NodePos) -> Result<NodeResult, FsError> {
    let node = ctx.rpg.node(position);
    let (Some(file), Some(test_file)) = (node.file_path.clone(), node.test_file()) else {
        return Ok(NodeResult::failed("data without a file path".into()));
    };
    ensure_packages(ctx, &file)?;
    let mut data = Data {
        ctx,
        position,
        node,
        module: prompt::import_path(&file),
        file,
        test_file,
        usage: UsageByRole::new(),
        work: NodeWork::default(),
        failure: None,
    };
    data.run().await
}

/// The state of one data node across its attempts.
struct Data<'a> {
    ctx: &'a Context,
    position: NodePos,
    node: &'a Node,
    file: String,
    /// `file` as a Python module path.
    module: String,
    test_file: String,
    usage: UsageByRole,
    work: NodeWork,
    /// What went wrong in the last attempt, fed back to the next prompt.
    failure: Option<String>,
}

impl Data<'_> {
    async fn run(&mut self) -> Result<NodeResult, FsError> {
        let attempts = match (&self.node.value, self.ctx.settings.one_shot) {
            (None, false) => DATA_ATTEMPTS,
            _ => 1,
        };
        for attempt in 0..attempts {
            if self.ctx.cancel.is_cancelled() {
                return Ok(self.end(NodeStatus::InProgress, None, attempt));
            }
            self.work.rounds += 1;
            let current = self.ctx.workspace.read(&self.file)?.unwrap_or_default();
            let module = match self.module_with(attempt, &current).await {
                Ok(module) => module,
                Err(Refusal::Retry(why)) => {
                    self.failure = Some(format!("the answer was unusable: {why}"));
                    continue;
                }
                Err(Refusal::Stop(why)) => {
                    return Ok(self.end(NodeStatus::Failed, Some(why), attempt));
                }
                Err(Refusal::Cancelled) => {
                    return Ok(self.end(NodeStatus::InProgress, None, attempt));
                }
            };
            self.ctx.workspace.write_if_changed(&self.file, &module)?;
            if self.ctx.settings.one_shot {
                return Ok(NodeResult {
                    keep: Some(module),
                    ..self.end(
                        NodeStatus::NeedsReview,
                        Some("one-shot baseline: written once, never run".into()),
                        attempt,
                    )
                });
            }
            match self.check().await? {
                Ok(run) => {
                    self.work.first_try = attempt == 0;
                    return Ok(NodeResult {
                        tests: Some(TestCounts {
                            passed: run.passed,
                            failed: run.failed + run.errors,
                        }),
                        ..self.end(NodeStatus::Passed, None, attempt)
                    });
                }
                Err(Refusal::Retry(why)) => self.failure = Some(why),
                Err(Refusal::Stop(why)) => {
                    return Ok(self.end(NodeStatus::Failed, Some(why), attempt));
                }
                Err(Refusal::Cancelled) => {
                    return Ok(self.end(NodeStatus::InProgress, None, attempt));
                }
            }
        }
        let reason = self.failure.take().unwrap_or_default();
        Ok(self.end(NodeStatus::Failed, Some(reason), attempts - 1))
    }

    /// The node's result: its status, why, and what it spent.
    fn end(&mut self, status: NodeStatus, reason: Option<String>, retries: u32) -> NodeResult {
        if let Some(reason) = &reason {
            tracing::info!(node = %self.node.id, ?status, "data: {reason}");
        }
        NodeResult {
            retries,
            failure_reason: reason,
            usage: std::mem::take(&mut self.usage),
            work: (status != NodeStatus::InProgress).then(|| std::mem::take(&mut self.work)),
            ..NodeResult::new(status)
        }
    }

    /// The module with the node's assignment in place of any earlier one: the plan's value,
    /// else the model's answer.
    async fn module_with(&mut self, attempt: u32, current: &str) -> Result<String, Refusal> {
        let (imports, statement) = match &self.node.value {
            Some(value) => plan_assignment(&self.node.name, value)?,
            None => self.answer(attempt, current).await?,
        };
        let statement = format!("{}{statement}", spec_comments(self.node));
        let module = with_assignment(current, &self.node.name, &statement);
        let module = match imports.is_empty() {
            true => module,
            false => merge_python(&module, &imports.join("\n")),
        };
        match crate::symbols::check::tree_sitter_errors(&module) {
            Ok(errors) if errors.is_empty() => Ok(module),
            _ => Err(Refusal::Retry(
                "the module would not parse with this assignment".into(),
            )),
        }
    }

    /// The model's assignment: asked once, repaired like a function's answer (the imports it
    /// forgot, a `src.` prefix), and refused unless it is imports and one assignment of the
    /// name.
    async fn answer(
        &mut self,
        attempt: u32,
        current: &str,
    ) -> Result<(Vec<String>, String), Refusal> {
        let ctx = self.ctx;
        let request = self
            .request(attempt, current)
            .map_err(|e| Refusal::Stop(e.to_string()))?;
        ctx.phases.report(&self.node.id, "writing data");
        let started = std::time::Instant::now();
        let response = tokio::select! {
            r = ctx.llm.complete(&request) => r,
            _ = ctx.cancel.cancelled() => return Err(Refusal::Cancelled),
        };
        self.work.waited_for_model(Role::Impl, started);
        self.work.answers += 1;
        let answer = judge(
            self.node,
            Role::Impl,
            request.max_tokens,
            response,
            &mut self.usage,
        )?;
        let code = code_for_target(&answer, &self.file, current)
            .map_err(|e| Refusal::Retry(e.to_string()))?;
        let code = match self.file.starts_with("src/") {
            true => without_src_prefix(&code),
            false => code,
        };
        // The 1.5B model wrote `from boltons.strutils import _IRR_S2P` into boltons.strutils
        // to read a table the module holds above it.
        let code = match without_self_imports(&code, &self.module) {
            kept if kept != code => {
                tracing::debug!(node = %self.node.id, "data: the answer's imports of its own module dropped");
                kept
            }
            _ => code,
        };
        let code = refuse_foreign(code, &ctx.packages, &[])?;
        let code = with_missing_imports(ctx, self.position, &code, current);
        assignment_of(&code, &self.node.name).map_err(Refusal::Retry)
    }

    /// The one short prompt of a data node ([`prompts::WRITE_DATA`]); a retry samples, and
    /// sees why the last answer failed.
    fn request(&self, attempt: u32, current: &str) -> Result<LlmRequest, PromptError> {
        let node = self.node;
        let mut specification = node.docstring.as_deref().unwrap_or("").trim().to_string();
        if !node.examples.is_empty() {
            let examples: Vec<&str> = node.examples.iter().map(|e| e.trim_end()).collect();
            specification = format!("{specification}\nExamples:\n{}", examples.join("\n"));
        }
        let failure = match &self.failure {
            Some(failure) => format!("\nThe last answer failed:\n{failure}\n"),
            None => String::new(),
        };
        let values: BTreeMap<&str, String> = [
            ("name", node.name.clone()),
            ("file_path", self.file.clone()),
            ("module", self.module.clone()),
            ("specification", specification),
            ("current", prompt::module_view(current, "")),
            ("failure", failure),
        ]
        .into();
        let user = prompts::WRITE_DATA.render(&values)?;
        Ok(LlmRequest {
            node_id: node.id.to_string(),
            role: Role::Impl,
            attempt,
            messages: vec![
                Message {
                    role: "system".into(),
                    content: prompts::SYSTEM.into(),
                },
                Message {
                    role: "user".into(),
                    content: user,
                },
            ],
            temperature: if attempt == 0 { 0.0 } else { 0.4 },
            max_tokens: 1024,
            seed: Some(u64::from(attempt)),
            template: prompts::WRITE_DATA.label(),
            candidate: 0,
            prefill: None,
        })
    }

    /// Writes the node's test beside the module's earlier tests and runs them in the sandbox.
    async fn check(&mut self) -> Result<Result<TestRun, Refusal>, FsError> {
        let ctx = self.ctx;
        let mut test = data_test(self.node, &self.module);
        if let Some(examples) = examples::examples_test(self.node, &self.module) {
            test = merge_python(&test, &examples);
        }
        let base = ctx.workspace.read(&self.test_file)?.unwrap_or_default();
        ctx.workspace
            .write_if_changed(&self.test_file, &merge_python(&base, &test))?;
        ctx.phases.report(&self.node.id, "running tests");
        let started = std::time::Instant::now();
        let run = ctx
            .runner
            .run_tests(ctx.workspace.root(), &self.test_file, &ctx.cancel)
            .await;
        self.work.sandbox_runs += 1;
        self.work.sandbox_ms += started.elapsed().as_millis() as u64;
        Ok(match run {
            Err(e) => Err(Refusal::Stop(format!("cannot run tests: {e}"))),
            Ok(run) if run.cancelled => Err(Refusal::Cancelled),
            Ok(run) if run.succeeded() => Ok(run),
            // The plan's own value is not asked again: the node fails with what the run said.
            Ok(run) if self.node.value.is_some() => Err(Refusal::Stop(run.failure_reason())),
            Ok(run) => Err(Refusal::Retry(format!(
                "{}\n\n{}",
                run.failure_reason(),
                tail(&run.output, 2000)
            ))),
        })
    }
}

/// The plan's value as an assignment, once more checked to be a literal.
fn plan_assignment(name: &str, value: &str) -> Result<(Vec<String>, String), Refusal> {
    crate::python::check_literal(value)
        .map_err(|e| Refusal::Stop(format!("the plan's value {e}")))?;
    assignment_of(&format!("{name} = {}\n", value.trim()), name)
        .map_err(|why| Refusal::Stop(format!("the plan's value: {why}")))
}

/// The docstring as comment lines above the assignment; plan text in a comment can never
/// start a line of code, and no bidirectional control makes it read otherwise.
fn spec_comments(node: &Node) -> String {
    let doc = node.docstring.as_deref().unwrap_or("").trim();
    let mut out = String::new();
    for line in doc.lines() {
        let text: String = crate::python::comment_text(line)
            .chars()
            .filter(|c| !crate::python::is_bidi_control(*c))
            .collect();
        match text.is_empty() {
            true => out.push_str("#\n"),
            false => out.push_str(&format!("# {text}\n")),
        }
    }
    out
}

/// `current` with `statement` (one assignment of `name`, comments above it) in place of the
/// module's earlier top-level assignment of `name`, or appended when there is none.
fn with_assignment(current: &str, name: &str, statement: &str) -> String {
    let mut units = split_units(current);
    let unit = Unit {
        kind: UnitKind::Other,
        text: statement.trim_end().to_string(),
    };
    match units.iter().position(|u| u.assigned_name() == Some(name)) {
        Some(at) => {
            units[at] = unit;
            crate::edit::merge::render(&units)
        }
        None => merge_python(current, statement),
    }
}

/// An answer's import lines and its one assignment that binds exactly `name`, or why it is
/// not that. A bare string (a docstring) and comments are let through; anything else at
/// module level is refused.
fn assignment_of(code: &str, name: &str) -> Result<(Vec<String>, String), String> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| e.to_string())?;
    let tree = parser
        .parse(code, None)
        .ok_or_else(|| "the answer could not be parsed".to_string())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("the answer does not parse as Python".into());
    }
    let text = |n: TsNode<'_>| code.get(n.byte_range()).unwrap_or_default().to_string();
    let mut imports = Vec::new();
    let mut assignment = None;
    let mut cursor = root.walk();
    for statement in root.named_children(&mut cursor) {
        match (statement.kind(), bound_as(statement, name, code)) {
            ("comment", _) => {}
            ("import_statement" | "import_from_statement" | "future_import_statement", _) => {
                imports.push(text(statement));
            }
            ("expression_statement", _)
                if only_child(statement).is_some_and(|c| c.kind() == "string") => {}
            ("expression_statement", Some(target)) => {
                // The plan's name, then the statement after its target (`: T = VALUE`).
                let rest = code.get(target.end_byte()..statement.end_byte());
                if assignment
                    .replace(format!("{name}{}", rest.unwrap_or_default()))
                    .is_some()
                {
                    return Err(format!("the answer assigns `{name}` more than once"));
                }
            }
            _ => {
                let first = text(statement);
                let first = first.lines().next().unwrap_or_default();
                return Err(format!(
                    "the answer holds `{}` besides the assignment: write only `{name} = ...` and the imports it needs",
                    crate::python::comment_text(first)
                ));
            }
        }
    }
    match assignment {
        Some(statement) => Ok((imports, statement)),
        None => Err(format!("the answer does not assign `{name}`")),
    }
}

/// The one named child of `node` that is not a comment.
fn only_child(node: TsNode<'_>) -> Option<TsNode<'_>> {
    let mut cursor = node.walk();
    let children: Vec<TsNode<'_>> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    match children.as_slice() {
        [only] => Some(*only),
        _ => None,
    }
}

/// The target of `statement` when it is `name = VALUE` (or `name: T = VALUE`) and binds
/// nothing else: one target, no chained assignment, no `:=` in the value. A target that
/// differs from `name` in case only counts, and is given the plan's name (the 1.5B model
/// wrote `_CAMEL2UNDER_RE = ...` for `_camel2under_re`, as PEP 8 spells a constant).
fn bound_as<'t>(statement: TsNode<'t>, name: &str, code: &str) -> Option<TsNode<'t>> {
    let assignment = only_child(statement).filter(|a| a.kind() == "assignment")?;
    let value = assignment.child_by_field_name("right")?;
    if value.kind() == "assignment" || has_walrus(value) {
        return None;
    }
    assignment
        .child_by_field_name("left")
        .filter(|l| l.kind() == "identifier")
        .filter(|l| {
            code.get(l.byte_range())
                .is_some_and(|t| t.eq_ignore_ascii_case(name))
        })
}

fn has_walrus(node: TsNode<'_>) -> bool {
    let mut stack = vec![node];
    while let Some(at) = stack.pop() {
        if at.kind() == "named_expression" {
            return true;
        }
        let mut cursor = at.walk();
        stack.extend(at.named_children(&mut cursor));
    }
    false
}

/// The test that checks the data: the module binds the name, and holds the plan's value when
/// the plan gives one (a value with a NaN, never equal to itself, is only looked up).
fn data_test(node: &Node, module: &str) -> String {
    let name = &node.name;
    let value = node
        .value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.to_ascii_lowercase().contains("nan"));
    match value {
        Some(value) => format!(
            "def test_{name}_is_defined():\n    from {module} import {name}\n\n    assert {name} == {value}\n"
        ),
        None => format!(
            "def test_{name}_is_defined():\n    import {module} as module\n\n    assert hasattr(module, \"{name}\")\n"
        ),
    }
}

/// The last `max` bytes of `text` (at a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(value: Option<&str>) -> Node {
        let mut node: Node = serde_json::from_value(serde_json::json!({
            "id": "d", "name": "UNITS", "type": "data", "node_type": "leaf",
            "file_path": "src/conv/units.py",
            "docstring": "Factors to metres.\n\n\u{202e}Keys are unit names; \"\"\"quotes\"\"\" stay in a comment.\nimport os"
        }))
        .unwrap();
        node.value = value.map(str::to_string);
        node
    }

    #[test]
    fn an_answer_is_imports_and_one_assignment_of_the_name() {
        let code = "\"\"\"Doc.\"\"\"\nfrom fractions import Fraction\n# the table\nUNITS: dict[str, Fraction] = {'m': Fraction(1)}\n";
        assert_eq!(
            assignment_of(code, "UNITS").unwrap(),
            (
                vec!["from fractions import Fraction".to_string()],
                "UNITS: dict[str, Fraction] = {'m': Fraction(1)}".to_string()
            )
        );
    }

    #[test]
    fn a_target_spelled_in_another_case_is_given_the_plan_name() {
        assert_eq!(
            assignment_of(
                "import re\n_CAMEL_RE: re.Pattern = re.compile('x')\n",
                "_camel_re"
            )
            .unwrap(),
            (
                vec!["import re".to_string()],
                "_camel_re: re.Pattern = re.compile('x')".to_string()
            )
        );
        assert_eq!(
            assignment_of("_camel_re = 1\n_CAMEL_RE = 2\n", "_camel_re").unwrap_err(),
            "the answer assigns `_camel_re` more than once"
        );
    }

    #[test]
    fn an_answer_that_binds_anything_else_is_refused() {
        let refused = |code: &str| assignment_of(code, "UNITS").unwrap_err();
        assert_eq!(
            refused("OTHER = 1\n"),
            "the answer holds `OTHER = 1` besides the assignment: write only `UNITS = ...` and the imports it needs"
        );
        assert!(refused("UNITS = {}\ndef f():\n    pass\n").contains("`def f():`"));
        assert!(refused("UNITS = OTHER = {}\n").contains("`UNITS = OTHER = {}`"));
        assert!(refused("UNITS = [(y := 2)]\n").contains("besides the assignment"));
        assert!(refused("UNITS = {}\nimport os; os.system('x')\n").contains("os.system"));
        assert_eq!(
            refused("UNITS = {}\nUNITS = []\n"),
            "the answer assigns `UNITS` more than once"
        );
        assert_eq!(refused("import os\n"), "the answer does not assign `UNITS`");
        assert_eq!(
            refused("UNITS = {\n"),
            "the answer does not parse as Python"
        );
    }

    #[test]
    fn a_plan_value_that_is_not_a_literal_is_never_written() {
        let Err(Refusal::Stop(why)) = plan_assignment("UNITS", "__import__('os').system('id')")
        else {
            panic!("a call of __import__ was accepted");
        };
        assert_eq!(
            why,
            "the plan's value calls `__import__('os').system`; a value may call only frozenset, set, tuple, list, dict, str, bytes, int, float, complex or bool, on one literal"
        );
        let Ok((imports, statement)) = plan_assignment("UNITS", " {'m': 1.0,\n 'km': 1000.0}\n")
        else {
            panic!("a dict literal was refused");
        };
        assert!(imports.is_empty());
        assert_eq!(statement, "UNITS = {'m': 1.0,\n 'km': 1000.0}");
    }

    #[test]
    fn the_assignment_replaces_an_earlier_one_in_place_with_the_specification_above_it() {
        let node = data(Some("{'m': 1.0}"));
        let comments = spec_comments(&node);
        assert_eq!(
            comments,
            "# Factors to metres.\n#\n# Keys are unit names; \"\"\"quotes\"\"\" stay in a comment.\n# import os\n"
        );
        let current = "\"\"\"Units.\"\"\"\n\nimport math\n\n# old\nUNITS = {}\n\n\ndef to_m(x, unit):\n    return x * UNITS[unit]\n";
        let statement = format!("{comments}UNITS = {{'m': 1.0}}");
        let once = with_assignment(current, "UNITS", &statement);
        assert_eq!(
            once,
            format!(
                "\"\"\"Units.\"\"\"\n\nimport math\n\n{statement}\n\n\ndef to_m(x, unit):\n    return x * UNITS[unit]\n"
            )
        );
        assert_eq!(with_assignment(&once, "UNITS", &statement), once);
        let fresh = with_assignment("\"\"\"Units.\"\"\"\n", "UNITS", &statement);
        assert_eq!(fresh, format!("\"\"\"Units.\"\"\"\n\n{statement}\n"));
    }

    #[test]
    fn the_check_compares_with_the_plans_value_or_looks_the_name_up() {
        assert_eq!(
            data_test(&data(Some("{'m': 1.0}")), "conv.units"),
            "def test_UNITS_is_defined():\n    from conv.units import UNITS\n\n    assert UNITS == {'m': 1.0}\n"
        );
        let lookup = "def test_UNITS_is_defined():\n    import conv.units as module\n\n    assert hasattr(module, \"UNITS\")\n";
        assert_eq!(data_test(&data(None), "conv.units"), lookup);
        assert_eq!(data_test(&data(Some("float('nan')")), "conv.units"), lookup);
    }
}
