//! Read-only views of an output directory: `zerorepo status` (the generation report in
//! `assemble::report` builds on the same counts).
//!
//! It reads the compact checkpoint and the RPG copy the engine keeps in `.zerorepo/rpg.json`,
//! so it works while a generation is running and after it crashed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::checkpoint::load_compact;
use crate::records::NodeRecords;
use crate::records::NodeStatus;
use crate::rpg::Rpg;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StatusCounts {
    pub total: usize,
    pub passed: usize,
    pub needs_review: usize,
    pub failed: usize,
    pub skipped: usize,
    pub in_progress: usize,
    pub pending: usize,
}

impl StatusCounts {
    fn add(&mut self, status: NodeStatus) {
        self.total += 1;
        match status {
            NodeStatus::Passed => self.passed += 1,
            NodeStatus::NeedsReview => self.needs_review += 1,
            NodeStatus::Failed => self.failed += 1,
            NodeStatus::Skipped => self.skipped += 1,
            NodeStatus::InProgress => self.in_progress += 1,
            NodeStatus::Pending => self.pending += 1,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FailedNode {
    pub id: crate::rpg::NodeId,
    pub status: NodeStatus,
    pub reason: String,
    pub retry_count: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StatusReport {
    pub overall: StatusCounts,
    pub subgraphs: BTreeMap<String, StatusCounts>,
    pub failed: Vec<FailedNode>,
    /// Mean time of the nodes that passed, times the nodes still to do.
    pub eta_seconds: Option<u64>,
    /// Model tokens spent, per role, over every node's latest record.
    pub tokens: crate::usage::UsageByRole,
    /// What the node loops did, over the records that say (function nodes).
    pub work: WorkSummary,
    /// Where the fixes looked before they were asked.
    pub debugging: DebugSummary,
}

/// The localization before each fix, over a run (issue 14's figures).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DebugSummary {
    /// Fixes that were localized, and the nodes they fixed.
    pub fixes: usize,
    pub nodes: usize,
    /// Localization queries over all fixes (20 at most per fix).
    pub queries: u64,
    /// Fixes whose first suspect was the symbol they edited.
    pub first_suspect_hits: usize,
    /// Fixes shown code outside their function, because the traceback or a dependency the
    /// failure named pointed there.
    pub pointed_outside: usize,
    /// Fixes that corrected another function of their node's module (a suspect), not the
    /// node's own.
    pub corrected_elsewhere: usize,
    /// Tokens of a fix's prompt: median and 90th percentile (`None` without fixes).
    pub prompt_tokens_median: Option<u64>,
    pub prompt_tokens_p90: Option<u64>,
}

impl DebugSummary {
    /// The figures over `records`, each with its node's id.
    pub fn of<'a>(
        records: impl IntoIterator<Item = (&'a str, &'a crate::records::NodeRecord)>,
    ) -> Self {
        use crate::records::Suspicion;
        let mut summary = DebugSummary::default();
        let mut prompts = Vec::new();
        for (id, record) in records {
            let fixes = &record.localizations;
            summary.nodes += usize::from(!fixes.is_empty());
            for fix in fixes {
                summary.fixes += 1;
                summary.queries += u64::from(fix.queries);
                summary.first_suspect_hits += usize::from(fix.first_suspect_hit());
                summary.pointed_outside += usize::from(fix.suspects.iter().any(|s| {
                    s.symbol != fix.edited
                        && matches!(s.reason, Suspicion::Traceback | Suspicion::Dependency)
                }));
                summary.corrected_elsewhere +=
                    usize::from(fix.suspects.iter().any(|s| {
                        s.symbol == fix.edited && s.node.as_deref().is_some_and(|n| n != id)
                    }));
                prompts.extend((fix.prompt_tokens > 0).then_some(fix.prompt_tokens));
            }
        }
        prompts.sort_unstable();
        summary.prompt_tokens_median = quantile(&prompts, 50);
        summary.prompt_tokens_p90 = quantile(&prompts, 90);
        summary
    }

    /// One line for `status` and the report; `None` when no fix was localized.
    pub fn render(&self) -> Option<String> {
        if self.fixes == 0 {
            return None;
        }
        let tokens = match (self.prompt_tokens_median, self.prompt_tokens_p90) {
            (Some(m), Some(p)) => {
                format!("; prompt tokens per fix: median {m}, 90th percentile {p}")
            }
            _ => String::new(),
        };
        let elsewhere = match self.corrected_elsewhere {
            0 => String::new(),
            n => format!(" ({n} corrected a dependency in its module)"),
        };
        Some(format!(
            "{} on {} localized first: {:.1} queries per fix; the first suspect was \
             the edited function in {} ({}); {} pointed at code outside it{elsewhere}{tokens}",
            plural(self.fixes, "fix", "fixes"),
            plural(self.nodes, "node was", "nodes were"),
            self.queries as f64 / self.fixes as f64,
            self.first_suspect_hits,
            percent(self.first_suspect_hits, self.fixes),
            self.pointed_outside,
        ))
    }
}

/// `n` with the singular or plural form.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The nearest-rank `p`th percentile of sorted `values`.
fn quantile(sorted: &[u64], p: usize) -> Option<u64> {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// The loop's figures over a run: first-try rate, rounds, answers, and where time went.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WorkSummary {
    /// Nodes whose record says what their loop did.
    pub nodes: usize,
    /// Of them, those whose first round's chosen candidate passed every test.
    pub first_try: usize,
    /// Rounds, answers, sandbox runs and times summed over them (see
    /// [`crate::records::NodeWork`]).
    pub totals: crate::records::NodeWork,
    /// Their wall time: what is neither model nor sandbox is the engine's own.
    pub node_ms: u64,
}

impl WorkSummary {
    pub fn add(&mut self, work: &crate::records::NodeWork, duration_ms: u64) {
        self.nodes += 1;
        self.first_try += usize::from(work.first_try);
        let first_try = self.totals.first_try;
        self.totals.add(work);
        self.totals.first_try = first_try;
        self.node_ms += duration_ms;
    }

    /// One line for `status` and the report; `None` when no record says.
    pub fn render(&self) -> Option<String> {
        if self.nodes == 0 {
            return None;
        }
        let t = &self.totals;
        let per = |x: u32| f64::from(x) / self.nodes as f64;
        let engine_ms = self.node_ms.saturating_sub(t.model_ms + t.sandbox_ms);
        let repeated = match t.repeated_fixes {
            0 => String::new(),
            n => format!(" ({n} fix rounds only repeated code already tried, and were not run)"),
        };
        let regressions = match t.regressions_caught {
            0 => String::new(),
            n => format!(
                "; {n} regressions caught (code that broke an earlier function's tests, not kept)"
            ),
        };
        let spending = spending(&t.returns);
        let ahead = match t.asked_ahead {
            0 => String::new(),
            n => format!("; {n} first rounds asked while the tests were written"),
        };
        Some(format!(
            "{} nodes ran the loop: {} passed on the first try ({}); {:.1} rounds and {:.1} answers per node{repeated}; {} sandbox runs{regressions}{ahead}; time: model {:.0} s, sandbox {:.0} s, engine {:.0} s{spending}",
            self.nodes,
            self.first_try,
            percent(self.first_try, self.nodes),
            per(t.rounds),
            per(t.answers),
            t.sandbox_runs,
            t.model_ms as f64 / 1000.0,
            t.sandbox_ms as f64 / 1000.0,
            engine_ms as f64 / 1000.0,
        ))
    }
}

/// What the run's votes, fix rounds and fresh starts bought, and the kinds it stopped
/// asking for (`crate::returns`); empty when none was asked.
fn spending(returns: &crate::returns::Returns) -> String {
    if returns.is_empty() {
        return String::new();
    }
    let kinds = [
        ("votes", returns.votes),
        ("fix rounds", returns.fixes),
        ("fresh starts", returns.fresh_starts),
    ];
    let bought: Vec<String> = kinds
        .iter()
        .filter(|(_, tally)| !tally.is_empty())
        .map(|(name, tally)| format!("{name} {} of {}", tally.paid, tally.tries))
        .collect();
    let stopped = match returns.stopped() {
        none if none.is_empty() => String::new(),
        kinds => format!(
            "; stopped asking for {} (no return after {} tries)",
            kinds.join(" and "),
            crate::returns::FAIR_TRIES
        ),
    };
    let budget = match returns.budget_moved() {
        Some(moved) => format!("; {moved}"),
        None => String::new(),
    };
    format!(
        "; took the node further: {}{stopped}{budget}",
        bought.join(", ")
    )
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("{0} has no checkpoint: run `zerorepo generate RPG --out {0}` first")]
    NoCheckpoint(String),
    #[error("no node `{0}` in the checkpoint (give a node id, or a name the plan gives one node)")]
    NoNode(String),
    #[error("{0}")]
    Unreadable(#[source] crate::checkpoint::CompactError),
}

pub fn status(out: &Path) -> Result<StatusReport, StatusError> {
    let (records, rpg) = load(out)?;
    Ok(summarize(rpg.as_ref(), &records))
}

/// The output's checkpoint records and the engine's copy of its RPG (when readable).
fn load(out: &Path) -> Result<(NodeRecords, Option<Rpg>), StatusError> {
    let records = load_compact(out)
        .map_err(StatusError::Unreadable)?
        .ok_or_else(|| StatusError::NoCheckpoint(out.display().to_string()))?;
    let rpg: Option<Rpg> = std::fs::read_to_string(out.join(crate::layout::RPG_COPY))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    Ok((records, rpg))
}

/// One node's record, found by id or by a name the plan copy gives to one node only.
pub fn node_status(out: &Path, node: &str) -> Result<NodeView, StatusError> {
    let (records, rpg) = load(out)?;
    let named: Vec<&crate::rpg::Node> = rpg
        .iter()
        .flat_map(|r| r.nodes.iter())
        .filter(|n| n.id == node || n.name == node)
        .collect();
    let (id, name) = match named.as_slice() {
        [only] => (only.id.clone(), only.name.clone()),
        _ => (crate::rpg::NodeId::from(node), String::new()),
    };
    let record = records
        .get(&id)
        .cloned()
        .ok_or_else(|| StatusError::NoNode(node.to_string()))?;
    Ok(NodeView { id, name, record })
}

/// `zerorepo status DIR --node ID`: one node's checkpoint record.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    pub id: crate::rpg::NodeId,
    pub name: String,
    pub record: crate::records::NodeRecord,
}

/// The text of `status --node`: what the loop did, the vote, and where each fix looked.
pub fn render_node(view: &NodeView) -> String {
    let r = &view.record;
    let mut out = format!("{} {}: {}\n", view.id, view.name, r.status.as_str());
    if let Some(reason) = &r.failure_reason {
        out.push_str(&format!("reason: {reason}\n"));
    }
    if let Some(t) = r.test_results {
        out.push_str(&format!(
            "last run: {} passed, {} failed; {} retries\n",
            t.passed, t.failed, r.retry_count
        ));
    }
    if let Some(w) = &r.work {
        out.push_str(&format!(
            "loop: {} rounds, {} answers, {} sandbox runs; model {:.0} s, sandbox {:.1} s\n",
            w.rounds,
            w.answers,
            w.sandbox_runs,
            w.model_ms as f64 / 1000.0,
            w.sandbox_ms as f64 / 1000.0
        ));
    }
    if let Some(d) = &r.diagnosis {
        let letters: String = d.votes.iter().map(|v| v.letter()).collect();
        let outcome = d.outcome.map_or("no majority", |v| v.as_str());
        out.push_str(&format!(
            "vote: {letters} (outcome: {outcome}) on {} disputed tests\n",
            d.disputed.len()
        ));
    }
    if !r.flaky.is_empty() {
        out.push_str(&format!(
            "flaky (passed on a repeat of the same code): {}\n",
            r.flaky.join(", ")
        ));
    }
    for fix in &r.localizations {
        out.push_str(&format!(
            "fix at attempt {}: {} localization queries, edited `{}`{}\n",
            fix.attempt,
            fix.queries,
            fix.edited,
            if fix.prompt_tokens > 0 {
                format!(", prompt {} tokens", fix.prompt_tokens)
            } else {
                String::new()
            }
        ));
        for (rank, s) in fix.suspects.iter().enumerate() {
            let node = s
                .node
                .as_deref()
                .map_or(String::new(), |n| format!(" [{n}]"));
            out.push_str(&format!(
                "  {}. {} in {}{node} ({})\n",
                rank + 1,
                s.symbol,
                s.file,
                s.reason.as_str()
            ));
        }
    }
    out
}

/// Counts per status and subgraph, failures, tokens and an ETA, from the RPG (when known) and
/// the checkpoint's records.
pub fn summarize(rpg: Option<&Rpg>, records: &NodeRecords) -> StatusReport {
    let nodes: Vec<(crate::rpg::NodeId, String)> = match rpg {
        Some(rpg) => rpg
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.subgraph().to_string()))
            .collect(),
        None => records
            .keys()
            .map(|id| (id.clone(), "default".to_string()))
            .collect(),
    };
    let mut overall = StatusCounts::default();
    let mut subgraphs: BTreeMap<String, StatusCounts> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut durations = Vec::new();
    let mut tokens = crate::usage::UsageByRole::new();
    let mut work = WorkSummary::default();
    let debugging = DebugSummary::of(
        nodes
            .iter()
            .filter_map(|(id, _)| records.get(id).map(|r| (id.as_str(), r))),
    );
    for (id, subgraph) in &nodes {
        let record = records.get(id);
        let status = record.map_or(NodeStatus::Pending, |r| r.status);
        overall.add(status);
        subgraphs.entry(subgraph.clone()).or_default().add(status);
        if let Some(r) = record {
            for (role, usage) in &r.tokens {
                tokens.entry(*role).or_default().add(*usage);
            }
            if let Some(w) = &r.work {
                work.add(w, r.duration_ms.unwrap_or_default());
            }
            if matches!(
                status,
                NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::NeedsReview
            ) {
                failed.push(FailedNode {
                    id: id.clone(),
                    status,
                    reason: r.failure_reason.clone().unwrap_or_default(),
                    retry_count: r.retry_count,
                });
            }
            if status.is_usable() {
                durations.extend(r.duration_ms);
            }
        }
    }
    let remaining = (overall.pending + overall.in_progress) as u64;
    let eta_seconds = (!durations.is_empty() && remaining > 0)
        .then(|| durations.iter().sum::<u64>() / durations.len() as u64 * remaining / 1000);
    StatusReport {
        overall,
        subgraphs,
        failed,
        eta_seconds,
        tokens,
        work,
        debugging,
    }
}

pub(crate) fn percent(part: usize, total: usize) -> String {
    (part * 100)
        .checked_div(total)
        .map_or_else(|| "-".into(), |p| format!("{p}%"))
}

pub fn render_text(report: &StatusReport) -> String {
    let o = &report.overall;
    let review = if o.needs_review > 0 {
        format!("{} need review, ", o.needs_review)
    } else {
        String::new()
    };
    let mut out = format!(
        "{} nodes: {} passed ({}), {review}{} failed, {} skipped, {} in progress, {} pending\n",
        o.total,
        o.passed,
        percent(o.passed, o.total),
        o.failed,
        o.skipped,
        o.in_progress,
        o.pending
    );
    if !report.tokens.is_empty() {
        let parts: Vec<String> = report
            .tokens
            .iter()
            .map(|(role, u)| {
                format!(
                    "{} {} in / {} out",
                    role.as_str(),
                    u.prompt_tokens,
                    u.completion_tokens
                )
            })
            .collect();
        out.push_str(&format!("model tokens: {}\n", parts.join(", ")));
    }
    if let Some(work) = report.work.render() {
        out.push_str(&work);
        out.push('\n');
    }
    if let Some(debugging) = report.debugging.render() {
        out.push_str(&debugging);
        out.push('\n');
    }
    if let Some(eta) = report.eta_seconds {
        out.push_str(&format!(
            "ETA for the rest: about {}m{:02}s\n",
            eta / 60,
            eta % 60
        ));
    }
    out.push_str("\n| Subgraph | Nodes | Passed | Review | Failed | Skipped | Pending | Pass Rate |\n|---|---|---|---|---|---|---|---|\n");
    for (name, c) in &report.subgraphs {
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.total,
            c.passed,
            c.needs_review,
            c.failed,
            c.skipped,
            c.pending + c.in_progress,
            percent(c.passed, c.total)
        ));
    }
    if !report.failed.is_empty() {
        out.push_str("\nNot passed:\n");
        for f in &report.failed {
            out.push_str(&format!(
                "- {} [{}] {}\n",
                f.id,
                f.status.as_str(),
                f.reason
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::NodeWork;

    #[test]
    fn the_loop_line_gives_the_first_try_rate_and_the_time_split() {
        let mut work = WorkSummary::default();
        assert_eq!(work.render(), None);
        let node = |first_try, rounds| NodeWork {
            rounds,
            answers: 3 * rounds,
            first_try,
            sandbox_runs: 4,
            model_ms: 40_000,
            sandbox_ms: 1_000,
            ..NodeWork::default()
        };
        work.add(&node(true, 1), 42_000);
        work.add(&node(false, 3), 45_000);
        assert_eq!(
            work.render().unwrap(),
            "2 nodes ran the loop: 1 passed on the first try (50%); 2.0 rounds and 6.0 answers \
             per node; 8 sandbox runs; time: model 80 s, sandbox 2 s, engine 5 s"
        );
        let tally = |tries, paid| crate::returns::Payoff { tries, paid };
        let spent = NodeWork {
            asked_ahead: 1,
            returns: crate::returns::Returns {
                votes: tally(6, 0),
                fixes: tally(2, 1),
                ..Default::default()
            },
            ..node(false, 2)
        };
        work.add(&spent, 40_000);
        let line = work.render().unwrap();
        assert!(
            line.contains("; 1 first rounds asked while the tests were written;")
                && line.ends_with(
                    "; took the node further: votes 0 of 6, fix rounds 1 of 2; stopped asking \
                     for votes (no return after 6 tries); fixes paid at least one try in 3, so \
                     the budget was at least 5"
                ),
            "{line}"
        );
    }
}
