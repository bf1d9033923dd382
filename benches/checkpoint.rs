//! Checkpoint benchmark: a journal of 10,000 and 100,000 node records, then
//! - **resume**: `Checkpoint::open` on it (read, check, rebuild the records, write the compact
//!   file if it differs), what `generate` does first on a rerun;
//! - **append one node**: `Checkpoint::record` of one more node (journal line, fsync, and the
//!   compact file), what every finished node costs.
//!
//! `cargo bench --no-default-features --bench checkpoint` prints a Markdown table (copied into
//! reports/checkpoint.md). Under `cargo test` (no `--bench` argument) it runs the 10,000-node
//! case once as a smoke test.

// A benchmark that cannot build its input has nothing to report: panicking is the right exit.
#![allow(clippy::panic)]

use std::io::Write;
use std::path::Path;

use zerorepo::checkpoint::Checkpoint;
use zerorepo::layout::JOURNAL;
use zerorepo::records::{NodeRecord, NodeStatus, TestCounts};

mod support;
use support::{median, ms};

const RPG: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A record like the engine's for a passed function node.
fn record() -> NodeRecord {
    let mut record = NodeRecord::now(NodeStatus::Passed);
    record.test_results = Some(TestCounts {
        passed: 4,
        failed: 0,
    });
    record.duration_ms = Some(41_000);
    record
}

/// A checkpoint directory whose journal holds `n` node records (written as the engine writes
/// them, one JSON line each, without `n` fsyncs).
fn journal(dir: &Path, n: usize) {
    let opened = Checkpoint::open(dir, RPG);
    if let Err(e) = opened {
        panic!("{e}");
    }
    let mut line = match serde_json::to_value(record()) {
        Ok(serde_json::Value::Object(map)) => map,
        other => panic!("a record is an object: {other:?}"),
    };
    line.insert("kind".into(), "node".into());
    let mut text = String::new();
    for i in 0..n {
        line.insert("node".into(), format!("n{i:06}").into());
        text.push_str(&serde_json::Value::Object(line.clone()).to_string());
        text.push('\n');
    }
    let mut file = match std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(JOURNAL))
    {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = file.write_all(text.as_bytes()) {
        panic!("{e}");
    }
}

fn peak_rss_mb() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().trim_end_matches(" kB").parse::<u64>().unwrap_or(0) / 1024)
        .map_or_else(|| "?".into(), |mb| format!("{mb} MiB"))
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if bench { &[10_000, 100_000] } else { &[10_000] };
    let runs = if bench { 5 } else { 1 };
    println!(
        "| journal entries | journal size | resume (open) | append one node | peak RSS so far |\n|---|---|---|---|---|"
    );
    for &n in sizes {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        journal(dir.path(), n);
        let size = std::fs::metadata(dir.path().join(JOURNAL)).map_or(0, |m| m.len());
        let resume = median(runs, || {
            if let Err(e) = Checkpoint::open(dir.path(), RPG) {
                panic!("{e}");
            }
        });
        let (mut checkpoint, _) = match Checkpoint::open(dir.path(), RPG) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let mut next = n;
        let append = median(runs, || {
            if let Err(e) = checkpoint.record(&format!("n{next:06}"), record()) {
                panic!("{e}");
            }
            next += 1;
        });
        println!(
            "| {n} | {:.1} MiB | {} | {} | {} |",
            size as f64 / 1_048_576.0,
            ms(resume),
            ms(append),
            peak_rss_mb()
        );
    }
}
