//! The Docker backend, through the engine's API (bollard).
//!
//! One long-lived container per output repository, running the same warm runner as the
//! bubblewrap backend: no network, read-only root filesystem, the repository read-only at
//! `/repo`, a size-limited tmpfs `/tmp`, memory = memory+swap, a pids limit, one CPU, the
//! repository's owner as the user (never root: see [`container_user`]), every capability
//! dropped, no-new-privileges. The container is created with
//! `auto_remove` and `stdin_once`: if zerorepo dies, the attach connection closes, the runner
//! sees end of input and exits, and the engine removes the container. A hung runner is killed
//! through the API (killing a CLI process would leave the container running).
//!
//! The image is built offline by `zerorepo sandbox build-image` ([`build_image`]): the host's
//! Python, the libraries it links, and pytest, imported as a root filesystem (`docker import`),
//! since no registry can be reached; and the pinned ruff that `scripts/setup.sh` installed
//! from the package registry, at [`super::RUFF_IN_SANDBOX`], with the libraries it links.

mod probe;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bollard::Docker;
use bollard::container::{AttachContainerResults, LogOutput};
use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, KillContainerOptionsBuilder,
    RemoveContainerOptionsBuilder,
};
use futures_util::{Stream, StreamExt};
use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use super::policy::SandboxPolicy;
use super::warm::{Session, SessionResources, WarmChannel, WarmJob, WarmPool};
use super::{SandboxError, TestRun, TestRunner};

pub const DEFAULT_IMAGE: &str = "zerorepo-sandbox:py3";
const REPO_IN_CONTAINER: &str = "/repo";
const RUNNER_IN_CONTAINER: &str = "/opt/zerorepo";

/// Host paths and names a container is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DockerLayout {
    pub image: String,
    pub repo: PathBuf,
    pub runner_dir: PathBuf,
    /// Host directory of wheels for the install check, mounted read-only when present.
    pub wheelhouse: Option<PathBuf>,
    /// Owner (uid, gid) of `repo` on the host: who the sandbox runs as ([`container_user`]).
    pub owner: (u32, u32),
}

/// Who the container's processes are, for a repository owned by `(uid, gid)`: the owner
/// itself, so that the output directory needs no permission for others (as with bubblewrap,
/// whose processes act with the invoking user's rights on files); never root: a repository
/// owned by root is read as `nobody` (65534) with the repository's group added, so it needs
/// only group read (the default umask gives it), not world read. Returns the `User` value
/// and the supplementary groups.
pub(crate) fn container_user(uid: u32, gid: u32) -> (String, Vec<String>) {
    if uid == 0 {
        ("65534:65534".into(), vec![gid.to_string()])
    } else {
        (format!("{uid}:{gid}"), Vec::new())
    }
}

/// The whole container configuration for a policy and layout (pure; tests compare it whole).
/// One table, kept in one piece so it reads top to bottom against the module's promises.
pub(crate) fn container_config(
    policy: &SandboxPolicy,
    layout: &DockerLayout,
) -> ContainerCreateBody {
    let memory = i64::try_from(policy.memory_bytes()).unwrap_or(i64::MAX);
    let repo_mode = if policy.repo_read_only { "ro" } else { "rw" };
    let mut binds = vec![
        format!("{}:{REPO_IN_CONTAINER}:{repo_mode}", layout.repo.display()),
        format!("{}:{RUNNER_IN_CONTAINER}:ro", layout.runner_dir.display()),
    ];
    if let Some(wheelhouse) = &layout.wheelhouse {
        binds.push(format!(
            "{}:{}:ro",
            wheelhouse.display(),
            super::bwrap::WHEELHOUSE_IN_SANDBOX
        ));
    }
    let (user, groups) = container_user(layout.owner.0, layout.owner.1);
    let host_config = HostConfig {
        binds: Some(binds),
        group_add: (!groups.is_empty()).then_some(groups),
        network_mode: Some(if policy.network { "bridge" } else { "none" }.into()),
        memory: Some(memory),
        memory_swap: Some(memory),
        pids_limit: Some(i64::try_from(policy.max_processes).unwrap_or(i64::MAX)),
        nano_cpus: Some(1_000_000_000),
        readonly_rootfs: Some(true),
        tmpfs: Some(HashMap::from([(
            "/tmp".to_string(),
            format!("rw,nosuid,nodev,size={}m,mode=1777", policy.tmp_size_mb),
        )])),
        cap_drop: Some(vec!["ALL".into()]),
        security_opt: Some(vec!["no-new-privileges".into()]),
        ulimits: Some(vec![ResourcesUlimits {
            name: Some("core".into()),
            soft: Some(0),
            hard: Some(0),
        }]),
        auto_remove: Some(true),
        ..HostConfig::default()
    };
    ContainerCreateBody {
        image: Some(layout.image.clone()),
        cmd: Some(
            [
                "/usr/bin/python3",
                "-I",
                &format!("{RUNNER_IN_CONTAINER}/runner.py"),
                "--sweep",
                "--repo",
                REPO_IN_CONTAINER,
            ]
            .map(String::from)
            .to_vec(),
        ),
        env: Some(
            policy
                .environment(REPO_IN_CONTAINER)
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        ),
        working_dir: Some(REPO_IN_CONTAINER.into()),
        user: Some(user),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(false),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        network_disabled: Some(!policy.network),
        host_config: Some(host_config),
        ..ContainerCreateBody::default()
    }
}

/// A container to kill and remove through the API when the session ends.
struct Container {
    docker: Docker,
    id: String,
}

#[async_trait::async_trait]
impl SessionResources for Container {
    async fn release(self: Box<Self>) {
        remove(&self.docker, &self.id).await;
    }
}

pub struct DockerRunner {
    policy: SandboxPolicy,
    image: String,
    runner_dir: tempfile::TempDir,
    pool: WarmPool,
    /// Connected (and version-negotiated) once, on first use.
    client: tokio::sync::OnceCell<Docker>,
    /// The engine's URL; `None`: `DOCKER_HOST` or the default socket.
    host: Option<String>,
}

static CONTAINERS: AtomicU64 = AtomicU64::new(0);

/// How to reach an engine, read from its URL (pure; [`connect`] acts on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Engine {
    /// `DOCKER_HOST`, else the default socket.
    Local,
    Unix(String),
    /// Plain HTTP: only for a trusted network (the engine's API is root on its host).
    Http(String),
    /// TLS with the client certificates in `DOCKER_CERT_PATH` (default `~/.docker`):
    /// `key.pem`, `cert.pem`, `ca.pem`, as the docker CLI reads them.
    Tls(String),
}

/// Why a docker engine URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EngineUrlError {
    #[error("`{0}` is not an engine URL (unix://PATH, tcp://HOST:PORT, https://HOST:PORT)")]
    NotAUrl(String),
    #[error("`{0}` names no socket or host")]
    NoHost(String),
    #[error("`{url}`: unknown scheme `{scheme}` (unix, tcp, http or https)")]
    UnknownScheme { url: String, scheme: String },
}

/// `unix:///path`, `tcp://host:port` (TLS when `tls_verify`, docker's `DOCKER_TLS_VERIFY`),
/// `https://host:port` (always TLS) or `http://host:port`.
pub(crate) fn engine(url: Option<&str>, tls_verify: bool) -> Result<Engine, EngineUrlError> {
    let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
        return Ok(Engine::Local);
    };
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| EngineUrlError::NotAUrl(url.to_string()))?;
    if rest.is_empty() {
        return Err(EngineUrlError::NoHost(url.to_string()));
    }
    match scheme {
        "unix" => Ok(Engine::Unix(url.to_string())),
        "tcp" if tls_verify => Ok(Engine::Tls(url.to_string())),
        "tcp" | "http" => Ok(Engine::Http(url.to_string())),
        "https" => Ok(Engine::Tls(url.to_string())),
        _ => Err(EngineUrlError::UnknownScheme {
            url: url.to_string(),
            scheme: scheme.to_string(),
        }),
    }
}

/// Whether `url` names an engine the way [`engine`] reads URLs.
pub(crate) fn check_url(url: &str) -> Result<(), EngineUrlError> {
    engine(Some(url), false).map(|_| ())
}

fn cert_dir() -> PathBuf {
    std::env::var_os("DOCKER_CERT_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".docker")
        })
}

/// Connects to `host` (`None`: `DOCKER_HOST` or the default socket) at the API version the
/// engine speaks.
async fn connect(host: Option<&str>) -> Result<Docker, SandboxError> {
    let unreachable = |e: &dyn std::fmt::Display| {
        SandboxError::Unavailable(format!(
            "cannot reach the Docker engine {}: {e}",
            host.unwrap_or("of DOCKER_HOST")
        ))
    };
    let tls_verify = std::env::var("DOCKER_TLS_VERIFY").is_ok_and(|v| !v.is_empty() && v != "0");
    let version = bollard::API_DEFAULT_VERSION;
    let docker =
        match engine(host, tls_verify).map_err(|e| SandboxError::Unavailable(e.to_string()))? {
            Engine::Local => Docker::connect_with_local_defaults(),
            Engine::Unix(url) => Docker::connect_with_unix(&url, 120, version),
            Engine::Http(url) => Docker::connect_with_http(&url, 120, version),
            Engine::Tls(url) => {
                let dir = cert_dir();
                Docker::connect_with_ssl(
                    &url,
                    &dir.join("key.pem"),
                    &dir.join("cert.pem"),
                    &dir.join("ca.pem"),
                    120,
                    version,
                )
            }
        }
        .map_err(|e| unreachable(&e))?;
    docker
        .negotiate_version()
        .await
        .map_err(|e| unreachable(&e))
}

impl DockerRunner {
    pub fn new(
        policy: SandboxPolicy,
        image: impl Into<String>,
    ) -> Result<DockerRunner, SandboxError> {
        let runner_dir = super::bwrap::runner_dir()?;
        Ok(DockerRunner {
            policy,
            image: image.into(),
            runner_dir,
            pool: WarmPool::default(),
            client: tokio::sync::OnceCell::new(),
            host: None,
        })
    }

    /// The same runner on the engine at `url` (see [`engine`] for the URLs).
    pub(crate) fn on_engine(mut self, url: impl Into<String>) -> DockerRunner {
        self.host = Some(url.into());
        self
    }

    async fn run_job(
        &self,
        repo: &Path,
        job: WarmJob<'_>,
        policy: &SandboxPolicy,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let repo = repo.canonicalize()?;
        let docker = self.client().await?;
        self.pool
            .run(self.name(), &repo, job, policy, cancel, || {
                self.start(docker, &repo)
            })
            .await
    }

    async fn client(&self) -> Result<&Docker, SandboxError> {
        self.client
            .get_or_try_init(|| connect(self.host.as_deref()))
            .await
    }

    async fn start(&self, docker: &Docker, repo: &Path) -> Result<Session, SandboxError> {
        let name = format!(
            "zerorepo-{}-{}",
            std::process::id(),
            CONTAINERS.fetch_add(1, Ordering::Relaxed)
        );
        let id = self.create(docker, &name, repo).await?;
        let attached = attach_and_start(docker, &id).await?;
        let reader = stdout_reader(attached.output);
        match WarmChannel::start(
            Box::new(attached.input),
            Box::new(reader),
            Duration::from_secs(30),
        )
        .await
        {
            Ok((channel, hello)) => {
                tracing::debug!(container = %name, "sandbox ready: {}", hello.trim());
                let resources = Box::new(Container {
                    docker: docker.clone(),
                    id,
                });
                Ok(Session {
                    repo: repo.to_path_buf(),
                    channel,
                    resources,
                })
            }
            Err(e) => {
                remove(docker, &id).await;
                Err(SandboxError::Failed(format!(
                    "the container's runner did not start: {e}"
                )))
            }
        }
    }

    /// Creates the container for `repo` (not started yet); returns its id. Failing here
    /// usually means the image was never built, so the error says how to build it.
    async fn create(
        &self,
        docker: &Docker,
        name: &str,
        repo: &Path,
    ) -> Result<String, SandboxError> {
        let layout = DockerLayout {
            image: self.image.clone(),
            repo: repo.to_path_buf(),
            runner_dir: self.runner_dir.path().to_path_buf(),
            wheelhouse: super::wheelhouse_dir().filter(|w| w.is_dir()),
            owner: {
                use std::os::unix::fs::MetadataExt;
                let meta = std::fs::metadata(repo)?;
                (meta.uid(), meta.gid())
            },
        };
        let created = docker
            .create_container(Some(CreateContainerOptionsBuilder::new().name(name).build()), container_config(&self.policy, &layout))
            .await
            .map_err(|e| SandboxError::Unavailable(format!("cannot create a container from {}: {e} (build it with `zerorepo sandbox build-image`)", self.image)))?;
        Ok(created.id)
    }
}

/// Attaches to the container's stdin and stdout, then starts it; attaching first means no
/// output is lost. On failure the container is removed: nobody else knows its id.
async fn attach_and_start(
    docker: &Docker,
    id: &str,
) -> Result<AttachContainerResults, SandboxError> {
    let attach = AttachContainerOptionsBuilder::new()
        .stream(true)
        .stdin(true)
        .stdout(true)
        .stderr(false)
        .build();
    let attached = match docker.attach_container(id, Some(attach)).await {
        Ok(a) => a,
        Err(e) => {
            remove(docker, id).await;
            return Err(SandboxError::Failed(format!(
                "cannot attach to the container: {e}"
            )));
        }
    };
    if let Err(e) = docker.start_container(id, None).await {
        remove(docker, id).await;
        return Err(SandboxError::Failed(format!(
            "cannot start the container: {e}"
        )));
    }
    Ok(attached)
}

/// The container's stdout as a byte stream the warm channel reads lines from.
fn stdout_reader(
    output: Pin<Box<dyn Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>,
) -> impl tokio::io::AsyncBufRead + Send + Unpin + 'static {
    let stdout = output.filter_map(|item| async move {
        match item {
            Ok(LogOutput::StdOut { message }) => Some(Ok(message)),
            Ok(_) => None,
            Err(e) => Some(Err(std::io::Error::other(e))),
        }
    });
    BufReader::new(tokio_util::io::StreamReader::new(Box::pin(stdout)))
}

/// Kill through the API, then remove (auto_remove may already have done it).
async fn remove(docker: &Docker, id: &str) {
    let _ = docker
        .kill_container(
            id,
            Some(KillContainerOptionsBuilder::new().signal("SIGKILL").build()),
        )
        .await;
    let _ = docker
        .remove_container(
            id,
            Some(RemoveContainerOptionsBuilder::new().force(true).build()),
        )
        .await;
}

#[async_trait::async_trait]
impl TestRunner for DockerRunner {
    fn name(&self) -> &str {
        "docker"
    }

    /// The image's id, not only its tag: `build-image` again makes another image under the
    /// same tag.
    async fn identity(&self) -> String {
        let id = match self.client().await {
            Ok(docker) => docker
                .inspect_image(&self.image)
                .await
                .ok()
                .and_then(|i| i.id)
                .unwrap_or_else(|| "no image".into()),
            Err(_) => "no engine".into(),
        };
        format!("docker {} {id}", self.image)
    }

    /// The image carries ruff when `build-image` found it on this machine; an older image
    /// has none, and running it then says so.
    fn ruff(&self) -> Option<String> {
        Some(super::RUFF_IN_SANDBOX.to_string())
    }

    async fn check_ready(&self) -> Result<(), SandboxError> {
        let docker = self.client().await?;
        docker.inspect_image(&self.image).await.map_err(|e| {
            SandboxError::Unavailable(format!(
                "image {} is missing ({e}): run `zerorepo sandbox build-image`",
                self.image
            ))
        })?;
        Ok(())
    }

    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.run_job(repo, WarmJob::Tests(test_file), &self.policy, cancel)
            .await
    }

    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        let policy = self.policy.for_install();
        self.run_job(repo, WarmJob::Install, &policy, cancel).await
    }

    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.run_job(repo, WarmJob::Command(argv), &self.policy, cancel)
            .await
    }

    async fn shutdown(&self) {
        self.pool.close().await;
    }
}

/// Builds the sandbox image offline: the host's `/usr/bin/python3`, its standard library, the
/// shared libraries it and its extension modules link, pytest with its dependencies, and ruff
/// when this machine has it, as a root filesystem piped from `tar` into `docker import`.
/// Returns the image tag.
pub(crate) async fn build_image(tag: &str) -> Result<String, SandboxError> {
    let ruff = crate::programs::find("ruff");
    let files = image_files(ruff.as_deref()).await?;
    let stage = tempfile::Builder::new()
        .prefix("zerorepo-image-")
        .tempdir()?;
    for dir in ["tmp", "repo", "opt/zerorepo", "etc"] {
        std::fs::create_dir_all(stage.path().join(dir))?;
    }
    use std::os::unix::fs::PermissionsExt;
    match &ruff {
        Some(ruff) => {
            let target = stage
                .path()
                .join(super::RUFF_IN_SANDBOX.trim_start_matches('/'));
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::copy(ruff, &target)?;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
        }
        None => tracing::warn!(
            "no ruff on this machine (scripts/setup.sh installs it): the image gets none, and assembly cannot clean unused imports in it"
        ),
    }
    std::fs::set_permissions(
        stage.path().join("tmp"),
        std::fs::Permissions::from_mode(0o1777),
    )?;
    std::fs::write(
        stage.path().join("etc/passwd"),
        "root:x:0:0::/:/bin/false\nnobody:x:65534:65534::/tmp:/bin/false\n",
    )?;
    let list = stage.path().join("files.txt");
    std::fs::write(&list, files.join("\n") + "\n")?;
    let script = r#"set -eu
stage="$1"; list="$2"; tag="$3"
tar --create --file=- --owner=0 --group=0 -C "$stage" tmp repo opt etc -C / --files-from="$list" | docker import - "$tag" >/dev/null"#;
    let status = tokio::process::Command::new("/bin/sh")
        .args(["-c", script, "build-image"])
        .arg(stage.path())
        .arg(&list)
        .arg(tag)
        .status()
        .await
        .map_err(|source| SandboxError::Spawn {
            program: "sh (tar | docker import)".into(),
            source,
        })?;
    if !status.success() {
        return Err(SandboxError::Failed(format!(
            "`tar | docker import` failed ({status}); is the docker CLI installed and DOCKER_HOST set?"
        )));
    }
    Ok(tag.to_string())
}

/// Paths (relative to `/`) that make a working Python with pytest, and the libraries `ruff`
/// (copied into the image apart) links.
async fn image_files(ruff: Option<&Path>) -> Result<Vec<String>, SandboxError> {
    let (mut paths, extensions) = probe::probe_python().await?;
    let mut binaries: Vec<String> = vec!["/usr/bin/python3".into()];
    binaries.extend(extensions);
    binaries.extend(ruff.map(|r| r.display().to_string()));
    for binary in binaries {
        paths.extend(linked_libraries(&binary).await?);
    }
    for link in ["/bin", "/lib", "/lib64", "/sbin"] {
        if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
            paths.push(link.into());
        }
    }
    Ok(archive_list(&paths))
}

/// The shared libraries `binary` links, as `ldd` lists them, with every symlink on the way.
async fn linked_libraries(binary: &str) -> Result<Vec<String>, SandboxError> {
    let ldd = tokio::process::Command::new("ldd")
        .arg(binary)
        .output()
        .await?;
    let mut paths = Vec::new();
    for line in String::from_utf8_lossy(&ldd.stdout).lines() {
        // `libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)`, or the loader's bare path.
        let lib = line
            .split("=>")
            .nth(1)
            .unwrap_or(line)
            .split_whitespace()
            .next()
            .unwrap_or("");
        if lib.starts_with('/') {
            paths.extend(with_links(Path::new(lib)));
        }
    }
    Ok(paths)
}

/// The paths as `tar --files-from` takes them: relative to `/`, sorted, once each, and none
/// inside a directory that is itself listed (tar would archive it twice).
fn archive_list(paths: &[String]) -> Vec<String> {
    let mut relative: Vec<String> = paths
        .iter()
        .map(|p| p.trim_start_matches('/').to_string())
        .filter(|p| !p.is_empty())
        .collect();
    relative.sort();
    relative.dedup();
    let is_real_dir =
        |p: &String| std::fs::symlink_metadata(Path::new("/").join(p)).is_ok_and(|m| m.is_dir());
    let dirs: Vec<String> = relative
        .iter()
        .filter(|p| is_real_dir(p))
        .cloned()
        .collect();
    relative.retain(|p| {
        !dirs
            .iter()
            .any(|d| p != d && p.starts_with(&format!("{d}/")))
    });
    relative
}

/// A path and every symlink met while resolving it (merged-/usr hosts reach the loader as
/// /lib64 -> usr/lib64, whose entry links on to usr/lib/...): the image needs each link.
fn with_links(path: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = PathBuf::from("/");
    for part in path.components().skip(1) {
        current.push(part);
        if std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            found.push(current.display().to_string());
            match std::fs::canonicalize(&current) {
                Ok(real) => current = real,
                Err(_) => return found,
            }
        }
    }
    found.push(current.display().to_string());
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_translates_to_this_exact_container() {
        let layout = DockerLayout {
            image: "img:1".into(),
            repo: "/out/repo".into(),
            runner_dir: "/tmp/zr".into(),
            wheelhouse: Some("/cache/wheelhouse".into()),
            owner: (0, 0),
        };
        let policy = SandboxPolicy {
            env_allowlist: vec![],
            ..SandboxPolicy::default()
        };
        let got = serde_json::to_value(container_config(&policy, &layout)).unwrap();
        let expected = serde_json::json!({
            "User": "65534:65534",
            "AttachStdin": true, "AttachStdout": true, "AttachStderr": false,
            "Tty": false, "OpenStdin": true, "StdinOnce": true,
            "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1",
                    "PYTHONHASHSEED=0", "PYTHONPATH=/repo/src:/repo"],
            "Cmd": ["/usr/bin/python3", "-I", "/opt/zerorepo/runner.py", "--sweep", "--repo", "/repo"],
            "Image": "img:1",
            "WorkingDir": "/repo",
            "NetworkDisabled": true,
            "HostConfig": {
                "Memory": 536870912, "NanoCpus": 1000000000, "MemorySwap": 536870912, "PidsLimit": 64,
                "Ulimits": [{"Name": "core", "Soft": 0, "Hard": 0}],
                "Binds": ["/out/repo:/repo:ro", "/tmp/zr:/opt/zerorepo:ro", "/cache/wheelhouse:/opt/wheelhouse:ro"],
                "NetworkMode": "none", "AutoRemove": true, "CapDrop": ["ALL"], "ReadonlyRootfs": true,
                "SecurityOpt": ["no-new-privileges"],
                "Tmpfs": {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"},
                "GroupAdd": ["0"]
            }
        });
        assert_eq!(got, expected);
    }

    #[test]
    fn engine_urls_pick_the_transport() {
        assert_eq!(engine(None, false), Ok(Engine::Local));
        assert_eq!(engine(Some(" "), true), Ok(Engine::Local));
        assert_eq!(
            engine(Some("unix:///run/d.sock"), true),
            Ok(Engine::Unix("unix:///run/d.sock".into()))
        );
        assert_eq!(
            engine(Some("tcp://10.0.0.2:2375"), false),
            Ok(Engine::Http("tcp://10.0.0.2:2375".into()))
        );
        assert_eq!(
            engine(Some("tcp://10.0.0.2:2376"), true),
            Ok(Engine::Tls("tcp://10.0.0.2:2376".into()))
        );
        assert_eq!(
            engine(Some("https://e:2376"), false),
            Ok(Engine::Tls("https://e:2376".into()))
        );
        assert_eq!(
            engine(Some("10.0.0.2:2375"), false),
            Err(EngineUrlError::NotAUrl("10.0.0.2:2375".into()))
        );
        assert_eq!(
            engine(Some("ssh://user@e"), false),
            Err(EngineUrlError::UnknownScheme {
                url: "ssh://user@e".into(),
                scheme: "ssh".into()
            })
        );
        assert_eq!(
            engine(Some("unix://"), false),
            Err(EngineUrlError::NoHost("unix://".into()))
        );
    }

    #[test]
    fn the_sandbox_is_the_repository_owner_and_never_root() {
        assert_eq!(container_user(1000, 1000), ("1000:1000".into(), vec![]));
        assert_eq!(container_user(1000, 50), ("1000:50".into(), vec![]));
        assert_eq!(
            container_user(0, 0),
            ("65534:65534".into(), vec!["0".to_string()])
        );
    }
}
