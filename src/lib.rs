//! zerorepo turns a Repository Planning Graph (RPG) into a tested Python repository.
//!
//! The crate is built in layers. A module uses modules of its own layer or of layers below it,
//! never above, and no two modules use each other (the test `layers` in `tests/suite/`
//! reads the diagram below and fails on an import that breaks it). Each module's own `//!`
//! doc says what it owns.
//!
//! ```text
//! cli       cli
//! pipeline  pipeline · progress · schemas · eval · nightly · corpus · code_corpus
//! stages    engine · assemble · change
//! services  workspace · localize · status · llm · edit · symbols · checkpoint · sandbox · detect
//! plan      rpg · records · schedule · usage · returns · prompts
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
//!   dependency queue and its async drain (`schedule`), what the loop records of a node
//!   (`records`: statuses, counts, work, votes, fixes), token accounting (`usage`), what
//!   votes, fixes and fresh starts bought in a run and whether to keep asking for them
//!   (`returns`), and the prompt templates. Everything but reading files and the drain is pure.
//! - **services** do the I/O: the output tree's overlay, batched publishing, git and the
//!   lock that keeps a second run out (`workspace`), plan search and the dependency view
//!   (`localize`), the status of a run (`status`), the model providers (`llm`), merging
//!   answers into files (`edit`), the Python symbol model and tools (`symbols`), the journal
//!   and compact checkpoint (`checkpoint`), the sandboxes that run generated code
//!   (`sandbox`), and stack detection (`detect`).
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
//!   (`zerorepo bench --corpus` runs it); `code_corpus` does the same for change requests on
//!   real libraries, `zerorepo code` against its single-answer baseline, judged by acceptance
//!   tests the model never sees (`zerorepo bench --code-corpus`).
//! - **cli** is the `zerorepo` command line: one module per command with its flags and its
//!   run, one error type that picks the exit code. Only commands print (with `progress`, the
//!   terminal view of a run); `cli::render` holds the shared formatting of results and errors
//!   (tables, JSON, terminal-safe text). `main.rs` only calls [`cli::main`].
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
//! read it (`engine::data`), and `rpg extract` plans so the module-level data a library's
//! planned definitions read.
//!
//! The node loop is a pure state machine (`engine::machine`: events in, the next action or
//! the node's outcome out, no I/O) that the async driver in `engine::node` carries out. Its
//! first round is the greedy answer alone (what asking once gives): the prior, which only
//! evidence moves the node off (the plan's examples, the earlier functions' tests, a body, a
//! crash with an exception the specification does not name); every departure is recorded
//! and `eval` scores it. `docs/loop.md` walks through the steps with the measurements behind
//! each rule.

// The crate's docs are for its developers (`cargo doc --document-private-items`, checked in
// `scripts/test.sh`): a module's `//!` may link to the private pieces it is made of.
#![allow(rustdoc::private_intra_doc_links)]

pub mod assemble;
pub(crate) mod balance;
pub mod change;
pub mod checkpoint;
pub mod cli;
pub(crate) mod code_corpus;
pub(crate) mod config;
pub(crate) mod corpus;
pub(crate) mod detect;
pub mod edit;
pub mod engine;
pub(crate) mod eval;
pub mod fsutil;
pub mod layout;
pub mod llm;
pub mod localize;
pub(crate) mod nightly;
pub mod pipeline;
pub mod programs;
pub(crate) mod progress;
pub(crate) mod prompts;
pub mod python;
pub mod records;
pub(crate) mod redact;
pub(crate) mod returns;
pub mod rpg;
pub mod sandbox;
pub mod schedule;
pub mod schemas;
pub(crate) mod status;
pub mod symbols;
pub(crate) mod usage;
pub mod workspace;

/// Exit codes shared by every command (documented in the README).
pub(crate) mod exit {
    /// Everything asked for was done.
    pub const OK: u8 = 0;
    /// Generation finished but some nodes failed or were skipped, or an operation failed.
    pub const FAILED: u8 = 1;
    /// The input (RPG, flags, checkpoint, output directory) was rejected before any work started.
    pub const BAD_INPUT: u8 = 2;
    /// Interrupted by SIGINT/SIGTERM; the checkpoint is consistent and the run can be resumed.
    pub const INTERRUPTED: u8 = 130;
}
