//! Validation benchmark: load, validate + order, and plan RPGs of 10,000 and 100,000 nodes in
//! three shapes that once made validation quadratic or overflow the stack:
//!
//! - `chain`: node i depends on node i-1 (as deep as the plan is long);
//! - `tree`: node i depends on node (i-1)/2 (a binary tree, 17 levels at 100,000);
//! - `wide`: every node depends on node 0 (one node with 100,000 dependents).
//!
//! Every shape also has a package composite over all leaves and one module composite per 100
//! leaves, so path containment (composites × nodes in the first version) is measured too.
//!
//! `cargo bench --no-default-features --bench validate` prints a Markdown table (copied into
//! reports/validate.md). Under `cargo test` (no `--bench` argument) it runs the 10,000-node
//! cases once as a smoke test.

// A benchmark that cannot build its input has nothing to report: panicking is the right exit.
#![allow(clippy::panic)]

use std::path::Path;

use zerorepo::rpg;
use zerorepo::schedule::plan;

mod support;
use support::{median, ms};

#[derive(Clone, Copy)]
enum Shape {
    Chain,
    Tree,
    Wide,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Tree => "tree",
            Shape::Wide => "wide",
        }
    }

    fn dependency_of(self, i: usize) -> Option<usize> {
        match (self, i) {
            (_, 0) => None,
            (Shape::Chain, i) => Some(i - 1),
            (Shape::Tree, i) => Some((i - 1) / 2),
            (Shape::Wide, _) => Some(0),
        }
    }
}

/// The RPG's JSON text: `n` leaves of the given shape, modules of 100 leaves, one package.
fn plan_json(n: usize, shape: Shape) -> String {
    let mut nodes = vec![serde_json::json!({
        "id": "pkg", "name": "pkg", "type": "package", "node_type": "composite",
        "file_path": "src/pkg", "subgraph_id": "core"
    })];
    for module in 0..n.div_ceil(100) {
        nodes.push(serde_json::json!({
            "id": format!("mod{module:04}"), "name": format!("m{module}"), "type": "module",
            "node_type": "composite", "file_path": format!("src/pkg/m{module}.py"),
            "subgraph_id": format!("s{}", module / 100)
        }));
    }
    for i in 0..n {
        let deps: Vec<String> = shape
            .dependency_of(i)
            .map(|d| format!("n{d:06}"))
            .into_iter()
            .collect();
        nodes.push(serde_json::json!({
            "id": format!("n{i:06}"), "name": format!("f{i}"), "type": "function",
            "node_type": "leaf", "file_path": format!("src/pkg/m{}.py", i / 100),
            "docstring": "Does one thing.", "dependencies": deps,
            "subgraph_id": format!("s{}", i / 10_000)
        }));
    }
    serde_json::json!({ "nodes": nodes }).to_string()
}

/// A memory figure of this process from /proc/self/status (`VmHWM:` the peak, `VmRSS:` now),
/// in MiB.
fn status_mb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

/// `--peak FILE`: read, load, validate and plan one plan in this fresh process (what
/// `zerorepo validate` does) and print its peak memory, so that each case's figure is its own.
fn peak(file: &Path) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => panic!("{e}"),
    };
    let parsed = match rpg::parse_str(&text, file) {
        Ok(rpg) => rpg,
        Err(e) => panic!("{e}"),
    };
    let valid = match rpg::validate(parsed) {
        Ok(valid) => valid,
        Err(e) => panic!("{e:?}"),
    };
    let plan = plan::build(&valid);
    assert_eq!(plan.total_nodes, valid.rpg().nodes.len());
    println!("{}", status_mb("VmHWM:"));
}

/// Each case's peak memory, measured in a child process (`--peak`) on the plan written to a
/// file.
fn peaks(sizes: &[usize]) {
    let (Ok(me), Ok(dir)) = (std::env::current_exe(), tempfile::tempdir()) else {
        return;
    };
    println!("\n| case | plan file | peak RSS of read + load + validate + plan |\n|---|---|---|");
    for &n in sizes {
        for shape in [Shape::Chain, Shape::Tree, Shape::Wide] {
            let file = dir.path().join(format!("{}-{n}.json", shape.name()));
            let text = plan_json(n, shape);
            if std::fs::write(&file, &text).is_err() {
                return;
            }
            let out = std::process::Command::new(&me)
                .arg("--peak")
                .arg(&file)
                .output();
            let peak = out
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            let size = text.len() as f64 / 1_048_576.0;
            println!("| {} {n} | {size:.1} MiB | {peak} MiB |", shape.name());
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(file) = args
        .iter()
        .position(|a| a == "--peak")
        .and_then(|at| args.get(at + 1))
    {
        peak(Path::new(file));
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if bench { &[10_000, 100_000] } else { &[10_000] };
    let runs = if bench { 5 } else { 1 };
    println!("| case | load JSON | validate + order | plan | total |\n|---|---|---|---|---|");
    for &n in sizes {
        for shape in [Shape::Chain, Shape::Tree, Shape::Wide] {
            let text = plan_json(n, shape);
            let path = Path::new("bench.json");
            let parsed = match rpg::parse_str(&text, path) {
                Ok(rpg) => rpg,
                Err(e) => panic!("{e}"),
            };
            let mut loaded = Vec::with_capacity(runs);
            let load = median(runs, || match rpg::parse_str(&text, path) {
                Ok(rpg) => loaded.push(rpg),
                Err(e) => panic!("the plan must load: {e}"),
            });
            drop(loaded);
            // `validate` takes the plan by value: clone it before the clock starts, and free
            // the results after it stops (the command line frees its plan once, at exit).
            let mut copies = vec![parsed.clone(); runs];
            let mut results = Vec::with_capacity(runs);
            let validate = median(runs, || {
                let Some(copy) = copies.pop() else {
                    panic!("one copy per run");
                };
                match rpg::validate(copy) {
                    Ok(valid) => results.push(valid),
                    Err(e) => panic!("the plan must validate: {e:?}"),
                }
            });
            drop(results);
            let valid = match rpg::validate(parsed.clone()) {
                Ok(valid) => valid,
                Err(e) => panic!("{e:?}"),
            };
            let planned = median(runs, || {
                let plan = plan::build(&valid);
                assert_eq!(plan.total_nodes, valid.rpg().nodes.len());
            });
            println!(
                "| {} {n} | {} | {} | {} | {} |",
                shape.name(),
                ms(load),
                ms(validate),
                ms(planned),
                ms(load + validate + planned)
            );
        }
    }
    peaks(sizes);
}
