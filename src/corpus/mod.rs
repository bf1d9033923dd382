//! The evaluation corpus (issue 39): plans the engine was never tuned on, each with reference
//! tests it never sees, measured engine against the `--one-shot` baseline by `zerorepo bench
//! --corpus`.
//!
//! This module owns what is the corpus's own, below the command line: reading the corpus file
//! into typed plans (`file`, pure), fetching and unpacking a pinned sdist without trusting it
//! (`sdist`), making a plan ready to run (`prepare`: the plan file, the reference directory
//! `zerorepo eval` takes, the support modules; `rest`: the library's own names a subset plan
//! leaves out, so its test modules still import), and the comparison's figures and table
//! (`report`, pure). It does not generate or evaluate: the command runs `pipeline::generate`
//! and `eval` with what `prepare` gives, so a corpus run is exactly `generate` + `eval` by hand.

mod file;
mod prepare;
mod report;
mod rest;
mod sdist;

pub use file::{CorpusPlan, Half, HalfChoice, PlanSource, parse, select};
pub use prepare::{PreparedPlan, copy_support, prepare};
pub use report::{CorpusReport, PlanOutcome, PlanResult, PlanSide, render_markdown, wall_ratio};
pub use rest::add_rest;
pub use sdist::{Pin, fetch, unpack};
