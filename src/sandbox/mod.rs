//! Running a repository's tests, isolated.
//!
//! Generated code is untrusted, so every test run goes through a [`TestRunner`]:
//! - [`bwrap`] (the default): bubblewrap with every namespace unshared, a minimal read-only
//!   root, the repository read-only, no network, rlimits per run and a pids/memory cgroup;
//! - [`local`] (`--sandbox none`): a plain subprocess, isolating nothing, only on request.
//!
//! What a sandbox allows is data ([`policy::SandboxPolicy`]); each backend translates it in a
//! pure function. Inside a sandbox a warm runner ([`warm`], `runner.py`) that has already
//! imported pytest forks once per run, which is several times cheaper than a cold start.

pub mod bwrap;
pub mod cgroup;
pub mod docker;
pub mod engines;
pub mod leftovers;
pub mod local;
pub mod policy;
mod seccomp;
mod userns;
pub(crate) use userns::NOBODY;
pub mod warm;

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use bwrap::BwrapRunner;
pub use docker::DockerRunner;
pub(crate) use engines::EnginePool;
pub use local::LocalRunner;
pub use policy::SandboxPolicy;

/// The outcome of one test case, from pytest's JUnit XML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TestOutcome {
    /// `file::test_name` (pytest's classname and name).
    pub name: String,
    /// `passed`, `failed`, `error` or `skipped`.
    pub outcome: String,
}

/// The result of one test run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestRun {
    /// `None` when the process was killed.
    pub exit_code: Option<i32>,
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub timed_out: bool,
    pub cancelled: bool,
    /// `timeout`, or the signal that ended the run (`SIGKILL`, `SIGXCPU`, ...).
    pub killed_by: Option<String>,
    /// stdout then stderr, each capped (the tail is kept: that is where pytest's summary is).
    pub output: String,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
    pub cpu_ms: Option<u64>,
    pub max_rss_kb: Option<u64>,
    /// Per-test outcomes (empty when pytest did not get to write its report).
    pub tests: Vec<TestOutcome>,
    /// The backend that ran it; `none` means nothing was isolated.
    pub sandbox: String,
}

impl TestRun {
    /// The result of a run stopped by cancellation (Ctrl-C).
    pub fn cancelled(sandbox: &str) -> TestRun {
        TestRun {
            exit_code: None,
            passed: 0,
            failed: 0,
            errors: 0,
            timed_out: false,
            cancelled: true,
            killed_by: Some("cancelled".into()),
            output: String::new(),
            stdout: String::new(),
            stderr: String::new(),
            duration: Duration::ZERO,
            cpu_ms: None,
            max_rss_kb: None,
            tests: Vec::new(),
            sandbox: sandbox.to_string(),
        }
    }

    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled && self.passed > 0
    }

    /// The output without what changes from run to run (temp paths, timings), so the same
    /// failure gives the same prompt: reproducible, replayable, and kind to the KV cache.
    pub(crate) fn stable_output(&self) -> String {
        self.output
            .lines()
            .filter(|l| !l.contains("generated xml file:"))
            .map(strip_timing)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// [`stable_output`](Self::stable_output) cut to the traceback sections of the named test
    /// functions (a parametrized `test_f[case]` belongs to `test_f`) and the summary line.
    /// Pytest heads each failure with `____ test_name ____`; when no section matches (a
    /// collection error, say) the whole output is what explains the failure.
    pub(crate) fn output_of(&self, names: &[String]) -> String {
        let stable = self.stable_output();
        let mut kept: Vec<&str> = Vec::new();
        let mut keeping = false;
        let mut found = false;
        for line in stable.lines() {
            if let Some(title) = section_title(line) {
                let function = title.split('[').next().unwrap_or(title);
                keeping = names.iter().any(|n| n == function);
                found |= keeping;
            } else if line.starts_with("===") {
                keeping = false;
            }
            if keeping {
                kept.push(line);
            }
        }
        if !found {
            return stable;
        }
        if let Some(summary) = stable.lines().rev().find(|l| !l.trim().is_empty()) {
            kept.push(summary);
        }
        kept.join("\n")
    }

    /// One line for checkpoints and reports.
    pub fn failure_reason(&self) -> String {
        if self.timed_out {
            return format!("tests timed out after {:.0?}", self.duration);
        }
        if let Some(signal) = &self.killed_by {
            return format!(
                "tests were killed by {signal} (a sandbox limit: CPU, memory, file size or processes)"
            );
        }
        if self.exit_code == Some(5) || (self.exit_code == Some(0) && self.passed == 0) {
            return "pytest collected no tests".into();
        }
        let first_error = self
            .output
            .lines()
            .find(|l| l.starts_with("E ") || l.starts_with("FAILED ") || l.starts_with("ERROR "))
            .map(|l| l.trim_start_matches("E ").trim().to_string());
        let counts = format!(
            "{} passed, {} failed, {} errors",
            self.passed, self.failed, self.errors
        );
        match first_error {
            Some(e) => format!("{e} ({counts})"),
            None => format!("pytest exit code {:?} ({counts})", self.exit_code),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(
        "{python} cannot import pytest; install it (`{python} -m pip install pytest`) or set ZEROREPO_PYTHON"
    )]
    NoPytest { python: String },
    #[error("sandbox unavailable: {0}")]
    Unavailable(String),
    #[error("sandbox failed: {0}")]
    Failed(String),
}

#[async_trait::async_trait]
pub trait TestRunner: Send + Sync {
    /// A short name for logs and reports.
    fn name(&self) -> &str;
    /// What a run's outcome depends on besides the repository: the backend and what it runs
    /// (the interpreter, the image). A validation is reused only while this is unchanged.
    async fn identity(&self) -> String {
        self.name().to_string()
    }
    /// Fails, with a fix for the user, when the runner cannot work at all (no pytest, ...).
    async fn check_ready(&self) -> Result<(), SandboxError>;
    /// Releases what the runner holds (containers); the engine calls it when a run ends.
    async fn shutdown(&self) {}
    /// Runs `test_file` (relative to `repo`) and reports the outcome.
    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError>;
    /// The install check, where the tests run (installing a package runs its build code):
    /// `pip install -e` of a copy of `repo` into a fresh venv, offline, with pip and
    /// setuptools from the wheelhouse ([`wheelhouse_dir`]). Exit code 0 means it installed.
    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError>;
    /// Where ruff is for [`run_command`](Self::run_command), or `None` when this sandbox has
    /// none: the sandboxes put the pinned ruff of `scripts/setup.sh` at [`RUFF_IN_SANDBOX`]
    /// (bubblewrap mounts it, the Docker image carries it), so assembly's cleanup runs it on
    /// generated files there and never on the host.
    fn ruff(&self) -> Option<String> {
        None
    }
    /// Runs a command line (`argv`, no shell) from the root of `repo`, read-only, with the
    /// same limits as a test run: a repository's own diagnostic (`zerorepo code`). `python`
    /// and `python3` name the sandbox's interpreter.
    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError>;
}

/// Where ruff is inside a sandbox (mounted read-only by bubblewrap, part of the Docker image).
pub const RUFF_IN_SANDBOX: &str = "/opt/ruff/bin/ruff";

/// A file's path with its size and modification time: enough to notice it was replaced.
pub(crate) fn file_identity(path: &std::path::Path) -> String {
    let stamp = std::fs::metadata(path).ok().map(|m| {
        let modified = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("{} bytes, modified {modified}", m.len())
    });
    format!(
        "{} ({})",
        path.display(),
        stamp.unwrap_or_else(|| "missing".into())
    )
}

/// `$ZEROREPO_WHEELHOUSE`, else `$ZEROREPO_CACHE/wheelhouse`, else
/// `~/.cache/zerorepo/wheelhouse`: where `scripts/setup.sh` puts the pip and setuptools wheels.
pub(crate) fn wheelhouse_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("ZEROREPO_WHEELHOUSE") {
        return Some(dir.into());
    }
    crate::programs::venv_dir().and_then(|venv| venv.parent().map(|c| c.join("wheelhouse")))
}

/// Default wall-clock limit for one test run (the seed's 30 s).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Which backend runs the tests (defined with the configuration file, which names it too).
pub use crate::config::Backend;

/// `1 failed, 2 passed in 0.03s` -> `1 failed, 2 passed`.
/// The test named by a pytest failure header such as `_____ test_f[1-2] _____`.
fn section_title(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("___")?.trim_start_matches('_');
    let inner = inner.strip_suffix("___")?.trim_end_matches('_');
    let title = inner.strip_prefix(' ')?.strip_suffix(' ')?;
    (!title.is_empty() && !title.contains(' ')).then_some(title)
}

fn strip_timing(line: &str) -> String {
    match line.rfind(" in ") {
        Some(at)
            if line[at + 4..].trim_end_matches(['=', ' ']).ends_with('s')
                && line[at + 4..]
                    .trim_end_matches(['=', ' ', 's'])
                    .parse::<f64>()
                    .is_ok() =>
        {
            line[..at].to_string()
        }
        _ => line.to_string(),
    }
}

/// Reads pytest's final summary (`2 failed, 3 passed, 1 error in 0.12s`) into counts.
pub(crate) fn parse_pytest_summary(output: &str) -> (u32, u32, u32) {
    let (mut passed, mut failed, mut errors) = (0, 0, 0);
    let Some(line) = output.lines().rev().find(|l| {
        let l = l.trim_matches(|c: char| c == '=' || c.is_whitespace());
        l.contains(" in ")
            && (l.contains("passed")
                || l.contains("failed")
                || l.contains("error")
                || l.contains("no tests ran"))
    }) else {
        return (0, 0, 0);
    };
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    for pair in words.windows(2) {
        if let Ok(n) = pair[0].parse::<u32>() {
            match pair[1] {
                "passed" => passed = n,
                "failed" => failed = n,
                "error" | "errors" => errors = n,
                _ => {}
            }
        }
    }
    (passed, failed, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_output_drops_temp_paths_and_timings() {
        let run = TestRun { output: "F\n---- generated xml file: /tmp/run-x1/.junit.xml ----\n1 failed, 2 passed in 0.03s\n".into(), ..TestRun::cancelled("t") };
        assert_eq!(run.stable_output(), "F\n1 failed, 2 passed");
    }

    #[test]
    fn output_of_keeps_the_named_failures_and_the_summary() {
        let output = "F.F\n=== FAILURES ===\n\
            ____ test_a[1-2] ____\nE   assert 1 == 2\n\
            ____ test_b ____\nE   boom\n\
            === short test summary info ===\nFAILED t.py::test_a\n2 failed, 1 passed in 0.03s\n";
        let run = TestRun {
            output: output.into(),
            ..TestRun::cancelled("t")
        };
        assert_eq!(
            run.output_of(&["test_a".into()]),
            "____ test_a[1-2] ____\nE   assert 1 == 2\n2 failed, 1 passed"
        );
        assert_eq!(run.output_of(&["test_c".into()]), run.stable_output());
        assert_eq!(section_title("____ test_b ____"), Some("test_b"));
        assert_eq!(section_title("______"), None);
    }

    #[test]
    fn summary_lines_are_parsed() {
        assert_eq!(
            parse_pytest_summary("..F\nFAILED x\n1 failed, 2 passed in 0.03s\n"),
            (2, 1, 0)
        );
        assert_eq!(
            parse_pytest_summary("== 3 passed, 1 error in 1.2s =="),
            (3, 0, 1)
        );
        assert_eq!(parse_pytest_summary("no summary"), (0, 0, 0));
    }
}
