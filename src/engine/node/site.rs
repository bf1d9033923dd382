//! Where one leaf's work happens: its plan node, its module and test file, and the files as
//! they were before it. Everything here reads the plan and the workspace and keeps no state of
//! its own, so the loop's other parts ([`super::rounds`], [`super::fixing`], the votes) can
//! share it while they change theirs.

use std::collections::BTreeSet;

use crate::edit::{code_for_target, merge_python, shape_correction, shape_tests};
use crate::fsutil::{FsError, Snapshot};
use crate::llm::Role;
use crate::rpg::{Node, NodePos};

use super::super::ask::{AskError, unusable};
use super::super::prompt::{self, PromptInputs, TestsAsked};
use super::super::repair::{
    bound_names, refuse_foreign, repoint_imports, stub, with_missing_imports, with_plan_docstring,
    without_src_prefix,
};
use super::super::testfile::{
    crashed_tests, failing_functions, focus, only_tests, test_function, without_broken_units,
    without_tests,
};
use super::super::{Context, examples, vote};
use super::choice::{Candidate, Evidence, Weighing};
use super::ensure_packages;

/// One leaf's node and files, fixed for the node's whole run.
pub(super) struct Site<'a> {
    pub(super) ctx: &'a Context,
    pub(super) position: NodePos,
    pub(super) node: &'a Node,
    pub(super) file: String,
    /// `file` as a Python module path.
    pub(super) module: String,
    pub(super) test_file: String,
    /// The node's files as they were before it: a fresh start goes back to them.
    pub(super) before: Snapshot,
}

impl<'a> Site<'a> {
    /// The leaf at `position`, its packages created and its files snapshotted; `None` when
    /// the plan gives it no file.
    pub(super) fn new(ctx: &'a Context, position: NodePos) -> Result<Option<Site<'a>>, FsError> {
        let node = ctx.rpg.node(position);
        let (Some(file), Some(test_file)) = (node.file_path.clone(), node.test_file()) else {
            return Ok(None);
        };
        ensure_packages(ctx, &file)?;
        let before = ctx.workspace.snapshot(&[file.clone(), test_file.clone()])?;
        Ok(Some(Site {
            ctx,
            position,
            node,
            module: prompt::import_path(&file),
            file,
            test_file,
            before,
        }))
    }

    /// The prompt's inputs for `attempt`, with `failure` as what went wrong last.
    pub(super) fn inputs(&self, attempt: u32, failure: &str) -> Result<PromptInputs, FsError> {
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
            current: self.module_text()?,
            before: self.module_before(),
            tests: self.test_text()?,
            failure: failure.to_string(),
            attempt,
            options: String::new(),
            head: prompt::answer_head(node, &self.helpers()),
            suspects: String::new(),
        })
    }

    /// The test file with the tests of `answer` merged into `base` (what it held), the
    /// specification's examples test beside them; unusable when the answer holds no tests.
    pub(super) fn tests_of(&self, answer: &str, base: &str) -> Result<String, AskError> {
        let specification = self.node.docstring.as_deref().unwrap_or("");
        let code = code_for_target(answer, &self.test_file, base).map_err(unusable)?;
        let code = shape_tests(&without_broken_units(&code), specification).map_err(unusable)?;
        let code = refuse_foreign(code, &self.ctx.packages, &["pytest"])?;
        // A test that forgets `import datetime` fails in its own frame and says nothing of
        // the code: the imports are added as for an implementation.
        let code = with_missing_imports(self.ctx, self.position, &code, base);
        let mut merged = merge_python(base, &code);
        if let Some(from_spec) = examples::examples_test(self.node, &self.module) {
            merged = merge_python(&merged, &from_spec);
        }
        Ok(merged)
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

    /// The node's module as it is now (empty when there is none yet).
    pub(super) fn module_text(&self) -> Result<String, FsError> {
        Ok(self.ctx.workspace.read(&self.file)?.unwrap_or_default())
    }

    /// The node's module as it was before this node (empty when there was none).
    fn module_before(&self) -> String {
        self.text_before(&self.file)
    }

    /// The node's file `path` as it was before this node (empty when there was none).
    fn text_before(&self, path: &str) -> String {
        let before = self.before.content(path).flatten().unwrap_or_default();
        String::from_utf8_lossy(before).into_owned()
    }

    /// The node's test file as it is now (empty when there is none yet).
    pub(super) fn test_text(&self) -> Result<String, FsError> {
        Ok(self
            .ctx
            .workspace
            .read(&self.test_file)?
            .unwrap_or_default())
    }

    /// The tests a prompt shows: a fix sees only the failing tests it must answer (`focus`);
    /// a first implementation sees this node's tests, not those of the module's earlier
    /// functions.
    pub(super) fn prompt_tests(&self, role: Role, focus: &[String]) -> Result<String, FsError> {
        let tests = self.test_text()?;
        Ok(match role {
            Role::Fix if !focus.is_empty() => only_tests(&tests, focus),
            _ => without_tests(&tests, &self.earlier_tests()),
        })
    }

    /// The test functions the test file had before this node: the module's earlier functions'.
    pub(super) fn earlier_tests(&self) -> Vec<String> {
        crate::symbols::split_units(&self.text_before(&self.test_file))
            .iter()
            .filter_map(|u| u.def_name().map(str::to_string))
            .collect()
    }

    /// The failing test functions a fix must answer, strongest evidence first: the earlier
    /// functions' tests it broke, else the specification's examples, else the generated
    /// tests that fail. A fix shown every failure bends code to the wrong tests too.
    pub(super) fn focus(&self, run: &crate::sandbox::TestRun) -> Vec<String> {
        let examples = examples::test_name(self.node);
        focus(failing_functions(run), &self.earlier_tests(), &examples)
    }

    /// Whether the plan gives this node examples that make a test (the strongest gate).
    pub(super) fn has_examples(&self) -> bool {
        examples::examples_test(self.node, &self.module).is_some()
    }

    /// How this node's candidates are weighed: by agreement when its examples are a gate,
    /// against the greedy answer when the model's tests are the only evidence.
    pub(super) fn weighing(&self) -> Weighing {
        Weighing::for_node(self.has_examples())
    }

    /// The exceptions the node's specification says it raises.
    fn documented_errors(&self) -> Vec<String> {
        vote::documented_errors(self.node.docstring.as_deref().unwrap_or(""))
    }

    /// The node's generated tests in which the code in place crashed (an undocumented
    /// exception raised in its module).
    pub(super) fn crashes(&self, run: &crate::sandbox::TestRun) -> Vec<String> {
        let earlier = self.earlier_tests();
        crashed_tests(run, &self.file, &self.documented_errors())
            .into_iter()
            .filter(|t| !earlier.contains(t))
            .collect()
    }

    /// `best`'s disputed tests in which it crashed instead of raising a documented error.
    pub(super) fn crashed_tests(&self, best: &Candidate) -> Vec<String> {
        let documented = self.documented_errors();
        best.disputed_tests
            .iter()
            .filter(|t| {
                vote::crashed_instead_of_documented_error(&t.source, &t.output, &documented)
            })
            .map(|t| t.name.clone())
            .collect()
    }

    /// Whether the node's function in `module` has no body (only a docstring, `pass`, `...`
    /// or `raise NotImplementedError`): never an implementation, whatever tests it passes.
    pub(super) fn bodiless(&self, module: &str) -> bool {
        crate::symbols::stub::is_bodiless(module, &self.node.name)
    }

    /// The names the node's function in `module` uses and nothing defines
    /// ([`crate::symbols::check::undefined_in_function`]), as strong evidence as a crash.
    /// Weighed only against the prior: with examples, the examples gate and the vote judge
    /// the code as measured on the fixtures.
    pub(super) fn undefined(&self, module: &str) -> Vec<String> {
        match self.weighing() {
            Weighing::Prior => {
                crate::symbols::check::undefined_in_function(module, &self.node.name)
            }
            Weighing::Agreement => Vec::new(),
        }
    }

    /// What a run says about the implementation in place (`module`). A function without a
    /// body passes no gate.
    pub(super) fn evidence(&self, run: &crate::sandbox::TestRun, module: &str) -> Evidence {
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

    /// Whether a test that was in the test file before this node (an earlier function's, in
    /// the same module) failed: a candidate that breaks working code is never kept.
    pub(super) fn breaks_earlier_tests(&self, run: &crate::sandbox::TestRun) -> bool {
        let earlier = self.earlier_tests();
        failing_functions(run)
            .iter()
            .any(|n| earlier.iter().any(|e| e == n))
    }

    /// The distinct modules the answers make (each merged into `current`, `editable` naming
    /// the suspects a fix may correct), with how many answers gave each (identical samples
    /// agree), and the first reason an answer was refused.
    pub(super) fn distinct_modules(
        &self,
        answers: Vec<Result<String, AskError>>,
        current: &str,
        editable: &[String],
    ) -> (Vec<(String, usize)>, Option<AskError>) {
        let mut modules: Vec<(String, usize)> = Vec::new();
        let mut refused = None;
        for answer in answers {
            match self.module_with(answer, current, editable) {
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

    /// The module as it would be with this answer: the function shaped, the plan's docstring
    /// and the forgotten imports added, a variable that shadows a module function it calls
    /// renamed ([`crate::symbols::repair`]), merged into `current`.
    fn module_with(
        &self,
        answer: Result<String, AskError>,
        current: &str,
        editable: &[String],
    ) -> Result<String, AskError> {
        let src_layout = self.file.starts_with("src/");
        let code = answer
            .and_then(|answer| code_for_target(&answer, &self.file, current).map_err(unusable))
            .map(|code| match src_layout {
                true => without_src_prefix(&code),
                false => code,
            })
            .and_then(|code| {
                shape_correction(&code, &self.node.name, editable, &self.module, current)
                    .map_err(unusable)
            })
            .and_then(|code| refuse_foreign(code, &self.ctx.packages, &[]))?;
        let code = with_plan_docstring(self.node, code);
        let code = prompt::without_helper_notes(&code);
        // A corrected suspect keeps its plan docstring like the node's own function.
        let code = editable
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
        let code =
            crate::symbols::repair::unshadow_called_globals(&code, &self.node.name, &globals);
        let module = merge_python(current, &code);
        // A module that does not parse breaks every import of its package (the exports
        // import it): such an answer is unusable, never kept, not even by the one-shot.
        // tree-sitter first (in-process); CPython has the last word, since tree-sitter's
        // grammar accepts code CPython refuses, and the one-shot runs nothing that would see it.
        match crate::symbols::check::tree_sitter_errors(&module) {
            Ok(errors) if errors.is_empty() => {
                match crate::symbols::check::cpython_errors(&module, &self.file) {
                    Some(errors) if !errors.is_empty() => Err(unusable(format!(
                        "the module would not compile: {}",
                        errors[0]
                    ))),
                    _ => Ok(module),
                }
            }
            Ok(errors) => Err(unusable(format!(
                "the module would not parse: {}",
                errors
                    .first()
                    .map_or(String::new(), |e| format!("line {}: {}", e.line, e.message))
            ))),
            Err(e) => Err(unusable(format!("the module would not parse: {e}"))),
        }
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

    /// The test file gets the plan's tests for the node (the examples test, else a test that
    /// the function is defined) beside the earlier ones: the model gave no usable tests, or
    /// was not asked (a node with examples and no vote to hold).
    pub(super) fn plan_tests_only(&self) -> Result<(), FsError> {
        let own = examples::examples_test(self.node, &self.module)
            .or_else(|| examples::defined_test(self.node, &self.module));
        let base = self.test_text()?;
        // The examples may use what they never import (`datetime.date(...)`): the imports
        // are added as for the model's tests, else the test dies of a NameError in its own
        // frame and fails every candidate.
        let merged = match own {
            Some(own) => with_missing_imports(self.ctx, self.position, &own, &base),
            None => return Ok(()),
        };
        let merged = merge_python(&base, &merged);
        tracing::debug!(node = %self.node.id, "no model-written tests: the plan's tests judge the code");
        self.ctx
            .workspace
            .write_if_changed(&self.test_file, &merged)
    }

    /// The test file with [`examples::imports_test`] beside the earlier tests: all that a
    /// draft is run against.
    pub(super) fn draft_test_only(&self) -> Result<(), FsError> {
        let own = examples::imports_test(self.node, &self.module);
        let merged = merge_python(&self.test_text()?, &own);
        self.ctx
            .workspace
            .write_if_changed(&self.test_file, &merged)
    }

    /// The node's files as they were before it (its tests kept with `keep_tests`).
    pub(super) fn start_over(&self, keep_tests: bool) -> Result<(), FsError> {
        tracing::debug!(node = %self.node.id, keep_tests, "starting over");
        let tests = self.ctx.workspace.read(&self.test_file)?;
        self.ctx.workspace.restore(&self.before)?;
        if let Some(tests) = tests.filter(|_| keep_tests) {
            self.ctx
                .workspace
                .write_if_changed(&self.test_file, &tests)?;
        }
        Ok(())
    }

    /// The test file as it was before the node.
    pub(super) fn restore_tests(&self) -> Result<(), FsError> {
        match self.before.content(&self.test_file).flatten() {
            Some(text) => self
                .ctx
                .workspace
                .write_if_changed(&self.test_file, &String::from_utf8_lossy(text)),
            None => self.ctx.workspace.remove(&self.test_file),
        }
    }

    /// The module as it was before the node with a stub of the node's function that says
    /// why it is missing; `None` when no stub can be written.
    pub(super) fn stubbed(&self, reason: &str) -> Option<String> {
        let stub = stub(self.node, reason)?;
        Some(merge_python(&self.module_before(), &stub))
    }

    /// A fingerprint of the node's module and test file as they are now.
    pub(super) fn code_state(&self) -> [u8; 32] {
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
}
