//! The nightly benchmark's figures, their comparison with the previous report, and the
//! report files (`zerorepo bench`).
//!
//! A night has two runs on one fixture (`fixtures/ml_lib` by default):
//! - the **engine run**: the scripted provider, with wrong first answers injected, so every
//!   second goes to the engine, the sandbox and the validation, never to a model;
//! - the **real run** (`--real`): the chosen model, then `zerorepo eval` on the fixture's
//!   reference tests. Its output directory is named by the date, so a night cut short
//!   resumes from its checkpoint the next time.
//!
//! [`compare`] is pure: each figure has a direction (lower or higher is better) and a
//! threshold under which a change is "same". The thresholds are the machines' noise: wall
//! times move by 10% between identical runs on a busy 2-core machine, counts not at all.
//! The files: `DIR/<date>.json` (schema: `zerorepo schema nightly`), `DIR/<date>.md`, and one
//! line per night in `DIR/history.jsonl`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::records::NodeRecords;
use crate::records::NodeStatus;
use crate::usage::{Role, UsageByRole};

/// One night's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NightlyReport {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// zerorepo's version.
    pub version: String,
    /// The fixture, as given.
    pub fixture: String,
    /// CPU cores this machine has.
    pub cpus: usize,
    /// Anything a reader must know about how the figures were made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<RealRun>,
}

/// How many nodes ended how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeCounts {
    pub passed: usize,
    pub needs_review: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// The scripted run: engine overhead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineRun {
    /// Nodes generated at once.
    pub jobs: usize,
    /// What was injected into the script.
    pub faults: Vec<String>,
    pub wall_s: f64,
    /// Of the wall time: the node loops (up to `jobs` at once), then assembly with its
    /// validation.
    pub loops_s: f64,
    pub assembly_s: f64,
    /// Summed over the nodes (which overlap under `jobs` > 1): their time in the sandbox,
    /// waiting for the scripted model, and the engine's own (the rest of each node's time).
    pub sandbox_s: f64,
    pub model_s: f64,
    pub engine_s: f64,
    pub sandbox_runs: u32,
    pub runs_per_s: f64,
    pub nodes: NodeCounts,
}

/// The run with a real model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RealRun {
    pub provider: String,
    /// Nodes generated at once (`--real-jobs`); reports older than this field ran one.
    #[serde(default = "one_job")]
    pub jobs: usize,
    /// Wall time of this invocation (a resumed night counts only what it ran).
    pub wall_s: f64,
    /// The node loops' model time, summed over the nodes' records (so concurrent nodes'
    /// waits add up: compared only between runs of the same `jobs`).
    pub model_s: f64,
    /// The same by what the model was asked: where the night's time went (empty in reports
    /// older than this field).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub model_s_by_role: BTreeMap<Role, f64>,
    pub sandbox_s: f64,
    /// Tokens per role, from the nodes' records.
    pub tokens: UsageByRole,
    /// Nodes whose first round's choice passed every test, of those that ran the loop.
    pub first_try_rate: f64,
    /// Of the nodes that did not pass on the first try, the share that passed in the end.
    pub debug_success_rate: f64,
    /// Votes' outcomes: `implementation`, `test`, `environment`, `none` (no majority).
    pub diagnosis: BTreeMap<String, usize>,
    pub nodes: NodeCounts,
    pub reference_passed: u32,
    pub reference_total: u32,
    /// The run resumed a checkpoint from an earlier, interrupted night.
    pub resumed: bool,
}

/// What the real run measured besides its records.
#[derive(Debug, Clone)]
pub struct RealRunFacts {
    pub provider: String,
    pub jobs: usize,
    pub wall_s: f64,
    pub reference_passed: u32,
    pub reference_total: u32,
    pub resumed: bool,
}

impl RealRun {
    /// The real run's figures from its facts and the generation's checkpoint records.
    pub fn from_records(facts: RealRunFacts, records: &NodeRecords) -> RealRun {
        let mut nodes = NodeCounts::default();
        let mut tokens = UsageByRole::new();
        let mut diagnosis = BTreeMap::new();
        let (mut looped, mut first, mut retried, mut rescued) = (0usize, 0usize, 0usize, 0usize);
        let mut work_done = crate::records::NodeWork::default();
        for record in records.values() {
            match record.status {
                NodeStatus::Passed => nodes.passed += 1,
                NodeStatus::NeedsReview => nodes.needs_review += 1,
                NodeStatus::Failed => nodes.failed += 1,
                NodeStatus::Skipped => nodes.skipped += 1,
                _ => {}
            }
            for (role, usage) in &record.tokens {
                tokens.entry(*role).or_default().add(*usage);
            }
            if let Some(d) = &record.diagnosis {
                let key = d.outcome.map_or("none", |v| v.as_str()).to_string();
                *diagnosis.entry(key).or_insert(0) += 1;
            }
            if let Some(work) = &record.work {
                looped += 1;
                work_done.add(work);
                if work.first_try {
                    first += 1;
                } else {
                    retried += 1;
                    rescued += usize::from(record.status == NodeStatus::Passed);
                }
            }
        }
        let rate = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        RealRun {
            provider: facts.provider,
            jobs: facts.jobs,
            wall_s: facts.wall_s,
            model_s: work_done.model_ms as f64 / 1000.0,
            model_s_by_role: work_done
                .model_ms_by_role
                .into_iter()
                .map(|(role, ms)| (role, ms as f64 / 1000.0))
                .collect(),
            sandbox_s: work_done.sandbox_ms as f64 / 1000.0,
            tokens,
            first_try_rate: rate(first, looped),
            debug_success_rate: rate(rescued, retried),
            diagnosis,
            nodes,
            reference_passed: facts.reference_passed,
            reference_total: facts.reference_total,
            resumed: facts.resumed,
        }
    }
}

fn one_job() -> usize {
    1
}

/// Which way a figure should move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// How far a figure may move and still be "same".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Threshold {
    /// A share of the earlier value (wall times: 0.10).
    Relative(f64),
    /// An absolute amount (rates in points of 1.0, counts).
    Absolute(f64),
}

/// One figure of a night, named for the tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Figure {
    pub name: &'static str,
    pub value: f64,
    pub better: Better,
    pub threshold: Threshold,
    /// Summed over the nodes' records: concurrent nodes' times add up, so it is compared
    /// only between real runs of the same `--real-jobs`.
    pub summed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trend {
    Better,
    Worse,
    Same,
}

/// A figure next to the previous night's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub name: &'static str,
    pub before: f64,
    pub now: f64,
    pub verdict: Trend,
    pub threshold: Threshold,
}

const TIME_NOISE: Threshold = Threshold::Relative(0.10);
const RATE_NOISE: Threshold = Threshold::Absolute(0.02);
const EXACT: Threshold = Threshold::Absolute(0.0);

/// The figures that are compared, in the order of the tables.
pub(crate) fn figures(report: &NightlyReport) -> Vec<Figure> {
    let f = |name, value, better, threshold| Figure {
        name,
        value,
        better,
        threshold,
        summed: false,
    };
    let mut out = Vec::new();
    if let Some(e) = &report.engine {
        out.push(f("engine: wall s", e.wall_s, Better::Lower, TIME_NOISE));
        out.push(f(
            "engine: sandbox s",
            e.sandbox_s,
            Better::Lower,
            TIME_NOISE,
        ));
        out.push(f("engine: engine s", e.engine_s, Better::Lower, TIME_NOISE));
        out.push(f(
            "engine: assembly s",
            e.assembly_s,
            Better::Lower,
            TIME_NOISE,
        ));
        out.push(f(
            "engine: sandbox runs",
            f64::from(e.sandbox_runs),
            Better::Lower,
            EXACT,
        ));
        out.push(f(
            "engine: nodes passed",
            e.nodes.passed as f64,
            Better::Higher,
            EXACT,
        ));
    }
    if let Some(r) = &report.real {
        let tokens = crate::usage::total(&r.tokens);
        out.push(f("real: wall s", r.wall_s, Better::Lower, TIME_NOISE));
        out.push(Figure {
            summed: true,
            ..f("real: model s", r.model_s, Better::Lower, TIME_NOISE)
        });
        out.push(f(
            "real: generated tokens",
            tokens.completion_tokens as f64,
            Better::Lower,
            TIME_NOISE,
        ));
        // The model's throughput, comparable whatever the jobs: it serves every node.
        out.push(f(
            "real: generated tokens per wall s",
            tokens.completion_tokens as f64 / r.wall_s.max(1e-9),
            Better::Higher,
            TIME_NOISE,
        ));
        out.push(f(
            "real: first-try rate",
            r.first_try_rate,
            Better::Higher,
            RATE_NOISE,
        ));
        out.push(f(
            "real: debug success rate",
            r.debug_success_rate,
            Better::Higher,
            RATE_NOISE,
        ));
        out.push(f(
            "real: nodes passed",
            r.nodes.passed as f64,
            Better::Higher,
            EXACT,
        ));
        out.push(f(
            "real: nodes failed or skipped",
            (r.nodes.failed + r.nodes.skipped) as f64,
            Better::Lower,
            EXACT,
        ));
        out.push(f(
            "real: reference tests passed",
            f64::from(r.reference_passed),
            Better::Higher,
            EXACT,
        ));
    }
    out
}

/// Each figure of `now` that `before` also has, judged.
pub fn compare(before: &NightlyReport, now: &NightlyReport) -> Vec<Comparison> {
    let earlier: BTreeMap<&str, f64> = figures(before).iter().map(|f| (f.name, f.value)).collect();
    let jobs = |r: &NightlyReport| r.real.as_ref().map(|r| r.jobs);
    let same_jobs = jobs(before) == jobs(now);
    figures(now)
        .into_iter()
        .filter(|figure| same_jobs || !figure.summed)
        .filter_map(|figure| {
            let old = *earlier.get(figure.name)?;
            let allowed = match figure.threshold {
                Threshold::Relative(share) => old.abs() * share,
                Threshold::Absolute(amount) => amount,
            };
            let delta = figure.value - old;
            let verdict = if delta.abs() <= allowed {
                Trend::Same
            } else if (delta < 0.0) == (figure.better == Better::Lower) {
                Trend::Better
            } else {
                Trend::Worse
            };
            Some(Comparison {
                name: figure.name,
                before: old,
                now: figure.value,
                verdict,
                threshold: figure.threshold,
            })
        })
        .collect()
}

/// The report of the newest night before `date` in `dir`, if any.
pub fn previous(dir: &Path, date: &str) -> Option<(PathBuf, NightlyReport)> {
    let mut dated: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(|s| s.len() == 10 && s < date)
        })
        .collect();
    dated.sort();
    let path = dated.pop()?;
    let report = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    Some((path, report))
}

/// The Markdown report: the figures, and the comparison when there is one.
pub fn render_markdown(
    report: &NightlyReport,
    against: Option<(&Path, &[Comparison])>,
    commands: &[String],
) -> String {
    let mut out = format!(
        "# Nightly benchmark, {}\n\nzerorepo {} on `{}`, {} CPU core(s).\n\nReproduce:\n\n```\n{}\n```\n",
        report.date,
        report.version,
        report.fixture,
        report.cpus,
        commands.join("\n")
    );
    if let Some(note) = &report.note {
        out.push_str(&format!("\n{note}\n"));
    }
    if let Some(e) = &report.engine {
        out.push_str(&engine_section(e));
    }
    if let Some(r) = &report.real {
        out.push_str(&real_section(r));
    }
    out.push_str(&comparison_section(against));
    out
}

fn engine_section(e: &EngineRun) -> String {
    format!(
        "\n## Engine run (scripted, --jobs {}; injected: {})\n\n| figure | value |\n|---|---|\n| wall time | {:.2} s |\n| of it: node loops / assembly and validation | {:.2} / {:.2} s |\n| summed over nodes: sandbox / model / engine | {:.2} / {:.2} / {:.2} s |\n| sandbox runs | {} ({:.1} per second of wall time) |\n| nodes passed / needs review / failed / skipped | {} / {} / {} / {} |\n",
        e.jobs,
        e.faults.join(", "),
        e.wall_s,
        e.loops_s,
        e.assembly_s,
        e.sandbox_s,
        e.model_s,
        e.engine_s,
        e.sandbox_runs,
        e.runs_per_s,
        e.nodes.passed,
        e.nodes.needs_review,
        e.nodes.failed,
        e.nodes.skipped
    )
}

fn real_section(r: &RealRun) -> String {
    let tokens: Vec<String> = r
        .tokens
        .iter()
        .map(|(role, u)| {
            format!(
                "{} {} ({} evaluated) / {}",
                role.as_str(),
                u.prompt_tokens,
                u.evaluated_tokens(),
                u.completion_tokens
            )
        })
        .collect();
    let by_role: Vec<String> = r
        .model_s_by_role
        .iter()
        .map(|(role, s)| {
            format!(
                "{} {s:.0} s ({:.0}%)",
                role.as_str(),
                100.0 * s / r.model_s.max(1e-9)
            )
        })
        .collect();
    let by_role = if by_role.is_empty() {
        String::new()
    } else {
        format!(
            "| model time by role, summed over nodes | {} |\n",
            by_role.join("; ")
        )
    };
    let diagnosis: Vec<String> = r
        .diagnosis
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "\n## Real run ({}, --jobs {}{})\n\n| figure | value |\n|---|---|\n| wall time | {:.0} s ({:.1} min) |\n| model / sandbox time in the node loops | {:.0} / {:.0} s |\n{}| tokens, prompt (of them evaluated, not in the cache) / generated | {} |\n| first-try pass rate (seed target 60%) | {:.0}% |\n| debug success rate (seed target 80%) | {:.0}% |\n| diagnosis outcomes | {} |\n| nodes passed / needs review / failed / skipped | {} / {} / {} / {} |\n| reference tests passed | **{} of {} ({:.1}%)** |\n",
        r.provider,
        r.jobs,
        if r.resumed { ", resumed" } else { "" },
        r.wall_s,
        r.wall_s / 60.0,
        r.model_s,
        r.sandbox_s,
        by_role,
        tokens.join("; "),
        r.first_try_rate * 100.0,
        r.debug_success_rate * 100.0,
        if diagnosis.is_empty() {
            "none".into()
        } else {
            diagnosis.join(", ")
        },
        r.nodes.passed,
        r.nodes.needs_review,
        r.nodes.failed,
        r.nodes.skipped,
        r.reference_passed,
        r.reference_total,
        if r.reference_total == 0 {
            0.0
        } else {
            100.0 * f64::from(r.reference_passed) / f64::from(r.reference_total)
        }
    )
}

fn comparison_section(against: Option<(&Path, &[Comparison])>) -> String {
    let mut out = String::new();
    match against {
        None => out
            .push_str("\n## Against the previous report\n\nNo earlier report in this directory.\n"),
        Some((path, [])) => out.push_str(&format!(
            "\n## Against the previous report ({})\n\nIt measured none of these figures.\n",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )),
        Some((path, comparisons)) => {
            out.push_str(&format!(
                "\n## Against the previous report ({})\n\n\"same\" means within the machine's noise: 10% for times and token counts, 2 points for rates, nothing for counts. Times summed over nodes are compared only between runs of the same --jobs.\n\n| figure | before | now | verdict |\n|---|---|---|---|\n",
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            ));
            for c in comparisons {
                let verdict = match c.verdict {
                    Trend::Better => "better",
                    Trend::Worse => "**worse**",
                    Trend::Same => "same",
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {verdict} |\n",
                    c.name,
                    number(c.before),
                    number(c.now)
                ));
            }
        }
    }
    out
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else if x < 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.2}")
    }
}

/// One line of `history.jsonl`: the night's main figures.
pub fn history_line(report: &NightlyReport) -> String {
    let figures: BTreeMap<&str, f64> = figures(report).iter().map(|f| (f.name, f.value)).collect();
    let line =
        serde_json::json!({"date": report.date, "version": report.version, "figures": figures});
    format!("{line}\n")
}

/// The figures `history.svg` plots, one small chart each.
const PLOTTED: [&str; 4] = [
    "real: reference tests passed",
    "real: wall s",
    "real: first-try rate",
    "engine: wall s",
];

/// `history.svg`: the main figures of every night in `history` (the text of `history.jsonl`),
/// one line chart each, oldest night on the left. Self-contained SVG, no script; a night that
/// lacks a figure (an engine-only night, say) leaves a gap in that chart only.
pub fn history_svg(history: &str) -> String {
    let nights: Vec<(String, BTreeMap<String, f64>)> = history
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            let date = v["date"].as_str()?.to_string();
            let figures = v["figures"]
                .as_object()?
                .iter()
                .filter_map(|(k, x)| Some((k.clone(), x.as_f64()?)))
                .collect();
            Some((date, figures))
        })
        .collect();
    const W: f64 = 420.0;
    const H: f64 = 150.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n",
        2.0 * W,
        2.0 * H
    );
    for (i, name) in PLOTTED.iter().enumerate() {
        let (x0, y0) = ((i % 2) as f64 * W, (i / 2) as f64 * H);
        svg.push_str(&chart(&nights, name, x0, y0, W, H));
    }
    svg.push_str("</svg>\n");
    svg
}

/// One chart of `name` over the nights, in the box at (`x0`, `y0`) of size `w` by `h`.
fn chart(
    nights: &[(String, BTreeMap<String, f64>)],
    name: &str,
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
) -> String {
    let points: Vec<(usize, f64)> = nights
        .iter()
        .enumerate()
        .filter_map(|(i, (_, f))| Some((i, *f.get(name)?)))
        .collect();
    let (left, right, top, bottom) = (x0 + 50.0, x0 + w - 20.0, y0 + 34.0, y0 + h - 28.0);
    let mut out = format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{name}</text>\n\
         <line x1=\"{left:.1}\" y1=\"{bottom:.1}\" x2=\"{right:.1}\" y2=\"{bottom:.1}\" stroke=\"#999\"/>\n",
        x0 + 10.0,
        y0 + 14.0
    );
    let Some(max) = points.iter().map(|p| p.1).reduce(f64::max) else {
        out.push_str(&format!(
            "<text x=\"{left:.1}\" y=\"{:.1}\" fill=\"#777\">no night has it yet</text>\n",
            (top + bottom) / 2.0
        ));
        return out;
    };
    let top_value = if max > 0.0 { max * 1.1 } else { 1.0 };
    let span = nights.len().saturating_sub(1).max(1) as f64;
    let x = |i: usize| left + (right - left) * i as f64 / span;
    let y = |v: f64| bottom - (bottom - top) * (v / top_value).clamp(0.0, 1.0);
    let line: Vec<String> = points
        .iter()
        .map(|&(i, v)| format!("{:.1},{:.1}", x(i), y(v)))
        .collect();
    out.push_str(&format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#2a6fb0\" stroke-width=\"2\"/>\n",
        line.join(" ")
    ));
    for &(i, v) in &points {
        out.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2a6fb0\"><title>{}: {}</title></circle>\n",
            x(i),
            y(v),
            crate::assemble::report::xml_escape(&nights[i].0),
            number(v)
        ));
    }
    if let Some(&(i, v)) = points.last() {
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            x(i),
            y(v) - 6.0,
            number(v)
        ));
    }
    out.push_str(&format!(
        "<text x=\"{left:.1}\" y=\"{:.1}\">{}</text>\n<text x=\"{right:.1}\" y=\"{:.1}\" \
         text-anchor=\"end\">{}</text>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n\
         <text x=\"{:.1}\" y=\"{bottom:.1}\" text-anchor=\"end\">0</text>\n",
        bottom + 16.0,
        crate::assemble::report::xml_escape(nights.first().map_or("", |n| n.0.as_str())),
        bottom + 16.0,
        crate::assemble::report::xml_escape(nights.last().map_or("", |n| n.0.as_str())),
        left - 4.0,
        top + 4.0,
        number(top_value),
        left - 4.0,
    ));
    out
}

#[cfg(test)]
mod tests;
