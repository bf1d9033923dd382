//! Apply rate: the share of real model answers the engine can turn into an edit of the right
//! file. Reads every recording under `fixtures/*/recorded/*/exchanges.jsonl` (answers of the
//! local model on the fixtures), parses each answer, keeps what is meant for the node's file,
//! and shapes it (tests must define `test_` functions; implementations must define the node's
//! function). Prints a Markdown table (copied into reports/apply-rate.md) and the reasons for
//! every answer that could not be applied.
//!
//! `cargo bench --bench apply_rate`; under `cargo test --all-targets` it runs the same (it is
//! fast) and fails when the corpus holds fewer than 200 answers or fewer than 98% apply.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use zerorepo::edit::cutoff::drop_unfinished_tail;
use zerorepo::edit::{code_for_target, shape_implementation, shape_tests};
use zerorepo::llm::Role;
use zerorepo::llm::record::Exchange;
use zerorepo::python::import_path;
use zerorepo::rpg::{Node, Rpg};

fn recordings(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for fixture in std::fs::read_dir(root.join("fixtures"))
        .unwrap()
        .filter_map(Result::ok)
    {
        let recorded = fixture.path().join("recorded");
        let Ok(models) = std::fs::read_dir(&recorded) else {
            continue;
        };
        for model in models.filter_map(Result::ok) {
            let file = model.path().join("exchanges.jsonl");
            if file.is_file() {
                found.push((fixture.file_name().to_string_lossy().into_owned(), file));
            }
        }
    }
    found.sort();
    found
}

/// The text between "`{label}`\n```python\n" and the closing fence in a prompt.
fn block_after(prompt: &str, label: &str) -> String {
    prompt
        .find(label)
        .and_then(|at| {
            prompt[at..]
                .find("```python\n")
                .map(|f| at + f + "```python\n".len())
        })
        .and_then(|start| {
            prompt[start..]
                .find("\n```")
                .map(|end| prompt[start..start + end].to_string())
        })
        .unwrap_or_default()
}

fn applies(exchange: &Exchange, node: &Node) -> Result<(), String> {
    // The engine keeps the complete tests of an answer that ran into the token limit and
    // refuses any other such answer, whatever it parses to.
    let mut text = exchange.response.text.clone();
    if exchange.response.usage.completion_tokens >= u64::from(exchange.request.max_tokens) {
        text = match (exchange.request.role, drop_unfinished_tail(&text)) {
            (Role::Test, Some(kept)) => kept,
            _ => {
                return Err(format!(
                    "cut off at the {} token limit",
                    exchange.request.max_tokens
                ));
            }
        };
    }
    let file = node.file_path.clone().unwrap_or_default();
    let prompt = exchange
        .request
        .messages
        .last()
        .map(|m| m.content.as_str())
        .unwrap_or("");
    match exchange.request.role {
        Role::Test => {
            let target = node.test_file().unwrap_or_default();
            let code = code_for_target(&text, &target, "").map_err(|e| e.to_string())?;
            shape_tests(&code, node.docstring.as_deref().unwrap_or(""))
                .map(drop)
                .map_err(|e| e.to_string())
        }
        Role::Impl | Role::Fix => {
            let current = block_after(prompt, "currently contains:");
            let code = code_for_target(&text, &file, &current).map_err(|e| e.to_string())?;
            shape_implementation(&code, &node.name, &import_path(&file), &current)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        // A vote is one letter, not code: it applies when it names a side.
        Role::Diagnose => zerorepo::engine::vote::parse(&text, exchange.request.candidate)
            .map(drop)
            .ok_or_else(|| format!("no vote in {text:?}")),
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut totals: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let corpora = recordings(&root);
    assert!(
        !corpora.is_empty(),
        "no recordings under fixtures/*/recorded/"
    );
    for (fixture, file) in &corpora {
        let rpg: Rpg = serde_json::from_str(
            &std::fs::read_to_string(root.join("fixtures").join(fixture).join("rpg.json")).unwrap(),
        )
        .unwrap();
        for line in std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let exchange: Exchange = serde_json::from_str(line).unwrap();
            let Some(node) = rpg.nodes.iter().find(|n| n.id == exchange.request.node_id) else {
                continue;
            };
            let role = exchange.request.role.as_str();
            let entry = totals.entry(role).or_default();
            entry.1 += 1;
            match applies(&exchange, node) {
                Ok(()) => entry.0 += 1,
                Err(why) => failures.push(format!(
                    "{fixture} {} {role} #{}: {why}",
                    node.id, exchange.request.attempt
                )),
            }
        }
    }
    let (applied, total) = totals
        .values()
        .fold((0, 0), |(a, t), (x, y)| (a + x, t + y));
    println!("| role | applied | answers | rate |\n|---|---|---|---|");
    for (role, (a, t)) in &totals {
        println!(
            "| {role} | {a} | {t} | {:.1}% |",
            100.0 * *a as f64 / *t as f64
        );
    }
    println!(
        "| all | {applied} | {total} | {:.1}% |",
        100.0 * applied as f64 / total.max(1) as f64
    );
    println!(
        "\ncorpus: {}",
        corpora
            .iter()
            .map(|(f, p)| format!("{f}: {}", p.strip_prefix(&root).unwrap_or(p).display()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !failures.is_empty() {
        println!("\nnot applied:");
        for f in failures {
            println!("- {}", f.lines().next().unwrap_or(""));
        }
    }
    // The goals of reports/apply-rate.md: at least 200 real answers, at least 98% applied.
    assert!(
        total >= 200,
        "the corpus holds {total} answers; at least 200 are needed"
    );
    assert!(
        applied * 100 >= total * 98,
        "{applied}/{total} answers applied, below the 98% goal"
    );
}
