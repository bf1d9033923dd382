//! The scratch copy the reference tests run in: the generated repository, read-only from the
//! evaluation's point of view, plus the reference tests in a directory of their own.
//!
//! Copying rather than pointing the sandbox at OUT keeps OUT exactly as generation left it
//! (a reference file named like a generated one would otherwise replace it), and leaves the
//! engine's state and git's store out of the sandbox's view.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::EvalError;

/// Where the reference tests go in the scratch copy: apart from the generated `tests/`, so
/// only the reference runs and no file of one replaces a file of the other.
pub const REFERENCE_DIR: &str = "reference_tests";

/// Names left out at any depth ([`crate::fsutil::NOT_THE_REPOSITORY`]).
const LEFT_OUT: &[&str] = crate::fsutil::NOT_THE_REPOSITORY;

/// A fresh temp directory holding a copy of `out` and, under [`REFERENCE_DIR`], of
/// `reference_tests`. Named so that a killed run's copy is found and removed by the next
/// evaluation or generation ([`crate::sandbox::leftovers`]), which this one starts with.
pub(super) fn prepare(out: &Path, reference_tests: &Path) -> Result<TempDir, EvalError> {
    let removed = crate::sandbox::leftovers::clean();
    if removed > 0 {
        tracing::debug!("removed {removed} leftover(s) of killed runs");
    }
    let scratch = copy_of(out)?;
    let fail = |path: PathBuf| move |source| EvalError::Scratch { path, source };
    let target = scratch.path().join(REFERENCE_DIR);
    // A generated directory of that name is not the reference: it must not mix with it.
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(fail(target.clone()))?;
    }
    copy_tree(reference_tests, &target).map_err(fail(reference_tests.to_path_buf()))?;
    Ok(scratch)
}

/// A fresh temp directory holding a copy of the reference `dir` (its implementation under
/// `src/`) and an empty `disputed_tests/` for the tests to judge against it.
pub(super) fn prepare_reference(dir: &Path) -> Result<TempDir, EvalError> {
    let scratch = copy_of(dir)?;
    let disputed = scratch.path().join("disputed_tests");
    std::fs::create_dir_all(&disputed).map_err(|source| EvalError::Scratch {
        path: disputed,
        source,
    })?;
    Ok(scratch)
}

/// A fresh temp directory, named for [`crate::sandbox::leftovers`], holding a copy of `from`.
fn copy_of(from: &Path) -> Result<TempDir, EvalError> {
    let scratch = tempfile::Builder::new()
        .prefix(&crate::sandbox::leftovers::temp_prefix("eval"))
        .tempdir()
        .map_err(|source| EvalError::Scratch {
            path: std::env::temp_dir(),
            source,
        })?;
    copy_tree(from, scratch.path()).map_err(|source| EvalError::Scratch {
        path: from.to_path_buf(),
        source,
    })?;
    Ok(scratch)
}

/// Copies `from` to `to` without [`LEFT_OUT`] ([`crate::fsutil::copy_tree`]).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    crate::fsutil::copy_tree(from, to, LEFT_OUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_leaves_out_state_caches_and_links_and_keeps_the_reference_apart() {
        let out = tempfile::tempdir().unwrap();
        let reference = tempfile::tempdir().unwrap();
        let write = |root: &Path, rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(out.path(), "src/pkg/mod.py", "x = 1\n");
        write(out.path(), "tests/test_mod.py", "generated\n");
        write(out.path(), ".zerorepo/journal.jsonl", "{}\n");
        write(out.path(), ".git/HEAD", "ref\n");
        write(out.path(), "src/pkg/__pycache__/mod.pyc", "bytes");
        write(out.path(), "reference_tests/test_mod.py", "impostor\n");
        std::os::unix::fs::symlink("/etc", out.path().join("src/link")).unwrap();
        write(reference.path(), "test_mod.py", "reference\n");
        write(reference.path(), "data/rows.csv", "a,b\n");

        let scratch = prepare(out.path(), reference.path()).unwrap();
        let read = |rel: &str| std::fs::read_to_string(scratch.path().join(rel)).ok();
        assert_eq!(read("src/pkg/mod.py").as_deref(), Some("x = 1\n"));
        assert_eq!(read("tests/test_mod.py").as_deref(), Some("generated\n"));
        assert_eq!(
            read("reference_tests/test_mod.py").as_deref(),
            Some("reference\n")
        );
        assert_eq!(
            read("reference_tests/data/rows.csv").as_deref(),
            Some("a,b\n")
        );
        for gone in [".zerorepo", ".git", "src/pkg/__pycache__", "src/link"] {
            assert!(
                std::fs::symlink_metadata(scratch.path().join(gone)).is_err(),
                "{gone} was copied"
            );
        }
    }
}
