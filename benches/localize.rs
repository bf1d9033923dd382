//! Localization benchmark: top-5 search over 50 and 10,000 node descriptions (BM25, and cosine
//! over precomputed vectors), two-hop dependency traversal, and, when the embedder is pulled,
//! its throughput (node descriptions embedded per second) and the latency of one query.
//!
//! `cargo bench --bench localize` prints a Markdown table (copied into reports/localize.md).
//! Under `cargo test` (no `--bench` argument) it runs each case once, over 1,000 instead of
//! 10,000 synthetic nodes, as a smoke test, and does not load the embedder.

// A benchmark that cannot load its input has nothing to report: panicking is the right exit.
#![allow(clippy::panic)]

use std::path::PathBuf;
use std::time::Instant;

use zerorepo::llm::model;
use zerorepo::localize::{
    self, Embedder, EmbedderChoice, Index, Localizer, LocalizerOptions, Statuses, VectorIndex,
};
use zerorepo::rpg::{self, Rpg};

mod support;
use support::{median, ms};

const QUERIES: [&str; 5] = [
    "where is the mean computed",
    "parse the csv header",
    "normalize every column",
    "render a bar chart",
    "split into train and test",
];

/// The 50 functions of the master fixture.
fn ml_lib_leaves() -> Rpg {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ml_lib/rpg.json");
    let mut rpg = match rpg::load_file(&path) {
        Ok(rpg) => rpg,
        Err(e) => panic!("{e}"),
    };
    rpg.nodes.retain(|n| n.is_leaf());
    rpg
}

const VERBS: [&str; 12] = [
    "compute",
    "parse",
    "load",
    "render",
    "validate",
    "normalize",
    "merge",
    "split",
    "count",
    "format",
    "encode",
    "scale",
];
const NOUNS: [&str; 16] = [
    "mean",
    "header",
    "column",
    "chart",
    "matrix",
    "label",
    "batch",
    "token",
    "row",
    "median",
    "histogram",
    "vector",
    "record",
    "schema",
    "weight",
    "report",
];

/// `n` leaves with names and docstrings built from word lists, 20 subgraphs, and each leaf
/// depending on up to two leaves of the previous module (so two hops reach a few dozen nodes).
fn synthetic(n: usize) -> Rpg {
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let (verb, a, b) = (
            VERBS[i % VERBS.len()],
            NOUNS[(i / 3) % NOUNS.len()],
            NOUNS[(i / 7 + 5) % NOUNS.len()],
        );
        let module = i / 10;
        let deps: Vec<String> = [1usize, 4]
            .iter()
            .filter(|_| module > 0)
            .map(|k| format!("n{:05}", (module - 1) * 10 + (i + k) % 10))
            .collect();
        nodes.push(serde_json::json!({
            "id": format!("n{i:05}"), "name": format!("{verb}_{a}_{b}_{i}"), "type": "function",
            "node_type": "leaf", "file_path": format!("src/pkg/m{module}.py"),
            "docstring": format!("{verb} the {a} of every {b} in the input, module {module}."),
            "dependencies": deps, "subgraph_id": format!("s{:02}", i % 20)
        }));
    }
    match serde_json::from_value(serde_json::json!({"nodes": nodes})) {
        Ok(rpg) => rpg,
        Err(e) => panic!("{e}"),
    }
}

/// Deterministic pseudo-random unit vectors (xorshift), standing in for embeddings: the scan
/// costs the same whatever the numbers are.
fn random_vectors(n: usize, seed: u64) -> VectorIndex {
    let mut state = seed.max(1);
    let mut index = VectorIndex::new(localize::embed::DIM);
    let mut row = vec![0.0f32; localize::embed::DIM];
    for _ in 0..n {
        for x in row.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *x = (state % 2000) as f32 / 1000.0 - 1.0;
        }
        index.push(&row);
    }
    index
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let runs = if bench { 101 } else { 1 };
    println!("| case | median of {runs} |\n|---|---|");
    let small = ml_lib_leaves();
    // A tenth of the size under `cargo test`, where the debug build only has to prove it runs.
    let (size, large_label) = if bench {
        (10_000, "10,000 (synthetic)")
    } else {
        (1_000, "1,000 (synthetic)")
    };
    let large = synthetic(size);
    for (label, rpg) in [("50 (ml_lib functions)", &small), (large_label, &large)] {
        let n = rpg.nodes.len();
        let builds = if bench { 5 } else { 1 };
        let t = median(builds, || {
            let index = Index::build(rpg);
            assert!(!index.subgraphs().is_empty());
        });
        println!(
            "| build the BM25 index, {label} (median of {builds}) | {} |",
            ms(t)
        );
        let index = Index::build(rpg).with_vectors(random_vectors(n, 42));
        let mut q = 0;
        let t = median(runs, || {
            let hits = index.search_lexical(QUERIES[q % QUERIES.len()], 5, None);
            assert!(hits.len() <= 5);
            q += 1;
        });
        println!("| top-5 lexical search, {label} | {} |", ms(t));
        // Queries along single axes: any direction costs the same scan.
        let query_rows: Vec<Vec<f32>> = (0..QUERIES.len())
            .map(|i| {
                let mut v = vec![0.0; localize::embed::DIM];
                v[i] = 1.0;
                v
            })
            .collect();
        let mut q = 0;
        let t = median(runs, || {
            let hits = index.search_vector(&query_rows[q % query_rows.len()], 5, None);
            assert_eq!(hits.len(), 5.min(n));
            q += 1;
        });
        println!(
            "| top-5 cosine search (precomputed vectors), {label} | {} |",
            ms(t)
        );
        let t = median(runs, || {
            let hits = index.search_vector(&query_rows[0], 5, Some(3));
            assert!(hits.len() <= 5);
        });
        println!(
            "| top-5 cosine search in one subgraph, {label} | {} |",
            ms(t)
        );
        let options = LocalizerOptions {
            embedder: EmbedderChoice::Off,
            cache_dir: None,
            budget: u32::MAX,
        };
        let mut localizer = Localizer::new(rpg.clone(), Statuses::new(), options);
        let middle = rpg.nodes[n / 2].id.clone();
        let t = median(runs, || {
            let view = localizer.deps(&middle, 2);
            assert!(view.is_ok());
        });
        println!("| two-hop dependency view, {label} | {} |", ms(t));
    }
    if bench {
        embedder_figures(&large);
    }
}

/// Embedding throughput and query latency with the pulled model; skipped (and said so) when
/// it is absent.
fn embedder_figures(large: &Rpg) {
    let dir = model::embedder_dir();
    let mut embedder = match Embedder::load(&dir) {
        Ok(e) => e,
        Err(e) => {
            println!("| embedder | not measured: {e} |");
            return;
        }
    };
    let texts: Vec<String> = large
        .nodes
        .iter()
        .take(200)
        .map(localize::description)
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let start = Instant::now();
    if let Err(e) = embedder.embed(&refs) {
        panic!("{e}");
    }
    let elapsed = start.elapsed();
    println!(
        "| embed 200 node descriptions, one at a time | {} ({:.0} descriptions/s; 10,000 would take about {:.0} s) |",
        ms(elapsed),
        200.0 / elapsed.as_secs_f64(),
        10_000.0 * elapsed.as_secs_f64() / 200.0
    );
    let t = median(21, || {
        if let Err(e) = embedder.embed(&["where is the mean computed"]) {
            panic!("{e}");
        }
    });
    println!("| embed one query | {} |", ms(t));
    drop(embedder);
    // The index a debug loop builds: the 71 nodes of ml_lib, with an empty cache, then again
    // with every vector cached.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ml_lib/rpg.json");
    let Ok(rpg) = rpg::load_file(&path) else {
        panic!("cannot load {}", path.display());
    };
    let Ok(cache) = tempfile::tempdir() else {
        panic!("no temp dir");
    };
    for label in ["empty cache", "warm cache"] {
        let options = LocalizerOptions {
            embedder: EmbedderChoice::Default,
            cache_dir: Some(cache.path().to_path_buf()),
            budget: u32::MAX,
        };
        let start = Instant::now();
        let localizer = Localizer::new(rpg.clone(), Statuses::new(), options);
        let elapsed = start.elapsed();
        assert_eq!(localizer.method(), localize::SearchMethod::Embedding);
        println!(
            "| build the embedding index of ml_lib (71 nodes, model load included), {label} | {} |",
            ms(elapsed)
        );
    }
}
