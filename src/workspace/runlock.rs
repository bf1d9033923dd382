//! One generation per output directory at a time. A run holds an exclusive `flock` on
//! `.zerorepo/lock` from before it touches anything the last run may have left until it ends;
//! the kernel drops the lock when the process dies, `kill -9` included, so a lock never
//! outlives its run. Holding it is what makes clearing leftovers safe: a git lock file, a
//! temp file or a snapshot found then belongs to a run that is gone, not to one still writing.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use crate::layout::RUN_LOCK;

/// Held for as long as a run may write into its output directory.
pub struct RunLock {
    _held: Flock<File>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunLockError {
    #[error(
        "another zerorepo run is writing into {}: wait for it to end (two runs would overwrite each other's work)",
        .0.display()
    )]
    Busy(PathBuf),
    #[error("cannot open the run lock {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl RunLock {
    /// Takes the lock of the output directory `root` (whose `.zerorepo/` exists), without
    /// waiting: a second run is told at once rather than left hanging.
    pub(crate) fn acquire(root: &Path) -> Result<RunLock, RunLockError> {
        let path = root.join(RUN_LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            // A link planted where the lock goes is refused, never followed.
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|source| RunLockError::Io {
                path: path.clone(),
                source,
            })?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(held) => Ok(RunLock { _held: held }),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(RunLockError::Busy(root.to_path_buf())),
            Err((_, errno)) => Err(RunLockError::Io {
                path,
                source: errno.into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(crate::layout::STATE_DIR)).unwrap();
        dir
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_lock_and_admitted_after() {
        let dir = state_dir();
        let first = RunLock::acquire(dir.path()).unwrap();
        let second = RunLock::acquire(dir.path());
        assert!(
            matches!(second, Err(RunLockError::Busy(_))),
            "{:?}",
            second.err()
        );
        drop(first);
        RunLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_link_where_the_lock_goes_is_refused() {
        let dir = state_dir();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(RUN_LOCK)).unwrap();
        let refused = RunLock::acquire(dir.path());
        assert!(matches!(refused, Err(RunLockError::Io { .. })));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
