//! The assembled repository (issue 6): it installs, its tests run, its report reads like the
//! seed's template with the run's numbers, its history has one commit per subgraph, rollback
//! works, and kill -9 at 20 random points never leaves a half-written file.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::generation::{
    GENERATED_ML_LIB_TESTS, checkpoint, edited_script, generate, journal, script_of,
    script_with_a_failed_node, spawn_generate, status_of,
};
use super::support::{fixture, pytest, require_python, run, tree, zerorepo};

const SUBGRAPHS: [&str; 5] = [
    "data_loading",
    "preprocessing",
    "model",
    "evaluation",
    "visualization",
];

fn git(out: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = run(std::process::Command::new("git")
        .arg("-C")
        .arg(out)
        .args(args));
    assert_eq!(code, 0, "git {args:?}: {stderr}");
    stdout
}

fn read(out: &Path, rel: &str) -> String {
    std::fs::read_to_string(out.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn ml_lib_is_assembled_installable_reported_and_committed_per_subgraph() {
    let Some(python) = require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ml_lib");
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("pip install -e . ok; pytest tests/ 130/130 passed"),
        "{stdout}"
    );
    // Packages export what passed; the package imports and its tests pass.
    let data_init = read(&out, "src/ml_lib/data/__init__.py");
    assert!(
        data_init.contains("from .csv_reader import parse_csv_text,")
            && data_init.contains("\"train_test_split\","),
        "{data_init}"
    );
    let (ok, output) = pytest(&python, &out, &out.join("tests"));
    assert!(ok && output.contains(GENERATED_ML_LIB_TESTS), "{output}");
    // Metadata from the RPG.
    let pyproject = read(&out, "pyproject.toml");
    assert!(pyproject.contains("name = \"ml_lib\"") && pyproject.contains("where = [\"src\"]"));
    assert_eq!(
        read(&out, "requirements.txt"),
        "# Third-party packages imported by the generated code.\n",
        "ml_lib uses the standard library only"
    );
    let readme = read(&out, "README.md");
    for expected in [
        "# ml_lib",
        "pip install -e .",
        ">>> from ml_lib.",
        "### evaluation",
        "pytest tests/",
    ] {
        assert!(readme.contains(expected), "README lacks {expected}");
    }
    let exported: serde_json::Value = serde_json::from_str(&read(&out, "docs/rpg.json")).unwrap();
    assert!(
        exported["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["status"] == "passed")
    );
    assert_eq!(exported["metadata"]["generation"]["model"], "scripted");
    // The report follows the seed's template with this run's numbers.
    let report = read(&out, "docs/generation_report.md");
    for expected in [
        "# Code Generation Report",
        "- **Total Nodes Planned**: 71",
        "- **Nodes Passed**: 71 (100%)",
        "| data_loading | 15 | 15 | 0 | 0 | 0 | 100% |",
        "130 collected, 130 passing (100%)",
        "- ✅ `pip install -e .` succeeded in a fresh virtual environment",
        "- ✅ All 41 Python files syntactically valid",
        "- ✅ `ruff check --select E9,F`: no findings",
        "  - data_loading: 10 of 10 cases passed (threshold met), `tests/integration/test_data_loading_flow.py`",
        "feat: complete model (nodes node_029-node_042) (phase4-subgraph-model)",
        "**Proceed to Phase 5**",
    ] {
        assert!(
            report.contains(expected),
            "report lacks `{expected}`:\n{report}"
        );
    }
    // Imports are grouped standard library / third party / local, in the staging copy too
    // (else the next run would publish the ungrouped text again).
    let neighbors = read(&out, "src/ml_lib/model/neighbors.py");
    assert!(
        neighbors.contains("from typing import Any\n\nfrom ml_lib.preprocessing.scaling import"),
        "{neighbors}"
    );
    assert!(read(&out, "tests/test_batching.py").starts_with("from ml_lib."));
    assert_eq!(
        read(&out, ".zerorepo/work/src/ml_lib/model/neighbors.py"),
        neighbors
    );
    let junit = read(&out, "test_results.xml");
    assert_eq!(junit.matches("<testcase ").count(), 130);
    // One commit per subgraph, tagged, then the assembly commit; nothing left uncommitted.
    let log = git(&out, &["log", "--format=%s", "--reverse"]);
    let subjects: Vec<&str> = log.lines().collect();
    assert_eq!(subjects.len(), 6, "{log}");
    assert!(
        subjects[..5]
            .iter()
            .all(|s| s.starts_with("feat: complete "))
    );
    assert_eq!(
        subjects[5],
        "chore: assemble repository (metadata, docs, reports)"
    );
    let tags = git(&out, &["tag"]);
    for subgraph in SUBGRAPHS {
        assert!(
            tags.contains(&format!("phase4-subgraph-{subgraph}")),
            "{tags}"
        );
    }
    assert_eq!(git(&out, &["status", "--porcelain"]), "");
    // The model subgraph's commit holds only the model's files.
    let files = git(
        &out,
        &["show", "--name-only", "--format=", "phase4-subgraph-model"],
    );
    let model_tests = [
        "tests/test_linear.py",
        "tests/test_naive_bayes.py",
        "tests/test_neighbors.py",
    ];
    assert!(
        files
            .lines()
            .all(|f| f.starts_with("src/ml_lib/model/") || model_tests.contains(&f)),
        "{files}"
    );
    assert_eq!(files.lines().count(), 7, "{files}");
    // Assembling again (a rerun with everything passed) changes nothing.
    let before = tree(&out);
    let (code, _, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(tree(&out) == before, "a second run changed the repository");
    assert_eq!(git(&out, &["log", "--format=%s"]).lines().count(), 6);
}

/// The last hash the journal gives `path` (its `flush` lines, in order).
fn journalled_hash(out: &Path, path: &str) -> Option<String> {
    read(out, ".zerorepo/journal.jsonl")
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "flush")
        .find_map(|v| v["files"][path].as_str().map(str::to_string))
}

#[test]
fn unused_imports_are_cleaned_in_the_sandbox_journalled_and_stay_cleaned() {
    if require_python().is_none() {
        return;
    }
    if zerorepo::programs::find("ruff").is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must install ruff");
        eprintln!("SKIPPED: no ruff on this machine (scripts/setup.sh installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chain");
    // The model brings imports it never uses, in the module and in its tests.
    let script = edited_script(dir.path(), "chain", |v| {
        let unused = match (v["node"].as_str(), v["role"].as_str()) {
            (Some("node_a"), Some("impl")) => "import os\nimport json\n\n\n",
            (Some("node_a"), Some("test")) => "import pytest\n",
            _ => return,
        };
        let answer = v["answer"].as_str().unwrap().replacen(
            "```python\n",
            &format!("```python\n{unused}"),
            1,
        );
        v["answer"] = answer.into();
    });
    // `--votes`: only then are the model's tests asked beside a node's examples.
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("ruff: 0 finding(s) (3 fixed in the sandbox)"),
        "{stdout}"
    );
    let steps = read(&out, "src/chain/steps.py");
    let tests = read(&out, "tests/test_steps.py");
    assert!(
        !steps.contains("import os") && !steps.contains("import json"),
        "{steps}"
    );
    assert!(!tests.contains("import pytest"), "{tests}");
    // Journalled before written, and the staging copy follows, so a resume takes the
    // cleaned files as the engine's own and the next flush publishes nothing older.
    for (path, text) in [
        ("src/chain/steps.py", &steps),
        ("tests/test_steps.py", &tests),
    ] {
        assert_eq!(
            journalled_hash(&out, path),
            Some(zerorepo::fsutil::content_hash(text.as_bytes())),
            "{path}"
        );
        assert_eq!(
            &read(&out, &format!(".zerorepo/work/{path}")),
            text,
            "{path}"
        );
    }
    let report = read(&out, "docs/generation_report.md");
    for expected in [
        "- ✅ `ruff check --select E9,F`: no findings",
        "- 🧹 before that, ruff's safe fixes (found in the sandbox) removed 3 finding(s) in 2 file(s): F401 ×3",
    ] {
        assert!(
            report.contains(expected),
            "report lacks `{expected}`:\n{report}"
        );
    }
    assert_eq!(git(&out, &["status", "--porcelain"]), "");
    // A rerun finds nothing to clean, changes nothing and commits nothing.
    let before = tree(&out);
    let commits = git(&out, &["log", "--format=%s"]);
    let (code, stdout, stderr) = generate("chain", &script, &out, &[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(tree(&out) == before, "a second run changed the repository");
    assert_eq!(read(&out, "docs/generation_report.md"), report);
    assert_eq!(
        git(&out, &["log", "--format=%s"]),
        commits,
        "{}",
        git(&out, &["show", "--stat", "HEAD"])
    );
}

#[test]
fn failures_are_reported_and_rollback_returns_to_the_last_passing_subgraph() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broken = script_with_a_failed_node(dir.path());
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("ml_lib", &broken, &out, &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let report = read(&out, "docs/generation_report.md");
    for expected in [
        "- **Nodes Failed**: 1 (1%)",
        "### node_046: confusion_matrix",
        "- **Debug Iterations**: ",
        "node_068: confusion_report (skipped: dependency node_046 did not pass; its greedy answer is written: it imports and breaks no earlier test)",
        "**Manual Fix Required**: node_046 need human review",
        "**Re-run Generation**",
    ] {
        assert!(
            report.contains(expected),
            "report lacks `{expected}`:\n{report}"
        );
    }
    // visualization has a skipped node, so the newest subgraph that passed whole is `model`.
    let (code, stdout, stderr) = run(zerorepo().arg("rollback").arg(&out).arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    let done: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(done["subgraph"], "model");
    let reset: Vec<&str> = done["reset_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        reset.contains(&"node_045") && reset.contains(&"node_070"),
        "{reset:?}"
    );
    assert_eq!(status_of(&out, "node_046"), "pending");
    assert_eq!(status_of(&out, "node_042"), "passed");
    assert!(
        !out.join("src/ml_lib/evaluation/classification_metrics.py")
            .exists()
    );
    assert_eq!(
        git(&out, &["log", "-1", "--format=%s"]).trim(),
        "feat: complete model (nodes node_029-node_042)"
    );
    // With a working model the rolled-back nodes are generated again and everything passes.
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("71 of 71 nodes passed"), "{stdout}");
    // A directory without history is refused clearly.
    let (code, _, stderr) = run(zerorepo().arg("rollback").arg(dir.path()));
    assert_eq!(code, 2);
    assert!(stderr.contains("not a git repository"), "{stderr}");
}

#[test]
fn a_second_run_is_refused_while_one_writes_and_git_locks_a_killed_run_left_are_cleared() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let broken = script_with_a_failed_node(dir.path());
    assert_eq!(generate("ml_lib", &broken, &out, &[]).0, 1);
    // What `kill -9` inside a commit leaves: git's index lock.
    std::fs::write(out.join(".git/index.lock"), "").unwrap();
    let records = journal(&out).len();
    let lock = std::fs::File::open(out.join(".zerorepo/lock")).unwrap();
    let held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| errno)
        .unwrap();
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("another zerorepo run"), "{stderr}");
    let (code, _, stderr) = run(zerorepo().arg("rollback").arg(&out));
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        journal(&out).len(),
        records,
        "a refused run wrote to the journal"
    );
    drop(held);
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("removed 1 git lock file(s) left by a killed run"),
        "{stdout}\n{stderr}"
    );
    assert!(!out.join(".git/index.lock").exists());
}

#[test]
fn a_file_edited_by_hand_stops_the_next_run_and_nothing_is_written() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    assert_eq!(
        generate("subgraphs20", &script_of("subgraphs20"), &out, &[]).0,
        0
    );
    let edited = out.join("src/textops/case.py");
    let mut text = read(&out, "src/textops/case.py");
    text.push_str("# my change\n");
    std::fs::write(&edited, &text).unwrap();
    let before = tree(&out);
    let modified = |rel: &str| {
        std::fs::metadata(out.join(rel))
            .unwrap()
            .modified()
            .unwrap()
    };
    let checkpoint_mtime = modified("docs/generation_checkpoint.json");
    let (code, stdout, stderr) = generate(
        "subgraphs20",
        &script_of("subgraphs20"),
        &out,
        &["--start-from-node", "node_001"],
    );
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("src/textops/case.py") && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(tree(&out) == before, "the refused run changed files");
    assert_eq!(
        modified("docs/generation_checkpoint.json"),
        checkpoint_mtime,
        "the refused run rewrote the checkpoint"
    );
    // Put back, the run goes on.
    git(&out, &["checkout", "--", "src/textops/case.py"]);
    assert_eq!(
        generate("subgraphs20", &script_of("subgraphs20"), &out, &[]).0,
        0
    );
    // Assembly's own files are rebuilt from the plan, so editing one is no conflict.
    let readme = read(&out, "README.md");
    std::fs::write(out.join("README.md"), "my notes\n").unwrap();
    let (code, _, stderr) = generate("subgraphs20", &script_of("subgraphs20"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("README.md changed by hand"), "{stderr}");
    assert_eq!(read(&out, "README.md"), readme);
}

#[test]
fn the_flush_size_decides_how_often_the_output_tree_is_written() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let flushes = |out: &Path| {
        std::fs::read_to_string(out.join(".zerorepo/journal.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"kind\":\"flush\""))
            .count()
    };
    let every_node = dir.path().join("one");
    let (code, _, stderr) = generate(
        "chain",
        &script_of("chain"),
        &every_node,
        &["--flush-every", "1"],
    );
    assert_eq!(code, 0, "{stderr}");
    let batched = dir.path().join("five");
    assert_eq!(generate("chain", &script_of("chain"), &batched, &[]).0, 0);
    // chain is one subgraph of four nodes sharing a file: with the default of 5 the staged
    // file is published once, at the subgraph's end; with 1 after each passed node.
    assert!(
        flushes(&every_node) >= 4 && flushes(&batched) < flushes(&every_node),
        "{} vs {}",
        flushes(&every_node),
        flushes(&batched)
    );
    assert!(
        tree(&every_node) == tree(&batched),
        "same repository either way"
    );
    let (code, _, stderr) = generate(
        "chain",
        &script_of("chain"),
        &batched,
        &["--flush-every", "0"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--flush-every"), "{stderr}");
}

/// A tmpfs of a few MiB mounted over a fresh directory, unmounted on drop. `None` when this
/// process may not mount (not root, or no tmpfs): a CI run must be able to.
struct SmallDisk {
    _dir: tempfile::TempDir,
    mount: std::path::PathBuf,
}

impl SmallDisk {
    fn mount(mebibytes: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).unwrap();
        let (code, _, stderr) = run(std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mebibytes}m"), "tmpfs"])
            .arg(&mount));
        if code != 0 {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must be able to mount a tmpfs for the disk-full test: {stderr}"
            );
            eprintln!("SKIPPED disk-full test: cannot mount a tmpfs here (needs root): {stderr}");
            return None;
        }
        Some(SmallDisk { _dir: dir, mount })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.mount)
            .status();
    }
}

/// Bytes `df` reports for `field` (`used`, `avail`) on the filesystem of `dir`.
fn df(dir: &Path, field: &str) -> u64 {
    let (code, stdout, stderr) = run(std::process::Command::new("df")
        .arg(format!("--output={field}"))
        .arg("-B1")
        .arg(dir));
    assert_eq!(code, 0, "{stderr}");
    stdout.lines().nth(1).unwrap().trim().parse().unwrap()
}

/// Fills the disk of `dir` with a file until `leave` bytes stay free.
fn fill_disk(file: &Path, leave: u64) {
    use std::io::Write;
    let dir = file.parent().unwrap();
    let mut left = df(dir, "avail").saturating_sub(leave);
    let mut filler = std::fs::File::create(file).unwrap();
    let chunk = vec![0u8; 64 << 10];
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        filler.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    filler.sync_all().unwrap();
}

/// The disk fills up at several points of a run (git's initialisation, without sample hooks,
/// takes about an eighth of the space a whole chain run needs, and a node's own write comes
/// soon after, so the points are densest there): each time the run stops,
/// or fails the node it was writing, with the reason; no file is torn or left half-written;
/// and once space is freed a resume gives the same repository as a run that never ran out.
#[test]
fn a_full_disk_at_any_point_fails_cleanly_and_a_resume_completes() {
    let Some(python) = require_python() else {
        return;
    };
    let Some(disk) = SmallDisk::mount(32) else {
        return;
    };
    let script = script_of("chain");
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    assert_eq!(generate("chain", &script, &reference, &[]).0, 0);
    let probe = disk.mount.join("probe");
    let before = df(&disk.mount, "used");
    assert_eq!(generate("chain", &script, &probe, &[]).0, 0);
    let needed = df(&disk.mount, "used") - before;
    std::fs::remove_dir_all(&probe).unwrap();
    let filler = disk.mount.join("filler");
    let mut node_failed = false;
    for percent in [12, 16, 20, 22, 24, 26, 28, 36, 55, 70] {
        let out = disk.mount.join(format!("run{percent}"));
        fill_disk(&filler, needed * percent / 100);
        let (code, stdout, stderr) = generate("chain", &script, &out, &[]);
        let checkpoint_text =
            std::fs::read_to_string(out.join(".zerorepo/journal.jsonl")).unwrap_or_default();
        let said = format!("{stdout}{stderr}{checkpoint_text}");
        eprintln!(
            "{percent}% of {needed} bytes free: exit {code}, {}",
            said.lines()
                .find(|l| l.contains("No space left"))
                .unwrap_or("no error")
        );
        assert_ne!(code, 0, "{percent}%: the run fitted in too little space?");
        assert!(
            said.contains("No space left on device"),
            "{percent}%: the reason is not given:\n{said}"
        );
        node_failed |= checkpoint_text.contains("\"write failed: ");
        if out.exists() {
            let mut stack = vec![out.clone()];
            while let Some(at) = stack.pop() {
                for entry in std::fs::read_dir(&at).unwrap().map(Result::unwrap) {
                    let path = entry.path();
                    let name = path.to_string_lossy().into_owned();
                    assert!(
                        !name.contains("zerorepo-tmp"),
                        "{percent}%: {name} left behind"
                    );
                    if path.is_dir() && !name.ends_with("/.git") {
                        stack.push(path);
                    }
                }
            }
            assert_no_half_written_file(&out, &python);
        }
        std::fs::remove_file(&filler).unwrap();
        let (code, stdout, stderr) = generate("chain", &script, &out, &[]);
        assert_eq!(code, 0, "{percent}%: resume failed: {stdout}\n{stderr}");
        assert!(
            tree(&out) == tree(&reference),
            "{percent}%: the resumed repository differs from an uninterrupted run"
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
    assert!(node_failed, "no point of the sweep hit a node's own write");
}

/// A small deterministic generator, seeded from the clock and printed, so a failing sequence
/// of kill points can be replayed with `ZEROREPO_KILL_SEED`.
pub(super) struct Lcg(u64);

impl Lcg {
    /// Random kill points, seeded by `ZEROREPO_KILL_SEED` or the clock; the seed is printed
    /// so a failing run can be repeated.
    pub(super) fn kill_points() -> (u64, Lcg) {
        let seed = std::env::var("ZEROREPO_KILL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("kill points from ZEROREPO_KILL_SEED={seed}");
        (seed, Lcg(seed))
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Every Python file compiles and every JSON file parses: a torn write would break one.
fn assert_no_half_written_file(out: &Path, python: &str) {
    let files = tree(out);
    let py: Vec<&String> = files.keys().filter(|p| p.ends_with(".py")).collect();
    let (code, stdout, stderr) = run(std::process::Command::new(python)
        .arg("-c")
        .arg("import sys\nfor p in sys.argv[1:]:\n    compile(open(p).read(), p, 'exec')")
        .args(&py)
        .current_dir(out));
    assert_eq!(
        code, 0,
        "a Python file is broken after kill -9: {stdout}{stderr}"
    );
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".json")) {
        assert!(
            serde_json::from_slice::<serde_json::Value>(bytes).is_ok(),
            "{path} is not valid JSON after kill -9"
        );
    }
    let compact = out.join("docs/generation_checkpoint.json");
    if compact.exists() {
        checkpoint(out);
    }
}

#[test]
fn kill_9_at_20_random_points_then_resume_gives_the_same_repository() {
    let Some(python) = require_python() else {
        return;
    };
    let (seed, mut random) = Lcg::kill_points();
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean");
    assert_eq!(generate("ml_lib", &script_of("ml_lib"), &clean, &[]).0, 0);
    let expected = tree(&clean);
    let crashed = dir.path().join("crashed");
    let mut finished_early = 0;
    for kill in 0..20 {
        // Up to 14 more journal records (71 nodes write 142), then up to 40 ms more, so kills
        // land between records, inside node work, and during assembly.
        let target = journal(&crashed).len() + 1 + random.below(14) as usize;
        let delay = Duration::from_millis(random.below(40));
        let mut child = spawn_generate("ml_lib", &crashed);
        let deadline = Instant::now() + Duration::from_secs(120);
        while journal(&crashed).len() < target
            && Instant::now() < deadline
            && child.try_wait().unwrap().is_none()
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_some() {
            finished_early += 1;
        } else {
            child.kill().unwrap(); // SIGKILL
        }
        child.wait().unwrap();
        assert_no_half_written_file(&crashed, &python);
        eprintln!("kill {kill}: {} journal records", journal(&crashed).len());
    }
    assert!(
        finished_early < 20,
        "no run was killed: every run finished first"
    );
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &crashed, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let got = tree(&crashed);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &expected {
        assert!(
            got[path] == *bytes,
            "{path} differs after kill -9 and resume (seed {seed})"
        );
    }
    let tags = git(&crashed, &["tag"]);
    for subgraph in SUBGRAPHS {
        assert!(
            tags.contains(&format!("phase4-subgraph-{subgraph}")),
            "{tags}"
        );
    }
    let (ok, output) = pytest(
        &python,
        &crashed,
        &fixture("ml_lib").join("reference/tests"),
    );
    assert!(ok, "{output}");
}

/// A rerun on a finished output reuses the validation while nothing it checks changed, and
/// validates again as soon as a file did (issue 15).
#[test]
fn the_validation_is_reused_until_a_file_changes() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("validation unchanged"), "{stderr}");
    let report = read(&out, "docs/generation_report.md");

    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("validation unchanged"), "{stderr}");
    assert_eq!(read(&out, "docs/generation_report.md"), report);

    // A test file of the user's: the validation runs again and sees it fail (a failing
    // validation makes the run exit 1).
    std::fs::write(
        out.join("tests/test_extra.py"),
        "def test_extra():\n    assert 1 == 2\n",
    )
    .unwrap();
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(!stderr.contains("validation unchanged"), "{stderr}");
    // The generated tests still pass; the one added fails.
    assert!(stdout.contains("pytest tests/ 130/131 passed"), "{stdout}");
    assert_ne!(read(&out, "docs/generation_report.md"), report);
    assert!(
        read(&out, "test_results.xml").contains("test_extra"),
        "the new test ran"
    );
}
