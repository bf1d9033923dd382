//! The intent record that makes `code`'s final write all-or-nothing under kill -9.
//!
//! Before the first byte of a commit is written, [`begin`] saves, fsync'd, into
//! `.zerorepo/intent.json`: the old content (or absence) of every path the commit touches, as
//! the generate side's [`Snapshot`], with each file's permission bits and the directories the
//! commit will create. Then the files are written; then [`end`] removes the record. A record
//! that is still there means a commit was cut off: [`recover`], which every command that
//! takes the repository runs first, puts every old content back, removes the files the
//! commit created (and its temp files and new directories), and removes the record. A crash
//! during recovery leaves the record, so the next command finishes it.
//!
//! Everything goes through [`crate::fsutil::Workspace`], so beneath the repository and never
//! through a link. This module does not decide what is written; [`super`] does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsutil::{FsError, Snapshot, TEMP_MARKER, Workspace, beneath};

/// The record, relative to the repository root.
pub(crate) const INTENT_FILE: &str = ".zerorepo/intent.json";

#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{INTENT_FILE} is not an intent record ({0}); it was left in place")]
    Corrupt(String),
}

#[derive(Debug, Serialize, Deserialize)]
struct Intent {
    /// Every path the commit touches.
    paths: Vec<String>,
    /// Their content before it (`None`: absent).
    before: Snapshot,
    /// The permission bits of those that existed.
    modes: BTreeMap<String, u32>,
    /// Directories that did not exist before, deepest last.
    created_dirs: Vec<String>,
}

impl Intent {
    /// The record is a file of the repository, so it may have come with it (a cloned
    /// `.zerorepo/`): only paths a commit could have written are put back or removed, never
    /// git's store or zerorepo's own state (a hostile record wrote `.git/config` and a hook).
    fn check(&self) -> Result<(), IntentError> {
        for path in self.paths.iter().chain(&self.created_dirs) {
            beneath::check_repo_path(path).map_err(|why| {
                IntentError::Corrupt(format!("a path it names is refused: {why}"))
            })?;
        }
        Ok(())
    }
}

/// Saves the record of a commit about to write `paths` in `repo` (before any of them).
pub fn begin(repo: &Path, paths: &[String]) -> Result<(), IntentError> {
    let ws = Workspace::new(repo);
    let before = ws.snapshot(paths)?;
    let mut modes = BTreeMap::new();
    for path in paths {
        if let Some(mode) = ws.mode(path)? {
            modes.insert(path.clone(), mode);
        }
    }
    let mut dirs = BTreeSet::new();
    for path in paths {
        let mut at = path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            dirs.insert(parent.to_string());
            at = parent;
        }
    }
    let mut created_dirs = Vec::new();
    for dir in dirs {
        let exists = beneath::list_dir(repo, &dir).map_err(|source| IntentError::Io {
            path: dir.clone(),
            source,
        })?;
        if exists.is_none() {
            created_dirs.push(dir);
        }
    }
    let intent = Intent {
        paths: paths.to_vec(),
        before,
        modes,
        created_dirs,
    };
    let text = serde_json::to_vec(&intent).map_err(|e| IntentError::Corrupt(e.to_string()))?;
    ws.write_bytes(INTENT_FILE, &text, Some(0o600))?;
    Ok(())
}

/// The commit wrote everything: the record goes.
pub fn end(repo: &Path) -> Result<(), IntentError> {
    Ok(Workspace::new(repo).remove(INTENT_FILE)?)
}

/// Rolls back a commit that was cut off, if the repository holds a record of one. Returns
/// how many files had to be put back (`None`: there was no record).
pub(crate) fn recover(repo: &Path) -> Result<Option<usize>, IntentError> {
    let ws = Workspace::new(repo);
    let Some(bytes) = ws.read_bytes(INTENT_FILE)? else {
        remove_temp_files(repo, ".zerorepo", "intent.json")?;
        return Ok(None);
    };
    let intent: Intent =
        serde_json::from_slice(&bytes).map_err(|e| IntentError::Corrupt(e.to_string()))?;
    intent.check()?;
    let mut restored = 0;
    for path in &intent.paths {
        let Some(old) = intent.before.content(path) else {
            return Err(IntentError::Corrupt(format!("no old content for {path}")));
        };
        let now = ws.read_bytes(path)?;
        let mode = intent.modes.get(path).copied();
        match old {
            Some(old) => {
                if now.as_deref() != Some(old) || ws.mode(path)? != mode {
                    ws.write_bytes(path, old, mode)?;
                    restored += 1;
                }
            }
            None => {
                if now.is_some() {
                    ws.remove(path)?;
                    restored += 1;
                }
            }
        }
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        remove_temp_files(repo, dir, name)?;
    }
    for dir in intent.created_dirs.iter().rev() {
        beneath::remove_dir_if_empty(repo, dir).map_err(|source| IntentError::Io {
            path: dir.clone(),
            source,
        })?;
    }
    end(repo)?;
    remove_temp_files(repo, ".zerorepo", "intent.json")?;
    Ok(Some(restored))
}

/// Removes the temp files that atomic writes of `dir/name` left when they were cut off.
fn remove_temp_files(repo: &Path, dir: &str, name: &str) -> Result<(), IntentError> {
    let io = |source| IntentError::Io {
        path: dir.to_string(),
        source,
    };
    let Some(entries) = beneath::list_dir(repo, dir).map_err(io)? else {
        return Ok(());
    };
    let prefix = format!(".{name}{TEMP_MARKER}");
    for (entry, kind) in entries {
        if kind == Some(false) && entry.starts_with(&prefix) {
            let rel = if dir.is_empty() {
                entry
            } else {
                format!("{dir}/{entry}")
            };
            Workspace::new(repo).remove(&rel)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_commit_is_rolled_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let ws = Workspace::new(repo);
        ws.write("a.py", "old\n").unwrap();
        ws.write_bytes("run.sh", b"#!/bin/sh\n", Some(0o755))
            .unwrap();
        ws.write("gone.py", "kept\n").unwrap();
        let paths: Vec<String> = ["a.py", "run.sh", "gone.py", "new/deep/b.py"]
            .map(String::from)
            .to_vec();
        begin(repo, &paths).unwrap();
        // Half of the commit, then the kill.
        ws.write("a.py", "new\n").unwrap();
        ws.write_bytes("run.sh", b"echo\n", Some(0o644)).unwrap();
        ws.remove("gone.py").unwrap();
        ws.write("new/deep/b.py", "b\n").unwrap();
        std::fs::write(repo.join("new/deep/.c.py.zerorepo-tmp-1-0"), "half").unwrap();
        std::fs::write(repo.join("new/deep/.b.py.zerorepo-tmp-1-1"), "half").unwrap();
        assert_eq!(recover(repo).unwrap(), Some(4));
        assert_eq!(ws.read("a.py").unwrap().as_deref(), Some("old\n"));
        assert_eq!(ws.read("gone.py").unwrap().as_deref(), Some("kept\n"));
        assert_eq!(ws.mode("run.sh").unwrap(), Some(0o755));
        assert_eq!(ws.read("run.sh").unwrap().as_deref(), Some("#!/bin/sh\n"));
        // The temp file of a path outside the commit is not the record's to remove, so
        // `new/deep` stays; nothing else of the commit does.
        assert!(!repo.join("new/deep/b.py").exists());
        assert!(repo.join("new/deep/.c.py.zerorepo-tmp-1-0").exists());
        assert!(!repo.join("new/deep/.b.py.zerorepo-tmp-1-1").exists());
        assert_eq!(recover(repo).unwrap(), None);
        std::fs::remove_dir_all(repo.join("new")).unwrap();
        begin(repo, &paths).unwrap();
        ws.write("new/deep/b.py", "b\n").unwrap();
        assert_eq!(recover(repo).unwrap(), Some(1));
        assert!(!repo.join("new").exists());
    }

    #[test]
    fn a_record_that_names_gits_store_is_refused_and_no_mode_bit_beyond_permissions_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
        std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
        let ws = Workspace::new(repo);
        let hostile = |paths: &[&str], mode: u32| {
            let mut files = BTreeMap::new();
            let mut modes = BTreeMap::new();
            for path in paths {
                files.insert(path.to_string(), Some(b"#!/bin/sh\nid\n".to_vec()));
                modes.insert(path.to_string(), mode);
            }
            serde_json::json!({
                "paths": paths,
                "before": {"files": files},
                "modes": modes,
                "created_dirs": [],
            })
            .to_string()
        };
        for path in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".zerorepo/x",
            "../x",
        ] {
            ws.write(INTENT_FILE, &hostile(&["a.py", path], 0o755))
                .unwrap();
            let refused = recover(repo).unwrap_err();
            assert!(
                matches!(refused, IntentError::Corrupt(_)),
                "{path}: {refused}"
            );
            assert!(!repo.join("a.py").exists(), "{path}: nothing is put back");
        }
        assert_eq!(
            std::fs::read_to_string(repo.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(!repo.join(".git/hooks/pre-commit").exists());
        ws.write(INTENT_FILE, &hostile(&["x"], 0o4755)).unwrap();
        assert_eq!(recover(repo).unwrap(), Some(1));
        assert_eq!(ws.mode("x").unwrap(), Some(0o755), "no setuid bit");
        use std::os::unix::fs::PermissionsExt;
        let on_disk = std::fs::metadata(repo.join("x"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(on_disk & 0o7000, 0, "{on_disk:o}");
    }

    #[test]
    fn a_finished_commit_leaves_no_record() {
        let dir = tempfile::tempdir().unwrap();
        begin(dir.path(), &["a.py".to_string()]).unwrap();
        Workspace::new(dir.path()).write("a.py", "x\n").unwrap();
        end(dir.path()).unwrap();
        assert_eq!(recover(dir.path()).unwrap(), None);
        assert!(dir.path().join("a.py").exists());
    }
}
