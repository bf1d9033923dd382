//! The last check of a generated repository: every Python file compiles, the project installs
//! with `pip install -e .` into a fresh virtual environment, and `pytest tests/` runs in the
//! sandbox.
//!
//! The install runs on a copy of the repository, because setuptools writes `*.egg-info` next
//! to the sources and the output must not change behind the user's back. It works offline:
//! pip builds with setuptools from the wheelhouse that `scripts/setup.sh` fills
//! (`$XDG_CACHE_HOME/zerorepo/wheelhouse`, or `ZEROREPO_WHEELHOUSE`). Installing does not run
//! generated code; the tests, which do, run only in the sandbox.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::sandbox::{TestOutcome, TestRunner};

/// pip gets this long to build and install.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub ok: bool,
    /// One line on success; the tail of the output on failure.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestSummary {
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub sandbox: String,
    pub outcomes: Vec<TestOutcome>,
    /// Why the run ended badly, if it did.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validation {
    pub python_files: usize,
    /// `path: error` of every file that does not compile.
    pub syntax_errors: Vec<String>,
    pub install: Check,
    pub tests: Option<TestSummary>,
}

/// `$ZEROREPO_WHEELHOUSE`, else `wheelhouse` next to the models' cache directory.
pub fn wheelhouse_dir() -> PathBuf {
    std::env::var_os("ZEROREPO_WHEELHOUSE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let models = crate::llm::model::models_dir();
            models
                .parent()
                .map_or_else(|| PathBuf::from("wheelhouse"), |p| p.join("wheelhouse"))
        })
}

fn python() -> String {
    std::env::var("ZEROREPO_PYTHON").unwrap_or_else(|_| "python3".into())
}

pub async fn validate(
    repo: &Path,
    python_files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Validation {
    let syntax_errors = compile_all(repo, python_files).await;
    let install = install(repo).await;
    let tests = if repo.join("tests").is_dir() {
        Some(match runner.run_tests(repo, "tests", cancel).await {
            Ok(run) => TestSummary {
                passed: run.passed,
                failed: run.failed,
                errors: run.errors,
                sandbox: run.sandbox.clone(),
                problem: (!run.succeeded()).then(|| run.failure_reason()),
                outcomes: run.tests,
            },
            Err(e) => TestSummary {
                passed: 0,
                failed: 0,
                errors: 0,
                sandbox: runner.name().to_string(),
                outcomes: Vec::new(),
                problem: Some(e.to_string()),
            },
        })
    } else {
        None
    };
    Validation {
        python_files: python_files.len(),
        syntax_errors,
        install,
        tests,
    }
}

/// Compiles (never runs) every file with Python's own parser, in one process.
async fn compile_all(repo: &Path, files: &[String]) -> Vec<String> {
    const SCRIPT: &str = "import sys\nfor path in sys.argv[1:]:\n    try:\n        compile(open(path, encoding='utf-8').read(), path, 'exec')\n    except (SyntaxError, ValueError, UnicodeDecodeError) as e:\n        print(f'{path}: {e}')\n";
    if files.is_empty() {
        return Vec::new();
    }
    let output = tokio::process::Command::new(python())
        .arg("-c")
        .arg(SCRIPT)
        .args(files)
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .await;
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
        Ok(out) => vec![format!(
            "the syntax check itself failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )],
        Err(e) => vec![format!("cannot run {}: {e}", python())],
    }
}

async fn install(repo: &Path) -> Check {
    let work = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return failed(format!("cannot create a temp dir: {e}")),
    };
    let copy = work.path().join("repo");
    if let Err(e) = copy_tree(repo, &copy) {
        return failed(format!("cannot copy the repository: {e}"));
    }
    let venv = work.path().join("venv");
    let created = run(tokio::process::Command::new(python())
        .args(["-m", "venv"])
        .arg(&venv))
    .await;
    if let Err(e) = created {
        return failed(format!("`{} -m venv` failed: {e}", python()));
    }
    let wheelhouse = wheelhouse_dir();
    let mut pip = tokio::process::Command::new(venv.join("bin/pip"));
    pip.args(["install", "--no-index", "--disable-pip-version-check", "-q"]);
    if wheelhouse.is_dir() {
        pip.arg("--find-links").arg(&wheelhouse);
    } else {
        // Without a wheelhouse pip cannot fetch setuptools offline; use the venv's own.
        pip.arg("--no-build-isolation");
    }
    pip.arg("-e").arg(&copy);
    match run(&mut pip).await {
        Ok(()) => Check {
            ok: true,
            detail: "`pip install -e .` succeeded in a fresh virtual environment".into(),
        },
        Err(e) => failed(format!(
            "`pip install -e .` failed{}: {e}",
            if wheelhouse.is_dir() {
                String::new()
            } else {
                format!(
                    " (no wheelhouse at {}; run scripts/setup.sh)",
                    wheelhouse.display()
                )
            }
        )),
    }
}

fn failed(detail: String) -> Check {
    Check { ok: false, detail }
}

async fn run(command: &mut tokio::process::Command) -> Result<(), String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(INSTALL_TIMEOUT, command.output())
        .await
        .map_err(|_| format!("timed out after {INSTALL_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let tail: Vec<&str> = text.lines().rev().take(8).collect();
    Err(tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
}

/// Copies the repository without the engine's state and git's.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" || name == crate::engine::STATE_DIR {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}
