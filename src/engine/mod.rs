//! The generation engine: from a valid RPG to tested files on disk, node by node.
//!
//! This file only names the parts. [`context`] holds what a run is given and shares (the
//! options, the loop's settings, the nodes' [`Context`], the progress events and the
//! [`Handoff`]). [`generate()`] (in `generate.rs`, with the errors that stop it) runs the
//! node loop in three steps, each in its own file: [`prepare`] checks the input and the
//! output directory, opens the checkpoint and puts back the files of any node a crash
//! interrupted; [`run`] drains the dependency queue as a drain state (all running state in
//! one struct, one event handler, one error funnel), journalling every state change on the
//! one task that owns the checkpoint; [`output`] publishes passed work from the staging copy
//! and commits each finished subgraph. [`integration`] is the step after the loop: one
//! integration test per subgraph, through its functions that passed their gates, run on the
//! published output. [`node`] is the per-node test-first loop, whose decisions are the pure
//! state machine [`machine`]; a data node (module-level data) is one assignment, written and
//! checked before the functions that read it, in [`data`]; it asks the model through
//! [`ask`], repairs answers before they run ([`repair`]) and reads test runs and test files
//! through [`testfile`]; [`suspects`] localizes a failure before a fix, over the code and
//! plan that [`ground`] reads; [`prompt`] builds what the model sees; [`rollback`](mod@rollback) is
//! `zerorepo rollback`. The engine knows nothing of assembly: the pipeline module runs that
//! after the engine, on the [`Handoff`].

mod ask;
mod context;
mod data;
mod examples;
mod generate;
mod ground;
pub mod integration;
mod machine;
pub(crate) use machine::DEFAULT_MAX_RETRIES;

/// Nodes generated at once unless `--jobs` says otherwise. Measured on 2 cores with the
/// embedded model (reports/batching.md, reports/speed.md): 2 jobs finished subgraphs20 in
/// 504 s against 616 s for 1 and 597 s for 4, and ml_lib in 49.7 min against 52.1 min, with
/// the tokens of concurrent nodes decoded in shared steps. Latency-bound providers gain far
/// more from more jobs (`--jobs 4`: 3.24×).
pub(crate) const DEFAULT_JOBS: usize = 2;
mod node;
pub mod outdir;
mod output;
mod prepare;
mod prompt;
mod repair;
mod rollback;
mod run;
mod suspects;
pub(crate) mod testfile;
pub mod vote;

pub(crate) use context::{Context, DEFAULT_CANDIDATES, Handoff, LoopSummary};
pub use context::{GenerateOptions, LoopSettings, PhaseSink, Progress};
pub(crate) use generate::EngineError;
use generate::bad_input;
pub use generate::{GenerateRequest, generate, rpg_sha256};
pub(crate) use node::NodeResult;
pub(crate) use rollback::Rollback;
pub use rollback::rollback;
