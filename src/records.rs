//! What the loop records of a node: its status, its tests' counts, what the loop did
//! (`NodeWork`), the vote on its disputed tests, where its fixes looked, how the code it
//! keeps departs from the greedy answer, and the integration tests' records. Pure data: the
//! checkpoint journals it, the engine and the reports read it, and `eval` scores it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::returns::Returns;
use crate::rpg::NodeId;
use crate::usage::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    Pending,
    InProgress,
    Passed,
    /// Its code passes the specification's examples and every earlier test of its module, but
    /// some model-written tests still fail and the evidence could not tell which side is
    /// wrong: the code is kept, dependents run, and a person should look.
    NeedsReview,
    Failed,
    Skipped,
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Pending => "pending",
            NodeStatus::InProgress => "in_progress",
            NodeStatus::Passed => "passed",
            NodeStatus::NeedsReview => "needs_review",
            NodeStatus::Failed => "failed",
            NodeStatus::Skipped => "skipped",
        }
    }

    /// Whether the node's code is kept and its dependents may build on it.
    pub(crate) fn is_usable(self) -> bool {
        matches!(self, NodeStatus::Passed | NodeStatus::NeedsReview)
    }

    /// Whether the node is finished: it will not run again in this run.
    pub(crate) fn is_finished(self) -> bool {
        !matches!(self, NodeStatus::Pending | NodeStatus::InProgress)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestCounts {
    pub passed: u32,
    pub failed: u32,
}

/// Every node's record by id: what the compact checkpoint file holds, and what assembly,
/// status, eval and the nightly read.
pub type NodeRecords = BTreeMap<NodeId, NodeRecord>;

/// The state of one node, as in the seed's checkpoint schema (plus `duration_ms`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeRecord {
    pub status: NodeStatus,
    /// RFC 3339, UTC, milliseconds (seconds in checkpoints of earlier versions).
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_results: Option<TestCounts>,
    /// Fix attempts used after the first implementation.
    #[serde(default)]
    pub retry_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Wall time spent on the node in this attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Model tokens spent on the node, per role (test, impl, fix).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tokens: crate::usage::UsageByRole,
    /// What the node's loop did and where its time went (function nodes of this version on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<NodeWork>,
    /// The vote on model-written tests that failed against code passing the gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Diagnosis>,
    /// Where each fix looked before it was asked (issue 14's localization), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub localizations: Vec<LocalizedFix>,
    /// Tests that failed, then passed when the same code ran again (flaky: nothing fixed them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
    /// The loop kept other code than the greedy answer (what asking once gives): why, and the
    /// greedy answer's code, so `zerorepo eval` can score the decision against the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departure: Option<Departure>,
}

/// A node whose kept code is not the greedy answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Departure {
    pub kind: DepartureKind,
    /// The greedy answer's top-level units (functions, imports) that the kept module lacks:
    /// merged into the module, they put the greedy answer back.
    pub prior: String,
}

/// What moved a node off the greedy answer.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DepartureKind {
    /// The first round chose another candidate.
    Candidate,
    /// A fix round's answer replaced it.
    Fix,
    /// A fresh start's candidate replaced it.
    FreshStart,
    /// The node failed and keeps a stub that says why.
    Stub,
}

impl DepartureKind {
    /// The name the checkpoint, `--json` and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            DepartureKind::Candidate => "candidate",
            DepartureKind::Fix => "fix",
            DepartureKind::FreshStart => "fresh_start",
            DepartureKind::Stub => "stub",
        }
    }
}

/// Why a symbol was suspected, strongest signal first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Suspicion {
    /// A frame of the failure's traceback lies in it.
    Traceback,
    /// It is the function being fixed.
    Own,
    /// A dependency (two hops at most) that the failure names.
    Dependency,
    /// The plan search over node descriptions matched the failure's error lines.
    Search,
}

/// One suspect of a localization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SuspectRecord {
    pub symbol: String,
    pub file: String,
    /// The plan node that defines it, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    pub reason: Suspicion,
}

/// What one fix's localization asked and found, and what the fix then edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LocalizedFix {
    /// The loop's attempt that asked the fix.
    pub attempt: u32,
    /// Localization queries charged (20 at most per debug iteration).
    pub queries: u32,
    /// Best first.
    pub suspects: Vec<SuspectRecord>,
    /// The symbol the fix replaced.
    pub edited: String,
    /// Tokens of the fix's prompt (one prompt, whatever the number of candidates).
    #[serde(default)]
    pub prompt_tokens: u64,
}

impl Suspicion {
    /// The name the checkpoint and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Suspicion::Traceback => "traceback",
            Suspicion::Own => "own",
            Suspicion::Dependency => "dependency",
            Suspicion::Search => "search",
        }
    }
}

impl LocalizedFix {
    /// The first suspect was the symbol the fix edited.
    pub(crate) fn first_suspect_hit(&self) -> bool {
        self.suspects
            .first()
            .is_some_and(|s| s.symbol == self.edited)
    }
}

/// Which side of a disputed test is wrong (the seed's diagnosis A, B, C).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A: the implementation does not do what the specification says.
    Implementation,
    /// B: the test expects what the specification does not say.
    Test,
    /// C: the environment (a missing package, a timeout).
    Environment,
}

impl Verdict {
    /// The name the checkpoint and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Implementation => "implementation",
            Verdict::Test => "test",
            Verdict::Environment => "environment",
        }
    }

    pub fn letter(self) -> char {
        match self {
            Verdict::Implementation => 'A',
            Verdict::Test => 'B',
            Verdict::Environment => 'C',
        }
    }
}

/// The majority vote on a node whose kept code passes the gates (the specification's
/// examples, the module's earlier tests) while some model-written tests fail.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    /// The model's votes; an answer that names no side casts none.
    pub votes: Vec<Verdict>,
    /// The vote execution evidence cast, if it cast one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Verdict>,
    /// What the majority decided; `None`: no majority, the node needs review.
    pub outcome: Option<Verdict>,
    /// The tests in dispute, with what the kept code actually did.
    pub disputed: Vec<DisputedTest>,
}

/// A model-written test that failed against code passing the gates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DisputedTest {
    /// The test function.
    pub name: String,
    /// Its source, so that it can be judged later against a reference implementation.
    pub source: String,
    /// What pytest reported for it against the kept code (shortened).
    pub output: String,
}

/// The integration test of one subgraph (the seed's §4.5), written once every function of
/// the subgraph passed: data flows from its entry functions to its exit functions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IntegrationRecord {
    pub subgraph: String,
    /// The test file, relative to the output; `None` when none was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Test cases run, and those that passed.
    pub cases: u32,
    pub passed: u32,
    /// At least 80% of the cases passed.
    pub threshold_met: bool,
    /// Cases that failed, taken out of the file, with what pytest said of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<DisputedTest>,
    /// Why no test ran (an unusable answer, a provider failure, a sandbox error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The file was kept from an earlier run and only ran again.
    #[serde(default)]
    pub reused: bool,
    /// Model tokens spent writing it (none when it was kept).
    #[serde(default)]
    pub tokens: crate::usage::Usage,
    /// The subgraph's functions left out of the flow: their code failed or was never
    /// written (names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Failing cases sent to diagnosis, and to debugging when the vote blamed the code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub debugged: Vec<FlowDebug>,
}

/// A failing integration case, diagnosed by vote as a node's are and, when the code was
/// blamed, debugged in the function the failure points at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FlowDebug {
    /// The test function.
    pub case: String,
    /// The node whose function the failure was blamed on; `None` when it names no function
    /// of the flow (then nothing is voted or fixed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    /// The model's votes then the execution evidence's, as letters (A: the code, B: the test,
    /// C: the environment).
    #[serde(default)]
    pub votes: String,
    /// The side that won; `None` without a majority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Fix rounds asked.
    #[serde(default)]
    pub attempts: u32,
    /// A fix made the case pass and broke no test that passed before: it was kept.
    #[serde(default)]
    pub fixed: bool,
    /// Fixes that made a test fail that passed before: reverted.
    #[serde(default)]
    pub regressions: u32,
    /// Where each fix looked first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub localizations: Vec<LocalizedFix>,
    /// Why the blamed function was not diagnosed or fixed again for this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spared: Option<Spared>,
}

/// Why an integration case blamed on a function got no diagnosis or fix rounds: the run had
/// already shown that more rounds on that function buy nothing (`crate::returns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Spared {
    /// The node's own fix rounds in the loop never made it pass.
    FixesBoughtNothing,
    /// An earlier case of this subgraph was debugged in the same function and kept no fix.
    DebuggedBefore,
}

/// What a node's loop did: the figures behind the run's first-try rate and time split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeWork {
    /// Implementation rounds: the first, then each fix or fresh start.
    pub rounds: u32,
    /// Implementation answers asked, over all rounds (candidates count one each).
    pub answers: u32,
    /// The first round's chosen candidate passed every test: the seed's first-try pass.
    pub first_try: bool,
    /// Test runs in the sandbox.
    pub sandbox_runs: u32,
    /// Wall time waiting for the model.
    pub model_ms: u64,
    /// The same, by what the model was asked (records older than this field have none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub model_ms_by_role: BTreeMap<Role, u64>,
    /// Wall time running tests in the sandbox.
    pub sandbox_ms: u64,
    /// Fix rounds whose every answer repeated code an earlier round ran (never run again).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeated_fixes: u32,
    /// Runs in which the code in place broke a test of an earlier function of its module
    /// (regressions caught: such code is never kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub regressions_caught: u32,
    /// Implementation rounds asked while the node's tests were written, whose answers the
    /// loop then used (the prompts were identical; `engine::ask::Ahead`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub asked_ahead: u32,
    /// The votes, fix rounds and fresh starts the node asked for, and what they bought: the
    /// run's sum decides what later nodes may ask for (`crate::returns`).
    #[serde(default, skip_serializing_if = "Returns::is_empty")]
    pub returns: Returns,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl NodeWork {
    pub fn add(&mut self, other: &NodeWork) {
        self.rounds += other.rounds;
        self.answers += other.answers;
        self.first_try |= other.first_try;
        self.sandbox_runs += other.sandbox_runs;
        self.model_ms += other.model_ms;
        for (role, ms) in &other.model_ms_by_role {
            *self.model_ms_by_role.entry(*role).or_default() += ms;
        }
        self.sandbox_ms += other.sandbox_ms;
        self.repeated_fixes += other.repeated_fixes;
        self.regressions_caught += other.regressions_caught;
        self.asked_ahead += other.asked_ahead;
        self.returns.add(&other.returns);
    }

    /// Counts `started`'s elapsed time as waiting for the model on a `role` request.
    pub(crate) fn waited_for_model(&mut self, role: Role, started: std::time::Instant) {
        let ms = started.elapsed().as_millis() as u64;
        self.model_ms += ms;
        *self.model_ms_by_role.entry(role).or_default() += ms;
    }
}

impl NodeRecord {
    pub fn now(status: NodeStatus) -> NodeRecord {
        NodeRecord {
            status,
            timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            test_results: None,
            retry_count: 0,
            failure_reason: None,
            duration_ms: None,
            tokens: crate::usage::UsageByRole::new(),
            work: None,
            diagnosis: None,
            localizations: Vec::new(),
            flaky: Vec::new(),
            departure: None,
        }
    }
}
