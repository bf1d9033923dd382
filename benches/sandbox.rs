//! Sandbox latency: per-run time of cold and warm test runs for each backend, in one run of
//! this program so the ratios are comparable.
//!
//! `cargo bench --bench sandbox` prints a Markdown table (copied into reports/sandbox.md).
//! Under `cargo test` (no `--bench`) it does one run of each as a smoke test. Backends that
//! are not installed are reported as missing, not silently dropped.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use zerorepo::sandbox::bwrap::{BwrapLayout, bwrap_args};
use zerorepo::sandbox::docker::DEFAULT_IMAGE;
use zerorepo::sandbox::{BwrapRunner, DockerRunner, LocalRunner, SandboxPolicy, TestRunner};

const TESTS: &str = "import math\n\ndef test_a():\n    assert math.sqrt(4) == 2\n\ndef test_b():\n    assert sorted([3, 1, 2]) == [1, 2, 3]\n\ndef test_c():\n    assert 'a'.upper() == 'A'\n";

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// One cold bubblewrap run: a new sandbox and a new Python that imports pytest, per run.
fn bwrap_cold(repo: &Path) -> Duration {
    let layout = BwrapLayout {
        repo: repo.to_path_buf(),
        runner_dir: repo.to_path_buf(),
        python: "/usr/bin/python3".into(),
        wheelhouse: None,
        ruff: None,
        // The cold baseline is bubblewrap alone: its own user namespace, no filter.
        user: zerorepo::sandbox::bwrap::SandboxUser::Invoker,
        seccomp: false,
    };
    let mut args = bwrap_args(&SandboxPolicy::default(), &layout);
    let keep = args.iter().position(|a| a == "/usr/bin/python3").unwrap();
    args.truncate(keep);
    args.extend(
        [
            "/usr/bin/python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_bench.py",
        ]
        .map(String::from),
    );
    let start = Instant::now();
    let status = Command::new("bwrap").args(&args).output().unwrap().status;
    assert!(status.success());
    start.elapsed()
}

/// One cold Docker run: `docker run --rm` of a fresh container per run, with the sandbox flags.
fn docker_cold(repo: &Path) -> Duration {
    let start = Instant::now();
    let out = Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--tmpfs",
            "/tmp:rw,size=64m,mode=1777",
        ])
        .args([
            "--user",
            "65534:65534",
            "--memory",
            "512m",
            "--memory-swap",
            "512m",
            "--pids-limit",
            "64",
            "--cap-drop",
            "ALL",
        ])
        .arg("-v")
        .arg(format!("{}:/repo:ro", repo.display()))
        .args([
            "-w",
            "/repo",
            DEFAULT_IMAGE,
            "/usr/bin/python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_bench.py",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

/// Per-run times of a warm runner, and the cost of its first run (sandbox start included).
async fn warm(runner: &dyn TestRunner, repo: &Path, runs: usize) -> (Duration, Duration) {
    let cancel = CancellationToken::new();
    let first = Instant::now();
    assert!(
        runner
            .run_tests(repo, "tests/test_bench.py", &cancel)
            .await
            .unwrap()
            .succeeded()
    );
    let start_cost = first.elapsed();
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let run = runner
            .run_tests(repo, "tests/test_bench.py", &cancel)
            .await
            .unwrap();
        assert!(run.succeeded(), "{run:?}");
        times.push(start.elapsed());
    }
    runner.shutdown().await;
    (start_cost, median(times))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs = if std::env::args().any(|a| a == "--bench") {
        21
    } else {
        1
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/test_bench.py"), TESTS).unwrap();
    let repo = dir.path();
    let cancel = CancellationToken::new();
    let mut rows: Vec<(String, Option<Duration>)> = Vec::new();

    let python = std::env::var("ZEROREPO_PYTHON").unwrap_or_else(|_| "python3".into());
    let local = LocalRunner::new(&python, Duration::from_secs(30));
    let mut times = Vec::new();
    for _ in 0..runs {
        let run = local
            .run_tests(repo, "tests/test_bench.py", &cancel)
            .await
            .unwrap();
        assert!(run.succeeded(), "{run:?}");
        times.push(run.duration);
    }
    rows.push((
        "none, cold (pytest subprocess per run)".into(),
        Some(median(times)),
    ));

    let bwrap_ok = Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if bwrap_ok {
        rows.push((
            "bwrap, cold (sandbox + pytest per run)".into(),
            Some(median((0..runs).map(|_| bwrap_cold(repo)).collect())),
        ));
        let runner = BwrapRunner::new(SandboxPolicy::default(), "/usr/bin/python3").unwrap();
        let (start_cost, per_run) = warm(&runner, repo, runs).await;
        rows.push((
            "bwrap, warm start (first run, sandbox start included)".into(),
            Some(start_cost),
        ));
        rows.push(("bwrap, warm (fork-server, per run)".into(), Some(per_run)));
    } else {
        rows.push(("bwrap (not installed)".into(), None));
    }

    let docker_ok = Command::new("docker")
        .args(["image", "inspect", DEFAULT_IMAGE])
        .output()
        .is_ok_and(|o| o.status.success());
    if docker_ok {
        rows.push((
            "docker, cold (`docker run` per run)".into(),
            Some(median((0..runs).map(|_| docker_cold(repo)).collect())),
        ));
        let runner = DockerRunner::new(SandboxPolicy::default(), DEFAULT_IMAGE).unwrap();
        let (start_cost, per_run) = warm(&runner, repo, runs).await;
        rows.push((
            "docker, warm start (first run, container start included)".into(),
            Some(start_cost),
        ));
        rows.push((
            "docker, warm (fork-server in one container, per run)".into(),
            Some(per_run),
        ));
    } else {
        rows.push(("docker (no engine or no image)".into(), None));
    }

    println!(
        "| backend and mode | per run (median of {runs}) | relative to bwrap warm |\n|---|---|---|"
    );
    let warm = rows
        .iter()
        .find(|(n, _)| n.starts_with("bwrap, warm ("))
        .and_then(|(_, d)| *d);
    for (name, time) in &rows {
        let ratio = match (time, warm) {
            (Some(t), Some(w)) if !w.is_zero() => {
                format!("{:.1}×", t.as_secs_f64() / w.as_secs_f64())
            }
            _ => "-".into(),
        };
        println!(
            "| {name} | {} | {ratio} |",
            time.map_or("missing".into(), ms)
        );
    }
}
