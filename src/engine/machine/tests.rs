//! The machine's paths as tables of events and steps.
use super::*;

const LIMITS: Limits = Limits {
    spend: Spend::all(8),
    candidates: 3,
    has_examples: true,
};

// The defaults of `zerorepo generate`.
const DEFAULTS: Limits = Limits {
    spend: Spend::all(DEFAULT_MAX_RETRIES),
    candidates: crate::engine::DEFAULT_CANDIDATES,
    ..LIMITS
};

const IMPL: Step = Step::Do(Action::AskImplementation {
    role: Role::Impl,
    candidates: 3,
});
// The first round: the greedy answer alone.
const FIRST: Step = Step::Do(Action::AskImplementation {
    role: Role::Impl,
    candidates: 1,
});
const FIX: Step = Step::Do(Action::AskImplementation {
    role: Role::Fix,
    candidates: 3,
});
// With examples, the first retry of failing code: fresh candidates, the tests kept.
const FRESH: Step = Step::Do(Action::StartOver { keep_tests: true });
const WRITTEN: Event = Event::ImplementationWritten { unchanged: false };
const UNCHANGED: Event = Event::ImplementationWritten { unchanged: true };
const WRONG: Event = Event::Ran(TestsRan::Failed {
    breaks_earlier: false,
    best: Standing::Ungated,
});
const DISPUTED: Event = Event::Ran(TestsRan::Failed {
    breaks_earlier: false,
    best: Standing::Disputed,
});
const CRASHES: Event = Event::Ran(TestsRan::Failed {
    breaks_earlier: false,
    best: Standing::Crashes,
});

/// The steps the machine answers to `events`, after the start.
fn drive(limits: Limits, events: &[Event]) -> (Vec<Step>, Machine) {
    let mut machine = Machine::new(limits);
    let mut actions = vec![machine.step(Event::Start)];
    for event in events {
        actions.push(machine.step(*event));
    }
    (actions, machine)
}

fn finish(outcome: LoopEnd) -> Step {
    Step::Finish(outcome)
}

#[test]
fn a_node_passes_on_the_first_round() {
    let (actions, machine) = drive(
        LIMITS,
        &[Event::TestsWritten, WRITTEN, Event::Ran(TestsRan::Passed)],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            FIRST,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Passed)
        ]
    );
    assert_eq!(machine.retries(), 0);
}

#[test]
fn without_usable_tests_the_plans_tests_judge_and_passing_code_is_only_reviewed() {
    let (actions, machine) = drive(
        LIMITS,
        &[
            Event::Unusable,
            Event::Unusable,
            Event::Unusable,
            Event::Done,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            Event::Ran(TestsRan::Passed),
        ],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            Step::Do(Action::PlanTestsOnly),
            FIRST,
            Step::Do(Action::RunTests),
            FRESH,
            IMPL,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Untested)
        ]
    );
    assert_eq!(machine.retries(), 3);
    // One unusable answer is asked again, and tests that come then make a pass a pass.
    let (actions, _) = drive(
        LIMITS,
        &[
            Event::Unusable,
            Event::TestsWritten,
            WRITTEN,
            Event::Ran(TestsRan::Passed),
        ],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            FIRST,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Passed)
        ]
    );
}

#[test]
fn failing_code_gets_fresh_candidates_then_a_fix_and_the_first_round_costs_no_budget() {
    let (actions, machine) = drive(
        LIMITS,
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
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            FIRST,
            Step::Do(Action::RunTests),
            FRESH,
            IMPL,
            Step::Do(Action::RunTests),
            FIX,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Passed)
        ]
    );
    // Attempt 1 counts 1 and its 3 candidates; the fix 3 more.
    assert_eq!((machine.retries(), machine.spent), (2, 7));
}

#[test]
fn the_loop_starts_over_once_then_fixes_until_the_budget_runs_out() {
    // Attempt 1 starts over with fresh candidates, keeping the tests (the plan gives
    // examples), and spends 1 + 3; attempts 2 and 3 fix the best (10 spent); attempt 4 does
    // not run (10 > 8).
    let (actions, machine) = drive(
        LIMITS,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
            WRITTEN,
            WRONG,
            WRITTEN,
            WRONG,
        ],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            FIRST,
            Step::Do(Action::RunTests),
            FRESH,
            IMPL,
            Step::Do(Action::RunTests),
            FIX,
            Step::Do(Action::RunTests),
            FIX,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Failed(Failure::Exhausted))
        ]
    );
    assert_eq!((machine.retries(), machine.spent), (3, 10));
}

#[test]
fn by_default_a_failing_node_gets_a_fresh_start_and_a_fix() {
    let (actions, machine) = drive(
        DEFAULTS,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
            WRITTEN,
            WRONG,
        ],
    );
    let round = |role| {
        Step::Do(Action::AskImplementation {
            role,
            candidates: crate::engine::DEFAULT_CANDIDATES,
        })
    };
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            FIRST,
            Step::Do(Action::RunTests),
            FRESH,
            round(Role::Impl),
            Step::Do(Action::RunTests),
            round(Role::Fix),
            Step::Do(Action::RunTests),
            finish(LoopEnd::Failed(Failure::Exhausted))
        ]
    );
    assert_eq!((machine.retries(), machine.spent), (2, 5));
    // Once fixes have paid poorly, the fresh start is the last round.
    let poor = Limits {
        spend: Spend {
            max_retries: crate::returns::POOR_BUDGET,
            ..DEFAULTS.spend
        },
        ..DEFAULTS
    };
    let (actions, _) = drive(
        poor,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
        ],
    );
    assert_eq!(
        actions[3..],
        [
            FRESH,
            round(Role::Impl),
            Step::Do(Action::RunTests),
            finish(LoopEnd::Failed(Failure::Exhausted))
        ]
    );
}

#[test]
fn tests_written_again_before_the_first_round_do_not_spend_its_candidates() {
    let limits = Limits {
        spend: Spend::all(DEFAULT_MAX_RETRIES),
        ..LIMITS
    };
    let (actions, machine) = drive(
        limits,
        &[
            Event::Unusable,
            Event::Unusable,
            Event::TestsWritten,
            WRITTEN,
            WRONG,
        ],
    );
    assert_eq!(
        actions[..4],
        [
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            FIRST
        ]
    );
    // The tests' attempts spent 1 each and the first round nothing: attempt 3 has spent
    // 3 of 5, halfway, so it starts over rather than spending a fix.
    assert_eq!(actions[5], Step::Do(Action::StartOver { keep_tests: true }));
    assert_eq!(machine.spent, 3);
}

#[test]
fn without_examples_starting_over_writes_new_tests() {
    let limits = Limits {
        has_examples: false,
        ..LIMITS
    };
    let (actions, _) = drive(
        limits,
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            UNCHANGED,
            WRONG,
            Event::Done,
        ],
    );
    // The fix of code that fails a gate changed nothing: the next attempt starts over,
    // tests and all (no disputed test is dropped without examples that passed).
    assert_eq!(
        actions[4..],
        [
            Step::Do(Action::RunTests),
            Step::Do(Action::StartOver { keep_tests: false }),
            Step::Do(Action::AskTests)
        ]
    );
}

#[test]
fn without_examples_disputed_values_end_for_review_and_a_crash_gets_fresh_candidates() {
    let limits = Limits {
        has_examples: false,
        ..LIMITS
    };
    // Only values disputed: kept for review at once, no vote, no fix.
    let (actions, _) = drive(limits, &[Event::TestsWritten, WRITTEN, DISPUTED]);
    assert_eq!(actions[3], finish(LoopEnd::NeedsReview));
    // A crash: one round of fresh candidates against the same tests (not asked again); a
    // second crash ends it for review with the best candidate.
    let crash_twice = [
        Event::TestsWritten,
        WRITTEN,
        CRASHES,
        Event::Done,
        WRITTEN,
        CRASHES,
    ];
    let (actions, machine) = drive(limits, &crash_twice);
    let fresh = Step::Do(Action::StartOver { keep_tests: true });
    let run = Step::Do(Action::RunTests);
    let review = finish(LoopEnd::NeedsReview);
    assert_eq!(actions[3..], [fresh, IMPL, run, review]);
    assert_eq!(machine.returns().fresh_starts.tries, 1);
    assert_eq!(machine.returns().fixes.tries, 0);
    // When this run's fresh starts stopped paying, a crash is fixed instead, and a fix that
    // changes nothing ends it: the model holds the code right.
    let spend = Spend {
        fresh_starts: false,
        ..Spend::all(8)
    };
    let fixing = Limits { spend, ..limits };
    let unchanged = [
        Event::TestsWritten,
        WRITTEN,
        CRASHES,
        Event::Done,
        UNCHANGED,
        CRASHES,
    ];
    let (actions, _) = drive(fixing, &unchanged);
    assert_eq!(actions[3..], [Step::Do(Action::FixBest), FIX, run, review]);
    // Passing every test still passes.
    let (actions, _) = drive(
        limits,
        &[Event::TestsWritten, WRITTEN, Event::Ran(TestsRan::Passed)],
    );
    assert_eq!(actions[3], finish(LoopEnd::Passed));
}

#[test]
fn a_spent_budget_keeps_gated_code_for_review() {
    let limits = Limits {
        spend: Spend::all(0),
        ..LIMITS
    };
    let (actions, machine) = drive(
        limits,
        &[
            Event::TestsWritten,
            WRITTEN,
            DISPUTED,
            Event::Voted(Some(Verdict::Implementation)),
            Event::Done,
        ],
    );
    assert_eq!(
        actions[3..],
        [
            Step::Do(Action::Diagnose),
            Step::Do(Action::FixBest),
            finish(LoopEnd::NeedsReview)
        ]
    );
    assert_eq!(machine.retries(), 0);
}

#[test]
fn the_vote_decides_a_dispute_once() {
    let before = [Event::TestsWritten, WRITTEN, DISPUTED];
    let cases = [
        (Some(Verdict::Environment), LoopEnd::SkippedEnvironment),
        (None, LoopEnd::NeedsReview),
    ];
    for (verdict, outcome) in cases {
        let (actions, _) = drive(LIMITS, &[&before[..], &[Event::Voted(verdict)]].concat());
        assert_eq!(
            actions[3..],
            [Step::Do(Action::Diagnose), finish(outcome)],
            "{verdict:?}"
        );
    }
    // Blamed on the implementation: one fix of the kept code; a dispute that survives it
    // is not voted on again.
    let (actions, _) = drive(
        LIMITS,
        &[
            &before[..],
            &[
                Event::Voted(Some(Verdict::Implementation)),
                Event::Done,
                WRITTEN,
                DISPUTED,
            ],
        ]
        .concat(),
    );
    assert_eq!(
        actions[3..],
        [
            Step::Do(Action::Diagnose),
            Step::Do(Action::FixBest),
            FIX,
            Step::Do(Action::RunTests),
            finish(LoopEnd::NeedsReview)
        ]
    );
}

#[test]
fn tests_the_vote_blames_are_written_once_more_then_dropped() {
    let voted = [
        Event::TestsWritten,
        WRITTEN,
        DISPUTED,
        Event::Voted(Some(Verdict::Test)),
    ];
    let still_wrong = [Event::TestsWritten, DISPUTED];
    let (actions, machine) = drive(LIMITS, &[&voted[..], &still_wrong].concat());
    assert_eq!(
        actions[3..],
        [
            Step::Do(Action::Diagnose),
            Step::Do(Action::RewriteTests),
            Step::Do(Action::RunTests),
            finish(LoopEnd::PassedWithoutDisputed)
        ]
    );
    assert_eq!(machine.retries(), 1);
    let (actions, _) = drive(
        LIMITS,
        &[
            &voted[..],
            &[Event::TestsWritten, Event::Ran(TestsRan::Passed)],
        ]
        .concat(),
    );
    assert_eq!(actions[6], finish(LoopEnd::Passed));
    let (actions, _) = drive(LIMITS, &[&voted[..], &[Event::Unusable]].concat());
    assert_eq!(actions[5], finish(LoopEnd::PassedWithoutDisputed));
}

#[test]
fn a_fix_that_changes_nothing_drops_the_disputed_tests_unless_it_breaks_earlier_ones() {
    // The first round, the fresh round, then a fix that gives the code back unchanged.
    let fixed_nothing = [
        Event::TestsWritten,
        WRITTEN,
        WRONG,
        Event::Done,
        WRITTEN,
        WRONG,
        UNCHANGED,
    ];
    let (actions, _) = drive(
        LIMITS,
        &[
            &fixed_nothing[..],
            &[DISPUTED, Event::Dropped { passed: true }],
        ]
        .concat(),
    );
    assert_eq!(
        actions[8..],
        [Step::Do(Action::DropDisputed), finish(LoopEnd::Passed)]
    );
    let (actions, _) = drive(
        LIMITS,
        &[
            &fixed_nothing[..],
            &[DISPUTED, Event::Dropped { passed: false }],
        ]
        .concat(),
    );
    assert_eq!(
        actions[8..],
        [Step::Do(Action::DropDisputed), Step::Do(Action::Diagnose)]
    );
    let breaks = Event::Ran(TestsRan::Failed {
        breaks_earlier: true,
        best: Standing::Ungated,
    });
    let (actions, _) = drive(LIMITS, &[&fixed_nothing[..], &[breaks]].concat());
    // Not dropped; the unchanged fix makes the next attempt start over.
    assert_eq!(actions[8], Step::Do(Action::StartOver { keep_tests: true }));
}

#[test]
fn a_test_file_that_does_not_compile_is_written_anew_and_the_code_kept() {
    let (actions, _) = drive(
        LIMITS,
        &[
            Event::TestsWritten,
            WRITTEN,
            Event::Ran(TestsRan::TestFileBroken),
            Event::Done,
            Event::TestsWritten,
            Event::Ran(TestsRan::Passed),
        ],
    );
    assert_eq!(
        actions[3..],
        [
            Step::Do(Action::DiscardTests),
            Step::Do(Action::AskTests),
            Step::Do(Action::RunTests),
            finish(LoopEnd::Passed)
        ]
    );
}

#[test]
fn an_unusable_answer_is_asked_again_and_only_existing_code_gets_a_fix() {
    let limits = Limits {
        spend: Spend::all(20),
        ..LIMITS
    };
    let (actions, _) = drive(
        limits,
        &[
            Event::Unusable,
            Event::TestsWritten,
            Event::Unusable,
            WRITTEN,
            WRONG,
        ],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::AskTests),
            Step::Do(Action::AskTests),
            FIRST,
            IMPL,
            Step::Do(Action::RunTests),
            FRESH
        ]
    );
    // Without examples the failing code in place is fixed.
    let prior = Limits {
        has_examples: false,
        ..limits
    };
    let (actions, _) = drive(
        prior,
        &[
            Event::Unusable,
            Event::TestsWritten,
            Event::Unusable,
            WRITTEN,
            WRONG,
        ],
    );
    assert_eq!(actions[5], FIX);
}

#[test]
fn provider_and_sandbox_failures_end_the_node() {
    let (actions, _) = drive(LIMITS, &[Event::ProviderFailed]);
    assert_eq!(actions[1], finish(LoopEnd::Failed(Failure::Provider)));
    let (actions, _) = drive(LIMITS, &[Event::TestsWritten, WRITTEN, Event::RunError]);
    assert_eq!(actions[3], finish(LoopEnd::Failed(Failure::CannotRun)));
}

#[test]
fn cancelling_in_every_state_interrupts_the_node() {
    // A path into each state that waits on an action, then the cancellation.
    let paths: [&[Event]; 10] = [
        &[],
        &[Event::TestsWritten],
        &[Event::TestsWritten, WRITTEN],
        &[Event::TestsWritten, WRITTEN, WRONG],
        &[
            Event::TestsWritten,
            WRITTEN,
            WRONG,
            Event::Done,
            WRITTEN,
            WRONG,
            UNCHANGED,
            DISPUTED,
        ],
        &[Event::TestsWritten, WRITTEN, DISPUTED],
        &[
            Event::TestsWritten,
            WRITTEN,
            DISPUTED,
            Event::Voted(Some(Verdict::Implementation)),
        ],
        &[
            Event::TestsWritten,
            WRITTEN,
            Event::Ran(TestsRan::TestFileBroken),
        ],
        &[Event::TestsWritten, WRITTEN, WRONG, Event::Done, WRITTEN],
        &[
            Event::TestsWritten,
            WRITTEN,
            DISPUTED,
            Event::Voted(Some(Verdict::Test)),
        ],
    ];
    let mut waited_on = Vec::new();
    for path in paths {
        let (actions, _) = drive(LIMITS, &[path, &[Event::Cancelled]].concat());
        let [.., Step::Do(waiting), last] = actions.as_slice() else {
            unreachable!("an action waited on, then the cancellation")
        };
        assert_eq!(*last, finish(LoopEnd::Interrupted), "after {path:?}");
        waited_on.push(std::mem::discriminant(waiting));
    }
    // Every kind of action that waits was covered.
    let kinds = [
        Action::StartOver { keep_tests: true },
        Action::AskTests,
        Action::AskImplementation {
            role: Role::Impl,
            candidates: 3,
        },
        Action::RunTests,
        Action::DiscardTests,
        Action::DropDisputed,
        Action::Diagnose,
        Action::FixBest,
        Action::RewriteTests,
    ];
    for kind in kinds {
        assert!(
            waited_on.contains(&std::mem::discriminant(&kind)),
            "{kind:?} not covered"
        );
    }
}

#[test]
fn the_first_round_is_the_greedy_answer_alone_and_later_rounds_get_all() {
    // With examples the next round is fresh candidates, without them a fix: all of them.
    for (has_examples, events, next) in [
        (
            true,
            &[Event::TestsWritten, WRITTEN, WRONG, Event::Done][..],
            IMPL,
        ),
        (false, &[Event::TestsWritten, WRITTEN, WRONG][..], FIX),
    ] {
        let limits = Limits {
            has_examples,
            ..LIMITS
        };
        let (actions, machine) = drive(limits, events);
        assert_eq!(
            actions[..3],
            [
                Step::Do(Action::AskTests),
                FIRST,
                Step::Do(Action::RunTests)
            ]
        );
        assert_eq!(actions.last(), Some(&next));
        // That round is the first the budget counts.
        assert_eq!(machine.spent, 4);
    }
}

#[test]
fn with_examples_and_no_votes_the_examples_alone_judge_and_a_pass_is_a_pass() {
    let limits = Limits {
        spend: Spend {
            votes: false,
            ..Spend::all(8)
        },
        ..LIMITS
    };
    assert!(!limits.asks_tests());
    let (actions, _) = drive(
        limits,
        &[Event::Done, WRITTEN, Event::Ran(TestsRan::Passed)],
    );
    assert_eq!(
        actions,
        [
            Step::Do(Action::PlanTestsOnly),
            FIRST,
            Step::Do(Action::RunTests),
            finish(LoopEnd::Passed)
        ]
    );
    // Failing them gets fresh candidates that keep them, then a fix.
    let (actions, _) = drive(
        limits,
        &[Event::Done, WRITTEN, WRONG, Event::Done, WRITTEN, WRONG],
    );
    assert_eq!(actions[3..], [FRESH, IMPL, Step::Do(Action::RunTests), FIX]);
    // Without examples the model's tests are the only evidence, and are asked.
    let prior = Limits {
        has_examples: false,
        ..limits
    };
    assert_eq!(drive(prior, &[]).0, [Step::Do(Action::AskTests)]);
}

mod spend;
