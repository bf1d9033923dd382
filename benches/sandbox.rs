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
use zerorepo::sandbox::{BwrapRunner, LocalRunner, SandboxPolicy, TestRunner};

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
        as_root: false,
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

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs = if std::env::args().any(|a| a == "--bench") {
        21
    } else {
        1
    };
    let dir = tempfile::tempdir().unwrap();
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
        let warm = BwrapRunner::new(SandboxPolicy::default(), "/usr/bin/python3").unwrap();
        let first = Instant::now();
        warm.run_tests(repo, "tests/test_bench.py", &cancel)
            .await
            .unwrap();
        let start_cost = first.elapsed();
        let mut times = Vec::new();
        for _ in 0..runs {
            let start = Instant::now();
            let run = warm
                .run_tests(repo, "tests/test_bench.py", &cancel)
                .await
                .unwrap();
            assert!(run.succeeded(), "{run:?}");
            times.push(start.elapsed());
        }
        rows.push((
            "bwrap, warm start (first run, sandbox start included)".into(),
            Some(start_cost),
        ));
        rows.push((
            "bwrap, warm (fork-server, per run)".into(),
            Some(median(times)),
        ));
    } else {
        rows.push(("bwrap (not installed)".into(), None));
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
