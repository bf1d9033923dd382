//! Everything a run does before its first node: refuse bad input while nothing is written yet,
//! open the checkpoint, refuse hand edits, set up the staging copy, and put back the files of
//! a node a crash interrupted. Errors of the first step are `BadInput` (exit 2): the output
//! directory is untouched when they are returned.

use std::path::Path;

use super::{EngineError, GenerateOptions, Progress, bad_input, node, rpg_sha256};
use crate::checkpoint::Checkpoint;
use crate::fsutil::{FsError, Workspace};
use crate::layout::{ASSEMBLY_FILES, ENGINE_FILES, GITIGNORE, RPG_COPY, SNAPSHOT_DIR, WORK_DIR};
use crate::rpg::{ValidRpg, check_output_paths};
use crate::sandbox::TestRunner;
use crate::workspace::git::Git;
use crate::workspace::publish;
use crate::workspace::runlock::RunLock;

const OUTPUT_GITIGNORE: &str = "__pycache__/\n*.pyc\n.pytest_cache/\n*.egg-info/\n.zerorepo/\ndocs/generation_checkpoint.json\n";

/// What a prepared run starts from.
pub(super) struct Prepared {
    pub checkpoint: Checkpoint,
    /// The output tree.
    pub out: Workspace,
    /// The staging copy nodes work in.
    pub work: Workspace,
    pub git: Git,
    pub lock: RunLock,
    /// `--start-from-node` as an index into the generation order.
    pub start: Option<usize>,
}

/// Checks the input, then sets up the output directory for the drain.
pub(super) async fn prepare(
    rpg: &ValidRpg,
    runner: &dyn TestRunner,
    options: &GenerateOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Prepared, EngineError> {
    let start = check_input(rpg, options)?;
    runner
        .check_ready()
        .await
        .map_err(|e| EngineError::BadInput(e.to_string()))?;
    let out = Workspace::new(&options.out);
    let (lock, mut checkpoint) = open_checkpoint(rpg, &out, progress)?;
    refuse_hand_edits(&out, &mut checkpoint, progress)?;
    out.write_if_changed(GITIGNORE, OUTPUT_GITIGNORE)?;
    let git = Git::open_or_init(&options.out)?;
    let stale = git.remove_stale_locks(&lock)?;
    if stale > 0 {
        progress(Progress::Notice(format!(
            "removed {stale} git lock file(s) left by a killed run"
        )));
    }
    let rpg_json = serde_json::to_string_pretty(rpg.rpg())? + "\n";
    out.write_if_changed(RPG_COPY, &rpg_json)?;
    publish::ensure_staging(&options.out, &options.out.join(WORK_DIR))?;
    let work = Workspace::new(options.out.join(WORK_DIR));
    strip_exports(rpg, &work)?;
    restore_interrupted_nodes(&work, &checkpoint, progress)?;
    Ok(Prepared {
        checkpoint,
        out,
        work,
        git,
        lock,
        start,
    })
}

/// The checks that need no write: paths, the output directory, `--start-from-node`.
fn check_input(rpg: &ValidRpg, options: &GenerateOptions) -> Result<Option<usize>, EngineError> {
    check_output_paths(rpg.rpg(), &options.out, ENGINE_FILES)
        .map_err(|errors| bad_input(&errors))?;
    let problems = super::outdir::problems(&options.out);
    if !problems.is_empty() {
        return Err(EngineError::BadInput(problems.join("\n")));
    }
    let Some(id) = &options.start_from else {
        return Ok(None);
    };
    let index = rpg
        .order()
        .iter()
        .position(|&p| rpg.node(p).id == *id)
        .ok_or_else(|| {
            EngineError::BadInput(format!("--start-from-node {id}: no such node in the RPG"))
        })?;
    check_start_node(rpg, &options.out, index)?;
    Ok(Some(index))
}

/// `--start-from-node` is only safe when everything the node needs has passed.
fn check_start_node(rpg: &ValidRpg, out: &Path, index: usize) -> Result<(), EngineError> {
    let position = rpg.order()[index];
    let records = crate::checkpoint::load_compact(out)
        .map_err(|e| EngineError::BadInput(e.to_string()))?
        .unwrap_or_default();
    let missing: Vec<String> = rpg
        .graph()
        .transitive_dependencies_of(position)
        .into_iter()
        .map(|p| &rpg.node(p).id)
        .filter(|id| records.get(*id).is_none_or(|r| !r.status.is_usable()))
        .map(|id| {
            format!(
                "{id} ({})",
                records.get(id).map_or("pending", |r| r.status.as_str())
            )
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(EngineError::BadInput(format!(
        "cannot start from {}: these dependencies have not passed: {}",
        rpg.node(position).id,
        missing.join(", ")
    )))
}

/// Creates the output directory, takes its run lock, clears what killed runs left, and opens
/// the checkpoint.
fn open_checkpoint(
    rpg: &ValidRpg,
    out: &Workspace,
    progress: &mut dyn FnMut(Progress),
) -> Result<(RunLock, Checkpoint), EngineError> {
    std::fs::create_dir_all(out.root()).map_err(|source| FsError::Io {
        path: out.root().to_path_buf(),
        source,
    })?;
    // The mark first: from here on the directory is generate's ([`super::outdir`]).
    if !super::outdir::is_generated(out.root()) {
        out.write(crate::layout::GENERATED_MARK, "zerorepo generate\n")?;
    }
    // Before anything a killed run left is cleared: with the lock held, it is nobody's.
    let lock = RunLock::acquire(out.root())?;
    let leftovers = crate::sandbox::leftovers::clean();
    if leftovers > 0 {
        progress(Progress::Notice(format!(
            "removed {leftovers} temp dir(s) and cgroup(s) left by a killed run"
        )));
    }
    let stale = out.remove_stale_temp_files()?;
    if stale > 0 {
        progress(Progress::Notice(format!(
            "removed {stale} temp file(s) left by an interrupted write"
        )));
    }
    let (checkpoint, opened) = Checkpoint::open(out.root(), &rpg_sha256(rpg)?)?;
    if let Some((moved, why)) = &opened.corrupt {
        let moved: Vec<String> = moved.iter().map(|p| p.display().to_string()).collect();
        progress(Progress::Notice(format!(
            "checkpoint was corrupt ({why}); backed up to {} and starting over",
            moved.join(", ")
        )));
    } else if let Some((moved, why)) = &opened.compact_rebuilt {
        let moved: Vec<String> = moved.iter().map(|p| p.display().to_string()).collect();
        progress(Progress::Notice(format!(
            "{} was damaged ({why}; kept as {}); rebuilt from the journal, resuming {} node record(s)",
            crate::layout::COMPACT,
            moved.join(", "),
            opened.resumed
        )));
    }
    if opened.corrupt.is_none() && opened.compact_rebuilt.is_none() && opened.resumed > 0 {
        progress(Progress::Notice(format!(
            "resuming: {} node record(s) in the checkpoint",
            opened.resumed
        )));
    }
    Ok((lock, checkpoint))
}

/// Files of the output that changed since zerorepo wrote them: assembly's own files are
/// rebuilt (with a notice), anything else is refused before a byte is written.
fn refuse_hand_edits(
    out: &Workspace,
    checkpoint: &mut Checkpoint,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), EngineError> {
    let found = publish::check_output(out, checkpoint);
    let (rebuilt, edited): (Vec<String>, Vec<String>) = found
        .edited
        .into_iter()
        .partition(|path| ASSEMBLY_FILES.contains(&path.as_str()));
    if !rebuilt.is_empty() {
        progress(Progress::Notice(format!(
            "{} changed by hand; assembly rebuilds {} from the plan (edit the RPG's metadata instead)",
            rebuilt.join(", "),
            if rebuilt.len() == 1 { "it" } else { "them" }
        )));
    }
    if !edited.is_empty() {
        return Err(hand_edits(out.root(), &edited));
    }
    // A batch a crash cut short was taken back in memory (its files still hold what they held
    // before it); journal that, or a second crash before the next flush would replay the
    // batch as published and mistake the untouched files for hand edits.
    checkpoint.record_flush(found.taken_back)?;
    Ok(())
}

fn hand_edits(out: &Path, edited: &[String]) -> EngineError {
    let one = edited.len() == 1;
    EngineError::BadInput(format!(
        "{} changed since zerorepo wrote {}: {}\nzerorepo would overwrite or revert {}. \
         Save your changes elsewhere (or put the files back, e.g. `git -C {} checkout -- FILE`) and run again; nothing was written.",
        out.display(),
        if one { "this file" } else { "these files" },
        edited.join(", "),
        if one { "it" } else { "them" },
        out.display(),
    ))
}

/// Removes the export blocks that assembly added to package `__init__.py` files: while nodes
/// are regenerated they could name functions that do not exist yet. Assembly adds them back.
fn strip_exports(rpg: &ValidRpg, workspace: &Workspace) -> Result<(), FsError> {
    for &position in rpg.order() {
        for file in node::files_of(rpg.node(position)) {
            if !file.ends_with("__init__.py") {
                continue;
            }
            if let Some(text) = workspace.read(&file)?
                && let Some(kept) = crate::python::without_exports(&text)
            {
                workspace.write(&file, &kept)?;
            }
        }
    }
    Ok(())
}

/// After a crash, a node that had started but not passed may have half its answer on disk:
/// put its files back as they were before it started, so the re-run starts from the same
/// state an uninterrupted run would have had.
fn restore_interrupted_nodes(
    workspace: &Workspace,
    checkpoint: &Checkpoint,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), EngineError> {
    for (id, snapshot) in workspace.pending_snapshots(SNAPSHOT_DIR)? {
        if !checkpoint.status_of(&id).is_usable() {
            workspace.restore(&snapshot)?;
            progress(Progress::Notice(format!(
                "{id} was interrupted: its files were restored to their state before it started"
            )));
        }
        workspace.discard_snapshot(SNAPSHOT_DIR, &id)?;
    }
    Ok(())
}
