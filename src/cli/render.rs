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
use crate::eval::{CaseOutcome, Evaluation, Tally};
use crate::localize::{SearchMethod, SearchResult};
use crate::pipeline::Summary;
use crate::rpg::{self, ValidRpg};
use crate::workspace::git::TAG_PREFIX;

/// `--json`: the value, pretty-printed, and a newline.
pub(crate) fn json(value: &impl Serialize) -> Result<String, CliError> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// A text for the terminal that shows plan or model text (a plan, a status): every control
/// character but the newline and the tab, and every Unicode bidirectional control, escaped as
/// `\u{..}`, so nothing a plan or a model wrote can move the cursor, retitle the window or
/// reorder what the user reads.
pub(crate) fn terminal(text: &str) -> String {
    rpg::terminal_safe(text).into_owned()
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

/// What `rpg extract` wrote and what it left out (stderr: stdout stays free for `--json`).
pub(crate) fn extracted(out: &Path, summary: &crate::rpg::extract::ExtractSummary) -> String {
    let mut text = format!(
        "{}: {} package(s), {} module(s), {} function(s), {} class(es), {} data, {} edge(s), {} example(s)\n",
        out.display(),
        summary.packages,
        summary.modules,
        summary.functions,
        summary.classes,
        summary.data,
        summary.edges,
        summary.examples
    );
    for dropped in &summary.dropped_edges {
        text += &format!(
            "dropped edge {} -> {} (a call): it would close a cycle, {} already depending on {} ({})\n",
            dropped.source,
            dropped.target,
            dropped.target,
            dropped.source,
            dropped.cycle.join(" -> ")
        );
    }
    for skipped in &summary.skipped {
        text += &format!("skipped {}: {}\n", skipped.name, skipped.reason);
    }
    terminal(&text)
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
    let review = if summary.needs_review > 0 {
        format!("{} need review, ", summary.needs_review)
    } else {
        String::new()
    };
    let mut text = format!(
        "{}: {} of {} nodes passed, {review}{} failed, {} skipped{not_run}{reused} in {:.1}s -> {}\n",
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
    if let Some(work) = summary.work.render() {
        text.push_str(&work);
        text.push('\n');
    }
    if !generated.integration.is_empty() {
        let parts: Vec<String> = generated
            .integration
            .iter()
            .map(|r| match &r.problem {
                Some(_) if r.cases == 0 => format!("{} no test", r.subgraph),
                _ => format!(
                    "{} {}/{} cases{}",
                    r.subgraph,
                    r.passed,
                    r.cases,
                    debugged_part(&r.debugged)
                ),
            })
            .collect();
        text.push_str(&format!("integration tests: {}\n", parts.join(", ")));
    }
    if let Some(assembly) = &generated.assembly {
        text.push_str(&assembly_line(assembly));
        text.push('\n');
    }
    text
}

/// ` (N debugged, M fixed)` for an integration test whose failing cases went to diagnosis.
fn debugged_part(debugged: &[crate::records::FlowDebug]) -> String {
    match debugged.len() {
        0 => String::new(),
        n => format!(
            " ({n} debugged, {} fixed)",
            debugged.iter().filter(|d| d.fixed).count()
        ),
    }
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
    let d = &assembly.dependencies;
    let dependencies = match d.checked {
        0 => String::new(),
        checked => format!("; {} of {checked} planned dependencies used", d.used),
    };
    let lint = match &v.lint {
        Some(l) if l.problem.is_none() => match assembly.cleanup.fixes() {
            0 => format!("; ruff: {} finding(s)", l.findings.len()),
            fixed => format!(
                "; ruff: {} finding(s) ({fixed} fixed in the sandbox)",
                l.findings.len()
            ),
        },
        _ => String::new(),
    };
    let mut line = format!(
        "repository: pip install -e . {install}; pytest tests/ {tests}; {} of {} Python files compile{lint}{dependencies}; report in docs/generation_report.md",
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

/// How many tests that did not pass `eval` lists in text; `--json` has them all.
const EVAL_LISTED: usize = 20;

/// `eval`: the overall figure, then tables per subgraph, per node and per file, then the
/// tests that did not pass, each with its node and pytest's reason.
pub(crate) fn eval(e: &Evaluation) -> String {
    let place = if e.sandbox == "none" {
        "outside any sandbox (--sandbox none: nothing isolated)".to_string()
    } else {
        format!("in the {} sandbox", e.sandbox)
    };
    let mut text = format!(
        "reference tests: {} of {} passed ({}), {} failed, {} errors, {} skipped, {place}\n  {} against {}\n",
        e.overall.passed,
        e.overall.total,
        rate(&e.overall),
        e.overall.failed,
        e.overall.errors,
        e.overall.skipped,
        e.reference,
        e.out,
    );
    let subgraphs = e.subgraphs.iter().map(|s| vec![s.subgraph.clone()]);
    text.push_str(&eval_table(
        &["subgraph"],
        subgraphs.zip(e.subgraphs.iter().map(|s| &s.tally)),
    ));
    let nodes = e.nodes.iter().map(|n| {
        let status = n.status.map_or("-", |s| s.as_str());
        vec![
            n.id.to_string(),
            n.name.clone(),
            n.subgraph.clone(),
            status.to_string(),
        ]
    });
    let node_tallies = e.nodes.iter().map(|n| &n.tally);
    text.push_str(&eval_table(
        &["node", "name", "subgraph", "status"],
        nodes.zip(node_tallies),
    ));
    let files = e.files.iter().map(|f| vec![f.file.clone()]);
    text.push_str(&eval_table(
        &["file"],
        files.zip(e.files.iter().map(|f| &f.tally)),
    ));
    text.push_str(&eval_notes(e));
    if let Some(d) = &e.disputes {
        text.push_str(&disputes(d));
    }
    if let Some(d) = &e.decisions {
        text.push_str(&decisions(d));
    }
    text
}

/// The loop's departures from the greedy answer, scored by the reference, per kind.
fn decisions(d: &crate::eval::Decisions) -> String {
    let mut text = format!(
        "
nodes that kept other code than the greedy answer: {} (reference tests kept / greedy)
",
        d.nodes.len()
    );
    for n in &d.nodes {
        text.push_str(&format!(
            "  {:<28} {:<12} {:>3} / {:<3} of {}
",
            n.node, n.kind, n.kept, n.greedy, n.total
        ));
    }
    text.push_str(&format!(
        "  {:<15} {:>7} {:>7} {:>7} {:>7}
",
        "decision", "better", "worse", "same", "gained"
    ));
    for row in &d.matrix {
        text.push_str(&format!(
            "  {:<15} {:>7} {:>7} {:>7} {:>7}
",
            row.kind, row.better, row.worse, row.same, row.tests_gained
        ));
    }
    text
}

/// The vote's confusion matrix: decisions against what the reference says of each test.
fn disputes(d: &crate::eval::Disputes) -> String {
    let mut text = format!(
        "\ndisputed tests judged by the reference implementation: {}\n  {:<15} {:>10} {:>10} {:>8}\n",
        d.tests.len(),
        "decision",
        "test right",
        "test wrong",
        "unknown"
    );
    for row in &d.matrix {
        text.push_str(&format!(
            "  {:<15} {:>10} {:>10} {:>8}\n",
            row.decision, row.test_right, row.test_wrong, row.unknown
        ));
    }
    text
}

/// Rows of leading text columns and a tally, as an aligned table after a blank line.
fn eval_table<'a>(head: &[&str], rows: impl Iterator<Item = (Vec<String>, &'a Tally)>) -> String {
    let mut lines: Vec<Vec<String>> = vec![
        head.iter()
            .chain(&["passed", "total", "rate"])
            .map(|h| h.to_string())
            .collect(),
    ];
    for (mut cells, tally) in rows {
        cells.extend([
            tally.passed.to_string(),
            tally.total.to_string(),
            rate(tally),
        ]);
        lines.push(cells);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l.get(c).map_or(0, String::len))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::from("\n");
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                if c < head.len() {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

/// The files that did not run, the tests that did not pass, and what the reference leaves out.
fn eval_notes(e: &Evaluation) -> String {
    let mut text = String::new();
    let mut problems = Vec::new();
    for file in &e.files {
        if let Some(problem) = &file.problem {
            text.push_str(&format!("\n{}: {problem}\n", file.file));
            problems.push((file.file.as_str(), problem.as_str()));
        }
    }
    // A test that shares its file's problem is in the line above, not one line per test.
    let of_file = |t: &&crate::eval::TestResult| {
        problems.contains(&(t.file.as_str(), t.reason.as_deref().unwrap_or_default()))
    };
    let not_passed: Vec<_> = e
        .tests
        .iter()
        .filter(|t| t.outcome != CaseOutcome::Passed && !of_file(t))
        .collect();
    if !not_passed.is_empty() {
        let shown = not_passed.len().min(EVAL_LISTED);
        text.push_str(&format!(
            "\nnot passed ({shown} of {} listed):\n",
            not_passed.len()
        ));
        for t in &not_passed[..shown] {
            let node = t.node.as_deref().map_or_else(String::new, |id| {
                let name = e.nodes.iter().find(|n| n.id == id).map_or("", |n| &n.name);
                format!("  [{id} {name}]")
            });
            let outcome = match t.outcome {
                CaseOutcome::Failed => "failed",
                CaseOutcome::Error => "error",
                CaseOutcome::Skipped => "skipped",
                CaseOutcome::Passed => "passed",
            };
            let reason: String = t
                .reason
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(120)
                .collect();
            text.push_str(&format!(
                "  {}::{}{node}  {outcome}: {reason}\n",
                t.file, t.test
            ));
        }
    }
    let unattributed = e.tests.iter().filter(|t| t.node.is_none()).count();
    if unattributed > 0 {
        text.push_str(&format!(
            "\n{unattributed} test(s) name no leaf of the plan: counted in their file and overall only\n"
        ));
    }
    if !e.untested_leaves.is_empty() {
        text.push_str(&format!(
            "\n{} leaf node(s) have no reference test: {}\n",
            e.untested_leaves.len(),
            e.untested_leaves.join(", ")
        ));
    }
    text
}

/// `97.4%`, or `-` when there is no test.
fn rate(tally: &Tally) -> String {
    tally
        .pass_rate
        .map_or_else(|| "-".into(), |r| format!("{:.1}%", r * 100.0))
}

/// `eval` stopped by Ctrl-C: nothing to report, nothing to clean up by hand.
pub(crate) fn eval_interrupted() -> String {
    "eval: interrupted; no figure (the scratch copy was removed, the output directory is untouched)\n".into()
}

/// `code`: the plan as a tree, each task with its risk and why. The model wrote the plan, so
/// it reaches the terminal escaped ([`terminal`]).
pub(crate) fn code_plan(reviewed: &crate::change::Reviewed) -> String {
    let tasks = &reviewed.plan.tasks;
    let mut out = format!("Plan ({} task{}):\n", tasks.len(), plural(tasks.len()));
    for (i, task) in tasks.iter().enumerate() {
        let last = i + 1 == tasks.len();
        let (branch, stem) = if last {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let target = task
            .path
            .as_deref()
            .or(task.command.as_deref())
            .unwrap_or_default();
        let risk = reviewed.risks.get(i);
        let level = risk.map_or(task.risk.as_str(), |r| r.risk.as_str());
        out.push_str(&format!(
            "{branch} {} {} {target}  [{level}]",
            task.id,
            task.kind.as_str()
        ));
        if !task.depends_on.is_empty() {
            let after: Vec<String> = task.depends_on.iter().map(|d| d.to_string()).collect();
            out.push_str(&format!("  after {}", after.join(", ")));
        }
        out.push('\n');
        for line in task.description.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("{stem}  {line}\n"));
        }
        if let Some(risk) = risk.filter(|r| !r.reasons.is_empty()) {
            out.push_str(&format!("{stem}  risk: {}\n", risk.reasons.join("; ")));
        }
    }
    terminal(&out)
}

/// `code`: what happened, the diff of a dry run, and where the audit trail is; escaped, as
/// the diff, the checks and the reason carry the model's and the repository's text.
pub(crate) fn code_outcome(outcome: &crate::change::Outcome) -> String {
    use crate::change::Status;
    let mut out = String::new();
    if let Some(check) = &outcome.diagnosis {
        let state = if check.passed { "passed" } else { "failed" };
        out.push_str(&format!(
            "diagnostic `{}` {state} before the change\n",
            check.command
        ));
    }
    if let Some(plan) = &outcome.plan {
        out.push_str(&code_plan(plan));
    }
    if outcome.status == Status::DryRun {
        for file in &outcome.files {
            out.push_str(&file.diff);
        }
    }
    for check in &outcome.checks {
        let state = match (check.unavailable, check.passed) {
            (true, _) => "not available in the sandbox",
            (false, true) => "passed",
            (false, false) => "failed",
        };
        out.push_str(&format!("check `{}` {state}\n", check.command));
    }
    for example in &outcome.examples {
        let why = example.why.as_deref().map(|w| format!(": {w}"));
        out.push_str(&format!(
            "example {} {}{}\n",
            example.example,
            example.status,
            why.unwrap_or_default()
        ));
    }
    let files: Vec<&str> = outcome.files.iter().map(|f| f.path.as_str()).collect();
    // A test file left to the checks may have been changed by a correction since.
    for left in outcome
        .left
        .iter()
        .filter(|l| !files.contains(&l.path.as_str()))
    {
        out.push_str(&format!("not changed: {} ({})\n", left.path, left.why));
    }
    let headline = match outcome.status {
        Status::Committed => format!(
            "written: {} ({} correction round{})",
            files.join(", "),
            outcome.corrections,
            plural(outcome.corrections as usize)
        ),
        Status::DryRun => format!("dry run, verified, nothing written: {}", files.join(", ")),
        Status::Planned => "plan written; nothing was run".to_string(),
        Status::NothingToDo => "nothing to do: the diagnostic already passes".to_string(),
        Status::RolledBack | Status::Declined | Status::Interrupted => {
            format!(
                "nothing written: {}",
                outcome.reason.as_deref().unwrap_or("stopped")
            )
        }
    };
    out.push_str(&headline);
    out.push('\n');
    if let Some(commit) = &outcome.git_commit {
        out.push_str(&format!("git commit {commit}\n"));
    }
    out.push_str(&format!(
        "tokens: {} prompt, {} generated\n",
        outcome.usage.prompt_tokens, outcome.usage.completion_tokens
    ));
    if let Some(history) = &outcome.history {
        out.push_str(&format!("audit trail: {}\n", history.display()));
    }
    terminal(&out)
}

/// `history`: one line per action, runs separated; escaped, as the trail is a file of the
/// repository and may have been written by anyone.
pub(crate) fn history(repo: &Path, entries: &[crate::change::audit::AuditEntry]) -> String {
    if entries.is_empty() {
        return format!("{}: no `zerorepo code` runs recorded\n", repo.display());
    }
    let mut out = String::new();
    let mut run = "";
    for entry in entries {
        if entry.run != run {
            run = &entry.run;
            out.push_str(&format!("run {run}\n"));
        }
        let task = match (entry.action.as_str(), entry.task.as_deref()) {
            (_, None) => String::new(),
            ("task", Some(t)) => format!(" {t}"),
            (_, Some(t)) => format!(" task {t}"),
        };
        let detail = entry.detail.lines().next().unwrap_or_default();
        out.push_str(&format!(
            "  {} {}{task}: {} {detail}\n",
            entry.at.format("%H:%M:%S"),
            entry.action,
            entry.outcome
        ));
    }
    terminal(&out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `zerorepo view --references` as text: one use a line, `file:line:column  role  text`.
pub(crate) fn references(found: &crate::symbols::repo::References) -> String {
    let mut out = format!(
        "{} use(s) of `{}` ({}{})\n",
        found.references.len(),
        terminal(&found.name),
        found.backend,
        if found.approximate {
            ", by name: approximate"
        } else {
            ""
        }
    );
    if let Some(note) = &found.note {
        out.push_str(&format!("note: {}\n", terminal(note)));
    }
    for r in &found.references {
        out.push_str(&format!(
            "{}:{}:{}  {}  {}\n",
            terminal(&r.file.display().to_string()),
            r.line,
            r.column,
            r.role,
            terminal(&r.text)
        ));
    }
    out
}

/// `zerorepo rename` as text: what was renamed, and the edits in each file.
pub(crate) fn renamed(result: &crate::symbols::refactor::RenameResult) -> String {
    let mut out = format!(
        "renamed `{}` to `{}` ({}{})\n",
        terminal(&result.old_name),
        terminal(&result.new_name),
        result.backend,
        if result.approximate {
            ", by name: approximate"
        } else {
            ""
        }
    );
    for file in &result.files {
        out.push_str(&format!(
            "  {}: {} edit(s)\n",
            terminal(&file.file.display().to_string()),
            file.edits
        ));
    }
    out
}
