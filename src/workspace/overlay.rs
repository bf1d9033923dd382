//! Pending changes to a directory, held in memory and committed all at once.
//!
//! An [`Overlay`] sits over a directory: reads see the pending content first and the disk
//! second; writes, removals, mode changes and patches (the hunks of [`crate::edit::hunk`]) stay
//! in memory. Each entry remembers who wrote it ([`Author`]) and the hash the file had on disk
//! when it was first touched. [`Overlay::commit`] is all or nothing: it refuses the whole batch
//! when a Python file does not parse or a file changed on disk since it was read (somebody else
//! edited it), and otherwise hands the batch to a journal callback *before* writing each file
//! atomically with its mode. That order is what lets a crash be told from a user's edit later.
//!
//! The engine's flush ([`super::publish`]) moves staged files into the output tree through an
//! overlay; the overlay serialises to JSON so a pending change set can be shown (`--json`) or
//! kept. Nodes themselves work in an on-disk staging copy, because the sandbox has to run
//! their tests on real files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fsutil::{FsError, Workspace, content_hash};

/// Who wrote a pending change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    /// The engine (a node's passed code or tests, assembly's files).
    Generated,
    /// A person (an edit the user asked for or made).
    Human,
    /// Anything else: files copied in, tools' output.
    External,
}

/// One pending change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The new text; `None` removes the file.
    pub content: Option<String>,
    /// Unix permission bits to give the file (`None`: new files get 0644, existing ones keep theirs).
    pub mode: Option<u32>,
    pub source: Author,
    /// sha256 of the file on disk when the overlay first touched it (`""`: it did not exist).
    pub base: String,
}

/// How a file differs from the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
    /// Same content, other permission bits.
    Mode,
}

/// One file of [`Overlay::diff_with_disk`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub kind: ChangeKind,
    pub source: Author,
    /// Unified diff of the text (3 lines of context); empty for a mode change.
    pub diff: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    #[error(transparent)]
    Workspace(#[from] FsError),
    #[error("{path} is not UTF-8 text")]
    NotText { path: String },
    #[error("changed on disk since zerorepo last saw them, so nothing was written: {}", .0.join(", "))]
    Conflicts(Vec<String>),
    #[error("Python files that do not parse, nothing written: {}", .0.iter().map(|(p, why)| format!("{p} ({why})")).collect::<Vec<_>>().join(", "))]
    Unparsable(Vec<(String, String)>),
    #[error("the journal refused the batch: {0}")]
    Journal(String),
    #[error("not an overlay: {0}")]
    Format(String),
}

/// Pending changes over the directory of a [`Workspace`].
#[derive(Debug, Clone)]
pub struct Overlay {
    disk: Workspace,
    entries: BTreeMap<String, Entry>,
}

/// What a commit wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    pub written: Vec<String>,
    pub removed: Vec<String>,
}

impl Overlay {
    pub fn new(disk: Workspace) -> Overlay {
        Overlay {
            disk,
            entries: BTreeMap::new(),
        }
    }

    pub fn entries(&self) -> &BTreeMap<String, Entry> {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The text a reader sees: the pending change, else the disk.
    pub fn read(&self, path: &str) -> Result<Option<String>, OverlayError> {
        let key = key(&self.disk, path)?;
        match self.entries.get(&key) {
            Some(entry) => Ok(entry.content.clone()),
            None => self.disk_text(&key),
        }
    }

    fn disk_text(&self, path: &str) -> Result<Option<String>, OverlayError> {
        match self.disk.read_bytes(path)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| OverlayError::NotText { path: path.into() }),
        }
    }

    fn entry(&mut self, path: &str, source: Author) -> Result<&mut Entry, OverlayError> {
        use std::collections::btree_map::Entry as Slot;
        let key = key(&self.disk, path)?;
        let entry = match self.entries.entry(key) {
            Slot::Occupied(slot) => slot.into_mut(),
            Slot::Vacant(slot) => {
                let fresh = untouched(&self.disk, slot.key(), source)?;
                slot.insert(fresh)
            }
        };
        entry.source = source;
        Ok(entry)
    }

    pub fn write(
        &mut self,
        path: &str,
        content: impl Into<String>,
        source: Author,
    ) -> Result<(), OverlayError> {
        self.entry(path, source)?.content = Some(content.into());
        Ok(())
    }

    pub fn remove(&mut self, path: &str, source: Author) -> Result<(), OverlayError> {
        self.entry(path, source)?.content = None;
        Ok(())
    }

    pub fn set_mode(&mut self, path: &str, mode: u32) -> Result<(), OverlayError> {
        let source = self
            .entries
            .get(&key(&self.disk, path)?)
            .map_or(Author::Generated, |e| e.source);
        self.entry(path, source)?.mode = Some(mode & crate::fsutil::beneath::PERMISSION_BITS);
        Ok(())
    }

    /// Sets the hash the file must still have on disk at commit (by default the hash it had
    /// when first touched): for callers that know what they last wrote there.
    pub(crate) fn expect_base(&mut self, path: &str, hash: &str) {
        if let Some(entry) = key(&self.disk, path)
            .ok()
            .and_then(|key| self.entries.get_mut(&key))
        {
            entry.base = hash.to_string();
        }
    }

    /// Drops the pending change of a file: the disk stays as it is.
    pub(crate) fn discard(&mut self, path: &str) -> Option<Entry> {
        self.entries.remove(&key(&self.disk, path).ok()?)
    }

    /// Python files (modules and `.pyi` stubs, which are Python syntax too) whose pending
    /// text does not parse, with the first error.
    pub(crate) fn unparsable(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .filter(|(path, _)| path.ends_with(".py") || path.ends_with(".pyi"))
            .filter_map(|(path, entry)| {
                let text = entry.content.as_deref()?;
                let why = match crate::symbols::check::tree_sitter_errors(text) {
                    Ok(errors) => errors.first()?.to_string(),
                    Err(e) => e.to_string(),
                };
                Some((path.clone(), why))
            })
            .collect()
    }

    /// The pending changes that differ from the disk now, each with a unified diff.
    pub(crate) fn diff_with_disk(&self) -> Result<Vec<FileDiff>, OverlayError> {
        let mut diffs = Vec::new();
        for (path, entry) in &self.entries {
            let on_disk = self.disk_text(path)?;
            let kind = match (&on_disk, &entry.content) {
                (None, None) => continue,
                (None, Some(_)) => ChangeKind::Added,
                (Some(_), None) => ChangeKind::Removed,
                (Some(old), Some(new)) if old != new => ChangeKind::Modified,
                (Some(_), Some(_))
                    if entry.mode.is_some_and(|m| Some(m) != self.disk_mode(path)) =>
                {
                    ChangeKind::Mode
                }
                _ => continue,
            };
            let diff = match kind {
                ChangeKind::Mode => String::new(),
                _ => unified_diff(
                    path,
                    on_disk.as_deref().unwrap_or(""),
                    entry.content.as_deref().unwrap_or(""),
                ),
            };
            diffs.push(FileDiff {
                path: path.clone(),
                kind,
                source: entry.source,
                diff,
            });
        }
        Ok(diffs)
    }

    fn disk_mode(&self, path: &str) -> Option<u32> {
        self.disk.mode(path).ok().flatten()
    }

    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(&self.entries)
    }

    pub fn from_json(disk: Workspace, text: &str) -> Result<Overlay, OverlayError> {
        let read: BTreeMap<String, Entry> =
            serde_json::from_str(text).map_err(|e| OverlayError::Format(e.to_string()))?;
        let mut entries = BTreeMap::new();
        for (path, entry) in read {
            let key = key(&disk, &path)?;
            if entries.contains_key(&key) {
                return Err(OverlayError::Format(format!(
                    "two entries for {key} (one spelled {path})"
                )));
            }
            entries.insert(key, entry);
        }
        Ok(Overlay { disk, entries })
    }

    /// Writes every pending change, or nothing. Refused as a whole when a Python file does not
    /// parse, or when a file on disk is neither at its expected base hash nor already at the
    /// new content. `journal` receives the batch (path → sha256 of the new content, `""` for a
    /// removal; files already at their new content included) before the first write; each
    /// file that differs is then written atomically with its mode.
    pub fn commit<E: std::fmt::Display>(
        self,
        journal: impl FnOnce(BTreeMap<String, String>) -> Result<(), E>,
    ) -> Result<Committed, OverlayError> {
        let unparsable = self.unparsable();
        if !unparsable.is_empty() {
            return Err(OverlayError::Unparsable(unparsable));
        }
        let mut batch = BTreeMap::new();
        let mut to_write = Vec::new();
        let mut conflicts = Vec::new();
        for (path, entry) in &self.entries {
            let now = self
                .disk
                .read_bytes(path)?
                .as_deref()
                .map(content_hash)
                .unwrap_or_default();
            let new = entry
                .content
                .as_deref()
                .map(|t| content_hash(t.as_bytes()))
                .unwrap_or_default();
            let mode_differs = entry.mode.is_some() && entry.mode != self.disk_mode(path);
            if now != new || mode_differs {
                to_write.push(path.clone());
            }
            if now != entry.base && now != new {
                conflicts.push(path.clone());
            }
            batch.insert(path.clone(), new);
        }
        if !conflicts.is_empty() {
            return Err(OverlayError::Conflicts(conflicts));
        }
        journal(batch.clone()).map_err(|e| OverlayError::Journal(e.to_string()))?;
        let mut done = Committed::default();
        for path in to_write {
            let entry = &self.entries[&path];
            match &entry.content {
                Some(text) => {
                    let mode = entry.mode.or(self.disk_mode(&path)).unwrap_or(0o644);
                    tracing::debug!(path, mode = format!("{mode:o}"), "commit");
                    self.disk.write_bytes(&path, text.as_bytes(), Some(mode))?;
                    done.written.push(path);
                }
                None => {
                    self.disk.remove(&path)?;
                    done.removed.push(path);
                }
            }
        }
        Ok(done)
    }
}

/// The spelling of `path` that entries are keyed by, if the workspace accepts the path at all:
/// `a//b.py`, `a/./b.py` and `a/b.py/` all name `a/b.py`. Keyed as written, one file could
/// hold two pending changes: a commit would then write it twice (the last silently winning),
/// or fail half-way on the spelling with a trailing `/`, and journal it under a name the rest
/// of the engine never uses.
fn key(disk: &Workspace, path: &str) -> Result<String, OverlayError> {
    disk.path(path)?;
    // Accepted paths have only normal components; each is a piece of `path`, so UTF-8.
    let parts: Vec<&str> = std::path::Path::new(path)
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    Ok(parts.join("/"))
}

/// An entry for a file the overlay has not touched yet: its disk content and hash.
fn untouched(disk: &Workspace, path: &str, source: Author) -> Result<Entry, OverlayError> {
    let bytes = disk.read_bytes(path)?;
    let content = match bytes.as_deref().map(std::str::from_utf8) {
        None => None,
        Some(Ok(text)) => Some(text.to_string()),
        Some(Err(_)) => return Err(OverlayError::NotText { path: path.into() }),
    };
    Ok(Entry {
        content,
        mode: None,
        source,
        base: bytes.as_deref().map(content_hash).unwrap_or_default(),
    })
}

/// A unified diff of two texts with 3 lines of context (`--- a/path`, `+++ b/path`).
pub(crate) fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = line_ops(&a, &b);
    const CONTEXT: usize = 3;
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let changed: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].0 != ' ').collect();
    let mut i = 0;
    while i < changed.len() {
        // A hunk: changes closer than twice the context share one.
        let first = changed[i];
        let mut last = first;
        while i + 1 < changed.len() && changed[i + 1] <= last + 2 * CONTEXT + 1 {
            i += 1;
            last = changed[i];
        }
        i += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let old_start = ops[..start].iter().filter(|o| o.0 != '+').count();
        let new_start = ops[..start].iter().filter(|o| o.0 != '-').count();
        let old_len = ops[start..end].iter().filter(|o| o.0 != '+').count();
        let new_len = ops[start..end].iter().filter(|o| o.0 != '-').count();
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            old_start + usize::from(old_len > 0),
            new_start + usize::from(new_len > 0)
        ));
        for (tag, line) in &ops[start..end] {
            out.push(*tag);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Line operations turning `a` into `b` (`' '` keep, `'-'` remove, `'+'` add), from a longest
/// common subsequence; common head and tail are trimmed first so typical edits stay cheap.
fn line_ops<'t>(a: &[&'t str], b: &[&'t str]) -> Vec<(char, &'t str)> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
    let mut lcs = vec![vec![0u32; mb.len() + 1]; ma.len() + 1];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            lcs[i][j] = if ma[i] == mb[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = a[..head].iter().map(|l| (' ', *l)).collect();
    let (mut i, mut j) = (0, 0);
    while i < ma.len() || j < mb.len() {
        if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
            ops.push((' ', ma[i]));
            i += 1;
            j += 1;
        } else if i < ma.len() && (j == mb.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', ma[i]));
            i += 1;
        } else {
            ops.push(('+', mb[j]));
            j += 1;
        }
    }
    ops.extend(a[a.len() - tail..].iter().map(|l| (' ', *l)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        ws.write("a.py", "def a():\n    return 1\n").unwrap();
        (dir, ws)
    }

    #[test]
    fn reads_see_pending_changes_and_the_disk_is_untouched_until_commit() {
        let (_dir, ws) = setup();
        let mut overlay = Overlay::new(ws.clone());
        overlay
            .write("a.py", "def a():\n    return 2\n", Author::Generated)
            .unwrap();
        overlay.write("pkg/b.py", "B = 1\n", Author::Human).unwrap();
        assert_eq!(
            overlay.read("a.py").unwrap().as_deref(),
            Some("def a():\n    return 2\n")
        );
        assert_eq!(
            ws.read("a.py").unwrap().as_deref(),
            Some("def a():\n    return 1\n")
        );
        assert_eq!(ws.read("pkg/b.py").unwrap(), None);
        assert!(overlay.write("../x.py", "", Author::Human).is_err());
        let mut journalled = BTreeMap::new();
        let done = overlay
            .commit(|batch| {
                journalled = batch;
                Ok::<(), String>(())
            })
            .unwrap();
        assert_eq!(done.written, ["a.py", "pkg/b.py"]);
        assert_eq!(journalled.len(), 2);
        assert_eq!(ws.read("pkg/b.py").unwrap().as_deref(), Some("B = 1\n"));
    }

    /// Found by fuzzing (fuzz/fuzz_targets/overlay_path.rs): entries were keyed by the path
    /// as written, so `src//b.py`, `src/./b.py` and `src/b.py/` were pending changes of their
    /// own beside `src/b.py`; a commit wrote the file twice, the last silently winning, or
    /// failed half-way (a rename onto `b.py/`) after writing the first.
    #[test]
    fn two_spellings_of_one_file_are_one_pending_change() {
        let (_dir, ws) = setup();
        let mut overlay = Overlay::new(ws.clone());
        overlay
            .write("src/b.py", "B = 1\n", Author::Generated)
            .unwrap();
        overlay
            .write("src//b.py", "B = 2\n", Author::Generated)
            .unwrap();
        overlay
            .write("src/./b.py/", "B = 3\n", Author::Human)
            .unwrap();
        overlay.set_mode("src/b.py/", 0o755).unwrap();
        assert_eq!(overlay.entries().keys().collect::<Vec<_>>(), ["src/b.py"]);
        assert_eq!(
            overlay.read("src//b.py").unwrap().as_deref(),
            Some("B = 3\n")
        );
        assert!(overlay.discard("../src/b.py").is_none());
        let mut journalled = BTreeMap::new();
        let done = overlay
            .commit(|batch| {
                journalled = batch;
                Ok::<(), String>(())
            })
            .unwrap();
        assert_eq!(done.written, ["src/b.py"]);
        assert_eq!(journalled.keys().collect::<Vec<_>>(), ["src/b.py"]);
        assert_eq!(ws.read("src/b.py").unwrap().as_deref(), Some("B = 3\n"));
        let entry = r#"{"content": "x", "source": "human", "base": ""}"#;
        let two = format!(r#"{{"a.py": {entry}, "a.py/": {entry}}}"#);
        assert!(Overlay::from_json(ws, &two).is_err());
    }

    #[test]
    fn the_diff_names_each_change_with_its_source() {
        let (_dir, ws) = setup();
        ws.write("gone.py", "X = 1\n").unwrap();
        let mut overlay = Overlay::new(ws);
        overlay
            .write("a.py", "def a():\n    return 2\n", Author::Generated)
            .unwrap();
        overlay
            .write("new.py", "Y = 2\n", Author::External)
            .unwrap();
        overlay.remove("gone.py", Author::Human).unwrap();
        overlay.write("same.py", "", Author::Generated).unwrap();
        overlay.remove("same.py", Author::Generated).unwrap();
        let diffs = overlay.diff_with_disk().unwrap();
        let kinds: Vec<_> = diffs
            .iter()
            .map(|d| (d.path.as_str(), d.kind, d.source))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.py", ChangeKind::Modified, Author::Generated),
                ("gone.py", ChangeKind::Removed, Author::Human),
                ("new.py", ChangeKind::Added, Author::External),
            ]
        );
        assert_eq!(
            diffs[0].diff,
            "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def a():\n-    return 1\n+    return 2\n"
        );
    }

    #[test]
    fn serialised_overlays_round_trip() {
        let (_dir, ws) = setup();
        let mut overlay = Overlay::new(ws.clone());
        overlay.write("a.py", "A = 1\n", Author::Human).unwrap();
        overlay.set_mode("a.py", 0o755).unwrap();
        let back = Overlay::from_json(ws.clone(), &overlay.to_json().unwrap()).unwrap();
        assert_eq!(back.entries(), overlay.entries());
        assert!(Overlay::from_json(ws.clone(), "{\"../x\": {}}").is_err());
        assert!(Overlay::from_json(ws, "[]").is_err());
    }

    #[test]
    fn a_commit_is_refused_whole_on_a_syntax_error_or_a_concurrent_edit() {
        let (_dir, ws) = setup();
        let mut overlay = Overlay::new(ws.clone());
        overlay.write("b.py", "B = 1\n", Author::Generated).unwrap();
        overlay
            .write("c.py", "def c(:\n", Author::Generated)
            .unwrap();
        let err = overlay
            .clone()
            .commit(|_| Ok::<(), String>(()))
            .unwrap_err();
        assert!(
            matches!(err, OverlayError::Unparsable(ref f) if f[0].0 == "c.py"),
            "{err}"
        );
        // Said in words (a model is told it too), not as a struct's debug form.
        assert!(err.to_string().contains("c.py (line 1, column "), "{err}");
        assert_eq!(ws.read("b.py").unwrap(), None, "nothing written");
        overlay.discard("c.py");
        let mut stub = overlay.clone();
        stub.write("c.pyi", "def c(x: int) -> int: ...\n", Author::Generated)
            .unwrap();
        assert!(stub.unparsable().is_empty(), "a stub's syntax is Python's");
        stub.write("c.pyi", "def c(x: int -> int: ...\n", Author::Generated)
            .unwrap();
        assert_eq!(stub.unparsable()[0].0, "c.pyi");
        overlay
            .write("a.py", "def a():\n    return 5\n", Author::Generated)
            .unwrap();
        ws.write("a.py", "def a():\n    return 'mine'\n").unwrap();
        let err = overlay
            .clone()
            .commit(|_| Ok::<(), String>(()))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "changed on disk since zerorepo last saw them, so nothing was written: a.py"
        );
        assert_eq!(ws.read("b.py").unwrap(), None, "nothing written");
        // A journal that fails stops the commit before any write.
        ws.write("a.py", "def a():\n    return 1\n").unwrap();
        let err = overlay.clone().commit(|_| Err("disk full")).unwrap_err();
        assert!(err.to_string().contains("disk full"));
        assert_eq!(ws.read("b.py").unwrap(), None);
        overlay.commit(|_| Ok::<(), String>(())).unwrap();
        assert_eq!(ws.read("b.py").unwrap().as_deref(), Some("B = 1\n"));
    }

    #[test]
    fn modes_are_written_with_the_file_and_kept_when_not_given() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ws) = setup();
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        let mut overlay = Overlay::new(ws.clone());
        overlay
            .write("run.py", "print(1)\n", Author::Generated)
            .unwrap();
        overlay.set_mode("run.py", 0o755).unwrap();
        overlay.commit(|_| Ok::<(), String>(())).unwrap();
        assert_eq!(mode("run.py"), 0o755);
        let mut overlay = Overlay::new(ws.clone());
        overlay
            .write("run.py", "print(2)\n", Author::Generated)
            .unwrap();
        overlay.commit(|_| Ok::<(), String>(())).unwrap();
        assert_eq!(mode("run.py"), 0o755, "an existing file keeps its mode");
        let mut overlay = Overlay::new(ws);
        overlay.set_mode("run.py", 0o644).unwrap();
        assert_eq!(overlay.diff_with_disk().unwrap()[0].kind, ChangeKind::Mode);
        overlay.commit(|_| Ok::<(), String>(())).unwrap();
        assert_eq!(mode("run.py"), 0o644);
    }

    #[test]
    fn unified_diffs_split_distant_changes_into_hunks() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l2\n", "two\n").replace("l18\n", "");
        let diff = unified_diff("f", &old, &new);
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(diff.contains("@@ -1,5 +1,5 @@\n l1\n-l2\n+two\n"), "{diff}");
        assert!(diff.contains("@@ -15,6 +15,5 @@\n"), "{diff}");
        assert_eq!(
            unified_diff("f", "", "a\n"),
            "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+a\n"
        );
    }
}
