//! Diagnosis by majority vote (the seed's §4.5), the pure part.
//!
//! When the kept candidate passes the gates (the specification's examples, the module's
//! earlier tests) and some model-written tests still fail, either side may be wrong: a third
//! of the model's test cases are. The model votes [`VOTERS`] times, one letter each, sampled
//! at temperatures 0.3 + 0.1·i; execution evidence casts one more vote ([`evidence`]). A side
//! wins with at least [`MAJORITY`] votes and more than any other side; otherwise there is no
//! majority and a person decides (`needs_review`).
//!
//! The letters do not always mean the same side: vote `i` lists the sides in the order
//! [`sides`] gives (rotated by `i`), so that a model preferring a letter, whatever the
//! question, spreads its votes over the sides instead of electing one. Measured with fixed
//! letters, the embedded 1.5B model answered the same letters for every dispute
//! (`reports/vote.md`). The votes share the prompt up to the options, so the local model
//! evaluates only the options again for each.
//!
//! Grammar of a vote: the first word of the answer that is exactly `A`, `B` or `C` (words
//! are runs of ASCII letters and digits), read through the vote's [`sides`]. An answer
//! without one casts no vote.

use crate::records::Verdict;

/// Votes asked of the model.
pub(crate) const VOTERS: u32 = 5;

/// Votes a side needs to decide.
pub(crate) const MAJORITY: usize = 3;

/// The letters of the options, in the order they are listed.
const LETTERS: [&str; 3] = ["A", "B", "C"];

/// The sides as vote `i` lists them under the letters A, B, C: rotated by `i`.
pub fn sides(i: u32) -> [Verdict; 3] {
    let mut sides = [Verdict::Implementation, Verdict::Test, Verdict::Environment];
    sides.rotate_left(i as usize % 3);
    sides
}

/// The options of vote `i`, one line per letter, for the prompt.
pub fn options(i: u32) -> String {
    let meaning = |side: Verdict| match side {
        Verdict::Implementation => {
            "the function does not do what the specification says (the tests are right)."
        }
        Verdict::Test => {
            "the tests expect something the specification does not say (a wrong expected value, an exception it never names, an input it does not allow)."
        }
        Verdict::Environment => {
            "the environment (a missing package, a timeout, a file or service the tests need)."
        }
    };
    LETTERS
        .iter()
        .zip(sides(i))
        .map(|(letter, side)| format!("{letter}: {}", meaning(side)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The side answer `answer` to vote `i` names (see the module's grammar).
pub fn parse(answer: &str, i: u32) -> Option<Verdict> {
    let word = answer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|word| LETTERS.contains(word))?;
    let at = LETTERS.iter().position(|l| *l == word)?;
    Some(sides(i)[at])
}

/// The side with at least [`MAJORITY`] votes and strictly more than any other, if any.
pub fn outcome(votes: &[Verdict]) -> Option<Verdict> {
    let sides = [Verdict::Implementation, Verdict::Test, Verdict::Environment];
    let count = |side: Verdict| votes.iter().filter(|v| **v == side).count();
    let leader = sides.into_iter().max_by_key(|s| count(*s))?;
    let most = count(leader);
    let alone = sides.iter().all(|s| *s == leader || count(*s) < most);
    (most >= MAJORITY && alone).then_some(leader)
}

/// What the test runs themselves say about the dispute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Execution {
    /// A disputed test timed out, or failed because a module is missing: the seed counts
    /// both as the environment.
    pub environment: bool,
    /// Candidates sampled independently that passed the gates.
    pub gated_candidates: usize,
    /// Whether any of them passed any of the disputed tests.
    pub any_passes_a_disputed_test: bool,
    /// A disputed test expects an error the specification documents and the code crashed
    /// with one it does not ([`crashed_instead_of_documented_error`]).
    pub crashed: bool,
    /// Every disputed test failed because pytest refused how the test used it
    /// ([`misuses_pytest`]): no code can make such a test pass.
    pub misused_pytest: bool,
}

/// The vote of execution evidence: the environment when the failure says so; the
/// implementation when it crashed where a documented error was expected; the test when
/// two or more independent candidates pass the gates and every one of them fails every
/// disputed test (samples that agree with each other and with the specification's examples
/// are more likely right than one model-written expectation); otherwise none.
pub fn evidence(execution: &Execution) -> Option<Verdict> {
    if let Some(side) = decisive(execution) {
        return Some(side);
    }
    if execution.environment {
        return Some(Verdict::Environment);
    }
    if execution.crashed {
        return Some(Verdict::Implementation);
    }
    (execution.gated_candidates >= 2 && !execution.any_passes_a_disputed_test)
        .then_some(Verdict::Test)
}

/// The side the runs alone decide, with no vote asked: the test, when every disputed test
/// failed on pytest refusing the test's own use of it. On ml_lib the three failing
/// integration cases of one run all compared nested lists with `pytest.approx`, which
/// raises a `TypeError` whatever the values; the model's votes blamed the code for one, and
/// two fix rounds bent correct code until the regression check reverted each fix.
pub(crate) fn decisive(execution: &Execution) -> Option<Verdict> {
    execution.misused_pytest.then_some(Verdict::Test)
}

/// Whether pytest's `output` for a test shows pytest refusing the test's use of its API (an
/// `E` line with one of pytest's own usage errors), a fault of the test whatever the code
/// returned.
pub(crate) fn misuses_pytest(output: &str) -> bool {
    const REFUSALS: [&str; 5] = [
        "pytest.approx() does not support nested",
        "approx() is not supported in a boolean context",
        "pytest.approx() only supports ordered sequences",
        "expected exception must be a BaseException type",
        "Unexpected keyword arguments passed to pytest.raises",
    ];
    output
        .lines()
        .filter(|line| line.starts_with('E'))
        .any(|line| REFUSALS.iter().any(|r| line.contains(r)))
}

/// What the model's `votes` and the execution evidence decide together. A model vote for the
/// environment counts only when the run shows an environment problem: the model cannot see
/// the machine, and whether a module was missing or a test timed out is a fact of the run.
/// Measured with rotated options, the embedded model's letters alone once skipped a node
/// (and its dependent) whose code the reference passes.
pub fn decide(votes: &[Verdict], execution: &Execution) -> Option<Verdict> {
    if let Some(side) = decisive(execution) {
        return Some(side);
    }
    let admissible = votes
        .iter()
        .copied()
        .filter(|v| *v != Verdict::Environment || execution.environment);
    let all: Vec<Verdict> = admissible.chain(evidence(execution)).collect();
    outcome(&all)
}

/// Whether a disputed test shows the code crashing where the test expects a documented
/// error: its source expects (`pytest.raises`) an exception that `documented` (the names of
/// the specification's `Raises:` entries) holds, and the last exception in pytest's `output`
/// (an `E   Name: ...` line) is one that it does not hold. Whatever the test's input, code
/// that dies of an undocumented `ZeroDivisionError` or `IndexError` breaks its contract; on
/// ml_lib such crashes were 7 of the 24 reference tests failed by code that passed its
/// examples. An assertion, or `DID NOT RAISE`, is no crash: there the test may be what
/// is wrong.
pub(crate) fn crashed_instead_of_documented_error(
    source: &str,
    output: &str,
    documented: &[String],
) -> bool {
    let expects_documented = crate::edit::merge::expected_exceptions(source)
        .iter()
        .any(|e| documented.contains(e));
    let raised = output.lines().rev().find_map(|line| {
        let name = line.strip_prefix('E')?.trim_start().split(':').next()?;
        let is_exception = (name.ends_with("Error") || name.ends_with("Exception"))
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        is_exception.then_some(name)
    });
    expects_documented
        && raised.is_some_and(|r| r != "AssertionError" && !documented.iter().any(|d| d == r))
}

/// The exception names of a specification's `Raises:` entries (`ValueError: If ...` gives
/// `ValueError`).
pub(crate) fn documented_errors(docstring: &str) -> Vec<String> {
    crate::python::documented_raises(docstring)
        .iter()
        .filter_map(|entry| entry.split(':').next())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty() && !name.contains(' '))
        .collect()
}

/// Whether pytest's output for the disputed tests blames the environment.
pub(crate) fn blames_environment(output: &str) -> bool {
    ["ModuleNotFoundError", "Timeout", "timed out"]
        .iter()
        .any(|needle| output.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::{Environment as C, Implementation as A, Test as B};

    #[test]
    fn a_vote_is_the_first_standalone_letter_read_through_its_rotation() {
        assert_eq!(parse("B", 0), Some(B));
        assert_eq!(parse(" A\n", 0), Some(A));
        assert_eq!(parse("The answer is C.", 0), Some(C));
        assert_eq!(parse("**B**: the test is wrong", 0), Some(B));
        assert_eq!(parse("Because the test expects 3", 0), None);
        assert_eq!(parse("", 0), None);
        // The same letter names each side once over three votes.
        assert_eq!(
            [0, 1, 2].map(|i| parse("A", i)),
            [Some(A), Some(B), Some(C)]
        );
        assert_eq!(sides(4), sides(1));
        let listed = options(1);
        assert!(listed.starts_with("A: the tests expect"), "{listed}");
        assert!(
            listed
                .lines()
                .nth(2)
                .unwrap()
                .starts_with("C: the function"),
            "{listed}"
        );
    }

    #[test]
    fn a_test_that_pytest_refuses_is_the_tests_fault_whatever_the_votes() {
        let nested = "tests/integration/test_p_flow.py:9: in test_p_flow_scale\n    \
            assert scale(xs) == pytest.approx([[1.0, 0.0]])\n\
            E   TypeError: pytest.approx() does not support nested data structures: [1.0, 0.0] at index 0";
        assert!(misuses_pytest(nested));
        // The same words outside pytest's error lines, or another TypeError, are no refusal.
        assert!(!misuses_pytest(
            "# pytest.approx() does not support nested lists"
        ));
        assert!(!misuses_pytest(
            "E   TypeError: unsupported operand type(s)"
        ));
        let refused = Execution {
            misused_pytest: true,
            ..Execution::default()
        };
        assert_eq!(decisive(&refused), Some(B));
        assert_eq!(decide(&[A, A, A, A, A], &refused), Some(B));
        assert_eq!(decisive(&Execution::default()), None);
        assert_eq!(decide(&[A, A, A], &Execution::default()), Some(A));
    }

    #[test]
    fn three_votes_and_more_than_any_other_side_decide() {
        assert_eq!(outcome(&[B, B, B, A, A]), Some(B));
        assert_eq!(outcome(&[C, C, C, A, B]), Some(C));
        assert_eq!(outcome(&[A, A, B, B, C]), None);
        assert_eq!(outcome(&[A, A, A, B, B, B]), None);
        assert_eq!(outcome(&[B, B]), None);
        assert_eq!(outcome(&[]), None);
    }

    #[test]
    fn execution_votes_for_the_environment_or_for_candidates_that_agree() {
        let agree = Execution {
            gated_candidates: 2,
            ..Execution::default()
        };
        assert_eq!(evidence(&agree), Some(B));
        let one = Execution {
            gated_candidates: 1,
            ..agree
        };
        assert_eq!(evidence(&one), None);
        let split = Execution {
            any_passes_a_disputed_test: true,
            ..agree
        };
        assert_eq!(evidence(&split), None);
        let slow = Execution {
            environment: true,
            ..split
        };
        assert_eq!(evidence(&slow), Some(C));
        let crash = Execution {
            crashed: true,
            ..agree
        };
        assert_eq!(evidence(&crash), Some(A));
        assert!(blames_environment(
            "E   ModuleNotFoundError: No module named 'numpy'"
        ));
        assert!(!blames_environment("E   assert 3 == 4"));
        // Environment votes need the run to agree.
        assert_eq!(decide(&[C, C, C, A, B], &one), None);
        assert_eq!(decide(&[C, C, C, A, B], &slow), Some(C));
        assert_eq!(decide(&[B, C, C, B, C], &agree), Some(B));
    }

    #[test]
    fn a_crash_where_a_documented_error_is_expected_is_the_codes_fault() {
        let documented = documented_errors(
            "Mean.\n\nRaises:\n    ValueError: If xs is empty.\n    KeyError: If absent.",
        );
        assert_eq!(documented, ["ValueError", "KeyError"]);
        let test =
            "def test_mean_empty():\n    with pytest.raises(ValueError):\n        mean([])\n";
        let crash = "    return total / len(xs)\nE   ZeroDivisionError: division by zero";
        assert!(crashed_instead_of_documented_error(
            test,
            crash,
            &documented
        ));
        // Not raising, an assertion, a documented error, or a test expecting an undocumented
        // error: the test may be what is wrong.
        let silent = "E   Failed: DID NOT RAISE <class 'ValueError'>";
        assert!(!crashed_instead_of_documented_error(
            test,
            silent,
            &documented
        ));
        let assertion = "E   AssertionError: assert 1 == 2";
        assert!(!crashed_instead_of_documented_error(
            test,
            assertion,
            &documented
        ));
        let other = "E   KeyError: 'x'";
        assert!(!crashed_instead_of_documented_error(
            test,
            other,
            &documented
        ));
        let invented = test.replace("ValueError", "TypeError");
        assert!(!crashed_instead_of_documented_error(
            &invented,
            crash,
            &documented
        ));
    }
}
