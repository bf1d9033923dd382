//! The last check of a generated repository: every Python file compiles, the project installs
//! with `pip install -e .` into a fresh virtual environment, and `pytest tests/` runs in the
//! sandbox.
//!
//! Installing a package runs its build code, and a plan or a model writes that code, so the
//! install runs where the tests run: in the sandbox ([`TestRunner::check_install`]), on a copy
//! of the repository made inside it (setuptools writes `*.egg-info` next to the sources, and
//! the output must not change behind the user's back). It works offline: pip and setuptools
//! come from the wheelhouse that `scripts/setup.sh` fills (`~/.cache/zerorepo/wheelhouse`, or
//! `ZEROREPO_WHEELHOUSE`), mounted read-only. On the host only Python's `compile()` reads the
//! files, which parses them and runs nothing, and ruff (`--select E9,F`), which reads them.

use std::path::Path;
use std::process::Stdio;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::sandbox::{TestOutcome, TestRunner};

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
    /// `ruff check --select E9,F` (syntax errors and pyflakes: undefined names, unused
    /// imports...) over every Python file; `None` when ruff is not installed.
    pub lint: Option<Lint>,
}

/// What ruff found, or why it could not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lint {
    pub findings: Vec<crate::code::check::FileIssue>,
    /// Ruff ran but its output could not be read.
    pub problem: Option<String>,
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
    // The four checks are independent: the two on the host overlap the two in the sandbox,
    // and the install check and the tests run in two sandbox sessions at once.
    let (syntax_errors, lint, install, tests) = tokio::join!(
        compile_all(repo, python_files),
        lint(repo, python_files),
        install(repo, runner, cancel),
        tests(repo, runner, cancel),
    );
    Validation {
        python_files: python_files.len(),
        syntax_errors,
        install,
        tests,
        lint,
    }
}

/// `pytest tests/` in the sandbox; `None` when the repository has no tests directory.
async fn tests(
    repo: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Option<TestSummary> {
    if !repo.join("tests").is_dir() {
        return None;
    }
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
}

/// Ruff only reads the files, so it runs on the host, off the async threads.
async fn lint(repo: &Path, files: &[String]) -> Option<Lint> {
    let (repo, files) = (repo.to_path_buf(), files.to_vec());
    let found = tokio::task::spawn_blocking(move || crate::code::check::lint_files(&repo, &files))
        .await
        .ok()??;
    Some(match found {
        Ok(findings) => Lint {
            findings,
            problem: None,
        },
        Err(e) => Lint {
            findings: Vec::new(),
            problem: Some(e.to_string()),
        },
    })
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

/// `pip install -e .` runs the package's build code, so it runs where the tests run: in the
/// sandbox, on a copy of the repository, offline (see [`TestRunner::check_install`]).
async fn install(repo: &Path, runner: &dyn TestRunner, cancel: &CancellationToken) -> Check {
    let run = match runner.check_install(repo, cancel).await {
        Ok(run) => run,
        Err(e) => return failed(format!("`pip install -e .` could not run: {e}")),
    };
    if run.exit_code == Some(0) && !run.timed_out && !run.cancelled {
        return Check {
            ok: true,
            detail: format!(
                "`pip install -e .` succeeded in a fresh virtual environment (sandbox: {})",
                run.sandbox
            ),
        };
    }
    let why = if run.timed_out {
        format!("timed out after {:.0?}", run.duration)
    } else if let Some(signal) = &run.killed_by {
        format!("killed by {signal}")
    } else {
        let tail: Vec<&str> = run.output.lines().rev().take(8).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    let hint = match crate::sandbox::wheelhouse_dir() {
        Some(dir) if dir.is_dir() => String::new(),
        dir => format!(
            " (no wheelhouse at {}; run scripts/setup.sh)",
            dir.unwrap_or_default().display()
        ),
    };
    failed(format!("`pip install -e .` failed{hint}: {why}"))
}

fn failed(detail: String) -> Check {
    Check { ok: false, detail }
}
