//! The audit trail of `zerorepo code`: every action of a run, appended to
//! `.zerorepo/execution_history.json` in the repository as it happens, so that a run killed
//! half-way still says what it did.
//!
//! The file is one JSON array of [`AuditEntry`]; each append rewrites it atomically. Every
//! text that came from a model, a command or the user passes through [`crate::redact`] first,
//! and long outputs are cut to their tail (where errors are). A dry run keeps the trail in
//! memory only: it writes nothing, not even this.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::usage::Usage;

/// The trail, relative to the repository root.
pub(crate) const HISTORY_FILE: &str = ".zerorepo/execution_history.json";

/// Characters of a command's output kept in one entry (its tail).
const EXCERPT_CHARS: usize = 2_000;

/// One action of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    /// The run's id (its start time), shared by all its entries.
    pub run: String,
    /// `diagnose`, `plan`, `approval`, `risk`, `task`, `verify`, `correct`, `commit`,
    /// `rollback`.
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `ok`, `failed`, `approved`, `refused`, `declined`, ...
    pub outcome: String,
    /// What happened, in words, redacted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The tail of the command's output, or of the model's answer, redacted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Usage>,
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("cannot write the audit trail {path}: {source}")]
    Write {
        path: PathBuf,
        source: crate::fsutil::FsError,
    },
    #[error("cannot read the audit trail {path}: {message}")]
    Read { path: PathBuf, message: String },
}

/// The trail of one run: entries in memory, written through to the file unless dry.
#[derive(Debug)]
pub(crate) struct Audit {
    /// The repository whose trail this is (`None`: a dry run's, kept in memory).
    file: Option<PathBuf>,
    run: String,
    earlier: Vec<AuditEntry>,
    entries: Vec<AuditEntry>,
}

impl Audit {
    /// The trail of a new run in `repo`; `None` keeps it in memory (a dry run).
    pub fn open(repo: Option<&Path>) -> Result<Audit, AuditError> {
        let file = repo.map(Path::to_path_buf);
        let earlier = match &file {
            Some(repo) => history(repo)?,
            None => Vec::new(),
        };
        Ok(Audit {
            file,
            run: Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string(),
            earlier,
            entries: Vec::new(),
        })
    }

    #[cfg(test)]
    fn entries(&self) -> &[AuditEntry] {
        &self.entries
    }

    /// Records an action and writes the trail.
    pub fn record(
        &mut self,
        action: &str,
        task: Option<&str>,
        outcome: &str,
        detail: &str,
        excerpt: &str,
        tokens: Option<Usage>,
    ) -> Result<(), AuditError> {
        self.entries.push(AuditEntry {
            at: Utc::now(),
            run: self.run.clone(),
            action: action.into(),
            task: task.map(String::from),
            outcome: outcome.into(),
            detail: crate::redact::redact(detail).into_owned(),
            excerpt: crate::redact::redact(tail(excerpt, EXCERPT_CHARS)).into_owned(),
            tokens,
        });
        let Some(repo) = &self.file else {
            return Ok(());
        };
        let all: Vec<&AuditEntry> = self.earlier.iter().chain(&self.entries).collect();
        let mut text = serde_json::to_string_pretty(&all).unwrap_or_default();
        text.push('\n');
        // Beneath the repository: a `.zerorepo` that is a link is refused, never followed.
        crate::fsutil::Workspace::new(repo)
            .write(HISTORY_FILE, &text)
            .map_err(|source| AuditError::Write {
                path: repo.join(HISTORY_FILE),
                source,
            })
    }
}

/// The trail of the repository at `repo` (empty when it has none).
/// Read beneath the repository, never through a link.
pub fn history(repo: &Path) -> Result<Vec<AuditEntry>, AuditError> {
    let path = repo.join(HISTORY_FILE);
    let text = match crate::fsutil::Workspace::new(repo).read(HISTORY_FILE) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            return Err(AuditError::Read {
                path,
                message: e.to_string(),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| AuditError::Read {
        path,
        message: e.to_string(),
    })
}

/// The last `chars` characters of `text`.
pub(crate) fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let skip = text
        .char_indices()
        .nth(count - chars)
        .map_or(0, |(at, _)| at);
    &text[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trail_appends_across_runs_and_keeps_only_tails() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = Audit::open(Some(dir.path())).unwrap();
        first
            .record(
                "diagnose",
                None,
                "failed",
                "python -m pytest -q",
                "E assert 1 == 2",
                None,
            )
            .unwrap();
        let mut second = Audit::open(Some(dir.path())).unwrap();
        let long = "x".repeat(EXCERPT_CHARS + 10) + "END";
        second
            .record("verify", None, "ok", "", &long, None)
            .unwrap();
        let all = history(dir.path()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].action, "diagnose");
        assert!(all[1].excerpt.ends_with("END"));
        assert_eq!(all[1].excerpt.chars().count(), EXCERPT_CHARS);
    }

    #[test]
    fn a_dry_trail_writes_nothing() {
        let mut audit = Audit::open(None).unwrap();
        audit.record("plan", None, "ok", "", "", None).unwrap();
        assert_eq!(audit.entries().len(), 1);
    }
}
