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

#[derive(Debug)]
pub struct CgroupGuard {
    dirs: Vec<PathBuf>,
}

impl CgroupGuard {
    /// Creates the cgroup(s) with the limits; `Err` explains why it could not (not root, no
    /// writable hierarchy, ...).
    pub fn create(
        name: &str,
        max_processes: u64,
        memory_bytes: u64,
    ) -> Result<CgroupGuard, String> {
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
            return Err(format!("no cgroup hierarchy under {ROOT}"));
        }
        Ok(guard)
    }

    /// The `cgroup.procs` files a process writes its pid into to join.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Pids currently in the cgroup.
    pub fn members(&self) -> Vec<i32> {
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

fn make(dir: &Path) -> Result<(), String> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
    }
}

fn write(path: &Path, value: u64) -> Result<(), String> {
    std::fs::write(path, value.to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Cgroups whose name says they belong to a zerorepo process that no longer exists (one
/// killed with `kill -9` leaves its sandbox's cgroup behind): their processes are killed and
/// the directories removed. Returns how many were removed.
pub fn remove_stale() -> usize {
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
