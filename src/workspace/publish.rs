//! The output tree changes in batches, never in the middle of a node.
//!
//! Nodes work in a staging copy (`.zerorepo/work`): the sandbox must see real files, so the
//! engine's overlay of the output lives on disk there, and it is what a crash resumes from.
//! The output tree itself is written only by a *flush*: after every [`FLUSH_EVERY`] passed
//! nodes (`--flush-every`), at the end of each subgraph and at the end of the run. A flush
//! takes the files whose staged content differs from what was last published (dirty tracking
//! by hash), refuses any Python file that does not parse (it stays as last published and is
//! reported), journals the batch (path → sha256) *before* writing, then writes each file
//! atomically. So the output is only ever a sequence of passed states, and on resume the
//! journal tells a batch a crash cut short (a file still at its previous hash) from a user's
//! edit (any other hash).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::overlay::{Author, Overlay, OverlayError};
use crate::checkpoint::{Checkpoint, CheckpointError, Published};
use crate::fsutil::{FsError, Workspace};

/// Default number of passed nodes between flushes (`generate --flush-every`); a subgraph's
/// end and the run's end flush too.
pub(crate) const FLUSH_EVERY: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Workspace(#[from] FsError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Overlay(#[from] OverlayError),
}

/// What one flush did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flushed {
    pub written: Vec<String>,
    pub removed: Vec<String>,
    /// Python files that did not parse and were left as last published, with the error.
    pub refused: Vec<(String, String)>,
}

/// Every file under `root` (relative paths), outside hidden directories (git's store, the
/// engine's state, virtual environments) and caches, for dirty tracking and assembly. Regular
/// files and real directories only: a link or a FIFO in an output directory is none of
/// zerorepo's, and followed it would copy a host file into the staging copy (which the
/// sandbox and the model both see), loop, or hang.
pub(crate) fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name();
            // `file_type` does not follow a link.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let hidden = name.to_string_lossy().starts_with('.');
                if !hidden && name != "__pycache__" {
                    stack.push(path);
                }
            } else if kind.is_file()
                && let Ok(rel) = path.strip_prefix(root)
            {
                let rel = rel.to_string_lossy().into_owned();
                if !rel.contains(crate::fsutil::TEMP_MARKER) {
                    found.push(rel);
                }
            }
        }
    }
    found.sort();
    found
}

/// The staged files among `candidates` whose content differs from what was published
/// (path → sha256 of the staged content, `""`: staged as absent).
pub(crate) fn dirty(
    work: &Workspace,
    published: &Published,
    candidates: &[String],
) -> BTreeMap<String, String> {
    let staged = work.hashes(candidates);
    staged
        .into_iter()
        .filter(|(path, hash)| {
            let last = published.files.get(path).map_or("", String::as_str);
            hash != last
        })
        .collect()
}

/// Publishes the dirty staged files among `candidates` to `out`, through an [`Overlay`]: a
/// Python file that does not parse is left out and reported; a published file that changed
/// in the output since it was published stops the flush before anything is written.
pub fn flush(
    work: &Workspace,
    out: &Workspace,
    checkpoint: &mut Checkpoint,
    candidates: &[String],
) -> Result<Flushed, PublishError> {
    let mut report = Flushed::default();
    let mut overlay = Overlay::new(out.clone());
    for (path, hash) in dirty(work, checkpoint.published(), candidates) {
        if hash.is_empty() {
            overlay.remove(&path, Author::Generated)?;
        } else {
            let staged = work.path(&path)?;
            let io = |source| FsError::Io {
                path: staged.clone(),
                source,
            };
            let bytes = std::fs::read(&staged).map_err(io)?;
            let Ok(text) = String::from_utf8(bytes) else {
                report.refused.push((path, "not UTF-8 text".into()));
                continue;
            };
            overlay.write(&path, text, Author::Generated)?;
            let mode = std::fs::metadata(&staged).map_err(io)?.permissions().mode();
            overlay.set_mode(&path, mode)?;
        }
        if let Some(last) = checkpoint.published().files.get(&path) {
            overlay.expect_base(&path, last);
        }
    }
    for (path, why) in overlay.unparsable() {
        tracing::warn!(path, "not published: it does not parse: {why}");
        overlay.discard(&path);
        report.refused.push((path, why));
    }
    let done = overlay.commit(|batch| checkpoint.record_flush(batch))?;
    report.written = done.written;
    report.removed = done.removed;
    Ok(report)
}

/// What [`check_output`] found in the output tree on resume.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct OutputCheck {
    /// Published files whose content is neither what the journal says nor what it held
    /// before the last batch: a user's edit.
    pub edited: Vec<String>,
    /// Files of a last batch that a crash cut off, taken back (path → the hash they still
    /// have): the caller journals this when the run goes on, so a second crash before the
    /// next flush does not replay the batch as published.
    pub taken_back: BTreeMap<String, String>,
}

/// On resume: the published files whose output content is not what the journal says.
/// A file of the last batch still at its previous hash was cut off by a crash: it is marked
/// unpublished (the next flush writes it). Any other difference is a user's edit.
pub(crate) fn check_output(out: &Workspace, checkpoint: &mut Checkpoint) -> OutputCheck {
    let paths: Vec<String> = checkpoint.published().files.keys().cloned().collect();
    let actual = out.hashes(&paths);
    let mut found = OutputCheck::default();
    for (path, hash) in actual {
        let published = checkpoint.published();
        let expected = published.files.get(&path).map_or("", String::as_str);
        if hash == expected {
            continue;
        }
        if published.before_last_flush.get(&path) == Some(&hash) {
            checkpoint.unpublish(&path);
            found.taken_back.insert(path, hash);
        } else {
            found.edited.push(path);
        }
    }
    found
}

/// Sets up the staging copy from the output tree when there is none (first run, or after a
/// rollback), leaving out git's store and the engine's own state.
pub(crate) fn ensure_staging(out: &Path, work: &Path) -> Result<(), FsError> {
    if work.is_dir() {
        return Ok(());
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FsError::Io { path, source }
    };
    let partial = work.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    // Only Python files: the staging copy is where tests run, and the project metadata
    // (pyproject.toml, README) is assembly's, written to the output only.
    for rel in files_under(out) {
        if !rel.ends_with(".py") {
            continue;
        }
        let to = partial.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(out.join(&rel), &to).map_err(io(&to))?;
    }
    std::fs::create_dir_all(&partial).map_err(io(&partial))?;
    // Whole or not at all: a crash while copying leaves only the `.partial` directory.
    std::fs::rename(&partial, work).map_err(io(work))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Workspace, Workspace, Checkpoint) {
        let dir = tempfile::tempdir().unwrap();
        let out = Workspace::new(dir.path());
        let work = Workspace::new(dir.path().join(".zerorepo/work"));
        let (checkpoint, _) = Checkpoint::open(dir.path(), "rpg-hash").unwrap();
        (dir, out, work, checkpoint)
    }

    #[test]
    fn links_and_fifos_in_the_output_are_not_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(out.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.py"), "KEY = 1\n").unwrap();
        std::fs::write(out.join("src/a.py"), "A = 1\n").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.py"), out.join("src/leak.py")).unwrap();
        std::os::unix::fs::symlink(&outside, out.join("src/dir")).unwrap();
        std::os::unix::fs::symlink(".", out.join("loop")).unwrap();
        nix::unistd::mkfifo(&out.join("src/pipe.py"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(files_under(&out), ["src/a.py"]);
        let work = out.join(".zerorepo/work");
        ensure_staging(&out, &work).unwrap();
        assert!(work.join("src/a.py").is_file());
        assert!(!work.join("src/leak.py").exists() && !work.join("src/dir").exists());
    }

    #[test]
    fn a_flush_publishes_only_dirty_files_and_refuses_what_does_not_parse() {
        let (_dir, out, work, mut checkpoint) = setup();
        work.write("src/a.py", "def a():\n    return 1\n").unwrap();
        work.write("src/b.py", "def b(:\n").unwrap();
        let candidates = vec!["src/a.py".to_string(), "src/b.py".to_string()];
        let first = flush(&work, &out, &mut checkpoint, &candidates).unwrap();
        assert_eq!(first.written, ["src/a.py"]);
        assert_eq!(first.refused.len(), 1);
        assert_eq!(
            out.read("src/b.py").unwrap(),
            None,
            "a broken file is never published"
        );
        // Nothing changed: nothing to do.
        let second = flush(&work, &out, &mut checkpoint, &candidates).unwrap();
        assert!(second.written.is_empty() && second.removed.is_empty());
        // A removal in the staging copy is published as a removal.
        work.remove("src/a.py").unwrap();
        let third = flush(&work, &out, &mut checkpoint, &candidates).unwrap();
        assert_eq!(third.removed, ["src/a.py"]);
        assert_eq!(out.read("src/a.py").unwrap(), None);
    }

    #[test]
    fn a_batch_cut_off_by_a_crash_is_not_taken_for_an_edit_but_an_edit_is() {
        let (dir, out, work, mut checkpoint) = setup();
        work.write("a.py", "x = 1\n").unwrap();
        work.write("b.py", "y = 1\n").unwrap();
        let candidates = vec!["a.py".to_string(), "b.py".to_string()];
        flush(&work, &out, &mut checkpoint, &candidates).unwrap();
        // The next batch is journalled, then the crash comes before b.py is written.
        work.write("a.py", "x = 2\n").unwrap();
        work.write("b.py", "y = 2\n").unwrap();
        let batch = dirty(&work, checkpoint.published(), &candidates);
        checkpoint.record_flush(batch).unwrap();
        out.write("a.py", "x = 2\n").unwrap();
        drop(checkpoint);
        let (mut reopened, _) = Checkpoint::open(dir.path(), "rpg-hash").unwrap();
        assert!(check_output(&out, &mut reopened).edited.is_empty());
        let finished = flush(&work, &out, &mut reopened, &candidates).unwrap();
        assert_eq!(
            finished.written,
            ["b.py"],
            "the next flush finishes the batch"
        );
        // A user's change is reported, not overwritten.
        out.write("a.py", "x = 'mine'\n").unwrap();
        assert_eq!(check_output(&out, &mut reopened).edited, ["a.py"]);
    }

    #[test]
    fn an_edit_made_during_a_run_stops_the_flush_before_any_write() {
        let (_dir, out, work, mut checkpoint) = setup();
        let candidates = vec!["a.py".to_string(), "b.py".to_string()];
        work.write("a.py", "x = 1\n").unwrap();
        flush(&work, &out, &mut checkpoint, &candidates).unwrap();
        out.write("a.py", "x = 'mine'\n").unwrap();
        work.write("a.py", "x = 2\n").unwrap();
        work.write("b.py", "y = 2\n").unwrap();
        let err = flush(&work, &out, &mut checkpoint, &candidates).unwrap_err();
        assert!(err.to_string().contains("a.py"), "{err}");
        assert_eq!(out.read("a.py").unwrap().as_deref(), Some("x = 'mine'\n"));
        assert_eq!(
            out.read("b.py").unwrap(),
            None,
            "nothing of the batch was written"
        );
    }
}
