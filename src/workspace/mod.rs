//! The output tree as the engine changes it: [`overlay`] holds pending changes in memory and
//! commits them all at once; [`publish`] moves staged work from the staging copy to the output
//! tree in batches through it; [`git`] commits the output per subgraph;
//! [`runlock`] keeps a second run out while one writes. The directory tree
//! itself, with atomic writes and snapshots, is [`crate::fsutil::Workspace`].

pub mod git;
pub mod overlay;
pub mod publish;
pub mod runlock;
