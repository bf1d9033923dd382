//! The attempt budget of a debug loop (each fix of the node loop is one iteration): a fixed number of
//! localization queries per debug iteration, and the history of every query so the next iteration (or the next prompt) can
//! see what was already looked at. Pure.

use serde::Serialize;

use super::LocalizeError;

/// Queries allowed in one debug iteration.
pub(crate) const DEFAULT_LIMIT: u32 = 20;

/// What was asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Query {
    Search {
        text: String,
        k: usize,
        /// The subgraph searched; `None` is all of them.
        scope: Option<String>,
    },
    Deps {
        node: String,
        hops: usize,
    },
    /// The source of a node's or symbol's definition (through the code tools).
    Source {
        target: String,
    },
}

/// One query and what it found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryRecord {
    /// Debug iteration, from 1.
    pub iteration: u32,
    /// Attempt within the iteration, from 1.
    pub attempt: u32,
    #[serde(flatten)]
    pub query: Query,
    /// Node ids returned, best first (for `deps`: every node shown).
    pub found: Vec<String>,
    /// Why the query failed, if it did (a failed query still used an attempt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Budget {
    limit: u32,
    iteration: u32,
    used: u32,
    history: Vec<QueryRecord>,
}

impl Budget {
    pub fn new(limit: u32) -> Budget {
        Budget {
            limit,
            iteration: 1,
            used: 0,
            history: Vec::new(),
        }
    }

    pub fn iteration(&self) -> u32 {
        self.iteration
    }

    /// Attempts left in this iteration.
    pub fn remaining(&self) -> u32 {
        self.limit.saturating_sub(self.used)
    }

    /// Takes one attempt and returns its number, or `LocalizationExhausted` when the
    /// iteration's attempts are spent (nothing is recorded then).
    pub(crate) fn charge(&mut self) -> Result<u32, LocalizeError> {
        if self.used >= self.limit {
            return Err(LocalizeError::LocalizationExhausted {
                limit: self.limit,
                iteration: self.iteration,
            });
        }
        self.used += 1;
        Ok(self.used)
    }

    pub fn record(
        &mut self,
        attempt: u32,
        query: Query,
        found: Vec<String>,
        error: Option<String>,
    ) {
        self.history.push(QueryRecord {
            iteration: self.iteration,
            attempt,
            query,
            found,
            error,
        });
    }

    /// Starts the next debug iteration with a full budget; the history is kept.
    pub fn next_iteration(&mut self) -> u32 {
        self.iteration += 1;
        self.used = 0;
        self.iteration
    }

    /// Every query of every iteration, oldest first.
    pub fn history(&self) -> &[QueryRecord] {
        &self.history
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(text: &str) -> Query {
        Query::Search {
            text: text.into(),
            k: 5,
            scope: None,
        }
    }

    #[test]
    fn the_attempt_after_the_limit_is_refused_and_a_new_iteration_refills() {
        let mut budget = Budget::new(3);
        for expected in 1..=3 {
            assert_eq!(budget.charge().unwrap(), expected);
            budget.record(expected, search("q"), vec![], None);
        }
        assert_eq!(budget.remaining(), 0);
        let err = budget.charge().unwrap_err();
        assert!(
            matches!(
                err,
                LocalizeError::LocalizationExhausted {
                    limit: 3,
                    iteration: 1
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            budget.history().len(),
            3,
            "a refused attempt is not recorded"
        );
        assert_eq!(budget.next_iteration(), 2);
        assert_eq!(budget.charge().unwrap(), 1);
        budget.record(1, search("again"), vec!["n1".into()], None);
        let last = budget.history().last().unwrap();
        assert_eq!((last.iteration, last.attempt), (2, 1));
        assert_eq!(budget.history().len(), 4, "history survives the iteration");
    }

    #[test]
    fn records_serialise_flat_with_their_kind() {
        let mut budget = Budget::new(DEFAULT_LIMIT);
        let attempt = budget.charge().unwrap();
        budget.record(
            attempt,
            Query::Deps {
                node: "n1".into(),
                hops: 2,
            },
            vec!["n1".into(), "n2".into()],
            None,
        );
        assert_eq!(
            serde_json::to_value(budget.history()).unwrap(),
            serde_json::json!([{
                "iteration": 1, "attempt": 1, "kind": "deps", "node": "n1", "hops": 2,
                "found": ["n1", "n2"]
            }])
        );
    }
}
