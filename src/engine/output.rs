//! The output tree's side of a run: nodes work in the staging copy; this publishes passed
//! work to the output tree in batches and commits each subgraph once all its nodes finished.

use std::collections::{BTreeMap, BTreeSet};

use super::{EngineError, node};
use crate::checkpoint::Checkpoint;
use crate::fsutil::Workspace;
use crate::records::NodeStatus;
use crate::rpg::{Node, ValidRpg};
use crate::workspace::git::Git;
use crate::workspace::publish;
use crate::workspace::runlock::RunLock;

/// The output tree's side of a run: flushes of the staging copy and a commit per finished
/// subgraph (see [`crate::workspace::publish`] and [`crate::workspace::git`]).
pub(super) struct Output {
    pub(super) out: Workspace,
    pub(super) work: Workspace,
    pub(super) git: Git,
    /// Held until assembly ends: no other run writes here meanwhile.
    pub(super) lock: RunLock,
    flush_every: usize,
    passed_since_flush: usize,
    /// Subgraphs committed (or found committed) in this run.
    done: BTreeSet<String>,
    /// Subgraphs with a node that finished in this run: their tag, if any, is out of date.
    touched: BTreeSet<String>,
}

impl Output {
    pub(super) fn new(
        out: Workspace,
        work: Workspace,
        git: Git,
        lock: RunLock,
        flush_every: usize,
    ) -> Output {
        Output {
            out,
            work,
            git,
            lock,
            flush_every: flush_every.max(1),
            passed_since_flush: 0,
            done: Default::default(),
            touched: Default::default(),
        }
    }

    /// Files a flush may publish: every node's files, and the package markers created for
    /// them; never the files of a node still in flight.
    fn candidates(&self, rpg: &ValidRpg, checkpoint: &Checkpoint) -> Vec<String> {
        let mut in_flight = BTreeSet::new();
        let mut files = BTreeSet::new();
        for &position in rpg.order() {
            let node = rpg.node(position);
            let target = if checkpoint.status_of(&node.id) == NodeStatus::InProgress {
                &mut in_flight
            } else {
                &mut files
            };
            target.extend(node::files_of(node));
        }
        files.extend(
            publish::files_under(self.work.root())
                .into_iter()
                .filter(|p| p.ends_with("__init__.py") && !p.starts_with(".zerorepo/")),
        );
        files.difference(&in_flight).cloned().collect()
    }

    pub(super) fn flush(
        &mut self,
        rpg: &ValidRpg,
        checkpoint: &mut Checkpoint,
    ) -> Result<(), EngineError> {
        let candidates = self.candidates(rpg, checkpoint);
        let flushed = publish::flush(&self.work, &self.out, checkpoint, &candidates)?;
        for (path, why) in &flushed.refused {
            tracing::warn!("{path} was not published because it does not parse: {why}");
        }
        self.passed_since_flush = 0;
        Ok(())
    }

    pub(super) fn node_ended(
        &mut self,
        rpg: &ValidRpg,
        checkpoint: &mut Checkpoint,
        node: &Node,
        passed: bool,
    ) -> Result<(), EngineError> {
        self.touched.insert(node.subgraph().to_string());
        self.passed_since_flush += usize::from(passed);
        if self.passed_since_flush >= self.flush_every
            || subgraph_finished(rpg, checkpoint, node.subgraph())
        {
            self.flush(rpg, checkpoint)?;
        }
        self.commit_finished(rpg, checkpoint)
    }

    pub(super) fn commit_finished(
        &mut self,
        rpg: &ValidRpg,
        checkpoint: &mut Checkpoint,
    ) -> Result<(), EngineError> {
        let mut subgraphs: BTreeMap<&str, Vec<&Node>> = Default::default();
        for &position in rpg.order() {
            let node = rpg.node(position);
            subgraphs.entry(node.subgraph()).or_default().push(node);
        }
        for (subgraph, nodes) in subgraphs {
            if self.done.contains(subgraph) || !subgraph_finished(rpg, checkpoint, subgraph) {
                continue;
            }
            if self.touched.contains(subgraph) || !self.git.has_subgraph_tag(subgraph) {
                let paths: Vec<String> = nodes.iter().flat_map(|n| node::files_of(n)).collect();
                let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
                ids.sort();
                let range = format!("{}-{}", ids[0], ids[ids.len() - 1]);
                self.git.commit_paths(
                    &paths,
                    &format!("feat: complete {subgraph} (nodes {range})"),
                )?;
                self.git.tag_subgraph(subgraph)?;
            }
            self.done.insert(subgraph.to_string());
        }
        Ok(())
    }
}

fn subgraph_finished(rpg: &ValidRpg, checkpoint: &Checkpoint, subgraph: &str) -> bool {
    rpg.order()
        .iter()
        .map(|&p| rpg.node(p))
        .filter(|n| n.subgraph() == subgraph)
        .all(|n| checkpoint.status_of(&n.id).is_finished())
}
