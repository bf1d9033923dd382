//! The engine as a library: whatever a run ends with, it releases the sandbox it was given.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;
use zerorepo::engine::{GenerateOptions, GenerateRequest, LoopSettings, PhaseSink};
use zerorepo::sandbox::{LocalRunner, SandboxError, TestOutcome, TestRun, TestRunner};

use super::support;

/// The unsandboxed runner, counting how often it is shut down; the first `time_outs` test
/// runs report a timeout without running, and test run number `breaks_at` (from 1) reports
/// that node_a's `test_double_positive` failed.
struct Counting {
    inner: LocalRunner,
    shutdowns: AtomicUsize,
    time_outs: AtomicUsize,
    runs: AtomicUsize,
    breaks_at: usize,
}

impl Counting {
    fn new(python: &str, time_outs: usize, breaks_at: usize) -> Arc<Counting> {
        Arc::new(Counting {
            inner: LocalRunner::new(python, std::time::Duration::from_secs(30)),
            shutdowns: AtomicUsize::new(0),
            time_outs: AtomicUsize::new(time_outs),
            runs: AtomicUsize::new(0),
            breaks_at,
        })
    }
}

/// The checkpoint a generation in `out` left.
fn checkpoint(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("docs/generation_checkpoint.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[async_trait::async_trait]
impl TestRunner for Counting {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn check_ready(&self) -> Result<(), SandboxError> {
        self.inner.check_ready().await
    }
    async fn shutdown(&self) {
        self.shutdowns.fetch_add(1, Ordering::SeqCst);
    }
    async fn run_tests(
        &self,
        repo: &Path,
        test_file: &str,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        if self.runs.fetch_add(1, Ordering::SeqCst) + 1 == self.breaks_at {
            let mut run = self.inner.run_tests(repo, test_file, cancel).await?;
            run.exit_code = Some(1);
            run.failed += 1;
            run.tests
                .retain(|t| !t.name.ends_with("test_double_examples_from_spec"));
            run.tests.push(TestOutcome {
                name: "tests.test_steps::test_double_examples_from_spec".into(),
                outcome: "failed".into(),
            });
            return Ok(run);
        }
        let left = self.time_outs.load(Ordering::SeqCst);
        if left > 0 {
            self.time_outs.store(left - 1, Ordering::SeqCst);
            return Ok(TestRun {
                timed_out: true,
                cancelled: false,
                killed_by: Some("timeout".into()),
                duration: std::time::Duration::from_secs(30),
                ..TestRun::cancelled("local")
            });
        }
        self.inner.run_tests(repo, test_file, cancel).await
    }
    async fn check_install(
        &self,
        repo: &Path,
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.inner.check_install(repo, cancel).await
    }
    async fn run_command(
        &self,
        repo: &Path,
        argv: &[String],
        cancel: &CancellationToken,
    ) -> Result<TestRun, SandboxError> {
        self.inner.run_command(repo, argv, cancel).await
    }
}

async fn generate_chain(out: &Path, runner: Arc<Counting>) -> Result<(), String> {
    let fixture = support::fixture("chain");
    let rpg = zerorepo::rpg::load_file(&fixture.join("rpg.json")).unwrap();
    let rpg = Arc::new(zerorepo::rpg::validate(rpg).unwrap());
    let llm = Arc::new(
        zerorepo::llm::scripted::ScriptedProvider::load(&fixture.join("script.jsonl")).unwrap(),
    );
    let options = GenerateOptions {
        out: out.to_path_buf(),
        start_from: None,
        settings: LoopSettings {
            max_retries: 1,
            one_shot: false,
            candidates: 1,
            votes: false,
        },
        jobs: 1,
        flush_every: 5,
        phases: PhaseSink::default(),
    };
    let request = GenerateRequest {
        rpg,
        llm,
        runner,
        options,
        cancel: CancellationToken::new(),
    };
    zerorepo::pipeline::generate(request, |_| {})
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn the_runner_is_shut_down_once_whether_the_run_succeeds_or_is_refused() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let counting = || Counting::new(&python, 0, 0);
    let runner = counting();
    generate_chain(&out, runner.clone()).await.unwrap();
    assert_eq!(runner.shutdowns.load(Ordering::SeqCst), 1);
    // A hand edit makes the next run refuse, after the runner was checked and set up.
    let module = out.join("src/chain/steps.py");
    let mut text = std::fs::read_to_string(&module).unwrap();
    text.push_str("# mine\n");
    std::fs::write(&module, text).unwrap();
    let runner = counting();
    let refused = generate_chain(&out, runner.clone()).await.unwrap_err();
    assert!(refused.contains("steps.py"), "{refused}");
    assert_eq!(runner.shutdowns.load(Ordering::SeqCst), 1);
}

/// A run that timed out is repeated once on the same code; when the repeat passes, the node
/// passes and its record says the run was flaky.
#[tokio::test]
async fn a_timed_out_run_is_repeated_and_flagged_flaky_when_the_repeat_passes() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    generate_chain(&out, Counting::new(&python, 1, 0))
        .await
        .unwrap();
    let cp = checkpoint(&out);
    let node = &cp["node_a"];
    assert_eq!(node["status"], "passed", "{node}");
    assert_eq!(node["retry_count"], 0, "{node}");
    let flaky = node["flaky"][0].as_str().unwrap_or_default();
    assert!(flaky.contains("the whole run (tests timed out"), "{node}");
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(
        report.contains("- **Flaky tests** (failed, then passed"),
        "{report}"
    );
}

/// Code that breaks a test of an earlier function of its module is a regression: it is not
/// kept, the node is fixed, and the regression is counted in the node's `work`.
#[tokio::test]
async fn a_run_that_breaks_an_earlier_functions_test_is_counted_as_a_regression_caught() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Run 1 is node_a's; run 2, node_b's first, reports node_a's test broken.
    generate_chain(&out, Counting::new(&python, 0, 2))
        .await
        .unwrap();
    let cp = checkpoint(&out);
    let node = &cp["node_b"];
    assert_eq!(node["status"], "passed", "{node}");
    assert_eq!(node["work"]["regressions_caught"], 1, "{node}");
    assert_eq!(node["retry_count"], 1, "{node}");
    assert!(cp["node_a"]["work"].get("regressions_caught").is_none());
}
