//! zerorepo turns a Repository Planning Graph (RPG) into a tested Python repository.
//!
//! The crate is built in layers. A module uses modules of its own layer or of layers below it,
//! never above, and no two modules use each other (the test `layers` in `tests/suite/`
//! reads the diagram below and fails on an import that breaks it). Each module's own `//!`
//! doc says what it owns.
//!
//! ```text
//! cli       cli
//! pipeline  pipeline · progress · schemas · eval · nightly · corpus
//! stages    engine · assemble · change
//! services  workspace · localize · report · llm · edit · code · checkpoint · sandbox · detect
//! plan      rpg · schedule · usage · prompts
//! base      layout · fsutil · python · redact · programs · config · balance · exit
//! ```
//!
//! - **base** uses nothing of the crate: the output directory's layout (every path zerorepo
//!   writes), atomic writes, hashes and the confined directory tree with snapshots
//!   (`fsutil`), Python naming and escaped literals (`python`), secret redaction, where
//!   external programs are, `zerorepo.toml` (`config`: read and checked, its settings the
//!   defaults of flags), the order in which a pool's members are tried (`balance`: least
//!   busy first, failed ones last), and the exit codes.
//! - **plan**: the RPG (load, validate, dependency graph, deterministic order, and a plan
//!   read from Python source with tree-sitter, `rpg::extract`), the
//!   dependency queue and its async drain (`schedule`), token accounting (`usage`), and the
//!   prompt templates. Everything but reading files and the drain is pure.
//! - **services** do the I/O: the output tree's overlay, batched publishing and git
//!   (`workspace`), plan search and the dependency view (`localize`), the status of a run
//!   (`report`), the model providers (`llm`), merging answers into files (`edit`), the Python
//!   code model and tools (`code`), the journal and compact checkpoint (`checkpoint`), the
//!   sandboxes that run generated code (`sandbox`), and stack detection (`detect`).
//! - **stages**: `engine` runs the node loop (prepare, drain, publish and commit) and, after
//!   it, the integration test of every subgraph, through its functions that passed their gates
//!   (a failing case goes to the diagnosis and debugging of the function it is blamed on, in a
//!   scratch copy of the output, with the whole suite as the regression check);
//!   `assemble` turns the generated tree into a package (exports, pyproject, README, report
//!   in Markdown and as an HTML page with the plan drawn,
//!   install, test and ruff validation, the planned dependencies checked in the code);
//!   `change` is `zerorepo code`, a change to an existing repository (error-first diagnostic,
//!   a task plan with risk levels, approval, staging in the overlay, verification and
//!   correction in the sandbox, one all-or-nothing commit, an audit trail). None of the three
//!   knows the others.
//! - **pipeline** runs the engine's node loop, then its integration tests, then assembly,
//!   then releases the sandbox; `progress` is
//!   the terminal view of a run; `schemas` prints the JSON Schemas; `eval` measures a
//!   generated repository by reference tests the engine never saw, run in the sandbox;
//!   `nightly` holds the nightly benchmark's figures, compares them with the previous
//!   report within the machine's noise, and writes the reports (`zerorepo bench` runs it);
//!   `corpus` reads the evaluation corpus, fetches and unpacks its pinned sdists untrusted,
//!   makes each plan and its reference ready, and renders the engine-against-one-shot table
//!   (`zerorepo bench --corpus` runs it).
//! - **cli** is the `zerorepo` command line: one module per command with its flags and its
//!   run, one error type that picks the exit code, all text output in `cli::render`.
//!   `main.rs` only calls [`cli::main`].
//!
//! Every byte of a plan or of a model's answer is hostile. Plan text reaches Python files only
//! as escaped literals (`python`); generated code, the syntax check and the install check
//! that runs its build code, and the commands `zerorepo code` runs in a repository, run only
//! in a sandbox whose processes never see zerorepo's environment and are never host root
//! (`sandbox`); `zerorepo code` touches a repository only beneath its root, through no
//! symlink (`fsutil::beneath`); the threat model is `docs/security.md`;
//! and everything that leaves a test run passes through one redaction of known secrets
//! (`redact`).
//!
//! A data leaf (a module-level constant or table) is one assignment, `NAME = VALUE`: the
//! plan's value once checked to be nothing but a literal, or the model's answer once parsed to
//! bind exactly that name; it is written and checked in the sandbox before the functions that
//! read it (`engine::data`), and `rpg extract` plans a library's module-level literals so.
//!
//! The node loop today, decided by a pure state machine (`engine::machine`: events in, the
//! next action or the node's outcome out, no I/O) that the async driver in `engine::node`
//! carries out: tests are
//! written first (after three unusable tests answers, the plan's tests alone judge, and
//! passing code is only `needs_review`), then `--candidates` implementations that are all
//! run and chosen by evidence (the plan's examples and the earlier functions' tests are
//! gates, the model's tests only evidence; a function with no body is never kept while one
//! with a body exists, and never passes). The embedded model's answers are begun for it at the planned
//! signature and specification (`LlmRequest::prefill`), so it writes only the body, starting
//! with the documented errors and the planned dependencies to call named as comments. A failing
//! choice gets up to `--max-retries` fix prompts with the failing tests, the failure and the
//! module (the failing body cut to its outline when the answer is begun, since a small model
//! copies what it is shown). Code that passes the gates but not every generated
//! test goes to a majority vote (`engine::vote`: five model votes and one of execution
//! evidence, which blames the code when it crashed where a documented error was expected;
//! no vote is asked when pytest refused every disputed test's use of it, which is the test's fault):
//! the tests are written once more and dropped where they still fail (B), the
//! code gets one fix (A), the node is skipped for its environment (C), or, without a
//! majority, the code is kept as `needs_review` and built on. A node that fails the gates to
//! the end keeps its best candidate (or a stub) and its dependents are skipped. Before every
//! fix the failure is localized (`engine::suspects`, within the `localize` budget of 20
//! queries): the traceback's frames in the generated sources, the function itself, the
//! dependencies the failure names, a BM25 search of the plan; the fix prompt shows the
//! suspects outside the function, and the node's checkpoint record keeps every suspect (the
//! report's debugging section, `status --node`). A fix replaces the node's own function, and
//! may also correct a function of the same module that the localization showed (that
//! function's tests run with the module's, so a correction that breaks it is not kept); a
//! fix that repeats code already run is dropped before it runs; a run that failed on a
//! timeout, or on code that passed before, is repeated once and flagged flaky. Before any
//! answer runs, the imports it forgot or misplaced are repaired from the plan
//! (`engine::repair`). The code tools (`code`) are commands of their own (`view`); of them
//! the loop uses tree-sitter's reading of an answer (its imports at any depth, the outline of
//! a symbol, and the repair of a variable that shadows a called function, `code::repair`).

pub mod assemble;
pub mod balance;
pub mod change;
pub mod checkpoint;
pub mod cli;
pub mod code;
pub mod config;
pub mod corpus;
pub mod detect;
pub mod edit;
pub mod engine;
pub mod eval;
pub mod fsutil;
pub mod layout;
pub mod llm;
pub mod localize;
pub mod nightly;
pub mod pipeline;
pub mod programs;
pub mod progress;
pub mod prompts;
pub mod python;
pub mod redact;
pub mod report;
pub mod rpg;
pub mod sandbox;
pub mod schedule;
pub mod schemas;
pub mod usage;
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
