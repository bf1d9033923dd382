//! End-to-end generation with the scripted provider: the fixtures become repositories whose
//! own tests and hidden reference tests pass; checkpoints, resume, failure propagation, faults,
//! timeouts, kill -9 and SIGINT behave as the README says.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::{fixture, pytest, require_python, run, tree, zerorepo};

pub(super) fn generate(
    name: &str,
    script: &Path,
    out: &Path,
    extra: &[&str],
) -> (i32, String, String) {
    generate_plan(&fixture(name).join("rpg.json"), script, out, extra)
}

/// `zerorepo generate RPG` with the scripted provider: for plans edited from a fixture.
pub(super) fn generate_plan(
    rpg: &Path,
    script: &Path,
    out: &Path,
    extra: &[&str],
) -> (i32, String, String) {
    run(zerorepo()
        .arg("generate")
        .arg(rpg)
        .arg("--out")
        .arg(out)
        .arg("--llm")
        .arg(format!("scripted:{}", script.display()))
        .args(extra))
}

pub(super) fn script_of(name: &str) -> PathBuf {
    fixture(name).join("script.jsonl")
}

/// ml_lib's 154 reference tests, one examples-from-spec test per leaf with examples, and the
/// 80 cases of the five subgraphs' integration tests.
pub(super) const GENERATED_ML_LIB_TESTS: &str = "130 passed";

pub(super) fn checkpoint(out: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(out.join("docs/generation_checkpoint.json"))
        .expect("checkpoint exists");
    serde_json::from_str(&text).expect("checkpoint is JSON")
}

pub(super) fn status_of(out: &Path, id: &str) -> String {
    checkpoint(out)[id]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The generation order of a fixture, from `plan --json`.
fn order(name: &str) -> Vec<String> {
    let (code, stdout, stderr) = run(zerorepo()
        .arg("plan")
        .arg(fixture(name).join("rpg.json"))
        .arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap();
    let mut entries: Vec<(u64, String)> = plan["subgraphs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["nodes"].as_array().unwrap().iter())
        .map(|n| {
            (
                n["position"].as_u64().unwrap(),
                n["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    entries.sort();
    entries.into_iter().map(|(_, id)| id).collect()
}

/// Journal node records, in the order they were written: (node, status).
pub(super) fn journal(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join(".zerorepo/journal.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "node")
        .map(|v| {
            (
                v["node"].as_str().unwrap_or_default().to_string(),
                v["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Writes a copy of a fixture's script with some lines changed.
/// ml_lib's script with `confusion_matrix` (node_046) wrong in every answer: one failed
/// node, and its dependent skipped.
pub(super) fn script_with_a_failed_node(dir: &Path) -> PathBuf {
    edited_script(dir, "ml_lib", |v| {
        if v["node"] == "node_046" && v["role"] == "impl" {
            v["fault"] = "permanent".into();
        }
    })
}

pub(super) fn edited_script(dir: &Path, name: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(script_of(name)).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            edit(&mut v);
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    let path = dir.join("script.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn seed_example_orders_the_callee_first() {
    let (_dir, path) = super::support::rpg_file(
        r#"{"nodes": [
            {"id": "node_001", "name": "calculate_mean", "type": "function", "node_type": "leaf",
             "file_path": "src/stats/descriptive.py", "docstring": "Mean.", "dependencies": ["node_002"], "subgraph_id": "stats"},
            {"id": "node_002", "name": "calculate_sum", "type": "function", "node_type": "leaf",
             "file_path": "src/stats/descriptive.py", "docstring": "Sum.", "subgraph_id": "stats"}],
           "edges": [{"source": "node_001", "target": "node_002", "type": "function_call"}]}"#,
    );
    let (code, stdout, _) = run(zerorepo().arg("plan").arg(&path).arg("--json"));
    assert_eq!(code, 0);
    let plan: Value = serde_json::from_str(&stdout).unwrap();
    let ids: Vec<&str> = plan["subgraphs"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["node_002", "node_001"]);
}

#[test]
fn chain_and_diamond_orders() {
    assert_eq!(
        order("chain"),
        ["mod_chain_steps", "node_a", "node_b", "node_c"]
    );
    let diamond = order("diamond");
    let at = |id: &str| diamond.iter().position(|x| x == id).unwrap();
    assert!(at("node_a") < at("node_b") && at("node_a") < at("node_c"));
    assert!(at("node_b") < at("node_d") && at("node_c") < at("node_d"));
    let (code, stdout, _) = run(zerorepo()
        .arg("plan")
        .arg(fixture("diamond").join("rpg.json")));
    assert_eq!(code, 0);
    assert!(
        stdout
            .contains("node_d text_summary [function] src/diamond/text_stats.py  ← node_b, node_c"),
        "{stdout}"
    );
}

#[test]
fn ml_lib_generates_and_the_hidden_reference_tests_pass() {
    let Some(python) = require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ml_lib");
    let (code, stdout, stderr) = generate("ml_lib", &script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("71 of 71 nodes passed"), "{stdout}");
    let cp = checkpoint(&out);
    assert_eq!(cp.len(), 71);
    assert!(cp.values().all(|r| r["status"] == "passed"));
    let (ok, output) = pytest(&python, &out, &out.join("tests"));
    assert!(
        ok && output.contains(GENERATED_ML_LIB_TESTS),
        "generated tests: {output}"
    );
    let (ok, output) = pytest(&python, &out, &fixture("ml_lib").join("reference/tests"));
    assert!(
        ok && output.contains("154 passed"),
        "reference tests: {output}"
    );
    // Every leaf function is in its module.
    let linear = std::fs::read_to_string(out.join("src/ml_lib/model/linear.py")).unwrap();
    for name in [
        "solve_linear_system",
        "fit_linear_regression",
        "predict_linear_regression",
    ] {
        assert!(linear.contains(&format!("def {name}(")), "{name} missing");
    }
}

#[test]
fn checkpoint_is_written_after_every_node_in_order() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    // One job: the journal then follows the plan's order exactly.
    let (code, _, stderr) = generate(
        "subgraphs20",
        &script_of("subgraphs20"),
        &out,
        &["--jobs", "1"],
    );
    assert_eq!(code, 0, "{stderr}");
    let expected: Vec<(String, String)> = order("subgraphs20")
        .into_iter()
        .flat_map(|id| {
            [
                (id.clone(), "in_progress".to_string()),
                (id, "passed".to_string()),
            ]
        })
        .collect();
    assert_eq!(journal(&out), expected);
    let cp = checkpoint(&out);
    assert_eq!(cp.len(), 31);
    let leaf = &cp["node_010"];
    assert_eq!(leaf["retry_count"], 0);
    assert!(leaf["test_results"]["passed"].as_u64().unwrap() >= 2);
    assert!(leaf["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn resume_from_the_tenth_node_skips_the_first_nine() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    // One job, so that the rerun's journal follows the plan's order.
    assert_eq!(
        generate(
            "subgraphs20",
            &script_of("subgraphs20"),
            &out,
            &["--jobs", "1"]
        )
        .0,
        0
    );
    let first = journal(&out).len();
    let order = order("subgraphs20");
    let (code, stdout, stderr) = generate(
        "subgraphs20",
        &script_of("subgraphs20"),
        &out,
        &["--start-from-node", &order[9], "--jobs", "1"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(9 kept from the checkpoint)"), "{stdout}");
    let rerun: Vec<String> = journal(&out)[first..]
        .iter()
        .filter(|(_, s)| s == "passed")
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(rerun, order[9..].to_vec());
}

#[test]
fn plain_rerun_resumes_and_keeps_passed_nodes() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    assert_eq!(generate("chain", &script_of("chain"), &out, &[]).0, 0);
    let before = tree(&out);
    let (code, stdout, stderr) = generate("chain", &script_of("chain"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("4 of 4 nodes passed") && stdout.contains("(4 kept from the checkpoint)"),
        "{stdout}"
    );
    assert!(stderr.contains("resuming: 4 node record(s)"), "{stderr}");
    assert_eq!(tree(&out), before);
}

#[test]
fn failed_node_skips_its_dependents_and_is_reverted() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "subgraphs20", |v| {
        if v["node"] == "node_002" && v["role"] == "impl" {
            v["fault"] = "permanent".into();
        }
    });
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("subgraphs20", &script, &out, &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("1 failed, 2 skipped"), "{stdout}");
    assert_eq!(status_of(&out, "node_002"), "failed");
    assert_eq!(
        (status_of(&out, "node_003"), status_of(&out, "node_004")),
        ("skipped".into(), "skipped".into())
    );
    let cp = checkpoint(&out);
    // Skipped, as the seed says, yet written as `--one-shot` would write it: a failure
    // upstream never leaves less than asking once.
    assert_eq!(
        cp["node_003"]["failure_reason"],
        "skipped: dependency node_002 did not pass; its greedy answer is written: it imports and breaks no earlier test"
    );
    assert!(
        cp["node_002"]["failure_reason"]
            .as_str()
            .unwrap()
            .contains("injected permanent failure")
    );
    for id in order("subgraphs20")
        .iter()
        .filter(|id| !["node_002", "node_003", "node_004"].contains(&id.as_str()))
    {
        assert_eq!(status_of(&out, id), "passed", "{id}");
    }
    // node_002's tests were reverted; node_001 (same files) kept. No implementation of
    // node_002 ever ran, so its module holds a stub that says why, and still imports.
    let case = std::fs::read_to_string(out.join("src/textops/case.py")).unwrap();
    let tests = std::fs::read_to_string(out.join("tests/test_case.py")).unwrap();
    assert!(case.contains("def to_snake_case("), "{case}");
    let stub = case.split("def capitalize_words(").nth(1).expect("a stub");
    assert!(
        stub.contains("raise NotImplementedError(") && stub.contains("injected permanent failure"),
        "{case}"
    );
    assert!(!tests.contains("def test_capitalize_words"), "{tests}");
    assert!(!out.join("tests/test_titles.py").exists());
    // The skipped functions never ran, but each is its greedy answer (a draft), not a stub.
    let titles = std::fs::read_to_string(out.join("src/textops/titles.py")).unwrap();
    for name in ["make_title", "make_banner"] {
        let draft = titles
            .split(&format!("def {name}("))
            .nth(1)
            .unwrap_or_else(|| panic!("a draft of {name}: {titles}"));
        let body = draft.split("\ndef ").next().unwrap();
        assert!(!body.contains("NotImplementedError"), "{titles}");
    }
    // status tells the same story
    let (code, stdout, _) = run(zerorepo().arg("status").arg(&out));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("31 nodes: 28 passed (90%), 1 failed, 2 skipped"),
        "{stdout}"
    );
}

#[test]
fn a_draft_that_breaks_its_module_at_import_is_not_written() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // node_002 fails, so node_003 and node_004 are drafts; node_004's greedy answer takes a
    // default the module never defines, so the module would raise NameError at import.
    let script = edited_script(dir.path(), "subgraphs20", |v| {
        if v["node"] == "node_002" && v["role"] == "impl" {
            v["fault"] = "permanent".into();
        }
        if v["node"] == "node_004" && v["role"] == "impl" {
            let answer = v["answer"].as_str().unwrap().replace(
                "width: int) -> str:",
                "width: int = _DEFAULT_WIDTH) -> str:",
            );
            v["answer"] = answer.into();
        }
    });
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("subgraphs20", &script, &out, &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let cp = checkpoint(&out);
    let reason = cp["node_004"]["failure_reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "skipped: dependency node_003 did not pass; its greedy answer is not written: its \
             check failed: "
        ) && reason.contains("NameError"),
        "{reason}"
    );
    // make_title's draft held and is kept; make_banner is the stub that says why, and the
    // module imports.
    let titles = std::fs::read_to_string(out.join("src/textops/titles.py")).unwrap();
    assert!(!titles.contains("width: int = _DEFAULT_WIDTH"), "{titles}");
    let banner = titles.split("def make_banner(").nth(1).expect("a stub");
    assert!(banner.contains("raise NotImplementedError("), "{titles}");
    let title = titles.split("def make_title(").nth(1).expect("a draft");
    let title = title.split("\ndef ").next().unwrap();
    assert!(!title.contains("NotImplementedError"), "{titles}");
}

#[test]
fn wrong_first_answer_is_fixed_on_the_second_attempt() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_b" && v["role"] == "impl" {
            v["fault"] = "wrong_first".into();
        }
    });
    let out = dir.path().join("o");
    let (code, _, stderr) = generate("chain", &script, &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    let cp = checkpoint(&out);
    assert_eq!(cp["node_b"]["retry_count"], 1);
    assert_eq!(cp["node_a"]["retry_count"], 0);
    assert!(
        stderr.contains("node_b double_plus_one: passed (2 attempt(s)"),
        "{stderr}"
    );
}

#[test]
fn malformed_answers_exhaust_the_retries_and_leave_nothing_behind() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "impl" {
            v["fault"] = "malformed".into();
        }
    });
    let out = dir.path().join("o");
    // One candidate per round, so the budget of 3 retries is 3 more rounds.
    let args = ["--max-retries", "3", "--candidates", "1"];
    let (code, _, stderr) = generate("chain", &script, &out, &args);
    assert_eq!(code, 1, "{stderr}");
    let cp = checkpoint(&out);
    assert_eq!(cp["node_a"]["status"], "failed");
    assert_eq!(cp["node_a"]["retry_count"], 3);
    let reason = cp["node_a"]["failure_reason"].as_str().unwrap();
    assert!(
        reason.contains("unusable") && reason.contains("after 4 attempts"),
        "{reason}"
    );
    // No answer was code: the module keeps a stub, not nothing; its skipped dependents are
    // their greedy answers, never run (drafts).
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert_eq!(steps.matches("def ").count(), 3, "{steps}");
    assert_eq!(
        steps.matches("raise NotImplementedError(").count(),
        1,
        "{steps}"
    );
    assert!(steps.contains("unusable"), "{steps}");
    assert!(!out.join("tests/test_steps.py").exists());
    assert_eq!(
        (status_of(&out, "node_b"), status_of(&out, "node_c")),
        ("skipped".into(), "skipped".into())
    );
    let reason = cp["node_c"]["failure_reason"].as_str().unwrap();
    assert!(
        reason.ends_with("its greedy answer is written: it imports and breaks no earlier test"),
        "{reason}"
    );
}

#[test]
fn a_node_that_never_passes_keeps_its_best_candidate_importable() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_b" && v["role"] == "impl" {
            v["fault"] = "always_wrong".into();
        }
    });
    let out = dir.path().join("o");
    let (code, _, stderr) = generate("chain", &script, &out, &["--max-retries", "2"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(status_of(&out, "node_a"), "passed");
    assert_eq!(status_of(&out, "node_b"), "failed");
    assert_eq!(status_of(&out, "node_c"), "skipped");
    // Every candidate ran and failed its tests; the first one is kept (a tie goes to the
    // earlier), beside node_a's passing function, and the module still compiles.
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(steps.contains("def double("), "{steps}");
    assert!(
        steps.contains("def double_plus_one(") && steps.contains("scripted wrong answer"),
        "{steps}"
    );
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(
        !tests.contains("double_plus_one"),
        "its rejected tests are reverted: {tests}"
    );
    let python = require_python().unwrap();
    let compiled = std::process::Command::new(python)
        .args(["-m", "py_compile"])
        .arg(out.join("src/chain/steps.py"))
        .status()
        .unwrap();
    assert!(compiled.success());
}

/// The chain fixture's plan with every example taken out, in a fresh directory.
fn chain_plan_without_examples() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("chain").join("rpg.json")).unwrap())
            .unwrap();
    for node in plan["nodes"].as_array_mut().unwrap() {
        node["examples"] = Value::Array(Vec::new());
    }
    let rpg = dir.path().join("rpg.json");
    std::fs::write(&rpg, serde_json::to_string(&plan).unwrap()).unwrap();
    (dir, rpg)
}

/// Issue 39: a function whose body is only its docstring returns `None` whatever it is asked,
/// and was kept as `needs_review` on a plan without examples. Here its tests even pass (they
/// only call it): it still never counts as passed or needs_review, and the module keeps a
/// stub that says why rather than a function that answers `None`.
#[test]
fn a_function_without_a_body_never_counts_as_passed() {
    if require_python().is_none() {
        return;
    }
    let (dir, rpg) = chain_plan_without_examples();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "test" {
            v["answer"] = "```python\nfrom chain.steps import double\n\n\ndef test_double_runs():\n    double(4)\n```\n".into();
        }
        if v["node"] == "node_a" && v["role"] == "impl" {
            v["answer"] =
                "```python\ndef double(x: int) -> int:\n    \"\"\"Double an integer.\"\"\"\n```\n"
                    .into();
        }
    });
    let out = dir.path().join("o");
    let (code, _, stderr) = generate_plan(&rpg, &script, &out, &["--max-retries", "1"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(status_of(&out, "node_a"), "failed");
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(
        steps.contains("raise NotImplementedError") && steps.contains("has no body"),
        "{steps}"
    );
}

/// Issue 39: a name the function uses and nothing defines is a `NameError` waiting for the
/// input that reaches it. Without examples it weighs as a crash: the greedy answer passes its
/// tests (they never reach that line), yet fresh candidates are asked, and one without the
/// name is kept.
#[test]
fn without_examples_a_name_defined_nowhere_gets_fresh_candidates() {
    if require_python().is_none() || !super::support::require_ruff() {
        return;
    }
    let (dir, rpg) = chain_plan_without_examples();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "test" {
            v["answer"] = "```python\nfrom chain.steps import double\n\n\ndef test_double_runs():\n    double(4)\n```\n".into();
        }
        if v["node"] == "node_a" && v["role"] == "impl" {
            v["answer"] = "```python\ndef double(x: int) -> int:\n    if x < 0:\n        return negated(abs(x) * 2)\n    return x * 2\n```\n".into();
        }
    });
    let fresh = serde_json::json!({"node": "node_a", "role": "impl", "attempt": 1,
        "answer": "```python\ndef double(x: int) -> int:\n    return x * 2\n```\n"});
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str(&format!("{fresh}\n"));
    std::fs::write(&script, text).unwrap();
    let out = dir.path().join("o");
    let (code, _, stderr) = generate_plan(&rpg, &script, &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(status_of(&out, "node_a"), "passed", "{stderr}");
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(!steps.contains("negated"), "{steps}");
    let departure = &checkpoint(&out)["node_a"]["departure"];
    assert_eq!(departure["kind"], "fresh_start", "{departure}");
}

#[test]
fn hung_tests_are_killed_at_the_timeout() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "impl" {
            v["answer"] = "```python\ndef double(x):\n    while True:\n        pass\n```".into();
        }
    });
    let out = dir.path().join("o");
    let started = Instant::now();
    let (code, _, stderr) = generate(
        "chain",
        &script,
        &out,
        &["--max-retries", "0", "--test-timeout", "2"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the hung run was not killed"
    );
    let reason = checkpoint(&out)["node_a"]["failure_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.starts_with("tests timed out"), "{reason}");
}

#[test]
fn a_damaged_compact_checkpoint_is_rebuilt_from_the_journal_and_the_run_resumes() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    assert_eq!(generate("chain", &script_of("chain"), &out, &[]).0, 0);
    std::fs::write(
        out.join("docs/generation_checkpoint.json"),
        "{\"node_a\": {\"status\": ",
    )
    .unwrap();
    let (code, stdout, stderr) = generate("chain", &script_of("chain"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("rebuilt from the journal") && !stderr.contains("starting over"),
        "{stderr}"
    );
    assert!(stdout.contains("kept from the checkpoint"), "{stdout}");
    let backups: Vec<String> = std::fs::read_dir(out.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".corrupt-"))
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(checkpoint(&out).len(), 4);
}

#[test]
fn a_bit_flipped_plan_copy_does_not_block_a_resume() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    assert_eq!(generate("chain", &script_of("chain"), &out, &[]).0, 0);
    let copy = out.join(".zerorepo/rpg.json");
    let mut bytes = std::fs::read(&copy).unwrap();
    bytes[10] ^= 0x80;
    std::fs::write(&copy, &bytes).unwrap();
    let (code, _, stderr) = generate("chain", &script_of("chain"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    let plan: serde_json::Value = serde_json::from_slice(&std::fs::read(&copy).unwrap()).unwrap();
    assert!(plan["nodes"].is_array());
}

/// Waits until the journal holds at least `records` node records (or the process ends).
pub(super) fn wait_for_records(out: &Path, child: &mut std::process::Child, records: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while journal(out).len() < records && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(super) fn spawn_generate(name: &str, out: &Path) -> std::process::Child {
    zerorepo()
        .arg("-q")
        .arg("generate")
        .arg(fixture(name).join("rpg.json"))
        .arg("--out")
        .arg(out)
        .arg("--llm")
        .arg(format!("scripted:{}", script_of(name).display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn sigint_exits_130_with_a_consistent_checkpoint_and_resume_completes() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let mut child = spawn_generate("subgraphs20", &out);
    wait_for_records(&out, &mut child, 10);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let cp = checkpoint(&out);
    assert!(
        cp.values()
            .all(|r| r["status"] == "passed" || r["status"] == "in_progress"),
        "{cp:?}"
    );
    let (code, stdout, stderr) = generate("subgraphs20", &script_of("subgraphs20"), &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("31 of 31 nodes passed"), "{stdout}");
}

/// Generates subgraphs20 with one implementation answer edited from `from` to `to` (the
/// edit must apply), and checks that `module` ends up with the `import` line.
fn generates_with_the_import(node: &str, from: &str, to: &str, module: &str, import: &str) {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "subgraphs20", |v| {
        if v["node"] == node && v["role"] == "impl" {
            let answer = v["answer"].as_str().unwrap();
            assert!(answer.contains(from), "{answer}");
            v["answer"] = answer.replace(from, to).into();
        }
    });
    let out = dir.path().join("o");
    let (code, _, stderr) = generate("subgraphs20", &script, &out, &["--max-retries", "0"]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(out.join(module)).unwrap();
    assert!(text.contains(import), "{text}");
}

#[test]
fn a_missing_import_of_a_dependency_is_added() {
    // vowel_ratio calls count_vowels from textops.analysis; the answer forgets the import.
    generates_with_the_import(
        "node_012",
        "from textops.analysis import count_vowels\n",
        "",
        "src/numops/text_metrics.py",
        "from textops.analysis import count_vowels",
    );
}

#[test]
fn a_plan_function_used_without_a_declared_dependency_is_imported_from_where_it_is_defined() {
    // text_report calls numops.basic.percentage, which the plan does not list among its
    // dependencies, and does not import it.
    generates_with_the_import(
        "node_019",
        "(\"Vowel Ratio\", vowel_ratio(text))",
        "(\"Vowel Ratio\", percentage(1, 1) / 100 * vowel_ratio(text))",
        "src/reporting/summary.py",
        "from numops.basic import percentage",
    );
}

/// chain's script as JSON lines.
fn chain_lines() -> Vec<Value> {
    std::fs::read_to_string(script_of("chain"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `lines` as the script `dir/script.jsonl`.
fn write_script(dir: &Path, lines: &[Value]) -> PathBuf {
    let path = dir.join("script.jsonl");
    let text: Vec<String> = lines.iter().map(|v| v.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// chain's script with node_b's tests holding one wrong expected value.
fn script_with_a_wrong_test(dir: &Path) -> PathBuf {
    let mut lines = chain_lines();
    for v in &mut lines {
        if v["node"] == "node_b" && v["role"] == "test" {
            let answer = v["answer"].as_str().unwrap().replace(
                "assert double_plus_one(0) == 1",
                "assert double_plus_one(0) == 2",
            );
            v["answer"] = answer.into();
        }
    }
    write_script(dir, &lines)
}

#[test]
fn a_wrong_generated_test_does_not_sink_code_that_passes_the_specification() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // `--votes`: only then are the model's tests asked beside a node's examples; the votes
    // say nothing, so the dispute is not settled.
    let script = script_with_votes(dir.path(), &["no idea"; 5]);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(
        code, 0,
        "needs review is listed, not a failure: {stdout}\n{stderr}"
    );
    assert!(stdout.contains("1 need review"), "{stdout}");
    assert_eq!(status_of(&out, "node_b"), "needs_review");
    // No fix round: the gated candidate is kept at once and its dependent runs on it.
    assert_eq!(checkpoint(&out)["node_b"]["retry_count"], 0);
    assert_eq!(status_of(&out, "node_c"), "passed");
    let reason = checkpoint(&out)["node_b"]["failure_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("test_double_plus_one_zero"), "{reason}");
    // The first candidate (a tie with the fix goes to the earlier) is kept; the disputed test
    // is dropped, the specification's examples and the undisputed tests stay.
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(steps.contains("return double(x) + 1"), "{steps}");
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(!tests.contains("double_plus_one(0) == 2"), "{tests}");
    assert!(
        tests.contains("def test_double_plus_one_positive"),
        "{tests}"
    );
    assert!(
        tests.contains("def test_double_plus_one_examples_from_spec"),
        "{tests}"
    );
    let (_, status, _) = run(zerorepo().arg("status").arg(&out));
    assert!(status.contains("1 need review"), "{status}");
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(report.contains("Nodes needing review"), "{report}");
    // The planned dependencies (b on a, c on b) are both called in the code, needs review
    // or not.
    assert!(
        report.contains("## Planned Dependencies\n\n- **Used in the code**: 2 of 2 planned"),
        "{report}"
    );
    assert!(
        stdout.contains("2 of 2 planned dependencies used"),
        "{stdout}"
    );
    // Ruff lints the output (setup installs it; without it the report says so).
    assert!(
        report.contains("`ruff check --select E9,F`: no findings")
            || report.contains("ruff is not installed"),
        "{report}"
    );
    // Logs captured in a file (not a terminal) carry no colour codes.
    assert!(stderr.contains("INFO"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

/// chain's script with node_b's wrong test and these votes on it.
fn script_with_votes(dir: &Path, votes: &[&str]) -> PathBuf {
    let wrong = script_with_a_wrong_test(dir);
    let lines: Vec<Value> = std::fs::read_to_string(&wrong)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    with_votes(dir, lines, votes)
}

/// `lines` with these votes on node_b, written as the script.
fn with_votes(dir: &Path, mut lines: Vec<Value>, votes: &[&str]) -> PathBuf {
    for (candidate, vote) in votes.iter().enumerate() {
        lines.push(serde_json::json!({
            "node": "node_b", "role": "diagnose", "attempt": 0, "candidate": candidate,
            "answer": vote,
        }));
    }
    write_script(dir, &lines)
}

/// Votes that blame node_b's wrong test (vote i reads its letters rotated by i: A B C are
/// implementation, test, environment for votes 0 and 3; test, environment, implementation
/// for 1 and 4; environment, implementation, test for 2): test, test, implementation, test,
/// environment.
const BLAME_THE_TEST: [&str; 5] = ["B", "The test is wrong: A", "B", "B", "B"];

/// chain's script with node_b's wrong test, the votes that blame it, and the test as it is
/// written again after the vote (attempt 1) expecting `rewritten` for `double_plus_one(0)`.
fn script_with_a_rewritten_test(dir: &Path, rewritten: i32) -> PathBuf {
    let script = script_with_votes(dir, &BLAME_THE_TEST);
    let mut lines: Vec<Value> = std::fs::read_to_string(&script)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = format!(
        "```python\nfrom chain.steps import double_plus_one\n\n\ndef test_double_plus_one_zero():\n    assert double_plus_one(0) == {rewritten}\n```\n"
    );
    lines.push(serde_json::json!({
        "node": "node_b", "role": "test", "attempt": 1, "answer": answer,
    }));
    write_script(dir, &lines)
}

#[test]
fn a_test_the_vote_blames_and_that_is_written_right_the_second_time_is_kept() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = script_with_a_rewritten_test(dir.path(), 1);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(status_of(&out, "node_b"), "passed");
    assert_eq!(checkpoint(&out)["node_b"]["diagnosis"]["outcome"], "test");
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(tests.contains("double_plus_one(0) == 1"), "{tests}");
    assert!(!tests.contains("double_plus_one(0) == 2"), "{tests}");
    assert!(
        tests.contains("def test_double_plus_one_positive"),
        "{tests}"
    );
}

#[test]
fn a_wrong_test_outvoted_is_written_again_then_dropped_and_listed_in_the_report() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Written again after the vote, the test is still wrong: then it is dropped.
    let script = script_with_a_rewritten_test(dir.path(), 3);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(status_of(&out, "node_b"), "passed");
    let diagnosis = &checkpoint(&out)["node_b"]["diagnosis"];
    assert_eq!(
        diagnosis["votes"],
        serde_json::json!(["test", "test", "implementation", "test", "environment"])
    );
    assert_eq!(diagnosis["outcome"], "test");
    let disputed = &diagnosis["disputed"][0];
    assert_eq!(disputed["name"], "test_double_plus_one_zero");
    assert!(
        disputed["source"]
            .as_str()
            .unwrap()
            .contains("double_plus_one(0) == 2"),
        "{disputed}"
    );
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(!tests.contains("double_plus_one(0) == 2"), "{tests}");
    assert!(!tests.contains("double_plus_one(0) == 3"), "{tests}");
    assert!(
        tests.contains("def test_double_plus_one_examples_from_spec"),
        "{tests}"
    );
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(report.contains("## Disputed Tests"), "{report}");
    assert!(
        report.contains("B, the tests: written again, dropped where still failing"),
        "{report}"
    );
    assert!(
        report.contains("`test_double_plus_one_zero`, what the code did"),
        "{report}"
    );
    assert!(report.contains("assert 1 == 2"), "{report}");
    // The reference implementation settles the dispute: it fails the test too, so B was right.
    let (code, json, stderr) = run(zerorepo()
        .arg("eval")
        .arg(&out)
        .arg("--reference")
        .arg(fixture("chain").join("reference"))
        .arg("--json"));
    assert_eq!(code, 0, "{json}\n{stderr}");
    let evaluation: Value = serde_json::from_str(&json).unwrap();
    let judged = &evaluation["disputes"]["tests"][0];
    assert_eq!(judged["test"], "test_double_plus_one_zero");
    assert_eq!(judged["test_was_right"], false, "{judged}");
    let rows = evaluation["disputes"]["matrix"].as_array().unwrap();
    let row = rows.iter().find(|r| r["decision"] == "test").unwrap();
    assert_eq!(
        (row["test_right"].as_u64(), row["test_wrong"].as_u64()),
        (Some(0), Some(1))
    );
}

#[test]
fn three_votes_for_the_environment_skip_the_node_and_its_dependents() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // node_b's tests gain one that needs a module this machine lacks: the run blames the
    // environment, so the model's environment votes count (without that they do not).
    let mut lines = chain_lines();
    for v in &mut lines {
        if v["node"] == "node_b" && v["role"] == "test" {
            let answer = v["answer"].as_str().unwrap().replace(
                "def test_double_plus_one_zero():",
                "def test_double_plus_one_with_plugin():\n    import importlib\n    importlib.import_module(\"zerorepo_absent_plugin\")\n    assert double_plus_one(1) == 3\n\n\ndef test_double_plus_one_zero():",
            );
            v["answer"] = answer.into();
        }
    }
    // Environment, environment, implementation, environment, test (see the rotation above).
    let script = with_votes(dir.path(), lines, &["C", "B", "B", "C", "A"]);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_ne!(
        code, 0,
        "a skipped node is not a success: {stdout}\n{stderr}"
    );
    assert_eq!(status_of(&out, "node_b"), "skipped");
    let reason = checkpoint(&out)["node_b"]["failure_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.starts_with("environment"), "{reason}");
    assert_eq!(status_of(&out, "node_c"), "skipped");
    // The module stays importable: the kept code is there.
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(steps.contains("def double_plus_one("), "{steps}");
}

/// Without votes a node with examples is judged by them: the model's tests, which could only
/// start a vote against code that passes the examples, are not asked.
#[test]
fn without_votes_a_node_with_examples_is_judged_by_them_and_no_test_or_vote_is_asked() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The wrong test and the votes that would blame it are in the script; `--votes` is not
    // given.
    let script = script_with_a_rewritten_test(dir.path(), 1);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let record = &checkpoint(&out)["node_b"];
    assert_eq!(record["status"], "passed", "{record}");
    assert!(record["diagnosis"].is_null(), "{record}");
    assert!(record["tokens"]["test"].is_null(), "{record}");
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(
        tests.contains("def test_double_plus_one_examples_from_spec")
            && !tests.contains("double_plus_one(0) == 2"),
        "{tests}"
    );
    assert_eq!(status_of(&out, "node_c"), "passed");
}

#[test]
fn votes_without_a_majority_leave_the_node_for_review() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Implementation, environment, implementation, environment, none. The environment votes
    // do not count (the run shows no environment problem), and the first round's greedy
    // answer alone is no evidence of agreement: 2 for the implementation, no majority.
    let script = script_with_votes(dir.path(), &["A", "B", "B", "C", "no idea"]);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(status_of(&out, "node_b"), "needs_review");
    let diagnosis = &checkpoint(&out)["node_b"]["diagnosis"];
    assert!(diagnosis["evidence"].is_null(), "{diagnosis}");
    assert!(diagnosis["outcome"].is_null(), "{diagnosis}");
    assert_eq!(status_of(&out, "node_c"), "passed");
}

#[test]
fn one_shot_asks_once_per_node_and_runs_nothing() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate(
        "chain",
        &script_of("chain"),
        &out,
        &["--one-shot", "--json"],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Nothing ran, so no integration test either.
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert!(summary.get("integration").is_none(), "{summary}");
    assert!(!out.join("tests/integration").exists());
    for id in ["node_a", "node_b", "node_c"] {
        assert_eq!(status_of(&out, id), "needs_review", "{id}");
        let tokens = &checkpoint(&out)[id]["tokens"];
        assert!(tokens.get("test").is_none(), "no tests asked: {tokens}");
    }
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    for name in ["double", "double_plus_one", "describe_value"] {
        assert!(steps.contains(&format!("def {name}(")), "{steps}");
    }
}

#[test]
fn the_candidate_that_passes_is_kept_when_the_first_is_wrong() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut lines = chain_lines();
    let answer =
        |body: &str| format!("```python\ndef double_plus_one(x: int) -> int:\n    {body}\n```\n");
    for v in &mut lines {
        if v["node"] == "node_b" && v["role"] == "impl" {
            v["answer"] = answer("return double(x)").into();
        }
    }
    for (candidate, body) in [(1, "return x + 1"), (2, "return double(x) + 1")] {
        lines.push(serde_json::json!({
            "node": "node_b", "role": "impl", "attempt": 0, "candidate": candidate,
            "answer": answer(body),
        }));
    }
    let script = write_script(dir.path(), &lines);
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--candidates", "3"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(status_of(&out, "node_b"), "passed");
    // The greedy answer alone is asked first; it fails the examples, and the fix round's
    // candidates (the script's, a fix falls back to them) hold the one that passes.
    assert_eq!(checkpoint(&out)["node_b"]["retry_count"], 1);
    let steps = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(steps.contains("return double(x) + 1"), "{steps}");
    // The engine put the plan's docstring into the answer, which had none.
    assert!(steps.contains("Double an integer and add one."), "{steps}");
}

#[test]
fn a_test_file_that_does_not_compile_gets_new_tests_and_the_code_stays() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut lines = chain_lines();
    let mut rewritten = None;
    for v in &mut lines {
        if v["node"] == "node_b" && v["role"] == "test" {
            rewritten = Some(v.clone());
            // Parses for tree-sitter, but Python refuses to compile the file.
            let answer = v["answer"].as_str().unwrap().replace(
                "assert double_plus_one(4) == 9",
                "assert double_plus_one(x=4, x=4) == 9",
            );
            v["answer"] = answer.into();
        }
    }
    let mut rewritten = rewritten.unwrap();
    rewritten["attempt"] = 1.into();
    lines.push(rewritten);
    let script = write_script(dir.path(), &lines);
    let out = dir.path().join("o");
    // `--votes`: only then are the model's tests asked beside a node's examples.
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--votes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(status_of(&out, "node_b"), "passed");
    let record = &checkpoint(&out)["node_b"];
    assert_eq!(record["retry_count"], 1, "{record}");
    // Two attempts (the first, then new tests for the same code): one implementation round,
    // whose code passed, so it counts as a first-try pass.
    assert_eq!(record["work"]["rounds"], 1, "{record}");
    assert_eq!(record["work"]["answers"], 1, "{record}");
    assert_eq!(record["work"]["first_try"], true, "{record}");
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(!tests.contains("x=4, x=4"), "{tests}");
}

#[test]
fn four_jobs_write_the_same_repository_as_one() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut trees = Vec::new();
    for jobs in ["1", "4"] {
        let out = dir.path().join(format!("jobs{jobs}"));
        // A little latency per answer, so that with 4 jobs nodes really overlap and finish
        // out of plan order.
        let (code, _, stderr) = run(zerorepo()
            .env("ZEROREPO_SCRIPTED_LATENCY_MS", "20")
            .arg("generate")
            .arg(fixture("ml_lib").join("rpg.json"))
            .arg("--out")
            .arg(&out)
            .arg("--llm")
            .arg(format!("scripted:{}", script_of("ml_lib").display()))
            .args(["--jobs", jobs]));
        assert_eq!(code, 0, "{stderr}");
        trees.push(tree(&out));
    }
    assert!(
        trees[0] == trees[1],
        "--jobs 4 wrote another repository than --jobs 1"
    );
}

/// Issue 14's localization: a fix is asked only after the failure was localized, the fix
/// prompt shows the dependency the traceback passes through, and the checkpoint, the report
/// and `status --node` say where it looked.
#[test]
fn a_fix_is_localized_through_the_traceback_into_a_dependency() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // node_b's first answer hands double() a None, so the error is raised inside node_a's
    // code; the answer of attempt 1 (the fix) is the right one.
    let mut right = None;
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_b" && v["role"] == "impl" {
            let answer = v["answer"].as_str().unwrap().to_string();
            v["answer"] = answer.replace("double(x) + 1", "double(None) + 1").into();
        }
    });
    for line in std::fs::read_to_string(script_of("chain")).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["node"] == "node_b" && v["role"] == "impl" {
            right = Some(v);
        }
    }
    let mut fix = right.expect("node_b's answer");
    fix["role"] = "fix".into();
    fix["attempt"] = 1.into();
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str(&(serde_json::to_string(&fix).unwrap() + "\n"));
    std::fs::write(&script, text).unwrap();
    let out = dir.path().join("o");
    let record = dir.path().join("rec");
    let args = ["--record", record.to_str().unwrap(), "--jobs", "1"];
    let (code, _, stderr) = generate("chain", &script, &out, &args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(status_of(&out, "node_b"), "passed");
    let cp = checkpoint(&out);
    let fixes = cp["node_b"]["localizations"].as_array().expect("localized");
    assert_eq!(fixes.len(), 1, "{fixes:?}");
    let suspects: Vec<(&str, &str)> = fixes[0]["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["symbol"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    // Innermost frame first: the dependency raised, the fixed function called it.
    assert_eq!(
        &suspects[..2],
        [("double", "traceback"), ("double_plus_one", "traceback")]
    );
    assert_eq!(fixes[0]["suspects"][0]["node"], "node_a");
    assert_eq!(fixes[0]["edited"], "double_plus_one");
    assert!(fixes[0]["queries"].as_u64().unwrap() <= 20);
    // The fix prompt showed double's code; the first implementation's prompt showed none.
    let exchanges = std::fs::read_to_string(record.join("exchanges.jsonl")).unwrap();
    let prompts: Vec<Value> = exchanges
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["request"].clone())
        .filter(|r| r["node_id"] == "node_b" && r["role"] == "fix")
        .collect();
    // One prompt, asked for each of the round's candidates.
    assert!(
        !prompts.is_empty()
            && prompts
                .iter()
                .all(|p| p["messages"] == prompts[0]["messages"])
    );
    let user = prompts[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("The failure points at code outside `double_plus_one`")
            && user.contains(
                "`double` in src/chain/steps.py (the traceback passes through it; it is in this \
                 file: when the fault is in it, put its corrected definition in your answer too)"
            ),
        "{user}"
    );
    // The report and status --node say the same.
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(
        report.contains("## Debugging (localization before each fix)")
            && report.contains("1 fix on 1 node was localized first")
            && report.contains("the first suspect was the edited function in 0 (0%); 1 pointed"),
        "{report}"
    );
    let (code, stdout, _) = run(zerorepo()
        .arg("status")
        .arg(&out)
        .args(["--node", "double_plus_one"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("node_b double_plus_one: passed")
            && stdout.contains("1. double in src/chain/steps.py [node_a] (traceback)"),
        "{stdout}"
    );
    let (code, _, stderr) = run(zerorepo().arg("status").arg(&out).args(["--node", "nope"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no node `nope`"), "{stderr}");
}

/// Model-written tests are evidence, not truth: a model that gives no usable tests for a
/// function without examples must not fail it, nor skip its dependents. After three unusable
/// tests answers the plan's own test (that the function is defined) judges the code, which is
/// kept as `needs_review`, and the dependents run on it.
#[test]
fn a_node_the_model_writes_no_usable_tests_for_is_reviewed_and_its_dependents_run() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rpg: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("chain").join("rpg.json")).unwrap())
            .unwrap();
    for node in rpg["nodes"].as_array_mut().unwrap() {
        if node["id"] == "node_a" {
            node["examples"] = serde_json::json!([]);
        }
    }
    let rpg_path = dir.path().join("rpg.json");
    std::fs::write(&rpg_path, rpg.to_string()).unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "test" {
            v["answer"] = "I cannot write tests for this function.".into();
        }
    });
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate_plan(&rpg_path, &script, &out, &["--jobs", "1"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let cp = checkpoint(&out);
    assert_eq!(cp["node_a"]["status"], "needs_review", "{:?}", cp["node_a"]);
    let reason = cp["node_a"]["failure_reason"].as_str().unwrap();
    assert!(reason.contains("no usable tests"), "{reason}");
    // Three tests answers were asked, then one implementation round that passed.
    assert_eq!(cp["node_a"]["retry_count"], 2, "{:?}", cp["node_a"]);
    assert_eq!(cp["node_b"]["status"], "passed", "{:?}", cp["node_b"]);
    assert_eq!(cp["node_c"]["status"], "passed", "{:?}", cp["node_c"]);
    let module = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(module.contains("return x * 2"), "{module}");
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(tests.contains("def test_double_is_defined():"), "{tests}");
}

/// Issue 14: the fault lies in a dependency of the same module that passed its own tests. The
/// traceback localizes it, the fix corrects the dependency (not the node's function), a
/// correction that breaks the dependency's own tests is caught as a regression and not kept,
/// and the next one passes with every earlier test of the module green.
#[test]
fn a_fault_in_a_dependency_of_the_module_is_corrected_there_and_regressions_are_caught() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // node_b's example reaches the input that double() gets wrong; double's own tests do not.
    let rpg = std::fs::read_to_string(fixture("chain").join("rpg.json"))
        .unwrap()
        .replace(">>> double_plus_one(4)\\n9", ">>> double_plus_one(2)\\n5");
    assert!(
        rpg.contains("double_plus_one(2)"),
        "the example was not replaced"
    );
    let rpg_path = dir.path().join("rpg.json");
    std::fs::write(&rpg_path, rpg).unwrap();
    let off_by_one = "```python\ndef double(x: int) -> int:\n    table = [0, 2]\n    if 0 < x < 3:\n        return table[x]\n    return x * 2\n```\n";
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_a" && v["role"] == "impl" {
            v["answer"] = off_by_one.into();
        }
    });
    let fix = |attempt: u32, body: &str| {
        serde_json::json!({"node": "node_b", "role": "fix", "attempt": attempt,
            "answer": format!("```python\ndef double(x: int) -> int:\n    {body}\n```\n")})
        .to_string()
    };
    let mut text = std::fs::read_to_string(&script).unwrap();
    // With examples, attempt 1 is a fresh round (the script's answer again); the fixes follow.
    text.push_str(&(fix(2, "return x * 2 if x != -3 else 0") + "\n"));
    text.push_str(&(fix(3, "return x * 2") + "\n"));
    std::fs::write(&script, text).unwrap();
    let out = dir.path().join("o");
    let (code, _, stderr) = generate_plan(
        &rpg_path,
        &script,
        &out,
        // `--votes`: only then are the model's tests (whose -3 case the first fix fails)
        // asked beside the node's examples.
        &[
            "--candidates",
            "1",
            "--max-retries",
            "8",
            "--jobs",
            "1",
            "--votes",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let cp = checkpoint(&out);
    assert_eq!(cp["node_a"]["status"], "passed", "{:?}", cp["node_a"]);
    assert_eq!(cp["node_b"]["status"], "passed", "{:?}", cp["node_b"]);
    let fixes = cp["node_b"]["localizations"].as_array().expect("localized");
    assert_eq!(fixes.len(), 2, "{fixes:?}");
    // The first fix: the traceback's innermost frame is double, in node_b's own module.
    assert_eq!(fixes[0]["suspects"][0]["symbol"], "double", "{fixes:?}");
    assert_eq!(fixes[0]["suspects"][0]["reason"], "traceback", "{fixes:?}");
    assert!(fixes.iter().all(|f| f["edited"] == "double"), "{fixes:?}");
    // The first correction broke double's own test: caught, and another was asked.
    assert_eq!(
        cp["node_b"]["work"]["regressions_caught"], 1,
        "{:?}",
        cp["node_b"]
    );
    assert!(
        cp["node_b"]["retry_count"].as_u64() <= Some(3),
        "{:?}",
        cp["node_b"]
    );
    let module = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(
        module.contains("    return x * 2\n") && !module.contains("table"),
        "{module}"
    );
    // The corrected dependency keeps its plan docstring.
    assert!(module.contains("\"\"\"Double an integer."), "{module}");
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(
        report.contains("(2 corrected a dependency in its module)"),
        "{report}"
    );
    // Every test of the module passes in the published repository.
    let tests = std::fs::read_to_string(out.join("tests/test_steps.py")).unwrap();
    assert!(tests.contains("def test_double_negative"), "{tests}");
}

/// The same fix is never run twice: a fix answer that gives back code an earlier round ran
/// is dropped before it runs, and the next attempt asks again.
#[test]
fn a_fix_that_repeats_code_already_tried_is_not_run_again() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |_| {});
    let text = std::fs::read_to_string(&script).unwrap();
    let right: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["node"] == "node_b" && v["role"] == "impl")
        .unwrap();
    let answer = right["answer"].as_str().unwrap();
    let entry = |role: &str, attempt: u32, code: &str| {
        let mut v = right.clone();
        v["role"] = role.into();
        v["attempt"] = attempt.into();
        v["answer"] = answer.replace("double(x) + 1", code).into();
        serde_json::to_string(&v).unwrap()
    };
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !(l.contains("\"node_b\"") && l.contains("\"impl\"")))
        .map(str::to_string)
        .chain([
            entry("impl", 0, "double(x)"),
            entry("impl", 1, "double(x) + 2"),
            entry("fix", 2, "double(x)"),
            entry("fix", 3, "double(x) + 1"),
        ])
        .collect();
    std::fs::write(&script, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("o");
    let args = ["--candidates", "1", "--max-retries", "8", "--jobs", "1"];
    let (code, _, stderr) = generate("chain", &script, &out, &args);
    assert_eq!(code, 0, "{stderr}");
    let cp = checkpoint(&out);
    assert_eq!(cp["node_b"]["status"], "passed", "{:?}", cp["node_b"]);
    assert_eq!(
        cp["node_b"]["work"]["repeated_fixes"], 1,
        "{:?}",
        cp["node_b"]
    );
    // Rounds: the first, the fresh round at attempt 1, the fix that repeats the first
    // round's code (asked, never run), the right fix.
    assert_eq!(cp["node_b"]["retry_count"], 3, "{:?}", cp["node_b"]);
}

/// A subgraph whose functions passed gets an integration test from its entry function to its
/// exit function; a failing case is taken out of the file and listed, and the share that
/// passed is held against the 80% threshold. A function that failed is left out of the flow.
#[test]
fn a_passed_subgraph_gets_an_integration_test_and_a_failing_case_is_taken_out() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "integration:chain" {
            let answer = v["answer"].as_str().unwrap().to_string();
            v["answer"] = answer.replace("\"value=1\"", "\"value=0\"").into();
        }
    });
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let record = &summary["integration"][0];
    assert_eq!(record["subgraph"], "chain", "{summary}");
    assert_eq!(
        (record["cases"].as_u64(), record["passed"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(record["threshold_met"], false);
    assert_eq!(
        record["dropped"][0]["name"],
        "test_chain_flow_describe_value_zero"
    );
    let file = out.join("tests/integration/test_chain_flow.py");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(
        kept.contains("def test_chain_flow_describe_value_positive") && !kept.contains("value=0"),
        "{kept}"
    );
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(
        report.contains("  - chain: 2 of 3 cases passed (below the 80% threshold)")
            && report.contains("    - taken out: `test_chain_flow_describe_value_zero`"),
        "{report}"
    );
    // The repository's own suite runs the kept cases, and stays green.
    assert_eq!(
        summary["assembly"]["validation"]["tests"]["failed"], 0,
        "{summary}"
    );
    // A generation in which `node`'s implementation is always wrong.
    let with_wrong = |node: &'static str, name: &str| {
        let script = edited_script(dir.path(), "chain", |v| {
            if v["node"] == node && v["role"] == "impl" {
                v["fault"] = "always_wrong".into();
            }
        });
        let out = dir.path().join(name);
        let (_, stdout, stderr) = generate("chain", &script, &out, &["--json"]);
        let summary: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
        (summary, out)
    };
    // A function that failed is left out of its subgraph's flow, which runs through the rest.
    let (summary, _) = with_wrong("node_c", "o2");
    let record = &summary["integration"][0];
    assert_eq!(
        record["left_out"],
        serde_json::json!(["describe_value"]),
        "{summary}"
    );
    assert!(record["cases"].as_u64() > Some(0), "{summary}");
    // Fewer than two functions that passed their gates: no flow, no test.
    let (summary, out) = with_wrong("node_b", "o3");
    assert!(summary.get("integration").is_none(), "{summary}");
    assert!(!out.join("tests/integration").exists());
}

/// The integration tests of several subgraphs are asked of the model together, ahead of
/// their runs; each answer still lands in its own subgraph's file, and files kept from an
/// earlier run are run again, not asked for.
#[test]
fn integration_tests_asked_together_each_land_in_their_subgraph() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let script = script_of("subgraphs20");
    let (code, stdout, stderr) = generate("subgraphs20", &script, &out, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("integration tests: asking the model for 3 subgraphs' tests"),
        "{stderr}"
    );
    // What each subgraph's file must hold: a test its own scripted answer names.
    let marks = [
        ("numbers", "def test_numbers_flow_"),
        ("report", "def test_report_flow_"),
        ("text", "def test_text_flow_"),
    ];
    let landed = |stdout: &str, out: &std::path::Path| -> Vec<(String, bool, bool)> {
        let summary: Value = serde_json::from_str(stdout).unwrap();
        let records = summary["integration"].as_array().unwrap().clone();
        records
            .iter()
            .map(|r| {
                let subgraph = r["subgraph"].as_str().unwrap().to_string();
                let file = out.join(format!("tests/integration/test_{subgraph}_flow.py"));
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                let mark = marks.iter().find(|(s, _)| *s == subgraph).unwrap().1;
                let others = marks.iter().filter(|(s, _)| *s != subgraph);
                let own = text.contains(mark) && others.clone().all(|(_, m)| !text.contains(m));
                (subgraph, own, r["reused"].as_bool().unwrap_or(false))
            })
            .collect()
    };
    let first = landed(&stdout, &out);
    assert_eq!(
        first,
        [
            ("numbers".to_string(), true, false),
            ("report".to_string(), true, false),
            ("text".to_string(), true, false)
        ],
        "{stdout}"
    );
    // Run again, every file is kept: each is run again in its place, none is asked for.
    let (code, stdout, stderr) = generate("subgraphs20", &script, &out, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("integration tests: asking"), "{stderr}");
    assert_eq!(
        landed(&stdout, &out),
        [
            ("numbers".to_string(), true, true),
            ("report".to_string(), true, true),
            ("text".to_string(), true, true)
        ],
        "{stdout}"
    );
}

/// A failing integration case whose vote blames the code is debugged in the function it
/// points at: here `describe_value` passes its own tests (they never try a negative number)
/// and drops the sign. The first fix candidate breaks a test that passed and is reverted; the
/// second makes the case pass, and it is what the published module keeps.
#[test]
fn a_failing_integration_case_blamed_on_the_code_is_fixed_without_a_regression() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let right = "return f\"value={double_plus_one(x)}\"";
    let script = edited_script(dir.path(), "chain", |v| {
        let answer = v["answer"].as_str().unwrap_or("").to_string();
        if v["node"] == "node_c" && v["role"] == "impl" {
            v["answer"] = answer
                .replace(right, "return f\"value={double_plus_one(abs(x))}\"")
                .into();
        }
        if v["node"] == "node_c" && v["role"] == "test" {
            let cut = answer
                .find("\n\n\ndef test_describe_value_negative")
                .unwrap();
            v["answer"] = format!("{}\n```\n", &answer[..cut]).into();
        }
    });
    // Five votes for the code: the letter that names it moves with each vote's rotation.
    let base: Value = serde_json::json!({"node": "node_c", "role": "diagnose", "attempt": 0});
    let mut lines: Vec<String> = std::fs::read_to_string(&script)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for (i, letter) in ["A", "C", "B", "A", "C"].iter().enumerate() {
        let mut v = base.clone();
        v["candidate"] = i.into();
        v["answer"] = (*letter).into();
        lines.push(v.to_string());
    }
    let fix = |candidate: u32, body: &str| {
        serde_json::json!({"node": "node_c", "role": "fix", "attempt": 0, "candidate": candidate,
            "answer": format!("```python\ndef describe_value(x: int) -> str:\n    {body}\n```\n")})
        .to_string()
    };
    lines.push(fix(0, "return f\"value={-double_plus_one(abs(x))}\""));
    lines.push(fix(1, right));
    std::fs::write(&script, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("o");
    let args = ["--json", "--candidates", "2"];
    let (code, stdout, stderr) = generate("chain", &script, &out, &args);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let record = &summary["integration"][0];
    assert_eq!(
        (record["cases"].as_u64(), record["passed"].as_u64()),
        (Some(3), Some(3)),
        "{summary}"
    );
    let debugged = &record["debugged"][0];
    assert_eq!(
        debugged["case"], "test_chain_flow_describe_value_negative",
        "{summary}"
    );
    assert_eq!(debugged["node"], "node_c");
    assert_eq!(debugged["verdict"], "implementation");
    assert_eq!(debugged["fixed"], true);
    assert_eq!(debugged["regressions"], 1, "{debugged}");
    assert_eq!(
        debugged["localizations"][0]["suspects"][0]["symbol"],
        "describe_value"
    );
    let module = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(
        module.contains(right) && !module.contains("abs(x)"),
        "{module}"
    );
    // The fix keeps the plan's docstring, and the staging copy holds it too.
    assert!(
        module.contains("Describe the result of double_plus_one"),
        "{module}"
    );
    let staged = std::fs::read_to_string(out.join(".zerorepo/work/src/chain/steps.py")).unwrap();
    assert!(staged.contains(right), "{staged}");
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap();
    assert!(
        report.contains("  - chain: 3 of 3 cases passed (threshold met)")
            && report.contains(
                "`test_chain_flow_describe_value_negative` blamed on `node_c`: the vote (AAAAA) \
                 blamed the implementation; fixed in `node_c` (1 round(s)), 1 fix(es) reverted"
            ),
        "{report}"
    );
    assert_eq!(
        summary["assembly"]["validation"]["tests"]["failed"], 0,
        "{summary}"
    );
}

/// A case that pytest itself refuses (`pytest.approx` of a nested list raises whatever the
/// code returned) is the test's fault: no vote is asked, nothing is fixed, it is taken out.
#[test]
fn an_integration_case_pytest_refuses_is_blamed_on_the_test_without_a_vote() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "integration:chain" {
            let answer = v["answer"].as_str().unwrap().to_string();
            let refused = "assert [[len(describe_value(0))]] == pytest.approx([[7]])";
            v["answer"] = answer
                .replace("from chain.steps", "import pytest\nfrom chain.steps")
                .replace("assert describe_value(0) == \"value=1\"", refused)
                .into();
        }
    });
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("chain", &script, &out, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let record = &summary["integration"][0];
    assert_eq!(record["passed"], 2, "{summary}");
    let debugged = &record["debugged"][0];
    assert_eq!(debugged["case"], "test_chain_flow_describe_value_zero");
    assert_eq!(
        (
            &debugged["votes"],
            &debugged["verdict"],
            &debugged["attempts"]
        ),
        (&Value::from("B"), &Value::from("test"), &Value::from(0)),
        "{debugged}"
    );
    assert_eq!(
        record["dropped"][0]["name"],
        "test_chain_flow_describe_value_zero"
    );
}

/// `chain` with `node_c`'s code wrong for negative inputs (`wrong` replaces its return
/// line), its unit test of a negative input cut, and its examples taken out of the plan, so
/// that the integration case of a negative input is the only evidence against the code.
fn chain_without_examples_failing_a_case(wrong: &str) -> (tempfile::TempDir, Value, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let right = "return f\"value={double_plus_one(x)}\"";
    let script = edited_script(dir.path(), "chain", |v| {
        let answer = v["answer"].as_str().unwrap_or("").to_string();
        if v["node"] == "node_c" && v["role"] == "impl" {
            v["answer"] = answer.replace(right, wrong).into();
        }
        if v["node"] == "node_c" && v["role"] == "test" {
            let cut = answer
                .find("\n\n\ndef test_describe_value_negative")
                .unwrap();
            v["answer"] = format!("{}\n```\n", &answer[..cut]).into();
        }
    });
    // Votes that would blame the code, and a right fix: neither may be asked for a value.
    let mut lines: Vec<String> = std::fs::read_to_string(&script)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for (i, letter) in ["A", "C", "B", "A", "C"].iter().enumerate() {
        lines.push(
            serde_json::json!({"node": "node_c", "role": "diagnose", "attempt": 0,
            "candidate": i, "answer": letter})
            .to_string(),
        );
    }
    lines.push(
        serde_json::json!({"node": "node_c", "role": "fix", "attempt": 0,
        "answer": format!("```python\ndef describe_value(x: int) -> str:\n    {right}\n```\n")})
        .to_string(),
    );
    std::fs::write(&script, lines.join("\n") + "\n").unwrap();
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("chain").join("rpg.json")).unwrap())
            .unwrap();
    for node in plan["nodes"].as_array_mut().unwrap() {
        if node["id"] == "node_c" {
            node["examples"] = serde_json::json!([]);
        }
    }
    let rpg = dir.path().join("rpg.json");
    std::fs::write(&rpg, plan.to_string()).unwrap();
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate_plan(&rpg, &script, &out, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    (dir, summary, out)
}

/// Without examples the greedy answer is the prior: a model-written integration case that
/// disputes a value is weak evidence, so it gets no vote and no fix and is taken out.
#[test]
fn without_examples_a_case_disputing_a_value_is_taken_out_without_a_vote() {
    if require_python().is_none() {
        return;
    }
    let wrong = "return f\"value={double_plus_one(abs(x))}\"";
    let (_dir, summary, out) = chain_without_examples_failing_a_case(wrong);
    let record = &summary["integration"][0];
    assert_eq!(record["passed"], 2, "{summary}");
    let debugged = &record["debugged"][0];
    assert_eq!(debugged["case"], "test_chain_flow_describe_value_negative");
    assert_eq!(
        (
            &debugged["votes"],
            &debugged["attempts"],
            &debugged["fixed"]
        ),
        (&Value::from(""), &Value::from(0), &Value::from(false)),
        "{debugged}"
    );
    assert_eq!(
        record["dropped"][0]["name"],
        "test_chain_flow_describe_value_negative"
    );
    let module = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(module.contains("abs(x)"), "{module}");
}

/// Without examples a crash in the function's own module, with an exception its
/// specification does not name, is strong evidence: the code is blamed without a vote and
/// the fix that makes the case pass is kept.
#[test]
fn without_examples_a_case_the_code_crashes_in_is_fixed_without_a_vote() {
    if require_python().is_none() {
        return;
    }
    let wrong = "return f\"value={double_plus_one(x) if x >= 0 else [][x]}\"";
    let (_dir, summary, out) = chain_without_examples_failing_a_case(wrong);
    let record = &summary["integration"][0];
    assert_eq!(record["passed"], 3, "{summary}");
    let debugged = &record["debugged"][0];
    assert_eq!(
        (&debugged["votes"], &debugged["verdict"], &debugged["fixed"]),
        (
            &Value::from("A"),
            &Value::from("implementation"),
            &Value::from(true)
        ),
        "{debugged}"
    );
    let module = std::fs::read_to_string(out.join("src/chain/steps.py")).unwrap();
    assert!(!module.contains("[][x]"), "{module}");
}

/// The first implementation round is asked while the tests are written (its prompt does not
/// show them), and used when the loop then asks that very request: for every node whose
/// first tests answer is usable; a node whose tests are asked again asks its implementation
/// at the later attempt, another request, so the answers asked ahead are not used.
#[test]
fn the_first_implementation_round_is_asked_while_the_tests_are_written() {
    if require_python().is_none() {
        return;
    }
    let totals = |script: &Path| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o");
        // `--votes`: only then are the model's tests asked beside a node's examples.
        let (code, stdout, stderr) = generate("chain", script, &out, &["--json", "--votes"]);
        assert_eq!(code, 0, "{stderr}");
        let summary: Value = serde_json::from_str(&stdout).unwrap();
        (
            summary["passed"].clone(),
            summary["work"]["totals"]["asked_ahead"].clone(),
        )
    };
    assert_eq!(totals(&script_of("chain")), (4.into(), 3.into()));
    let dir = tempfile::tempdir().unwrap();
    let script = edited_script(dir.path(), "chain", |v| {
        if v["node"] == "node_c" && v["role"] == "test" {
            v["attempt"] = 1.into();
        }
    });
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str(
        &(serde_json::json!({"node": "node_c", "role": "test", "attempt": 0, "fault": "malformed"})
            .to_string() + "\n"),
    );
    std::fs::write(&script, text).unwrap();
    assert_eq!(totals(&script).1, 2);
}
