//! What a `zerorepo code` run tells its caller: how it ended, the checks it ran, the files it
//! changed or left, and what it cost. `zerorepo code` renders it, and with `--json` prints
//! it as it is.

use std::path::PathBuf;

use serde::Serialize;

use super::Reviewed;
use super::accept::ExampleReport;
use crate::llm::Usage;
use crate::workspace::overlay::FileDiff;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Verified and written.
    Committed,
    /// Verified; the diff was shown and nothing written (`--dry-run`).
    DryRun,
    /// The plan was written to `--plan-out`; nothing else done.
    Planned,
    /// Self-heal found the diagnostic passing already.
    NothingToDo,
    /// Not verified, refused or failed: nothing written.
    RolledBack,
    /// The approver declined the plan: nothing written.
    Declined,
    /// Cancelled: nothing written.
    Interrupted,
}

/// One check run on the repository or the staged change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub command: String,
    pub passed: bool,
    /// The program is not there to run (no `ruff` in the sandbox): not counted either way.
    pub unavailable: bool,
    pub exit_code: Option<i32>,
    /// The tail of its output, redacted.
    pub output: String,
}

/// A planned file a change did not write as its task asked ([`Outcome::left`]).
#[derive(Debug, Clone, Serialize)]
pub struct LeftFile {
    pub path: String,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    /// Why nothing was written, for every status but `committed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The diagnostic before the change (error-first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Reviewed>,
    /// The staged change against the disk.
    pub files: Vec<FileDiff>,
    /// The last verification's checks.
    pub checks: Vec<Check>,
    /// The request's examples and what the last acceptance check found of each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ExampleReport>,
    /// Planned files whose task's answer could not be used and that the change left as they
    /// were (a type stub, a test file left to the checks), each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<LeftFile>,
    pub corrections: u32,
    /// The git commit made with `--git-commit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    pub usage: Usage,
    /// Where the audit trail is (none for a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<PathBuf>,
}
