//! What a pytest run and a test file's text say, for the node loop: which test functions
//! failed (every case of a parametrized test belongs to its function), whether the test file
//! itself is broken, which failures a fix must answer, the disputed tests with their output,
//! a test file with some functions left out, and the tests that passed on a repeat (flaky).
//! Pure functions over text and [`TestRun`]s.

use std::collections::BTreeSet;

use crate::python::crashed_in;
use crate::records::DisputedTest;
use crate::sandbox::TestRun;

/// The tests that failed in `first` and passed in `again`; when `first` ended before pytest
/// could report its tests (a timeout, a sandbox limit) and `again` passed, the whole run.
pub(super) fn flaky_tests(first: &TestRun, again: &TestRun) -> Vec<String> {
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

/// The test function a pytest node id names: `tests/t.py::test_f[1-2]` is `test_f` (every
/// case of a parametrized test belongs to one function, which is what the file defines).
pub(super) fn test_function(id: &str) -> &str {
    let last = id.rsplit("::").next().unwrap_or(id);
    last.split('[').next().unwrap_or(last)
}

/// The test functions with a case that did not pass, once each, in run order.
pub(super) fn failing_functions(run: &TestRun) -> Vec<String> {
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

/// Whether nothing ran because of `test_file` itself: it does not compile (pytest reports the
/// syntax error with the file's path and line), or importing it failed in its own code (a
/// module-level statement raised, or it imports a name that does not exist), not in the code
/// under test. Either is a test fault, never the implementation's.
pub(super) fn test_file_is_broken(run: &TestRun, test_file: &str) -> bool {
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
pub(super) fn without_broken_units(code: &str) -> String {
    crate::edit::merge::render(
        &crate::symbols::split_units(code)
            .into_iter()
            .filter(|u| crate::symbols::check::parses(&u.text))
            .collect::<Vec<_>>(),
    )
}

/// Of the `failing` test functions, those a fix must answer: the earlier functions' tests it
/// broke, else the examples test when it fails, else all of them (`Leaf::focus` in
/// [`super::node`] says why).
pub(super) fn focus(failing: Vec<String>, earlier: &[String], examples: &str) -> Vec<String> {
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
pub(super) fn disputed_tests(tests: &str, disputed: &[String], run: &TestRun) -> Vec<DisputedTest> {
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

/// The failing test functions of `run` in which the code under test crashed: the exception
/// that ended the test is not an assertion, not `DID NOT RAISE`, not one the specification
/// documents (`documented`), and the traceback passes through `code_file`, so the code raised
/// it, not the test's own call. This is the strong evidence a model-written test gives: code
/// that dies of an undocumented `IndexError` on an input breaks its contract whatever the test
/// expected, while a value the test disputes may be the test's mistake (a third of a small
/// model's are). A test that calls the function wrongly fails in its own frame and is no crash.
pub(super) fn crashed_tests(
    run: &TestRun,
    code_file: &str,
    documented: &[String],
) -> BTreeSet<String> {
    failing_functions(run)
        .into_iter()
        .filter(|name| {
            crashed_in(
                &run.output_of(std::slice::from_ref(name)),
                code_file,
                documented,
            )
        })
        .collect()
}

/// A test file without the test functions named in `names`.
pub(super) fn without_tests(tests: &str, names: &[String]) -> String {
    tests_where(tests, |name| !names.iter().any(|d| d == name))
}

/// A test file with only the test functions named in `names` (and everything not a function).
pub(super) fn only_tests(tests: &str, names: &[String]) -> String {
    tests_where(tests, |name| names.iter().any(|d| d == name))
}

fn tests_where(tests: &str, keep: impl Fn(&str) -> bool) -> String {
    crate::edit::merge::render(
        &crate::symbols::split_units(tests)
            .into_iter()
            .filter(|u| u.def_name().is_none_or(&keep))
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_undocumented_exception_raised_in_the_code_is_a_crash() {
        let code = "src/lib/m.py";
        let section = |frames: &str, last: &str| {
            format!(
                "____ test_f ____\ntests/test_m.py:4: in test_f\n    f([])\n{frames}E   {last}\n"
            )
        };
        let in_code = "src/lib/m.py:7: in f\n    return xs[0]\n";
        let documented = vec!["ValueError".to_string()];
        let crash =
            |frames: &str, last: &str| crashed_in(&section(frames, last), code, &documented);
        assert!(crash(in_code, "IndexError: list index out of range"));
        assert!(crash(
            in_code,
            "builtins.ZeroDivisionError: division by zero"
        ));
        // Documented, an assertion, pytest's own verdicts: a disputed value, not a crash.
        assert!(!crash(in_code, "ValueError: empty"));
        assert!(!crash(in_code, "AssertionError: assert 1 == 2"));
        assert!(!crash(in_code, "assert None == 3"));
        assert!(!crash("", "Failed: DID NOT RAISE <class 'ValueError'>"));
        // The test called the function wrongly: its own frame raised.
        assert!(!crash(
            "",
            "TypeError: f() takes 1 positional argument but 2 were given"
        ));
        // Another file's frame only (a helper of the test) is not this code's crash.
        assert!(!crash("tests/helpers.py:3: in h\n", "KeyError: 'x'"));
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
    fn a_test_that_does_not_parse_is_dropped_and_a_broken_test_file_is_recognised_by_where_it_fails()
     {
        let code =
            "import pytest\n\n\ndef test_a():\n    assert f(1) == 2\n\n\ndef test_b(:\n    pass\n";
        assert_eq!(
            without_broken_units(code),
            "import pytest\n\n\ndef test_a():\n    assert f(1) == 2\n"
        );
        let raised = |output: &str| TestRun {
            output: output.into(),
            errors: 1,
            ..TestRun::cancelled("t")
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
}
