//! Files, the bottom layer: atomic writes, content hashes, and [`Workspace`], a directory
//! tree whose paths never leave its root, with per-node snapshots so a failed node can be
//! reverted. It uses nothing else of the crate, so every layer above may use it.
//!
//! Writes go through temp file + `sync_data` + rename + directory fsync, so a crash at any
//! point leaves either the old or the new content of a file, never a mix. A [`Workspace`]
//! reads, writes and deletes through [`beneath`]: beneath its root, never through a link.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

pub mod beneath;

#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("refusing path `{0}`: it must be relative and stay inside the output directory")]
    OutsideRoot(String),
}

/// Names that are no part of a generated repository, at any depth: git's store, the engine's
/// state, byte-code caches. A scratch copy for a sandbox leaves them out.
pub(crate) const NOT_THE_REPOSITORY: &[&str] = &[".git", ".zerorepo", "__pycache__"];

/// Copies the regular files and directories under `from` to `to`, leaving out entries named
/// as one of `left_out` at any depth. Symbolic links and special files are left out too: a
/// link in a generated tree could point anywhere on this machine, and following it would copy
/// what it points at into a sandbox's view.
pub fn copy_tree(from: &Path, to: &Path, left_out: &[&str]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        for entry in std::fs::read_dir(&src)? {
            let entry = entry?;
            let name = entry.file_name();
            if left_out.iter().any(|l| name == *l) {
                continue;
            }
            let kind = entry.file_type()?;
            let target = dst.join(&name);
            if kind.is_dir() {
                std::fs::create_dir(&target)?;
                stack.push((entry.path(), target));
            } else if kind.is_file() {
                std::fs::copy(entry.path(), &target)?;
            }
        }
    }
    Ok(())
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FsError + '_ {
    move |source| FsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// sha256 of a file's content, hex.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// Part of every temp file name, so leftovers of a crash can be recognised and removed.
pub(crate) const TEMP_MARKER: &str = ".zerorepo-tmp-";

/// Writes `content` to `path` atomically: temp file in the same directory, fsync, rename,
/// fsync of the directory. Parent directories are created.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> Result<(), FsError> {
    // A bare file name's parent is the empty path, which cannot be opened to be synced.
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{name}.zerorepo-tmp-{}-{unique}",
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(content)?;
        file.sync_data()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}

/// The output repository root.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// Contents of files before a node touched them (`None`: the file did not exist). It is
/// serialisable so the engine can persist it before touching anything: after a crash the
/// node's files are put back exactly, whatever the node had written.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Snapshot {
    files: BTreeMap<String, Option<Vec<u8>>>,
}

/// A snapshot as saved on disk, with the node it belongs to: the file is named by a hash of
/// the node id, since an id is plan text (`x.json/y`, `../a`) and no safe file name.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    node: Option<String>,
    #[serde(flatten)]
    snapshot: Snapshot,
}

/// `dir/<sha256 of the id, 32 hex digits>.json`.
fn snapshot_file(dir: &str, id: &str) -> String {
    let hash = content_hash(id.as_bytes());
    format!("{dir}/{}.json", &hash[..32.min(hash.len())])
}

impl Snapshot {
    /// What the snapshot holds for `path`: `None` if it does not cover it, `Some(None)` if the
    /// file did not exist.
    pub fn content(&self, path: &str) -> Option<Option<&[u8]>> {
        self.files.get(path).map(|c| c.as_deref())
    }
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Workspace {
        Workspace { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a repository-relative path, refusing anything that could leave the root.
    pub fn path(&self, relative: &str) -> Result<PathBuf, FsError> {
        let rel = Path::new(relative);
        let clean =
            !relative.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !clean {
            return Err(FsError::OutsideRoot(relative.to_string()));
        }
        Ok(self.root.join(rel))
    }

    /// Current text of a file, or `None` if it does not exist.
    pub fn read(&self, relative: &str) -> Result<Option<String>, FsError> {
        let path = self.path(relative)?;
        match self.read_bytes(relative)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
                io_err(&path)(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            }),
        }
    }

    /// Current bytes of a file, or `None` if it does not exist.
    pub(crate) fn read_bytes(&self, relative: &str) -> Result<Option<Vec<u8>>, FsError> {
        let path = self.path(relative)?;
        beneath::read(&self.root, &self.key(relative)).map_err(io_err(&path))
    }

    /// The permission bits of a regular file, `None` when there is none.
    pub fn mode(&self, relative: &str) -> Result<Option<u32>, FsError> {
        let path = self.path(relative)?;
        beneath::mode(&self.root, &self.key(relative)).map_err(io_err(&path))
    }

    pub fn write(&self, relative: &str, content: &str) -> Result<(), FsError> {
        self.write_bytes(relative, content.as_bytes(), None)
    }

    /// Writes atomically beneath the root with the given permission bits (`None`: those of
    /// the file it replaces).
    pub(crate) fn write_bytes(
        &self,
        relative: &str,
        content: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError> {
        let path = self.path(relative)?;
        tracing::debug!(path = relative, bytes = content.len(), "write");
        beneath::write_atomic(&self.root, &self.key(relative), content, mode).map_err(io_err(&path))
    }

    /// `relative` spelled as [`beneath`] takes it (`a//b` and `a/b/` name `a/b`); only for
    /// paths [`Workspace::path`] accepted.
    fn key(&self, relative: &str) -> String {
        Path::new(relative)
            .components()
            .filter_map(|c| c.as_os_str().to_str())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Removes the temp files of atomic writes that a crash (kill -9) cut off: they never
    /// replaced anything, so they are garbage. Returns how many were removed.
    pub(crate) fn remove_stale_temp_files(&self) -> Result<usize, FsError> {
        let mut removed = 0;
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&dir)(e)),
            };
            for entry in entries {
                let entry = entry.map_err(io_err(&dir))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(io_err(&path))?;
                if kind.is_dir() {
                    stack.push(path);
                } else if entry.file_name().to_string_lossy().contains(TEMP_MARKER) {
                    std::fs::remove_file(&path).map_err(io_err(&path))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Deletes a file; a file that is already gone is fine.
    pub fn remove(&self, relative: &str) -> Result<(), FsError> {
        let path = self.path(relative)?;
        beneath::remove(&self.root, &self.key(relative))
            .map(drop)
            .map_err(io_err(&path))
    }

    /// Writes only if the content differs (keeps mtimes and avoids needless fsyncs).
    /// A file that cannot be read as text (a flipped bit) is simply replaced.
    pub(crate) fn write_if_changed(&self, relative: &str, content: &str) -> Result<(), FsError> {
        if self.read_bytes(relative)?.as_deref() == Some(content.as_bytes()) {
            return Ok(());
        }
        self.write(relative, content)
    }

    /// sha256 of each file's bytes (`""` for a file that does not exist or cannot be read).
    pub(crate) fn hashes(&self, paths: &[String]) -> BTreeMap<String, String> {
        paths
            .iter()
            .map(|rel| {
                let bytes = self.read_bytes(rel).ok().flatten();
                (
                    rel.clone(),
                    bytes.map(|b| content_hash(&b)).unwrap_or_default(),
                )
            })
            .collect()
    }

    /// Remembers the current content of `paths` so [`Workspace::restore`] can put it back.
    pub(crate) fn snapshot(&self, paths: &[String]) -> Result<Snapshot, FsError> {
        let mut files = BTreeMap::new();
        for rel in paths {
            files.insert(rel.clone(), self.read_bytes(rel)?);
        }
        Ok(Snapshot { files })
    }

    /// Puts every file of the snapshot back as it was (deleting files that did not exist).
    pub(crate) fn restore(&self, snapshot: &Snapshot) -> Result<(), FsError> {
        for (rel, content) in &snapshot.files {
            match content {
                Some(bytes) => {
                    if self.read_bytes(rel).ok().flatten().as_deref() != Some(bytes.as_slice()) {
                        self.write_bytes(rel, bytes, None)?;
                    }
                }
                None => self.remove(rel)?,
            }
        }
        Ok(())
    }
}

impl Workspace {
    /// Persists a node's snapshot under `dir` (atomic), before the node touches its files.
    pub(crate) fn save_snapshot(
        &self,
        dir: &str,
        id: &str,
        snapshot: &Snapshot,
    ) -> Result<(), FsError> {
        let path = self.path(&snapshot_file(dir, id))?;
        let saved = SavedSnapshot {
            node: Some(id.to_string()),
            snapshot: snapshot.clone(),
        };
        let text = serde_json::to_vec(&saved).map_err(|e| io_err(&path)(e.into()))?;
        self.write_bytes(&snapshot_file(dir, id), &text, None)
    }

    pub(crate) fn discard_snapshot(&self, dir: &str, id: &str) -> Result<(), FsError> {
        self.remove(&snapshot_file(dir, id))
    }

    /// Snapshots left behind by nodes that did not finish, sorted by node id. An unreadable
    /// snapshot file is an error: silently skipping it could leave a half-written node behind.
    pub(crate) fn pending_snapshots(&self, dir: &str) -> Result<Vec<(String, Snapshot)>, FsError> {
        let folder = self.path(dir)?;
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&folder)(e)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let path = entry.map_err(io_err(&folder))?.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue; // temp files of an interrupted atomic write
            };
            let bytes = std::fs::read(&path).map_err(io_err(&path))?;
            let saved: SavedSnapshot =
                serde_json::from_slice(&bytes).map_err(|e| io_err(&path)(e.into()))?;
            // Files written before snapshots carried their node were named after it.
            let id = saved.node.unwrap_or_else(|| id.to_string());
            found.push((id, saved.snapshot));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe's `x.json/y` id made every later run fail: the snapshot of `x.json` was a file
    /// where `x.json/y`'s needed a directory. Ids are plan text, never file names.
    #[test]
    fn snapshots_of_ids_that_look_like_paths_are_saved_and_found_again() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let snapshot = ws.snapshot(&["m.py".to_string()]).unwrap();
        let ids = ["x.json", "x.json/y", "../a", "a/../../b", "."];
        for id in ids {
            ws.save_snapshot(".zerorepo/snapshots", id, &snapshot)
                .unwrap();
        }
        let found: Vec<String> = ws
            .pending_snapshots(".zerorepo/snapshots")
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let mut expected: Vec<String> = ids.map(String::from).to_vec();
        expected.sort();
        assert_eq!(found, expected);
        for id in ids {
            ws.discard_snapshot(".zerorepo/snapshots", id).unwrap();
        }
        assert!(
            ws.pending_snapshots(".zerorepo/snapshots")
                .unwrap()
                .is_empty()
        );
        assert!(
            !dir.path().join("a").exists() && !dir.path().parent().unwrap().join("b.json").exists()
        );
    }

    #[test]
    fn paths_that_leave_the_root_are_refused() {
        let ws = Workspace::new("/tmp/out");
        for bad in ["../x.py", "/etc/passwd", "a/../../b", "", "./a"] {
            assert!(ws.path(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ws.path("src/a.py").unwrap(),
            PathBuf::from("/tmp/out/src/a.py")
        );
    }

    #[test]
    fn snapshot_and_restore_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        ws.write("a.py", "old\n").unwrap();
        let snap = ws.snapshot(&["a.py".into(), "new/b.py".into()]).unwrap();
        ws.write("a.py", "changed\n").unwrap();
        ws.write("new/b.py", "created\n").unwrap();
        ws.restore(&snap).unwrap();
        assert_eq!(ws.read("a.py").unwrap().as_deref(), Some("old\n"));
        assert_eq!(ws.read("new/b.py").unwrap(), None);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            leftovers
                .iter()
                .all(|n| !n.to_string_lossy().contains("zerorepo-tmp"))
        );
    }
}
