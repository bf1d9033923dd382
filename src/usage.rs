//! What a run spends on the model: tokens per call role. A domain type of its own, below the
//! providers, because the checkpoint and the reports record it without needing a model.

use serde::{Deserialize, Serialize};

/// What a call is for.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Write the tests of a node.
    Test,
    /// Write the implementation of a node.
    Impl,
    /// Repair the implementation after failing tests.
    Fix,
    /// Vote on which side of a disputed test is wrong.
    Diagnose,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Test => "test",
            Role::Impl => "impl",
            Role::Fix => "fix",
            Role::Diagnose => "diagnose",
        }
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those the model already held in its cache from an earlier request
    /// and did not evaluate again (the embedded provider keeps shared prefixes; 0 where a
    /// provider does not say). What a prompt costs is `prompt_tokens - cached_tokens`.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
    }

    /// The prompt tokens the model evaluated: those it did not hold already.
    pub fn evaluated_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_tokens)
    }
}

/// Tokens spent per role (tests, impl, fix, ...), for checkpoints and reports.
pub type UsageByRole = std::collections::BTreeMap<Role, Usage>;

/// The sum over roles.
pub fn total(by_role: &UsageByRole) -> Usage {
    let mut sum = Usage::default();
    for usage in by_role.values() {
        sum.add(*usage);
    }
    sum
}
