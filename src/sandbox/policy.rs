//! What a sandbox allows, as data. Backends turn a [`SandboxPolicy`] into their own arguments
//! in pure functions (see `bwrap::bwrap_args`, `docker::container_config`), so a test can
//! compare the whole translation.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Wall-clock and CPU seconds the install check may take.
const INSTALL_SECONDS: u64 = 300;
/// Wall-clock and CPU seconds a package download may take (pip builds its metadata).
const DOWNLOAD_SECONDS: u64 = 600;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxPolicy {
    /// Network access. Off: only an isolated loopback exists inside.
    pub network: bool,
    /// Mount the repository read-only (tests cannot change the code under test).
    pub repo_read_only: bool,
    /// Size of the fresh writable /tmp, in MiB (each run gets its own directory in it).
    pub tmp_size_mb: u64,
    /// CPU time per run, in seconds (RLIMIT_CPU).
    pub cpu_seconds: u64,
    /// Memory per run and for the whole sandbox, in MiB (RLIMIT_AS and the memory cgroup).
    pub memory_mb: u64,
    /// Processes at once (pids cgroup or RLIMIT_NPROC).
    pub max_processes: u64,
    /// Wall-clock limit per run, in seconds.
    pub wall_timeout_secs: u64,
    /// Largest file a run may write, in MiB (RLIMIT_FSIZE): bounds runaway output.
    pub max_file_mb: u64,
    /// Bytes of stdout and of stderr kept in a result (the tail).
    pub output_cap_bytes: usize,
    /// Host environment variables passed through (everything else is cleared).
    pub env_allowlist: Vec<String>,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            network: false,
            repo_read_only: true,
            tmp_size_mb: 64,
            cpu_seconds: 30,
            memory_mb: 512,
            max_processes: 64,
            wall_timeout_secs: 30,
            max_file_mb: 16,
            output_cap_bytes: 16 * 1024,
            env_allowlist: vec!["LANG".into(), "LC_ALL".into(), "TZ".into()],
        }
    }
}

impl SandboxPolicy {
    pub(crate) fn wall_timeout(&self) -> Duration {
        Duration::from_secs(self.wall_timeout_secs)
    }

    /// The policy for the install check (`pip install -e .` offline): the same isolation, with
    /// time for pip to build (it is slow on a busy 2-core machine, not dangerous).
    pub(crate) fn for_install(&self) -> SandboxPolicy {
        SandboxPolicy {
            wall_timeout_secs: self.wall_timeout_secs.max(INSTALL_SECONDS),
            cpu_seconds: self.cpu_seconds.max(INSTALL_SECONDS),
            ..self.clone()
        }
    }

    /// The policy for fetching a pinned package with its ordinary client (`pip download`,
    /// which runs the package's build code to read its metadata): the network, a writable
    /// directory to save into, and room for pip's isolated build environment; still no view of
    /// the host beyond what every sandbox run sees.
    pub(crate) fn for_download() -> SandboxPolicy {
        SandboxPolicy {
            network: true,
            repo_read_only: false,
            tmp_size_mb: 1024,
            cpu_seconds: DOWNLOAD_SECONDS,
            memory_mb: 2048,
            max_processes: 128,
            wall_timeout_secs: DOWNLOAD_SECONDS,
            max_file_mb: 256,
            ..SandboxPolicy::default()
        }
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.memory_mb * 1024 * 1024
    }

    /// The environment inside the sandbox: fixed variables plus the allowlisted host ones.
    pub fn environment(&self, repo_in_sandbox: &str) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "PATH".to_string(),
                "/usr/local/bin:/usr/bin:/bin".to_string(),
            ),
            ("HOME".to_string(), "/tmp".to_string()),
            ("TMPDIR".to_string(), "/tmp".to_string()),
            ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
            ("PYTHONHASHSEED".to_string(), "0".to_string()),
            (
                "PYTHONPATH".to_string(),
                format!("{repo_in_sandbox}/src:{repo_in_sandbox}"),
            ),
        ];
        for name in &self.env_allowlist {
            if let Ok(value) = std::env::var(name) {
                env.push((name.clone(), value));
            }
        }
        env
    }
}
