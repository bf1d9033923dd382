//! `docs/generation_report.html`: the generation report as one self-contained page to look
//! at. It holds the plan drawn per subgraph with every node coloured by its status
//! ([`super::graph`]), a timeline of when each node ran and where its time went, tokens and
//! time per node, every failure with its reason and diagnosis, and the repository
//! validation.
//!
//! Self-contained means no request leaves the page: no script, no font, no image, no link
//! outside it, and a Content-Security-Policy of `default-src 'none'` that makes a browser
//! refuse any that slipped in. Pure, like the Markdown report: every figure comes in through
//! [`ReportInput`], and the same input writes the same bytes.
//!
//! The timeline is read from the checkpoint's records: a node's end is its record's
//! timestamp (milliseconds; whole seconds in checkpoints of earlier versions) and its start
//! that minus its duration. A bar is split into model, sandbox and the engine's own time by the
//! node's totals; the split shows proportions, not the order in which they happened. Pauses
//! of over a minute between nodes (a run resumed later) are cut short and marked ([`Axis`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::graph::{self, GraphEdge, GraphNode};
use super::report::{ReportInput, diagnose, xml_escape as escape};
use crate::records::{NodeRecord, NodeStatus, Verdict};
use crate::rpg::Node;
use crate::status::percent;

/// The fill of a node box and of its legend entry, by status.
pub fn status_colour(status: Option<NodeStatus>) -> &'static str {
    match status {
        Some(NodeStatus::Passed) => "#3fae5a",
        Some(NodeStatus::NeedsReview) => "#f2b632",
        Some(NodeStatus::Failed) => "#e0504a",
        Some(NodeStatus::Skipped) => "#a9aeb4",
        Some(NodeStatus::InProgress) => "#6fa8dc",
        Some(NodeStatus::Pending) | None => "#ffffff",
    }
}

fn status_name(status: Option<NodeStatus>) -> &'static str {
    status.map_or("pending", NodeStatus::as_str)
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;\
color:#222;max-width:1400px}h1{margin-bottom:4px}h2{margin-top:36px;border-bottom:1px solid #ddd}\
.meta{color:#555}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}\
.card{border:1px solid #ccc;border-radius:6px;padding:8px 14px;min-width:110px}\
.card b{display:block;font-size:24px}.swatch{display:inline-block;width:12px;height:12px;\
border:1px solid #333;margin-right:6px;vertical-align:-1px}table{border-collapse:collapse;\
font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.num{text-align:right}.plan text{font-size:13px;pointer-events:none}\
.subgraph svg{max-width:100%;height:auto}.subgraph{overflow-x:auto;border:1px solid #e4e4e4;border-radius:6px;padding:8px;margin:12px 0}\
pre{background:#f7f7f7;padding:8px;white-space:pre-wrap;font-size:12px}\
tr:target{outline:2px solid #333}.ok{color:#1d7a35}.bad{color:#b3261e}";

pub(crate) fn generation_report_html(input: &ReportInput) -> String {
    let g = input.generation;
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n<title>Code Generation Report: {}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>Code Generation Report</h1>\n\
         <p class=\"meta\">{} · model {} · sandbox {} · finished {}</p>\n",
        escape(&input.info.name),
        escape(&g.engine),
        escape(&g.model),
        escape(&g.sandbox),
        escape(&g.finished_at),
    );
    page.push_str(&summary(input));
    page.push_str(&plan(input));
    page.push_str(&timeline(input));
    page.push_str(&nodes_table(input));
    page.push_str(&failures(input));
    page.push_str(&validation(input));
    page.push_str("</body>\n</html>\n");
    page
}

fn record<'a>(input: &'a ReportInput, node: &Node) -> Option<&'a NodeRecord> {
    input.records.get(&node.id)
}

fn anchor(index: usize) -> String {
    format!("node-{index}")
}

fn summary(input: &ReportInput) -> String {
    let o = &input.status.overall;
    let mut text = format!(
        "<div class=\"cards\">\n<div class=\"card\"><b>{}</b>nodes planned</div>\n",
        o.total
    );
    let cards = [
        ("passed", o.passed, status_colour(Some(NodeStatus::Passed))),
        (
            "needs review",
            o.needs_review,
            status_colour(Some(NodeStatus::NeedsReview)),
        ),
        ("failed", o.failed, status_colour(Some(NodeStatus::Failed))),
        (
            "skipped",
            o.skipped,
            status_colour(Some(NodeStatus::Skipped)),
        ),
    ];
    for (label, count, colour) in cards {
        let _ = writeln!(
            text,
            "<div class=\"card\"><b>{count}</b><span class=\"swatch\" style=\"background:{colour}\">\
             </span>{label} ({})</div>",
            percent(count, o.total)
        );
    }
    text.push_str("</div>\n");
    if let Some(work) = input.status.work.render() {
        let _ = writeln!(text, "<p>{}</p>", escape(&work));
    }
    text
}

/// One drawing per subgraph: its nodes, the hierarchy links and the planned dependencies
/// between them. Links that cross subgraphs are counted under the drawing.
fn plan(input: &ReportInput) -> String {
    let nodes = &input.rpg.rpg().nodes;
    let mut text = String::from(
        "<h2 id=\"plan\">The plan</h2>\n<p>One drawing per subgraph; a box is a plan node \
         (click it for its row below). Solid arrows go from a module or package to what it \
         contains; dashed arrows from a node to the node that depends on it.</p>\n<p>",
    );
    for status in [
        Some(NodeStatus::Passed),
        Some(NodeStatus::NeedsReview),
        Some(NodeStatus::Failed),
        Some(NodeStatus::Skipped),
        None,
    ] {
        let _ = write!(
            text,
            "<span class=\"swatch\" style=\"background:{}\"></span>{} &nbsp; ",
            status_colour(status),
            status_name(status)
        );
    }
    text.push_str("</p>\n");
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, node) in nodes.iter().enumerate() {
        groups.entry(node.subgraph()).or_default().push(i);
    }
    for (name, members) in groups {
        text.push_str(&subgraph(input, name, &members));
    }
    text
}

fn subgraph(input: &ReportInput, name: &str, members: &[usize]) -> String {
    let nodes = &input.rpg.rpg().nodes;
    let local: BTreeMap<&str, usize> = members
        .iter()
        .enumerate()
        .map(|(k, &i)| (nodes[i].id.as_str(), k))
        .collect();
    let boxes: Vec<GraphNode> = members.iter().map(|&i| graph_node(input, i)).collect();
    let mut edges = Vec::new();
    let mut crossing = 0;
    for (k, &i) in members.iter().enumerate() {
        let node = &nodes[i];
        if let Some(parent) = &node.parent {
            match local.get(parent.as_str()) {
                Some(&from) => edges.push(GraphEdge {
                    from,
                    to: k,
                    dependency: false,
                }),
                None => crossing += 1,
            }
        }
        let Some(position) = input.rpg.position_of(&node.id) else {
            continue;
        };
        for dep in input.rpg.graph().declared_dependencies_of(position) {
            match local.get(input.rpg.node(dep).id.as_str()) {
                Some(&from) => edges.push(GraphEdge {
                    from,
                    to: k,
                    dependency: true,
                }),
                None => crossing += 1,
            }
        }
    }
    let counts = input.status.subgraphs.get(name);
    let mut text = format!(
        "<div class=\"subgraph\" data-subgraph=\"{}\">\n<h3>{} <span class=\"meta\">{}</span></h3>\n",
        escape(name),
        escape(name),
        counts.map_or(String::new(), |c| format!(
            "{} of {} nodes passed",
            c.passed, c.total
        ))
    );
    match graph::draw(&boxes, &edges) {
        Some(svg) => text.push_str(&svg),
        None => {
            let _ = writeln!(
                text,
                "<p>{} nodes: not drawn (more than {} in one subgraph, or the layout failed); \
                 see the table below.</p>",
                boxes.len(),
                graph::MAX_DRAWN
            );
        }
    }
    if crossing > 0 {
        let _ = writeln!(
            text,
            "<p class=\"meta\">{crossing} link(s) to nodes of other subgraphs are not drawn.</p>"
        );
    }
    text.push_str("</div>\n");
    text
}

fn graph_node(input: &ReportInput, index: usize) -> GraphNode {
    let node = &input.rpg.rpg().nodes[index];
    let status = record(input, node).map(|r| r.status);
    let mut title = format!(
        "{} {} ({}): {}",
        node.id,
        node.name,
        node.kind,
        status_name(status)
    );
    if let Some(reason) = record(input, node).and_then(|r| r.failure_reason.as_deref()) {
        title.push_str(" — ");
        title.push_str(&shorten(reason, 300));
    }
    GraphNode {
        label: node.name.clone(),
        id: node.id.clone(),
        status: status_name(status),
        fill: status_colour(status),
        anchor: anchor(index),
        title,
    }
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A node that ran, placed in time: start and end in milliseconds since the epoch.
struct Span<'a> {
    index: usize,
    node: &'a Node,
    record: &'a NodeRecord,
    start_ms: i64,
    end_ms: i64,
}

fn spans<'a>(input: &'a ReportInput) -> Vec<Span<'a>> {
    let mut spans: Vec<Span> = input
        .rpg
        .rpg()
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(index, node)| {
            let record = record(input, node)?;
            let duration = i64::try_from(record.duration_ms?).ok()?;
            let end = chrono::DateTime::parse_from_rfc3339(&record.timestamp).ok()?;
            let end_ms = end.timestamp_millis();
            Some(Span {
                index,
                node,
                record,
                start_ms: end_ms - duration,
                end_ms,
            })
        })
        .collect();
    spans.sort_by_key(|s| (s.start_ms, s.index));
    spans
}

/// The Gantt view: one row per node that ran, in the order they started.
fn timeline(input: &ReportInput) -> String {
    let spans = spans(input);
    let mut text = String::from(
        "<h2 id=\"timeline\">Timeline</h2>\n<p>When each node ran, and how its \
         time divides into <span class=\"swatch\" style=\"background:#4a7bd0\"></span>model, \
         <span class=\"swatch\" style=\"background:#9b6bc6\"></span>sandbox and \
         <span class=\"swatch\" style=\"background:#c9c9c9\"></span>the engine; the number after \
         a bar is its fix rounds.</p>\n",
    );
    let Some(last) = spans.iter().map(|s| s.end_ms).max() else {
        text.push_str("<p>No node has a recorded duration.</p>\n");
        return text;
    };
    const LABEL: f64 = 220.0;
    const WIDTH: f64 = 900.0;
    const ROW: f64 = 16.0;
    let axis = Axis::new(spans.iter().map(|s| (s.start_ms, s.end_ms)).collect());
    let total = axis.at(last).max(1.0);
    let x = |ms: i64| LABEL + axis.at(ms) / total * WIDTH;
    let height = ROW * spans.len() as f64 + 24.0;
    let _ = writeln!(
        text,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">",
        LABEL + WIDTH + 60.0,
        height
    );
    for (row, span) in spans.iter().enumerate() {
        let y = row as f64 * ROW;
        let (x0, x1) = (x(span.start_ms), x(span.end_ms).max(x(span.start_ms) + 1.0));
        let _ = write!(
            text,
            "<a href=\"#{}\"><text x=\"0\" y=\"{:.1}\" font-size=\"11\">{}</text></a>",
            anchor(span.index),
            y + 11.0,
            escape(&shorten(
                &format!("{} {}", span.node.id, span.node.name),
                34
            ))
        );
        text.push_str(&bar(span, x0, x1, y));
        if span.record.retry_count > 0 {
            let _ = write!(
                text,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>",
                x1 + 3.0,
                y + 11.0,
                span.record.retry_count
            );
        }
        text.push('\n');
    }
    for gap in &axis.cut {
        let at = x(gap.0) + axis.kept / total * WIDTH / 2.0;
        let _ = writeln!(
            text,
            "<line x1=\"{at:.1}\" y1=\"0\" x2=\"{at:.1}\" y2=\"{:.1}\" stroke=\"#999\" \
             stroke-dasharray=\"2,3\"/><text x=\"{at:.1}\" y=\"{:.1}\" font-size=\"10\" \
             text-anchor=\"middle\">idle {}</text>",
            height - 16.0,
            height - 4.0,
            idle(gap.1 - gap.0)
        );
    }
    let _ = writeln!(
        text,
        "<text x=\"{LABEL}\" y=\"{:.1}\" font-size=\"11\">0 s</text><text x=\"{:.1}\" y=\"{:.1}\" \
         font-size=\"11\" text-anchor=\"end\">{:.1} s{}</text>\n</svg>",
        height - 4.0,
        LABEL + WIDTH,
        height - 4.0,
        axis.busy_ms() as f64 / 1000.0,
        if axis.cut.is_empty() { "" } else { " of work" }
    );
    text
}

/// Pauses longer than this between nodes (a run resumed the next day) are cut short on the
/// timeline, so that the work stays readable.
const LONG_PAUSE_MS: i64 = 60_000;

/// The timeline's time axis: real time with the long pauses between runs cut to a short,
/// marked stretch.
struct Axis {
    start: i64,
    /// The pauses cut, as (from, to) in real milliseconds, in order.
    cut: Vec<(i64, i64)>,
    /// The width a cut pause keeps, in axis milliseconds.
    kept: f64,
    busy: i64,
}

impl Axis {
    fn new(mut spans: Vec<(i64, i64)>) -> Axis {
        spans.sort_unstable();
        let start = spans.first().map_or(0, |s| s.0);
        let (mut cut, mut busy) = (Vec::new(), 0);
        let mut current: Option<(i64, i64)> = None;
        for (from, to) in spans {
            current = match current {
                Some((a, b)) if from <= b + LONG_PAUSE_MS => Some((a, b.max(to))),
                Some((a, b)) => {
                    busy += b - a;
                    cut.push((b, from));
                    Some((from, to))
                }
                None => Some((from, to)),
            };
        }
        if let Some((a, b)) = current {
            busy += b - a;
        }
        // Short pauses inside a run count as its time; a cut pause keeps 2% of the work's width.
        let kept = (busy as f64 * 0.02).max(1.0);
        Axis {
            start,
            cut,
            kept,
            busy,
        }
    }

    fn busy_ms(&self) -> i64 {
        self.busy
    }

    /// Where real time `ms` lies on the axis, in axis milliseconds from the start.
    fn at(&self, ms: i64) -> f64 {
        let mut removed = 0.0;
        for &(from, to) in &self.cut {
            if ms >= to {
                removed += (to - from) as f64 - self.kept;
            } else if ms > from {
                removed += (ms - from) as f64 * (1.0 - self.kept / (to - from) as f64);
            }
        }
        (ms - self.start) as f64 - removed
    }
}

/// A pause as people say it: `3 h 5 min`, `12 min`, `45 s`.
fn idle(ms: i64) -> String {
    let secs = ms / 1000;
    match (secs / 3600, secs % 3600 / 60) {
        (0, 0) => format!("{secs} s"),
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// A node's bar: model, sandbox and engine segments in proportion to its totals.
fn bar(span: &Span, x0: f64, x1: f64, y: f64) -> String {
    let duration = (span.end_ms - span.start_ms).max(1) as f64;
    let (model, sandbox) = span
        .record
        .work
        .as_ref()
        .map_or((0.0, 0.0), |w| (w.model_ms as f64, w.sandbox_ms as f64));
    let width = x1 - x0;
    let model_w = (model / duration).min(1.0) * width;
    let sandbox_w = (sandbox / duration).min(1.0 - model_w / width) * width;
    let title = format!(
        "{} {}: {:.1} s ({:.1} s model, {:.1} s sandbox), {} fix round(s), {}",
        span.node.id,
        span.node.name,
        duration / 1000.0,
        model / 1000.0,
        sandbox / 1000.0,
        span.record.retry_count,
        span.record.status.as_str()
    );
    format!(
        "<g class=\"span\" data-node=\"{}\"><title>{}</title>\
         <rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"12\" fill=\"#c9c9c9\"/>\
         <rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{model_w:.1}\" height=\"12\" fill=\"#4a7bd0\"/>\
         <rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{sandbox_w:.1}\" height=\"12\" fill=\"#9b6bc6\"/>\
         <rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"12\" fill=\"none\" \
         stroke=\"{}\" stroke-width=\"1.5\"/></g>",
        escape(&span.node.id),
        escape(&title),
        x0 + model_w,
        status_colour(Some(span.record.status)),
    )
}

/// Every node: status, fix rounds, tokens, time.
fn nodes_table(input: &ReportInput) -> String {
    let mut text = String::from(
        "<h2 id=\"nodes\">Nodes</h2>\n<table>\n<tr><th>node</th><th>name</th><th>subgraph</th>\
         <th>status</th><th>fix rounds</th><th>first try</th><th>prompt tokens</th>\
         <th>completion tokens</th><th>time s</th><th>model s</th><th>sandbox s</th></tr>\n",
    );
    for (i, node) in input.rpg.rpg().nodes.iter().enumerate() {
        let record = record(input, node);
        let status = record.map(|r| r.status);
        let tokens = record
            .map(|r| crate::usage::total(&r.tokens))
            .unwrap_or_default();
        let work = record.and_then(|r| r.work.as_ref());
        let secs =
            |ms: Option<u64>| ms.map_or(String::new(), |ms| format!("{:.1}", ms as f64 / 1000.0));
        let _ = writeln!(
            text,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><span class=\"swatch\" \
             style=\"background:{}\"></span>{}</td><td class=\"num\">{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            anchor(i),
            escape(&node.id),
            escape(&node.name),
            escape(node.subgraph()),
            status_colour(status),
            status_name(status),
            record.map_or(0, |r| r.retry_count),
            work.map_or("", |w| if w.first_try { "yes" } else { "no" }),
            tokens.prompt_tokens,
            tokens.completion_tokens,
            secs(record.and_then(|r| r.duration_ms)),
            secs(work.map(|w| w.model_ms)),
            secs(work.map(|w| w.sandbox_ms)),
        );
    }
    text.push_str("</table>\n");
    text
}

/// Failed, skipped and needs-review nodes with their reasons, and every vote on disputed
/// tests.
fn failures(input: &ReportInput) -> String {
    let mut text = String::from("<h2 id=\"failures\">Failures and diagnoses</h2>\n");
    if input.status.failed.is_empty() {
        text.push_str("<p class=\"ok\">No node failed, was skipped or needs review.</p>\n");
    }
    for f in &input.status.failed {
        let (cause, advice) = diagnose(&f.reason);
        let _ = writeln!(
            text,
            "<h3><span class=\"swatch\" style=\"background:{}\"></span>{} ({})</h3>\n\
             <p>Fix rounds: {}. Root cause, read from the last failure: {cause}. {advice}.</p>\n\
             <pre>{}</pre>",
            status_colour(Some(f.status)),
            escape(&f.id),
            f.status.as_str(),
            f.retry_count,
            escape(&shorten(&f.reason, 2000))
        );
    }
    for node in &input.rpg.rpg().nodes {
        let Some(d) = record(input, node).and_then(|r| r.diagnosis.as_ref()) else {
            continue;
        };
        let votes: String = d.votes.iter().map(|v| v.letter()).collect();
        let decided = match d.outcome {
            Some(Verdict::Implementation) => "A, the implementation",
            Some(Verdict::Test) => "B, the tests",
            Some(Verdict::Environment) => "C, the environment",
            None => "no majority: needs review",
        };
        let _ = writeln!(
            text,
            "<h3>Vote on {} {}</h3>\n<p>Model votes {}, execution evidence {}; decided: {decided}. \
             Disputed tests: {}.</p>",
            escape(&node.id),
            escape(&node.name),
            if votes.is_empty() {
                "none".into()
            } else {
                votes
            },
            d.evidence.map_or('-', |v| v.letter()),
            escape(
                &d.disputed
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
    }
    text
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "<span class=\"ok\">✔</span>"
    } else {
        "<span class=\"bad\">✘</span>"
    }
}

fn validation(input: &ReportInput) -> String {
    let v = input.validation;
    let mut items = vec![format!(
        "{} install: {}",
        mark(v.install.ok),
        escape(&shorten(&v.install.detail.replace('\n', " / "), 400))
    )];
    items.push(match &v.tests {
        Some(t) => format!(
            "{} <code>pytest tests/</code>: {} of {} pass{}",
            mark(t.problem.is_none()),
            t.passed,
            t.passed + t.failed + t.errors,
            t.problem
                .as_ref()
                .map_or(String::new(), |p| format!(" ({})", escape(p)))
        ),
        None => "no tests to run".into(),
    });
    items.push(format!(
        "{} {} Python files, {} that do not compile",
        mark(v.syntax_errors.is_empty()),
        v.python_files,
        v.syntax_errors.len()
    ));
    items.push(match &v.lint {
        Some(l) => format!(
            "{} <code>ruff check --select E9,F</code>: {} finding(s)",
            mark(l.findings.is_empty() && l.problem.is_none()),
            l.findings.len()
        ),
        None => "ruff is not installed: no lint".into(),
    });
    let c = input.cleanup;
    if c.fixes() > 0 {
        items.push(format!(
            "ruff's safe fixes (found in the sandbox) removed {} finding(s) in {} file(s) before that",
            c.fixes(),
            c.files.len()
        ));
    }
    if !c.explicit.is_empty() {
        items.push(format!(
            "{} unused import(s) that are re-exports made explicit (<code>name as name</code>)",
            c.explicit.len()
        ));
    }
    if let Some(problem) = &c.problem {
        items.push(format!(
            "{} unused imports were not cleaned up: {}",
            mark(false),
            escape(&shorten(problem, 400))
        ));
    }
    if !c.kept.is_empty() {
        items.push(format!(
            "{} fix(es) left out on purpose (listed in generation_report.md)",
            c.kept.len()
        ));
    }
    for cycle in input.cycles {
        items.push(format!("circular import: {}", escape(&cycle.join(", "))));
    }
    if let Some(share) = input.dependencies.share() {
        items.push(format!(
            "planned dependencies used in the code: {} of {} ({:.1}%)",
            input.dependencies.used,
            input.dependencies.checked,
            share * 100.0
        ));
    }
    let mut text = String::from("<h2 id=\"validation\">Repository validation</h2>\n<ul>\n");
    for item in items {
        let _ = writeln!(text, "<li>{item}</li>");
    }
    text.push_str("</ul>\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pauses_are_cut_short_and_short_ones_kept() {
        let hour = 3_600_000;
        let axis = Axis::new(vec![
            (0, 1_000),
            (1_500, 3_000),
            (hour + 3_000, hour + 4_000),
        ]);
        assert_eq!(axis.cut, [(3_000, hour + 3_000)]);
        // The 0.5 s pause is work time; the hour is not.
        assert_eq!(axis.busy_ms(), 4_000);
        assert_eq!(axis.at(1_500), 1_500.0);
        assert!((axis.at(hour + 4_000) - (4_000.0 + axis.kept)).abs() < 1e-6);
        assert!(
            axis.at(hour) < axis.at(hour + 3_000),
            "inside a cut, time still moves on"
        );
        assert_eq!(idle(hour + 5 * 60_000), "1 h 5 min");
        assert_eq!(idle(45_000), "45 s");
    }

    #[test]
    fn one_run_has_no_cut() {
        let axis = Axis::new(vec![(10, 20), (30, 50)]);
        assert!(axis.cut.is_empty());
        assert_eq!(axis.at(50), 40.0);
    }
}
