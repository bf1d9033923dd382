//! Paths given to the workspace overlay (`workspace::overlay`, checked by `Workspace::path`):
//! a path that could leave the output directory is refused. For any string:
//!
//! - an accepted path, joined to the root, stays under the root lexically: nothing but
//!   normal components after the root (no `..`, `.`, or root), and at least one of them;
//! - the overlay accepts a path for writing, and a serialised overlay naming it, exactly
//!   when the check does, and reads back what was written under it;
//! - two spellings of one file (`a//b.py`, `a/./b.py/`, `a/b.py`) are one pending change.
//!
//! Input: paths separated by NUL bytes.

#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use zerorepo::workspace::overlay::{Overlay, OverlayError, Author};
use zerorepo::fsutil::{FsError, Workspace};

/// Never created: the overlay only looks there for files it has not been given, and finds
/// nothing.
const ROOT: &str = "/nonexistent/zerorepo-fuzz/out";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let paths: Vec<&str> = text.split('\0').take(8).collect();
    let ws = Workspace::new(ROOT);
    let mut overlay = Overlay::new(ws.clone());
    let mut written: Vec<(std::path::PathBuf, String)> = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let checked = ws.path(path);
        if let Ok(full) = &checked {
            let rest = full
                .strip_prefix(ROOT)
                .unwrap_or_else(|_| panic!("{path:?} resolved outside the root: {full:?}"));
            assert!(
                rest.components().all(|c| matches!(c, Component::Normal(_))),
                "{path:?} resolved to {full:?}"
            );
            assert!(rest.components().next().is_some(), "{path:?} is the root");
            assert!(!Path::new(path).is_absolute());
        }

        let content = format!("content {i}");
        match overlay.write(path, content.clone(), Author::Human) {
            Ok(()) => {
                let full =
                    checked.unwrap_or_else(|e| panic!("overlay wrote refused {path:?}: {e}"));
                assert_eq!(
                    overlay.read(path).ok().flatten().as_deref(),
                    Some(content.as_str())
                );
                written.retain(|(other, _)| *other != full);
                written.push((full, content));
            }
            // Looking for the file on disk may fail for an accepted path (a name too long).
            Err(OverlayError::Workspace(FsError::Io { .. })) if checked.is_ok() => {}
            Err(e) => assert!(checked.is_err(), "{path:?} accepted but not written: {e}"),
        }

        let entry = serde_json::json!({ *path: { "content": "x", "source": "human", "base": "" } });
        let loaded = Overlay::from_json(ws.clone(), &entry.to_string());
        assert_eq!(
            loaded.is_ok(),
            ws.path(path).is_ok(),
            "{path:?}: {:?}",
            loaded.err()
        );
    }
    // Every file written once is one pending change, holding the last content written to it.
    assert_eq!(
        overlay.entries().len(),
        written.len(),
        "one file, several pending changes: {:?}",
        overlay.entries().keys().collect::<Vec<_>>()
    );
    for (full, content) in &written {
        let found = overlay
            .entries()
            .iter()
            .find(|(key, _)| ws.path(key).ok().as_ref() == Some(full))
            .unwrap_or_else(|| panic!("nothing pending for {full:?}"));
        assert_eq!(found.1.content.as_deref(), Some(content.as_str()));
    }
});
