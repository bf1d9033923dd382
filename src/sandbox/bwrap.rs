//! The bubblewrap backend (the default).
//!
//! One sandbox per output repository, started on first use and kept warm: bubblewrap with
//! every namespace unshared (no network unless the policy says so), a minimal read-only root
//! (`/usr` and symlinks, not the host's `/`), no `/proc` at all (nothing of the kernel's
//! settings, the host's mounts or other processes to read or write), the repository
//! read-only at `/repo`, ruff read-only at `/opt/ruff/bin/ruff` (assembly's cleanup runs it
//! there, not on the host), fresh size-limited tmpfs at `/tmp` and `/dev/shm` (emptied by the
//! runner after every run), a cleared environment, a seccomp filter ([`super::seccomp`]).
//! Who the processes are on the host: the invoking user when zerorepo is not root; when it
//! is root, host uid 65534 with the repository's group, never uid 0 ([`super::userns`]).
//! Inside, the warm runner forks one child per test run with rlimits. As root, a pids+memory
//! cgroup bounds the whole sandbox; as a normal user, RLIMIT_NPROC does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use super::cgroup::CgroupGuard;
use super::policy::SandboxPolicy;
use super::warm::{RUNNER_PY, Session, SessionResources, WarmChannel, WarmJob, WarmPool};
use super::{SandboxError, TestRun, TestRunner};

const REPO_IN_SANDBOX: &str = "/repo";
const RUNNER_IN_SANDBOX: &str = "/opt/zerorepo";
/// Where the wheelhouse (setuptools and pip wheels for the install check) is mounted.
pub(crate) const WHEELHOUSE_IN_SANDBOX: &str = "/opt/wheelhouse";
/// The interpreter inside the sandbox; only `/usr` is mounted, so it must live there.
pub(crate) const DEFAULT_PYTHON: &str = "/usr/bin/python3";

/// Host paths a sandbox is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwrapLayout {
    pub repo: PathBuf,
    /// Host directory holding `runner.py`.
    pub runner_dir: PathBuf,
    pub python: PathBuf,
    /// Host directory of wheels for the install check, mounted read-only when present.
    pub wheelhouse: Option<PathBuf>,
    /// Host path of ruff, mounted read-only at [`super::RUFF_IN_SANDBOX`] when present.
    pub ruff: Option<PathBuf>,
    pub user: SandboxUser,
    /// Whether the seccomp programs are on [`SECCOMP_FD`] and [`CLONE3_FD`].
    pub seccomp: bool,
}

/// Who the sandbox's processes are on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxUser {
    /// zerorepo is not root: bubblewrap's own user namespace maps the sandbox to the invoking
    /// user, who has nothing more to give away.
    Invoker,
    /// zerorepo is root: the sandbox is built in the namespace on [`USERNS_FD`] and its
    /// command runs as host uid/gid 65534 with the repository's group, capabilities dropped.
    Nobody { repo_group: u32 },
}

/// The file descriptors the launcher opens for bubblewrap (besides 3, the options).
const USERNS_FD: &str = "4";
const SECCOMP_FD: &str = "5";
const CLONE3_FD: &str = "6";
/// The host's files a sandbox with the network sees: name resolution and CA certificates.
const NETWORK_FILES: [&str; 4] = [
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/ssl",
];
/// Size of the private `/dev/shm`, in bytes.
const SHM_BYTES: u64 = 16 * 1024 * 1024;

/// With the network, what resolving names and checking certificates reads (only then:
/// without it they are nothing but a view of the host).
fn network_files(policy: &SandboxPolicy) -> Vec<String> {
    match policy.network {
        true => NETWORK_FILES
            .iter()
            .flat_map(|f| ["--ro-bind-try", f, f].map(str::to_string))
            .collect(),
        false => Vec::new(),
    }
}

/// The whole bubblewrap command line for a policy and layout (pure; tests compare it whole).
/// One table, kept in one piece: bubblewrap applies its options in order, so the order is
/// part of what it says.
pub fn bwrap_args(policy: &SandboxPolicy, layout: &BwrapLayout) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));
    match layout.user {
        SandboxUser::Invoker => {
            push(&["--unshare-all"]);
            if policy.network {
                push(&["--share-net"]);
            }
        }
        // `--unshare-all` would try a user namespace of its own; this one is given.
        SandboxUser::Nobody { .. } => {
            push(&["--userns", USERNS_FD, "--unshare-ipc", "--unshare-pid"]);
            if !policy.network {
                push(&["--unshare-net"]);
            }
            push(&["--unshare-uts", "--unshare-cgroup-try"]);
        }
    }
    push(&["--die-with-parent", "--new-session"]);
    push(&[
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/sbin",
        "/sbin",
        "--dev",
        "/dev",
    ]);
    // /dev read-only: without root it is the invoker's tmpfs, unsized and never swept.
    push(&["--remount-ro", "/dev"]);
    // bubblewrap makes what it creates root's and private; the sandbox's user (65534 when
    // zerorepo is root) must be able to write the two tmpfs and to enter /opt.
    let shm_bytes = SHM_BYTES.to_string();
    push(&[
        "--perms", "1777", "--size", &shm_bytes, "--tmpfs", "/dev/shm",
    ]);
    let tmp_bytes = (policy.tmp_size_mb * 1024 * 1024).to_string();
    push(&["--perms", "1777", "--size", &tmp_bytes, "--tmpfs", "/tmp"]);
    push(&["--dir", "/etc", "--perms", "0755", "--dir", "/opt"]);
    let network = network_files(policy);
    push(&network.iter().map(String::as_str).collect::<Vec<_>>());
    let repo = layout.repo.display().to_string();
    let runner = layout.runner_dir.display().to_string();
    let bind = if policy.repo_read_only {
        "--ro-bind"
    } else {
        "--bind"
    };
    push(&[
        bind,
        &repo,
        REPO_IN_SANDBOX,
        "--ro-bind",
        &runner,
        RUNNER_IN_SANDBOX,
    ]);
    if let Some(wheelhouse) = &layout.wheelhouse {
        let wheelhouse = wheelhouse.display().to_string();
        push(&["--ro-bind", &wheelhouse, WHEELHOUSE_IN_SANDBOX]);
    }
    if let Some(ruff) = &layout.ruff {
        // Directories bubblewrap makes for a mount point are its own; the sandbox's user
        // must be able to enter them.
        let ruff = ruff.display().to_string();
        push(&["--perms", "0755", "--dir", "/opt/ruff"]);
        push(&["--perms", "0755", "--dir", "/opt/ruff/bin"]);
        push(&["--ro-bind", &ruff, super::RUFF_IN_SANDBOX]);
    }
    push(&[
        "--remount-ro",
        "/",
        "--chdir",
        REPO_IN_SANDBOX,
        "--clearenv",
    ]);
    for (name, value) in policy.environment(REPO_IN_SANDBOX) {
        push(&["--setenv", &name, &value]);
    }
    if layout.seccomp {
        push(&[
            "--add-seccomp-fd",
            SECCOMP_FD,
            "--add-seccomp-fd",
            CLONE3_FD,
        ]);
    }
    args.extend(runner_command(layout));
    args
}

/// The command bubblewrap runs: the warm runner, by sandbox paths only (it is what the
/// sandbox sees as its command line; every option with a host path goes through `--args`).
/// The runner's Python is isolated (`-I`): the repository is on `PYTHONPATH` for the tests,
/// and a generated `json.py` must not replace what the runner itself imports. As root,
/// `setpriv` first becomes 65534 and drops every capability, for good.
fn runner_command(layout: &BwrapLayout) -> Vec<String> {
    let python = layout.python.display().to_string();
    let script = format!("{RUNNER_IN_SANDBOX}/runner.py");
    let mut command: Vec<String> = Vec::new();
    if let SandboxUser::Nobody { repo_group } = layout.user {
        let nobody = super::userns::NOBODY.to_string();
        command.extend(
            [
                "/usr/bin/setpriv",
                "--reuid",
                &nobody,
                "--regid",
                &nobody,
                "--groups",
                &repo_group.to_string(),
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
            .map(String::from),
        );
    }
    command
        .extend([&python, "-I", &script, "--sweep", "--repo", REPO_IN_SANDBOX].map(String::from));
    command
}

/// A world-readable temp directory holding `runner.py`, mounted read-only into sandboxes
/// (uid 65534 must be able to read it).
pub(crate) fn runner_dir() -> Result<tempfile::TempDir, SandboxError> {
    let dir = tempfile::Builder::new()
        .prefix(&super::leftovers::temp_prefix("runner"))
        .tempdir()?;
    let script = dir.path().join("runner.py");
    std::fs::write(&script, RUNNER_PY)?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644))?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// The seccomp programs ([`super::seccomp::programs`]) in private temp files.
fn seccomp_files() -> Result<Option<[tempfile::NamedTempFile; 2]>, SandboxError> {
    use std::io::Write;
    let programs = super::seccomp::programs()
        .map_err(|e| SandboxError::Failed(format!("the seccomp filter does not compile: {e}")))?;
    let Some(programs) = programs else {
        return Ok(None);
    };
    let mut files = Vec::new();
    for program in programs {
        let mut file = tempfile::Builder::new()
            .prefix(&super::leftovers::temp_prefix("seccomp"))
            .tempfile()?;
        file.write_all(&program)?;
        file.flush()?;
        files.push(file);
    }
    match <[tempfile::NamedTempFile; 2]>::try_from(files) {
        Ok(pair) => Ok(Some(pair)),
        Err(_) => Ok(None),
    }
}

/// The arguments, NUL-separated as `bwrap --args FD` reads them, in a private temp file.
fn args_file(args: &[String]) -> Result<tempfile::NamedTempFile, SandboxError> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(&super::leftovers::temp_prefix("bwrap-args"))
        .tempfile()?;
    for arg in args {
        file.write_all(arg.as_bytes())?;
        file.write_all(b"\0")?;
    }
    file.flush()?;
    Ok(file)
}

fn bwrap_program() -> Result<PathBuf, SandboxError> {
    crate::programs::on_path("bwrap").ok_or_else(|| SandboxError::Spawn {
        program: "bwrap".into(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "not found on PATH"),
    })
}

/// What the launcher opens for bubblewrap on its file descriptors: the options file, the user
/// namespace to join and the seccomp programs (`/dev/null` where there is none).
struct LaunchFiles<'a> {
    args: &'a Path,
    userns: Option<PathBuf>,
    seccomp: Option<[&'a Path; 2]>,
}

/// `sh -c` that writes its own pid into each cgroup's `cgroup.procs`, then execs bubblewrap
/// with its options on fd 3, the namespace on fd 4 and the filters on fds 5 and 6. Joining
/// the cgroup(s) happens inside the process that becomes bubblewrap: no race. The caller
/// appends `--` and the command line the sandbox runs.
fn launcher(
    bwrap: &Path,
    files: &LaunchFiles<'_>,
    cgroup: Option<&CgroupGuard>,
) -> tokio::process::Command {
    let null = Path::new("/dev/null");
    let userns = files.userns.as_deref().unwrap_or(null);
    let [seccomp, clone3] = files.seccomp.unwrap_or([null, null]);
    let mut command = tokio::process::Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(r#"unset PWD OLDPWD; bwrap=$1; args=$2; userns=$3; filter=$4; clone3=$5; shift 5; while [ "$1" != "--" ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$bwrap" --args 3 "$@" 3<"$args" 4<"$userns" 5<"$filter" 6<"$clone3""#)
        .arg("zerorepo-sandbox")
        .arg(bwrap)
        .arg(files.args)
        .arg(userns)
        .arg(seccomp)
        .arg(clone3);
    if let Some(guard) = cgroup {
        command.args(guard.procs_files());
    }
    command
}

/// bubblewrap becomes PID 1 of the sandbox, and anything inside can read PID 1's environment:
/// it must not inherit ours (API keys). `--clearenv` only clears the child's.
fn without_host_environment(command: &mut tokio::process::Command) {
    command
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/") // sh exports PWD: our working directory is a host path too
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
}

/// Waits for the runner inside to say hello on the child's pipes; the channel to it then.
async fn greet(
    child: &mut tokio::process::Child,
    repo: &Path,
) -> Result<WarmChannel, SandboxError> {
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(SandboxError::Failed(
            "bubblewrap started without pipes".into(),
        ));
    };
    let started = WarmChannel::start(
        Box::new(stdin),
        Box::new(BufReader::new(stdout)),
        Duration::from_secs(30),
    )
    .await;
    let (channel, hello) =
        started.map_err(|e| SandboxError::Failed(format!("the sandbox did not start: {e}")))?;
    tracing::debug!(repo = %repo.display(), "sandbox ready: {}", hello.trim());
    Ok(channel)
}

/// What a bubblewrap session holds: dropping the child (kill_on_drop) ends bubblewrap and,
/// through --die-with-parent, the sandbox; then the guard sweeps and removes the cgroup.
struct BwrapResources {
    _child: tokio::process::Child,
    _cgroup: Option<CgroupGuard>,
}

#[async_trait::async_trait]
impl SessionResources for BwrapResources {
    async fn release(self: Box<Self>) {}
}

pub struct BwrapRunner {
    policy: SandboxPolicy,
    python: PathBuf,
    runner_dir: tempfile::TempDir,
    /// The seccomp programs, in files the launcher opens; `None` where seccompiler does not
    /// know the architecture.
    seccomp: Option<[tempfile::NamedTempFile; 2]>,
    pool: WarmPool,
    as_root: bool,
}

static SANDBOXES: AtomicU64 = AtomicU64::new(0);

impl BwrapRunner {
    pub fn new(
        policy: SandboxPolicy,
        python: impl Into<PathBuf>,
    ) -> Result<BwrapRunner, SandboxError> {
        let python = python.into();
        if !python.starts_with("/usr/") {
            return Err(SandboxError::Unavailable(format!(
                "the sandbox interpreter must live under /usr (only /usr is mounted), got {}",
                python.display()
            )));
        }
        let runner_dir = runner_dir()?;
        let seccomp = seccomp_files()?;
        if seccomp.is_none() {
            tracing::warn!(
                "no seccomp filter for the sandbox on {}",
                std::env::consts::ARCH
            );
        }
        Ok(BwrapRunner {
            policy,
            python,
            runner_dir,
            seccomp,
            pool: WarmPool::default(),
            as_root: nix::unistd::geteuid().is_root(),
        })
    }

    fn layout(&self, repo: &Path) -> Result<BwrapLayout, SandboxError> {
        use std::os::unix::fs::MetadataExt;
        let user = if self.as_root {
            SandboxUser::Nobody {
                repo_group: std::fs::metadata(repo)?.gid(),
            }
        } else {
            SandboxUser::Invoker
        };
        Ok(BwrapLayout {
            repo: repo.to_path_buf(),
            runner_dir: self.runner_dir.path().to_path_buf(),
            python: self.python.clone(),
            wheelhouse: super::wheelhouse_dir().filter(|w| w.is_dir()),
            ruff: crate::programs::find("ruff"),
            user,
            seccomp: self.seccomp.is_some(),
        })
    }

    async fn start(&self, repo: &Path) -> Result<Session, SandboxError> {
        let repo = repo.canonicalize()?;
        let layout = self.layout(&repo)?;
        let mut options = bwrap_args(&self.policy, &layout);
        let command_line = runner_command(&layout);
        options.truncate(options.len() - command_line.len());
        let cgroup = self.cgroup();
        let userns = match layout.user {
            SandboxUser::Nobody { repo_group } => Some(super::userns::HeldUserns::new(repo_group)?),
            SandboxUser::Invoker => None,
        };
        // The options go through a file read on fd 3 (`--args 3`), so the sandbox's
        // command line shows `bwrap --args 3 <runner>`, not the output's host path.
        let args_file = args_file(&options)?;
        let files = LaunchFiles {
            args: args_file.path(),
            userns: userns.as_ref().map(super::userns::HeldUserns::path),
            seccomp: self
                .seccomp
                .as_ref()
                .map(|[deny, clone3]| [deny.path(), clone3.path()]),
        };
        let mut command = launcher(&bwrap_program()?, &files, cgroup.as_ref());
        command.arg("--").args(&command_line);
        without_host_environment(&mut command);
        if !self.as_root {
            tracing::debug!("unprivileged bubblewrap; RLIMIT_NPROC bounds processes");
        }
        let mut child = command.spawn().map_err(|source| SandboxError::Spawn {
            program: "bwrap".into(),
            source,
        })?;
        let channel = greet(&mut child, &repo).await?;
        // bubblewrap has read its arguments and joined the namespace once the runner inside
        // says hello.
        drop(args_file);
        drop(userns);
        let resources = Box::new(BwrapResources {
            _child: child,
            _cgroup: cgroup,
        });
        Ok(Session {
            repo,
            channel,
            resources,
        })
    }

    /// As root, the cgroup that bounds the sandbox's processes and memory. Without one the
    /// sandbox still starts (a warning says the process count is not limited): refusing to run
    /// would leave root users with no sandbox at all.
    fn cgroup(&self) -> Option<CgroupGuard> {
        if !self.as_root {
            return None;
        }
        let name = format!(
            "zerorepo-{}-{}",
            std::process::id(),
            SANDBOXES.fetch_add(1, Ordering::Relaxed)
        );
        match CgroupGuard::create(&name, self.policy.max_processes, self.policy.memory_bytes()) {
            Ok(guard) => Some(guard),
            Err(why) => {
                tracing::warn!(
                    "no cgroup for the sandbox ({why}): running as root, process count is not limited"
                );
                None
            }
        }
    }

    async fn run_job(
        &self,
        repo: &Path,
        job: WarmJob<'_>,
        policy: SandboxPolicy,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let repo = repo.canonicalize()?;
        self.pool
            .run(self.name(), &repo, job, &policy, cancel, || {
                self.start(&repo)
            })
            .await
    }

    /// The per-run policy: as a normal user RLIMIT_NPROC counts every process of the user, so
    /// the allowance is what the user already runs plus the policy's budget.
    fn run_policy(&self) -> SandboxPolicy {
        let mut policy = self.policy.clone();
        if !self.as_root {
            policy.max_processes += processes_of_current_user();
        }
        policy
    }
}

fn processes_of_current_user() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.uid() == uid)
        .count() as u64
}

#[async_trait::async_trait]
impl TestRunner for BwrapRunner {
    fn name(&self) -> &str {
        "bwrap"
    }

    async fn identity(&self) -> String {
        format!("bwrap {}", super::file_identity(&self.python))
    }

    /// The host's ruff, mounted into each sandbox started from now on.
    fn ruff(&self) -> Option<String> {
        crate::programs::find("ruff").map(|_| super::RUFF_IN_SANDBOX.to_string())
    }

    async fn check_ready(&self) -> Result<(), SandboxError> {
        let probe = tempfile::Builder::new()
            .prefix(&super::leftovers::temp_prefix("probe"))
            .tempdir()?;
        std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o755))?;
        self.start(probe.path()).await.map(drop).map_err(|e| {
            SandboxError::Unavailable(format!(
                "{e}; install bubblewrap and pytest for {} (Debian: apt-get install bubblewrap python3-pytest), or pass --sandbox none to run tests unisolated",
                self.python.display()
            ))
        })
    }

    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.run_job(repo, WarmJob::Tests(test_file), self.run_policy(), cancel)
            .await
    }

    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let policy = self.run_policy().for_install();
        self.run_job(repo, WarmJob::Install, policy, cancel).await
    }

    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.run_job(repo, WarmJob::Command(argv), self.run_policy(), cancel)
            .await
    }

    async fn shutdown(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layout with short host paths, no wheelhouse.
    fn layout(user: SandboxUser, seccomp: bool) -> BwrapLayout {
        BwrapLayout {
            repo: "/r".into(),
            runner_dir: "/d".into(),
            python: "/usr/bin/python3".into(),
            wheelhouse: None,
            ruff: None,
            user,
            seccomp,
        }
    }

    #[test]
    fn default_policy_as_root_translates_to_this_exact_command_line() {
        let layout = BwrapLayout {
            repo: "/out/repo".into(),
            runner_dir: "/tmp/zr".into(),
            python: "/usr/bin/python3".into(),
            wheelhouse: Some("/cache/wheelhouse".into()),
            ruff: Some("/cache/venv/bin/ruff".into()),
            user: SandboxUser::Nobody { repo_group: 0 },
            seccomp: true,
        };
        let policy = SandboxPolicy {
            env_allowlist: vec![],
            ..SandboxPolicy::default()
        };
        let expected = "--userns 4 --unshare-ipc --unshare-pid --unshare-net --unshare-uts \
            --unshare-cgroup-try --die-with-parent --new-session \
            --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
            --symlink usr/sbin /sbin --dev /dev --remount-ro /dev --perms 1777 --size 16777216 --tmpfs /dev/shm \
            --perms 1777 --size 67108864 --tmpfs /tmp --dir /etc --perms 0755 --dir /opt \
            --ro-bind /out/repo /repo --ro-bind /tmp/zr /opt/zerorepo \
            --ro-bind /cache/wheelhouse /opt/wheelhouse --perms 0755 --dir /opt/ruff \
            --perms 0755 --dir /opt/ruff/bin --ro-bind /cache/venv/bin/ruff /opt/ruff/bin/ruff \
            --remount-ro / --chdir /repo --clearenv \
            --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME /tmp --setenv TMPDIR /tmp \
            --setenv PYTHONDONTWRITEBYTECODE 1 --setenv PYTHONHASHSEED 0 --setenv PYTHONPATH /repo/src:/repo \
            --add-seccomp-fd 5 --add-seccomp-fd 6 \
            /usr/bin/setpriv --reuid 65534 --regid 65534 --groups 0 --inh-caps=-all --bounding-set=-all \
            --no-new-privs -- /usr/bin/python3 -I /opt/zerorepo/runner.py --sweep --repo /repo";
        assert_eq!(bwrap_args(&policy, &layout).join(" "), expected);
    }

    #[test]
    fn network_and_writable_repo_are_opt_in_and_a_normal_user_is_its_own_sandbox_user() {
        let layout = layout(SandboxUser::Invoker, false);
        let policy = SandboxPolicy {
            network: true,
            repo_read_only: false,
            ..SandboxPolicy::default()
        };
        let args = bwrap_args(&policy, &layout).join(" ");
        assert!(
            args.starts_with(
                "--unshare-all --share-net --die-with-parent --new-session --ro-bind /usr /usr"
            ),
            "{args}"
        );
        assert!(args.contains("--bind /r /repo") && !args.contains("--ro-bind /r /repo"));
        assert!(
            args.contains("--ro-bind-try /etc/resolv.conf /etc/resolv.conf --ro-bind-try /etc/hosts /etc/hosts")
                && args.contains("--ro-bind-try /etc/ssl /etc/ssl"),
            "{args}"
        );
        let offline = bwrap_args(&SandboxPolicy::default(), &layout).join(" ");
        assert!(
            !offline.contains("resolv.conf") && !offline.contains("/etc/ssl"),
            "{offline}"
        );
        assert!(!args.contains("--userns") && !args.contains("setpriv"));
        assert!(!args.contains("--seccomp"));
        assert!(args.ends_with("/usr/bin/python3 -I /opt/zerorepo/runner.py --sweep --repo /repo"));
        let root = BwrapLayout {
            user: SandboxUser::Nobody { repo_group: 50 },
            ..layout
        };
        let args = bwrap_args(&policy, &root).join(" ");
        assert!(!args.contains("--unshare-net"), "{args}");
        assert!(args.contains("--groups 50"), "{args}");
    }

    #[test]
    fn no_proc_is_mounted_and_shm_is_private() {
        let args = bwrap_args(
            &SandboxPolicy::default(),
            &layout(SandboxUser::Invoker, true),
        );
        assert!(!args.iter().any(|a| a == "--proc" || a == "/proc"));
        assert!(args.join(" ").contains("--tmpfs /dev/shm"));
    }
}
