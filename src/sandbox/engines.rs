//! Several sandboxes as one: `--sandbox docker --docker-host URL1,URL2` spreads test runs over
//! Docker engines that already exist (this machine's, another host's over TLS), rather than
//! over anything of ours.
//!
//! Each run goes to the engine with the fewest runs in flight ([`crate::balance`]). The
//! health check at start (`check_ready`: the engine answers and has the image) takes an
//! engine that fails it out of the pool, and so does a run that fails for the engine's sake
//! (it cannot be reached, a container cannot be created or started): that run is handed to
//! the next engine at once, and the engine is tried again after a cool-down. A run that
//! completes, whatever its tests did, is the tests' outcome, not the engine's.
//!
//! Each engine keeps its own warm container per repository, so a repository costs one cold
//! start per engine that serves it. The engines must see the output directory at the same
//! path (this machine, or a shared filesystem): the repository is bind-mounted.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{SandboxError, TestRun, TestRunner};
use crate::balance::Members;

/// How long an engine that failed stays out of the pool.
pub(crate) const COOL_DOWN: Duration = Duration::from_secs(60);

pub(crate) struct EnginePool {
    engines: Members<Box<dyn TestRunner>>,
    /// The engines' URLs, for messages.
    urls: Vec<String>,
    name: String,
}

/// Errors that say the engine, not the code under test, failed.
fn engine_failed(error: &SandboxError) -> bool {
    matches!(
        error,
        SandboxError::Unavailable(_) | SandboxError::Failed(_) | SandboxError::Spawn { .. }
    )
}

impl EnginePool {
    /// One runner per engine, with the engine's URL.
    pub fn new(engines: Vec<(String, Box<dyn TestRunner>)>) -> EnginePool {
        let (urls, runners): (Vec<String>, Vec<Box<dyn TestRunner>>) = engines.into_iter().unzip();
        let name = runners
            .first()
            .map_or("docker".to_string(), |r| r.name().to_string());
        EnginePool {
            engines: Members::new(runners, COOL_DOWN),
            urls,
            name,
        }
    }

    /// Runs `job` on the engines in the pool's order until one completes it.
    async fn dispatch<'a, F, Fut>(
        &'a self,
        cancel: &CancellationToken,
        job: F,
    ) -> Result<TestRun, SandboxError>
    where
        F: Fn(&'a dyn TestRunner) -> Fut,
        Fut: std::future::Future<Output = Result<TestRun, SandboxError>>,
    {
        let mut failures = Vec::new();
        for index in self.engines.next_order() {
            let in_flight = self.engines.start(index);
            let result = job(self.engines.get(index).as_ref()).await;
            drop(in_flight);
            match result {
                Err(error) if engine_failed(&error) && !cancel.is_cancelled() => {
                    tracing::warn!(
                        engine = %self.urls[index],
                        "taking the engine out for {COOL_DOWN:?}: {error}"
                    );
                    self.engines.mark(index, false);
                    failures.push(format!("{}: {error}", self.urls[index]));
                }
                other => {
                    self.engines.mark(index, true);
                    tracing::debug!(engine = %self.urls[index], "sandbox run done");
                    return other;
                }
            }
        }
        Err(SandboxError::Unavailable(format!(
            "every Docker engine failed: {}",
            failures.join("; ")
        )))
    }
}

#[async_trait::async_trait]
impl TestRunner for EnginePool {
    fn name(&self) -> &str {
        &self.name
    }

    /// Every engine runs the same image, so where one has ruff, all have.
    fn ruff(&self) -> Option<String> {
        (0..self.engines.len()).find_map(|i| self.engines.get(i).ruff())
    }

    async fn identity(&self) -> String {
        let all = futures_util::future::join_all(
            (0..self.engines.len()).map(|i| self.engines.get(i).identity()),
        )
        .await;
        all.join(" + ")
    }

    /// Every engine is checked; those that fail are out of the pool, and only when all fail
    /// is the pool unavailable.
    async fn check_ready(&self) -> Result<(), SandboxError> {
        let checks = futures_util::future::join_all(
            (0..self.engines.len()).map(|i| self.engines.get(i).check_ready()),
        )
        .await;
        let mut failures = Vec::new();
        for (index, check) in checks.into_iter().enumerate() {
            match check {
                Ok(()) => self.engines.mark(index, true),
                Err(error) => {
                    tracing::warn!(engine = %self.urls[index], "engine out of the pool: {error}");
                    self.engines.mark(index, false);
                    failures.push(format!("{}: {error}", self.urls[index]));
                }
            }
        }
        if failures.len() == self.engines.len() {
            return Err(SandboxError::Unavailable(format!(
                "no Docker engine of the pool is ready: {}",
                failures.join("; ")
            )));
        }
        Ok(())
    }

    async fn shutdown(&self) {
        futures_util::future::join_all(
            (0..self.engines.len()).map(|i| self.engines.get(i).shutdown()),
        )
        .await;
    }

    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.dispatch(cancel, |engine| engine.run_tests(repo, test_file, cancel))
            .await
    }

    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.dispatch(cancel, |engine| engine.check_install(repo, cancel))
            .await
    }

    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.dispatch(cancel, |engine| engine.run_command(repo, argv, cancel))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An engine that counts its runs, holds each for a moment, and fails when told to.
    struct Fake {
        runs: Arc<AtomicUsize>,
        broken: bool,
    }

    fn run_ok() -> TestRun {
        TestRun {
            exit_code: Some(0),
            cancelled: false,
            killed_by: None,
            ..TestRun::cancelled("docker")
        }
    }

    #[async_trait::async_trait]
    impl TestRunner for Fake {
        fn name(&self) -> &str {
            "docker"
        }
        async fn check_ready(&self) -> Result<(), SandboxError> {
            if self.broken {
                Err(SandboxError::Unavailable("no engine".into()))
            } else {
                Ok(())
            }
        }
        async fn run_tests(
            &self,
            _: &Path,
            _: &str,
            _: &CancellationToken,
        ) -> Result<TestRun, SandboxError> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            if self.broken {
                Err(SandboxError::Unavailable("cannot reach the engine".into()))
            } else {
                Ok(run_ok())
            }
        }
        async fn check_install(
            &self,
            _: &Path,
            _: &CancellationToken,
        ) -> Result<TestRun, SandboxError> {
            Ok(run_ok())
        }
        async fn run_command(
            &self,
            _: &Path,
            _: &[String],
            _: &CancellationToken,
        ) -> Result<TestRun, SandboxError> {
            Ok(run_ok())
        }
    }

    fn pool(broken: &[bool]) -> (EnginePool, Vec<Arc<AtomicUsize>>) {
        let counters: Vec<Arc<AtomicUsize>> = broken.iter().map(|_| Arc::default()).collect();
        let engines = broken
            .iter()
            .zip(&counters)
            .enumerate()
            .map(|(i, (&broken, runs))| {
                let engine: Box<dyn TestRunner> = Box::new(Fake {
                    runs: runs.clone(),
                    broken,
                });
                (format!("engine{i}"), engine)
            })
            .collect();
        (EnginePool::new(engines), counters)
    }

    async fn many_runs(pool: &EnginePool, n: usize) -> Vec<Result<TestRun, SandboxError>> {
        let cancel = CancellationToken::new();
        futures_util::future::join_all(
            (0..n).map(|_| pool.run_tests(Path::new("/r"), "tests/t.py", &cancel)),
        )
        .await
    }

    fn count(c: &[Arc<AtomicUsize>]) -> Vec<usize> {
        c.iter().map(|c| c.load(Ordering::SeqCst)).collect()
    }

    #[tokio::test]
    async fn concurrent_runs_spread_over_the_engines() {
        let (pool, runs) = pool(&[false, false]);
        pool.check_ready().await.unwrap();
        assert!(many_runs(&pool, 8).await.iter().all(Result::is_ok));
        assert_eq!(count(&runs), [4, 4]);
    }

    #[tokio::test]
    async fn an_engine_failing_its_health_check_gets_no_runs() {
        let (pool, runs) = pool(&[true, false]);
        pool.check_ready().await.unwrap();
        assert!(many_runs(&pool, 6).await.iter().all(Result::is_ok));
        assert_eq!(count(&runs), [0, 6]);
    }

    #[tokio::test]
    async fn a_run_on_a_failing_engine_moves_to_the_next_and_the_engine_is_taken_out() {
        // Passes its health check, then fails: its first run moves on, then it gets none.
        let (pool, runs) = pool(&[true, false]);
        assert!(many_runs(&pool, 1).await.iter().all(Result::is_ok));
        assert_eq!(count(&runs), [1, 1]);
        assert!(many_runs(&pool, 5).await.iter().all(Result::is_ok));
        assert_eq!(count(&runs), [1, 6]);
    }

    #[tokio::test]
    async fn when_every_engine_fails_the_error_names_them_all() {
        let (pool, _) = pool(&[true, true]);
        let err = pool.check_ready().await.unwrap_err().to_string();
        assert!(err.contains("engine0") && err.contains("engine1"), "{err}");
        let err = many_runs(&pool, 1).await.remove(0).unwrap_err().to_string();
        assert!(err.contains("every Docker engine failed"), "{err}");
    }
}
