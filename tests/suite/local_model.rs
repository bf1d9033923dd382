//! Real runs of the embedded model, with no `--llm` flag, so the default provider (the local
//! Qwen2.5-Coder GGUF) answers, in the default sandbox. Two runs:
//! - `generate` writes the tests and code of the chain fixture, and the hidden reference
//!   tests must pass;
//! - `zerorepo code` makes the change of `fixtures/code_tiny`, and its hidden tests must pass.
//!
//! And one check of the provider itself: greedy answers are the same with prompt-lookup
//! drafting as without.
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

/// Drafting ([`zerorepo::llm::draft`]) writes the same tokens as decoding one token at a
/// time, and the drafts were used: the request asks the model to repeat code it was given, so
/// some guesses must be right. Greedy, every role drafting; then a sampled fix round, which
/// drafts by default and keeps its distribution: each token is still drawn from the model's
/// distribution at its position, one random number a token, so with the same seed the same
/// answer comes out both ways. One test, because llama.cpp starts once per process.
#[cfg(feature = "local-model")]
#[test]
fn answers_are_the_same_with_and_without_drafting_greedy_or_sampled() {
    use zerorepo::llm::Role;
    use zerorepo::llm::draft::Drafting;
    use zerorepo::llm::local::LocalProvider;
    let Ok(path) = zerorepo::llm::model::resolve(None) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must pull the model (scripts/test.sh runs `zerorepo model pull`)"
        );
        eprintln!("SKIPPED: no local model; run `zerorepo model pull`");
        return;
    };
    let _one_at_a_time = MODEL.lock().unwrap_or_else(|e| e.into_inner());
    let provider = LocalProvider::load_with(&path, Drafting::Off).unwrap();
    same_with_and_without_drafting(&provider, Role::Impl, 0.0, None, Drafting::LOOKUP);
    same_with_and_without_drafting(&provider, Role::Fix, 1.0, Some(7), Drafting::FIXES);
}

/// Asks the model to repeat code it was given, once without drafts and once `drafting`, and
/// checks the answers are the same and some drafts were accepted.
#[cfg(feature = "local-model")]
fn same_with_and_without_drafting(
    provider: &zerorepo::llm::local::LocalProvider,
    role: zerorepo::llm::Role,
    temperature: f32,
    seed: Option<u64>,
    drafting: zerorepo::llm::draft::Drafting,
) {
    use zerorepo::llm::draft::Drafting;
    use zerorepo::llm::{LlmProvider, LlmRequest, Message};
    let code = "def mean(values):\n    \"\"\"The arithmetic mean of values.\"\"\"\n    \
                return sum(values) / len(values)\n\n\ndef variance(values):\n    \
                \"\"\"The population variance of values.\"\"\"\n    m = mean(values)\n    \
                return sum((v - m) ** 2 for v in values) / len(values)\n";
    let request = LlmRequest {
        node_id: "draft".into(),
        role,
        attempt: 0,
        messages: vec![
            Message {
                role: "system".into(),
                content: "You write correct Python 3. Answer with one ```python block.".into(),
            },
            Message {
                role: "user".into(),
                content: format!(
                    "Add type hints to both functions. Keep their names, docstrings and \
                     bodies exactly as they are.\n```python\n{code}```"
                ),
            },
        ],
        temperature,
        // Two decodes of 100 tokens keep the test under a minute on two cores.
        max_tokens: 100,
        seed,
        template: "test@1".into(),
        candidate: 0,
        prefill: Some("```python\n".into()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // One provider for both ways: llama.cpp starts once per process.
    provider.set_drafting(Drafting::Off);
    let before = provider.draft_counts();
    // Both timed answers find the prompt cached and evaluate only its last token again.
    let mut warm = request.clone();
    warm.max_tokens = 1;
    runtime.block_on(provider.complete(&warm)).unwrap();
    let started = std::time::Instant::now();
    let plain = runtime.block_on(provider.complete(&request)).unwrap();
    let plain_seconds = started.elapsed().as_secs_f64();
    let none = provider.draft_counts();
    provider.set_drafting(drafting);
    let started = std::time::Instant::now();
    let drafted = runtime.block_on(provider.complete(&request)).unwrap();
    let drafted_seconds = started.elapsed().as_secs_f64();
    let counts = provider.draft_counts();
    eprintln!(
        "{} tokens: {plain_seconds:.1}s plain, {drafted_seconds:.1}s drafting; {counts:?}\n{}",
        plain.usage.completion_tokens, drafted.text
    );
    assert_eq!(none, before, "drafting off drafted");
    assert_eq!(drafted.text, plain.text);
    assert_eq!(drafted.usage, plain.usage);
    assert!(
        plain.usage.completion_tokens > 30,
        "too short to test anything: {plain:?}"
    );
    assert!(
        counts.accepted > before.accepted,
        "no draft token was accepted on a copying task: {counts:?}"
    );
}
