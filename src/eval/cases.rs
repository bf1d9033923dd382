//! From a reference file's source and its test run to one outcome per test.
//!
//! The run alone is not enough: a file that fails to import reports one collection error
//! and no test at all, and a run that times out reports nothing. So the tests a file holds
//! are read from its text first, and every declared test the run does not account for is an
//! error, with the file's reason. A test counts once whatever happened to its file, and the
//! total is the reference's own count.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Serialize;

use crate::python::is_name_char;
use crate::sandbox::TestRun;

/// What became of one reference test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaseOutcome {
    Passed,
    Failed,
    /// It did not get to run to an assertion: a collection or import error, a timeout, a
    /// fixture that raised.
    Error,
    Skipped,
}

/// One test of a file and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Case {
    /// Within the file: `test_x`, `test_x[2]`, `TestK::test_m`.
    pub id: String,
    pub outcome: CaseOutcome,
    pub reason: Option<String>,
}

/// A reference file after its run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FileRun {
    pub file: String,
    pub cases: Vec<Case>,
    /// Why the file as a whole did not run, when it did not.
    pub problem: Option<String>,
}

/// The tests pytest collects from `source` by its default rules: top-level functions named
/// `test*`, and `test*` methods of top-level classes named `Test*` or deriving from a
/// `TestCase`. Read as text, so a
/// file whose imports fail still declares its tests.
pub(super) fn declared_tests(source: &str) -> Vec<String> {
    let mut tests = Vec::new();
    // The current top-level `Test*` class, and the indentation of its body once seen.
    let mut class: Option<(String, Option<usize>)> = None;
    for line in source.lines() {
        let code = line.trim_start();
        if code.is_empty() || code.starts_with('#') {
            continue;
        }
        let indent = line.len() - code.len();
        if indent == 0 {
            class = code
                .strip_prefix("class ")
                .map(identifier)
                .filter(|name| name.starts_with("Test") || is_test_case(code))
                .map(|name| (name.to_string(), None));
            if let Some(name) = def_name(code).filter(|n| n.starts_with("test")) {
                tests.push(name.to_string());
            }
            continue;
        }
        if let Some((name, body)) = &mut class {
            let body = *body.get_or_insert(indent);
            if indent == body
                && let Some(method) = def_name(code).filter(|n| n.starts_with("test"))
            {
                tests.push(format!("{name}::{method}"));
            }
        }
    }
    tests
}

/// Whether a `class` line names `TestCase` among its bases: pytest collects a unittest class
/// whatever its name (`class ChunkedTests(TestCase):`).
fn is_test_case(class_line: &str) -> bool {
    class_line
        .split_once('(')
        .and_then(|(_, bases)| bases.split(')').next())
        .is_some_and(|bases| bases.contains("TestCase"))
}

/// `name` of `def name(` or `async def name(`.
fn def_name(code: &str) -> Option<&str> {
    let rest = code.strip_prefix("async ").unwrap_or(code);
    rest.strip_prefix("def ").map(identifier)
}

/// The Python identifier at the start of `text`.
fn identifier(text: &str) -> &str {
    let end = text.find(|c: char| !is_name_char(c)).unwrap_or(text.len());
    &text[..end]
}

/// `test_x[2]` -> `test_x`: the test a parametrized case comes from.
pub(super) fn base_id(id: &str) -> &str {
    id.split('[').next().unwrap_or(id)
}

/// The outcomes of `file`'s run: per test from pytest's report when the runner gives one,
/// else from its summary lines; then every declared test the run did not account for.
pub(super) fn read_run(file: &str, declared: &[String], run: &TestRun) -> FileRun {
    let reasons = failure_reasons(&run.output);
    let mut cases = if run.tests.is_empty() {
        from_summary(declared, run, &reasons)
    } else {
        from_report(file, run, &reasons)
    };
    let problem = file_problem(declared, run, &cases);
    let seen: BTreeSet<&str> = cases.iter().map(|c| base_id(&c.id)).collect();
    let missing: Vec<Case> = declared
        .iter()
        .filter(|d| !seen.contains(d.as_str()))
        .map(|d| Case {
            id: d.clone(),
            outcome: CaseOutcome::Error,
            reason: Some(problem.clone().unwrap_or_else(|| "not run".into())),
        })
        .collect();
    cases.extend(missing);
    FileRun {
        file: file.to_string(),
        cases,
        problem,
    }
}

/// Per-test outcomes from the runner's JUnit report. The one entry without a class is not a
/// test: it is pytest's report of a file that failed to collect.
fn from_report(file: &str, run: &TestRun, reasons: &BTreeMap<String, String>) -> Vec<Case> {
    let stem = file.trim_end_matches(".py");
    run.tests
        .iter()
        .filter_map(|t| {
            let (classname, name) = t.name.rsplit_once("::")?;
            if classname.is_empty() {
                return None;
            }
            // `reference_tests.test_x.TestK` -> `TestK::`: the classes after the module.
            let classes: Vec<&str> = classname
                .split('.')
                .skip_while(|p| *p != stem)
                .skip(1)
                .collect();
            let id = classes
                .iter()
                .chain(std::iter::once(&name))
                .copied()
                .collect::<Vec<_>>()
                .join("::");
            let outcome = match t.outcome.as_str() {
                "passed" => CaseOutcome::Passed,
                "failed" => CaseOutcome::Failed,
                "skipped" => CaseOutcome::Skipped,
                _ => CaseOutcome::Error,
            };
            let reason = (outcome != CaseOutcome::Passed)
                .then(|| reasons.get(&id).cloned())
                .flatten();
            Some(Case {
                id,
                outcome,
                reason,
            })
        })
        .collect()
}

/// Without a per-test report (the unsandboxed runner writes none): pytest exits 0 only when
/// every collected test passed, and exit 1 lists each failure and error in its summary, so
/// the declared tests not listed there passed. Anything else (a collection error, a timeout,
/// a kill) leaves the outcomes unknown, and the declared tests become errors.
fn from_summary(
    declared: &[String],
    run: &TestRun,
    reasons: &BTreeMap<String, String>,
) -> Vec<Case> {
    let ran = !run.timed_out && run.killed_by.is_none();
    let listed = summary_outcomes(&run.output);
    let exit = run.exit_code;
    let complete = ran && (exit == Some(0) || (exit == Some(1) && !listed.is_empty()));
    if !complete || listed.keys().any(|id| id.is_empty()) {
        return Vec::new();
    }
    declared
        .iter()
        .map(|d| {
            let failure = listed
                .iter()
                .find(|(id, _)| base_id(id) == d.as_str())
                .map(|(id, outcome)| (*outcome, reasons.get(id).cloned()));
            let (outcome, reason) = failure.unwrap_or((CaseOutcome::Passed, None));
            Case {
                id: d.clone(),
                outcome,
                reason,
            }
        })
        .collect()
}

/// Why the file as a whole did not run, or `None` when every declared test got an outcome.
fn file_problem(declared: &[String], run: &TestRun, cases: &[Case]) -> Option<String> {
    let collection_error = run
        .tests
        .iter()
        .any(|t| t.name.starts_with("::") && t.outcome != "passed");
    if collection_error {
        return Some(format!("could not be collected: {}", first_error(run)));
    }
    let seen: BTreeSet<&str> = cases.iter().map(|c| base_id(&c.id)).collect();
    let missing: Vec<&str> = declared
        .iter()
        .map(String::as_str)
        .filter(|d| !seen.contains(d))
        .collect();
    if missing.is_empty() {
        return None;
    }
    // A run that reported tests and ended normally simply did not collect these (a name
    // defined under an `if`, a deselection): say so rather than quote a passing summary.
    let ended = !run.timed_out && run.killed_by.is_none() && matches!(run.exit_code, Some(0 | 1));
    Some(if ended && !run.tests.is_empty() {
        format!("pytest did not collect {}", missing.join(", "))
    } else {
        first_error(run)
    })
}

/// A run stopped from outside (a timeout, a sandbox limit) says so; otherwise the first `E `
/// line of pytest's output (the exception that stopped it), else the runner's one-line reason.
fn first_error(run: &TestRun) -> String {
    if run.timed_out || run.killed_by.is_some() {
        return run.failure_reason();
    }
    run.output
        .lines()
        .find_map(|l| l.strip_prefix("E "))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| run.failure_reason())
}

/// pytest's short summary, `FAILED dir/test_x.py::test_y - reason` and `ERROR ...`: the id
/// within the file (empty for the file itself) and its outcome.
fn summary_outcomes(output: &str) -> BTreeMap<String, CaseOutcome> {
    summary_lines(output)
        .map(|(outcome, id, _)| (id.to_string(), outcome))
        .collect()
}

/// Why each test that did not pass failed, by id within the file: the first `E ` line of its
/// traceback section, else its short-summary line (which pytest cuts to 80 columns).
fn failure_reasons(output: &str) -> BTreeMap<String, String> {
    let mut reasons: BTreeMap<String, String> = summary_lines(output)
        .filter_map(|(_, id, reason)| Some((id.to_string(), reason?.to_string())))
        .collect();
    let mut section: Option<String> = None;
    for line in output.lines() {
        if let Some(title) = section_title(line) {
            section = Some(title);
        } else if let (Some(id), Some(error)) = (&section, line.strip_prefix("E ")) {
            if !error.trim().is_empty() {
                reasons.insert(id.clone(), error.trim().to_string());
            }
            section = None;
        }
    }
    reasons
}

/// The test of a traceback section's title line, `____ test_x[2] ____` or
/// `____ ERROR at setup of TestK.test_m ____`, as an id within the file.
fn section_title(line: &str) -> Option<String> {
    let inner = line.strip_prefix("_")?.strip_suffix("_")?.trim_matches('_');
    let title = inner.strip_prefix(' ')?.strip_suffix(' ')?;
    let title = title
        .split_once(" of ")
        .filter(|(head, _)| head.starts_with("ERROR at "))
        .map_or(title, |(_, test)| test);
    // Classes are dotted in titles and `::`-separated in ids; parameters may hold dots.
    let (name, params) = title.split_at(title.find('[').unwrap_or(title.len()));
    Some(name.replace('.', "::") + params)
}

/// `(outcome, id within the file, reason)` of each short-summary line.
fn summary_lines(output: &str) -> impl Iterator<Item = (CaseOutcome, &str, Option<&str>)> {
    output.lines().filter_map(|line| {
        let (outcome, rest) = if let Some(rest) = line.strip_prefix("FAILED ") {
            (CaseOutcome::Failed, rest)
        } else {
            (CaseOutcome::Error, line.strip_prefix("ERROR ")?)
        };
        let (node, reason) = match rest.split_once(" - ") {
            Some((node, reason)) => (node, Some(reason.trim())),
            None => (rest.trim(), None),
        };
        let id = node.split_once("::").map_or("", |(_, id)| id);
        Some((outcome, id, reason))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::TestOutcome;

    const SOURCE: &str = "import pytest\nfrom pkg.mod import f\n\n\ndef helper():\n    pass\n\n\
        def test_a():\n    def test_nested():\n        pass\n\n\
        @pytest.mark.parametrize('x', [1, 2])\ndef test_p(x):\n    assert x\n\n\
        class TestK:\n    def setup_method(self):\n        pass\n\n    def test_m(self):\n        pass\n\n\
        class Helper:\n    def test_not_collected(self):\n        pass\n\n\
        async def test_async():\n    pass\n";

    fn run(exit: Option<i32>, output: &str, tests: &[(&str, &str)]) -> TestRun {
        TestRun {
            exit_code: exit,
            cancelled: false,
            killed_by: None,
            output: output.into(),
            tests: tests
                .iter()
                .map(|(name, outcome)| TestOutcome {
                    name: (*name).into(),
                    outcome: (*outcome).into(),
                })
                .collect(),
            ..TestRun::cancelled("bwrap")
        }
    }

    fn outcomes(file: &FileRun) -> Vec<(&str, CaseOutcome)> {
        file.cases
            .iter()
            .map(|c| (c.id.as_str(), c.outcome))
            .collect()
    }

    #[test]
    fn declared_tests_follow_pytests_default_collection() {
        assert_eq!(
            declared_tests(SOURCE),
            ["test_a", "test_p", "TestK::test_m", "test_async"]
        );
    }

    #[test]
    fn unittest_classes_are_collected_whatever_their_name() {
        let source = "from unittest import TestCase\n\n\
            class ChunkedTests(TestCase):\n    def test_even(self):\n        pass\n\n\
            class Mixin(object):\n    def test_not_collected(self):\n        pass\n\n\
            class WindowedTests(unittest.TestCase, Mixin):\n    def test_w(self):\n        pass\n";
        assert_eq!(
            declared_tests(source),
            ["ChunkedTests::test_even", "WindowedTests::test_w"]
        );
    }

    #[test]
    fn a_report_gives_each_case_with_class_params_and_reason() {
        let declared = declared_tests(SOURCE);
        let report = [
            ("reference_tests.test_x::test_a", "passed"),
            ("reference_tests.test_x::test_p[1]", "passed"),
            ("reference_tests.test_x::test_p[2]", "failed"),
            ("reference_tests.test_x.TestK::test_m", "skipped"),
            ("reference_tests.test_x::test_async", "error"),
        ];
        let output =
            "FAILED reference_tests/test_x.py::test_p[2] - assert 2 == 1\n1 failed, 2 passed";
        let file = read_run("test_x.py", &declared, &run(Some(1), output, &report));
        assert_eq!(
            outcomes(&file),
            [
                ("test_a", CaseOutcome::Passed),
                ("test_p[1]", CaseOutcome::Passed),
                ("test_p[2]", CaseOutcome::Failed),
                ("TestK::test_m", CaseOutcome::Skipped),
                ("test_async", CaseOutcome::Error),
            ]
        );
        assert_eq!(file.cases[2].reason.as_deref(), Some("assert 2 == 1"));
        assert_eq!(file.problem, None);
    }

    #[test]
    fn reasons_come_whole_from_the_traceback_sections() {
        let output = "__________ test_p[2] __________\nreference_tests/test_x.py:8: in test_p\n    assert x == 1\n\
            E   assert 2 == 1\n________ ERROR at setup of TestK.test_m ________\nE   RuntimeError: fixture\n\
            FAILED reference_tests/test_x.py::test_p[2] - assert...\n\
            FAILED reference_tests/test_x.py::test_a - AssertionError: cut\n";
        let reasons = failure_reasons(output);
        assert_eq!(reasons["test_p[2]"], "assert 2 == 1");
        assert_eq!(reasons["TestK::test_m"], "RuntimeError: fixture");
        assert_eq!(reasons["test_a"], "AssertionError: cut");
    }

    #[test]
    fn a_collection_error_makes_every_declared_test_an_error_with_its_reason() {
        let declared = declared_tests(SOURCE);
        let output = "E   ModuleNotFoundError: No module named 'pkg'\nERROR reference_tests/test_x.py\n1 error in 0.1s";
        let report = [("::reference_tests.test_x", "error")];
        let file = read_run("test_x.py", &declared, &run(Some(2), output, &report));
        assert_eq!(file.cases.len(), 4);
        assert!(file.cases.iter().all(|c| c.outcome == CaseOutcome::Error));
        let problem = file.problem.unwrap_or_default();
        assert!(
            problem.contains("could not be collected") && problem.contains("No module named 'pkg'"),
            "{problem}"
        );
        assert_eq!(file.cases[0].reason.as_deref(), Some(problem.as_str()));
    }

    #[test]
    fn without_a_report_the_summary_lines_give_the_failures() {
        let declared = declared_tests(SOURCE);
        let output = "FAILED reference_tests/test_x.py::test_p[2] - assert 2 == 1\n\
                      ERROR reference_tests/test_x.py::TestK::test_m - fixture\n1 failed, 3 passed, 1 error";
        let file = read_run("test_x.py", &declared, &run(Some(1), output, &[]));
        assert_eq!(
            outcomes(&file),
            [
                ("test_a", CaseOutcome::Passed),
                ("test_p", CaseOutcome::Failed),
                ("TestK::test_m", CaseOutcome::Error),
                ("test_async", CaseOutcome::Passed),
            ]
        );
        let passed = read_run("test_x.py", &declared, &run(Some(0), "5 passed", &[]));
        assert!(
            passed
                .cases
                .iter()
                .all(|c| c.outcome == CaseOutcome::Passed)
        );
    }

    #[test]
    fn without_a_report_a_timeout_or_collection_error_leaves_only_errors() {
        let declared = declared_tests(SOURCE);
        let timed_out = TestRun {
            timed_out: true,
            killed_by: Some("timeout".into()),
            ..run(None, "", &[])
        };
        let file = read_run("test_x.py", &declared, &timed_out);
        assert!(file.cases.iter().all(|c| c.outcome == CaseOutcome::Error));
        assert!(file.problem.unwrap_or_default().contains("timed out"));
        // A failure printed before the hang is not why the file did not finish.
        let hung_after_a_failure = TestRun {
            output: "E   assert 1 == 2\n".into(),
            ..timed_out.clone()
        };
        let file = read_run("test_x.py", &declared, &hung_after_a_failure);
        assert!(file.problem.unwrap_or_default().contains("timed out"));
        let collection = run(
            Some(1),
            "ERROR reference_tests/test_x.py - boom\n1 error",
            &[],
        );
        let file = read_run("test_x.py", &declared, &collection);
        assert!(file.cases.iter().all(|c| c.outcome == CaseOutcome::Error));
    }
}
