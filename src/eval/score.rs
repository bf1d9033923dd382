//! From per-file outcomes to the figures: each test attributed to a plan leaf by name, then
//! counted per node, per subgraph, per file and overall.
//!
//! Attribution is by name because that is how reference tests are written and how a reader
//! checks them: `test_calculate_mean_empty` tests `calculate_mean`. The longest matching name
//! wins (`double_plus_one` over `double`), first among the leaves of the module the file
//! covers (`test_<module>.py`), since the same name may exist in another module.

use std::collections::BTreeMap;

use super::cases::{Case, CaseOutcome, FileRun, base_id};
use super::{Evaluation, FileScore, NodeScore, Reference, SubgraphScore, Tally, TestResult};
use crate::rpg::Node;

impl Tally {
    fn add(&mut self, outcome: CaseOutcome) {
        self.total += 1;
        match outcome {
            CaseOutcome::Passed => self.passed += 1,
            CaseOutcome::Failed => self.failed += 1,
            CaseOutcome::Error => self.errors += 1,
            CaseOutcome::Skipped => self.skipped += 1,
        }
        self.pass_rate = Some(f64::from(self.passed) / f64::from(self.total));
    }
}

/// The figures of `runs`, one per reference file, run in `sandbox`.
pub(super) fn score(reference: &Reference, runs: &[FileRun], sandbox: String) -> Evaluation {
    let leaves: Vec<&Node> = reference.rpg.nodes.iter().filter(|n| n.is_leaf()).collect();
    let mut overall = Tally::default();
    let mut by_node: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut files = Vec::new();
    let mut tests = Vec::new();
    for run in runs {
        let module = module_of(&run.file);
        let mut tally = Tally::default();
        for case in &run.cases {
            let node = owner(&leaves, module, &case.id);
            overall.add(case.outcome);
            tally.add(case.outcome);
            if let Some(node) = node {
                by_node.entry(&node.id).or_default().add(case.outcome);
            }
            tests.push(result(&run.file, case, node));
        }
        files.push(FileScore {
            file: run.file.clone(),
            tally,
            problem: run.problem.clone(),
        });
    }
    let (nodes, subgraphs) = node_scores(reference, &leaves, &by_node);
    Evaluation {
        out: reference.out.display().to_string(),
        reference: reference.dir.display().to_string(),
        sandbox,
        overall,
        subgraphs,
        nodes,
        files,
        untested_leaves: leaves
            .iter()
            .filter(|n| !by_node.contains_key(n.id.as_str()))
            .map(|n| n.id.clone())
            .collect(),
        tests,
        disputes: None,
        decisions: None,
    }
}

fn result(file: &str, case: &Case, node: Option<&Node>) -> TestResult {
    TestResult {
        file: file.to_string(),
        test: case.id.clone(),
        node: node.map(|n| n.id.clone()),
        outcome: case.outcome,
        reason: case.reason.clone(),
    }
}

/// The scores of the leaves with tests, in plan order, and of their subgraphs, in the order
/// the plan first names them.
fn node_scores(
    reference: &Reference,
    leaves: &[&Node],
    by_node: &BTreeMap<&str, Tally>,
) -> (Vec<NodeScore>, Vec<SubgraphScore>) {
    let mut nodes = Vec::new();
    let mut subgraphs: Vec<SubgraphScore> = Vec::new();
    for node in leaves {
        let Some(tally) = by_node.get(node.id.as_str()) else {
            continue;
        };
        nodes.push(NodeScore {
            id: node.id.clone(),
            name: node.name.clone(),
            subgraph: node.subgraph().to_string(),
            status: reference.statuses.get(node.id.as_str()).map(|s| s.status),
            tally: *tally,
        });
        let at = match subgraphs.iter().position(|s| s.subgraph == node.subgraph()) {
            Some(at) => at,
            None => {
                subgraphs.push(SubgraphScore {
                    subgraph: node.subgraph().to_string(),
                    tally: Tally::default(),
                });
                subgraphs.len() - 1
            }
        };
        subgraphs[at].tally.merge(tally);
    }
    (nodes, subgraphs)
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.total += other.total;
        self.passed += other.passed;
        self.failed += other.failed;
        self.errors += other.errors;
        self.skipped += other.skipped;
        self.pass_rate = (self.total > 0).then(|| f64::from(self.passed) / f64::from(self.total));
    }
}

/// `test_batching.py` -> `batching`: the module whose leaves the file covers.
fn module_of(file: &str) -> &str {
    let stem = file.trim_end_matches(".py");
    stem.strip_prefix("test_").unwrap_or(stem)
}

/// The leaf a test is attributed to: the longest leaf name that occurs, word for word, in the
/// test's name, among the leaves of `module` first, then among all leaves.
pub(super) fn owner<'a>(leaves: &[&'a Node], module: &str, test_id: &str) -> Option<&'a Node> {
    let test = test_words(test_id);
    let longest = |in_module: bool| {
        let mut best: Option<&'a Node> = None;
        for node in leaves {
            if in_module && node.module_stem() != Some(module) {
                continue;
            }
            let longer = best.is_none_or(|b| node.name.len() > b.name.len());
            if longer && contains_run(&test, &words(&node.name)) {
                best = Some(node);
            }
        }
        best
    };
    longest(true).or_else(|| longest(false))
}

/// The words of a test's name without the `test` that every name starts with:
/// `TestLinearModel::test_fit_empty[2]` -> `linear model fit empty`.
fn test_words(test_id: &str) -> Vec<String> {
    base_id(test_id)
        .split("::")
        .flat_map(|part| {
            let mut w = words(part);
            if w.first().is_some_and(|f| f == "test") {
                w.remove(0);
            }
            w
        })
        .collect()
}

/// A Python name as lowercase words: `calculate_mean` and `CalculateMean` are both
/// `calculate mean`.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for c in part.chars() {
            if c.is_uppercase() && previous_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        words.push(word);
    }
    words
}

/// Whether `needle` occurs in `hay` as consecutive words.
fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpg::Rpg;

    fn rpg() -> Rpg {
        let leaf = |id: &str, name: &str, file: &str, subgraph: &str| {
            serde_json::json!({"id": id, "name": name, "type": "function", "node_type": "leaf",
                "file_path": file, "subgraph_id": subgraph, "docstring": "d"})
        };
        serde_json::from_value(serde_json::json!({"nodes": [
            {"id": "m", "name": "steps", "type": "module", "node_type": "composite",
             "file_path": "src/chain/steps.py", "subgraph_id": "core"},
            leaf("n1", "double", "src/chain/steps.py", "core"),
            leaf("n2", "double_plus_one", "src/chain/steps.py", "core"),
            leaf("n3", "mean", "src/chain/stats.py", "stats"),
            leaf("n4", "mean", "src/chain/other.py", "other"),
            leaf("n5", "LinearModel", "src/chain/linear.py", "stats"),
        ]}))
        .unwrap()
    }

    fn owner_id(rpg: &Rpg, module: &str, test: &str) -> Option<String> {
        let leaves: Vec<&Node> = rpg.nodes.iter().filter(|n| n.is_leaf()).collect();
        owner(&leaves, module, test).map(|n| n.id.to_string())
    }

    #[test]
    fn the_longest_whole_word_name_wins_and_the_files_module_first() {
        let rpg = rpg();
        let owner = |module, test| owner_id(&rpg, module, test);
        assert_eq!(
            owner("steps", "test_double_plus_one_zero").as_deref(),
            Some("n2")
        );
        assert_eq!(
            owner("steps", "test_double_negative").as_deref(),
            Some("n1")
        );
        assert_eq!(owner("other", "test_mean_empty[3]").as_deref(), Some("n4"));
        assert_eq!(owner("stats", "test_mean_empty").as_deref(), Some("n3"));
        // Outside the file's module, the first of equally long names in plan order.
        assert_eq!(owner("steps", "test_mean_empty").as_deref(), Some("n3"));
        assert_eq!(
            owner("linear", "TestLinearModel::test_fit").as_deref(),
            Some("n5")
        );
        assert_eq!(
            owner("linear", "test_linear_model_fit").as_deref(),
            Some("n5")
        );
        // Words, not substrings: `mean` is not in `meaning`, `double` not in `doubled`.
        assert_eq!(owner("stats", "test_meaning_doubled"), None);
    }

    #[test]
    fn a_failed_node_shows_with_its_status_and_unmatched_tests_count_only_overall() {
        use crate::eval::cases::{Case, FileRun};
        use crate::localize::NodeState;
        use crate::records::NodeStatus;
        let state = |status| NodeState {
            status,
            failure_reason: None,
        };
        let reference = Reference {
            out: "out".into(),
            dir: "ref".into(),
            rpg: rpg(),
            statuses: [("n1", NodeStatus::Passed), ("n2", NodeStatus::Failed)]
                .into_iter()
                .map(|(id, s)| (id.into(), state(s)))
                .collect(),
            records: None,
            files: Vec::new(),
        };
        let case = |id: &str, outcome| Case {
            id: id.into(),
            outcome,
            reason: None,
        };
        let run = FileRun {
            file: "test_steps.py".into(),
            cases: vec![
                case("test_double_one", CaseOutcome::Passed),
                case("test_double_plus_one_a", CaseOutcome::Error),
                case("test_double_plus_one_b", CaseOutcome::Failed),
                case("test_something_else", CaseOutcome::Passed),
            ],
            problem: None,
        };
        let e = score(&reference, &[run], "bwrap".into());
        assert_eq!((e.overall.total, e.overall.passed), (4, 2));
        let nodes: Vec<_> = e
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.status, n.tally.passed, n.tally.total))
            .collect();
        assert_eq!(
            nodes,
            [
                ("n1", Some(NodeStatus::Passed), 1, 1),
                ("n2", Some(NodeStatus::Failed), 0, 2)
            ]
        );
        assert_eq!(e.subgraphs.len(), 1);
        assert_eq!(
            (e.subgraphs[0].tally.passed, e.subgraphs[0].tally.total),
            (1, 3)
        );
        assert_eq!((e.files[0].tally.passed, e.files[0].tally.total), (2, 4));
        assert_eq!(e.tests[3].node, None);
        assert_eq!(e.untested_leaves, ["n3", "n4", "n5"]);
    }

    #[test]
    fn tallies_count_errors_and_skips_as_not_passed() {
        let mut tally = Tally::default();
        for outcome in [
            CaseOutcome::Passed,
            CaseOutcome::Failed,
            CaseOutcome::Error,
            CaseOutcome::Skipped,
        ] {
            tally.add(outcome);
        }
        assert_eq!(
            (
                tally.total,
                tally.passed,
                tally.failed,
                tally.errors,
                tally.skipped
            ),
            (4, 1, 1, 1, 1)
        );
        assert_eq!(tally.pass_rate, Some(0.25));
        assert_eq!(Tally::default().pass_rate, None);
    }
}
