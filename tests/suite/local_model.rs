//! Real runs of the embedded model, with no `--llm` flag, so the default provider (the local
//! Qwen2.5-Coder GGUF) answers, in the default sandbox. Two runs:
//! - `generate` writes the tests and code of the chain fixture, and the hidden reference
//!   tests must pass;
//! - `zerorepo code` makes the change of `fixtures/code_tiny`, and its hidden tests must pass.
//!
//! CI pulls the model (scripts/test.sh); elsewhere a missing model skips loudly.

use super::support::{fixture, run, zerorepo};

/// One model run at a time: two at once on a 2-core machine double each other's time.
static MODEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn model_present() -> bool {
    let (code, stdout, _) = run(zerorepo().args(["model", "path"]));
    code == 0 && std::path::Path::new(stdout.trim()).is_file()
}

/// A Python with pytest and the model's turn, or `None` (said loudly) when this build or
/// machine cannot run the model; in CI a missing model fails.
fn model_ready() -> Option<(String, std::sync::MutexGuard<'static, ()>)> {
    if !cfg!(feature = "local-model") {
        eprintln!("SKIPPED: built without the local-model feature");
        return None;
    }
    if !model_present() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must pull the model (scripts/test.sh runs `zerorepo model pull`)"
        );
        eprintln!("SKIPPED: no local model; run `zerorepo model pull`");
        return None;
    }
    let python = super::support::require_python()?;
    Some((python, MODEL.lock().unwrap_or_else(|e| e.into_inner())))
}

#[test]
fn default_provider_is_the_local_model_and_its_code_passes_the_reference_tests() {
    let Some((python, _one_at_a_time)) = model_ready() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chain");
    let recording = dir.path().join("rec");
    let (code, stdout, stderr) = run(zerorepo()
        .arg("generate")
        .arg(fixture("chain").join("rpg.json"))
        .arg("--out")
        .arg(&out)
        .arg("--record")
        .arg(&recording));
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let exchanges = std::fs::read_to_string(recording.join("exchanges.jsonl")).unwrap();
    assert!(
        exchanges.contains("\"provider\":\"local:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf\""),
        "the local model answered"
    );
    let (ok, report) =
        super::support::pytest(&python, &out, &fixture("chain").join("reference/tests"));
    assert!(
        ok && report.contains("9 passed"),
        "hidden reference tests: {report}"
    );
}

/// Copies a fixture directory (files only) into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_local_model_makes_a_verified_change_that_passes_hidden_tests() {
    let Some((python, _one_at_a_time)) = model_ready() else {
        return;
    };
    let fixture = fixture("code_tiny");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("calc");
    std::fs::create_dir_all(&repo).unwrap();
    copy_tree(&fixture.join("repo"), &repo);
    let (code, stdout, stderr) = run(zerorepo()
        .arg("code")
        .arg(fixture.join("spec.md"))
        .arg("--repo")
        .arg(&repo)
        .args(["--yes", "--json"]));
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["status"], "committed");
    let (ok, report) = super::support::pytest(&python, &repo, &fixture.join("reference/tests"));
    assert!(
        ok && report.contains("2 passed"),
        "hidden reference tests: {report}"
    );
}
