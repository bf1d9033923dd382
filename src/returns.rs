//! What each kind of spending has bought in this run, and whether to keep paying for it.
//!
//! Votes, fix rounds and fresh starts cost model time; on ml_lib the 1.5B model's votes
//! decided no better than chance and no fix round turned a node that needed one into a
//! passed node (issue 41), while on another plan fixes of crashing code gained reference
//! tests. Which kind pays depends on the plan and the model, so the run measures it: every
//! node's machine counts its [`Payoff`] of each kind (tried, and paid: the node passed
//! after it), the run adds them up in [`Returns`] (rebuilt from the checkpoint on a resume),
//! and each node starts with the [`Spend`] policy those figures give:
//!
//! - a kind tried [`FAIR_TRIES`] times in this run without paying once is not asked again;
//! - while fixes pay at least one try in [`PAYING_SHARE`], the budget of implementation
//!   answers after the first round grows to [`PAYING_BUDGET`]: one more fix round;
//! - once they have paid less than that over [`FAIR_TRIES`] or more, it shrinks to
//!   [`POOR_BUDGET`]: the round after the first is the last (with examples, the fresh start).
//!
//! Pure: no I/O, tested with integers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Tries of a kind, with nothing bought, before the run stops asking for it. Six is about
/// the number of fix rounds or votes the first five failing nodes of a plan ask for: enough
/// that one paying try shows, few enough that most of the run is spared.
pub const FAIR_TRIES: u32 = 6;

/// The budget (`--max-retries`) while fixes pay: with 2 candidates a round, two fix rounds
/// and a fresh start after the first round (the default allows one fix round). The seed's
/// 8 debug iterations count rounds of one answer; a round here asks two.
pub(crate) const PAYING_BUDGET: u32 = 5;

/// Fixes "pay" while at least one try in this many passed a node.
pub(crate) const PAYING_SHARE: u32 = 3;

/// The budget once fixes have paid less than one try in [`PAYING_SHARE`] over a fair number
/// of tries: one round after the first. A round of fresh candidates costs about what a fix
/// round costs, and on ml_lib (2026-12-01) fixes passed 3 of 19 nodes against fresh starts'
/// 6 of 16, so the round kept is the one that paid better there: with examples the first
/// retry is the fresh start (`engine::machine`).
pub(crate) const POOR_BUDGET: u32 = 1;

/// One kind of spending in one node or one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Payoff {
    /// Times it was asked for: votes (a diagnosis of five), fix rounds, fresh starts.
    pub tries: u32,
    /// Of those, the ones after which the node passed.
    pub paid: u32,
}

impl Payoff {
    fn add(&mut self, other: Payoff) {
        self.tries += other.tries;
        self.paid += other.paid;
    }

    /// Still worth asking for: it has paid, or has not had a fair number of tries yet.
    fn worth_asking(self) -> bool {
        self.paid > 0 || self.tries < FAIR_TRIES
    }

    /// Tried, and never paid.
    pub(crate) fn bought_nothing(self) -> bool {
        self.tries > 0 && self.paid == 0
    }

    fn pays(self) -> bool {
        self.paid > 0 && self.paid * PAYING_SHARE >= self.tries
    }

    /// A fair number of tries, and less than one in [`PAYING_SHARE`] paid.
    fn pays_poorly(self) -> bool {
        self.tries >= FAIR_TRIES && self.paid * PAYING_SHARE < self.tries
    }

    pub fn is_empty(&self) -> bool {
        self.tries == 0
    }
}

/// Votes, fix rounds and fresh starts: a node's, or the run's so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Returns {
    #[serde(default, skip_serializing_if = "Payoff::is_empty")]
    pub votes: Payoff,
    #[serde(default, skip_serializing_if = "Payoff::is_empty")]
    pub fixes: Payoff,
    #[serde(default, skip_serializing_if = "Payoff::is_empty")]
    pub fresh_starts: Payoff,
}

impl Returns {
    pub fn add(&mut self, other: &Returns) {
        self.votes.add(other.votes);
        self.fixes.add(other.fixes);
        self.fresh_starts.add(other.fresh_starts);
    }

    pub fn is_empty(&self) -> bool {
        self.votes.is_empty() && self.fixes.is_empty() && self.fresh_starts.is_empty()
    }

    /// What a node may spend, given the run's returns so far and the budget asked for.
    pub fn policy(&self, max_retries: u32) -> Spend {
        Spend {
            votes: self.votes.worth_asking(),
            fixes: self.fixes.worth_asking(),
            fresh_starts: self.fresh_starts.worth_asking(),
            max_retries: match (self.fixes.pays(), self.fixes.pays_poorly()) {
                (true, _) => max_retries.max(PAYING_BUDGET),
                (false, true) => max_retries.min(POOR_BUDGET),
                (false, false) => max_retries,
            },
        }
    }

    /// How the fixes' returns moved the budget, for the report (`None`: they did not).
    pub fn budget_moved(&self) -> Option<String> {
        match (self.fixes.pays(), self.fixes.pays_poorly()) {
            (true, _) => Some(format!(
                "fixes paid at least one try in {PAYING_SHARE}, so the budget was at least {PAYING_BUDGET}"
            )),
            (false, true) => Some(format!(
                "fixes paid less than one try in {PAYING_SHARE}, so later nodes had two rounds at most (budget {POOR_BUDGET})"
            )),
            (false, false) => None,
        }
    }

    /// The kinds this run stopped asking for, by name (for the report).
    pub fn stopped(&self) -> Vec<&'static str> {
        [
            ("votes", self.votes),
            ("fix rounds", self.fixes),
            ("fresh starts", self.fresh_starts),
        ]
        .into_iter()
        .filter(|(_, tally)| !tally.worth_asking())
        .map(|(name, _)| name)
        .collect()
    }
}

/// What a node may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spend {
    pub votes: bool,
    pub fixes: bool,
    pub fresh_starts: bool,
    /// Implementation answers after the first round.
    pub max_retries: u32,
}

impl Spend {
    /// Everything, within `max_retries`: the policy of a run with no returns yet.
    pub const fn all(max_retries: u32) -> Spend {
        Spend {
            votes: true,
            fixes: true,
            fresh_starts: true,
            max_retries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(tries: u32, paid: u32) -> Payoff {
        Payoff { tries, paid }
    }

    #[test]
    fn a_kind_is_asked_until_a_fair_number_of_tries_bought_nothing() {
        let run = Returns {
            votes: tally(FAIR_TRIES - 1, 0),
            fixes: tally(FAIR_TRIES, 0),
            fresh_starts: tally(FAIR_TRIES + 4, 1),
        };
        let spend = run.policy(5);
        assert!(spend.votes);
        assert!(!spend.fixes);
        assert!(spend.fresh_starts, "one paying try keeps it");
        // Fixes that bought nothing leave one round after the first.
        assert_eq!(spend.max_retries, POOR_BUDGET);
        assert_eq!(run.stopped(), ["fix rounds"]);
    }

    #[test]
    fn the_budget_grows_while_fixes_pay() {
        let paying = Returns {
            fixes: tally(6, 2),
            ..Returns::default()
        };
        assert_eq!(paying.policy(3).max_retries, PAYING_BUDGET);
        // A larger budget asked for is never cut.
        assert_eq!(paying.policy(12).max_retries, 12);
        // Too few tries to judge: the budget asked for.
        let early = Returns {
            fixes: tally(FAIR_TRIES - 1, 1),
            ..Returns::default()
        };
        assert_eq!(early.policy(5).max_retries, 5);
        assert_eq!(Returns::default().policy(5), Spend::all(5));
    }

    #[test]
    fn the_budget_shrinks_to_one_round_while_fixes_pay_poorly() {
        let rarely = Returns {
            fixes: tally(7, 2),
            ..Returns::default()
        };
        assert_eq!(rarely.policy(5).max_retries, POOR_BUDGET);
        // Never below one round after the first, and never above what was asked.
        assert_eq!(rarely.policy(0).max_retries, 0);
        let spend = rarely.policy(5);
        assert!(spend.fixes && spend.fresh_starts, "poor is not nothing");
        // Paying again (one in three) lifts it.
        let again = Returns {
            fixes: tally(9, 3),
            ..Returns::default()
        };
        assert_eq!(again.policy(3).max_retries, PAYING_BUDGET);
    }

    #[test]
    fn the_report_says_how_the_budget_moved() {
        let moved = |tries, paid| {
            Returns {
                fixes: tally(tries, paid),
                ..Returns::default()
            }
            .budget_moved()
        };
        assert!(moved(6, 2).unwrap().contains("at least 5"));
        assert!(moved(6, 1).unwrap().contains("two rounds at most"));
        assert_eq!(moved(5, 1), None);
        assert_eq!(moved(0, 0), None);
    }

    #[test]
    fn a_runs_returns_are_the_sum_of_its_nodes() {
        let mut run = Returns::default();
        let node = Returns {
            votes: tally(1, 0),
            fixes: tally(2, 1),
            fresh_starts: tally(1, 1),
        };
        run.add(&node);
        run.add(&node);
        assert_eq!(run.fixes, tally(4, 2));
        assert_eq!(run.votes, tally(2, 0));
        assert!(!run.is_empty());
        assert!(Returns::default().is_empty());
    }
}
