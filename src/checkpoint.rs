//! Generation state that survives crashes: an append-only journal plus the compact file of
//! the seed's schema.
//!
//! - `.zerorepo/journal.jsonl` is the source of truth: a header naming the RPG's sha256, then
//!   one line per state change, each `sync_data`'d before the engine moves on. A line counts
//!   only with its newline: a torn last line (kill -9 during the append) is ignored and cut
//!   off on resume; any other bad line means corruption.
//! - `docs/generation_checkpoint.json` (`{node_id: {status, timestamp, test_results,
//!   retry_count, failure_reason}}`) is rewritten atomically after every change, for people and
//!   tools. It is derived, never read when the journal exists.
//!
//! A corrupted checkpoint is moved aside (`*.corrupt-<time>`), reported, and generation starts
//! over. A checkpoint of a different RPG is refused: resuming it would mix two plans.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::write_atomic;
use crate::layout::{COMPACT, JOURNAL};

const JOURNAL_VERSION: u32 = 1;

use crate::records::{NodeRecord, NodeRecords, NodeStatus};
use crate::rpg::NodeId;

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum JournalLine {
    Header {
        version: u32,
        rpg_sha256: String,
    },
    Node {
        node: NodeId,
        // Boxed: a record is ten times the size of the other lines.
        #[serde(flatten)]
        record: Box<NodeRecord>,
    },
    /// A batch of files is about to be published to the output tree: their sha256 (`""`:
    /// removed). Written before the files, so a crash mid-batch is recognised on resume.
    Flush {
        files: BTreeMap<String, String>,
    },
}

/// What the journal says the output tree holds: the sha256 of every file the engine published,
/// and for the files of the last batch, the hash each had before it (to tell a batch cut off
/// by a crash from a user's edit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Published {
    pub files: BTreeMap<String, String>,
    pub before_last_flush: BTreeMap<String, String>,
}

impl Published {
    fn apply(&mut self, files: &BTreeMap<String, String>) {
        self.before_last_flush = files
            .keys()
            .map(|path| {
                (
                    path.clone(),
                    self.files.get(path).cloned().unwrap_or_default(),
                )
            })
            .collect();
        self.files.extend(files.clone());
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{dir} holds the checkpoint of a different RPG (sha256 {found}, this one is {expected}); \
         use another --out directory, or delete {dir}/.zerorepo to start over there"
    )]
    DifferentRpg {
        dir: PathBuf,
        found: String,
        expected: String,
    },
    #[error(transparent)]
    Write(#[from] crate::fsutil::FsError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What opening found, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Records loaded from an earlier run.
    pub resumed: usize,
    /// Where a corrupted checkpoint was moved, and why it was judged corrupt.
    pub corrupt: Option<(Vec<PathBuf>, String)>,
    /// The journal's last line was cut short by a crash and was ignored.
    pub torn_tail: bool,
    /// The compact file was damaged and is rebuilt from the intact journal: where the damaged
    /// one was moved, and why it was judged corrupt.
    pub compact_rebuilt: Option<(Vec<PathBuf>, String)>,
}

/// An open checkpoint: the journal appender and the current records.
#[derive(Debug)]
pub struct Checkpoint {
    root: PathBuf,
    journal: File,
    records: NodeRecords,
    published: Published,
}

impl Checkpoint {
    /// Opens (or creates) the checkpoint of output directory `root` for the RPG with the given
    /// hash.
    pub fn open(
        root: &Path,
        rpg_sha256: &str,
    ) -> Result<(Checkpoint, OpenReport), CheckpointError> {
        let journal_path = root.join(JOURNAL);
        let mut report = OpenReport::default();
        let mut records = NodeRecords::new();
        let mut published = Published::default();
        let mut fresh = true;
        match read_journal(&journal_path) {
            Ok(None) => {}
            Ok(Some(JournalContents {
                rpg_sha256: hash,
                records: loaded,
                published: loaded_published,
                torn,
            })) => {
                if hash != rpg_sha256 {
                    return Err(CheckpointError::DifferentRpg {
                        dir: root.to_path_buf(),
                        found: hash,
                        expected: rpg_sha256.to_string(),
                    });
                }
                if let Some(valid_len) = torn {
                    // Drop the half-written line so the next record starts on a line of its own.
                    let file = OpenOptions::new()
                        .write(true)
                        .open(&journal_path)
                        .map_err(io_err(&journal_path))?;
                    file.set_len(valid_len).map_err(io_err(&journal_path))?;
                    file.sync_all().map_err(io_err(&journal_path))?;
                }
                report.torn_tail = torn.is_some();
                records = loaded;
                published = loaded_published;
                fresh = false;
            }
            Err(why) => {
                let moved = back_up(root, &[JOURNAL, COMPACT])?;
                report.corrupt = Some((moved, why.to_string()));
            }
        }
        if report.corrupt.is_none()
            && let Err(why) = check_compact(&root.join(COMPACT))
        {
            // The compact file is rewritten from the journal below: with an intact journal
            // nothing is lost, so only the damaged file is kept aside.
            let files: &[&str] = if fresh {
                &[JOURNAL, COMPACT]
            } else {
                &[COMPACT]
            };
            let moved = back_up(root, files)?;
            if fresh {
                report.corrupt = Some((moved, why.to_string()));
            } else {
                report.compact_rebuilt = Some((moved, why.to_string()));
            }
        }
        report.resumed = records.len();
        let journal = if fresh {
            start_journal(&journal_path, rpg_sha256)?
        } else {
            OpenOptions::new()
                .append(true)
                .open(&journal_path)
                .map_err(io_err(&journal_path))?
        };
        let checkpoint = Checkpoint {
            root: root.to_path_buf(),
            journal,
            records,
            published,
        };
        checkpoint.write_compact()?;
        Ok((checkpoint, report))
    }

    pub fn records(&self) -> &NodeRecords {
        &self.records
    }

    /// What the output tree holds, as far as the engine published it.
    pub fn published(&self) -> &Published {
        &self.published
    }

    /// Forgets that the last batch reached `path` (it did not: a crash cut the batch short),
    /// so the next flush writes it again.
    pub(crate) fn unpublish(&mut self, path: &str) {
        if let Some(before) = self.published.before_last_flush.get(path) {
            self.published
                .files
                .insert(path.to_string(), before.clone());
        }
    }

    /// Journals a batch of files (path → sha256, `""`: removed) before they are written.
    pub(crate) fn record_flush(
        &mut self,
        files: BTreeMap<String, String>,
    ) -> Result<(), CheckpointError> {
        if files.is_empty() {
            return Ok(());
        }
        let line = JournalLine::Flush { files };
        self.append(&line)?;
        if let JournalLine::Flush { files } = line {
            self.published.apply(&files);
        }
        Ok(())
    }

    fn append(&mut self, line: &JournalLine) -> Result<(), CheckpointError> {
        let path = self.root.join(JOURNAL);
        let mut text = serde_json::to_string(line).map_err(|e| io_err(&path)(e.into()))?;
        text.push('\n');
        self.journal
            .write_all(text.as_bytes())
            .map_err(io_err(&path))?;
        self.journal.sync_data().map_err(io_err(&path))
    }

    pub fn status_of(&self, id: &str) -> NodeStatus {
        self.records
            .get(id)
            .map_or(NodeStatus::Pending, |r| r.status)
    }

    /// Appends a record to the journal (fsync'd) and rewrites the compact file.
    pub fn record(&mut self, node: &str, record: NodeRecord) -> Result<(), CheckpointError> {
        self.append(&JournalLine::Node {
            node: node.into(),
            record: Box::new(record.clone()),
        })?;
        self.records.insert(node.into(), record);
        self.write_compact()
    }

    fn write_compact(&self) -> Result<(), CheckpointError> {
        let path = self.root.join(COMPACT);
        let mut text =
            serde_json::to_string_pretty(&self.records).map_err(|e| io_err(&path)(e.into()))?;
        text.push('\n');
        // Unchanged bytes are not rewritten: a run that is refused (say, over a hand edit)
        // must leave the output exactly as it found it, mtimes included.
        if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
            return Ok(());
        }
        Ok(write_atomic(&path, text.as_bytes())?)
    }
}

/// Why the compact checkpoint file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// Reads the compact file of an output directory, for `zerorepo status`.
pub(crate) fn load_compact(root: &Path) -> Result<Option<NodeRecords>, CompactError> {
    let path = root.join(COMPACT);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| CompactError::Parse { path, source }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CompactError::Read { path, source }),
    }
}

/// Why a checkpoint is judged corrupt (and backed up, and the run starts over).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Corrupt {
    #[error("cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("line 1: the header was cut short")]
    HeaderCutShort,
    #[error("journal version {found}, expected {JOURNAL_VERSION}")]
    Version { found: u32 },
    #[error("line {line}: header out of place")]
    HeaderOutOfPlace { line: usize },
    #[error("line {line}: {message}")]
    BadLine { line: usize, message: String },
    #[error("journal has no header")]
    NoHeader,
    /// The compact file does not parse (or cannot be read).
    #[error("{COMPACT}: {message}")]
    Compact { message: String },
}

/// A journal as read: the RPG hash, the records, what was published, and where a torn last
/// line begins (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalContents {
    pub rpg_sha256: String,
    pub records: NodeRecords,
    pub published: Published,
    /// Byte offset where a torn last line begins: resuming cuts the file there before the next
    /// append, so that record starts on a line of its own.
    pub torn: Option<u64>,
}

/// `Ok(None)`: no journal. `Err(reason)`: corrupt.
fn read_journal(path: &Path) -> Result<Option<JournalContents>, Corrupt> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Corrupt::Unreadable {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    parse_journal(&bytes).map(Some)
}

/// Parses the bytes of a journal file. Pure, so resume's reading can be tested and fuzzed
/// without files. `Err(reason)`: corrupt (anything but a torn last line).
pub fn parse_journal(bytes: &[u8]) -> Result<JournalContents, Corrupt> {
    let mut hash = None;
    let mut records = NodeRecords::new();
    let mut published = Published::default();
    let mut torn = None;
    let mut offset = 0u64;
    // Lines and offsets in the file's bytes: the torn tail's offset is where resume cuts the
    // file, and text with bytes that are not UTF-8 is longer once U+FFFD replaced them.
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let start = offset;
        offset += line.len() as u64;
        // A record is written with its newline in one append, so a last line without one was
        // cut short, even when what is left happens to parse: it never counted, and resume
        // cuts it off. Kept, the next append would run on from it and corrupt that line.
        let Some(line) = line.strip_suffix(b"\n") else {
            if i == 0 {
                return Err(Corrupt::HeaderCutShort);
            }
            torn = Some(start);
            break;
        };
        // Bytes that are not UTF-8 (a disk error) read as U+FFFD, as they always have.
        match serde_json::from_str::<JournalLine>(&String::from_utf8_lossy(line)) {
            Ok(JournalLine::Header {
                version,
                rpg_sha256,
            }) if i == 0 => {
                if version != JOURNAL_VERSION {
                    return Err(Corrupt::Version { found: version });
                }
                hash = Some(rpg_sha256);
            }
            Ok(JournalLine::Node { node, record }) if i > 0 => {
                records.insert(node, *record);
            }
            Ok(JournalLine::Flush { files }) if i > 0 => {
                published.apply(&files);
            }
            Ok(_) => return Err(Corrupt::HeaderOutOfPlace { line: i + 1 }),
            Err(e) => {
                return Err(Corrupt::BadLine {
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    match hash {
        Some(rpg_sha256) => Ok(JournalContents {
            rpg_sha256,
            records,
            published,
            torn,
        }),
        None => Err(Corrupt::NoHeader),
    }
}

fn check_compact(path: &Path) -> Result<(), Corrupt> {
    let corrupt = |message: String| Corrupt::Compact { message };
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<NodeRecords>(&text)
            .map(|_| ())
            .map_err(|e| corrupt(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(corrupt(e.to_string())),
    }
}

fn start_journal(path: &Path, rpg_sha256: &str) -> Result<File, CheckpointError> {
    let header = JournalLine::Header {
        version: JOURNAL_VERSION,
        rpg_sha256: rpg_sha256.to_string(),
    };
    let mut text = serde_json::to_string(&header).map_err(|e| io_err(path)(e.into()))?;
    text.push('\n');
    write_atomic(path, text.as_bytes())?;
    OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(io_err(path))
}

fn back_up(root: &Path, files: &[&str]) -> Result<Vec<PathBuf>, CheckpointError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S");
    let mut moved = Vec::new();
    for rel in files {
        let from = root.join(rel);
        if from.exists() {
            let to = root.join(format!("{rel}.corrupt-{stamp}"));
            std::fs::rename(&from, &to).map_err(io_err(&from))?;
            moved.push(to);
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests;
