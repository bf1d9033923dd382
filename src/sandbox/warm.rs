//! The host side of the warm runner (`runner.py`): JSON lines over any byte stream, so the
//! bubblewrap backend (child pipes) and the Docker backend (attach streams) share it.
//!
//! A response that does not come within the run's timeout plus a grace period, a closed
//! stream or a malformed line is an infrastructure error: the backend throws the process away
//! and starts a fresh one.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::policy::SandboxPolicy;
use super::{TestOutcome, TestRun, parse_pytest_summary};

/// The runner script, written into each sandbox read-only.
pub(crate) const RUNNER_PY: &str = include_str!("runner.py");

/// Extra time the runner gets beyond the run's own timeout to kill, sweep and answer.
const GRACE: Duration = Duration::from_secs(10);

/// The longest line the runner may answer: its outputs are cut to their caps, so only the
/// list of tests grows with a suite, and 64 MiB holds hundreds of thousands of them.
const MAX_LINE: u64 = 64 << 20;

/// What one run of the warm runner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WarmJob<'a> {
    /// pytest on one test file (relative to the repository).
    Tests(&'a str),
    /// The install check: `pip install -e` of a copy of the repository, offline.
    Install,
    /// A command line (argv, no shell) run from the repository root: a repository's own
    /// diagnostic, such as `python -m pytest -q` or `ruff check .` (`zerorepo code`).
    Command(&'a [String]),
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunRequest {
    pub id: u64,
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub install: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    pub timeout: f64,
    pub cpu_seconds: u64,
    pub memory_bytes: u64,
    pub max_processes: u64,
    pub file_bytes: u64,
    pub output_cap: usize,
}

impl RunRequest {
    pub fn new(id: u64, job: WarmJob<'_>, policy: &SandboxPolicy) -> RunRequest {
        let args = match job {
            WarmJob::Tests(test_file) => vec!["-q".into(), "--tb=short".into(), test_file.into()],
            WarmJob::Install | WarmJob::Command(_) => Vec::new(),
        };
        let command = match job {
            WarmJob::Command(argv) => argv.to_vec(),
            _ => Vec::new(),
        };
        RunRequest {
            id,
            args,
            install: job == WarmJob::Install,
            command,
            timeout: policy.wall_timeout_secs as f64,
            cpu_seconds: policy.cpu_seconds,
            memory_bytes: policy.memory_bytes(),
            max_processes: policy.max_processes,
            file_bytes: policy.max_file_mb * 1024 * 1024,
            output_cap: policy.output_cap_bytes,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RunResponse {
    pub id: Option<u64>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<String>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub cpu_ms: Option<u64>,
    #[serde(default)]
    pub max_rss_kb: Option<u64>,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub tests: Vec<TestOutcome>,
}

impl RunResponse {
    /// The run as the engine sees it, with known secrets redacted from everything the
    /// untrusted code printed or named ([`crate::redact`]).
    pub(crate) fn into_test_run(mut self, sandbox: &str) -> TestRun {
        crate::redact::redact_in_place(&mut self.stdout);
        crate::redact::redact_in_place(&mut self.stderr);
        for test in &mut self.tests {
            crate::redact::redact_in_place(&mut test.name);
        }
        let output = format!("{}{}", self.stdout, self.stderr);
        let (passed, failed, errors) =
            count_outcomes(&self.tests).unwrap_or_else(|| parse_pytest_summary(&output));
        let killed_by = if self.timed_out {
            Some("timeout".to_string())
        } else {
            self.signal.clone()
        };
        TestRun {
            exit_code: self.exit_code,
            passed,
            failed,
            errors,
            timed_out: self.timed_out,
            cancelled: false,
            killed_by,
            output,
            stdout: self.stdout,
            stderr: self.stderr,
            duration: Duration::from_millis(self.duration_ms),
            cpu_ms: self.cpu_ms,
            max_rss_kb: self.max_rss_kb,
            tests: self.tests,
            sandbox: sandbox.to_string(),
        }
    }
}

fn count_outcomes(tests: &[TestOutcome]) -> Option<(u32, u32, u32)> {
    if tests.is_empty() {
        return None;
    }
    let count = |o: &str| tests.iter().filter(|t| t.outcome == o).count() as u32;
    Some((count("passed"), count("failed"), count("error")))
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum WarmError {
    #[error("the warm runner closed its output")]
    Closed,
    #[error("the warm runner did not answer within {0:?}")]
    NoAnswer(Duration),
    #[error("the warm runner sent a malformed line: {0}")]
    Malformed(String),
    #[error("the warm runner failed: {0}")]
    Runner(String),
    #[error("warm runner I/O: {0}")]
    Io(#[from] std::io::Error),
}

impl WarmError {
    /// A line the runner sent that is not its protocol: it may carry what the untrusted code
    /// printed, so it is cut short and redacted like any output of a run.
    fn malformed(line: &str) -> WarmError {
        let start: String = line.chars().take(200).collect();
        WarmError::Malformed(crate::redact::redact(&start).into_owned())
    }
}

/// One conversation with a runner process.
pub(crate) struct WarmChannel {
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    reader: Box<dyn AsyncBufRead + Unpin + Send>,
    next_id: u64,
}

impl WarmChannel {
    /// Wraps the streams and waits for the runner's `ready` line.
    pub async fn start(
        writer: Box<dyn AsyncWrite + Unpin + Send>,
        reader: Box<dyn AsyncBufRead + Unpin + Send>,
        startup: Duration,
    ) -> Result<(WarmChannel, String), WarmError> {
        let mut channel = WarmChannel {
            writer,
            reader,
            next_id: 1,
        };
        let line = channel.read_line(startup).await?;
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|_| WarmError::malformed(&line))?;
        if value["ready"] != true {
            return Err(WarmError::malformed(&line));
        }
        Ok((channel, line))
    }

    async fn read_line(&mut self, limit: Duration) -> Result<String, WarmError> {
        bounded_line(&mut self.reader, MAX_LINE, limit).await
    }

    /// Runs one job and waits for its answer.
    pub async fn run(
        &mut self,
        job: WarmJob<'_>,
        policy: &SandboxPolicy,
    ) -> Result<RunResponse, WarmError> {
        let request = RunRequest::new(self.next_id, job, policy);
        self.next_id += 1;
        let mut line =
            serde_json::to_string(&request).map_err(|e| WarmError::Malformed(e.to_string()))?;
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await?;
        self.writer.flush().await?;
        let answer = self.read_line(policy.wall_timeout() + GRACE).await?;
        let response: RunResponse =
            serde_json::from_str(&answer).map_err(|_| WarmError::malformed(&answer))?;
        if let Some(error) = response.error {
            return Err(WarmError::Runner(error));
        }
        if response.id != Some(request.id) {
            return Err(WarmError::Malformed(format!(
                "answer for request {:?}, expected {}",
                response.id, request.id
            )));
        }
        Ok(response)
    }
}

/// What a backend must release when a warm session ends (a process, a cgroup, a container).
#[async_trait::async_trait]
pub(crate) trait SessionResources: Send {
    async fn release(self: Box<Self>);
}

/// A live runner for one repository.
pub(crate) struct Session {
    pub repo: std::path::PathBuf,
    pub channel: WarmChannel,
    pub resources: Box<dyn SessionResources>,
}

/// The warm sessions a backend keeps (one per slot, opened when concurrency first needs it),
/// and the run loop both sandboxed backends share: take a free slot (one already warm for the
/// repository first), (re)open its session for the repository, run, and on an infrastructure
/// error throw the session away and try once more with a fresh one. Nodes generated at once
/// (`--jobs`) run their tests in parallel, one session each, up to the pool's size.
pub(crate) struct WarmPool {
    slots: Vec<tokio::sync::Mutex<Option<Session>>>,
    free: tokio::sync::Semaphore,
}

/// Sessions at most: one per core (a test run is CPU-bound), at most 4.
fn default_size() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4))
}

impl Default for WarmPool {
    fn default() -> WarmPool {
        WarmPool::new(default_size())
    }
}

impl WarmPool {
    pub fn new(size: usize) -> WarmPool {
        let size = size.max(1);
        WarmPool {
            slots: (0..size).map(|_| tokio::sync::Mutex::new(None)).collect(),
            free: tokio::sync::Semaphore::new(size),
        }
    }

    /// A slot nobody uses: one whose session already serves `repo` if there is one. The
    /// caller holds a permit, so at most `size - 1` others hold a slot and one is free.
    fn take_slot(
        &self,
        repo: &std::path::Path,
    ) -> Option<tokio::sync::MutexGuard<'_, Option<Session>>> {
        let warm = self.slots.iter().find_map(|slot| {
            let guard = slot.try_lock().ok()?;
            guard
                .as_ref()
                .is_some_and(|s| s.repo == repo)
                .then_some(guard)
        });
        warm.or_else(|| self.slots.iter().find_map(|slot| slot.try_lock().ok()))
    }

    pub async fn run<F, Fut>(
        &self,
        backend: &str,
        repo: &std::path::Path,
        job: WarmJob<'_>,
        policy: &SandboxPolicy,
        cancel: &tokio_util::sync::CancellationToken,
        open: F,
    ) -> Result<TestRun, super::SandboxError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<Session, super::SandboxError>>,
    {
        let _permit = self
            .free
            .acquire()
            .await
            .map_err(|_| super::SandboxError::Failed("the sandbox pool is closed".into()))?;
        let Some(mut slot) = self.take_slot(repo) else {
            return Err(super::SandboxError::Failed(
                "no free sandbox session".into(),
            ));
        };
        let mut last_error = None;
        for _ in 0..2 {
            if slot.as_ref().is_some_and(|s| s.repo != repo) {
                release(slot.take()).await;
            }
            if slot.is_none() {
                *slot = Some(open().await?);
            }
            let Some(session) = slot.as_mut() else {
                continue;
            };
            let outcome = tokio::select! {
                r = session.channel.run(job, policy) => r,
                _ = cancel.cancelled() => {
                    release(slot.take()).await;
                    return Ok(TestRun::cancelled(backend));
                }
            };
            match outcome {
                Ok(response) => return Ok(response.into_test_run(backend)),
                Err(error) => {
                    tracing::warn!("{backend} sandbox replaced after: {error}");
                    release(slot.take()).await;
                    last_error = Some(error);
                }
            }
        }
        Err(super::SandboxError::Failed(last_error.map_or_else(
            || "the sandbox failed twice".into(),
            |e| e.to_string(),
        )))
    }

    /// Ends every session.
    pub(crate) async fn close(&self) {
        for slot in &self.slots {
            release(slot.lock().await.take()).await;
        }
    }
}

async fn release(session: Option<Session>) {
    if let Some(session) = session {
        drop(session.channel);
        session.resources.release().await;
    }
}

/// One line of `reader`, at most `max` bytes: code under test can reach the runner's pipe,
/// and a line without end would fill zerorepo's memory.
async fn bounded_line<R: AsyncBufRead + Unpin>(
    reader: R,
    max: u64,
    limit: Duration,
) -> Result<String, WarmError> {
    let mut line = String::new();
    let mut bounded = reader.take(max + 1);
    match tokio::time::timeout(limit, bounded.read_line(&mut line)).await {
        Err(_) => Err(WarmError::NoAnswer(limit)),
        Ok(Ok(0)) => Err(WarmError::Closed),
        Ok(Ok(n)) if n as u64 > max => Err(WarmError::Malformed(format!(
            "an answer of more than {max} bytes"
        ))),
        Ok(Ok(_)) => Ok(line),
        Ok(Err(e)) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_longer_than_the_bound_is_refused_unread() {
        let second = Duration::from_secs(1);
        let short: &[u8] = b"{\"ready\": true}\nrest";
        assert_eq!(
            bounded_line(short, 64, second).await.unwrap(),
            "{\"ready\": true}\n"
        );
        let endless = vec![b'x'; 1000];
        let why = bounded_line(endless.as_slice(), 64, second)
            .await
            .unwrap_err();
        assert!(matches!(why, WarmError::Malformed(m) if m.contains("more than 64 bytes")));
    }
}
