//! Everything the command line prints for people, in one place, so the wording of every
//! command can be read and kept consistent together.
//!
//! Each function takes the value a command computed and returns its text: whole lines for
//! stdout, or an error message without the newline (`cli::main` prints it after `error: `).
//! `--json` prints that same value (`json`), so the text and the JSON never disagree. Texts that
//! the library also needs (a status report, a plan, a symbol view, a dependency view) keep
//! their `render_text` next to their data in the library.

use std::path::Path;

use serde::Serialize;

use super::error::CliError;
use super::validate::Invalid;
use crate::assemble::Assembly;
use crate::detect::Commands;
use crate::engine::Rollback;
use crate::localize::{SearchMethod, SearchResult};
use crate::pipeline::Summary;
use crate::rpg::{self, ValidRpg};
use crate::workspace::git::TAG_PREFIX;

/// `--json`: the value, pretty-printed, and a newline.
pub(crate) fn json(value: &impl Serialize) -> Result<String, CliError> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// `validate` of a valid RPG.
pub(crate) fn valid(path: &Path, valid: &ValidRpg) -> String {
    format!(
        "{}: valid ({} nodes, {} edges)\n",
        path.display(),
        valid.rpg().nodes.len(),
        valid.rpg().edges.len()
    )
}

/// Why an RPG was rejected, as the error message (no trailing newline: `main` adds it).
pub(crate) fn invalid(path: &Path, invalid: &Invalid) -> String {
    match invalid {
        Invalid::Load(e) => e.to_string(),
        Invalid::Rpg(errors) => format_errors(path, errors),
        Invalid::Out(problems) => problems.join("\n"),
    }
}

/// Validation errors, one per line under a header naming the file.
pub(crate) fn format_errors(path: &Path, errors: &[rpg::RpgError]) -> String {
    let mut text = format!(
        "{} is not a valid RPG ({} problem(s)):",
        path.display(),
        errors.len()
    );
    for error in errors {
        text.push_str(&format!("\n  - {error}"));
        // Long cycles come back shortened to both ends, so this stays a few lines.
        for line in error.details() {
            text.push_str(&format!("\n      {line}"));
        }
    }
    text
}

/// The end of `generate`: counts, time and output directory, then the assembled
/// repository's line when there is one.
pub(crate) fn generate_summary(generated: &Summary) -> String {
    let summary = &generated.nodes;
    let not_run = if summary.not_run > 0 {
        format!(", {} not run", summary.not_run)
    } else {
        String::new()
    };
    let reused = if summary.reused > 0 {
        format!(" ({} kept from the checkpoint)", summary.reused)
    } else {
        String::new()
    };
    let mut text = format!(
        "{}: {} of {} nodes passed, {} failed, {} skipped{not_run}{reused} in {:.1}s -> {}\n",
        if summary.interrupted {
            "interrupted"
        } else {
            "done"
        },
        summary.passed + summary.reused,
        summary.total,
        summary.failed,
        summary.skipped,
        summary.duration_ms as f64 / 1000.0,
        summary.out.display()
    );
    if let Some(assembly) = &generated.assembly {
        text.push_str(&assembly_line(assembly));
        text.push('\n');
    }
    text
}

/// One line on the assembled repository: install, tests, syntax, report.
pub(crate) fn assembly_line(assembly: &Assembly) -> String {
    let v = &assembly.validation;
    let install = if v.install.ok { "ok" } else { "FAILED" };
    let tests = match &v.tests {
        Some(t) => format!(
            "{}/{} passed in the {} sandbox",
            t.passed,
            t.passed + t.failed + t.errors,
            t.sandbox
        ),
        None => "no tests".into(),
    };
    let mut line = format!(
        "repository: pip install -e . {install}; pytest tests/ {tests}; {} of {} Python files compile; report in docs/generation_report.md",
        v.python_files - v.syntax_errors.len(),
        v.python_files
    );
    if !v.install.ok {
        line.push_str(&format!("\n  install: {}", v.install.detail));
    }
    line
}

/// `rollback`: where the output now is and what `generate` will redo.
pub(crate) fn rollback(dir: &Path, done: &Rollback) -> String {
    format!(
        "rolled {} back to {} (tag {TAG_PREFIX}{}); {} node(s) set back to pending, {} file(s) removed; run `zerorepo generate` again to redo them\n",
        dir.display(),
        done.commit,
        done.subgraph,
        done.reset_nodes.len(),
        done.removed_files.len()
    )
}

/// `detect`: per stack, the diagnostic command and the test, build and lint commands.
pub(crate) fn detect(dir: &Path, found: &[Commands]) -> String {
    if found.is_empty() {
        return format!(
            "{}: no Python, Node, Go or Rust project found\n",
            dir.display()
        );
    }
    let mut text = String::new();
    for c in found {
        text.push_str(&format!(
            "{:?}: diagnostic `{}`\n",
            c.stack, c.diagnostic_command
        ));
        for (what, cmd) in [
            ("test", &c.primary_test),
            ("build", &c.build),
            ("lint", &c.lint),
        ] {
            text.push_str(&format!("  {what:<5} {}\n", cmd.as_deref().unwrap_or("-")));
        }
    }
    text
}

/// `search`: a header with the scope and ranking, then one entry per hit.
pub(crate) fn search(result: &SearchResult) -> String {
    let scope = match &result.scope {
        Some(s) => format!("subgraph {s}"),
        None => "all subgraphs".into(),
    };
    let method = match result.method {
        SearchMethod::Embedding => "embedding similarity",
        SearchMethod::Lexical => "lexical, BM25",
    };
    let mut out = format!(
        "{:?} in {scope} ({method}): {} hit(s)\n",
        result.query,
        result.hits.len()
    );
    for hit in &result.hits {
        let node = &hit.node;
        let status = node
            .status
            .map(|s| {
                if node.failed {
                    "  [FAILED]".to_string()
                } else {
                    format!("  [{}]", s.as_str())
                }
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "{:>2}. {} {} [{}] {}  {}  score {:.3}{status}\n    {}\n",
            hit.rank,
            node.id,
            node.name,
            node.kind,
            node.subgraph,
            node.file_path.as_deref().unwrap_or("-"),
            hit.score,
            hit.snippet
        ));
    }
    out
}

/// `model pull` and `model path`: one model's file or directory.
pub(crate) fn model_path(path: &Path) -> String {
    format!("{}\n", path.display())
}

/// `sandbox build-image`: the tag of the image built.
pub(crate) fn built_image(tag: &str) -> String {
    format!("built {tag}\n")
}
