//! Assembly's import cleanup (issue 39 §4) in every sandbox present: ruff runs there over a
//! generated tree with unused and duplicated imports and re-exports; what the cleanup leaves
//! passes `ruff check --select E9,F` with no finding, keeps every re-export, and its tests
//! still pass in the sandbox.

use std::collections::BTreeMap;
use std::path::Path;

use tokio_util::sync::CancellationToken;
use zerorepo::assemble::cleanup::{Cleanup, clean};
use zerorepo::sandbox::{BwrapRunner, DockerRunner, SandboxPolicy, TestRunner};

use super::support;

/// A generated tree as the engine leaves it: a module with an unused import and imports
/// made twice, a package `__init__.py` that re-exports with and without `__all__`, a module
/// whose unused import a test takes from it, and a test file that several nodes' tests were
/// merged into.
const TREE: &[(&str, &str)] = &[
    (
        "src/pkg/__init__.py",
        "\"\"\"Statistics.\"\"\"\n\nfrom .stats import mean\nfrom .stats import mean\nfrom .util import helper\n\n__all__ = [\"mean\"]\n",
    ),
    (
        "src/pkg/stats.py",
        "import os\nimport math\nimport math\nfrom typing import List\nfrom typing import List, Optional\n\n\ndef mean(xs: Optional[List[float]]) -> float:\n    return math.fsum(xs) / len(xs)\n",
    ),
    (
        "src/pkg/util.py",
        "from pkg.stats import mean\nimport json\n\n\ndef helper():\n    return f\"helper\"\n",
    ),
    (
        "tests/test_stats.py",
        "import pytest\nimport pytest\nfrom pkg.stats import mean\nfrom pkg.stats import mean, List\nfrom pkg.util import mean as util_mean\nfrom pkg import helper\n\n\ndef test_mean():\n    try:\n        mean([])\n    except ZeroDivisionError as e:\n        pass\n    assert mean([1.0, 3.0]) == util_mean([2.0]) == 2.0\n    assert helper() == \"helper\"\n",
    ),
];

/// The same tree after the cleanup: what was unused or imported twice is gone; what another
/// file takes (`mean` from `pkg.util`, everything of the `__init__.py`) is an explicit
/// re-export (`name as name`).
const CLEANED: &[(&str, &str)] = &[
    (
        "src/pkg/__init__.py",
        "\"\"\"Statistics.\"\"\"\n\nfrom .stats import mean\nfrom .util import helper as helper\n\n__all__ = [\"mean\"]\n",
    ),
    (
        "src/pkg/stats.py",
        "import math\nfrom typing import List\nfrom typing import Optional\n\n\ndef mean(xs: Optional[List[float]]) -> float:\n    return math.fsum(xs) / len(xs)\n",
    ),
    (
        "src/pkg/util.py",
        "from pkg.stats import mean as mean\n\n\ndef helper():\n    return \"helper\"\n",
    ),
    (
        "tests/test_stats.py",
        "from pkg.stats import mean\nfrom pkg.util import mean as util_mean\nfrom pkg import helper\n\n\ndef test_mean():\n    try:\n        mean([])\n    except ZeroDivisionError:\n        pass\n    assert mean([1.0, 3.0]) == util_mean([2.0]) == 2.0\n    assert helper() == \"helper\"\n",
    ),
];

fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

fn read_tree(root: &Path) -> BTreeMap<String, String> {
    TREE.iter()
        .map(|(path, _)| {
            let text = std::fs::read_to_string(root.join(path)).unwrap();
            (path.to_string(), text)
        })
        .collect()
}

/// Whether the sandbox image has ruff (images built before the cleanup have none).
fn image_has_ruff() -> bool {
    std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", "--user", "65534:65534"])
        .arg(zerorepo::sandbox::docker::DEFAULT_IMAGE)
        .args([zerorepo::sandbox::RUFF_IN_SANDBOX, "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Every sandboxed backend present that has ruff; in CI both must be there.
fn sandboxes() -> Vec<Box<dyn TestRunner>> {
    let ci = std::env::var_os("CI").is_some();
    let mut found: Vec<Box<dyn TestRunner>> = Vec::new();
    if support::bwrap_available() {
        found.push(Box::new(
            BwrapRunner::new(SandboxPolicy::default(), "/usr/bin/python3").unwrap(),
        ));
    } else {
        assert!(!ci, "CI must provide bubblewrap and python3-pytest");
        eprintln!(
            "SKIPPED cleanup for bwrap: bubblewrap or /usr/bin/python3 with pytest is missing (run scripts/setup.sh)"
        );
    }
    if support::docker_available() && image_has_ruff() {
        found.push(Box::new(
            DockerRunner::new(
                SandboxPolicy::default(),
                zerorepo::sandbox::docker::DEFAULT_IMAGE,
            )
            .unwrap(),
        ));
    } else {
        assert!(
            !ci,
            "CI must provide a Docker engine with a sandbox image that has ruff (scripts/setup.sh builds it)"
        );
        eprintln!(
            "SKIPPED cleanup for docker: no Docker engine, or its image {} has no ruff (scripts/setup.sh, or `zerorepo sandbox build-image`)",
            zerorepo::sandbox::docker::DEFAULT_IMAGE
        );
    }
    found
}

#[tokio::test]
async fn unused_and_duplicated_imports_go_in_the_sandbox_and_re_exports_stay() {
    let Some(ruff) = zerorepo::programs::find("ruff") else {
        assert!(std::env::var_os("CI").is_none(), "CI must install ruff");
        eprintln!("SKIPPED: no ruff on this machine (scripts/setup.sh installs it)");
        return;
    };
    for runner in sandboxes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o750),
        )
        .unwrap();
        write_tree(dir.path(), TREE);
        let cancel = CancellationToken::new();
        let mut sources = read_tree(dir.path());
        let mut rounds = 0;
        let cleanup = clean(
            dir.path(),
            &mut sources,
            runner.as_ref(),
            &cancel,
            |batch| {
                rounds += 1;
                write_tree(
                    dir.path(),
                    &batch
                        .iter()
                        .map(|(p, t)| (p.as_str(), t.as_str()))
                        .collect::<Vec<_>>(),
                );
                Ok::<(), String>(())
            },
        )
        .await
        .unwrap();
        let name = runner.name().to_string();
        let expected: BTreeMap<String, String> = CLEANED
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        assert_eq!(read_tree(dir.path()), expected, "{name}: {cleanup:?}");
        assert_eq!(sources, expected, "{name}: the sources follow the files");
        assert_eq!(
            cleanup,
            Cleanup {
                fixed: [("F401", 5), ("F541", 1), ("F811", 5), ("F841", 1)]
                    .map(|(c, n)| (c.to_string(), n))
                    .into(),
                explicit: vec![
                    "src/pkg/__init__.py:5: an `__init__.py` import is the package's interface"
                        .to_string(),
                    "src/pkg/util.py:1: tests/test_stats.py imports `mean` from here".to_string(),
                ],
                files: CLEANED.iter().map(|(p, _)| p.to_string()).collect(),
                kept: Vec::new(),
                problem: None,
            },
            "{name}"
        );
        assert!(rounds >= 2, "{name}: an unused duplicate takes two rounds");
        // What ruff says after, read on the host as the validation does: nothing.
        let files: Vec<String> = TREE.iter().map(|(p, _)| p.to_string()).collect();
        let findings = zerorepo::symbols::check::lint_files(dir.path(), &files)
            .unwrap()
            .unwrap();
        assert_eq!(findings, [], "{name}: ruff at {}", ruff.display());
        // The behaviour is the same: the tests still pass in the sandbox.
        let run = runner
            .run_tests(dir.path(), "tests/test_stats.py", &cancel)
            .await
            .unwrap();
        assert!(run.succeeded() && run.passed == 1, "{name}: {}", run.output);
        runner.shutdown().await;
    }
}

#[tokio::test]
async fn a_sandbox_without_ruff_changes_nothing_and_says_so() {
    let runner = zerorepo::sandbox::LocalRunner::new("python3", std::time::Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    let mut sources = read_tree(dir.path());
    // A runner that reports no ruff: the cleanup asks nothing and writes nothing.
    struct NoRuff(zerorepo::sandbox::LocalRunner);
    #[async_trait::async_trait]
    impl TestRunner for NoRuff {
        fn name(&self) -> &str {
            "no-ruff"
        }
        async fn check_ready(&self) -> Result<(), zerorepo::sandbox::SandboxError> {
            Ok(())
        }
        async fn run_tests(
            &self,
            repo: &Path,
            file: &str,
            cancel: &CancellationToken,
        ) -> Result<zerorepo::sandbox::TestRun, zerorepo::sandbox::SandboxError> {
            self.0.run_tests(repo, file, cancel).await
        }
        async fn check_install(
            &self,
            repo: &Path,
            cancel: &CancellationToken,
        ) -> Result<zerorepo::sandbox::TestRun, zerorepo::sandbox::SandboxError> {
            self.0.check_install(repo, cancel).await
        }
        async fn run_command(
            &self,
            _: &Path,
            _: &[String],
            _: &CancellationToken,
        ) -> Result<zerorepo::sandbox::TestRun, zerorepo::sandbox::SandboxError> {
            panic!("nothing may run without ruff")
        }
    }
    let cleanup = clean(
        dir.path(),
        &mut sources,
        &NoRuff(runner),
        &CancellationToken::new(),
        |_| -> Result<(), String> { panic!("nothing may be written") },
    )
    .await
    .unwrap();
    assert_eq!(cleanup.fixes(), 0);
    assert_eq!(
        cleanup.problem.as_deref(),
        Some(
            "the no-ruff sandbox has no ruff (scripts/setup.sh installs it), so unused imports stay"
        )
    );
    assert_eq!(read_tree(dir.path()), sources);
}
