//! A throw-away cgroup that caps the number of processes and the memory of one sandbox.
//!
//! Needed when zerorepo runs as root: bubblewrap then maps the sandbox user to host root, and
//! the kernel does not apply RLIMIT_NPROC to root, so only a pids cgroup stops a fork bomb.
//! Works with the unified (v2) hierarchy and with v1 `pids`/`memory` controllers. The sandbox
//! joins it through a `sh` wrapper that writes its own pid before exec'ing bubblewrap, so no
//! process of the sandbox ever runs outside it. Dropping the guard kills what is left and
//! removes the directories.

use std::path::{Path, PathBuf};

const ROOT: &str = "/sys/fs/cgroup";

/// Why no cgroup could be made. The sandbox then runs without one and logs this text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgroupError {
    #[error("cannot create {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no cgroup hierarchy under {ROOT}")]
    NoHierarchy,
}

#[derive(Debug)]
pub(crate) struct CgroupGuard {
    dirs: Vec<PathBuf>,
}

impl CgroupGuard {
    /// Creates the cgroup(s) with the limits; `Err` explains why it could not (not root, no
    /// writable hierarchy, ...).
    pub(crate) fn create(
        name: &str,
        max_processes: u64,
        memory_bytes: u64,
    ) -> Result<CgroupGuard, CgroupError> {
        let root = Path::new(ROOT);
        let mut guard = CgroupGuard { dirs: Vec::new() };
        if root.join("cgroup.controllers").exists() {
            let dir = root.join(name);
            make(&dir)?;
            guard.dirs.push(dir.clone());
            write(&dir.join("pids.max"), max_processes)?;
            write(&dir.join("memory.max"), memory_bytes)?;
            let _ = write(&dir.join("memory.swap.max"), 0);
        } else if root.join("pids").is_dir() {
            let pids = root.join("pids").join(name);
            make(&pids)?;
            guard.dirs.push(pids.clone());
            write(&pids.join("pids.max"), max_processes)?;
            let memory = root.join("memory").join(name);
            if make(&memory).is_ok() {
                guard.dirs.push(memory.clone());
                write(&memory.join("memory.limit_in_bytes"), memory_bytes)?;
                let _ = write(&memory.join("memory.memsw.limit_in_bytes"), memory_bytes);
            }
        } else {
            return Err(CgroupError::NoHierarchy);
        }
        Ok(guard)
    }

    /// The `cgroup.procs` files a process writes its pid into to join.
    pub(crate) fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Pids currently in the cgroup.
    pub(crate) fn members(&self) -> Vec<i32> {
        let Some(dir) = self.dirs.first() else {
            return Vec::new();
        };
        std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

fn make(dir: &Path) -> Result<(), CgroupError> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(CgroupError::Create {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

fn write(path: &Path, value: u64) -> Result<(), CgroupError> {
    std::fs::write(path, value.to_string()).map_err(|source| CgroupError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Cgroups whose name says they belong to a zerorepo process that no longer exists (one
/// killed with `kill -9` leaves its sandbox's cgroup behind): their processes are killed and
/// the directories removed. Returns how many were removed.
pub(crate) fn remove_stale() -> usize {
    let root = Path::new(ROOT);
    let mut removed = 0;
    for parent in [root.to_path_buf(), root.join("pids"), root.join("memory")] {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if super::leftovers::owner_is_gone(&name) && entry.path().is_dir() {
                drop(CgroupGuard {
                    dirs: vec![entry.path()],
                });
                removed += usize::from(!entry.path().exists());
            }
        }
    }
    removed
}

impl Drop for CgroupGuard {
    fn drop(&mut self) {
        for _ in 0..50 {
            let members = self.members();
            if members.is_empty() {
                break;
            }
            for pid in members {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for dir in &self.dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sandbox logs these texts when it runs without a cgroup; they are the ones it always
    /// logged.
    #[test]
    fn messages_are_the_old_texts() {
        let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let dir = Path::new("/sys/fs/cgroup/zerorepo-1-0");
        let create = CgroupError::Create {
            dir: dir.to_path_buf(),
            source: denied(),
        };
        assert_eq!(
            create.to_string(),
            format!("cannot create {}: {}", dir.display(), denied())
        );
        let file = dir.join("pids.max");
        let write = CgroupError::Write {
            path: file.clone(),
            source: denied(),
        };
        assert_eq!(
            write.to_string(),
            format!("cannot write {}: {}", file.display(), denied())
        );
        assert_eq!(
            CgroupError::NoHierarchy.to_string(),
            "no cgroup hierarchy under /sys/fs/cgroup"
        );
    }
}
