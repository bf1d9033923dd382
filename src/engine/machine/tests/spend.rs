//! What the run's returns let a node spend (`crate::returns`), as tables of events and steps:
//! tries counted and credited, and each kind of spending turned off.
use super::*;

#[test]
fn the_machine_counts_its_tries_and_credits_the_round_that_took_the_node_further() {
    // A fresh start that fails again buys nothing; the fix's round passes.
    let (_, machine) = drive(
        DEFAULTS,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
            WRITTEN,
            Event::Ran(TestsRan::Passed),
        ],
    );
    let returns = machine.returns();
    assert_eq!((returns.fixes.tries, returns.fixes.paid), (1, 1));
    assert_eq!(
        (returns.fresh_starts.tries, returns.fresh_starts.paid),
        (1, 0)
    );
    assert!(returns.votes.is_empty());
    // A vote that blamed the code, whose fix then passed: both paid.
    let (_, machine) = drive(
        LIMITS,
        &[
            Event::TestsWritten,
            WRITTEN,
            DISPUTED,
            Event::Voted(Some(Verdict::Implementation)),
            Event::Done,
            WRITTEN,
            Event::Ran(TestsRan::Passed),
        ],
    );
    let returns = machine.returns();
    assert_eq!((returns.votes.tries, returns.votes.paid), (1, 1));
    assert_eq!((returns.fixes.tries, returns.fixes.paid), (1, 1));
    // A fix that takes code failing a gate to code that passes the gates pays, though
    // model tests still dispute it.
    let (_, machine) = drive(
        LIMITS,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
            WRITTEN,
            DISPUTED,
        ],
    );
    assert_eq!(machine.returns().fixes.paid, 1);
}

#[test]
fn without_votes_a_dispute_ends_for_review() {
    let limits = Limits {
        spend: Spend {
            votes: false,
            ..Spend::all(8)
        },
        ..LIMITS
    };
    let (actions, machine) = drive(limits, &[Event::TestsWritten, WRITTEN, DISPUTED]);
    assert_eq!(actions[3], finish(LoopEnd::NeedsReview));
    assert!(machine.returns().votes.is_empty());
}

#[test]
fn without_fixes_failing_code_is_started_over_or_kept_for_review() {
    let no_fixes = Spend {
        fixes: false,
        ..Spend::all(8)
    };
    let limits = Limits {
        spend: no_fixes,
        ..LIMITS
    };
    let (actions, _) = drive(limits, &[Event::TestsWritten, WRITTEN, WRONG, Event::Done]);
    assert_eq!(
        actions[3..],
        [Step::Do(Action::StartOver { keep_tests: true }), IMPL]
    );
    // Neither fixes nor fresh starts: the best candidate's outcome at once.
    let limits = Limits {
        spend: Spend {
            fresh_starts: false,
            ..no_fixes
        },
        ..LIMITS
    };
    let (actions, _) = drive(limits, &[Event::TestsWritten, WRITTEN, WRONG]);
    assert_eq!(actions[3], finish(LoopEnd::Failed(Failure::Exhausted)));
    // A vote for the code, or crashing code without examples, is kept for review unfixed.
    let (actions, _) = drive(
        limits,
        &[
            Event::TestsWritten,
            WRITTEN,
            DISPUTED,
            Event::Voted(Some(Verdict::Implementation)),
        ],
    );
    assert_eq!(actions[4], finish(LoopEnd::NeedsReview));
    let prior = Limits {
        has_examples: false,
        ..limits
    };
    let (actions, _) = drive(prior, &[Event::TestsWritten, WRITTEN, CRASHES]);
    assert_eq!(actions[3], finish(LoopEnd::NeedsReview));
}

#[test]
fn without_fresh_starts_the_loop_goes_on_fixing_until_a_fix_changes_nothing() {
    // Halfway through the budget of 8 (after one fix round) it would start over.
    let limits = Limits {
        spend: Spend {
            fresh_starts: false,
            ..Spend::all(8)
        },
        has_examples: false,
        ..LIMITS
    };
    let (actions, _) = drive(
        limits,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            WRITTEN,
            WRONG,
            UNCHANGED,
            WRONG,
        ],
    );
    assert_eq!(
        actions[3..],
        [
            FIX,
            Step::Do(Action::RunTests),
            FIX,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Failed(Failure::Exhausted))
        ]
    );
}
