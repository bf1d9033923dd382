//! Code-tools benchmark: symbol lookup over a generated 50-file repository (cold, and warm
//! through the index the debug loop keeps), the outline of one file, and the syntax check.
//!
//! `cargo bench --bench symbols` prints a Markdown table (copied into reports/symbols.md).
//! Under `cargo test` (no `--bench` argument) it runs each case once as a smoke test.

// A benchmark that cannot set up its input has nothing to report: panicking is the right exit.
#![allow(clippy::panic)]

use std::path::Path;

use zerorepo::symbols::check::check_source;
use zerorepo::symbols::outline::outline;
use zerorepo::symbols::repo::{SymbolIndex, find_symbol};

mod support;
use support::{median, ms};

/// One generated module: 8 functions and a class with 6 methods, about 120 lines, each file
/// with its own names plus a `helper` that every file defines.
fn module(i: usize) -> String {
    let mut text = format!("\"\"\"Module {i}.\"\"\"\nimport math\n\n\n");
    for f in 0..8 {
        text.push_str(&format!(
            "def func_{i}_{f}(values: list[float], scale: float = 1.0) -> float:\n    \"\"\"Scaled sum {f}.\"\"\"\n    total = 0.0\n    for v in values:\n        total += math.fabs(v) * scale\n    return total\n\n\n"
        ));
    }
    text.push_str(&format!("class Model{i}:\n    \"\"\"A model.\"\"\"\n\n"));
    for m in 0..6 {
        text.push_str(&format!(
            "    def method_{m}(self, x: int) -> int:\n        if x > {m}:\n            return x - {m}\n        return helper(x)\n\n"
        ));
    }
    text.push_str("\ndef helper(x):\n    return x\n");
    text
}

fn generate(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("pkg/sub{}", i / 10));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("{e}");
        }
        if let Err(e) = std::fs::write(dir.join(format!("mod_{i}.py")), module(i)) {
            panic!("{e}");
        }
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let runs = if bench { 51 } else { 1 };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    generate(dir.path(), 50);
    let root = dir.path();
    let expect = |query: &str, n: usize| {
        let found = find_symbol(root, query).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.len(), n, "{query}");
    };
    expect("Model17.method_3", 1);
    expect("func_17_3", 1);
    expect("helper", 50);

    println!("| case (50 files, 6,150 lines) | median of {runs} |\n|---|---|");
    let t = median(runs, || expect("func_17_3", 1));
    println!(
        "| find_symbol `func_17_3`, cold (no index: walk and read 50 files, parse the 1 that mentions it) | {} |",
        ms(t)
    );
    let t = median(runs, || expect("Model17.method_3", 1));
    println!(
        "| find_symbol `Model17.method_3`, cold (all 50 files define a `method_3`; the text filter parses only the one naming `Model17`) | {} |",
        ms(t)
    );
    let t = median(runs, || expect("helper", 50));
    println!(
        "| find_symbol `helper`, cold, defined in all 50 files (every file parsed) | {} |",
        ms(t)
    );
    let index = SymbolIndex::default();
    let warm = |query: &str, n: usize| {
        let found = index.find(root, query).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.len(), n, "{query}");
    };
    warm("helper", 50); // fills the index with every file
    let t = median(runs, || warm("Model17.method_3", 1));
    println!(
        "| find_symbol `Model17.method_3`, warm index (walk + stat 50 files, nothing parsed) | {} |",
        ms(t)
    );
    let t = median(runs, || warm("func_17_3", 1));
    println!("| find_symbol `func_17_3`, warm index | {} |", ms(t));
    let t = median(runs, || warm("helper", 50));
    println!("| find_symbol `helper`, warm index | {} |", ms(t));

    let source = module(17);
    let t = median(runs, || {
        let symbols = outline(&source).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(symbols.len(), 16);
    });
    println!(
        "| outline of one file (123 lines, 16 definitions) | {} |",
        ms(t)
    );
    let check_runs = if bench { 11 } else { 1 };
    let mut checker = String::new();
    let t = median(check_runs, || {
        let report = check_source(&source, "mod_17.py").unwrap_or_else(|e| panic!("{e}"));
        assert!(report.ok);
        checker = format!("{:?}", report.checker);
    });
    println!(
        "| syntax check of that file (tree-sitter + {checker}, median of {check_runs}) | {} |",
        ms(t)
    );
}
