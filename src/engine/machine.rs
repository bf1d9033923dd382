//! The node loop's decisions as a pure state machine: [`Machine::step`] takes what just
//! happened ([`Event`]) and says what to do next ([`Step`]: an [`Action`], or the node's
//! [`LoopEnd`]). It does no I/O, so every path of the loop is a table of events and steps,
//! tested without a model, a sandbox or a disk; the driver in [`super::node`] only carries
//! out actions and reports their results as events. An outcome is not an action, so the
//! driver has nothing to carry out once the node is over.
//!
//! One attempt: maybe start over → write tests (when there are none: the model's, or, for a
//! node with examples and no votes to hold, the examples test alone) → ask implementation
//! candidates (the greedy answer alone in the first round; unless only the tests were
//! rewritten) → run the tests. A failed run of code that passes the gates (the
//! specification's examples, the module's earlier tests) goes to the vote once: B has the
//! disputed tests written once more and drops what still fails, A asks one fix of the kept
//! code, C skips the node, no majority ends it `needs_review`. Other failing code is started
//! over with fresh candidates at its first retry when the plan gives examples, then fixed;
//! without examples it is fixed, and started over halfway through the budget. A fix that
//! changed nothing starts the loop over too. The budget counts implementations
//! asked after the first round (a round of k candidates spends k); once it is spent a gated
//! candidate is kept for review and anything else has failed. When the model gives no usable
//! tests [`TEST_ANSWERS`] times, the loop goes on with the tests the engine writes from the
//! plan, and code that passes them ends `needs_review` ([`LoopEnd::Untested`]), not passed.
//! A cancellation ends every state as [`LoopEnd::Interrupted`], which the run records as
//! resumable.
//!
//! What the run has seen votes, fix rounds and fresh starts buy ([`crate::returns`]) decides
//! which of them the node may ask for ([`Spend`]): without votes a disputed node ends
//! `needs_review`; without fixes failing code is started over (or kept for review when it
//! passes the gates); without fresh starts the loop goes on fixing, and ends where a fix
//! changed nothing. The machine counts its own tries and what they bought ([`Machine::returns`]).

use crate::llm::Role;
use crate::records::Verdict;
use crate::returns::{Payoff, Returns, Spend};

/// The default budget (`--max-retries`): with 2 candidates a round, a fix round and a fresh
/// start after the first round. Measured on ml_lib, a fourth round (a fix of the fresh
/// start) passed no node that the third had not, and cost about a tenth of the run.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 3;

/// Unusable tests answers before the node goes on without model-written tests. They are
/// evidence, not truth: on ml_lib the embedded model answered `count_batches`'s test prompt
/// six times with no usable test, the node failed without one implementation asked, and its
/// two dependents were skipped, while a one-shot answer passed all of their reference tests.
pub(crate) const TEST_ANSWERS: u32 = 3;

/// What the machine is told about the node before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// What the node may spend, the budget of implementations asked after the first round
    /// among it.
    pub spend: Spend,
    /// Candidates per implementation round (at least one is asked).
    pub candidates: u32,
    /// The plan gives examples, so the examples test is a gate: starting over keeps the tests.
    pub has_examples: bool,
}

impl Limits {
    /// Whether the model is asked for tests. A node whose specification gives examples is
    /// judged by them and by the module's earlier tests; the model's tests could only start
    /// a vote there (code that fails them but passes the gates ends `needs_review` without
    /// one), so they are asked only when votes may be held. Without examples they are the
    /// only evidence of a crash and are always asked (as probes).
    fn asks_tests(&self) -> bool {
        !self.has_examples || self.spend.votes
    }
}

/// Candidates of the first implementation round: the greedy answer alone, the one
/// `--one-shot` keeps. It is the prior that only evidence moves the node off, and every case
/// with evidence against it (a gate it fails, a crash) is answered by a round of fixes with
/// all the candidates. The other candidates of a first round could only win by agreement
/// against code that passes its gates, which on the dev half of the corpus changed no
/// reference test without examples (issue 39), while each cost nearly the greedy answer's
/// decoding time (a step of several sequences costs about as much as the steps it replaces
/// on two cores, `reports/batching.md`).
pub(crate) const FIRST_ROUND: u32 = 1;

/// What happened: the result of the last [`Action`], or the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
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
    Ran(TestsRan),
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
pub(crate) enum TestsRan {
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
pub(crate) enum Standing {
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
pub(crate) enum Step {
    /// Carry this out and report what came of it.
    Do(Action),
    /// The node is over; nothing more is asked of the driver.
    Finish(LoopEnd),
}

/// What to do next. Every action ends in exactly one [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
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
pub(crate) enum LoopEnd {
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
pub(crate) enum Failure {
    Provider,
    CannotRun,
    /// The budget is spent and no candidate passes the gates.
    Exhausted,
}

/// The loop's control state; the driver keeps the data (code, tests, failures). What the
/// node's tests, code, rounds and vote are is one enum each ([`Tests`], [`Code`],
/// [`RoundsAsked`], [`Vote`]), so a combination that means nothing cannot be written.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    limits: Limits,
    /// The attempt under way (0 is the first round).
    attempt: u32,
    /// Implementations asked after the first round.
    spent: u32,
    tests: Tests,
    code: Code,
    vote: Vote,
    /// How far the node's implementation rounds have come.
    rounds_asked: RoundsAsked,
    /// The best candidate so far passes the gates.
    best_gated: bool,
    /// Tests answers that were unusable.
    unusable_tests: u32,
    /// The role of the last implementation asked.
    role: Role,
    /// The last action, which a `Done` completes (`None` before the first).
    last: Option<Action>,
    /// Attempts that ran before the outcome (set when the machine finishes).
    retries: u32,
    /// The node's votes, fix rounds and fresh starts, and what they bought.
    returns: Returns,
    /// The kind of round under way, credited when its run improves the node's standing.
    round: Option<Round>,
    /// How far the node has come: the best run so far.
    standing: Option<Reached>,
}

/// The node's tests in this attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tests {
    /// None in place: ask for them. `then_run`: the file was broken and discarded, so once
    /// tests are in place they run against the code in place, without a new implementation.
    Missing { then_run: bool },
    /// The model's tests are in place.
    Model,
    /// The model gave none that could be used: the plan's tests alone judge the code.
    PlanOnly,
    /// The model is not asked ([`Limits::asks_tests`]): the specification's examples judge
    /// the code, and code that passes them has passed.
    Examples,
}

/// The node's code in this attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    /// None in place: before the first round, or after a fresh start.
    Absent,
    /// An implementation is in place. `failing`: a failure of it is known, so the next
    /// implementation is a fix of it. `fix_changed_nothing`: the last fix gave it back as it
    /// was, so the model holds the code right.
    InPlace {
        failing: bool,
        fix_changed_nothing: bool,
    },
}

/// How far the node's implementation rounds have come. The budget counts every round after
/// the first, and the node starts over with fresh candidates once at most (later start-overs
/// come only from a fix that changed nothing), so a start-over before any round cannot be
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoundsAsked {
    /// No implementation asked yet: the next round is the first, the free one.
    NoneAsked,
    /// The first round was asked.
    Asked,
    /// The node started over with fresh candidates (the once it may).
    StartedOver,
}

/// Where the node's one vote stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vote {
    NotHeld,
    Held,
    /// The vote blamed the tests, and they are being written again (once): whatever comes
    /// of that ends the node.
    TestsRewritten,
}

impl Code {
    /// A failure of the code in place is known: the next implementation is a fix.
    fn fix_next(self) -> bool {
        matches!(self, Code::InPlace { failing: true, .. })
    }

    fn fix_changed_nothing(self) -> bool {
        matches!(
            self,
            Code::InPlace {
                fix_changed_nothing: true,
                ..
            }
        )
    }

    /// The same code, with a failure known (`failing`) or not.
    fn failing(self, failing: bool) -> Code {
        match self {
            Code::Absent => Code::Absent,
            Code::InPlace {
                fix_changed_nothing,
                ..
            } => Code::InPlace {
                failing,
                fix_changed_nothing,
            },
        }
    }
}

/// A round the node spends on beyond its first: a fix, or a fresh start's candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Fix,
    FreshStart,
}

/// How far a node's best candidate has come, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reached {
    Ungated,
    Crashes,
    Disputed,
    Passed,
}

impl Reached {
    fn of(run: TestsRan) -> Option<Reached> {
        match run {
            TestsRan::Passed => Some(Reached::Passed),
            TestsRan::TestFileBroken => None,
            TestsRan::Failed { best, .. } => Some(match best {
                Standing::Ungated => Reached::Ungated,
                Standing::Crashes => Reached::Crashes,
                Standing::Disputed => Reached::Disputed,
            }),
        }
    }
}

impl Machine {
    pub fn new(limits: Limits) -> Machine {
        Machine {
            limits,
            attempt: 0,
            spent: 0,
            tests: Tests::Missing { then_run: false },
            code: Code::Absent,
            vote: Vote::NotHeld,
            rounds_asked: RoundsAsked::NoneAsked,
            best_gated: false,
            unusable_tests: 0,
            role: Role::Impl,
            last: None,
            retries: 0,
            returns: Returns::default(),
            round: None,
            standing: None,
        }
    }

    /// The node's votes, fix rounds and fresh starts so far, and what they bought.
    pub fn returns(&self) -> Returns {
        self.returns
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
        if let Event::Ran(run) = event {
            self.credit(run);
        }
        let step = self.decide(event);
        match step {
            Step::Do(action) => {
                self.count(action);
                self.last = Some(action);
            }
            Step::Finish(LoopEnd::Passed) if self.vote != Vote::NotHeld => {
                self.returns.votes.paid += 1
            }
            Step::Finish(_) => {}
        }
        step
    }

    /// Counts a try of the kind `action` spends on.
    fn count(&mut self, action: Action) {
        let tally: &mut Payoff = match action {
            Action::Diagnose => &mut self.returns.votes,
            Action::AskImplementation {
                role: Role::Fix, ..
            } => {
                self.round = Some(Round::Fix);
                &mut self.returns.fixes
            }
            Action::StartOver { .. } => {
                self.round = Some(Round::FreshStart);
                &mut self.returns.fresh_starts
            }
            _ => return,
        };
        tally.tries += 1;
    }

    /// Credits the round under way when its run took the node further than it had come.
    fn credit(&mut self, run: TestsRan) {
        let Some(reached) = Reached::of(run) else {
            return;
        };
        let further = self.standing.is_none_or(|before| reached > before);
        match self.round.take() {
            Some(Round::Fix) if further => self.returns.fixes.paid += 1,
            Some(Round::FreshStart) if further => self.returns.fresh_starts.paid += 1,
            _ => {}
        }
        self.standing = Some(self.standing.map_or(reached, |before| before.max(reached)));
    }

    fn decide(&mut self, event: Event) -> Step {
        match event {
            Event::Cancelled => self.finish(LoopEnd::Interrupted),
            Event::ProviderFailed => self.finish(LoopEnd::Failed(Failure::Provider)),
            Event::RunError => self.finish(LoopEnd::Failed(Failure::CannotRun)),
            Event::Start => self.begin(),
            // The vote stands: what could not be written again is dropped.
            Event::Unusable if self.vote == Vote::TestsRewritten => {
                self.finish(LoopEnd::PassedWithoutDisputed)
            }
            Event::Ran(TestsRan::Passed) if self.vote == Vote::TestsRewritten => {
                self.finish(LoopEnd::Passed)
            }
            Event::Ran(_) if self.vote == Vote::TestsRewritten => {
                self.finish(LoopEnd::PassedWithoutDisputed)
            }
            Event::Unusable if self.last == Some(Action::AskTests) => self.tests_unusable(),
            Event::Unusable => {
                self.code = self.code.failing(true);
                self.retry()
            }
            Event::TestsWritten => self.tests_in_place(Tests::Model),
            Event::ImplementationWritten { unchanged } => {
                self.code = Code::InPlace {
                    failing: self.code.fix_next(),
                    fix_changed_nothing: self.role == Role::Fix && unchanged,
                };
                Step::Do(Action::RunTests)
            }
            Event::Ran(run) => self.ran(run),
            Event::Dropped { passed: true } => self.finish(LoopEnd::Passed),
            Event::Dropped { passed: false } => self.dispute(),
            Event::Voted(verdict) => self.voted(verdict),
            Event::Done => match self.last {
                Some(Action::StartOver { .. }) => self.proceed(),
                Some(Action::PlanTestsOnly) => match self.limits.asks_tests() {
                    true => self.tests_in_place(Tests::PlanOnly),
                    false => self.tests_in_place(Tests::Examples),
                },
                _ => self.retry(),
            },
        }
    }

    /// The start of an attempt: the budget, then maybe a fresh start.
    fn begin(&mut self) -> Step {
        let limits = self.limits;
        let spend = limits.spend;
        if self.spent > spend.max_retries {
            // The attempt that would start does not run.
            self.retries = self.attempt.saturating_sub(1);
            return Step::Finish(self.best_so_far());
        }
        // Fixes have stopped helping: fresh candidates rather than code bent to fit. Without
        // examples the generated tests may be what is wrong, so they are written anew too.
        // With examples the tests are the plan's, and the first retry of failing code is a
        // fresh round, a fix of the best candidate of both rounds after it: the fresh round
        // asks the first round's prompt again, still in the model's cache, where a fix's
        // prompt (the code and its failure) is evaluated anew and its answers are longer;
        // and it was the better buy. On ml_lib (2026-12-01, fixes first) fresh rounds passed
        // 6 of the 16 nodes they were asked for, at 41 s of model time each, fixes 3 of 19
        // at 57 s; on the corpus's dev half fresh candidates for crashing code moved more
        // nodes to better code than fixes did ([`Machine::fresh_candidates`]).
        // A fix the vote asked for ([`Action::FixBest`]) is asked, not replaced.
        let fresh_first =
            limits.has_examples && self.code.fix_next() && self.last != Some(Action::FixBest);
        // The node's one planned start-over: first with examples, else halfway through the
        // budget.
        let start_over_due = self.rounds_asked != RoundsAsked::StartedOver
            && (fresh_first || self.spent >= spend.max_retries.div_ceil(2));
        let unchanged = self.code.fix_changed_nothing();
        let fix_or_start_over =
            start_over_due || unchanged || (self.code.fix_next() && !spend.fixes);
        let tests_in_place = !matches!(self.tests, Tests::Missing { .. });
        if tests_in_place && self.attempt > 0 && fix_or_start_over {
            let fixing_pays = spend.fixes && !unchanged;
            match (spend.fresh_starts, fixing_pays) {
                (true, _) => {}
                // This run's fresh starts bought nothing: go on fixing.
                (false, true) => return self.proceed(),
                (false, false) => return self.finish_best(),
            }
            if start_over_due {
                self.rounds_asked = RoundsAsked::StartedOver;
            }
            return self.start_over(limits.has_examples);
        }
        self.proceed()
    }

    /// The best candidate's outcome when the node stops short of passing: kept for review
    /// when it passes the gates, failed otherwise.
    fn best_so_far(&self) -> LoopEnd {
        match self.best_gated {
            true => LoopEnd::NeedsReview,
            false => LoopEnd::Failed(Failure::Exhausted),
        }
    }

    fn finish_best(&mut self) -> Step {
        let outcome = self.best_so_far();
        self.finish(outcome)
    }

    fn proceed(&mut self) -> Step {
        match self.tests {
            Tests::Missing { .. } if self.limits.asks_tests() => Step::Do(Action::AskTests),
            Tests::Missing { .. } => Step::Do(Action::PlanTestsOnly),
            Tests::Model | Tests::PlanOnly | Tests::Examples => self.implement(),
        }
    }

    /// Tests are in place (`tests`, unless the vote's rewrite keeps what it had): run them
    /// on the code in place when only they were asked, else ask for code.
    fn tests_in_place(&mut self, tests: Tests) -> Step {
        let then_run = matches!(self.tests, Tests::Missing { then_run: true });
        self.tests = tests;
        match then_run || self.vote == Vote::TestsRewritten {
            true => Step::Do(Action::RunTests),
            false => self.implement(),
        }
    }

    /// Ask for implementations: a fix of the code in place when its failure is known.
    fn implement(&mut self) -> Step {
        self.role = match self.code.fix_next() {
            true => Role::Fix,
            false => Role::Impl,
        };
        // The first implementation round is free even when broken test files were written
        // again before it: the budget is for answers after it.
        let first = self.rounds_asked == RoundsAsked::NoneAsked;
        let candidates = match first {
            true => FIRST_ROUND,
            false => self.limits.candidates.max(1),
        };
        match first {
            true => self.rounds_asked = RoundsAsked::Asked,
            false => self.spent += candidates,
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
            self.code = self.code.failing(true);
            return self.retry();
        }
        Step::Do(Action::PlanTestsOnly)
    }

    fn ran(&mut self, run: TestsRan) -> Step {
        match run {
            TestsRan::Passed if self.tests == Tests::PlanOnly => self.finish(LoopEnd::Untested),
            TestsRan::Passed => self.finish(LoopEnd::Passed),
            TestsRan::TestFileBroken => {
                self.tests = Tests::Missing { then_run: true };
                self.code = self.code.failing(false);
                Step::Do(Action::DiscardTests)
            }
            TestsRan::Failed {
                breaks_earlier,
                best,
            } => {
                self.best_gated = best != Standing::Ungated;
                self.code = self.code.failing(true);
                if !self.limits.has_examples {
                    return self.against_the_prior(best);
                }
                match self.code.fix_changed_nothing() && !breaks_earlier {
                    true => Step::Do(Action::DropDisputed),
                    false => self.dispute(),
                }
            }
        }
    }

    /// Without examples the model's tests are the only evidence and the greedy answer is the
    /// prior: code that passes the gates is kept for review when the tests dispute only its
    /// values (no vote, no fix: measured, neither bought anything there), and code that fails
    /// a gate is fixed as always. Code that crashes gets one round of fresh candidates run
    /// against the same tests ([`Machine::fresh_candidates`]); only when this run's fresh
    /// starts have stopped paying is it fixed instead (until a fix changes nothing).
    fn against_the_prior(&mut self, best: Standing) -> Step {
        let spend = self.limits.spend;
        match best {
            Standing::Ungated => self.retry(),
            Standing::Disputed => self.finish(LoopEnd::NeedsReview),
            Standing::Crashes if spend.fresh_starts => match self.rounds_asked {
                RoundsAsked::Asked if self.spent < spend.max_retries => self.fresh_candidates(),
                _ => self.finish(LoopEnd::NeedsReview),
            },
            Standing::Crashes if self.code.fix_changed_nothing() || !spend.fixes => {
                self.finish(LoopEnd::NeedsReview)
            }
            Standing::Crashes => Step::Do(Action::FixBest),
        }
    }

    /// A crash without examples: new candidates, judged by the tests that showed it, so that
    /// they and the kept code are weighed on the same evidence (the kept code stays unless
    /// one crashes in fewer of them). On the dev half of the corpus, fresh starts moved nodes
    /// to better code (2 better, none worse) where fixes of crashing code mostly changed
    /// nothing the reference saw (1 better, 6 the same) at the price of a round each; and
    /// asking the tests again cost as much as the round itself.
    fn fresh_candidates(&mut self) -> Step {
        self.next_attempt();
        self.rounds_asked = RoundsAsked::StartedOver;
        self.start_over(true)
    }

    /// Fresh candidates: the code goes, and the tests too unless `keep_tests`.
    fn start_over(&mut self, keep_tests: bool) -> Step {
        if !keep_tests {
            self.tests = Tests::Missing { then_run: false };
        }
        self.code = Code::Absent;
        Step::Do(Action::StartOver { keep_tests })
    }

    /// A new attempt; the budget counts at least one answer an attempt.
    fn next_attempt(&mut self) {
        self.attempt += 1;
        self.spent = self.spent.max(self.attempt);
    }

    /// Generated tests fail: against gated code the vote decides, once; otherwise fix.
    fn dispute(&mut self) -> Step {
        let held = self.vote != Vote::NotHeld;
        match (self.best_gated, held || !self.limits.spend.votes) {
            (false, _) => self.retry(),
            (true, true) => self.finish(LoopEnd::NeedsReview),
            (true, false) => Step::Do(Action::Diagnose),
        }
    }

    fn voted(&mut self, verdict: Option<Verdict>) -> Step {
        self.vote = Vote::Held;
        match verdict {
            Some(Verdict::Test) => {
                // A new attempt, so that its answer is asked (and recorded) apart.
                self.vote = Vote::TestsRewritten;
                self.next_attempt();
                Step::Do(Action::RewriteTests)
            }
            Some(Verdict::Environment) => self.finish(LoopEnd::SkippedEnvironment),
            Some(Verdict::Implementation) if self.limits.spend.fixes => {
                self.code = self.code.failing(true);
                Step::Do(Action::FixBest)
            }
            Some(Verdict::Implementation) => self.finish(LoopEnd::NeedsReview),
            None => self.finish(LoopEnd::NeedsReview),
        }
    }

    fn retry(&mut self) -> Step {
        self.next_attempt();
        self.begin()
    }

    fn finish(&mut self, outcome: LoopEnd) -> Step {
        self.retries = self.attempt;
        Step::Finish(outcome)
    }
}

#[cfg(test)]
mod tests;
