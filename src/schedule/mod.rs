//! Scheduling: which node runs when.
//!
//! [`queue::DependencyQueue`] is pure bookkeeping over integer jobs (positions in the
//! generation order): it hands out ready jobs up to a concurrency limit, keeps jobs that share
//! a file apart, and turns a failure into `skipped` for every transitive dependent, or (as
//! `generate` asks) into a draft: the dependent still runs, told what did not pass.
//! [`drain::drain`] is the async loop that feeds it; it never exits while work is running.
//! [`plan`] renders the order for `zerorepo plan`.

pub mod drain;
pub mod plan;
pub mod queue;

pub use drain::drain;
pub(crate) use queue::OnFailure;
pub use queue::{DependencyQueue, Finished, JobOutcome};
