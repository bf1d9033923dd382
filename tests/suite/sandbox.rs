//! The adversarial suite: untrusted tests try to hang, fork-bomb, eat memory, write where they
//! must not, reach the network, escape with setsid and flood stdout. Each attempt must be
//! contained, and the next ordinary run must be healthy. Every attack runs against every
//! sandboxed backend present (bubblewrap and Docker; CI installs both); the unsandboxed `none`
//! backend only gets the attack that cannot hurt the host, and its results say `sandbox: none`.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use zerorepo::sandbox::{
    BwrapRunner, DockerRunner, LocalRunner, SandboxPolicy, TestRun, TestRunner,
};

use super::support;

const HEALTHY: &str = "def test_healthy():\n    assert sum([1, 2, 3]) == 6\n";

fn policy() -> SandboxPolicy {
    SandboxPolicy {
        wall_timeout_secs: 5,
        ..SandboxPolicy::default()
    }
}

/// A repository with one healthy test file and the given attack files.
fn repo(attacks: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // Readable by its owner and group, not by others: the Docker sandbox runs as the owner
    // (as root's `nobody` with the owner's group), so it needs no world-readable output.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o750),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/test_healthy.py"), HEALTHY).unwrap();
    for (name, code) in attacks {
        std::fs::write(dir.path().join("tests").join(name), code).unwrap();
    }
    dir
}

/// Every sandboxed backend present; in CI both must be.
fn sandboxes() -> Vec<Box<dyn TestRunner>> {
    let mut found: Vec<Box<dyn TestRunner>> = Vec::new();
    let ci = std::env::var_os("CI").is_some();
    if support::bwrap_available() {
        found.push(Box::new(
            BwrapRunner::new(policy(), "/usr/bin/python3").unwrap(),
        ));
    } else {
        assert!(!ci, "CI must provide bubblewrap and python3-pytest");
        eprintln!(
            "SKIPPED for bwrap: bubblewrap or /usr/bin/python3 with pytest is missing (run scripts/setup.sh)"
        );
    }
    if support::docker_available() {
        found.push(Box::new(
            DockerRunner::new(policy(), zerorepo::sandbox::docker::DEFAULT_IMAGE).unwrap(),
        ));
    } else {
        assert!(
            !ci,
            "CI must provide a Docker engine with the sandbox image (scripts/setup.sh starts one)"
        );
        eprintln!(
            "SKIPPED for docker: no Docker engine with the image {} (run scripts/setup.sh)",
            zerorepo::sandbox::docker::DEFAULT_IMAGE
        );
    }
    found
}

async fn run(runner: &dyn TestRunner, repo: &Path, file: &str) -> TestRun {
    runner
        .run_tests(repo, file, &CancellationToken::new())
        .await
        .unwrap()
}

/// The run after an attack passes, quickly.
async fn assert_healthy(runner: &dyn TestRunner, repo: &Path) {
    let started = Instant::now();
    let after = run(runner, repo, "tests/test_healthy.py").await;
    assert!(
        after.succeeded(),
        "healthy run after the attack failed: {after:?}"
    );
    assert_eq!(after.passed, 1, "{after:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn healthy_run_reports_outcomes_usage_and_the_backend() {
    for runner in sandboxes() {
        let dir = repo(&[(
            "test_mixed.py",
            "import pytest\n\ndef test_ok():\n    pass\n\ndef test_bad():\n    assert 1 == 2\n\n@pytest.mark.skip\ndef test_skip():\n    pass\n",
        )]);
        runner.check_ready().await.unwrap();
        let result = run(runner.as_ref(), dir.path(), "tests/test_mixed.py").await;
        assert_eq!((result.passed, result.failed, result.errors), (1, 1, 0));
        let outcomes: Vec<(&str, &str)> = result
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.outcome.as_str()))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("tests.test_mixed::test_ok", "passed"),
                ("tests.test_mixed::test_bad", "failed"),
                ("tests.test_mixed::test_skip", "skipped")
            ]
        );
        assert_eq!(result.exit_code, Some(1));
        assert_eq!(result.sandbox, runner.name());
        assert!(
            result.cpu_ms.is_some() && result.max_rss_kb.unwrap_or(0) > 1000,
            "{}: {result:?}",
            runner.name()
        );
        assert!(
            result.stdout.contains("1 failed, 1 passed, 1 skipped"),
            "{}",
            result.stdout
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn infinite_loop_is_killed_at_the_wall_timeout() {
    for runner in sandboxes() {
        let dir = repo(&[(
            "test_loop.py",
            "def test_loop():\n    while True:\n        pass\n",
        )]);
        let started = Instant::now();
        let result = run(runner.as_ref(), dir.path(), "tests/test_loop.py").await;
        assert!(
            result.timed_out && result.killed_by.as_deref() == Some("timeout"),
            "{}: {result:?}",
            runner.name()
        );
        assert!(started.elapsed() < Duration::from_secs(12));
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn fork_bomb_is_contained() {
    for runner in sandboxes() {
        let bomb = "import os\n\ndef test_bomb():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n";
        let dir = repo(&[("test_bomb.py", bomb)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_bomb.py").await;
        assert!(!result.succeeded(), "{}: {result:?}", runner.name());
        assert!(
            result.timed_out,
            "a bomb that keeps retrying ends at the timeout: {result:?}"
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn allocation_beyond_the_memory_limit_fails_inside_the_sandbox() {
    for runner in sandboxes() {
        let hog = "def test_hog():\n    block = bytearray(2 * 1024 * 1024 * 1024)\n    assert len(block) > 0\n";
        let dir = repo(&[("test_hog.py", hog)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_hog.py").await;
        assert!(!result.succeeded());
        assert!(result.output.contains("MemoryError"), "{}", result.output);
        assert!(
            result.max_rss_kb.unwrap_or(u64::MAX) < 512 * 1024,
            "{}: {result:?}",
            runner.name()
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn writes_to_etc_the_repository_and_the_host_fail() {
    for runner in sandboxes() {
        let host = tempfile::tempdir().unwrap();
        let host_target = host.path().join("pwned");
        let attack = format!(
            "import pytest\n\n\
             def test_write_etc():\n    with pytest.raises(OSError):\n        open('/etc/zerorepo_pwned', 'w').write('x')\n\n\
             def test_write_repo():\n    with pytest.raises(OSError):\n        open('/repo/pwned.txt', 'w').write('x')\n\n\
             def test_write_host():\n    with pytest.raises(OSError):\n        open({:?}, 'w').write('x')\n\n\
             def test_write_usr():\n    with pytest.raises(OSError):\n        open('/usr/zerorepo_pwned', 'w').write('x')\n\n\
             def test_tmp_is_writable():\n    import tempfile\n    with tempfile.NamedTemporaryFile() as f:\n        f.write(b'ok')\n",
            host_target.display().to_string()
        );
        let dir = repo(&[("test_writes.py", &attack)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_writes.py").await;
        assert!(
            result.succeeded() && result.passed == 5,
            "every write was refused, /tmp works: {}",
            result.output
        );
        assert!(
            !Path::new("/etc/zerorepo_pwned").exists()
                && !Path::new("/usr/zerorepo_pwned").exists()
        );
        assert!(!dir.path().join("pwned.txt").exists() && !host_target.exists());
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn network_is_absent_inside_the_sandbox() {
    for runner in sandboxes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        // Nothing is sent anywhere but loopback: the outside world is checked by looking for
        // interfaces and routes, not by connecting to it.
        let attack = format!(
            "import socket\nimport pytest\n\n\
             def test_host_loopback_server_is_unreachable():\n    with pytest.raises(OSError):\n        socket.create_connection(('127.0.0.1', {port}), timeout=2)\n\n\
             def test_only_loopback_interface():\n    assert [name for _, name in socket.if_nameindex()] == ['lo']\n\n\
             def test_no_routes():\n    with pytest.raises(OSError):\n        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(('192.0.2.1', 9))\n"
        );
        let dir = repo(&[("test_net.py", &attack)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_net.py").await;
        assert!(
            result.succeeded() && result.passed == 3,
            "{}",
            result.output
        );
        assert!(
            listener.accept().is_err(),
            "the host's loopback server saw a connection"
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn setsid_escape_does_not_outlive_the_run() {
    for runner in sandboxes() {
        let marker = format!("zerorepo_escape_{}", std::process::id());
        let attack = format!(
            "import subprocess\n\n\
             def test_escape():\n    subprocess.Popen(['/usr/bin/python3', '-c', 'import time; time.sleep(120)  # {marker}'],\n                     start_new_session=True)\n"
        );
        let dir = repo(&[("test_escape.py", &attack)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_escape.py").await;
        assert!(result.succeeded(), "{}", result.output);
        let survivors = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        assert!(
            survivors.stdout.is_empty(),
            "escaped process survived: {}",
            String::from_utf8_lossy(&survivors.stdout)
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn hundred_megabytes_of_stdout_are_capped() {
    for runner in sandboxes() {
        let flood = "import sys\n\ndef test_flood():\n    chunk = 'x' * (1024 * 1024)\n    for _ in range(100):\n        sys.stdout.write(chunk)\n";
        let dir = repo(&[("test_flood.py", flood)]);
        let started = Instant::now();
        let result = run(runner.as_ref(), dir.path(), "tests/test_flood.py").await;
        assert!(
            result.stdout.len() <= policy().output_cap_bytes,
            "stdout {} bytes",
            result.stdout.len()
        );
        assert!(started.elapsed() < Duration::from_secs(12));
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

#[tokio::test]
async fn unsandboxed_backend_is_reported_as_such_and_still_times_out() {
    let Some(python) = support::require_python() else {
        return;
    };
    let runner = LocalRunner::new(python, Duration::from_secs(3));
    let dir = repo(&[(
        "test_loop.py",
        "def test_loop():\n    while True:\n        pass\n",
    )]);
    let result = run(&runner, dir.path(), "tests/test_loop.py").await;
    assert_eq!(result.sandbox, "none");
    assert!(result.timed_out, "{result:?}");
    assert_healthy(&runner, dir.path()).await;
}

#[tokio::test]
async fn a_test_that_kills_the_runner_cannot_break_the_next_run() {
    for runner in sandboxes() {
        let attack = "import os\nimport signal\n\ndef test_kill_runner():\n    os.kill(os.getppid(), signal.SIGKILL)\n";
        let dir = repo(&[("test_kill.py", attack)]);
        let outcome = runner
            .run_tests(dir.path(), "tests/test_kill.py", &CancellationToken::new())
            .await;
        match runner.name() {
            // In bubblewrap the runner can be killed: that is an infrastructure error, the
            // sandbox is replaced (once more on the retry) and the run reports the failure.
            "bwrap" => {
                let error = outcome.expect_err("a dead runner is an infrastructure error");
                assert!(error.to_string().contains("sandbox failed"), "{error}");
            }
            // In Docker the runner is PID 1 of the container, which ignores the signal.
            _ => assert!(outcome.is_ok_and(|r| r.passed == 1), "{}", runner.name()),
        }
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

/// The probe's finding: bubblewrap's own environment (zerorepo's, API keys and all) was
/// readable as `/proc/1/environ`, and `/proc/1/cmdline` showed the output's host path. The
/// attack reads every `environ` and `cmdline` it can and fails on any variable the policy did
/// not set, and on the host path.
#[tokio::test]
async fn no_process_in_the_sandbox_exposes_the_host_environment_or_path() {
    for runner in sandboxes() {
        let dir = repo(&[]);
        let host_path = dir.path().canonicalize().unwrap().display().to_string();
        // The policy's variables, and the ones the runtimes add themselves.
        let allowed = [
            "PATH",
            "HOME",
            "TMPDIR",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONHASHSEED",
            "PYTHONPATH",
            "LANG",
            "LC_ALL",
            "TZ",
            "HOSTNAME",
            "PWD",
        ];
        let attack = format!(
            r#"import os

ALLOWED = set({allowed:?})
HOST = {host_path:?}

def test_probe():
    if not os.path.isdir("/proc"):
        return  # bubblewrap mounts no /proc: nothing of any process to read
    leaked, shown, read = {{}}, [], 0
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            environ = open(f"/proc/{{pid}}/environ", "rb").read()
            cmdline = open(f"/proc/{{pid}}/cmdline", "rb").read()
        except OSError:
            continue
        read += 1
        for item in environ.split(b"\0"):
            name = item.split(b"=")[0].decode(errors="replace")
            if item and name not in ALLOWED:
                leaked.setdefault(pid, []).append(name)
        if HOST.encode() in cmdline or HOST.encode() in environ:
            shown.append((pid, cmdline, environ))
    assert read >= 2
    assert not leaked, leaked
    assert not shown, shown
"#
        );
        std::fs::write(dir.path().join("tests/test_probe.py"), attack).unwrap();
        let result = run(runner.as_ref(), dir.path(), "tests/test_probe.py").await;
        assert!(
            result.succeeded(),
            "{}: the sandbox exposes the host: {}",
            runner.name(),
            result.output
        );
    }
}

/// Security wave 3: with zerorepo running as root, a sandboxed test wrote the host's kernel
/// settings (`fs.file-max` raised by one, `vm.drop_caches` accepted). Every write into
/// `/proc/sys` must fail, and the host's value stay as it was.
#[tokio::test]
async fn a_test_cannot_change_the_hosts_kernel_settings() {
    let file_max = || std::fs::read_to_string("/proc/sys/fs/file-max").unwrap();
    for runner in sandboxes() {
        let before = file_max();
        let attack = "import pytest\n\n\
            def test_file_max():\n    with pytest.raises(OSError):\n        v = int(open('/proc/sys/fs/file-max').read())\n        open('/proc/sys/fs/file-max', 'w').write(str(v + 1))\n\n\
            def test_drop_caches():\n    with pytest.raises(OSError):\n        open('/proc/sys/vm/drop_caches', 'w').write('3')\n\n\
            def test_sysrq():\n    with pytest.raises(OSError):\n        open('/proc/sysrq-trigger', 'w').write('h')\n";
        let dir = repo(&[("test_kernel.py", attack)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_kernel.py").await;
        assert!(
            result.succeeded() && result.passed == 3,
            "{}: a kernel setting was writable: {}",
            runner.name(),
            result.output
        );
        assert_eq!(file_max(), before, "{}", runner.name());
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

/// Security wave 3: no process in the sandbox is the host's uid 0. A file only root may read
/// stays unreadable (as root, the sandbox runs as 65534 with the repository's group).
#[tokio::test]
async fn no_process_in_the_sandbox_has_the_rights_of_host_root() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: only meaningful when zerorepo runs as root (as in CI)");
        return;
    }
    for runner in sandboxes() {
        let attack = "import os\nimport pytest\n\n\
            def test_read_root_only():\n    with pytest.raises(PermissionError):\n        open('/repo/root_only.txt').read()\n\n\
            def test_not_root():\n    assert os.getuid() != 0 and os.geteuid() != 0\n";
        let dir = repo(&[("test_root.py", attack)]);
        let secret = dir.path().join("root_only.txt");
        std::fs::write(&secret, "secret").unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let result = run(runner.as_ref(), dir.path(), "tests/test_root.py").await;
        assert!(
            result.succeeded() && result.passed == 2,
            "{}: the sandbox acts as host root: {}",
            runner.name(),
            result.output
        );
    }
}

/// Security wave 3: `/dev/shm` carried files from one node's tests into later nodes'. Files a
/// run leaves in `/dev/shm` or `/tmp` are gone for the next run.
#[tokio::test]
async fn nothing_a_run_leaves_in_shared_places_reaches_the_next_run() {
    for runner in sandboxes() {
        let plant = "import os\n\ndef test_plant():\n    for d in ('/dev/shm', '/tmp'):\n        if os.path.isdir(d):\n            open(os.path.join(d, 'planted'), 'w').write('x')\n";
        let look = "import os\n\ndef test_look():\n    found = [d for d in ('/dev/shm', '/tmp') if os.path.exists(os.path.join(d, 'planted'))]\n    assert not found, found\n";
        let dir = repo(&[("test_plant.py", plant), ("test_look.py", look)]);
        let planted = run(runner.as_ref(), dir.path(), "tests/test_plant.py").await;
        assert!(planted.succeeded(), "{}", planted.output);
        let looked = run(runner.as_ref(), dir.path(), "tests/test_look.py").await;
        assert!(
            looked.succeeded(),
            "{}: a planted file survived: {}",
            runner.name(),
            looked.output
        );
    }
}

/// Security wave 3: nested user namespaces were allowed and there was no seccomp filter. A
/// new user namespace and a keyring are refused, and under bubblewrap io_uring too (Docker
/// 20.10's default profile still allows it; newer engines refuse it); threads still work (the
/// filter answers `clone3` so that the C library falls back to `clone`).
#[tokio::test]
async fn namespaces_mounts_and_kernel_interfaces_are_refused_threads_work() {
    for runner in sandboxes() {
        let io_uring = if runner.name() == "bwrap" {
            concat!(
                "\ndef test_no_io_uring():\n    params = ctypes.create_string_buffer(120)\n    assert libc.syscall(425, 8, params) == -1\n",
                // Refused by the filter (EPERM), not failing for another reason.
                "\ndef test_no_vsock():\n    import errno, socket\n    try:\n        socket.socket(40, socket.SOCK_STREAM)\n    except OSError as e:\n        assert e.errno == errno.EPERM, e\n    else:\n        raise AssertionError('a vsock socket')\n",
                "\ndef test_no_sysv_shm_or_foreign_descriptors():\n    # shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600); pidfd_getfd(0, 1, 0)\n    assert libc.syscall(29, 0, 4096, 0o1600) == -1 and ctypes.get_errno() == 1\n    assert libc.syscall(438, 0, 1, 0) == -1 and ctypes.get_errno() == 1\n",
                "\ndef test_dev_is_read_only():\n    import errno\n    try:\n        open('/dev/left-behind', 'w')\n    except OSError as e:\n        assert e.errno == errno.EROFS, e\n    else:\n        raise AssertionError('wrote in /dev')\n",
            )
        } else {
            ""
        };
        let attack = r#"import ctypes
import threading

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000

def test_no_user_namespace():
    assert libc.unshare(CLONE_NEWUSER) == -1

def test_no_keyring():
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
    assert libc.syscall(250, 0, -4, 0) == -1

def test_threads_work():
    seen = []
    t = threading.Thread(target=lambda: seen.append(1))
    t.start()
    t.join()
    assert seen == [1]
"#
        .to_string()
            + io_uring;
        let dir = repo(&[("test_kernel_if.py", &attack)]);
        let result = run(runner.as_ref(), dir.path(), "tests/test_kernel_if.py").await;
        let expected = if io_uring.is_empty() { 3 } else { 7 };
        assert!(
            result.succeeded() && result.passed == expected,
            "{}: {}",
            runner.name(),
            result.output
        );
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}

/// Security wave 3: `/proc/self/mountinfo` showed the output's host path. Under bubblewrap no
/// `/proc` is mounted, so no mount table names it. (Docker's mount table names a bind
/// mount's source, and no container option hides it: docs/security.md says so.)
#[tokio::test]
async fn the_sandbox_does_not_show_the_host_path_of_the_output() {
    for runner in sandboxes().into_iter().filter(|r| r.name() == "bwrap") {
        let dir = repo(&[]);
        let host_path = dir.path().canonicalize().unwrap().display().to_string();
        let attack = format!(
            "import os\n\nHOST = {host_path:?}\n\ndef test_mounts():\n    for name in ('/proc/self/mountinfo', '/proc/self/mounts', '/proc/1/mountinfo'):\n        try:\n            text = open(name).read()\n        except OSError:\n            continue\n        assert HOST not in text, (name, text)\n"
        );
        std::fs::write(dir.path().join("tests/test_mounts.py"), attack).unwrap();
        let result = run(runner.as_ref(), dir.path(), "tests/test_mounts.py").await;
        assert!(
            result.succeeded(),
            "{}: the host path is visible: {}",
            runner.name(),
            result.output
        );
    }
}

/// The install check (`pip install -e .`, which runs the package's build code) works in
/// every sandbox, offline, and leaves the repository as it was: it installs a copy.
#[tokio::test]
async fn the_install_check_installs_a_copy_inside_every_sandbox() {
    for runner in sandboxes() {
        let dir = repo(&[]);
        let pyproject = "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"probe\"\nversion = \"0.1.0\"\n";
        std::fs::write(dir.path().join("pyproject.toml"), pyproject).unwrap();
        std::fs::create_dir_all(dir.path().join("src/probe")).unwrap();
        std::fs::write(dir.path().join("src/probe/__init__.py"), "X = 1\n").unwrap();
        let before = support::tree(dir.path());
        let run = runner
            .check_install(dir.path(), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(run.exit_code, Some(0), "{}: {}", runner.name(), run.output);
        assert_eq!(run.sandbox, runner.name());
        assert!(
            support::tree(dir.path()) == before,
            "the install wrote into the repository"
        );
        // A broken project fails the check, with pip's reason.
        std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \n").unwrap();
        let run = runner
            .check_install(dir.path(), &CancellationToken::new())
            .await
            .unwrap();
        assert_ne!(run.exit_code, Some(0), "{}: {}", runner.name(), run.output);
        std::fs::remove_file(dir.path().join("pyproject.toml")).unwrap(); // pytest reads it too
        assert_healthy(runner.as_ref(), dir.path()).await;
    }
}
