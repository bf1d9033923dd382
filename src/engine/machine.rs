//! The node loop's decisions as a pure state machine: [`Machine::step`] takes what just
//! happened ([`Event`]) and says what to do next ([`Step`]: an [`Action`], or the node's
//! [`Outcome`]). It does no I/O, so every path of the loop is a table of events and steps,
//! tested without a model, a sandbox or a disk; the driver in [`super::node`] only carries
//! out actions and reports their results as events. An outcome is not an action, so the
//! driver has nothing to carry out once the node is over.
//!
//! One attempt: maybe start over → write tests (when there are none) → ask implementation
//! candidates (unless only the tests were rewritten) → run the tests. A failed run of code
//! that passes the gates (the specification's examples, the module's earlier tests) goes to
//! the vote once: B has the disputed tests written once more and drops what still fails, A
//! asks one fix of the kept code, C skips the node, no majority ends it `needs_review`. Halfway through the budget, or when a fix changed
//! nothing, the loop starts over with fresh candidates. The budget counts implementations
//! asked after the first round (a round of k candidates spends k); once it is spent a gated
//! candidate is kept for review and anything else has failed. When the model gives no usable
//! tests [`TEST_ANSWERS`] times, the loop goes on with the tests the engine writes from the
//! plan, and code that passes them ends `needs_review` ([`Outcome::Untested`]), not passed.
//! A cancellation ends every state as [`Outcome::Interrupted`], which the run records as
//! resumable.

use crate::checkpoint::Verdict;
use crate::llm::Role;

/// The default budget (`--max-retries`): with 3 candidates, a fix round and a fresh start
/// after the first round. Measured on ml_lib, a fourth round (a fix of the fresh start)
/// passed no node that the third had not, and cost about a tenth of the run.
pub const DEFAULT_MAX_RETRIES: u32 = 5;

/// Unusable tests answers before the node goes on without model-written tests. They are
/// evidence, not truth: on ml_lib the embedded model answered `count_batches`'s test prompt
/// six times with no usable test, the node failed without one implementation asked, and its
/// two dependents were skipped, while a one-shot answer passed all of their reference tests.
pub const TEST_ANSWERS: u32 = 3;

/// What the machine is told about the node before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Implementations that may be asked after the first round.
    pub max_retries: u32,
    /// Candidates per implementation round (at least one is asked).
    pub candidates: u32,
    /// The plan gives examples, so the examples test is a gate: starting over keeps the tests.
    pub has_examples: bool,
}

/// What happened: the result of the last [`Action`], or the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The node begins.
    Start,
    /// The last action (which changes only files) was carried out.
    Done,
    /// Tests were written (with the specification's examples test beside them).
    TestsWritten,
    /// The candidates were written and one chosen; `unchanged`: the chosen module is the one
    /// the answer was asked to change.
    ImplementationWritten { unchanged: bool },
    /// The answer had no usable code; the reason goes to the next prompt.
    Unusable,
    /// The provider cannot answer at all.
    ProviderFailed,
    /// The node's tests ran.
    Ran(Run),
    /// The sandbox could not run the tests.
    RunError,
    /// The failing generated tests were removed and the rest ran: `passed` when all passed.
    Dropped { passed: bool },
    /// The vote's outcome (`None`: no majority).
    Voted(Option<Verdict>),
    /// The run is being cancelled.
    Cancelled,
}

/// What a run of the node's tests said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Passed,
    /// The test file itself is broken (it does not compile, or importing it fails in its own
    /// code): a test fault, never an implementation's.
    TestFileBroken,
    /// Some test failed. `breaks_earlier`: a test of an earlier function of the module is
    /// among them. `best`: what the best candidate so far (this one counted) has against it.
    Failed {
        breaks_earlier: bool,
        best: Standing,
    },
}

/// What the evidence holds against the best candidate so far, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// It fails a gate (or there is none): the plan's examples, the module's earlier tests,
    /// a body.
    Ungated,
    /// It passes the gates but crashes (an undocumented exception raised in its code) in some
    /// generated test: strong evidence.
    Crashes,
    /// It passes the gates; generated tests dispute only its values: weak evidence.
    Disputed,
}

/// What the machine says after an event: carry out an action, or the node is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Carry this out and report what came of it.
    Do(Action),
    /// The node is over; nothing more is asked of the driver.
    Finish(Outcome),
}

/// What to do next. Every action ends in exactly one [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Put the node's files back as they were before it, keeping the test file when
    /// `keep_tests`; then [`Event::Done`].
    StartOver { keep_tests: bool },
    /// Ask for tests: [`Event::TestsWritten`], `Unusable` or `ProviderFailed`.
    AskTests,
    /// Write the tests the engine draws from the plan alone (the examples test, else a test
    /// that the function is defined) beside the module's earlier tests; then [`Event::Done`].
    PlanTestsOnly,
    /// Ask for `candidates` implementations and keep the one their runs choose:
    /// [`Event::ImplementationWritten`], `Unusable` or `ProviderFailed`.
    AskImplementation { role: Role, candidates: u32 },
    /// Run the node's tests: [`Event::Ran`], `RunError` or `Cancelled`.
    RunTests,
    /// Put the test file back as it was before the node (it did not compile); `Done`.
    DiscardTests,
    /// Remove the failing generated tests and run again: [`Event::Dropped`].
    DropDisputed,
    /// Vote on the best candidate's disputed tests: [`Event::Voted`] or `Cancelled`.
    Diagnose,
    /// Put the best candidate back for one fix that answers its disputed tests; `Done`.
    FixBest,
    /// Put the best candidate back with its undisputed tests and ask for the disputed ones
    /// anew, told why they were judged wrong: [`Event::TestsWritten`], `Unusable` or
    /// `ProviderFailed`.
    RewriteTests,
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every test passed.
    Passed,
    /// The vote blamed the tests, and what was written again still failed: the best
    /// candidate passes without them.
    PassedWithoutDisputed,
    /// The best candidate passes the gates, generated tests dispute it, nothing settled it.
    NeedsReview,
    /// The code passes every test, but the model wrote none of them: only the plan's tests
    /// and the module's earlier ones judged it.
    Untested,
    /// The vote blamed the environment.
    SkippedEnvironment,
    Failed(Failure),
    /// Cancelled: nothing about the node is decided, a resumed run does it again.
    Interrupted,
}

/// Why the loop failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Provider,
    CannotRun,
    /// The budget is spent and no candidate passes the gates.
    Exhausted,
}

/// The loop's control state; the driver keeps the data (code, tests, failures).
#[derive(Debug, Clone)]
pub struct Machine {
    limits: Limits,
    /// The attempt under way (0 is the first round).
    attempt: u32,
    /// Implementations asked after the first round.
    spent: u32,
    tests_written: bool,
    /// The next attempt rewrites the tests and keeps the code.
    tests_only: bool,
    /// The start-over halfway through the budget happened.
    started_over: bool,
    /// The last fix returned the code unchanged: the model holds the code right.
    fix_changed_nothing: bool,
    /// A failure is known for the next prompt.
    has_failure: bool,
    /// An implementation of this node is in place (none before the first round or after a
    /// fresh start): with a failure, the next implementation is a fix of it.
    implemented: bool,
    diagnosed: bool,
    /// An implementation round was asked (the budget counts every round after the first).
    asked_implementation: bool,
    /// The vote blamed the tests and they are being written again (once).
    rewriting: bool,
    /// Tests answers that were unusable.
    unusable_tests: u32,
    /// The node's tests are the plan's alone: the model gave none that could be used.
    untested: bool,
    best_gated: bool,
    /// The role of the last implementation asked.
    role: Role,
    /// The last action, which a `Done` completes (`None` before the first).
    last: Option<Action>,
    /// Attempts that ran before the outcome (set when the machine finishes).
    retries: u32,
}

impl Machine {
    pub fn new(limits: Limits) -> Machine {
        Machine {
            limits,
            attempt: 0,
            spent: 0,
            tests_written: false,
            tests_only: false,
            started_over: false,
            fix_changed_nothing: false,
            has_failure: false,
            implemented: false,
            diagnosed: false,
            asked_implementation: false,
            rewriting: false,
            unusable_tests: 0,
            untested: false,
            best_gated: false,
            role: Role::Impl,
            last: None,
            retries: 0,
        }
    }

    /// The attempt under way: part of every prompt and of the recordings' keys.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The attempts before the one that ended the node (for a spent budget, the attempts run).
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// What to do after `event`: the next action, or the outcome once the node is over.
    pub fn step(&mut self, event: Event) -> Step {
        let step = self.decide(event);
        if let Step::Do(action) = step {
            self.last = Some(action);
        }
        step
    }

    fn decide(&mut self, event: Event) -> Step {
        match event {
            Event::Cancelled => self.finish(Outcome::Interrupted),
            Event::ProviderFailed => self.finish(Outcome::Failed(Failure::Provider)),
            Event::RunError => self.finish(Outcome::Failed(Failure::CannotRun)),
            Event::Start => self.begin(),
            // The vote stands: what could not be written again is dropped.
            Event::Unusable if self.rewriting => self.finish(Outcome::PassedWithoutDisputed),
            Event::Ran(Run::Passed) if self.rewriting => self.finish(Outcome::Passed),
            Event::Ran(_) if self.rewriting => self.finish(Outcome::PassedWithoutDisputed),
            Event::Unusable if self.last == Some(Action::AskTests) => self.tests_unusable(),
            Event::Unusable => {
                self.has_failure = true;
                self.retry()
            }
            Event::TestsWritten => {
                self.tests_written = true;
                self.untested = false;
                self.after_tests()
            }
            Event::ImplementationWritten { unchanged } => {
                self.implemented = true;
                self.fix_changed_nothing = self.role == Role::Fix && unchanged;
                Step::Do(Action::RunTests)
            }
            Event::Ran(run) => self.ran(run),
            Event::Dropped { passed: true } => self.finish(Outcome::Passed),
            Event::Dropped { passed: false } => self.dispute(),
            Event::Voted(verdict) => self.voted(verdict),
            Event::Done => match self.last {
                Some(Action::StartOver { .. }) => self.proceed(),
                Some(Action::PlanTestsOnly) => {
                    self.tests_written = true;
                    self.after_tests()
                }
                _ => self.retry(),
            },
        }
    }

    /// The start of an attempt: the budget, then maybe a fresh start.
    fn begin(&mut self) -> Step {
        let limits = self.limits;
        if self.spent > limits.max_retries {
            let outcome = match self.best_gated {
                true => Outcome::NeedsReview,
                false => Outcome::Failed(Failure::Exhausted),
            };
            // The attempt that would start does not run.
            self.retries = self.attempt.saturating_sub(1);
            return Step::Finish(outcome);
        }
        // Fixes have stopped helping: fresh candidates rather than code bent to fit. Without
        // examples the generated tests may be what is wrong, so they are written anew too.
        let halfway = !self.started_over && self.spent >= limits.max_retries.div_ceil(2);
        if self.tests_written && self.attempt > 0 && (halfway || self.fix_changed_nothing) {
            let keep_tests = limits.has_examples;
            self.tests_written = keep_tests;
            self.started_over |= halfway;
            self.fix_changed_nothing = false;
            self.has_failure = false;
            self.implemented = false;
            return Step::Do(Action::StartOver { keep_tests });
        }
        self.proceed()
    }

    fn proceed(&mut self) -> Step {
        match self.tests_written {
            false => Step::Do(Action::AskTests),
            true => self.after_tests(),
        }
    }

    fn after_tests(&mut self) -> Step {
        if std::mem::take(&mut self.tests_only) || self.rewriting {
            return Step::Do(Action::RunTests);
        }
        self.role = match self.has_failure && self.implemented {
            true => Role::Fix,
            false => Role::Impl,
        };
        // The first implementation round is free even when broken test files were written
        // again before it: the budget is for answers after it.
        let candidates = self.limits.candidates.max(1);
        if std::mem::replace(&mut self.asked_implementation, true) {
            self.spent += candidates;
        }
        Step::Do(Action::AskImplementation {
            role: self.role,
            candidates,
        })
    }

    /// A tests answer was unusable: ask again, or, after [`TEST_ANSWERS`] of them, go on
    /// with the plan's tests alone rather than fail code the model may well write right.
    fn tests_unusable(&mut self) -> Step {
        self.unusable_tests += 1;
        if self.unusable_tests < TEST_ANSWERS {
            self.has_failure = true;
            return self.retry();
        }
        self.untested = true;
        Step::Do(Action::PlanTestsOnly)
    }

    fn ran(&mut self, run: Run) -> Step {
        match run {
            Run::Passed if self.untested => self.finish(Outcome::Untested),
            Run::Passed => self.finish(Outcome::Passed),
            Run::TestFileBroken => {
                self.tests_written = false;
                self.tests_only = true;
                self.has_failure = false;
                Step::Do(Action::DiscardTests)
            }
            Run::Failed {
                breaks_earlier,
                best,
            } => {
                self.best_gated = best != Standing::Ungated;
                self.has_failure = true;
                if !self.limits.has_examples {
                    return self.against_the_prior(best);
                }
                match self.fix_changed_nothing && !breaks_earlier {
                    true => Step::Do(Action::DropDisputed),
                    false => self.dispute(),
                }
            }
        }
    }

    /// Without examples the model's tests are the only evidence and the greedy answer is the
    /// prior: code that passes the gates is kept for review when the tests dispute only its
    /// values (no vote, no fix: measured, neither bought anything there), fixed when it
    /// crashes (until a fix changes nothing), and code that fails a gate is fixed as always.
    fn against_the_prior(&mut self, best: Standing) -> Step {
        match best {
            Standing::Ungated => self.retry(),
            Standing::Disputed => self.finish(Outcome::NeedsReview),
            Standing::Crashes if self.fix_changed_nothing => self.finish(Outcome::NeedsReview),
            Standing::Crashes => Step::Do(Action::FixBest),
        }
    }

    /// Generated tests fail: against gated code the vote decides, once; otherwise fix.
    fn dispute(&mut self) -> Step {
        match (self.best_gated, self.diagnosed) {
            (false, _) => self.retry(),
            (true, true) => self.finish(Outcome::NeedsReview),
            (true, false) => Step::Do(Action::Diagnose),
        }
    }

    fn voted(&mut self, verdict: Option<Verdict>) -> Step {
        self.diagnosed = true;
        match verdict {
            Some(Verdict::Test) => {
                // A new attempt, so that its answer is asked (and recorded) apart.
                self.rewriting = true;
                self.attempt += 1;
                self.spent = self.spent.max(self.attempt);
                Step::Do(Action::RewriteTests)
            }
            Some(Verdict::Environment) => self.finish(Outcome::SkippedEnvironment),
            Some(Verdict::Implementation) => {
                self.has_failure = true;
                Step::Do(Action::FixBest)
            }
            None => self.finish(Outcome::NeedsReview),
        }
    }

    fn retry(&mut self) -> Step {
        self.attempt += 1;
        self.spent = self.spent.max(self.attempt);
        self.begin()
    }

    fn finish(&mut self, outcome: Outcome) -> Step {
        self.retries = self.attempt;
        Step::Finish(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_retries: 8,
        candidates: 3,
        has_examples: true,
    };

    const IMPL: Step = Step::Do(Action::AskImplementation {
        role: Role::Impl,
        candidates: 3,
    });
    const FIX: Step = Step::Do(Action::AskImplementation {
        role: Role::Fix,
        candidates: 3,
    });
    const WRITTEN: Event = Event::ImplementationWritten { unchanged: false };
    const UNCHANGED: Event = Event::ImplementationWritten { unchanged: true };
    const WRONG: Event = Event::Ran(Run::Failed {
        breaks_earlier: false,
        best: Standing::Ungated,
    });
    const DISPUTED: Event = Event::Ran(Run::Failed {
        breaks_earlier: false,
        best: Standing::Disputed,
    });
    const CRASHES: Event = Event::Ran(Run::Failed {
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

    fn finish(outcome: Outcome) -> Step {
        Step::Finish(outcome)
    }

    #[test]
    fn a_node_passes_on_the_first_round() {
        let (actions, machine) = drive(
            LIMITS,
            &[Event::TestsWritten, WRITTEN, Event::Ran(Run::Passed)],
        );
        assert_eq!(
            actions,
            [
                Step::Do(Action::AskTests),
                IMPL,
                Step::Do(Action::RunTests),
                finish(Outcome::Passed)
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
                WRITTEN,
                Event::Ran(Run::Passed),
            ],
        );
        assert_eq!(
            actions,
            [
                Step::Do(Action::AskTests),
                Step::Do(Action::AskTests),
                Step::Do(Action::AskTests),
                Step::Do(Action::PlanTestsOnly),
                IMPL,
                Step::Do(Action::RunTests),
                FIX,
                Step::Do(Action::RunTests),
                finish(Outcome::Untested)
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
                Event::Ran(Run::Passed),
            ],
        );
        assert_eq!(
            actions,
            [
                Step::Do(Action::AskTests),
                Step::Do(Action::AskTests),
                IMPL,
                Step::Do(Action::RunTests),
                finish(Outcome::Passed)
            ]
        );
    }

    #[test]
    fn failing_code_is_fixed_and_the_first_round_costs_no_budget() {
        let (actions, machine) = drive(
            LIMITS,
            &[
                Event::TestsWritten,
                WRITTEN,
                WRONG,
                WRITTEN,
                Event::Ran(Run::Passed),
            ],
        );
        assert_eq!(
            actions,
            [
                Step::Do(Action::AskTests),
                IMPL,
                Step::Do(Action::RunTests),
                FIX,
                Step::Do(Action::RunTests),
                finish(Outcome::Passed)
            ]
        );
        assert_eq!((machine.retries(), machine.spent), (1, 4));
    }

    #[test]
    fn halfway_through_the_budget_the_loop_starts_over_and_then_runs_out() {
        // Attempt 1 spends 1 + 3; attempt 2 starts over (4 ≥ 8/2) with fresh candidates,
        // keeping the tests (the plan gives examples) and spends 3 more; attempt 3 fixes
        // them (10 spent); attempt 4 does not run (10 > 8).
        let (actions, machine) = drive(
            LIMITS,
            &[
                Event::TestsWritten,
                WRITTEN,
                WRONG,
                WRITTEN,
                WRONG,
                Event::Done,
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
                IMPL,
                Step::Do(Action::RunTests),
                FIX,
                Step::Do(Action::RunTests),
                Step::Do(Action::StartOver { keep_tests: true }),
                IMPL,
                Step::Do(Action::RunTests),
                FIX,
                Step::Do(Action::RunTests),
                finish(Outcome::Failed(Failure::Exhausted))
            ]
        );
        assert_eq!((machine.retries(), machine.spent), (3, 10));
    }

    #[test]
    fn by_default_a_failing_node_gets_a_fix_and_a_fresh_start() {
        let limits = Limits {
            max_retries: DEFAULT_MAX_RETRIES,
            ..LIMITS
        };
        let (actions, machine) = drive(
            limits,
            &[
                Event::TestsWritten,
                WRITTEN,
                WRONG,
                WRITTEN,
                WRONG,
                Event::Done,
                WRITTEN,
                WRONG,
            ],
        );
        assert_eq!(
            actions,
            [
                Step::Do(Action::AskTests),
                IMPL,
                Step::Do(Action::RunTests),
                FIX,
                Step::Do(Action::RunTests),
                Step::Do(Action::StartOver { keep_tests: true }),
                IMPL,
                Step::Do(Action::RunTests),
                finish(Outcome::Failed(Failure::Exhausted))
            ]
        );
        assert_eq!((machine.retries(), machine.spent), (2, 7));
    }

    #[test]
    fn tests_written_again_before_the_first_round_do_not_spend_its_candidates() {
        let limits = Limits {
            max_retries: DEFAULT_MAX_RETRIES,
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
                IMPL
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
    fn without_examples_disputed_values_end_for_review_and_crashes_are_fixed() {
        let limits = Limits {
            has_examples: false,
            ..LIMITS
        };
        // Only values disputed: kept for review at once, no vote, no fix.
        let (actions, _) = drive(limits, &[Event::TestsWritten, WRITTEN, DISPUTED]);
        assert_eq!(actions[3], finish(Outcome::NeedsReview));
        // A crash: one fix of the kept code; a fix that leaves only disputed values ends it.
        let (actions, _) = drive(
            limits,
            &[
                Event::TestsWritten,
                WRITTEN,
                CRASHES,
                Event::Done,
                WRITTEN,
                DISPUTED,
            ],
        );
        assert_eq!(
            actions[3..],
            [
                Step::Do(Action::FixBest),
                FIX,
                Step::Do(Action::RunTests),
                finish(Outcome::NeedsReview)
            ]
        );
        // A fix that changes nothing ends it too: the model holds the code right.
        let (actions, _) = drive(
            limits,
            &[
                Event::TestsWritten,
                WRITTEN,
                CRASHES,
                Event::Done,
                UNCHANGED,
                CRASHES,
            ],
        );
        assert_eq!(actions[6], finish(Outcome::NeedsReview));
        // Passing every test still passes.
        let (actions, _) = drive(
            limits,
            &[Event::TestsWritten, WRITTEN, Event::Ran(Run::Passed)],
        );
        assert_eq!(actions[3], finish(Outcome::Passed));
    }

    #[test]
    fn a_spent_budget_keeps_gated_code_for_review() {
        let limits = Limits {
            max_retries: 0,
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
                finish(Outcome::NeedsReview)
            ]
        );
        assert_eq!(machine.retries(), 0);
    }

    #[test]
    fn the_vote_decides_a_dispute_once() {
        let before = [Event::TestsWritten, WRITTEN, DISPUTED];
        let cases = [
            (Some(Verdict::Environment), Outcome::SkippedEnvironment),
            (None, Outcome::NeedsReview),
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
                finish(Outcome::NeedsReview)
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
                finish(Outcome::PassedWithoutDisputed)
            ]
        );
        assert_eq!(machine.retries(), 1);
        let (actions, _) = drive(
            LIMITS,
            &[&voted[..], &[Event::TestsWritten, Event::Ran(Run::Passed)]].concat(),
        );
        assert_eq!(actions[6], finish(Outcome::Passed));
        let (actions, _) = drive(LIMITS, &[&voted[..], &[Event::Unusable]].concat());
        assert_eq!(actions[5], finish(Outcome::PassedWithoutDisputed));
    }

    #[test]
    fn a_fix_that_changes_nothing_drops_the_disputed_tests_unless_it_breaks_earlier_ones() {
        let fixed_nothing = [Event::TestsWritten, WRITTEN, WRONG, UNCHANGED];
        let (actions, _) = drive(
            LIMITS,
            &[
                &fixed_nothing[..],
                &[DISPUTED, Event::Dropped { passed: true }],
            ]
            .concat(),
        );
        assert_eq!(
            actions[5..],
            [Step::Do(Action::DropDisputed), finish(Outcome::Passed)]
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
            actions[5..],
            [Step::Do(Action::DropDisputed), Step::Do(Action::Diagnose)]
        );
        let breaks = Event::Ran(Run::Failed {
            breaks_earlier: true,
            best: Standing::Ungated,
        });
        let (actions, _) = drive(LIMITS, &[&fixed_nothing[..], &[breaks]].concat());
        // Not dropped; the unchanged fix makes the next attempt start over.
        assert_eq!(actions[5], Step::Do(Action::StartOver { keep_tests: true }));
    }

    #[test]
    fn a_test_file_that_does_not_compile_is_written_anew_and_the_code_kept() {
        let (actions, _) = drive(
            LIMITS,
            &[
                Event::TestsWritten,
                WRITTEN,
                Event::Ran(Run::TestFileBroken),
                Event::Done,
                Event::TestsWritten,
                Event::Ran(Run::Passed),
            ],
        );
        assert_eq!(
            actions[3..],
            [
                Step::Do(Action::DiscardTests),
                Step::Do(Action::AskTests),
                Step::Do(Action::RunTests),
                finish(Outcome::Passed)
            ]
        );
    }

    #[test]
    fn an_unusable_answer_is_asked_again_and_only_existing_code_gets_a_fix() {
        let limits = Limits {
            max_retries: 20,
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
                IMPL,
                IMPL,
                Step::Do(Action::RunTests),
                FIX
            ]
        );
    }

    #[test]
    fn provider_and_sandbox_failures_end_the_node() {
        let (actions, _) = drive(LIMITS, &[Event::ProviderFailed]);
        assert_eq!(actions[1], finish(Outcome::Failed(Failure::Provider)));
        let (actions, _) = drive(LIMITS, &[Event::TestsWritten, WRITTEN, Event::RunError]);
        assert_eq!(actions[3], finish(Outcome::Failed(Failure::CannotRun)));
    }

    #[test]
    fn cancelling_in_every_state_interrupts_the_node() {
        // A path into each state that waits on an action, then the cancellation.
        let paths: [&[Event]; 10] = [
            &[],
            &[Event::TestsWritten],
            &[Event::TestsWritten, WRITTEN],
            &[Event::TestsWritten, WRITTEN, WRONG],
            &[Event::TestsWritten, WRITTEN, WRONG, UNCHANGED, DISPUTED],
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
                Event::Ran(Run::TestFileBroken),
            ],
            &[Event::TestsWritten, WRITTEN, WRONG, WRITTEN, WRONG],
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
            assert_eq!(*last, finish(Outcome::Interrupted), "after {path:?}");
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
}
