//! The unsandboxed backend: pytest as a plain child process.
//!
//! The child gets its own process group, so a timeout or Ctrl-C kills pytest and everything it
//! spawned (short of `setsid` escapes, which only the real sandboxes contain). Output goes to
//! a temp file rather than a pipe: an escaped grandchild holding a pipe open would otherwise
//! keep us waiting for EOF.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{SandboxError, TestRun, TestRunner, parse_pytest_summary};

/// Kept from the end of the output; pytest's summary and tracebacks are at the end.
const OUTPUT_CAP: usize = 16 * 1024;
/// The install check gets at least this long (pip is slow on a busy machine).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone)]
pub struct LocalRunner {
    python: PathBuf,
    timeout: Duration,
}

impl LocalRunner {
    pub fn new(python: impl Into<PathBuf>, timeout: Duration) -> LocalRunner {
        LocalRunner {
            python: python.into(),
            timeout,
        }
    }

    /// The Python to use: `$ZEROREPO_PYTHON`, else `python3`.
    pub(crate) fn default_python() -> PathBuf {
        std::env::var_os("ZEROREPO_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from)
    }
}

#[async_trait::async_trait]
impl TestRunner for LocalRunner {
    fn name(&self) -> &str {
        "none (unsandboxed subprocess)"
    }

    /// Fails early, with a fix, when the interpreter cannot import pytest.
    async fn check_ready(&self) -> Result<(), SandboxError> {
        let status = tokio::process::Command::new(&self.python)
            .args(["-c", "import pytest"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .map_err(|source| SandboxError::Spawn {
                program: self.python.display().to_string(),
                source,
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(SandboxError::NoPytest {
                python: self.python.display().to_string(),
            })
        }
    }

    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let args = [
            "-m",
            "pytest",
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            test_file,
        ];
        self.run(repo, &args.map(String::from), self.timeout, cancel)
            .await
    }

    /// On the host, like the tests: `--sandbox none` is the user's choice to isolate nothing.
    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let runner = super::bwrap::runner_dir()?;
        let wheelhouse = super::wheelhouse_dir().unwrap_or_default();
        let args = [
            runner.path().join("runner.py").display().to_string(),
            "--install".into(),
            repo.display().to_string(),
            wheelhouse.display().to_string(),
        ];
        let timeout = self.timeout.max(INSTALL_TIMEOUT);
        self.run(repo, &args, timeout, cancel).await
    }

    /// The host's ruff: `--sandbox none` is the user's choice to isolate nothing.
    fn ruff(&self) -> Option<String> {
        crate::programs::find("ruff").map(|p| p.display().to_string())
    }

    /// On the host: `python` names this runner's interpreter; anything else is looked up on
    /// the PATH.
    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let Some((program, args)) = argv.split_first() else {
            return Err(SandboxError::Failed("an empty command line".into()));
        };
        let program = match program.as_str() {
            "python" | "python3" => self.python.clone(),
            other => PathBuf::from(other),
        };
        self.run_program(&program, repo, args, self.timeout, cancel)
            .await
    }
}

impl LocalRunner {
    /// `python ARGS` in `repo`, in its own process group, output captured to a file.
    async fn run(
        &self,
        repo: &Path,
        args: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.run_program(&self.python, repo, args, timeout, cancel)
            .await
    }

    /// `PROGRAM ARGS` in `repo`, in its own process group, output captured to a file.
    async fn run_program(
        &self,
        program: &Path,
        repo: &Path,
        args: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let capture = tempfile::Builder::new()
            .prefix(&super::leftovers::temp_prefix("capture"))
            .tempfile()?;
        let started = Instant::now();
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(repo)
            .env("PYTHONPATH", "src:.")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0")
            .stdin(Stdio::null())
            .stdout(capture.reopen()?)
            .stderr(capture.reopen()?)
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| SandboxError::Spawn {
                program: program.display().to_string(),
                source,
            })?;
        let (mut timed_out, mut cancelled) = (false, false);
        let exit = tokio::select! {
            status = child.wait() => Some(status?),
            _ = tokio::time::sleep(timeout) => { timed_out = true; None }
            _ = cancel.cancelled() => { cancelled = true; None }
        };
        if exit.is_none() {
            kill_group(child.id());
            let _ = child.wait().await;
        }
        let duration = started.elapsed();
        let output = crate::redact::redact(&read_tail(capture.path(), OUTPUT_CAP)?).into_owned();
        let (passed, failed, errors) = parse_pytest_summary(&output);
        let signal = exit.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
        Ok(TestRun {
            exit_code: exit.and_then(|s| s.code()),
            passed,
            failed,
            errors,
            timed_out,
            cancelled,
            killed_by: if timed_out {
                Some("timeout".into())
            } else {
                signal.map(|s| format!("signal {s}"))
            },
            stdout: output.clone(),
            stderr: String::new(),
            output,
            duration,
            cpu_ms: None,
            max_rss_kb: None,
            tests: Vec::new(),
            sandbox: "none".into(),
        })
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

fn read_tail(path: &Path, cap: usize) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    let start = bytes.len().saturating_sub(cap);
    let text = String::from_utf8_lossy(&bytes[start..]).into_owned();
    Ok(if start > 0 {
        format!("[... {start} bytes cut ...]\n{text}")
    } else {
        text
    })
}
