//! Where a failure points before a fix is asked: a short ranked list of suspect symbols with
//! their source, strongest signal first (the seed's §4.3–4.4, issue 14). Pure: what it may
//! read comes through [`Ground`], and every look-up is charged to the iteration's
//! [`Budget`] (20 queries by default), so a localization can never run away.
//!
//! The signals, in order:
//! 1. **The traceback.** Every `PATH:LINE: in NAME` frame of pytest's short traceback that lies
//!    in the generated sources (not a test file, not an installed package), innermost first:
//!    the function that raised is the strongest suspect, the callers above it next.
//! 2. **The node's own function**, when the traceback did not already name it: a fix edits it.
//! 3. **The dependency view**: the node's dependencies one and two hops out that the failure
//!    text names (a wrong value handed up from a dependency shows only as its name).
//! 4. **A search over the plan's node descriptions** with the failure's error lines as the
//!    query (BM25): hits that have code are recorded as weak suspects; they are not shown to
//!    the model, since a 1.5B model follows whatever code it is shown.
//!
//! The fix prompt shows the source of the traceback's and the dependency view's suspects that
//! are not the node's own function ([`Localization::shown`]); the record of every query and
//! suspect goes to the node's checkpoint entry, which the report summarises.
//!
//! A shown suspect that is a plan function of the node's own module may be corrected by the
//! fix ([`Localization::editable`]): the fault may lie in a dependency that passed earlier, and
//! its tests are among the module's earlier tests, which every run of the node repeats, so a
//! correction that breaks it is caught as a regression. Code in other modules is shown to be
//! used as it is: another node may be running in that file.

use crate::localize::{Budget, Query};
use crate::python::is_name_char;
use crate::records::{LocalizedFix, Suspicion};
use crate::rpg::NodeId;

/// Suspects kept per localization.
const MAX_SUSPECTS: usize = 5;
/// Suspects other than the node's own function whose source a fix prompt shows.
const MAX_SHOWN: usize = 2;
/// Plan nodes a search returns.
const SEARCH_K: usize = 3;

/// One frame of pytest's short traceback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame<'a> {
    pub path: &'a str,
    pub line: u32,
    pub function: &'a str,
}

/// A node of the plan as the localizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanFunction {
    pub id: NodeId,
    pub name: String,
    pub file: String,
}

/// What the localizer may read: the code written so far and the plan around the node.
pub(crate) trait Ground {
    /// The definition of `symbol` in `file` as it is now (the code tools' view of a symbol).
    fn source_of(&self, file: &str, symbol: &str) -> Option<String>;
    /// The plan node that defines `symbol` in `file`.
    fn node_of(&self, file: &str, symbol: &str) -> Option<NodeId>;
    /// The node's dependencies one then two hops out, nearest first.
    fn dependencies(&self) -> Vec<PlanFunction>;
    /// The plan's nodes whose descriptions best match `text`, best first.
    fn search(&self, text: &str, k: usize) -> Vec<PlanFunction>;
}

/// One suspect symbol, with its source as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suspect {
    pub symbol: String,
    pub file: String,
    pub node: Option<NodeId>,
    pub reason: Suspicion,
    pub source: String,
}

/// What one localization found, and what it asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Localization {
    pub suspects: Vec<Suspect>,
    /// Queries charged to the budget.
    pub queries: u32,
    /// The budget ran out before every signal was read.
    pub exhausted: bool,
}

impl Localization {
    /// The suspects whose source a fix prompt shows: found by the traceback or the dependency
    /// view, and not the function being fixed (the prompt has that already).
    pub fn shown(&self, own: &PlanFunction) -> Vec<&Suspect> {
        self.suspects
            .iter()
            .filter(|s| !(s.symbol == own.name && s.file == own.file))
            .filter(|s| matches!(s.reason, Suspicion::Traceback | Suspicion::Dependency))
            .take(MAX_SHOWN)
            .collect()
    }

    /// The shown suspects a fix may correct: plan functions of `own`'s module other than
    /// `own` (their tests run with every run of the node).
    pub(crate) fn editable(&self, own: &PlanFunction) -> Vec<String> {
        self.shown(own)
            .into_iter()
            .filter(|s| s.file == own.file && s.node.is_some())
            .map(|s| s.symbol.clone())
            .collect()
    }

    /// The checkpoint's record of this localization, given the symbol the fix then edited.
    pub fn record(&self, attempt: u32, edited: &str) -> LocalizedFix {
        LocalizedFix {
            attempt,
            queries: self.queries,
            suspects: self
                .suspects
                .iter()
                .map(|s| crate::records::SuspectRecord {
                    symbol: s.symbol.clone(),
                    file: s.file.clone(),
                    node: s.node.clone(),
                    reason: s.reason,
                })
                .collect(),
            edited: edited.to_string(),
            prompt_tokens: 0,
        }
    }
}

/// Every `PATH:LINE: in NAME` line of pytest's short tracebacks, in the order printed
/// (outermost first within each traceback).
pub(crate) fn frames(output: &str) -> Vec<Frame<'_>> {
    output
        .lines()
        .filter_map(|line| {
            let (location, function) = line.split_once(": in ")?;
            let (path, number) = location.rsplit_once(':')?;
            let line = number.parse::<u32>().ok()?;
            let function = function.trim();
            let plain = !path.is_empty() && !path.contains(char::is_whitespace);
            (plain && is_identifier(function)).then_some(Frame {
                path,
                line,
                function,
            })
        })
        .collect()
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(is_name_char)
}

/// A frame in the generated sources: relative, not a test, not an installed package.
fn in_sources(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.ends_with(".py")
        && !path.starts_with('/')
        && !path.starts_with("..")
        && !path.contains("site-packages")
        && !path.split('/').any(|part| part == "tests")
        && !file.starts_with("test_")
        && file != "conftest.py"
}

/// The error lines of a failure (pytest's `E   ` lines), the query of the plan search.
fn error_lines(failure: &str) -> String {
    let lines: Vec<&str> = failure
        .lines()
        .filter_map(|l| l.strip_prefix("E "))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

/// Whether `text` names `word` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(is_name_char);
        !part(before) && !part(after)
    })
}

/// Localizes `failure` of the node whose function is `own`; see the module doc for the order.
pub fn localize(
    own: &PlanFunction,
    failure: &str,
    ground: &impl Ground,
    budget: &mut Budget,
) -> Localization {
    let mut found = Localizing {
        suspects: Vec::new(),
        queries: 0,
        exhausted: false,
        budget,
    };
    found.traceback(failure, ground);
    if !found.has(&own.file, &own.name) {
        let source = ground.source_of(&own.file, &own.name).unwrap_or_default();
        found.push(own.clone(), Suspicion::Own, source);
    }
    found.dependencies(own, failure, ground);
    found.search(failure, ground);
    Localization {
        suspects: found.suspects,
        queries: found.queries,
        exhausted: found.exhausted,
    }
}

/// A localization under way.
struct Localizing<'b> {
    suspects: Vec<Suspect>,
    queries: u32,
    exhausted: bool,
    budget: &'b mut Budget,
}

impl Localizing<'_> {
    fn has(&self, file: &str, symbol: &str) -> bool {
        self.suspects
            .iter()
            .any(|s| s.file == file && s.symbol == symbol)
    }

    fn full(&self) -> bool {
        self.exhausted || self.suspects.len() >= MAX_SUSPECTS
    }

    /// Charges one query; false (and nothing more is asked) once the budget is spent.
    fn charge(&mut self) -> bool {
        match self.budget.charge() {
            Ok(_) => {
                self.queries += 1;
                true
            }
            Err(_) => {
                self.exhausted = true;
                false
            }
        }
    }

    fn record(&mut self, query: Query, found: Vec<String>) {
        self.budget.record(self.queries, query, found, None);
    }

    fn push(&mut self, function: PlanFunction, reason: Suspicion, source: String) {
        self.suspects.push(Suspect {
            symbol: function.name,
            file: function.file,
            node: Some(function.id).filter(|id| !id.is_empty()),
            reason,
            source,
        });
    }

    /// The traceback's frames in the sources, innermost first, each looked up once.
    fn traceback(&mut self, failure: &str, ground: &impl Ground) {
        let frames = frames(failure);
        for frame in frames.iter().rev().filter(|f| in_sources(f.path)) {
            if self.full() || self.has(frame.path, frame.function) {
                continue;
            }
            if !self.charge() {
                return;
            }
            let source = ground.source_of(frame.path, frame.function);
            let node = ground.node_of(frame.path, frame.function);
            let target = format!("{}::{}", frame.path, frame.function);
            self.record(
                Query::Source { target },
                node.iter().map(NodeId::to_string).collect(),
            );
            if let Some(source) = source {
                let function = PlanFunction {
                    id: node.unwrap_or_default(),
                    name: frame.function.to_string(),
                    file: frame.path.to_string(),
                };
                self.push(function, Suspicion::Traceback, source);
            }
        }
    }

    /// The dependencies the failure names, nearest first.
    fn dependencies(&mut self, own: &PlanFunction, failure: &str, ground: &impl Ground) {
        if self.full() || !self.charge() {
            return;
        }
        let deps = ground.dependencies();
        let query = Query::Deps {
            node: own.id.to_string(),
            hops: crate::localize::DEFAULT_HOPS,
        };
        self.record(query, deps.iter().map(|d| d.id.to_string()).collect());
        for dep in deps {
            if self.full() || self.has(&dep.file, &dep.name) || !names(failure, &dep.name) {
                continue;
            }
            if let Some(source) = ground.source_of(&dep.file, &dep.name) {
                self.push(dep, Suspicion::Dependency, source);
            }
        }
    }

    /// Plan nodes whose descriptions match the failure's error lines, when they have code.
    fn search(&mut self, failure: &str, ground: &impl Ground) {
        let text = error_lines(failure);
        if text.is_empty() || self.full() || !self.charge() {
            return;
        }
        let hits = ground.search(&text, SEARCH_K);
        let query = Query::Search {
            text,
            k: SEARCH_K,
            scope: None,
        };
        self.record(query, hits.iter().map(|h| h.id.to_string()).collect());
        for hit in hits {
            if self.full() || self.has(&hit.file, &hit.name) {
                continue;
            }
            if let Some(source) = ground.source_of(&hit.file, &hit.name) {
                self.push(hit, Suspicion::Search, source);
            }
        }
    }
}

/// The fix prompt's section on what the failure points at, empty when it points only at the
/// function being fixed. It ends in a blank line so that, empty, the prompt is as before.
pub(crate) fn prompt_section(name: &str, shown: &[&Suspect], editable: &[String]) -> String {
    if shown.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = shown
        .iter()
        .map(|s| {
            let why = match s.reason {
                Suspicion::Traceback => "the traceback passes through it",
                _ => "the failure names it",
            };
            let own_file = match editable.contains(&s.symbol) {
                true => {
                    "; it is in this file: when the fault is in it, put its corrected \
                     definition in your answer too"
                }
                false => "",
            };
            format!(
                "`{}` in {} ({why}{own_file}):\n```python\n{}\n```",
                s.symbol,
                s.file,
                s.source.trim_end()
            )
        })
        .collect();
    let header = match editable.is_empty() {
        true => format!(
            "The failure points at code outside `{name}` too; use it as it is (it is not yours \
             to change here):"
        ),
        false => format!("The failure points at code outside `{name}` too:"),
    };
    format!("{header}\n{}\n\n", parts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn function(id: &str, name: &str, file: &str) -> PlanFunction {
        PlanFunction {
            id: id.into(),
            name: name.into(),
            file: file.into(),
        }
    }

    /// Sources by (file, symbol); dependencies and search hits as given.
    #[derive(Default)]
    struct Fake {
        sources: BTreeMap<(String, String), (Option<NodeId>, String)>,
        deps: Vec<PlanFunction>,
        hits: Vec<PlanFunction>,
    }

    impl Fake {
        fn define(mut self, f: &PlanFunction) -> Fake {
            let source = format!("def {}():\n    pass", f.name);
            let node = Some(f.id.clone()).filter(|id| !id.is_empty());
            self.sources
                .insert((f.file.clone(), f.name.clone()), (node, source));
            self
        }
    }

    impl Ground for Fake {
        fn source_of(&self, file: &str, symbol: &str) -> Option<String> {
            let key = (file.to_string(), symbol.to_string());
            self.sources.get(&key).map(|(_, s)| s.clone())
        }
        fn node_of(&self, file: &str, symbol: &str) -> Option<NodeId> {
            let key = (file.to_string(), symbol.to_string());
            self.sources.get(&key).and_then(|(n, _)| n.clone())
        }
        fn dependencies(&self) -> Vec<PlanFunction> {
            self.deps.clone()
        }
        fn search(&self, _: &str, k: usize) -> Vec<PlanFunction> {
            self.hits.iter().take(k).cloned().collect()
        }
    }

    const FAILURE: &str = "\
___________________ test_standardize ___________________
tests/test_scaling.py:12: in test_standardize
    assert standardize([[1.0], [3.0]]) == [[-1.0], [1.0]]
src/lib/scaling.py:30: in standardize
    means, stds = column_mean_std(rows)
src/lib/stats.py:8: in column_mean_std
    return sum(r) / len(rows[0])
E   ZeroDivisionError: division by zero
";

    #[test]
    fn the_traceback_ranks_the_innermost_source_frame_first_and_skips_tests() {
        let got: Vec<(&str, u32, &str)> = frames(FAILURE)
            .iter()
            .map(|f| (f.path, f.line, f.function))
            .collect();
        assert_eq!(
            got,
            [
                ("tests/test_scaling.py", 12, "test_standardize"),
                ("src/lib/scaling.py", 30, "standardize"),
                ("src/lib/stats.py", 8, "column_mean_std"),
            ]
        );
        let own = function("n2", "standardize", "src/lib/scaling.py");
        let dep = function("n1", "column_mean_std", "src/lib/stats.py");
        let ground = Fake::default().define(&own).define(&dep);
        let mut budget = Budget::new(20);
        let found = localize(&own, FAILURE, &ground, &mut budget);
        let ranked: Vec<(&str, Suspicion, Option<&str>)> = found
            .suspects
            .iter()
            .map(|s| (s.symbol.as_str(), s.reason, s.node.as_deref()))
            .collect();
        assert_eq!(
            ranked,
            [
                ("column_mean_std", Suspicion::Traceback, Some("n1")),
                ("standardize", Suspicion::Traceback, Some("n2")),
            ]
        );
        // Two source look-ups, the dependency view, the search.
        assert_eq!(found.queries, 4);
        assert_eq!(budget.history().len(), 4);
        let shown: Vec<&str> = found
            .shown(&own)
            .iter()
            .map(|s| s.symbol.as_str())
            .collect();
        assert_eq!(shown, ["column_mean_std"]);
        // In another module: shown to be used as it is.
        assert!(found.editable(&own).is_empty());
        let section = prompt_section("standardize", &found.shown(&own), &[]);
        assert!(section.contains("`column_mean_std` in src/lib/stats.py"));
        assert!(section.contains("def column_mean_std():"));
        assert!(section.contains("use it as it is"), "{section}");
        // In the node's own module: a fix may correct it.
        let near = function("n1", "column_mean_std", "src/lib/scaling.py");
        let ground = Fake::default().define(&own).define(&near);
        let failure = FAILURE.replace("src/lib/stats.py", "src/lib/scaling.py");
        let found = localize(&own, &failure, &ground, &mut Budget::new(20));
        let editable = found.editable(&own);
        assert_eq!(editable, ["column_mean_std"]);
        let section = prompt_section("standardize", &found.shown(&own), &editable);
        assert!(
            section.contains("it is in this file: when the fault is in it, put its corrected")
                && !section.contains("use it as it is"),
            "{section}"
        );
        let record = found.record(1, "standardize");
        assert_eq!(record.suspects[0].symbol, "column_mean_std");
        assert_eq!(record.edited, "standardize");
    }

    #[test]
    fn an_assertion_in_the_test_puts_the_own_function_first_then_named_dependencies() {
        let failure = "\
tests/test_scaling.py:12: in test_standardize
    assert standardize(rows) == expected
E   AssertionError: assert [[0.5]] == [[1.0]]
E    +  where [[0.5]] = standardize(rows) and column_mean_std was given rows
";
        let own = function("n2", "standardize", "src/lib/scaling.py");
        let named = function("n1", "column_mean_std", "src/lib/stats.py");
        let unnamed = function("n0", "mean", "src/lib/stats.py");
        let hit = function("n9", "one_hot", "src/lib/encode.py");
        let mut ground = Fake::default()
            .define(&own)
            .define(&named)
            .define(&unnamed)
            .define(&hit);
        ground.deps = vec![named.clone(), unnamed.clone()];
        ground.hits = vec![hit.clone(), own.clone()];
        let mut budget = Budget::new(20);
        let found = localize(&own, failure, &ground, &mut budget);
        let ranked: Vec<(&str, Suspicion)> = found
            .suspects
            .iter()
            .map(|s| (s.symbol.as_str(), s.reason))
            .collect();
        assert_eq!(
            ranked,
            [
                ("standardize", Suspicion::Own),
                ("column_mean_std", Suspicion::Dependency),
                ("one_hot", Suspicion::Search),
            ]
        );
        // The search hit is recorded, never shown.
        let shown: Vec<&str> = found
            .shown(&own)
            .iter()
            .map(|s| s.symbol.as_str())
            .collect();
        assert_eq!(shown, ["column_mean_std"]);
        // Nothing outside the function: the prompt is as it was.
        assert_eq!(prompt_section("standardize", &[], &[]), "");
    }

    #[test]
    fn the_budget_of_the_iteration_bounds_the_queries() {
        let mut failure = String::new();
        for i in 0..30 {
            failure.push_str(&format!("src/lib/m.py:{i}: in f{i}\n    x\n"));
        }
        failure.push_str("E   ValueError: x\n");
        let own = function("n", "g", "src/lib/m.py");
        let mut ground = Fake::default().define(&own);
        for i in 0..30 {
            ground = ground.define(&function("", &format!("f{i}"), "src/lib/m.py"));
        }
        let mut budget = Budget::new(3);
        let found = localize(&own, &failure, &ground, &mut budget);
        assert_eq!(found.queries, 3);
        assert!(found.exhausted);
        assert_eq!(budget.remaining(), 0);
        // What was found before the budget ran out is kept; the own function is added free.
        let symbols: Vec<&str> = found.suspects.iter().map(|s| s.symbol.as_str()).collect();
        assert_eq!(symbols, ["f29", "f28", "f27", "g"]);
    }

    #[test]
    fn frames_outside_the_sources_are_not_suspects() {
        for path in [
            "/usr/lib/python3.11/statistics.py",
            "tests/test_x.py",
            "src/pkg/tests/helpers.py",
            "conftest.py",
            ".venv/lib/site-packages/numpy/core.py",
            "../elsewhere.py",
        ] {
            assert!(!in_sources(path), "{path}");
        }
        assert!(in_sources("src/pkg/stats.py"));
        assert!(names("x = column_mean_std(rows)", "column_mean_std"));
        assert!(!names("x = column_mean_std_v2(rows)", "column_mean_std"));
    }
}
