//! `zerorepo code` through the binary, with scripted answers: a verified change written whole,
//! or the repository byte for byte as it was, with the audit trail saying why.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::support::{run, tree, zerorepo};

const CALC: &str = "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n";
const TESTS: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
const GOOD: &str = "```python\ndef add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n```";
const WRONG: &str = "```python\ndef add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n\n\ndef multiply(a, b):\n    return a + b\n```";
const NEW_TESTS: &str = "```python\nfrom calc import add, multiply\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_multiply():\n    assert multiply(2, 3) == 6\n```";

/// A small Python project: a package, its tests, a pyproject.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "calc/__init__.py", CALC);
    write(dir.path(), "tests/test_calc.py", TESTS);
    write(
        dir.path(),
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
    );
    dir
}

pub(super) fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub(super) fn plan(tasks: Value) -> Value {
    json!({"node": "plan", "role": "impl", "answer": tasks.to_string()})
}

fn two_tasks() -> Value {
    plan(json!([
        {"id": "1", "kind": "MODIFY_FILE", "path": "calc/__init__.py", "description": "Add multiply(a, b)."},
        {"id": "2", "kind": "MODIFY_FILE", "path": "tests/test_calc.py", "description": "Test multiply.", "depends_on": ["1"]}
    ]))
}

fn answer(node: &str, role: &str, attempt: u32, text: &str) -> Value {
    json!({"node": node, "role": role, "attempt": attempt, "answer": text})
}

/// The model's calls of the new `multiply`, after the begun first call: the request gives no
/// example of it, so a change is written only when a call of it ran.
fn probe() -> Value {
    answer("probe", "test", 0, "2, 3)\n```")
}

/// The model's test of a request with no example that asks for nothing new ("x"): it fails
/// on the code as it is, on an assertion, and passes once `multiply` exists.
fn reproduction() -> Value {
    answer(
        "reproduce",
        "test",
        0,
        "```python\nimport calc\n\n\ndef test_request_multiply():\n    assert hasattr(calc, \"multiply\")\n```",
    )
}

/// Writes the script next to the repository (not in it) and runs `zerorepo code` with it.
fn code(repo: &Path, script: &[Value], extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut cmd = zerorepo();
    cmd.args([
        "code",
        "--prompt",
        "Add multiply(a, b) with a test.",
        "--json",
        "--repo",
    ])
    .arg(repo)
    .arg("--llm")
    .arg(format!("scripted:{}", path.display()))
    .args(extra);
    let (status, stdout, stderr) = run(&mut cmd);
    let outcome = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (status, outcome, stderr)
}

fn history(repo: &Path) -> Vec<Value> {
    let (status, stdout, stderr) = run(zerorepo().args(["history", "--json"]).arg(repo));
    assert_eq!(status, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

fn actions(repo: &Path) -> Vec<String> {
    history(repo)
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_spec_that_adds_a_function_is_verified_and_committed() {
    let repo = project();
    let script = [
        two_tasks(),
        answer("1", "impl", 0, GOOD),
        probe(),
        answer("2", "impl", 0, NEW_TESTS),
    ];
    let (status, outcome, stderr) = code(repo.path(), &script, &["--yes"]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed");
    assert_eq!(outcome["checks"][0]["command"], "python -m pytest -q");
    assert_eq!(outcome["checks"][0]["passed"], true);
    let calc = std::fs::read_to_string(repo.path().join("calc/__init__.py")).unwrap();
    assert!(
        calc.contains("def multiply(a, b):\n    return a * b"),
        "{calc}"
    );
    let steps = actions(repo.path());
    assert_eq!(
        steps.first().map(String::as_str),
        Some("diagnose"),
        "{steps:?}"
    );
    assert!(
        steps.ends_with(&["commit".to_string(), "commit".to_string()]),
        "{steps:?}"
    );
}

#[test]
fn a_first_answer_that_fails_verification_is_corrected_in_round_two() {
    let repo = project();
    let script = [
        two_tasks(),
        answer("1", "impl", 0, WRONG),
        probe(),
        answer("2", "impl", 0, NEW_TESTS),
        answer("correct", "fix", 0, GOOD),
    ];
    let (status, outcome, stderr) = code(repo.path(), &script, &["--yes"]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["corrections"], 1);
    let calc = std::fs::read_to_string(repo.path().join("calc/__init__.py")).unwrap();
    assert!(
        calc.contains("return a * b"),
        "the code was corrected, not the test: {calc}"
    );
    let corrections: Vec<Value> = history(repo.path())
        .into_iter()
        .filter(|e| e["action"] == "correct")
        .collect();
    assert_eq!(corrections.len(), 1);
    assert!(
        corrections[0]["detail"]
            .as_str()
            .unwrap()
            .contains("calc/__init__.py")
    );
}

#[test]
fn a_change_that_never_passes_leaves_the_repository_as_it_was() {
    let repo = project();
    // The repository already has a failing test: the diagnostic sees it first.
    write(
        repo.path(),
        "tests/test_broken.py",
        "def test_broken():\n    assert 1 == 2\n",
    );
    let before = tree(repo.path());
    let script = [
        two_tasks(),
        answer("1", "impl", 0, WRONG),
        probe(),
        answer("2", "impl", 0, NEW_TESTS),
        answer("correct", "fix", 0, WRONG),
    ];
    let (status, outcome, stderr) =
        code(repo.path(), &script, &["--yes", "--max-corrections", "2"]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back");
    assert_eq!(outcome["corrections"], 2);
    assert_eq!(
        tree(repo.path()),
        before,
        "not one byte of the repository changed"
    );
    let trail = history(repo.path());
    assert_eq!(trail[0]["action"], "diagnose");
    assert_eq!(trail[0]["outcome"], "failed");
    assert!(
        trail[0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("test_broken")
    );
    assert_eq!(trail.last().unwrap()["action"], "rollback");
}

#[test]
fn high_risk_tasks_are_refused_under_yes_and_paths_outside_always() {
    for (task, allow, want) in [
        (
            json!({"kind": "SHELL_COMMAND", "command": "curl http://example.invalid/x", "description": "fetch"}),
            false,
            "HIGH",
        ),
        (
            json!({"kind": "DELETE_FILE", "path": "calc", "description": "drop the package"}),
            false,
            "HIGH",
        ),
        (
            json!({"kind": "CREATE_FILE", "path": "../escape.py", "description": "escape"}),
            true,
            "REFUSED",
        ),
    ] {
        let repo = project();
        let before = tree(repo.path());
        let mut extra = vec!["--yes"];
        if allow {
            extra.push("--allow-high-risk");
        }
        let (status, outcome, stderr) = code(repo.path(), &[plan(json!([task]))], &extra);
        assert_eq!(status, 1, "{stderr}\n{outcome:#}");
        let reason = outcome["reason"].as_str().unwrap();
        assert!(reason.contains(want), "{reason}");
        assert_eq!(tree(repo.path()), before);
        assert!(!repo.path().parent().unwrap().join("escape.py").exists());
        let risk = history(repo.path())
            .into_iter()
            .find(|e| e["action"] == "risk")
            .unwrap();
        assert_eq!(risk["outcome"], "refused");
    }
}

#[test]
fn a_plan_file_is_written_edited_and_run() {
    let repo = project();
    let dir = tempfile::tempdir().unwrap();
    let plan_file = dir.path().join("plan.json");
    let before = tree(repo.path());
    let (status, outcome, stderr) = code(
        repo.path(),
        &[two_tasks()],
        &["--plan-out", plan_file.to_str().unwrap()],
    );
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "planned");
    assert_eq!(
        tree(repo.path()),
        before,
        "planning writes nothing in the repository"
    );
    // The user deletes the test task and sends the code to another file.
    let mut edited: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    let tasks = edited["tasks"].as_array_mut().unwrap();
    tasks.retain(|t| t["id"] != "2");
    tasks[0]["path"] = json!("calc/ops.py");
    std::fs::write(&plan_file, edited.to_string()).unwrap();
    let ops = "```python\ndef multiply(a, b):\n    return a * b\n```";
    let (status, outcome, stderr) = code(
        repo.path(),
        &[answer("1", "impl", 0, ops), probe()],
        &["--yes", "--plan", plan_file.to_str().unwrap()],
    );
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert!(repo.path().join("calc/ops.py").exists());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("tests/test_calc.py")).unwrap(),
        TESTS,
        "the deleted task did not run"
    );
    let kinds: Vec<Value> = outcome["plan"]["plan"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        vec![json!("CREATE_FILE")],
        "a new path is a creation"
    );
}

#[test]
fn a_dry_run_shows_the_diff_and_writes_nothing() {
    let repo = project();
    let before = tree(repo.path());
    let script = [
        two_tasks(),
        answer("1", "impl", 0, GOOD),
        probe(),
        answer("2", "impl", 0, NEW_TESTS),
    ];
    let (status, outcome, stderr) = code(repo.path(), &script, &["--dry-run"]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "dry_run");
    let diff = outcome["files"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("+def multiply(a, b):"), "{diff}");
    assert_eq!(tree(repo.path()), before);
    assert!(
        !repo.path().join(".zerorepo").exists(),
        "not even the audit trail"
    );
}

#[test]
fn approval_without_a_terminal_needs_yes() {
    let repo = project();
    let (status, _, stderr) = code(repo.path(), &[two_tasks()], &[]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(!repo.path().join(".zerorepo").exists());
}

#[test]
fn ctrl_c_while_the_diagnostic_runs_leaves_the_repository_as_it_was() {
    let repo = project();
    write(
        repo.path(),
        "tests/test_slow.py",
        "import time\n\n\ndef test_slow():\n    time.sleep(20)\n",
    );
    let before = tree(repo.path());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, two_tasks().to_string()).unwrap();
    let mut child = zerorepo()
        .args(["code", "--prompt", "x", "--yes", "--repo"])
        .arg(repo.path())
        .arg("--llm")
        .arg(format!("scripted:{}", script.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(tree(repo.path()), before);
    assert_eq!(
        actions(repo.path()).last().map(String::as_str),
        Some("rollback")
    );
}

#[test]
fn self_heal_makes_the_diagnostic_pass_and_stops_when_it_already_does() {
    let repo = project();
    write(
        repo.path(),
        "calc/__init__.py",
        &CALC.replace("a + b", "a - b"),
    );
    let fix = "```python\ndef add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n```";
    let script = [
        plan(
            json!([{"kind": "MODIFY_FILE", "path": "calc/__init__.py", "description": "Fix add."}]),
        ),
        answer("1", "impl", 0, fix),
    ];
    let mut cmd = zerorepo();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let heal = |cmd: &mut Command| {
        cmd.args(["code", "--mode", "self-heal", "--yes", "--json", "--repo"])
            .arg(repo.path())
            .arg("--llm")
            .arg(format!("scripted:{}", path.display()));
        let (status, stdout, stderr) = run(cmd);
        (
            status,
            serde_json::from_str::<Value>(&stdout).unwrap_or(Value::Null),
            stderr,
        )
    };
    let (status, outcome, stderr) = heal(&mut cmd);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["diagnosis"]["passed"], false);
    assert_eq!(outcome["status"], "committed");
    let (status, outcome, _) = heal(&mut zerorepo());
    assert_eq!(status, 0);
    assert_eq!(outcome["status"], "nothing_to_do");
}

#[test]
fn generate_mode_creates_a_project_in_an_empty_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("new");
    let script = [
        plan(json!([
            {"kind": "CREATE_FILE", "path": "greet/__init__.py", "description": "hello(name)"},
            {"kind": "CREATE_FILE", "path": "tests/test_greet.py", "description": "test hello", "depends_on": ["1"]}
        ])),
        answer(
            "1",
            "impl",
            0,
            "```python\ndef hello(name):\n    return f\"hello {name}\"\n```",
        ),
        answer(
            "2",
            "impl",
            0,
            "```python\nfrom greet import hello\n\n\ndef test_hello():\n    assert hello(\"x\") == \"hello x\"\n```",
        ),
        answer("probe", "test", 0, "\"x\")\n```"),
    ];
    let (status, outcome, stderr) = code(&repo, &script, &["--yes", "--mode", "generate"]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert!(repo.join("greet/__init__.py").is_file());
    assert_eq!(outcome["checks"][0]["passed"], true);
    let (status, _, stderr) = code(&repo, &script, &["--yes", "--mode", "generate"]);
    assert_eq!(status, 2, "a directory with files is refused: {stderr}");
}

#[test]
fn a_file_edited_during_the_run_is_never_overwritten() {
    let repo = project();
    // Each run of the tests takes 4 s: the diagnostic, then the verification.
    write(
        repo.path(),
        "tests/test_slow.py",
        "import time\n\n\ndef test_slow():\n    time.sleep(4)\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.jsonl");
    let lines = [
        two_tasks(),
        answer("1", "impl", 0, GOOD),
        probe(),
        reproduction(),
        answer("2", "impl", 0, NEW_TESTS),
    ];
    let lines: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&script, lines.join("\n")).unwrap();
    let child = zerorepo()
        .args(["code", "--prompt", "x", "--yes", "--json", "--repo"])
        .arg(repo.path())
        .arg("--llm")
        .arg(format!("scripted:{}", script.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // During the verification, somebody edits the file the change rewrites.
    std::thread::sleep(std::time::Duration::from_secs(6));
    let theirs = format!("{CALC}\n\n# edited by hand\n");
    write(repo.path(), "calc/__init__.py", &theirs);
    let out = child.wait_with_output().unwrap();
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{outcome:#}");
    assert!(
        outcome["reason"]
            .as_str()
            .unwrap()
            .contains("changed on disk"),
        "{outcome:#}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("calc/__init__.py")).unwrap(),
        theirs
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("tests/test_calc.py")).unwrap(),
        TESTS
    );
}

#[test]
fn on_a_terminal_the_plan_is_edited_and_approved_in_a_dialogue() {
    // `script` gives zerorepo a terminal; the dialogue's answers come through it.
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs util-linux's script"
        );
        eprintln!("SKIPPED: no `script` (util-linux) to give zerorepo a terminal");
        return;
    }
    let repo = project();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.jsonl");
    let lines = [
        two_tasks(),
        answer("1", "impl", 0, GOOD),
        reproduction(),
        probe(),
    ];
    let lines: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&script, lines.join("\n")).unwrap();
    let command = format!(
        "{} code --prompt x --repo {} --llm scripted:{}",
        env!("CARGO_BIN_EXE_zerorepo"),
        repo.path().display(),
        script.display()
    );
    let mut terminal = Command::new("script");
    terminal
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .envs(
            zerorepo()
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut running = terminal.spawn().unwrap();
    {
        use std::io::Write;
        let input = running.stdin.as_mut().unwrap();
        // Delete the test task, then approve what is left.
        input.write_all(b"d 2\na\n").unwrap();
    }
    let out = running.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("[a]pprove all"), "{shown}");
    assert!(
        shown.contains("Plan (1 task)"),
        "the plan was shown again after the edit: {shown}"
    );
    let calc = std::fs::read_to_string(repo.path().join("calc/__init__.py")).unwrap();
    assert!(calc.contains("def multiply"));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("tests/test_calc.py")).unwrap(),
        TESTS
    );
}

#[test]
fn git_commit_commits_the_written_files_and_an_unusable_answer_rolls_back() {
    let repo = project();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(repo.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "start"]);
    // Without a terminal a task whose answer has no code rolls the run back.
    let before = tree(repo.path());
    let prose = [
        two_tasks(),
        answer("1", "impl", 0, "I would add a multiply function."),
    ];
    let (status, outcome, _) = code(repo.path(), &prose, &["--yes", "--git-commit"]);
    assert_eq!(status, 1, "{outcome:#}");
    assert!(
        outcome["reason"]
            .as_str()
            .unwrap()
            .contains("task 1 failed"),
        "{outcome:#}"
    );
    assert_eq!(tree(repo.path()), before);
    let script = [
        two_tasks(),
        answer("1", "impl", 0, GOOD),
        probe(),
        answer("2", "impl", 0, NEW_TESTS),
    ];
    let (status, outcome, stderr) = code(repo.path(), &script, &["--yes", "--git-commit"]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    let head = git(&["log", "-1", "--format=%H %s"]);
    assert!(
        head.starts_with(outcome["git_commit"].as_str().unwrap()),
        "{head}"
    );
    assert!(head.contains("zerorepo code: Add multiply"), "{head}");
    let changed = git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(changed.trim(), "calc/__init__.py\ntests/test_calc.py");
    // A lock another git command holds (or a killed one left) would fail the commit after
    // the files were written: refused before anything runs, with what to do.
    std::fs::write(repo.path().join(".git/index.lock"), "").unwrap();
    let before = tree(repo.path());
    let (status, _, stderr) = code(repo.path(), &script, &["--yes", "--git-commit"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("index.lock") && stderr.contains("remove it"),
        "{stderr}"
    );
    assert_eq!(tree(repo.path()), before);
}

#[test]
fn a_model_that_fails_mid_change_leaves_the_repository_and_says_so_in_the_trail() {
    let repo = project();
    let before = tree(repo.path());
    // The script has the plan but no answer for task 1: the provider fails permanently.
    let (status, _, stderr) = code(repo.path(), &[two_tasks()], &["--yes"]);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("the change stopped"), "{stderr}");
    assert_eq!(tree(repo.path()), before);
    let trail = history(repo.path());
    let last = trail.last().unwrap();
    assert_eq!(last["action"], "rollback");
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .contains("no `impl` answer"),
        "{last:#}"
    );
}
