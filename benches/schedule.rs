//! Scheduling benchmark: load + validate + order the fixtures and a synthetic 10,000-node RPG,
//! and drain the pure dependency queue over 10,000 integer jobs.
//!
//! `cargo bench --bench schedule` prints a Markdown table (copied into reports/schedule.md).
//! Under `cargo test` (no `--bench` argument) it runs each case once as a smoke test.

// A benchmark that cannot load its input has nothing to report: panicking is the right exit.
#![allow(clippy::panic)]

use std::path::PathBuf;

use zerorepo::rpg::{self, Rpg};
use zerorepo::schedule::{DependencyQueue, JobOutcome};

mod support;
use support::median;

fn fixture(name: &str) -> Rpg {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .join("rpg.json");
    match rpg::load_file(&path) {
        Ok(rpg) => rpg,
        Err(e) => panic!("{e}"),
    }
}

/// A layered RPG: `n` leaves in modules of 10, each depending on up to 3 leaves of earlier modules.
fn synthetic(n: usize) -> Rpg {
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let module = i / 10;
        let deps: Vec<serde_json::Value> = (1..=3)
            .filter(|k| module >= *k)
            .map(|k| serde_json::json!(format!("n{:05}", (module - k) * 10 + (i * 7 + k) % 10)))
            .collect();
        nodes.push(serde_json::json!({
            "id": format!("n{i:05}"), "name": format!("f{i}"), "type": "function", "node_type": "leaf",
            "file_path": format!("src/pkg/m{module}.py"), "docstring": "Does one thing.",
            "dependencies": deps, "subgraph_id": format!("s{}", module / 100)
        }));
    }
    match serde_json::from_value(serde_json::json!({"nodes": nodes})) {
        Ok(rpg) => rpg,
        Err(e) => panic!("{e}"),
    }
}

fn drain_chain_of_layers(n: usize) {
    let deps = (0..n)
        .map(|j| {
            if j < 10 {
                vec![]
            } else {
                vec![j - 10, j - 1 - (j % 10)]
            }
        })
        .collect();
    let mut queue = DependencyQueue::new(deps, 4);
    let mut done = 0;
    while done < n {
        let mut started = Vec::new();
        while let Some(job) = queue.next_ready() {
            started.push(job);
        }
        for job in started {
            queue.finish(job, JobOutcome::Passed);
            done += 1;
        }
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let runs = if bench { 21 } else { 1 };
    let cases: Vec<(&str, Rpg)> = vec![
        ("subgraphs20 (31 nodes)", fixture("subgraphs20")),
        ("ml_lib (71 nodes)", fixture("ml_lib")),
        ("synthetic (10,000 nodes)", synthetic(10_000)),
    ];
    println!("| case | validate + order (median of {runs}) |\n|---|---|");
    for (name, rpg) in cases {
        let t = median(runs, || {
            let valid = rpg::validate(rpg.clone());
            assert!(valid.is_ok(), "{name} must validate");
        });
        println!("| {name} | {:.3} ms |", t.as_secs_f64() * 1000.0);
    }
    let t = median(runs, || drain_chain_of_layers(10_000));
    println!(
        "| dependency queue: drain 10,000 jobs, limit 4 | {:.3} ms |",
        t.as_secs_f64() * 1000.0
    );
}
