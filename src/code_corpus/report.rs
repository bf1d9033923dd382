//! The code corpus's figures: each request's verdict for the engine and for the single-answer
//! baseline (or, in a self-check, for the reference change), and the Markdown table. Pure:
//! the command fills these in and writes them.

use serde::{Deserialize, Serialize};

use super::file::RequestKind;
use crate::corpus::Half;

/// How a side ended, judged by the corpus's own tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestVerdict {
    /// Written; the acceptance tests and the library's suite pass.
    Correct,
    /// Written; the acceptance tests or the suite fail.
    Wrong,
    /// Nothing written.
    Unchanged,
    /// The side could not be run or judged (its `problem` says why).
    NotJudged,
}

impl RequestVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestVerdict::Correct => "correct",
            RequestVerdict::Wrong => "wrong",
            RequestVerdict::Unchanged => "unchanged",
            RequestVerdict::NotJudged => "not judged",
        }
    }
}

/// One side of one request: the engine, the baseline, or the reference change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestSide {
    pub verdict: RequestVerdict,
    /// What `zerorepo code` said when nothing was written, or why the side was not judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the acceptance tests passed on the result (`None`: not run).
    pub acceptance_passed: Option<bool>,
    pub suite_passed: Option<bool>,
    pub wall_s: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The repository the side changed.
    pub repo: String,
}

impl RequestSide {
    /// The side ran and its result was judged.
    fn judged(&self) -> bool {
        self.verdict != RequestVerdict::NotJudged
    }
}

/// Before the change: is the library's suite green, and do the acceptance tests fail (they
/// must, or the request asks for nothing)?
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Before {
    pub suite_passed: bool,
    pub acceptance_failed: bool,
}

/// One request's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestResult {
    pub name: String,
    pub library: String,
    pub half: Half,
    pub kind: RequestKind,
    pub examples: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Before>,
    /// Why the request was not run (the sdist, the copy); the sides are then absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<RequestSide>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<RequestSide>,
    /// `--self-check`: the reference change, judged like a side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<RequestSide>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CodeCorpusReport {
    pub date: String,
    pub version: String,
    pub corpus: String,
    /// The model, or `reference` for a self-check.
    pub provider: String,
    pub self_check: bool,
    pub requests: Vec<RequestResult>,
    /// Requests selected that did not run: the run was interrupted before them (the
    /// report of those that finished is written all the same, and is not complete), or, in
    /// the files rewritten after each request, has not reached them yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_reached: Vec<String>,
    pub command: String,
}

impl CodeCorpusReport {
    /// Every request ran and every side was judged; in a self-check, every reference change
    /// was correct with its acceptance tests failing before.
    pub fn complete(&self) -> bool {
        let judged = |side: &Option<RequestSide>| side.as_ref().is_none_or(RequestSide::judged);
        self.not_reached.is_empty()
            && self.requests.iter().all(|r| {
                r.not_run.is_none()
                    && judged(&r.engine)
                    && judged(&r.baseline)
                    && (!self.self_check
                        || (r
                            .before
                            .as_ref()
                            .is_some_and(|b| b.suite_passed && b.acceptance_failed)
                            && r.reference.as_ref().map(|s| s.verdict)
                                == Some(RequestVerdict::Correct)))
            })
    }
}

/// The sides a run asks for, which a result it keeps from an earlier run must hold judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SidesAsked {
    pub engine: bool,
    pub baseline: bool,
    /// `--self-check`: the reference change instead of both.
    pub reference: bool,
}

impl CodeCorpusReport {
    /// Why this report, read back from an earlier run, cannot be resumed by a run of `corpus`
    /// with `provider`: its results would be figures of another corpus, model or kind of run.
    pub fn resume_conflict(
        &self,
        corpus: &str,
        provider: &str,
        self_check: bool,
    ) -> Option<String> {
        let differs = |what: &str, then: &str, now: &str| {
            format!("the report was made with {what} {then}, this run uses {now}")
        };
        if self.self_check != self_check {
            return Some(match self.self_check {
                true => "the report is a self-check, this run asks a model".to_string(),
                false => "the report asked a model, this run is a self-check".to_string(),
            });
        }
        if self.corpus != corpus {
            return Some(differs("the corpus", &self.corpus, corpus));
        }
        (self.provider != provider).then(|| differs("the model", &self.provider, provider))
    }

    /// The earlier run's result of request `name`, when every side `wanted` was judged: a
    /// request it never reached, could not run, or ran without a side asked for now runs again.
    pub fn finished(&self, name: &str, wanted: SidesAsked) -> Option<&RequestResult> {
        let judged = |want: bool, side: &Option<RequestSide>| {
            !want || side.as_ref().is_some_and(RequestSide::judged)
        };
        self.requests.iter().find(|r| {
            r.name == name
                && r.not_run.is_none()
                && judged(wanted.engine, &r.engine)
                && judged(wanted.baseline, &r.baseline)
                && judged(wanted.reference, &r.reference)
        })
    }
}

/// Counts of one side's verdicts over a half, and its time.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Totals {
    correct: usize,
    wrong: usize,
    unchanged: usize,
    not_judged: usize,
    wall_s: f64,
}

impl Totals {
    fn add(&mut self, side: Option<&RequestSide>) {
        let Some(side) = side else {
            self.not_judged += 1;
            return;
        };
        match side.verdict {
            RequestVerdict::Correct => self.correct += 1,
            RequestVerdict::Wrong => self.wrong += 1,
            RequestVerdict::Unchanged => self.unchanged += 1,
            RequestVerdict::NotJudged => self.not_judged += 1,
        }
        self.wall_s += side.wall_s;
    }

    fn cell(&self) -> String {
        let mut text = format!("{} / {} / {}", self.correct, self.wrong, self.unchanged);
        if self.not_judged > 0 {
            text.push_str(&format!(" (+{} not judged)", self.not_judged));
        }
        text
    }
}

fn side_cell(side: Option<&RequestSide>) -> String {
    match side {
        None => "—".into(),
        Some(s) => format!(
            "{} · {:.0} s · {} tok",
            s.verdict.as_str(),
            s.wall_s,
            s.prompt_tokens + s.completion_tokens
        ),
    }
}

/// The report as Markdown: one row per request, then totals per half, then the command.
pub fn render_markdown(report: &CodeCorpusReport) -> String {
    let (first, second) = match report.self_check {
        true => ("reference", "—"),
        false => ("engine", "single answer"),
    };
    let mut out = format!(
        "# Code corpus, {}\n\nzerorepo {} · corpus `{}` · model `{}`\n\n",
        report.date, report.version, report.corpus, report.provider
    );
    out.push_str(&format!(
        "| request | library | half | kind | examples | suite before | {first} | {second} |\n|---|---|---|---|---|---|---|---|\n"
    ));
    for r in &report.requests {
        let (a, b) = match report.self_check {
            true => (r.reference.as_ref(), None),
            false => (r.engine.as_ref(), r.baseline.as_ref()),
        };
        let before = match (&r.not_run, &r.before) {
            (Some(why), _) => format!("not run: {}", why.replace('|', "/")),
            (None, Some(b)) if b.suite_passed => "passes".into(),
            (None, Some(_)) => "FAILS".into(),
            (None, None) => "—".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.library,
            r.half.as_str(),
            r.kind.as_str(),
            if r.examples { "yes" } else { "no" },
            before,
            side_cell(a),
            side_cell(b),
        ));
    }
    out.push_str(&format!(
        "\nTotals (correct / wrong / unchanged, wall time):\n\n| half | requests | {first} | {second} |\n|---|---|---|---|\n"
    ));
    for half in [Half::Dev, Half::Test] {
        let rows: Vec<&RequestResult> = report.requests.iter().filter(|r| r.half == half).collect();
        if rows.is_empty() {
            continue;
        }
        let (mut a, mut b) = (Totals::default(), Totals::default());
        for r in &rows {
            match report.self_check {
                true => a.add(r.reference.as_ref()),
                false => {
                    a.add(r.engine.as_ref());
                    b.add(r.baseline.as_ref());
                }
            }
        }
        let b_cell = match report.self_check {
            true => "—".into(),
            false => format!("{} · {:.0} s", b.cell(), b.wall_s),
        };
        out.push_str(&format!(
            "| {} | {} | {} · {:.0} s | {} |\n",
            half.as_str(),
            rows.len(),
            a.cell(),
            a.wall_s,
            b_cell
        ));
    }
    if !report.not_reached.is_empty() {
        out.push_str(&format!(
            "\nNot run: {} selected request(s), the run interrupted before them or still going: {}.\n",
            report.not_reached.len(),
            report.not_reached.join(", ")
        ));
    }
    out.push_str(&format!("\nReproduce: `{}`\n", report.command));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(verdict: RequestVerdict, wall_s: f64) -> RequestSide {
        RequestSide {
            verdict,
            reason: None,
            acceptance_passed: None,
            suite_passed: None,
            wall_s,
            prompt_tokens: 10,
            completion_tokens: 5,
            repo: String::new(),
        }
    }

    fn request(
        name: &str,
        half: Half,
        engine: RequestVerdict,
        baseline: RequestVerdict,
    ) -> RequestResult {
        RequestResult {
            name: name.into(),
            library: "lib".into(),
            half,
            kind: RequestKind::Add,
            examples: true,
            before: Some(Before {
                suite_passed: true,
                acceptance_failed: true,
            }),
            not_run: None,
            engine: Some(side(engine, 2.0)),
            baseline: Some(side(baseline, 1.0)),
            reference: None,
        }
    }

    #[test]
    fn the_table_counts_each_half_apart_and_ends_with_the_command() {
        let report = CodeCorpusReport {
            date: "2026-11-26".into(),
            version: "0".into(),
            corpus: "c.toml".into(),
            provider: "scripted".into(),
            self_check: false,
            requests: vec![
                request(
                    "a",
                    Half::Dev,
                    RequestVerdict::Correct,
                    RequestVerdict::Wrong,
                ),
                request(
                    "b",
                    Half::Test,
                    RequestVerdict::Correct,
                    RequestVerdict::Unchanged,
                ),
                request(
                    "c",
                    Half::Test,
                    RequestVerdict::Unchanged,
                    RequestVerdict::Correct,
                ),
            ],
            not_reached: vec![],
            command: "zerorepo bench --code-corpus c.toml".into(),
        };
        let md = render_markdown(&report);
        assert!(
            md.contains("| dev | 1 | 1 / 0 / 0 · 2 s | 0 / 1 / 0 · 1 s |"),
            "{md}"
        );
        assert!(
            md.contains("| test | 2 | 1 / 0 / 1 · 4 s | 1 / 0 / 1 · 2 s |"),
            "{md}"
        );
        assert!(
            md.contains("| a | lib | dev | add | yes | passes | correct · 2 s · 15 tok | wrong")
        );
        assert!(
            md.trim_end()
                .ends_with("`zerorepo bench --code-corpus c.toml`")
        );
        assert!(report.complete());
        // Interrupted: what finished is reported, and the rest is named.
        let cut = CodeCorpusReport {
            not_reached: vec!["d".into(), "e".into()],
            ..report
        };
        assert!(!cut.complete());
        assert!(
            render_markdown(&cut).contains(
                "Not run: 2 selected request(s), the run interrupted before them or still going: d, e."
            ),
            "{}",
            render_markdown(&cut)
        );
    }

    #[test]
    fn a_resumed_run_keeps_only_requests_judged_on_every_side_it_asks_for() {
        let mut cut_off = request(
            "b",
            Half::Test,
            RequestVerdict::Wrong,
            RequestVerdict::Wrong,
        );
        cut_off.baseline = Some(side(RequestVerdict::NotJudged, 0.0));
        let mut not_run = request(
            "c",
            Half::Test,
            RequestVerdict::Wrong,
            RequestVerdict::Wrong,
        );
        not_run.not_run = Some("the sdist could not be fetched".into());
        let mut engine_only = request(
            "d",
            Half::Dev,
            RequestVerdict::Correct,
            RequestVerdict::Wrong,
        );
        engine_only.baseline = None;
        let report = CodeCorpusReport {
            date: "2026-12-08".into(),
            version: "0".into(),
            corpus: "c.toml".into(),
            provider: "local:m.gguf".into(),
            self_check: false,
            requests: vec![
                request(
                    "a",
                    Half::Test,
                    RequestVerdict::Correct,
                    RequestVerdict::Wrong,
                ),
                cut_off,
                not_run,
                engine_only,
            ],
            not_reached: vec!["e".into()],
            command: String::new(),
        };
        // Read back as the run wrote it.
        let json = serde_json::to_string(&report).unwrap();
        let report: CodeCorpusReport = serde_json::from_str(&json).unwrap();
        let both = SidesAsked {
            engine: true,
            baseline: true,
            reference: false,
        };
        let engine = SidesAsked {
            baseline: false,
            ..both
        };
        let kept = |wanted| {
            ["a", "b", "c", "d", "e"]
                .into_iter()
                .filter(|name| report.finished(name, wanted).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(both), ["a"]);
        assert_eq!(kept(engine), ["a", "b", "d"]);
        let self_check = SidesAsked {
            engine: false,
            baseline: false,
            reference: true,
        };
        assert!(kept(self_check).is_empty());

        assert_eq!(
            report.resume_conflict("c.toml", "local:m.gguf", false),
            None
        );
        let other_model = report.resume_conflict("c.toml", "local:other.gguf", false);
        assert!(other_model.unwrap().contains("the model local:m.gguf"));
        assert!(
            report
                .resume_conflict("d.toml", "local:m.gguf", false)
                .is_some()
        );
        let kind = report.resume_conflict("c.toml", "local:m.gguf", true);
        assert!(kind.unwrap().contains("self-check"));
    }
}
