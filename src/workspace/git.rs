//! The output repository's git history: one commit per finished subgraph, tagged
//! `phase4-subgraph-<id>`, so a user can see what each part of the plan produced and roll back
//! to the last subgraph that passed.
//!
//! Only the paths a subgraph owns are staged in its commit, so with nodes of several subgraphs
//! in flight a commit never carries another subgraph's half-finished files. Files that belong
//! to no node (metadata, reports) go into one assembly commit at the end. Commits are signed
//! by a fixed identity so they do not depend on the user's git configuration.

use std::path::{Path, PathBuf};

use super::runlock::RunLock;
use crate::fsutil::FsError;
use git2::{IndexAddOption, ObjectType, Oid, Repository, ResetType, Signature};

/// Prefix of the tag of a finished subgraph.
pub(crate) const TAG_PREFIX: &str = "phase4-subgraph-";

#[derive(Debug, thiserror::Error)]
#[error("git in {dir}: {source}")]
pub struct GitError {
    dir: PathBuf,
    #[source]
    source: git2::Error,
}

/// One line of `git log`: short id, subject, tags on the commit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogEntry {
    pub id: String,
    pub subject: String,
    pub tags: Vec<String>,
}

pub struct Git {
    repo: Repository,
    dir: PathBuf,
}

/// `git init` without sample hooks: the output is a repository its users start from, and
/// a dozen `*.sample` scripts in it are noise (and scripts nobody asked for). libgit2's own
/// template is used instead of the system's, and its one sample file is removed.
fn init_without_hooks(dir: &Path) -> Result<Repository, git2::Error> {
    let mut options = git2::RepositoryInitOptions::new();
    options.external_template(false);
    let repo = Repository::init_opts(dir, &options)?;
    let hooks = repo.path().join("hooks");
    if let Ok(entries) = std::fs::read_dir(&hooks) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".sample") {
                // A sample left behind is cosmetic; the repository works either way.
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(repo)
}

/// Why zerorepo must not commit into the repository at `dir` (`Ok` also when it has no
/// `.git`: then there is nothing to commit into). See [`own_store`].
pub(crate) fn refuse_foreign_store(dir: &Path) -> Result<(), String> {
    own_store(dir).map(drop)
}

/// The repository whose store is `dir/.git`, opened there and nowhere else: `Ok(None)` when
/// `dir` has no `.git` directory (or libgit2 cannot open it), `Err` with the reason when the
/// store sends git anywhere but `dir` and `dir/.git`. The repository of `zerorepo code` is
/// hostile, and libgit2 goes where its store says: a `.git` that is a link or a `gitdir:`
/// file, a `commondir` file in it (another repository's objects, refs and branch tip), a
/// `core.worktree` elsewhere, or an `objects/info/alternates` list sends the commit (or the
/// files and objects it reads into it) to a repository the user never named; a link inside
/// `.git` makes the commit write through it, outside the repository. The store is opened at
/// `dir/.git` itself, never at `dir`: libgit2 takes a directory holding `HEAD`, `commondir`
/// and `gitdir` files for a store of its own.
fn own_store(dir: &Path) -> Result<Option<Repository>, String> {
    let store = dir.join(".git");
    match std::fs::symlink_metadata(&store) {
        Err(_) => return Ok(None),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symlink: zerorepo would write git history wherever it points",
                store.display()
            ));
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(format!(
                "{} is a file (a `gitdir:` link to another repository): zerorepo would commit into that repository",
                store.display()
            ));
        }
        Ok(_) => {}
    }
    if let Some(link) = first_link(&store).map_err(|e| format!("{}: {e}", store.display()))? {
        return Err(format!(
            "{} is a symbolic link: the commit would write through it, outside the repository",
            link.display()
        ));
    }
    // Only a linked work tree's store holds these (under `.git/worktrees/`), never `.git`.
    for name in ["commondir", "gitdir"] {
        if std::fs::symlink_metadata(store.join(name)).is_ok() {
            return Err(format!(
                "{} has a `{name}` file: it sends git to another store, and the commit would move another repository's branch",
                store.display()
            ));
        }
    }
    let alternates = store.join("objects").join("info").join("alternates");
    if std::fs::symlink_metadata(&alternates).is_ok() {
        return Err(format!(
            "{} borrows objects from other stores: a commit could carry their files",
            alternates.display()
        ));
    }
    // What libgit2 cannot open, it commits nothing into (and `open_or_init` starts afresh).
    let Ok(repo) = Repository::open(&store) else {
        return Ok(None);
    };
    let canonical = |a: &Path| a.canonicalize().ok();
    if canonical(repo.path()) != canonical(&store)
        || canonical(repo.commondir()) != canonical(&store)
    {
        return Err(format!(
            "{} sends git to another store: the commit would move another repository's branch",
            store.display()
        ));
    }
    match repo.workdir() {
        Some(workdir) if canonical(workdir) == canonical(dir) => Ok(Some(repo)),
        _ => Err(format!(
            "{} names another work tree (`core.worktree`, or a bare repository): the commit would read files from outside the repository",
            store.display()
        )),
    }
}

/// Removes the regular `*.lock` files under `dir`, the directory `skip` left out; see
/// [`Git::remove_stale_locks`].
fn remove_lock_files(dir: &Path, skip: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() && entry.path() != skip {
            removed += remove_lock_files(&entry.path(), skip)?;
        } else if kind.is_file() && entry.file_name().to_string_lossy().ends_with(".lock") {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The first symbolic link under `dir` (which is no link itself), depth first.
fn first_link(dir: &Path) -> std::io::Result<Option<PathBuf>> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            return Ok(Some(entry.path()));
        }
        if kind.is_dir()
            && let Some(link) = first_link(&entry.path())?
        {
            return Ok(Some(link));
        }
    }
    Ok(None)
}

impl Git {
    /// Opens the repository at `dir`, creating it (`git init`) on the first run.
    pub(crate) fn open_or_init(dir: &Path) -> Result<Git, GitError> {
        let err = |source| GitError {
            dir: dir.to_path_buf(),
            source,
        };
        let repo = match own_store(dir) {
            Ok(Some(repo)) => repo,
            Ok(None) => init_without_hooks(dir).map_err(err)?,
            Err(why) => return Err(err(git2::Error::from_str(&why))),
        };
        Ok(Git {
            repo,
            dir: dir.to_path_buf(),
        })
    }

    /// Opens the existing repository of `dir` (for `rollback`, reports and `code
    /// --git-commit`); `None` when it has none, or one zerorepo must not commit into
    /// ([`own_store`]).
    pub fn open(dir: &Path) -> Option<Git> {
        own_store(dir).ok().flatten().map(|repo| Git {
            repo,
            dir: dir.to_path_buf(),
        })
    }

    /// Removes the `*.lock` files a killed run left in the store (the index's, a ref's,
    /// `HEAD`'s): while one is there every commit fails with "locked". Only a run holding the
    /// output's [`RunLock`] may call this, so no live writer owns them. The object store is
    /// skipped (libgit2 writes objects under temporary names, never `*.lock`); links are never
    /// followed. Returns how many were removed.
    pub(crate) fn remove_stale_locks(&self, _held: &RunLock) -> Result<usize, FsError> {
        let store = self.repo.path();
        remove_lock_files(store, &store.join("objects")).map_err(|source| FsError::Io {
            path: store.to_path_buf(),
            source,
        })
    }

    fn err(&self, source: git2::Error) -> GitError {
        GitError {
            dir: self.dir.clone(),
            source,
        }
    }

    fn signature(&self) -> Result<Signature<'static>, GitError> {
        Signature::now("zerorepo", "zerorepo@localhost").map_err(|e| self.err(e))
    }

    /// Stages exactly `paths` (repository-relative; a missing file is staged as deleted) and
    /// commits them with `message` if anything changed. Returns the new commit, or `None` when
    /// the staged tree equals HEAD's. `paths` that are directories are staged recursively.
    pub(crate) fn commit_paths(
        &self,
        paths: &[String],
        message: &str,
    ) -> Result<Option<Oid>, GitError> {
        let mut index = self.repo.index().map_err(|e| self.err(e))?;
        for path in paths {
            let full = self.dir.join(path);
            if full.is_dir() {
                index
                    .add_all([path.as_str()], IndexAddOption::DEFAULT, None)
                    .map_err(|e| self.err(e))?;
            } else if full.is_file() {
                index.add_path(Path::new(path)).map_err(|e| self.err(e))?;
            } else {
                // Not in the index is fine: there is nothing to delete.
                let _ = index.remove_path(Path::new(path));
            }
        }
        index.write().map_err(|e| self.err(e))?;
        self.commit_index(&mut index, message)
    }

    /// Stages every file that `.gitignore` does not exclude, and commits.
    pub(crate) fn commit_all(&self, message: &str) -> Result<Option<Oid>, GitError> {
        let mut index = self.repo.index().map_err(|e| self.err(e))?;
        index
            .add_all(["*"], IndexAddOption::DEFAULT, None)
            .map_err(|e| self.err(e))?;
        index.update_all(["*"], None).map_err(|e| self.err(e))?;
        index.write().map_err(|e| self.err(e))?;
        self.commit_index(&mut index, message)
    }

    fn commit_index(
        &self,
        index: &mut git2::Index,
        message: &str,
    ) -> Result<Option<Oid>, GitError> {
        let tree_id = index.write_tree().map_err(|e| self.err(e))?;
        let parent = self.head_commit();
        if parent.as_ref().is_some_and(|p| p.tree_id() == tree_id) {
            return Ok(None);
        }
        let tree = self.repo.find_tree(tree_id).map_err(|e| self.err(e))?;
        let signature = self.signature()?;
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let id = self
            .repo
            .commit(
                Some("HEAD"),
                &signature,
                &signature,
                message,
                &tree,
                &parents,
            )
            .map_err(|e| self.err(e))?;
        Ok(Some(id))
    }

    fn head_commit(&self) -> Option<git2::Commit<'_>> {
        self.repo.head().ok()?.peel_to_commit().ok()
    }

    /// Points tag `phase4-subgraph-<subgraph>` at HEAD (moving it if it exists).
    pub(crate) fn tag_subgraph(&self, subgraph: &str) -> Result<(), GitError> {
        let Some(head) = self.head_commit() else {
            return Ok(());
        };
        self.repo
            .tag_lightweight(&format!("{TAG_PREFIX}{subgraph}"), head.as_object(), true)
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub(crate) fn has_subgraph_tag(&self, subgraph: &str) -> bool {
        self.repo
            .revparse_single(&format!("refs/tags/{TAG_PREFIX}{subgraph}"))
            .is_ok()
    }

    /// The history, newest first.
    pub fn log(&self) -> Result<Vec<LogEntry>, GitError> {
        let mut tags_of: std::collections::HashMap<Oid, Vec<String>> = Default::default();
        let names = self.repo.tag_names(None).map_err(|e| self.err(e))?;
        for name in names.iter().flatten().flatten() {
            if let Ok(object) = self.repo.revparse_single(&format!("refs/tags/{name}"))
                && let Ok(commit) = object.peel(ObjectType::Commit)
            {
                tags_of
                    .entry(commit.id())
                    .or_default()
                    .push(name.to_string());
            }
        }
        let mut walk = self.repo.revwalk().map_err(|e| self.err(e))?;
        if walk.push_head().is_err() {
            return Ok(Vec::new()); // no commit yet
        }
        let mut entries = Vec::new();
        for id in walk {
            let id = id.map_err(|e| self.err(e))?;
            let commit = self.repo.find_commit(id).map_err(|e| self.err(e))?;
            let mut tags = tags_of.remove(&id).unwrap_or_default();
            tags.sort();
            entries.push(LogEntry {
                id: id.to_string()[..10].to_string(),
                subject: commit
                    .summary()
                    .into_iter()
                    .flatten()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                tags,
            });
        }
        Ok(entries)
    }

    /// Resets the work tree and HEAD to the commit tagged for `subgraph` (like
    /// `git reset --hard`). Untracked files the engine did not commit are left alone.
    pub(crate) fn reset_to_subgraph(&self, subgraph: &str) -> Result<String, GitError> {
        let object = self
            .repo
            .revparse_single(&format!("refs/tags/{TAG_PREFIX}{subgraph}"))
            .map_err(|e| self.err(e))?;
        let commit = object.peel(ObjectType::Commit).map_err(|e| self.err(e))?;
        self.repo
            .reset(&commit, ResetType::Hard, None)
            .map_err(|e| self.err(e))?;
        Ok(commit.id().to_string()[..10].to_string())
    }

    /// Whether HEAD's tree holds `path`.
    pub(crate) fn is_tracked(&self, path: &str) -> bool {
        self.head_commit()
            .and_then(|c| c.tree().ok())
            .is_some_and(|t| t.get_path(Path::new(path)).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_store_that_links_or_points_elsewhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        write(&outside, "a.py", "SECRET = 1\n");
        let fresh = |name: &str| {
            let repo = dir.path().join(name);
            write(&repo, "a.py", "x = 1\n");
            let git = Git::open_or_init(&repo).unwrap();
            git.commit_paths(&["a.py".to_string()], "first").unwrap();
            repo
        };
        let plain = fresh("plain");
        assert_eq!(refuse_foreign_store(&plain), Ok(()));
        assert_eq!(
            refuse_foreign_store(&dir.path().join("none")),
            Ok(()),
            "no .git"
        );

        let reflog = fresh("reflog");
        std::fs::create_dir_all(reflog.join(".git/logs")).unwrap();
        let _ = std::fs::remove_file(reflog.join(".git/logs/HEAD"));
        std::os::unix::fs::symlink(outside.join("log"), reflog.join(".git/logs/HEAD")).unwrap();
        let why = refuse_foreign_store(&reflog).unwrap_err();
        assert!(
            why.contains("logs/HEAD") && why.contains("symbolic link"),
            "{why}"
        );

        let worktree = fresh("worktree");
        let config = worktree.join(".git/config");
        let text = std::fs::read_to_string(&config).unwrap();
        let text = text.replace(
            "[core]",
            &format!("[core]\n\tworktree = {}", outside.display()),
        );
        std::fs::write(&config, text).unwrap();
        let why = refuse_foreign_store(&worktree).unwrap_err();
        assert!(why.contains("another work tree"), "{why}");

        let file = dir.path().join("gitdir");
        write(
            &file,
            ".git",
            &format!("gitdir: {}\n", plain.join(".git").display()),
        );
        let why = refuse_foreign_store(&file).unwrap_err();
        assert!(why.contains("gitdir:"), "{why}");

        // A real `.git` directory, no link in it, whose `commondir` names another store:
        // libgit2 would write the commit's objects there and move that repository's branch.
        let victim = fresh("victim");
        let victim_head = Git::open(&victim).unwrap().head_commit().unwrap().id();
        let common = dir.path().join("common");
        write(&common, "a.py", "EVIL = 1\n");
        write(&common, ".git/HEAD", "ref: refs/heads/master\n");
        write(
            &common,
            ".git/commondir",
            &format!("{}\n", victim.join(".git").display()),
        );
        let why = refuse_foreign_store(&common).unwrap_err();
        assert!(why.contains("commondir"), "{why}");
        assert!(Git::open(&common).is_none());
        assert!(Git::open_or_init(&common).is_err());
        let alternates = fresh("alternates");
        write(
            &alternates,
            ".git/objects/info/alternates",
            &format!("{}\n", victim.join(".git/objects").display()),
        );
        let why = refuse_foreign_store(&alternates).unwrap_err();
        assert!(why.contains("alternates"), "{why}");

        // No `.git` at all, but the files of a store at the top: never opened as one.
        let top = dir.path().join("top");
        write(&top, "HEAD", "ref: refs/heads/master\n");
        write(
            &top,
            "commondir",
            &format!("{}\n", victim.join(".git").display()),
        );
        write(&top, "gitdir", "x\n");
        assert_eq!(refuse_foreign_store(&top), Ok(()), "nothing to commit into");
        assert!(Git::open(&top).is_none());
        let victim_after = Git::open(&victim).unwrap().head_commit().unwrap().id();
        assert_eq!(victim_after, victim_head, "the victim's branch never moved");
    }

    #[test]
    fn a_subgraph_commit_holds_only_its_own_paths_and_is_tagged() {
        let dir = tempfile::tempdir().unwrap();
        let git = Git::open_or_init(dir.path()).unwrap();
        let hooks: Vec<_> = std::fs::read_dir(dir.path().join(".git/hooks"))
            .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(hooks.is_empty(), "{hooks:?}");
        write(dir.path(), "a/x.py", "x = 1\n");
        write(dir.path(), "b/y.py", "y = 1\n");
        let first = git
            .commit_paths(&["a".into()], "feat: complete a (nodes 1-1)")
            .unwrap();
        assert!(first.is_some());
        git.tag_subgraph("a").unwrap();
        // Nothing changed for `a`: no empty commit.
        assert_eq!(git.commit_paths(&["a/x.py".into()], "again").unwrap(), None);
        git.commit_all("chore: assemble").unwrap();
        let log = git.log().unwrap();
        assert_eq!(
            log.iter().map(|e| e.subject.as_str()).collect::<Vec<_>>(),
            ["chore: assemble", "feat: complete a (nodes 1-1)"]
        );
        assert_eq!(log[1].tags, ["phase4-subgraph-a"]);
        assert!(git.has_subgraph_tag("a") && !git.has_subgraph_tag("b"));
        git.reset_to_subgraph("a").unwrap();
        assert!(!dir.path().join("b/y.py").exists());
        assert!(dir.path().join("a/x.py").exists());
    }

    #[test]
    fn locks_a_killed_run_left_are_removed_and_the_next_commit_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(crate::layout::STATE_DIR)).unwrap();
        let git = Git::open_or_init(dir.path()).unwrap();
        write(dir.path(), "a/x.py", "x = 1\n");
        git.commit_paths(&["a".into()], "first").unwrap();
        // What libgit2 leaves when killed mid-write: the index's lock and a ref's.
        write(dir.path(), ".git/index.lock", "");
        write(dir.path(), ".git/refs/heads/main.lock", "");
        write(dir.path(), ".git/objects/ab/keep.lock", "");
        write(dir.path(), "a/x.py", "x = 2\n");
        assert!(git.commit_paths(&["a".into()], "blocked").is_err());
        let held = RunLock::acquire(dir.path()).unwrap();
        assert_eq!(git.remove_stale_locks(&held).unwrap(), 2);
        assert!(dir.path().join(".git/objects/ab/keep.lock").exists());
        assert!(git.commit_paths(&["a".into()], "second").unwrap().is_some());
    }
}
