//! The output directory's layout: every path zerorepo itself writes there, relative to the
//! output root. A bottom-layer module (it uses nothing of the crate), so the engine, the
//! checkpoint, assembly, rollback, validation and the CLI all name a file the same way.

/// Where the engine keeps its own state inside the output directory.
pub(crate) const STATE_DIR: &str = ".zerorepo";
/// Per-node snapshots of the files a node may touch, saved before it starts.
pub(crate) const SNAPSHOT_DIR: &str = ".zerorepo/snapshots";
/// Written by `generate` into a directory it creates or finds empty, before anything else:
/// the mark that the directory is a generated repository (`zerorepo code` never writes it).
pub(crate) const GENERATED_MARK: &str = ".zerorepo/generated";
/// The journal of runs before the mark existed; a directory holding it is also generate's.
pub(crate) const LEGACY_MARK: &str = ".zerorepo/journal.jsonl";
/// Locked (`flock`) by the run writing into the output; see `workspace::runlock`.
pub(crate) const RUN_LOCK: &str = ".zerorepo/lock";
/// The staging copy nodes work in; passed work is published from it to the output tree.
pub(crate) const WORK_DIR: &str = ".zerorepo/work";
/// The plan a run was started from (what `rollback` and `search` read).
pub(crate) const RPG_COPY: &str = ".zerorepo/rpg.json";
/// The append-only journal: one JSON line per state change.
pub const JOURNAL: &str = ".zerorepo/journal.jsonl";
/// The compact checkpoint, rewritten from the journal.
pub(crate) const COMPACT: &str = "docs/generation_checkpoint.json";
/// The generation report assembly writes.
pub(crate) const REPORT: &str = "docs/generation_report.md";
/// The same report as one self-contained page to open in a browser.
pub(crate) const REPORT_HTML: &str = "docs/generation_report.html";
/// The plan with statuses, exported at assembly.
pub(crate) const RPG_EXPORT: &str = "docs/rpg.json";
/// The JUnit file of the final test run.
pub(crate) const JUNIT: &str = "test_results.xml";
/// The last validation with the fingerprint of what it validated, reused while that holds.
pub(crate) const VALIDATION: &str = ".zerorepo/validation.json";
/// The last import cleanup with the fingerprint of the tree it left, reused while that holds.
pub(crate) const CLEANUP: &str = ".zerorepo/cleanup.json";
/// The subgraphs' integration tests and what they did (a list of
/// `records::IntegrationRecord`).
pub(crate) const INTEGRATION: &str = ".zerorepo/integration.json";
/// Where the subgraphs' integration tests are written.
pub(crate) const INTEGRATION_TESTS: &str = "tests/integration";
/// The output's `.gitignore`.
pub(crate) const GITIGNORE: &str = ".gitignore";

/// Files the engine itself writes; like node paths, they must not lead outside the output.
pub(crate) const ENGINE_FILES: &[&str] = &[
    JOURNAL,
    COMPACT,
    RPG_COPY,
    VALIDATION,
    CLEANUP,
    INTEGRATION,
    ".zerorepo/snapshots/x.json",
    GITIGNORE,
];

/// Files assembly writes from the plan and the records on every run. A hand edit of one is
/// not a conflict: it is rebuilt (the RPG's metadata is where such text comes from).
pub(crate) const ASSEMBLY_FILES: &[&str] = &[
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "README.md",
    RPG_EXPORT,
    REPORT,
    REPORT_HTML,
    JUNIT,
];
