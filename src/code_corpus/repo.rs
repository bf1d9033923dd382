//! A request's repository: the library's listed files copied out of its unpacked sdist into a
//! fresh directory, made a git repository, the bug planted when the request is a fix. Also
//! the exact edits (a plant, a reference change) and the judge's scratch copy.
//!
//! The sdist was unpacked by [`crate::corpus::unpack`], which refuses links; the copy still
//! reads every entry without following links and takes regular files only, beneath paths
//! the corpus file checked are relative.

use std::path::{Path, PathBuf};

use super::file::{CodeRequest, ReferenceEdit, relative};

/// Why a request's repository could not be made, or an edit not applied.
#[derive(Debug, thiserror::Error)]
pub enum RequestRepoError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the sdist has no `{0}` (a listed file of the library)")]
    Missing(String),
    #[error("{file}: the text to replace occurs {count} times, not once")]
    NotOnce { file: String, count: usize },
    #[error("`{0}` is not a relative path inside the repository")]
    Outside(String),
    #[error(transparent)]
    Git(#[from] crate::workspace::git::GitError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RequestRepoError + '_ {
    move |source| RequestRepoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Directory names never copied: byte-code caches an sdist sometimes ships.
const SKIPPED: &[&str] = &["__pycache__", ".pytest_cache"];

/// Copies the library's `files` (files or directories) from the unpacked sdist `root` into
/// `dest` (created; it must not exist), with the same relative paths.
pub fn copy_library(
    request: &CodeRequest,
    root: &Path,
    dest: &Path,
) -> Result<(), RequestRepoError> {
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    for rel in &request.library.files {
        if !relative(rel) {
            return Err(RequestRepoError::Outside(rel.clone()));
        }
        let from = root.join(rel);
        let meta =
            std::fs::symlink_metadata(&from).map_err(|_| RequestRepoError::Missing(rel.clone()))?;
        if meta.is_dir() {
            copy_dir(&from, &dest.join(rel))?;
        } else if meta.is_file() {
            copy_file(&from, &dest.join(rel))?;
        } else {
            return Err(RequestRepoError::Missing(rel.clone()));
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), RequestRepoError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let name = entry.file_name();
        let kind = entry.file_type().map_err(io(from))?;
        let skipped =
            SKIPPED.iter().any(|s| name == *s) || name.to_string_lossy().ends_with(".pyc");
        if skipped {
            continue;
        }
        if kind.is_dir() {
            copy_dir(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            copy_file(&entry.path(), &to.join(&name))?;
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<(), RequestRepoError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::copy(from, to).map_err(io(to))?;
    Ok(())
}

/// Applies `edits` in order to the files beneath `dir`: each `search` exactly once, or an
/// empty `search` appending to the file (created if missing).
pub fn apply_edits(dir: &Path, edits: &[ReferenceEdit]) -> Result<(), RequestRepoError> {
    for edit in edits {
        if !relative(&edit.file) {
            return Err(RequestRepoError::Outside(edit.file.clone()));
        }
        crate::fsutil::beneath::no_link(dir, &edit.file)
            .map_err(|_| RequestRepoError::Outside(edit.file.clone()))?;
        let path = dir.join(&edit.file);
        let old = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && edit.search.is_empty() => {
                String::new()
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let new = replace_once(&old, edit)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, new).map_err(io(&path))?;
    }
    Ok(())
}

fn replace_once(old: &str, edit: &ReferenceEdit) -> Result<String, RequestRepoError> {
    if edit.search.is_empty() {
        let mut text = old.to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&edit.replace);
        return Ok(text);
    }
    match old.matches(edit.search.as_str()).count() {
        1 => Ok(old.replacen(edit.search.as_str(), &edit.replace, 1)),
        count => Err(RequestRepoError::NotOnce {
            file: edit.file.clone(),
            count,
        }),
    }
}

/// The request's repository in `dest`: the library's files, a first commit, the bug
/// planted (uncommitted would show in `git status`, so it is committed too: the model sees
/// a repository whose HEAD has the bug, like a user's).
pub fn make_repository(
    request: &CodeRequest,
    root: &Path,
    dest: &Path,
) -> Result<(), RequestRepoError> {
    copy_library(request, root, dest)?;
    let git = crate::workspace::git::Git::open_or_init(dest)?;
    git.commit_all(&format!("{} as published", request.library.pypi))?;
    if let Some(plant) = &request.plant {
        apply_edits(dest, std::slice::from_ref(plant))?;
        git.commit_all("the current code")?;
    }
    Ok(())
}

/// The name the acceptance tests take in the judge's copy: unlikely to meet a file of the
/// library's, and collected by pytest.
pub const ACCEPTANCE_FILE: &str = "test_zerorepo_acceptance.py";

/// A scratch copy of `repo` (regular files, `.git` and `.zerorepo` left out) for the judge,
/// with the acceptance tests beside it when given.
pub fn judge_copy(
    repo: &Path,
    acceptance: Option<&str>,
) -> Result<tempfile::TempDir, RequestRepoError> {
    let scratch = tempfile::Builder::new()
        .prefix("zerorepo-judge-")
        .tempdir()
        .map_err(io(repo))?;
    let skipped = [".git", ".zerorepo", "__pycache__", ".pytest_cache"];
    let files = crate::fsutil::beneath::list_files(repo, &skipped).map_err(io(repo))?;
    for file in files {
        copy_file(&repo.join(&file), &scratch.path().join(&file))?;
    }
    if let Some(tests) = acceptance {
        let path = scratch.path().join(ACCEPTANCE_FILE);
        std::fs::write(&path, tests).map_err(io(&path))?;
    }
    // As root the sandbox's user is nobody: it reads the copy and writes its caches there.
    if nix::unistd::geteuid().is_root() {
        give_to_the_sandbox(scratch.path())?;
    }
    Ok(scratch)
}

/// Hands the copy to the user a root-started sandbox runs as, rather than opening it to
/// everyone: in the shared temporary directory a world-writable copy lets any local user
/// rewrite the acceptance tests before the judge runs them.
fn give_to_the_sandbox(dir: &Path) -> Result<(), RequestRepoError> {
    let nobody = Some(crate::sandbox::NOBODY);
    for entry in walk(dir)? {
        std::os::unix::fs::lchown(&entry, nobody, nobody).map_err(io(&entry))?;
    }
    Ok(())
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>, RequestRepoError> {
    let mut out = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        if entry.file_type().map_err(io(dir))?.is_dir() {
            out.extend(walk(&entry.path())?);
        } else {
            out.push(entry.path());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(file: &str, search: &str, replace: &str) -> ReferenceEdit {
        ReferenceEdit {
            file: file.into(),
            search: search.into(),
            replace: replace.into(),
        }
    }

    #[test]
    fn an_edit_replaces_once_appends_or_refuses() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), "a = 1\nb = 1\n").unwrap();
        apply_edits(dir.path(), &[edit("m.py", "a = 1", "a = 2")]).unwrap();
        apply_edits(dir.path(), &[edit("m.py", "", "c = 3\n")]).unwrap();
        apply_edits(dir.path(), &[edit("new/n.py", "", "d = 4\n")]).unwrap();
        let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
        assert_eq!(read("m.py"), "a = 2\nb = 1\nc = 3\n");
        assert_eq!(read("new/n.py"), "d = 4\n");
        let thrice = apply_edits(dir.path(), &[edit("m.py", " = ", "=")]).unwrap_err();
        assert!(thrice.to_string().contains("3 times"), "{thrice}");
        let absent = apply_edits(dir.path(), &[edit("m.py", "zz", "9")]).unwrap_err();
        assert!(absent.to_string().contains("0 times"), "{absent}");
        let outside = apply_edits(dir.path(), &[edit("../m.py", "", "x")]).unwrap_err();
        assert!(matches!(outside, RequestRepoError::Outside(_)), "{outside}");
    }

    #[test]
    fn an_edit_through_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("pkg")).unwrap();
        let err = apply_edits(dir.path(), &[edit("pkg/m.py", "", "x = 1\n")]).unwrap_err();
        assert!(matches!(err, RequestRepoError::Outside(_)), "{err}");
        assert!(!elsewhere.path().join("m.py").exists());
    }
}
