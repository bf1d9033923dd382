//! Diagnosis by majority vote (the seed's §4.5), the pure part.
//!
//! When the kept candidate passes the gates (the specification's examples, the module's
//! earlier tests) and some model-written tests still fail, either side may be wrong: a third
//! of the model's test cases are. The model votes [`VOTERS`] times, one letter each, sampled
//! at temperatures 0.3 + 0.1·i over one shared prompt (the local model decodes the votes as
//! one batch); execution evidence casts one more vote ([`evidence`]). A side wins with at
//! least [`MAJORITY`] votes and more than any other side; otherwise there is no majority and
//! a person decides (`needs_review`).
//!
//! Grammar of a vote: the first word of the answer that is exactly `A`, `B` or `C` (words
//! are runs of ASCII letters and digits). `A` is the implementation, `B` the test, `C` the
//! environment. An answer without one casts no vote.

use crate::checkpoint::Verdict;

/// Votes asked of the model.
pub const VOTERS: u32 = 5;

/// Votes a side needs to decide.
pub const MAJORITY: usize = 3;

/// The side an answer names (see the module's grammar).
pub fn parse(answer: &str) -> Option<Verdict> {
    answer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find_map(|word| match word {
            "A" => Some(Verdict::Implementation),
            "B" => Some(Verdict::Test),
            "C" => Some(Verdict::Environment),
            _ => None,
        })
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
}

/// The vote of execution evidence: the environment when the failure says so; the test when
/// two or more independent candidates pass the gates and every one of them fails every
/// disputed test (samples that agree with each other and with the specification's examples
/// are more likely right than one model-written expectation); otherwise none.
pub fn evidence(execution: &Execution) -> Option<Verdict> {
    if execution.environment {
        return Some(Verdict::Environment);
    }
    (execution.gated_candidates >= 2 && !execution.any_passes_a_disputed_test)
        .then_some(Verdict::Test)
}

/// Whether pytest's output for the disputed tests blames the environment.
pub fn blames_environment(output: &str) -> bool {
    ["ModuleNotFoundError", "Timeout", "timed out"]
        .iter()
        .any(|needle| output.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::{Environment as C, Implementation as A, Test as B};

    #[test]
    fn a_vote_is_the_first_standalone_letter() {
        assert_eq!(parse("B"), Some(B));
        assert_eq!(parse(" A\n"), Some(A));
        assert_eq!(parse("The answer is C."), Some(C));
        assert_eq!(parse("**B**: the test is wrong"), Some(B));
        assert_eq!(parse("Because the test expects 3"), None);
        assert_eq!(parse(""), None);
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
        assert!(blames_environment(
            "E   ModuleNotFoundError: No module named 'numpy'"
        ));
        assert!(!blames_environment("E   assert 3 == 4"));
    }
}
