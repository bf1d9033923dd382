//! zerorepo turns a Repository Planning Graph (RPG) into a tested Python repository.
//!
//! The module list below is the architecture; each module's own `//!` doc says what it owns.
//! Data flows top to bottom:
//!
//! ```text
//! rpg.json ─ rpg (load + validate) ─ schedule (deterministic order, dependency queue)
//!    └─ engine (test-first loop per node) ─ llm (tests, impl, fixes) ─ edit (merge answers into files)
//!          └─ sandbox (run pytest) ─ checkpoint (journal + compact file after every node)
//!    └─ workspace::publish (the staging copy → output tree in batches, via workspace::overlay) ─ workspace::git (a commit + tag per subgraph)
//!    └─ assemble (package exports, pyproject, README, docs/rpg.json, report, install + test check)
//!    └─ report (status of a run, plan preview)
//! cli (the top layer: the `zerorepo` command line, over all of the above; nothing uses it)
//! ```
//!
//! Every byte of a plan or of a model's answer is hostile. Plan text reaches Python files only
//! as escaped literals (`python`); generated code, and the install check that runs its build
//! code, run only in a sandbox whose processes never see zerorepo's environment (`sandbox`);
//! and everything that leaves a test run passes through one redaction of known secrets
//! (`redact`).
//!
//! Pure modules (`rpg`, `schedule::queue`, `edit`, `code::{units, outline, edit}`,
//! `python`) do no I/O and are unit-tested in place; the I/O edges (`checkpoint`,
//! `workspace`, `sandbox`, `llm`, and `code::tools` with its checker and language-server
//! client) are covered by the integration tests in `tests/`.

pub mod assemble;
pub mod checkpoint;
pub mod cli;
pub mod code;
pub mod detect;
pub mod edit;
pub mod engine;
pub mod llm;
pub mod localize;
pub mod progress;
pub mod prompts;
pub mod python;
pub mod redact;
pub mod report;
pub mod rpg;
pub mod sandbox;
pub mod schedule;
pub mod schemas;
pub mod workspace;

/// Exit codes shared by every command (documented in the README).
pub mod exit {
    /// Everything asked for was done.
    pub const OK: u8 = 0;
    /// Generation finished but some nodes failed or were skipped, or an operation failed.
    pub const FAILED: u8 = 1;
    /// The input (RPG, flags, checkpoint, output directory) was rejected before any work started.
    pub const BAD_INPUT: u8 = 2;
    /// Interrupted by SIGINT/SIGTERM; the checkpoint is consistent and the run can be resumed.
    pub const INTERRUPTED: u8 = 130;
}
