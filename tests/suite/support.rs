//! Helpers shared by the integration tests: the built binary, the fixtures, a Python with
//! pytest, and tree comparison.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures").join(name)
}

/// The `zerorepo` binary built for this test run, with the sandbox the machine supports.
pub fn zerorepo() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zerorepo"));
    cmd.env_remove("ZEROREPO_LLM").env_remove("RUST_LOG");
    // The user's own zerorepo.toml is trusted configuration: never this machine's in a test.
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/zerorepo-test-config");
    if let Some(python) = python_with_pytest() {
        cmd.env("ZEROREPO_PYTHON", python);
    }
    cmd.env("ZEROREPO_SANDBOX", sandbox_backend());
    cmd
}

/// Whether bubblewrap and Debian's python3 with pytest are here (the default sandbox).
pub fn bwrap_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let ok = |c: &mut Command| c.output().map(|o| o.status.success()).unwrap_or(false);
        ok(Command::new("bwrap").arg("--version"))
            && ok(Command::new("/usr/bin/python3").args(["-c", "import pytest"]))
    })
}

/// Whether a Docker engine answers (DOCKER_HOST or the default socket) and has the sandbox
/// image; asked once per test binary.
pub fn docker_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("docker")
            .args(["image", "inspect", zerorepo::sandbox::docker::DEFAULT_IMAGE])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// `bwrap` where it works; elsewhere (not in CI) `none`, announced loudly.
pub fn sandbox_backend() -> &'static str {
    if bwrap_available() {
        return "bwrap";
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI must provide bubblewrap and python3-pytest (scripts/setup.sh installs them)");
    }
    eprintln!(
        "NOTE: bubblewrap or /usr/bin/python3 with pytest is missing: generation tests run with --sandbox none"
    );
    "none"
}

/// Runs a command and returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("spawn zerorepo");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// A Python that can import pytest: `$ZEROREPO_PYTHON`, the set-up scripts' venv, or `python3`.
/// Generation tests need one; in CI the set-up script installs it, so a missing one fails there
/// and skips loudly elsewhere.
pub fn python_with_pytest() -> Option<String> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("ZEROREPO_PYTHON") {
        candidates.push(p);
    }
    if let Ok(home) = std::env::var("HOME") {
        candidates.push(format!("{home}/.cache/zerorepo/venv/bin/python"));
    }
    candidates.push("python3".into());
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pytest"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// Returns the Python to use, or explains loudly why the test is skipped (and fails in CI).
pub fn require_python() -> Option<String> {
    match python_with_pytest() {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("CI must provide a Python with pytest (scripts/test.sh installs it)")
        }
        None => {
            eprintln!(
                "SKIPPED: no Python with pytest found; run scripts/test.sh or set ZEROREPO_PYTHON"
            );
            None
        }
    }
}

/// Whether ruff is here (on `PATH` or in the set-up venv), or explains loudly why the test is
/// skipped (and fails in CI, where `scripts/setup.sh` installs it).
pub fn require_ruff() -> bool {
    match zerorepo::programs::find("ruff") {
        Some(_) => true,
        None if std::env::var_os("CI").is_some() => {
            panic!("CI must provide ruff (scripts/setup.sh installs it into the venv)")
        }
        None => {
            eprintln!("SKIPPED: ruff is not installed; run scripts/setup.sh");
            false
        }
    }
}

/// Every file under `root` (relative path → bytes), leaving out the engine's own state, git's
/// store and the files with timestamps.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .into_owned();
            // Engine state, git's store, and the files that hold timestamps and durations.
            if [
                ".zerorepo",
                ".git",
                "docs/generation_checkpoint.json",
                "docs/generation_report.md",
                "docs/generation_report.html",
                "docs/rpg.json",
            ]
            .contains(&rel.as_str())
            {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(rel, std::fs::read(&path).expect("read file"));
            }
        }
    }
    files
}

/// Writes `content` as `rpg.json` in a fresh temp dir and returns (dir, path).
pub fn rpg_file(content: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rpg.json");
    std::fs::write(&path, content).expect("write rpg");
    (dir, path)
}

/// True when `dir` does not exist or is empty.
pub fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

/// Runs pytest on `tests` against the repository `repo` (src layout): (passed?, stdout).
pub fn pytest(python: &str, repo: &Path, tests: &Path) -> (bool, String) {
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(tests)
        .current_dir(repo)
        .env("PYTHONPATH", "src")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run pytest");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
