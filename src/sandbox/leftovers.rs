//! What a killed zerorepo leaves behind, found and removed by the next run.
//!
//! Temp files and directories (the runner's script, bubblewrap's argument file, probes) and
//! sandbox cgroups are named `zerorepo-<kind>-<pid>-…` or `zerorepo-<pid>-…`, with the pid of
//! the process that made them. A `kill -9` skips every destructor, so they would pile up; any
//! whose process no longer exists is removed when the next sandbox is set up. A pid that was
//! reused by an unrelated process only delays the cleanup, it never removes a live run's files.

use std::path::PathBuf;

/// The prefix of a temp file or directory owned by this process, for `kind`.
pub(crate) fn temp_prefix(kind: &str) -> String {
    format!("zerorepo-{kind}-{}-", std::process::id())
}

/// The pid in a name such as `zerorepo-runner-123-abc` or `zerorepo-123-4`: the first
/// segment after `zerorepo-` that is all digits.
fn owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("zerorepo-")?;
    rest.split('-')
        .find(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|pid| pid.parse().ok())
}

/// Whether `name` is one of ours and its process is gone.
pub(crate) fn owner_is_gone(name: &str) -> bool {
    let Some(pid) = owner(name) else {
        return false;
    };
    pid > 0
        && pid != std::process::id() as i32
        && matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        )
}

/// Removes stale temp entries and cgroups; returns how many things were removed.
pub fn clean() -> usize {
    let mut removed = 0;
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !owner_is_gone(&name) {
                continue;
            }
            let path: PathBuf = entry.path();
            let gone = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed += usize::from(gone.is_ok());
        }
    }
    removed + super::cgroup::remove_stale()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_pid_is_read_from_either_naming() {
        assert_eq!(owner("zerorepo-runner-123-aBc9"), Some(123));
        assert_eq!(owner("zerorepo-4567-0"), Some(4567));
        assert_eq!(owner("zerorepo-image-xyz"), None);
        assert_eq!(owner("other-123"), None);
    }

    #[test]
    fn entries_of_a_dead_process_are_removed_and_live_ones_kept() {
        // A child that has exited and been reaped: its pid is (almost surely) free.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let tmp = std::env::temp_dir();
        let stale = tmp.join(format!("zerorepo-runner-{dead}-test"));
        let live = tmp.join(format!("{}test", temp_prefix("runner")));
        for dir in [&stale, &live] {
            std::fs::create_dir_all(dir.join("inner")).unwrap();
        }
        clean();
        assert!(!stale.exists());
        assert!(live.exists());
        std::fs::remove_dir_all(&live).unwrap();
    }
}
