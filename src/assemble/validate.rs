//! The last check of a generated repository: every Python file compiles, the project installs
//! with `pip install -e .` into a fresh virtual environment, and `pytest tests/` runs in the
//! sandbox.
//!
//! Installing a package runs its build code, and a plan or a model writes that code, so the
//! install runs where the tests run: in the sandbox ([`TestRunner::check_install`]), on a copy
//! of the repository made inside it (setuptools writes `*.egg-info` next to the sources, and
//! the output must not change behind the user's back). It works offline: pip and setuptools
//! come from the wheelhouse that `scripts/setup.sh` fills (`~/.cache/zerorepo/wheelhouse`, or
//! `ZEROREPO_WHEELHOUSE`), mounted read-only. The syntax check runs there too: Python's
//! `compile()` runs nothing of a file, but the interpreter around it imports modules (a
//! `SyntaxWarning` imports `linecache`), and a host interpreter started in the output
//! directory would import the generated `linecache.py` instead. On the host only ruff
//! (`--select E9,F`), a Rust program, reads the files.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::sandbox::{TestOutcome, TestRunner};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub ok: bool,
    /// One line on success; the tail of the output on failure.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestSummary {
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub sandbox: String,
    pub outcomes: Vec<TestOutcome>,
    /// Why the run ended badly, if it did.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    pub python_files: usize,
    /// `path: error` of every file that does not compile.
    pub syntax_errors: Vec<String>,
    pub install: CheckResult,
    pub tests: Option<TestSummary>,
    /// `ruff check --select E9,F` (syntax errors and pyflakes: undefined names, unused
    /// imports...) over every Python file; `None` when ruff is not installed.
    pub lint: Option<Lint>,
}

/// What ruff found, or why it could not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lint {
    pub findings: Vec<crate::symbols::check::FileIssue>,
    /// Ruff ran but its output could not be read.
    pub problem: Option<String>,
}

pub async fn validate(
    repo: &Path,
    python_files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Validation {
    checked(repo, python_files, runner, cancel).await.0
}

/// The validation, and whether the sandbox ran both of its checks (a validation that could
/// not reach the sandbox says nothing lasting about the repository, so it is not kept).
async fn checked(
    repo: &Path,
    python_files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> (Validation, bool) {
    // The four checks are independent: the two on the host overlap the two in the sandbox,
    // and the install check and the tests run in two sandbox sessions at once.
    let (syntax_errors, lint, (install, installed), (tests, tested)) = tokio::join!(
        compile_all(repo, python_files, runner, cancel),
        lint(repo, python_files),
        install(repo, runner, cancel),
        tests(repo, runner, cancel),
    );
    let validation = Validation {
        python_files: python_files.len(),
        syntax_errors,
        install,
        tests,
        lint,
    };
    (validation, installed && tested && !cancel.is_cancelled())
}

/// What a validation is a function of: zerorepo's version, the sandbox (`sandbox`: its
/// [`TestRunner::identity`]), the wheelhouse the
/// install check uses, and every file of the repository outside hidden directories and
/// caches ([`crate::workspace::publish::files_under`]) but the reports written from the
/// validation itself.
pub(crate) fn fingerprint(repo: &Path, sandbox: &str) -> String {
    const AFTER: [&str; 3] = [
        crate::layout::REPORT,
        crate::layout::REPORT_HTML,
        crate::layout::JUNIT,
    ];
    // The same walk that publishing and assembly use: hidden directories (git's store, the
    // engine's state, virtual environments) and caches are not the repository's content.
    let files: Vec<String> = crate::workspace::publish::files_under(repo)
        .into_iter()
        .filter(|rel| !AFTER.contains(&rel.as_str()))
        .filter_map(|rel| {
            let bytes = std::fs::read(repo.join(&rel)).ok()?;
            Some(format!("{rel}\0{}\n", crate::fsutil::content_hash(&bytes)))
        })
        .collect();
    let wheels: Vec<String> = crate::sandbox::wheelhouse_dir()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .map(|entries| {
            let mut names: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        })
        .unwrap_or_default();
    let header = format!(
        "zerorepo {}\nsandbox {sandbox}\nwheelhouse {}\n",
        env!("CARGO_PKG_VERSION"),
        wheels.join(",")
    );
    crate::fsutil::content_hash((header + &files.concat()).as_bytes())
}

/// The validation kept with its fingerprint in `.zerorepo/validation.json`.
#[derive(Serialize, Deserialize)]
struct KeptValidation {
    fingerprint: String,
    validation: Validation,
}

/// The validation of `repo` as it is now: the one kept from an earlier run when nothing it
/// depends on changed ([`fingerprint`]), else a new one, kept for the next run. Returns it
/// and whether it was kept from before.
pub(crate) async fn validate_or_reuse(
    repo: &Path,
    python_files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> (Validation, bool) {
    let kept_at = repo.join(crate::layout::VALIDATION);
    let fingerprint = fingerprint(repo, &runner.identity().await);
    let kept = std::fs::read(&kept_at)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<KeptValidation>(&bytes).ok())
        .filter(|k| k.fingerprint == fingerprint);
    if let Some(kept) = kept {
        return (kept.validation, true);
    }
    let (validation, complete) = checked(repo, python_files, runner, cancel).await;
    if complete {
        let kept = KeptValidation {
            fingerprint,
            validation: validation.clone(),
        };
        if let Ok(json) = serde_json::to_vec(&kept) {
            // Only a saving for the next run: failing to keep it changes nothing now.
            let _ = crate::fsutil::write_atomic(&kept_at, &json);
        }
    }
    (validation, false)
}

/// `pytest tests/` in the sandbox; `None` when the repository has no tests directory.
/// Also says whether the sandbox ran (no tests directory counts as ran).
async fn tests(
    repo: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> (Option<TestSummary>, bool) {
    if !repo.join("tests").is_dir() {
        return (None, true);
    }
    let result = runner.run_tests(repo, "tests", cancel).await;
    let ran = result.is_ok();
    let summary = match result {
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
    };
    (Some(summary), ran)
}

/// Ruff only reads the files, so it runs on the host, off the async threads.
async fn lint(repo: &Path, files: &[String]) -> Option<Lint> {
    let (repo, files) = (repo.to_path_buf(), files.to_vec());
    let found =
        tokio::task::spawn_blocking(move || crate::symbols::check::lint_files(&repo, &files))
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

/// Compiles (never runs) every file with Python's own parser, in one process in the sandbox,
/// isolated (`-I`: neither the repository nor `PYTHONPATH` is on its import path).
async fn compile_all(
    repo: &Path,
    files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Vec<String> {
    const SCRIPT: &str = "import sys\nfor path in sys.argv[1:]:\n    try:\n        compile(open(path, encoding='utf-8').read(), path, 'exec')\n    except (SyntaxError, ValueError, UnicodeDecodeError) as e:\n        print(f'{path}: {e}')\n";
    if files.is_empty() {
        return Vec::new();
    }
    let mut argv: Vec<String> = ["python3", "-I", "-c", SCRIPT].map(String::from).to_vec();
    argv.extend(files.iter().cloned());
    match runner.run_command(repo, &argv, cancel).await {
        Ok(run) if run.exit_code == Some(0) => run.stdout.lines().map(str::to_string).collect(),
        Ok(run) => vec![format!(
            "the syntax check itself failed: {}",
            run.stderr.trim()
        )],
        Err(e) => vec![format!("the syntax check could not run: {e}")],
    }
}

/// `pip install -e .` runs the package's build code, so it runs where the tests run: in the
/// sandbox, on a copy of the repository, offline (see [`TestRunner::check_install`]).
/// Also says whether the sandbox ran it.
async fn install(
    repo: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> (CheckResult, bool) {
    match runner.check_install(repo, cancel).await {
        Ok(run) => (install_check(&run), true),
        Err(e) => (
            failed(format!("`pip install -e .` could not run: {e}")),
            false,
        ),
    }
}

fn install_check(run: &crate::sandbox::TestRun) -> CheckResult {
    if run.exit_code == Some(0) && !run.timed_out && !run.cancelled {
        return CheckResult {
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
        let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        // pip can fail without a word (a build killed by a limit): the exit code still says
        // something.
        match run.exit_code {
            _ if !tail.trim().is_empty() => tail,
            Some(code) => format!("exit code {code}, no output"),
            None => "no exit code and no output".into(),
        }
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

fn failed(detail: String) -> CheckResult {
    CheckResult { ok: false, detail }
}

#[cfg(test)]
mod fingerprint_tests {
    use super::fingerprint;

    #[test]
    fn the_fingerprint_follows_the_files_and_the_sandbox_but_not_the_reports() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".zerorepo")).unwrap();
        std::fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
        let first = fingerprint(root, "docker img sha256:1");
        // The engine's state and the reports made from the validation do not count.
        std::fs::write(root.join(".zerorepo/journal.jsonl"), "{}\n").unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join(crate::layout::REPORT), "report").unwrap();
        assert_eq!(fingerprint(root, "docker img sha256:1"), first);
        // Another image, or a changed file, does.
        assert_ne!(fingerprint(root, "docker img sha256:2"), first);
        std::fs::write(root.join("src/a.py"), "x = 2\n").unwrap();
        assert_ne!(fingerprint(root, "docker img sha256:1"), first);
    }
}
