//! `zerorepo rollback`: back to the newest subgraph that passed completely.
//!
//! The output's git history has a tagged commit per finished subgraph; rolling back resets to
//! the newest one whose nodes all passed, sets every node of the later subgraphs back to
//! pending (so `generate` redoes exactly them), removes their uncommitted files, and journals
//! what the output now holds, so the next run's hand-edit check agrees with the reset.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::{EngineError, bad_input, node, rpg_sha256};
use crate::checkpoint::Checkpoint;
use crate::fsutil::{FsError, Workspace};
use crate::layout::{RPG_COPY, SNAPSHOT_DIR, WORK_DIR};
use crate::records::{NodeRecord, NodeStatus};
use crate::rpg::{NodeId, ValidRpg};
use crate::workspace::git::{Git, TAG_PREFIX};
use crate::workspace::runlock::RunLock;

/// What `zerorepo rollback` did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Rollback {
    /// The subgraph whose commit the output was reset to.
    pub subgraph: String,
    pub commit: String,
    /// Nodes set back to pending (they will be generated again).
    pub reset_nodes: Vec<NodeId>,
    /// Files of those nodes removed because the kept commit does not have them.
    pub removed_files: Vec<String>,
}

/// Resets the output to the newest subgraph commit whose subgraph passed completely, and sets
/// every node of the later subgraphs back to pending, so `generate` redoes exactly them.
pub fn rollback(out: &Path) -> Result<Rollback, EngineError> {
    let git = Git::open(out).ok_or_else(|| {
        bad(format!(
            "{} is not a git repository: nothing to roll back",
            out.display()
        ))
    })?;
    // The directory may not be what generate left (a hard reset through a `.git` naming
    // another work tree writes there): the checks generate makes before writing.
    if let Some(problem) = super::outdir::problems(out).into_iter().next() {
        return Err(bad(problem));
    }
    let rpg = plan_of(out)?;
    // A run still writing here would undo the reset, and one killed may have left git's locks.
    let lock = RunLock::acquire(out)?;
    git.remove_stale_locks(&lock)?;
    let (mut checkpoint, _) = Checkpoint::open(out, &rpg_sha256(&rpg)?)?;
    let (subgraph, kept) = target(&git, &rpg, &checkpoint)?;
    let commit = git.reset_to_subgraph(&subgraph)?;
    let out_ws = Workspace::new(out);
    let (reset_nodes, removed_files) =
        reset_later_nodes(&rpg, &git, &out_ws, &kept, &mut checkpoint)?;
    resync(out, &out_ws, &mut checkpoint)?;
    Ok(Rollback {
        subgraph,
        commit,
        reset_nodes,
        removed_files,
    })
}

fn bad(message: String) -> EngineError {
    EngineError::BadInput(message)
}

/// The plan the output was generated from (its copy under `.zerorepo/`).
fn plan_of(out: &Path) -> Result<ValidRpg, EngineError> {
    let path = out.join(RPG_COPY);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        bad(format!(
            "{}: {e} (is this a zerorepo output directory?)",
            path.display()
        ))
    })?;
    crate::rpg::parse_str(&text, &path)
        .map_err(|e| bad(e.to_string()))
        .and_then(|r| crate::rpg::validate(r).map_err(|errors| bad_input(&errors)))
}

/// The subgraph to go back to (the newest tagged commit whose subgraph passed), and every
/// subgraph committed up to it, which are kept.
fn target(
    git: &Git,
    rpg: &ValidRpg,
    checkpoint: &Checkpoint,
) -> Result<(String, BTreeSet<String>), EngineError> {
    let passed = |subgraph: &str| {
        rpg.rpg()
            .nodes
            .iter()
            .filter(|n| n.subgraph() == subgraph)
            .all(|n| checkpoint.status_of(&n.id).is_usable())
    };
    // Newest first: the first tagged commit whose subgraph passed is the one to keep.
    let mut kept = BTreeSet::new();
    let mut target = None;
    for entry in &git.log()? {
        for tag in &entry.tags {
            let Some(subgraph) = tag.strip_prefix(TAG_PREFIX) else {
                continue;
            };
            if target.is_none() && passed(subgraph) {
                target = Some(subgraph.to_string());
            }
            if target.is_some() {
                kept.insert(subgraph.to_string());
            }
        }
    }
    let subgraph = target.ok_or_else(|| {
        bad("no subgraph has passed completely yet: nothing to roll back to".into())
    })?;
    Ok((subgraph, kept))
}

/// Sets the nodes of every subgraph not kept back to pending and removes their files the
/// kept commit does not track. Returns the nodes reset and the files removed.
fn reset_later_nodes(
    rpg: &ValidRpg,
    git: &Git,
    out: &Workspace,
    kept: &BTreeSet<String>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<NodeId>, Vec<String>), EngineError> {
    let mut reset_nodes = Vec::new();
    let mut removed_files = Vec::new();
    for &position in rpg.order() {
        let node = rpg.node(position);
        if kept.contains(node.subgraph()) {
            continue;
        }
        for file in node::files_of(node) {
            if !git.is_tracked(&file) && out.read(&file)?.is_some() {
                out.remove(&file)?;
                removed_files.push(file);
            }
        }
        if checkpoint.records().contains_key(&node.id) {
            checkpoint.record(&node.id, NodeRecord::now(NodeStatus::Pending))?;
            reset_nodes.push(node.id.clone());
        }
    }
    Ok((reset_nodes, removed_files))
}

/// The reset rewrote published files: journal what the output holds now, and drop the
/// staging copy and snapshots so the next run stages from the rolled-back output.
fn resync(out: &Path, out_ws: &Workspace, checkpoint: &mut Checkpoint) -> Result<(), EngineError> {
    let paths: Vec<String> = checkpoint.published().files.keys().cloned().collect();
    checkpoint.record_flush(
        out_ws
            .hashes(&paths)
            .into_iter()
            .filter(|(p, h)| checkpoint.published().files.get(p) != Some(h))
            .collect(),
    )?;
    for dir in [WORK_DIR, SNAPSHOT_DIR] {
        match std::fs::remove_dir_all(out.join(dir)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(FsError::Io {
                    path: out.join(dir),
                    source: e,
                }
                .into());
            }
            _ => {}
        }
    }
    Ok(())
}
