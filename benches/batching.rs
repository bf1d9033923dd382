//! Throughput of the embedded model when several candidates of one request are decoded
//! together (`LlmProvider::complete_many`): aggregate generated tokens per second for 1, 2 and
//! 4 sequences over one shared prompt, and the prompt-evaluation rate; then both again with
//! the cache holding other requests' prompts.
//!
//! `cargo bench --bench batching` prints a Markdown table (copied into reports/batching.md).
//! It needs the local model (`zerorepo model pull`) and takes a few minutes on two cores, so
//! under `cargo test` (no `--bench`) it only says that it skipped.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use zerorepo::llm::chain::{OpenAiOptions, from_spec};
use zerorepo::llm::{LlmRequest, Message, Role};

/// A write-implementation prompt of ml_lib's size: the spec of `parse_csv_text`.
fn request() -> LlmRequest {
    request_for("parse_csv_text")
}

/// The write-implementation prompt of ml_lib's function `name`.
fn request_for(name: &str) -> LlmRequest {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rpg: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("fixtures/ml_lib/rpg.json")).unwrap(),
    )
    .unwrap();
    let node = rpg["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap();
    let user = format!(
        "Signature: {}\nSpecification:\n{}\n\nTask: write the function `{name}` itself \
         (not tests). Reply with one ```python block holding the complete definition with the \
         exact signature above and its body.",
        node["signature"].as_str().unwrap(),
        node["docstring"].as_str().unwrap()
    );
    LlmRequest {
        node_id: "bench".into(),
        role: Role::Impl,
        attempt: 0,
        messages: vec![
            Message {
                role: "system".into(),
                content: "You write correct, idiomatic Python 3.".into(),
            },
            Message {
                role: "user".into(),
                content: user,
            },
        ],
        // Every sequence samples (candidate 0 too): greedy would stop early and alike.
        temperature: 0.7,
        max_tokens: 256,
        seed: Some(1),
        template: "bench@1".into(),
        candidate: 0,
        prefill: None,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!(
            "SKIPPED: the batching bench runs the local model for minutes; run `cargo bench --bench batching`"
        );
        return;
    }
    let llm = from_spec(Some("local"), None, &OpenAiOptions::default(), None).unwrap();
    let request = request();
    // The first call evaluates the prompt; later calls reuse it from the cache.
    let started = Instant::now();
    let first = llm.complete(&request).await.unwrap();
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "first call: {} prompt tokens + {} generated in {seconds:.1}s\n",
        first.usage.prompt_tokens, first.usage.completion_tokens
    );
    prompt_evaluation(llm.as_ref()).await;
    println!(
        "| sequences | generated tokens | seconds | aggregate tok/s | per sequence tok/s | vs 1 |"
    );
    println!("|---|---|---|---|---|---|");
    let mut single = None;
    for n in [1u32, 2, 4] {
        let (generated, seconds) = decode(llm.as_ref(), &request, n).await;
        let rate = generated as f64 / seconds;
        let base = *single.get_or_insert(rate);
        println!(
            "| {n} | {generated} | {seconds:.1} | {rate:.1} | {:.1} | {:.2}× |",
            rate / f64::from(n),
            rate / base
        );
    }
    two_nodes(llm.as_ref()).await;
    held_caches(llm.as_ref()).await;
}

/// Prompt evaluation alone: the specifications of ml_lib's first eight functions as one
/// prompt (nothing of it cached but the system prompt), one token asked.
async fn prompt_evaluation(llm: &dyn zerorepo::llm::LlmProvider) {
    let names = [
        "parse_csv_text",
        "parse_float_cell",
        "rows_to_float_matrix",
        "load_dataset",
        "train_test_split",
        "shuffled_batches",
        "min_max_scale",
        "column_mean_std",
    ];
    print_evaluation(llm, &names).await;
}

/// Evaluates `names` (see [`evaluate`]) and prints the rate.
async fn print_evaluation(llm: &dyn zerorepo::llm::LlmProvider, names: &[&str]) {
    let (evaluated, seconds) = evaluate(llm, names).await;
    println!(
        "prompt evaluation: {evaluated} prompt tokens in {seconds:.1}s ({:.1} tok/s)\n",
        evaluated as f64 / seconds
    );
}

/// The specifications of ml_lib's functions `names` as one prompt, one token asked: the
/// prompt tokens evaluated and the seconds it took.
async fn evaluate(llm: &dyn zerorepo::llm::LlmProvider, names: &[&str]) -> (u64, f64) {
    let mut long = request();
    long.messages[1].content = names
        .iter()
        .map(|name| request_for(name).messages[1].content.clone())
        .collect::<Vec<_>>()
        .join("\n\n");
    long.max_tokens = 1;
    let started = Instant::now();
    let answer = llm.complete(&long).await.unwrap();
    (answer.usage.prompt_tokens, started.elapsed().as_secs_f64())
}

/// The same work with the cache holding other requests' prompts. The worker keeps each slot's
/// prompt for the next request that shares it, in one cache for all sequences; attention
/// looks at every cell up to the highest one in use and masks the other sequences' cells, so
/// what idle slots keep may slow every request. Three long prompts of other functions fill
/// the slots first; then a fresh prompt is evaluated and the first request decoded again.
async fn held_caches(llm: &dyn zerorepo::llm::LlmProvider) {
    let fillers: [&[&str]; 3] = [
        &[
            "column_means_ignoring_missing",
            "column_medians_ignoring_missing",
            "impute_missing",
            "build_vocabulary",
            "one_hot_encode",
            "add_bias_column",
            "solve_linear_system",
            "fit_linear_regression",
            "predict_linear_regression",
            "euclidean_distance",
        ],
        &[
            "majority_vote",
            "fit_knn",
            "predict_knn",
            "gaussian_log_likelihood",
            "fit_gaussian_nb",
            "predict_gaussian_nb",
            "accuracy",
            "confusion_matrix",
            "precision_recall_f1",
            "macro_f1",
        ],
        &[
            "mean_squared_error",
            "mean_absolute_error",
            "r2_score",
            "k_fold_indices",
            "cross_validate_knn",
            "cross_validate_linear",
            "histogram_counts",
            "text_histogram",
            "ascii_bar_chart",
            "scale_to_pixels",
        ],
    ];
    let mut held = 0;
    for names in fillers {
        held += evaluate(llm, names).await.0;
    }
    println!("\nwith {held} prompt tokens of three other requests held in the cache:\n");
    let fresh = [
        "svg_line_plot",
        "svg_scatter_plot",
        "format_confusion_matrix",
        "confusion_report",
        "cv_score_chart",
        "regression_report",
        "shuffled_indices",
        "take_rows",
    ];
    print_evaluation(llm, &fresh).await;
    // The first request's prompt was evicted to make room: put it back before timing.
    let request = request();
    let mut warm = request.clone();
    warm.max_tokens = 1;
    let _ = llm.complete(&warm).await;
    for n in [1u32, 4] {
        let (generated, seconds) = decode(llm, &request, n).await;
        println!(
            "{n} sequence(s): {generated} tokens in {seconds:.1}s ({:.1} tok/s)",
            generated as f64 / seconds
        );
    }
}

/// Two requests of different nodes (`generate --jobs 2`), one after the other and then sent
/// at once, which the worker decodes in shared steps; each has its own prompt, so prompt
/// evaluation is part of the cost. Each pair is first answered once so that both prompts
/// are in the cache for both measurements.
async fn two_nodes(llm: &dyn zerorepo::llm::LlmProvider) {
    println!("\ntwo requests of different nodes (prompts cached):\n");
    println!(
        "| candidates each | order | generated tokens | seconds | aggregate tok/s | vs one after the other |"
    );
    println!("|---|---|---|---|---|---|");
    let a = request_for("parse_csv_text");
    let b = request_for("mean_squared_error");
    for n in [1u32, 3] {
        let _ =
            futures_util::future::join(llm.complete_many(&a, n), llm.complete_many(&b, n)).await;
        let started = Instant::now();
        let mut answers = llm.complete_many(&a, n).await;
        answers.extend(llm.complete_many(&b, n).await);
        let apart = (tokens(&answers), started.elapsed().as_secs_f64());
        let started = Instant::now();
        let (x, y) =
            futures_util::future::join(llm.complete_many(&a, n), llm.complete_many(&b, n)).await;
        let together = (tokens(&x) + tokens(&y), started.elapsed().as_secs_f64());
        let base = apart.0 as f64 / apart.1;
        for (order, (generated, seconds)) in [("one after the other", apart), ("at once", together)]
        {
            let rate = generated as f64 / seconds;
            println!(
                "| {n} | {order} | {generated} | {seconds:.1} | {rate:.1} | {:.2}× |",
                rate / base
            );
        }
    }
}

/// `n` candidates of `request` decoded together: the tokens generated and the seconds taken.
async fn decode(llm: &dyn zerorepo::llm::LlmProvider, request: &LlmRequest, n: u32) -> (u64, f64) {
    let started = Instant::now();
    let answers = llm.complete_many(request, n).await;
    (tokens(&answers), started.elapsed().as_secs_f64())
}

fn tokens(answers: &[Result<zerorepo::llm::LlmResponse, zerorepo::llm::LlmError>]) -> u64 {
    answers
        .iter()
        .map(|a| a.as_ref().unwrap().usage.completion_tokens)
        .sum()
}
