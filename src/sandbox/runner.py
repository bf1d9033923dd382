"""zerorepo warm test runner: one Python that has imported pytest, forking once per run.

Protocol: JSON lines. Requests on stdin, responses on stdout (nothing else is ever printed
there). The first line out is {"ready": true, ...}. A request:
  {"id": 1, "args": ["-q", "tests/test_x.py"], "timeout": 30, "cpu_seconds": 30,
   "memory_bytes": 536870912, "max_processes": 64, "file_bytes": 16777216, "output_cap": 16384}
A request with "install": true runs, instead of pytest, the install check: a copy of the
repository is installed with `pip install -e` into a fresh venv, offline, from the wheelhouse
mounted at WHEELHOUSE (pip itself is run from its wheel there). The same check runs outside
any sandbox as `runner.py --install REPO WHEELHOUSE` (only for --sandbox none).
A request with "command": [argv...] runs that command line (no shell) from the repository root
instead: `python`/`python3` is this interpreter, `python -m pytest ARGS` runs in the warm
pytest, and bytecode goes to the run's temp dir (the repository is read-only).
Each run gets a fresh temp dir, its own process group, rlimits, and stdout/stderr captured to
files (never pipes: an escaped grandchild could hold a pipe open forever). After the run every
other process in the sandbox is killed (--sweep, only inside a PID namespace) and zombies are
reaped, so the next run starts clean.
"""
import ctypes
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest  # noqa: F401  (imported once here; every forked run reuses it)

PR_SET_CHILD_SUBREAPER = 36
SWEEP = "--sweep" in sys.argv
REPO = sys.argv[sys.argv.index("--repo") + 1] if "--repo" in sys.argv else os.getcwd()
WHEELHOUSE = "/opt/wheelhouse"
PROTOCOL_OUT = os.fdopen(os.dup(1), "w", buffering=1) if __name__ == "__main__" and "--install" not in sys.argv else None


def become_subreaper():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass


def run_child(req, tmp, out_path, err_path, junit):
    os.setpgid(0, 0)
    try:
        os.close(PROTOCOL_OUT.fileno())  # the run must not be able to forge responses
    except (OSError, AttributeError):
        pass
    limits = [
        (resource.RLIMIT_CPU, req.get("cpu_seconds")),
        (resource.RLIMIT_AS, req.get("memory_bytes")),
        (resource.RLIMIT_NPROC, req.get("max_processes")),
        (resource.RLIMIT_FSIZE, req.get("file_bytes")),
        (resource.RLIMIT_CORE, 0),
    ]
    for which, value in limits:
        if value is not None:
            try:
                resource.setrlimit(which, (value, value))
            except (ValueError, OSError):
                pass
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    os.environ["TMPDIR"] = tmp
    tempfile.tempdir = tmp
    os.chdir(REPO)
    for path in (os.path.join(REPO, "src"), REPO):
        if path not in sys.path:
            sys.path.insert(0, path)
    args = list(req.get("args", [])) + ["-p", "no:cacheprovider", "--junitxml", junit]
    try:
        if req.get("install"):
            code = install(REPO, WHEELHOUSE, tmp)
        elif req.get("command"):
            code = run_command(list(req["command"]), tmp, junit)
        else:
            code = pytest.main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        code = 3
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def run_command(argv, tmp, junit):
    """Runs `argv` in this process (pytest) or in its place (exec); the exit code if it returns."""
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    if argv[0] in ("python", "python3"):
        if argv[1:3] == ["-m", "pytest"]:
            return pytest.main(argv[3:] + ["-p", "no:cacheprovider", "--junitxml", junit])
        argv = [sys.executable] + argv[1:]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print(f"cannot run {argv[0]}: {e}", file=sys.stderr)
        return 127


def install(repo, wheelhouse, tmp):
    """`pip install -e .` of a copy of `repo` into a fresh venv under `tmp`; the exit code.

    With uv's binary in the wheelhouse (bin/uv), uv makes the venv and installs, several
    times faster; otherwise pip runs from its wheel."""
    import glob
    import subprocess
    import venv

    copy = os.path.join(tmp, "repo")
    shutil.copytree(repo, copy, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".zerorepo", "__pycache__", "*.egg-info"))
    uv = os.path.join(wheelhouse, "bin", "uv")
    if uv_runs(uv):
        return install_with_uv(uv, copy, wheelhouse, tmp)
    wheels = sorted(glob.glob(os.path.join(wheelhouse, "pip-*.whl")))
    if not wheels:
        print(f"no pip wheel in the wheelhouse {wheelhouse} (scripts/setup.sh fills it)", file=sys.stderr)
        return 2
    env_dir = os.path.join(tmp, "venv")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    command = [os.path.join(env_dir, "bin", "python"), os.path.join(wheels[-1], "pip"), "install",
               "--no-index", "--find-links", wheelhouse, "--disable-pip-version-check",
               "--no-cache-dir", "-q", "-e", copy]
    env = dict(os.environ, PIP_NO_INPUT="1", TMPDIR=tmp)
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.call(command, cwd=copy, env=env, stdin=subprocess.DEVNULL)


def uv_runs(uv):
    """Whether uv's binary is there and runs here (a minimal image may lack its libraries)."""
    import subprocess

    if not os.access(uv, os.X_OK):
        return False
    try:
        return subprocess.call([uv, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False


def install_with_uv(uv, copy, wheelhouse, tmp):
    """`uv venv` then `uv pip install -e`, offline, from the wheelhouse; the exit code."""
    import subprocess

    env = dict(os.environ, TMPDIR=tmp, UV_CACHE_DIR=os.path.join(tmp, "uv-cache"), UV_NO_CONFIG="1",
               UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    env_dir = os.path.join(tmp, "venv")
    sys.stdout.flush()
    sys.stderr.flush()
    code = subprocess.call([uv, "venv", "-q", "--python", sys.executable, env_dir],
                           cwd=copy, env=env, stdin=subprocess.DEVNULL)
    if code != 0:
        return code
    return subprocess.call([uv, "pip", "install", "-q", "--no-index", "--find-links", wheelhouse,
                            "--python", os.path.join(env_dir, "bin", "python"), "-e", copy],
                           cwd=copy, env=env, stdin=subprocess.DEVNULL)


def sweep():
    """Kill every process in the sandbox but us and PID 1, and wait until they are gone.

    kill(-1) reaches every process we may signal in this PID namespace but ourselves and
    PID 1, and fails with ESRCH once none is left (a zombie still counts, so reaping is part of
    the loop); no /proc is needed, and the bubblewrap sandbox mounts none."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break
        except OSError:
            break
        reap()
        time.sleep(0.002)
    reap()


def scrub(directory):
    """Removes everything in `directory` (not the directory itself)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def tail(path, cap):
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size > cap:
                f.seek(size - cap)
            data = f.read(cap)
    except OSError:
        return "", 0
    return data.decode("utf-8", "replace"), max(0, size - cap)


# The JUnit file is written by the code under test as much as by pytest: read a bounded
# file, never one that declares entities (a few bytes of them expand a hundredfold in the
# parser, and the reply to zerorepo with them), and keep bounded names.
JUNIT_MAX_BYTES = 8 << 20
NAME_MAX_CHARS = 1000


def outcomes(junit):
    tests = []
    try:
        with open(junit, "rb") as f:
            data = f.read(JUNIT_MAX_BYTES + 1)
        if len(data) > JUNIT_MAX_BYTES or b"<!DOCTYPE" in data or b"<!ENTITY" in data:
            return tests
        root = ET.fromstring(data)
    except (OSError, ET.ParseError):
        return tests
    for case in root.iter("testcase"):
        name = case.get("classname", "") + "::" + case.get("name", "")
        name = name[:NAME_MAX_CHARS]
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
        tests.append({"name": name, "outcome": outcome})
    return tests


def handle(req):
    cap = int(req.get("output_cap", 16384))
    tmp = tempfile.mkdtemp(prefix="run-")
    out_path, err_path = os.path.join(tmp, ".stdout"), os.path.join(tmp, ".stderr")
    junit = os.path.join(tmp, ".junit.xml")
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run_child(req, work, out_path, err_path, junit)
    deadline = started + float(req.get("timeout", 30))
    timed_out = False
    status, usage = 0, None
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid:
            break
        if time.monotonic() >= deadline:
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.002)
    duration = time.monotonic() - started
    if SWEEP:
        sweep()
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        reap()
    stdout, cut_out = tail(out_path, cap)
    stderr, cut_err = tail(err_path, cap)
    tests = outcomes(junit)
    shutil.rmtree(tmp, ignore_errors=True)
    if SWEEP:
        # Nothing a run leaves in the sandbox's shared places reaches the next run.
        for shared in ("/dev/shm", "/tmp"):
            scrub(shared)
    signal_name = None
    exit_code = None
    if os.WIFSIGNALED(status):
        signal_name = signal.Signals(os.WTERMSIG(status)).name
    elif os.WIFEXITED(status):
        exit_code = os.WEXITSTATUS(status)
    return {
        "id": req.get("id"),
        "exit_code": exit_code,
        "signal": signal_name,
        "timed_out": timed_out,
        "duration_ms": int(duration * 1000),
        "cpu_ms": int((usage.ru_utime + usage.ru_stime) * 1000) if usage else None,
        "max_rss_kb": usage.ru_maxrss if usage else None,
        "stdout": stdout,
        "stderr": stderr,
        "stdout_cut": cut_out,
        "stderr_cut": cut_err,
        "tests": tests,
    }


def main():
    become_subreaper()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    print(json.dumps({"ready": True, "python": sys.version.split()[0], "pytest": pytest.__version__}), file=PROTOCOL_OUT)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            resp = handle(req)
        except Exception as e:  # report, never die on one bad request
            resp = {"id": None, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(resp), file=PROTOCOL_OUT)


if __name__ == "__main__":
    if "--install" in sys.argv:
        at = sys.argv.index("--install")
        with tempfile.TemporaryDirectory(prefix=f"zerorepo-install-{os.getpid()}-") as scratch:
            sys.exit(install(sys.argv[at + 1], sys.argv[at + 2], scratch))
    main()
