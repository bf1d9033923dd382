//! `docs/generation_report.md` in the layout of the seed's template (summary, subgraphs,
//! failed nodes, tests, performance, validation, recommendations) and `test_results.xml`
//! (JUnit) from the validation run. Pure: every number comes in through [`ReportInput`].
//!
//! "Root cause" is read from the last failure message by a few fixed rules and says so; it is
//! a hint for the reader, not a diagnosis.

use super::GenerationInfo;
use super::markdown::{code, fenced, line as md};
use super::project::ProjectInfo;
use super::validate::Validation;
use crate::records::NodeRecords;
use crate::records::{NodeStatus, Verdict};
use crate::rpg::ValidRpg;
use crate::status::{StatusReport, percent};
use crate::workspace::git::LogEntry;

pub struct ReportInput<'a> {
    pub rpg: &'a ValidRpg,
    pub records: &'a NodeRecords,
    pub status: &'a StatusReport,
    pub info: &'a ProjectInfo,
    pub generation: &'a GenerationInfo,
    pub validation: &'a Validation,
    pub cycles: &'a [Vec<String>],
    pub dependencies: &'a super::deps::DependencyCheck,
    pub cleanup: &'a super::cleanup::Cleanup,
    pub git_log: &'a [LogEntry],
    pub out: &'a str,
    pub integration: &'a [crate::records::IntegrationRecord],
}

/// (root cause, recommendation) for a failure message.
pub(super) fn diagnose(reason: &str) -> (&'static str, &'static str) {
    let has = |needle: &str| reason.contains(needle);
    if has("ModuleNotFoundError") || has("ImportError") {
        (
            "an import failed (missing package or wrong module path)",
            "Add the package to requirements.txt or fix the import",
        )
    } else if has("timed out") || has("killed by") {
        (
            "the tests hit a sandbox limit (time, memory or processes)",
            "Look for unbounded loops or heavy work; raise --test-timeout if it is legitimate",
        )
    } else if has("cut off") || has("no `def") || has("could not be used") || has("SyntaxError") {
        (
            "the model's answers could not be applied",
            "Re-run with a stronger model (`--llm openai:MODEL,local`)",
        )
    } else if has("collected no tests") {
        (
            "no usable tests were written",
            "Add examples to the node's docstring so tests can be derived",
        )
    } else if has("assert") || has("Error") {
        (
            "the implementation's results differ from what the tests expect",
            "Manual review of the logic against the specification",
        )
    } else {
        ("not classified", "Manual review")
    }
}

fn ok_mark(ok: bool) -> &'static str {
    if ok { "✅" } else { "❌" }
}

pub fn generation_report(input: &ReportInput) -> String {
    let o = &input.status.overall;
    let g = input.generation;
    let mut text = format!(
        "# Code Generation Report\n\n**Generated**: {}\n**Phase**: 4 (Graph-Guided Code Generation)\n\
         **RPG Input**: docs/rpg.json\n**Repository Output**: {}\n**Engine**: {}\n**Model**: {}\n\
         **Sandbox**: {}\n\n## Summary\n\n- **Total Nodes Planned**: {}\n- **Nodes Passed**: {} ({})\n\
         - **Nodes Needing Review**: {} ({})\n- **Nodes Failed**: {} ({})\n\
         - **Nodes Skipped**: {} ({})\n",
        g.finished_at,
        input.out,
        g.engine,
        g.model,
        g.sandbox,
        o.total,
        o.passed,
        percent(o.passed, o.total),
        o.needs_review,
        percent(o.needs_review, o.total),
        o.failed,
        percent(o.failed, o.total),
        o.skipped,
        percent(o.skipped, o.total),
    );
    if o.pending + o.in_progress > 0 {
        text.push_str(&format!(
            "- **Nodes Not Run**: {}\n",
            o.pending + o.in_progress
        ));
    }
    text.push_str("\n## Breakdown by Subgraph\n\n| Subgraph | Nodes | Passed | Review | Failed | Skipped | Pass Rate |\n|----------|-------|--------|--------|--------|---------|-----------|\n");
    for (name, c) in &input.status.subgraphs {
        let rate = if c.skipped == c.total && c.total > 0 {
            "N/A (skipped)".to_string()
        } else {
            percent(c.passed, c.total)
        };
        text.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {rate} |\n",
            c.total, c.passed, c.needs_review, c.failed, c.skipped
        ));
    }
    text.push_str(&failed_nodes(input));
    text.push_str(&diagnoses(input));
    text.push_str(&debugging(input));
    text.push_str(&test_results(input));
    text.push_str(&planned_dependencies(input.dependencies));
    text.push_str(&performance(input));
    text.push_str(&validation(input));
    text.push_str(&git_history(input));
    text.push_str(&recommendations(input));
    text
}

fn failed_nodes(input: &ReportInput) -> String {
    let mut text = String::from("\n## Failed Nodes (detail)\n");
    let mut skipped = Vec::new();
    let mut review = Vec::new();
    let mut any = false;
    for f in &input.status.failed {
        let name = input
            .rpg
            .rpg()
            .nodes
            .iter()
            .find(|n| n.id == f.id)
            .map_or(String::new(), |n| md(&n.name));
        let (id, reason) = (md(&f.id), md(&f.reason));
        if f.status == NodeStatus::Skipped {
            skipped.push(format!("- {id}: {name} ({reason})"));
            continue;
        }
        if f.status == NodeStatus::NeedsReview {
            review.push(format!("- {id}: {name} ({reason})"));
            continue;
        }
        any = true;
        let (cause, advice) = diagnose(&f.reason);
        text.push_str(&format!(
            "\n### {}: {name}\n- **Failure Reason**: {}\n- **Debug Iterations**: {}\n\
             - **Root Cause** (read from the last failure): {cause}\n- **Recommendation**: {advice}\n",
            id, reason, f.retry_count
        ));
    }
    if !any {
        text.push_str("\nNo node failed.\n");
    }
    if !review.is_empty() {
        text.push_str(&format!(
            "\n### Nodes needing review\n\nTheir code passes the specification's examples and \
             the module's earlier tests and is kept; the model-written tests listed failed \
             against it, and nothing showed which side is wrong.\n\n{}\n",
            review.join("\n")
        ));
    }
    if !skipped.is_empty() {
        text.push_str(&format!("\n### Skipped nodes\n\n{}\n", skipped.join("\n")));
    }
    text
}

/// Every vote on disputed tests: the letters, what they decided, and each disputed test with
/// the end of what the kept code did in it, so a reader can check the decision.
fn diagnoses(input: &ReportInput) -> String {
    let mut text = String::new();
    for node in &input.rpg.rpg().nodes {
        let Some(d) = input
            .records
            .get(&node.id)
            .and_then(|r| r.diagnosis.as_ref())
        else {
            continue;
        };
        let letters: String = d.votes.iter().map(|v| v.letter()).collect();
        let evidence = d
            .evidence
            .map_or("none".to_string(), |v| v.letter().to_string());
        let outcome = match d.outcome {
            Some(Verdict::Implementation) => "A, the implementation: one fix",
            Some(Verdict::Test) => "B, the tests: written again, dropped where still failing",
            Some(Verdict::Environment) => "C, the environment: skipped",
            None => "no majority: needs review",
        };
        text.push_str(&format!(
            "\n### {}: {}\n- **Votes**: {} from the model, {} from execution\n- **Decision**: {outcome}\n",
            md(&node.id),
            md(&node.name),
            if letters.is_empty() { "none".into() } else { letters },
            evidence
        ));
        for t in &d.disputed {
            let tail: Vec<&str> = t.output.lines().rev().take(6).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            text.push_str(&format!(
                "- {}, what the code did:\n\n{}\n",
                code(&t.name),
                fenced("text", &tail.join("\n"))
            ));
        }
    }
    if text.is_empty() {
        return text;
    }
    format!(
        "\n## Disputed Tests (diagnosis by vote)\n\nModel-written tests that failed against code \
         passing the specification's examples and the module's earlier tests. Five model votes \
         and one of execution evidence: A the implementation, B the test, C the environment; \
         three and a plurality decide.\n{text}"
    )
}

/// Where each fix looked first: the run's figures, then every fix with its suspects.
fn debugging(input: &ReportInput) -> String {
    let Some(line) = input.status.debugging.render() else {
        return String::new();
    };
    let mut text = format!(
        "\n## Debugging (localization before each fix)\n\n{line}.\n\nSuspects are ranked by the \
         traceback's frames in the generated sources (innermost first), then the function being \
         fixed, then the dependencies (two hops) that the failure names, then a search of the \
         plan's descriptions for the failure's error lines. Code outside the fixed function is \
         shown to the fix when the traceback or a named dependency points at it.\n\n\
         | Node | Attempt | Queries | Suspects, best first | Edited |\n|---|---|---|---|---|\n"
    );
    for node in &input.rpg.rpg().nodes {
        let Some(record) = input.records.get(&node.id) else {
            continue;
        };
        for fix in &record.localizations {
            let suspects: Vec<String> = fix
                .suspects
                .iter()
                .map(|s| format!("{} ({})", code(&s.symbol), s.reason.as_str()))
                .collect();
            text.push_str(&format!(
                "| {}: {} | {} | {} | {} | {} |\n",
                md(&node.id),
                md(&node.name),
                fix.attempt,
                fix.queries,
                suspects.join(", "),
                code(&fix.edited)
            ));
        }
    }
    text
}

fn test_results(input: &ReportInput) -> String {
    let mut text = String::from("\n## Test Results\n\n");
    match &input.validation.tests {
        Some(t) => {
            let total = t.passed + t.failed + t.errors;
            text.push_str(&format!(
                "- **Unit Tests** (`pytest tests/` in the {} sandbox after assembly): {total} \
                 collected, {} passing ({})\n",
                t.sandbox,
                t.passed,
                percent(t.passed as usize, total as usize)
            ));
            if let Some(problem) = &t.problem {
                text.push_str(&format!("- **Problem**: {}\n", md(problem)));
            }
        }
        None => text.push_str("- **Unit Tests**: none (no `tests/` directory)\n"),
    }
    let (passed, failed) = input
        .records
        .values()
        .filter_map(|r| r.test_results)
        .fold((0, 0), |(p, f), c| (p + c.passed, f + c.failed));
    text.push_str(&format!(
        "- **Per-node runs** (last run of each node during generation): {passed} passed, {failed} failed\n"
    ));
    text.push_str(&integration(input.integration));
    let flaky: Vec<String> = input
        .rpg
        .rpg()
        .nodes
        .iter()
        .filter_map(|n| Some((n, input.records.get(&n.id)?)))
        .flat_map(|(n, r)| {
            r.flaky
                .iter()
                .map(move |t| format!("{} ({})", code(t), md(&n.id)))
        })
        .collect();
    text.push_str(&match flaky.is_empty() {
        true => "- **Flaky tests**: none seen (a failed run is repeated once on identical code \
                 after a timeout or a sandbox limit, or when that code passed before)\n"
            .to_string(),
        false => format!(
            "- **Flaky tests** (failed, then passed on identical code; nothing fixed them): {}\n",
            flaky.join(", ")
        ),
    });
    text
}

/// The subgraphs' integration tests: cases, the 80% threshold, and each case taken out.
fn integration(records: &[crate::records::IntegrationRecord]) -> String {
    if records.is_empty() {
        return "- **Integration Tests**: none: a subgraph gets one when two or more of its \
                functions joined by a dependency passed their gates (passed or need review)\n"
            .to_string();
    }
    let mut text = String::from(
        "- **Integration Tests** (one per subgraph, through its functions that passed their \
         gates; data flows from its entry functions to its exit functions; 80% of the cases \
         must pass; a failing case is diagnosed by vote, a fault of the code debugged in the \
         function it points at, and a case that still fails is taken out of the file and \
         listed):\n",
    );
    for r in records {
        let line = match &r.problem {
            Some(problem) if r.cases == 0 => format!("no test: {}", md(problem)),
            _ => format!(
                "{} of {} cases passed ({}){}",
                r.passed,
                r.cases,
                match r.threshold_met {
                    true => "threshold met",
                    false => "below the 80% threshold",
                },
                r.file
                    .as_ref()
                    .map_or(String::new(), |f| format!(", `{f}`")),
            ),
        };
        text.push_str(&format!("  - {}: {line}\n", r.subgraph));
        if !r.left_out.is_empty() {
            let names: Vec<String> = r.left_out.iter().map(|n| code(n)).collect();
            text.push_str(&format!(
                "    - left out (failed or skipped): {}\n",
                names.join(", ")
            ));
        }
        for d in &r.debugged {
            text.push_str(&format!("    - {}\n", debugged(d)));
        }
        for d in &r.dropped {
            // The first error line names the exception; the last is often a detail of it.
            let first = d.output.lines().find(|l| l.starts_with("E ")).unwrap_or("");
            text.push_str(&format!(
                "    - taken out: {} {}\n",
                code(&d.name),
                md(first.trim())
            ));
        }
    }
    text
}

/// One line on a failing integration case sent to diagnosis.
fn debugged(d: &crate::records::FlowDebug) -> String {
    let Some(node) = &d.node else {
        return format!(
            "`{}`: not debugged (it names no function of the flow)",
            d.case
        );
    };
    if let Some(spared) = d.spared {
        let why = match spared {
            crate::records::Spared::FixesBoughtNothing => "its own fix rounds never made it pass",
            crate::records::Spared::DebuggedBefore => "an earlier case found no fix there",
        };
        return format!("`{}` blamed on `{node}`: not debugged ({why})", d.case);
    }
    let verdict = match d.verdict {
        Some(v) => format!("the vote ({}) blamed the {}", d.votes, v.as_str()),
        None if d.votes.is_empty() => "no vote was cast".to_string(),
        None => format!("no majority ({})", d.votes),
    };
    let fixes = match (d.attempts, d.fixed) {
        (0, _) => String::new(),
        (n, true) => format!("; fixed in `{node}` ({n} round(s))"),
        (n, false) => format!("; not fixed in {n} round(s)"),
    };
    let regressions = match d.regressions {
        0 => String::new(),
        n => format!(", {n} fix(es) reverted for breaking tests that passed"),
    };
    format!(
        "`{}` blamed on `{node}`: {verdict}{fixes}{regressions}",
        d.case
    )
}

/// Ruff's findings, the first `SHOWN` of them listed.
fn lint(lint: Option<&super::validate::Lint>) -> String {
    const SHOWN: usize = 20;
    let Some(lint) = lint else {
        return "- ⚠️ ruff is not installed: no lint (`scripts/setup.sh` installs it)\n".into();
    };
    if let Some(problem) = &lint.problem {
        return format!("- ⚠️ ruff could not lint the repository: {problem}\n");
    }
    if lint.findings.is_empty() {
        return "- ✅ `ruff check --select E9,F`: no findings\n".into();
    }
    let mut text = format!(
        "- ⚠️ `ruff check --select E9,F`: {} finding(s)\n",
        lint.findings.len()
    );
    for f in lint.findings.iter().take(SHOWN) {
        text.push_str(&format!(
            "  - {}:{}:{}: {} {}\n",
            f.path,
            f.issue.line,
            f.issue.column,
            f.issue.code.as_deref().unwrap_or("syntax"),
            f.issue.message.replace('\n', " ")
        ));
    }
    if lint.findings.len() > SHOWN {
        text.push_str(&format!("  - and {} more\n", lint.findings.len() - SHOWN));
    }
    text
}

/// What ruff's safe fixes changed before the lint above ([`super::cleanup`]), the imports
/// made explicit re-exports, why the cleanup did not run (if it did not), and the fixes it
/// left out on purpose.
fn cleanup(cleanup: &super::cleanup::Cleanup) -> String {
    let mut text = String::new();
    if cleanup.fixes() > 0 {
        let rules: Vec<String> = cleanup
            .fixed
            .iter()
            .map(|(code, n)| format!("{code} ×{n}"))
            .collect();
        text.push_str(&format!(
            "- 🧹 before that, ruff's safe fixes (found in the sandbox) removed {} finding(s) in {} file(s): {}\n",
            cleanup.fixes(),
            cleanup.files.len(),
            rules.join(", ")
        ));
    }
    text.push_str(&listed(
        "unused import(s) that are re-exports made explicit (`name as name`)",
        &cleanup.explicit,
    ));
    if let Some(problem) = &cleanup.problem {
        text.push_str(&format!(
            "- ⚠️ unused imports were not cleaned up: {}\n",
            problem.replace('\n', " ")
        ));
    }
    text.push_str(&listed("fix(es) left out on purpose", &cleanup.kept));
    text
}

/// `- N what:` and the first `SHOWN` of `items` under it; nothing without items.
fn listed(what: &str, items: &[String]) -> String {
    const SHOWN: usize = 20;
    if items.is_empty() {
        return String::new();
    }
    let mut text = format!("- {} {what}:\n", items.len());
    for item in items.iter().take(SHOWN) {
        text.push_str(&format!("  - {}\n", item.replace('\n', " ")));
    }
    if items.len() > SHOWN {
        text.push_str(&format!("  - and {} more\n", items.len() - SHOWN));
    }
    text
}

/// The planned dependencies the code uses, and the list of those it does not.
fn planned_dependencies(check: &super::deps::DependencyCheck) -> String {
    let mut text = String::from("\n## Planned Dependencies\n\n");
    let Some(share) = check.share() else {
        text.push_str("- None to check: no node with written code depends on another leaf.\n");
        return text;
    };
    text.push_str(&format!(
        "- **Used in the code**: {} of {} planned dependencies between functions and classes \
         ({:.1}%; the seed asks for 80% or more). A dependency is used when the dependent's \
         definition names it (a call, a reference, an attribute or a base class); nodes \
         without written code are not checked.\n",
        check.used,
        check.checked,
        share * 100.0
    ));
    if !check.unused.is_empty() {
        text.push_str("- **Planned but not used**:\n");
        for u in &check.unused {
            text.push_str(&format!(
                "  - {} `{}` does not use {} `{}`\n",
                u.from, u.from_name, u.to, u.to_name
            ));
        }
    }
    text
}

fn performance(input: &ReportInput) -> String {
    let g = input.generation;
    let secs = g.node_time_ms / 1000;
    let mut text = format!(
        "\n## Performance\n\n- **Generation Time** (time in nodes, over every run): {} minutes {} seconds\n- **First / Last Node Record**: {} / {}\n",
        secs / 60,
        secs % 60,
        g.started_at,
        g.finished_at
    );
    if g.nodes_timed > 0 {
        text.push_str(&format!(
            "- **Average Time per Node**: {:.1} seconds\n",
            g.node_time_ms as f64 / g.nodes_timed as f64 / 1000.0
        ));
    }
    for (role, usage) in &input.status.tokens {
        text.push_str(&format!(
            "- **Model Tokens, {}**: {} prompt, {} completion\n",
            role.as_str(),
            usage.prompt_tokens,
            usage.completion_tokens
        ));
    }
    if let Some(work) = input.status.work.render() {
        text.push_str(&format!("- **Loop**: {work}\n"));
    }
    text.push_str(&format!(
        "- **Prompt Templates**: {}\n",
        g.prompt_templates.join(", ")
    ));
    text
}

fn validation(input: &ReportInput) -> String {
    let v = input.validation;
    let o = &input.status.overall;
    let mut text = format!(
        "\n## Repository Validation\n\n- {} {}\n",
        ok_mark(v.install.ok),
        v.install.detail.replace('\n', " / ")
    );
    match &v.tests {
        Some(t) => text.push_str(&format!(
            "- {} `pytest tests/` runs ({}/{} tests pass)\n",
            ok_mark(t.problem.is_none()),
            t.passed,
            t.passed + t.failed + t.errors
        )),
        None => text.push_str("- ⚠️ no tests to run\n"),
    }
    if v.syntax_errors.is_empty() {
        text.push_str(&format!(
            "- ✅ All {} Python files syntactically valid\n",
            v.python_files
        ));
    } else {
        text.push_str(&format!(
            "- ❌ {} of {} Python files do not compile: {}\n",
            v.syntax_errors.len(),
            v.python_files,
            v.syntax_errors.join("; ")
        ));
    }
    text.push_str(&lint(v.lint.as_ref()));
    text.push_str(&cleanup(input.cleanup));
    for cycle in input.cycles {
        text.push_str(&format!(
            "- ⚠️ circular import between {}: move the shared code into a module both import\n",
            cycle.join(", ")
        ));
    }
    for warning in &input.info.warnings {
        text.push_str(&format!("- ⚠️ {warning}\n"));
    }
    if o.failed > 0 {
        text.push_str(&format!(
            "- ⚠️ {} nodes failed (see details above)\n",
            o.failed
        ));
    }
    if o.skipped > 0 {
        text.push_str(&format!(
            "- ⚠️ {} nodes skipped (dependency failures)\n",
            o.skipped
        ));
    }
    text
}

fn git_history(input: &ReportInput) -> String {
    let mut text = String::from("\n## Git History\n\n");
    if input.git_log.is_empty() {
        text.push_str("No commits yet.\n");
        return text;
    }
    text.push_str("```\n");
    for entry in input.git_log {
        let tags = if entry.tags.is_empty() {
            String::new()
        } else {
            format!(" ({})", entry.tags.join(", "))
        };
        text.push_str(&format!("{} {}{tags}\n", entry.id, entry.subject));
    }
    text.push_str("```\nThis report and the project metadata are committed after these, as `chore: assemble repository`.\n");
    text
}

fn recommendations(input: &ReportInput) -> String {
    let o = &input.status.overall;
    let mut items = Vec::new();
    let failed: Vec<&str> = input
        .status
        .failed
        .iter()
        .filter(|f| f.status == NodeStatus::Failed)
        .map(|f| f.id.as_str())
        .collect();
    if !failed.is_empty() {
        items.push(format!(
            "**Manual Fix Required**: {} need human review",
            failed.join(", ")
        ));
    }
    if input
        .status
        .failed
        .iter()
        .any(|f| diagnose(&f.reason).0.starts_with("an import"))
    {
        items.push("**Dependency Update**: add the missing packages to requirements.txt".into());
    }
    if o.failed + o.skipped + o.pending + o.in_progress > 0 {
        items.push(
            "**Re-run Generation**: after fixes, run the same `zerorepo generate` command again (it resumes from the checkpoint)".into(),
        );
    }
    let ready = input.validation.install.ok
        && input.validation.syntax_errors.is_empty()
        && o.passed * 5 >= o.total * 4;
    items.push(if ready {
        "**Proceed to Phase 5**: repository quality sufficient for validation phase".into()
    } else {
        "**Hold Phase 5**: fewer than 80% of nodes passed or the repository does not install".into()
    });
    let lines: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, item)| format!("{}. {item}", i + 1))
        .collect();
    format!("\n## Recommendations\n\n{}\n", lines.join("\n"))
}

/// Text for XML, HTML and SVG, in element content and double-quoted attributes.
pub(crate) fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML of the validation run's outcomes.
pub fn junit(validation: &Validation) -> Option<String> {
    let tests = validation.tests.as_ref()?;
    let count = |o: &str| tests.outcomes.iter().filter(|t| t.outcome == o).count();
    let mut text = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites>\n  <testsuite name=\"pytest\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
        tests.outcomes.len(),
        count("failed"),
        count("error"),
        count("skipped")
    );
    for outcome in &tests.outcomes {
        let (class, name) = outcome
            .name
            .rsplit_once("::")
            .unwrap_or(("", outcome.name.as_str()));
        let body = match outcome.outcome.as_str() {
            "failed" => "<failure message=\"failed\"/>",
            "error" => "<error message=\"error\"/>",
            "skipped" => "<skipped/>",
            _ => "",
        };
        text.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\">{body}</testcase>\n",
            xml_escape(class),
            xml_escape(name)
        ));
    }
    text.push_str("  </testsuite>\n</testsuites>\n");
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{FlowDebug, Verdict};
    use crate::rpg::NodeId;

    #[test]
    fn the_cleanup_says_what_it_fixed_made_explicit_and_left_out() {
        let done = super::super::cleanup::Cleanup {
            fixed: [("F401".to_string(), 3), ("F811".to_string(), 1)].into(),
            files: vec!["a.py".into(), "b.py".into()],
            explicit: vec!["a.py:1: tests/t.py imports `f` from here".into()],
            kept: vec!["a.py:9: F632 kept: not a rule the cleanup applies".into()],
            problem: None,
        };
        assert_eq!(
            cleanup(&done),
            "- 🧹 before that, ruff's safe fixes (found in the sandbox) removed 4 finding(s) in 2 file(s): F401 ×3, F811 ×1\n\
             - 1 unused import(s) that are re-exports made explicit (`name as name`):\n  - a.py:1: tests/t.py imports `f` from here\n\
             - 1 fix(es) left out on purpose:\n  - a.py:9: F632 kept: not a rule the cleanup applies\n"
        );
        let nothing = super::super::cleanup::Cleanup::default();
        assert_eq!(cleanup(&nothing), "");
        let without = super::super::cleanup::Cleanup {
            problem: Some("the bwrap sandbox has no ruff".into()),
            ..nothing
        };
        assert_eq!(
            cleanup(&without),
            "- ⚠️ unused imports were not cleaned up: the bwrap sandbox has no ruff\n"
        );
    }

    #[test]
    fn a_debugged_integration_case_says_what_the_vote_and_the_fixes_came_to() {
        let case = |node: Option<&str>, votes: &str, verdict: Option<Verdict>| FlowDebug {
            case: "test_flow".into(),
            node: node.map(NodeId::from),
            votes: votes.into(),
            verdict,
            ..FlowDebug::default()
        };
        assert_eq!(
            debugged(&case(None, "", None)),
            "`test_flow`: not debugged (it names no function of the flow)"
        );
        assert_eq!(
            debugged(&case(Some("n1"), "ABBAB", Some(Verdict::Test))),
            "`test_flow` blamed on `n1`: the vote (ABBAB) blamed the test"
        );
        assert_eq!(
            debugged(&case(Some("n1"), "AB", None)),
            "`test_flow` blamed on `n1`: no majority (AB)"
        );
        let unfixed = FlowDebug {
            attempts: 2,
            regressions: 1,
            ..case(Some("n1"), "AAAAA", Some(Verdict::Implementation))
        };
        assert_eq!(
            debugged(&unfixed),
            "`test_flow` blamed on `n1`: the vote (AAAAA) blamed the implementation; not fixed \
             in 2 round(s), 1 fix(es) reverted for breaking tests that passed"
        );
        let spared = FlowDebug {
            spared: Some(crate::records::Spared::FixesBoughtNothing),
            ..case(Some("n1"), "", None)
        };
        assert_eq!(
            debugged(&spared),
            "`test_flow` blamed on `n1`: not debugged (its own fix rounds never made it pass)"
        );
    }
}
