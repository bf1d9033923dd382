//! The user namespace a sandbox started by root is set up in.
//!
//! bubblewrap run by root with `--unshare-user` maps the sandbox's user to the caller, so a
//! "uid 65534" inside is host uid 0: it can write every root-owned file the kernel shows it
//! (`/proc/sys` was the example: a test raised `fs.file-max` and dropped the page cache). So
//! for root the namespace is made here instead, with a map zerorepo chooses: root to root,
//! which bubblewrap needs to build the sandbox's mounts from root's files, and 65534 (and the
//! repository's group) to themselves. bubblewrap joins it (`--userns FD`), builds the mounts,
//! and the sandbox's command starts with `setpriv`, which becomes 65534 and drops every
//! capability for good before anything from the repository runs: no process inside is host
//! uid 0.
//!
//! A namespace lives while a process or an open file holds it. A `sleep` started through
//! util-linux's `unshare --user` holds it until bubblewrap has opened it; then it is killed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::SandboxError;

/// The host user and group every process of a root-started sandbox runs as.
pub(crate) const NOBODY: u32 = 65534;

/// The `uid_map` and `gid_map` lines of the namespace (pure; tested whole).
pub(crate) fn id_maps(repo_group: u32) -> (String, String) {
    let uids = format!("0 0 1\n{NOBODY} {NOBODY} 1\n");
    let mut gids = format!("0 0 1\n{NOBODY} {NOBODY} 1\n");
    if repo_group != 0 && repo_group != NOBODY {
        gids.push_str(&format!("{repo_group} {repo_group} 1\n"));
    }
    (uids, gids)
}

/// A process holding a fresh user namespace with the maps of [`id_maps`]; killed on drop.
pub(crate) struct HeldUserns {
    holder: std::process::Child,
}

impl HeldUserns {
    pub(crate) fn new(repo_group: u32) -> Result<HeldUserns, SandboxError> {
        let unshare = crate::programs::on_path("unshare").ok_or_else(|| {
            SandboxError::Unavailable("util-linux's `unshare` is not on PATH".into())
        })?;
        let holder = std::process::Command::new(&unshare)
            .args(["--user", "--", "sleep", "600"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|source| SandboxError::Spawn {
                program: unshare.display().to_string(),
                source,
            })?;
        let held = HeldUserns { holder };
        held.wait_until_unshared()?;
        let (uids, gids) = id_maps(repo_group);
        let dir = held.proc_dir();
        std::fs::write(dir.join("uid_map"), uids)?;
        std::fs::write(dir.join("gid_map"), gids)?;
        Ok(held)
    }

    fn proc_dir(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}", self.holder.id()))
    }

    /// The file bubblewrap opens to join the namespace.
    pub(crate) fn path(&self) -> PathBuf {
        self.proc_dir().join("ns/user")
    }

    /// `unshare` makes the namespace after it starts; its own namespace link changes then.
    fn wait_until_unshared(&self) -> Result<(), SandboxError> {
        let ours = std::fs::read_link("/proc/self/ns/user")?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match std::fs::read_link(self.path()) {
                Ok(theirs) if theirs != ours => return Ok(()),
                Ok(_) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => return Err(e.into()),
            }
        }
        Err(SandboxError::Unavailable(
            "no user namespace could be made for the sandbox (unshare --user)".into(),
        ))
    }
}

impl Drop for HeldUserns {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_mapped_for_the_mounts_and_the_sandbox_user_is_nobody_with_the_repository_group() {
        assert_eq!(
            id_maps(0),
            (
                "0 0 1\n65534 65534 1\n".into(),
                "0 0 1\n65534 65534 1\n".into()
            )
        );
        assert_eq!(
            id_maps(1000).1,
            "0 0 1\n65534 65534 1\n1000 1000 1\n".to_string()
        );
    }
}
