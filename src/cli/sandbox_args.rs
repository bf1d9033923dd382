//! The flags that choose where generated code runs, shared by the commands that run it
//! (`generate` runs the generated tests, `eval` the reference tests against generated code).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::error::CliError;
use crate::sandbox::{self, BwrapRunner, DockerRunner, LocalRunner, SandboxPolicy, TestRunner};

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
}

impl SandboxArgs {
    /// The test runner these flags ask for.
    pub(crate) fn runner(&self) -> Result<Arc<dyn TestRunner>, CliError> {
        test_runner(self.sandbox, Duration::from_secs(self.test_timeout))
    }
}

/// The test runner for `--sandbox`. `none` runs generated code with the user's full rights,
/// so it is never chosen implicitly and always says so. A sandbox this machine cannot
/// provide is the user's to fix (exit 2), before anything is written. `eval` runs the
/// reference tests in the same sandbox.
fn test_runner(
    backend: sandbox::Backend,
    timeout: Duration,
) -> Result<Arc<dyn TestRunner>, CliError> {
    let policy = SandboxPolicy {
        wall_timeout_secs: timeout.as_secs().max(1),
        ..SandboxPolicy::default()
    };
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
        sandbox::Backend::Docker => {
            let image = std::env::var("ZEROREPO_SANDBOX_IMAGE")
                .unwrap_or_else(|_| sandbox::docker::DEFAULT_IMAGE.into());
            let runner = DockerRunner::new(policy, image).map_err(CliError::bad_input)?;
            Ok(Arc::new(runner))
        }
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
