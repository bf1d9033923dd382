//! A reference narrowed to some of its tests: `DIR/select.txt`, one pytest node id per line,
//! relative to `DIR/tests` (`test_more.py::ChunkedTests`, or `test_x.py` for a whole file).
//!
//! A library's own test suite is bigger than the part of the library a plan covers, and its
//! test files share helpers, data and a `conftest.py` with the files left out; so the whole
//! directory is kept, and this file says what runs. Without it every `test_*.py` runs whole.
//! With it only the files it names run, and a file named with node ids runs and counts only
//! the tests beneath them (pytest is given the node ids, one run each, merged).

use std::collections::BTreeMap;

use crate::sandbox::TestRun;

/// The selection file's name, directly in the reference directory.
pub const SELECTION_FILE: &str = "select.txt";

/// File name → the node ids within it to run (empty: the whole file).
pub(super) type Selection = BTreeMap<String, Vec<String>>;

/// Reads the selection's text; `#` starts a comment. A file named whole and by node ids runs
/// whole.
pub(super) fn parse(text: &str) -> Result<Selection, String> {
    let mut selection: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let (file, node) = match line.split_once("::") {
            Some((file, node)) => (file, Some(node)),
            None => (line, None),
        };
        let plain = file.starts_with("test_")
            && file.ends_with(".py")
            && !file.contains('/')
            && node.is_none_or(|n| n.split("::").all(crate::python::is_identifier));
        if !plain {
            return Err(format!(
                "line {}: `{line}` is not `test_<name>.py` or `test_<name>.py::Node` (files directly in tests/)",
                i + 1
            ));
        }
        let entry = selection
            .entry(file.to_string())
            .or_insert(Some(Vec::new()));
        match (node, entry.as_mut()) {
            (Some(node), Some(nodes)) if !nodes.iter().any(|n| n == node) => {
                nodes.push(node.to_string())
            }
            (Some(_), _) => {}
            (None, _) => *entry = None,
        }
    }
    Ok(selection
        .into_iter()
        .map(|(file, nodes)| (file, nodes.unwrap_or_default()))
        .collect())
}

/// The declared tests that fall under `nodes` (all of them when `nodes` is empty).
pub(super) fn narrow(declared: Vec<String>, nodes: &[String]) -> Vec<String> {
    if nodes.is_empty() {
        return declared;
    }
    declared
        .into_iter()
        .filter(|id| {
            nodes.iter().any(|n| {
                id == n
                    || id
                        .strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with("::"))
            })
        })
        .collect()
}

/// The runs of one file's node ids as one run: every test reported, the outputs one after
/// the other, the worst exit code (a collection error over a failure over a pass), stopped
/// when any was stopped.
pub(super) fn merge(runs: Vec<TestRun>) -> Option<TestRun> {
    let mut runs = runs.into_iter();
    let mut merged = runs.next()?;
    for run in runs {
        merged.exit_code = match (merged.exit_code, run.exit_code) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        merged.passed += run.passed;
        merged.failed += run.failed;
        merged.errors += run.errors;
        merged.timed_out |= run.timed_out;
        merged.cancelled |= run.cancelled;
        merged.killed_by = merged.killed_by.or(run.killed_by);
        merged.output.push_str(&run.output);
        merged.stdout.push_str(&run.stdout);
        merged.stderr.push_str(&run.stderr);
        merged.duration += run.duration;
        merged.cpu_ms = merged.cpu_ms.zip(run.cpu_ms).map(|(a, b)| a + b);
        merged.max_rss_kb = merged.max_rss_kb.max(run.max_rss_kb);
        merged.tests.extend(run.tests);
    }
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_names_files_and_node_ids_and_a_whole_file_wins() {
        let text = "# chosen\n\ntest_more.py::ChunkedTests\ntest_more.py::FirstTests  # the first\n\
                    test_more.py::ChunkedTests\ntest_a.py\ntest_b.py::K::test_m\ntest_b.py\n";
        let selection = parse(text).unwrap();
        assert_eq!(
            selection,
            BTreeMap::from([
                ("test_a.py".to_string(), vec![]),
                ("test_b.py".to_string(), vec![]),
                (
                    "test_more.py".to_string(),
                    vec!["ChunkedTests".to_string(), "FirstTests".to_string()]
                ),
            ])
        );
    }

    #[test]
    fn a_selection_refuses_paths_and_odd_node_ids() {
        for bad in [
            "../test_x.py",
            "sub/test_x.py",
            "helpers.py",
            "test_x.py::a b",
            "test_x.py::",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.starts_with("line 1:"), "{bad}: {err}");
        }
    }

    #[test]
    fn narrowing_keeps_the_tests_beneath_the_nodes() {
        let declared = [
            "Chunked::test_a",
            "ChunkedTests::test_b",
            "ChunkedTests::test_c",
            "test_f",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            narrow(declared.clone(), &["ChunkedTests".into(), "test_f".into()]),
            ["ChunkedTests::test_b", "ChunkedTests::test_c", "test_f"]
        );
        assert_eq!(narrow(declared.clone(), &[]), declared);
    }

    #[test]
    fn merged_runs_keep_every_test_and_the_worst_exit() {
        let run = |exit: i32, name: &str| TestRun {
            exit_code: Some(exit),
            cancelled: false,
            killed_by: None,
            output: format!("{name}\n"),
            tests: vec![crate::sandbox::TestOutcome {
                name: name.into(),
                outcome: "passed".into(),
            }],
            ..TestRun::cancelled("bwrap")
        };
        let merged = merge(vec![run(0, "a"), run(1, "b"), run(0, "c")]).unwrap();
        assert_eq!(merged.exit_code, Some(1));
        assert_eq!(merged.output, "a\nb\nc\n");
        assert_eq!(merged.tests.len(), 3);
        assert!(!merged.cancelled);
        assert!(merge(Vec::new()).is_none());
    }
}
