//! Where the external programs of the code tools are found: on `PATH`, else in the venv that
//! `scripts/setup.sh` fills (`$ZEROREPO_CACHE/venv`, default `~/.cache/zerorepo/venv`).
//!
//! Looking in the venv as well as on `PATH` means a plain `cargo test` after `setup.sh` finds
//! ruff and ty without anyone activating the venv. Nothing here runs a program.

use std::path::{Path, PathBuf};

/// The venv that `scripts/setup.sh` creates.
pub(crate) fn venv_dir() -> Option<PathBuf> {
    if let Some(cache) = std::env::var_os("ZEROREPO_CACHE") {
        return Some(PathBuf::from(cache).join("venv"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/zerorepo/venv"))
}

/// `name` on `PATH`, else in the venv's `bin/`.
pub fn find(name: &str) -> Option<PathBuf> {
    on_path(name).or_else(|| {
        let candidate = venv_dir()?.join("bin").join(name);
        is_executable(&candidate).then_some(candidate)
    })
}

/// `name` on `PATH` only.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
