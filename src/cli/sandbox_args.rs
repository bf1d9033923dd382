//! The flags that choose where generated code runs, shared by the commands that run it
//! (`generate` runs the generated tests, `eval` the reference tests against generated code).

use std::path::PathBuf;
use std::sync::Arc;

use super::error::CliError;
use crate::sandbox::{
    self, BwrapRunner, DockerRunner, EnginePool, LocalRunner, SandboxPolicy, TestRunner,
};

/// Where generated code runs, and for how long at most.
#[derive(clap::Args)]
pub(crate) struct SandboxArgs {
    /// Wall-clock limit of one test run, in seconds (at most a day).
    #[arg(long, default_value_t = sandbox::DEFAULT_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    test_timeout: u64,
    /// Where generated tests run: `auto` (bubblewrap), `bwrap`, `docker`, or `none` (no isolation at all).
    #[arg(long, value_enum, default_value = "auto", env = "ZEROREPO_SANDBOX")]
    sandbox: sandbox::Backend,
    /// With `--sandbox docker`: the engine(s) to use, `unix:///PATH`, `tcp://HOST:PORT` (TLS
    /// when DOCKER_TLS_VERIFY is set, certificates from DOCKER_CERT_PATH) or `https://HOST:PORT`.
    /// Several, comma-separated, are a pool: each test run goes to the least busy engine, and
    /// one that fails its health check or a run is taken out. Default: DOCKER_HOST.
    #[arg(long, value_name = "URL[,URL...]", env = "ZEROREPO_DOCKER_HOSTS")]
    docker_host: Option<String>,
    /// Memory of one test run, in MiB (bwrap and docker).
    #[arg(long, value_name = "MIB", default_value_t = SandboxPolicy::default().memory_mb,
          value_parser = clap::value_parser!(u64).range(16..=1_048_576))]
    memory_mb: u64,
    /// Processes one test run may have at once (bwrap and docker).
    #[arg(long, value_name = "N", default_value_t = SandboxPolicy::default().max_processes,
          value_parser = clap::value_parser!(u64).range(4..=65_536))]
    max_processes: u64,
    /// CPU seconds of one test run (bwrap; docker limits the run to one CPU instead).
    #[arg(long, value_name = "SECS", default_value_t = SandboxPolicy::default().cpu_seconds,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    cpu_secs: u64,
}

impl SandboxArgs {
    /// The test runner these flags ask for.
    pub(crate) fn runner(&self) -> Result<Arc<dyn TestRunner>, CliError> {
        let policy = SandboxPolicy {
            wall_timeout_secs: self.test_timeout.max(1),
            memory_mb: self.memory_mb,
            max_processes: self.max_processes,
            cpu_seconds: self.cpu_secs,
            ..SandboxPolicy::default()
        };
        test_runner(self.sandbox, policy, self.docker_host.as_deref())
    }

    /// The runner that fetches pinned packages (`bench --corpus`): the same backend, with the
    /// network and a writable directory ([`SandboxPolicy::for_download`]).
    pub(crate) fn download_runner(&self) -> Result<Arc<dyn TestRunner>, CliError> {
        test_runner(
            self.sandbox,
            SandboxPolicy::for_download(),
            self.docker_host.as_deref(),
        )
    }
}

/// The test runner for `--sandbox`. `none` runs generated code with the user's full rights,
/// so it is never chosen implicitly and always says so. A sandbox this machine cannot
/// provide is the user's to fix (exit 2), before anything is written. `eval` runs the
/// reference tests in the same sandbox.
fn test_runner(
    backend: sandbox::Backend,
    policy: SandboxPolicy,
    docker_hosts: Option<&str>,
) -> Result<Arc<dyn TestRunner>, CliError> {
    let timeout = policy.wall_timeout();
    match backend {
        sandbox::Backend::None => {
            tracing::warn!(
                "--sandbox none: generated tests run as plain subprocesses with your rights; nothing is isolated"
            );
            Ok(Arc::new(LocalRunner::new(
                LocalRunner::default_python(),
                timeout,
            )))
        }
        sandbox::Backend::Docker => docker(policy, docker_hosts),
        sandbox::Backend::Auto | sandbox::Backend::Bwrap => {
            let python = std::env::var_os("ZEROREPO_SANDBOX_PYTHON").map_or_else(
                || PathBuf::from(sandbox::bwrap::DEFAULT_PYTHON),
                PathBuf::from,
            );
            let runner = BwrapRunner::new(policy, python).map_err(CliError::bad_input)?;
            Ok(Arc::new(runner))
        }
    }
}

/// One Docker runner, or an [`EnginePool`] over several engines.
fn docker(policy: SandboxPolicy, hosts: Option<&str>) -> Result<Arc<dyn TestRunner>, CliError> {
    let image = std::env::var("ZEROREPO_SANDBOX_IMAGE")
        .unwrap_or_else(|_| sandbox::docker::DEFAULT_IMAGE.into());
    let urls: Vec<&str> = hosts
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    let runner = |url: Option<&str>| -> Result<DockerRunner, CliError> {
        let runner =
            DockerRunner::new(policy.clone(), image.clone()).map_err(CliError::bad_input)?;
        let Some(url) = url else {
            return Ok(runner);
        };
        // A URL that names no engine is the user's to fix, before anything runs.
        sandbox::docker::check_url(url).map_err(CliError::bad_input)?;
        Ok(runner.on_engine(url))
    };
    match urls.as_slice() {
        [] => Ok(Arc::new(runner(None)?)),
        [one] => Ok(Arc::new(runner(Some(one))?)),
        many => {
            let engines = many
                .iter()
                .map(|url| {
                    let engine: Box<dyn TestRunner> = Box::new(runner(Some(url))?);
                    Ok((url.to_string(), engine))
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            Ok(Arc::new(EnginePool::new(engines)))
        }
    }
}
