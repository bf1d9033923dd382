//! Which implementation a node keeps: the evidence a run of its tests gives each candidate,
//! and the two ways of weighing it ([`Weighing`]).
//!
//! A plan's examples are ground truth; so are the module's earlier tests and a function having
//! a body at all. The model's own tests are not: a small model's are wrong about a third of the
//! time. Where the plan gives a node examples, their test is a gate and candidates that pass it
//! are told apart by agreement on the generated tests (CodeT). Where it gives none, agreement
//! with the model's tests is close to noise: measured on plans without examples, an engine that
//! followed it passed fewer reference tests than asking once. There the greedy answer, what
//! asking once gives, is the prior, and only strong evidence moves the node off it: a gate it
//! fails, no body, or a crash (an undocumented exception raised by the code) in more tests than
//! another candidate. A disputed value moves it only when two answers and the tests agree
//! against it ([`by_prior`]).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use std::collections::HashMap;

use crate::llm::Role;
use crate::records::{Departure, DepartureKind, DisputedTest};

use super::super::testfile::test_function;

/// How the evidence of a node's candidates is weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Weighing {
    /// The plan gives examples: gates, then agreement on the generated tests.
    Agreement,
    /// No examples: the greedy answer stands unless strong evidence, or a consensus, is
    /// against it.
    Prior,
}

impl Weighing {
    pub(super) fn for_node(has_examples: bool) -> Weighing {
        match has_examples {
            true => Weighing::Agreement,
            false => Weighing::Prior,
        }
    }
}

/// One distinct module of an implementation round.
pub(super) struct Sample {
    pub(super) text: String,
    /// How many answers gave it.
    pub(super) copies: usize,
    /// What running it said (`None` when it was the round's only module, not run apart).
    pub(super) evidence: Option<Evidence>,
}

/// An implementation that imported and ran, with the evidence it earned.
pub(super) struct Candidate {
    /// The module's text with it.
    pub(super) text: String,
    /// It passed the gates: the specification's examples test (when the plan gives examples)
    /// and every earlier function's tests. Only the gates are ground truth; the generated
    /// tests are evidence, and a third of them are wrong.
    pub(super) gated: bool,
    /// Generated tests passed.
    pub(super) passed: u32,
    /// The generated tests of this node it failed.
    pub(super) disputed: Vec<String>,
    /// The generated tests of this node in which it crashed ([`crate::engine::testfile::crashed_tests`]):
    /// strong evidence against it, unlike a disputed value.
    pub(super) crashed: Vec<String>,
    /// The names its function uses and nothing defines: a `NameError` waiting for the input
    /// that reaches it, as strong as a crash (weighed only against the prior).
    pub(super) undefined: Vec<String>,
    /// Those tests' sources with what it did in them.
    pub(super) disputed_tests: Vec<DisputedTest>,
    /// The test file without the disputed tests.
    pub(super) undisputed_tests: String,
}

impl Candidate {
    /// Better evidence wins; on a tie the earlier candidate stays (`>`, not `>=`): a later
    /// one was bent towards tests that may be wrong. Weighed against the prior, only strong
    /// evidence counts: passing a gate, then crashing in fewer tests; more generated tests
    /// passed is no reason to leave the code kept.
    pub(super) fn beats(&self, other: &Candidate, weighing: Weighing) -> bool {
        match weighing {
            Weighing::Agreement => (self.gated, self.passed) > (other.gated, other.passed),
            Weighing::Prior => {
                let strong =
                    |c: &Candidate| (c.gated, Reverse(c.crashed.len() + c.undefined.len()));
                strong(self) > strong(other)
            }
        }
    }

    /// What pytest said of each disputed test, one after another.
    pub(super) fn disputed_output(&self) -> String {
        self.disputed_output_of(&self.disputed)
    }

    /// What pytest said of the disputed tests among `names`, one after another.
    pub(super) fn disputed_output_of(&self, names: &[String]) -> String {
        let outputs: Vec<&str> = self
            .disputed_tests
            .iter()
            .filter(|t| names.contains(&t.name))
            .map(|t| t.output.as_str())
            .collect();
        outputs.join("\n")
    }
}

/// What running the node's tests said about one candidate.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Evidence {
    /// It imported and left every earlier function's tests green.
    pub(super) usable: bool,
    /// It passed the gates (see [`Candidate::gated`]).
    pub(super) gated: bool,
    /// The node's function has a body ([`super::site::Site::bodiless`]): one without is never kept while
    /// a candidate with one exists.
    pub(super) has_body: bool,
    /// The generated tests it passed.
    pub(super) passed: BTreeSet<String>,
    /// The generated tests in which it crashed ([`crate::engine::testfile::crashed_tests`]), and
    /// (against the prior) the names its function uses and nothing defines.
    pub(super) crashed: usize,
}

/// The candidate to keep, by execution (CodeT's dual agreement): usable before not, gated
/// before not, with a body before without, passing every `wanted` test before not; then candidates are grouped by the
/// exact set of tests they pass and scored by group size times tests passed, so code that
/// several samples agree on outranks a lone sample bent to one test; ties go to the earlier
/// candidate (the first is sampled greedily).
///
/// `wanted` is not empty only in a fix round after a vote for A, and holds the tests where
/// the kept code crashed instead of raising a documented error: there, agreement is no
/// evidence against them. Measured on ml_lib, two fix samples that still crashed on an empty
/// list outvoted the one that raised the documented error.
fn by_agreement(evidence: &[Option<Evidence>], wanted: &[String]) -> usize {
    let score = |e: &Option<Evidence>| match e {
        None => (false, false, false, false, 0),
        Some(e) => {
            let agreeing = evidence
                .iter()
                .flatten()
                .filter(|o| o.usable && o.passed == e.passed)
                .count();
            let answers = wanted
                .iter()
                .all(|w| e.passed.iter().any(|p| test_function(p) == w));
            (
                e.usable,
                e.gated,
                e.has_body,
                answers,
                agreeing * e.passed.len(),
            )
        }
    };
    let mut best = 0;
    for i in 1..evidence.len() {
        if score(&evidence[i]) > score(&evidence[best]) {
            best = i;
        }
    }
    best
}

/// The candidate to keep: candidate 0 is the greedy answer (when the model's first answer was
/// usable), `copies[i]` says how many answers gave candidate `i`.
pub(super) fn pick(
    evidence: &[Option<Evidence>],
    copies: &[usize],
    wanted: &[String],
    weighing: Weighing,
) -> usize {
    match weighing {
        Weighing::Agreement => by_agreement(evidence, wanted),
        Weighing::Prior => by_prior(evidence, copies),
    }
}

/// The earliest candidate with the strongest evidence (usable, gated, with a body, crashing
/// in the fewest tests), which is the greedy answer unless strong evidence is against it;
/// then a candidate with the same strong evidence replaces it only by consensus: it passes
/// every generated test the kept one passes and more, and at least two answers pass all of
/// those (it and another, or two identical answers). One sample that fits a test the greedy
/// answer fails is as likely to share the test's mistake as to be right.
fn by_prior(evidence: &[Option<Evidence>], copies: &[usize]) -> usize {
    let strong = |e: &Option<Evidence>| match e {
        None => (false, false, false, Reverse(usize::MAX)),
        Some(e) => (e.usable, e.gated, e.has_body, Reverse(e.crashed)),
    };
    let mut kept = 0;
    for i in 1..evidence.len() {
        if strong(&evidence[i]) > strong(&evidence[kept]) {
            kept = i;
        }
    }
    let Some(base) = &evidence[kept] else {
        return kept;
    };
    let support = |e: &Evidence| -> usize {
        evidence
            .iter()
            .zip(copies)
            .filter_map(|(o, c)| o.as_ref().map(|o| (o, *c)))
            .filter(|(o, _)| o.usable && o.passed.is_superset(&e.passed))
            .map(|(_, c)| c)
            .sum()
    };
    let mut chosen = kept;
    for (i, e) in evidence.iter().enumerate() {
        let Some(e) = e else { continue };
        let wider = e.passed.is_superset(&base.passed) && e.passed.len() > base.passed.len();
        let better_than_chosen = match &evidence[chosen] {
            Some(c) => e.passed.len() > c.passed.len(),
            None => true,
        };
        if strong(&evidence[i]) == strong(&evidence[kept])
            && wider
            && support(e) >= 2
            && better_than_chosen
        {
            chosen = i;
        }
    }
    chosen
}

/// Where each module a node's rounds put in place came from, so that the code the node keeps
/// can be told apart from the greedy answer and the departure scored later (`zerorepo eval`).
#[derive(Debug, Default)]
pub(super) struct Lineage {
    /// The first round's greedy answer, when it was usable.
    prior: Option<String>,
    /// Every module a round produced: `None` for the greedy answer, else what produced it.
    origins: HashMap<String, Option<DepartureKind>>,
    /// Implementation rounds (not fixes) seen: the first gives candidates, later ones start
    /// over.
    impl_rounds: u32,
}

impl Lineage {
    /// One round's distinct modules, in answer order; `greedy_first`: the round's first
    /// answer (the greedy one) was usable, so it is `modules[0]`.
    pub(super) fn round(&mut self, role: Role, modules: &[String], greedy_first: bool) {
        let kind = match role {
            Role::Fix => DepartureKind::Fix,
            _ if self.impl_rounds == 0 => DepartureKind::Candidate,
            _ => DepartureKind::FreshStart,
        };
        let first_round = role != Role::Fix && self.impl_rounds == 0;
        if role != Role::Fix {
            self.impl_rounds += 1;
        }
        for (i, module) in modules.iter().enumerate() {
            let greedy = first_round && greedy_first && i == 0;
            if greedy {
                self.prior = Some(module.clone());
            }
            let origin = (!greedy).then_some(kind);
            self.origins.entry(module.clone()).or_insert(origin);
        }
    }

    /// No implementation round has been asked yet: the next one's first answer is the prior.
    pub(super) fn first_round(&self) -> bool {
        self.impl_rounds == 0
    }

    /// How `kept` (the module the node leaves) departs from the greedy answer; `None` when it
    /// is the greedy answer or there was none.
    pub(super) fn departure(&self, kept: &str) -> Option<Departure> {
        let prior = self.prior.as_deref()?;
        let kind = match self.origins.get(kept) {
            Some(None) => return None,
            Some(Some(kind)) => *kind,
            None => DepartureKind::Stub,
        };
        let kept_units: Vec<String> = crate::symbols::split_units(kept)
            .into_iter()
            .map(|u| u.text)
            .collect();
        let missing: Vec<String> = crate::symbols::split_units(prior)
            .into_iter()
            .map(|u| u.text)
            .filter(|t| !kept_units.contains(t))
            .collect();
        Some(Departure {
            kind,
            prior: missing.join("\n\n") + "\n",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_picked_by_gates_then_agreement_and_ties_go_to_the_first() {
        let e = |usable, gated, passed: &[&str]| {
            Some(Evidence {
                usable,
                gated,
                has_body: true,
                passed: passed.iter().map(|s| s.to_string()).collect(),
                crashed: 0,
            })
        };
        // The gated one wins over one that passes more generated tests.
        assert_eq!(
            by_agreement(
                &[e(true, false, &["a", "b", "c"]), e(true, true, &["a"])],
                &[]
            ),
            1
        );
        // Two that agree on {a, b} outrank a lone one passing {a, b, c}.
        assert_eq!(
            by_agreement(
                &[
                    e(true, true, &["a", "b", "c"]),
                    e(true, true, &["a", "b"]),
                    e(true, true, &["a", "b"]),
                ],
                &[]
            ),
            1
        );
        // Unless the vote judged c right: then the one that passes it is what a fix was for.
        let judged_right = ["c".to_string()];
        assert_eq!(
            by_agreement(
                &[
                    e(true, true, &["a", "b"]),
                    e(true, true, &["a", "b", "c[1]"]),
                    e(true, true, &["a", "b"]),
                ],
                &judged_right
            ),
            1
        );
        // Unusable (did not import, or broke earlier tests) and missing ones come last.
        assert_eq!(
            by_agreement(&[None, e(false, true, &["a"]), e(true, false, &[])], &[]),
            2
        );
        assert_eq!(
            by_agreement(&[e(true, true, &["a"]), e(true, true, &["b"])], &[]),
            0
        );
    }

    #[test]
    fn a_function_without_a_body_is_never_picked_while_one_with_a_body_exists() {
        let e = |has_body, passed: &[&str]| {
            Some(Evidence {
                usable: true,
                gated: false,
                has_body,
                passed: passed.iter().map(|s| s.to_string()).collect(),
                crashed: 0,
            })
        };
        // The greedy answer is body-less and two samples agree with it on every test: the
        // one with a body is still kept.
        assert_eq!(
            by_agreement(
                &[
                    e(false, &["a", "b"]),
                    e(false, &["a", "b"]),
                    e(true, &["a"])
                ],
                &[]
            ),
            2
        );
    }

    #[test]
    fn the_specification_outranks_generated_tests_and_a_tie_keeps_the_earlier() {
        let c = |gated, passed| Candidate {
            text: String::new(),
            gated,
            passed,
            disputed: Vec::new(),
            crashed: Vec::new(),
            undefined: Vec::new(),
            disputed_tests: Vec::new(),
            undisputed_tests: String::new(),
        };
        assert!(c(true, 0).beats(&c(false, 9), Weighing::Agreement));
        assert!(c(false, 3).beats(&c(false, 2), Weighing::Agreement));
        assert!(!c(false, 2).beats(&c(false, 2), Weighing::Agreement));
    }

    fn seen(gated: bool, crashed: usize, passed: &[&str]) -> Option<Evidence> {
        Some(Evidence {
            usable: true,
            gated,
            has_body: true,
            passed: passed.iter().map(|s| s.to_string()).collect(),
            crashed,
        })
    }

    #[test]
    fn without_examples_the_greedy_answer_stands_against_disputed_values() {
        // A lone sample that passes a test the greedy answer fails by value: the prior stays,
        // however many tests it passes more.
        let lone = [seen(true, 0, &["a"]), seen(true, 0, &["a", "b", "c"])];
        assert_eq!(by_prior(&lone, &[1, 1]), 0);
        // Two answers and the tests agree against it: the consensus wins.
        let agreed = [
            seen(true, 0, &["a"]),
            seen(true, 0, &["a", "b"]),
            seen(true, 0, &["a", "b"]),
        ];
        assert_eq!(by_prior(&agreed, &[1, 1, 1]), 1);
        assert_eq!(by_prior(&lone, &[1, 2]), 1, "two identical answers agree");
        // Passing other tests than the prior is no consensus against it.
        let sideways = [
            seen(true, 0, &["a"]),
            seen(true, 0, &["b", "c"]),
            seen(true, 0, &["b", "c"]),
        ];
        assert_eq!(by_prior(&sideways, &[1, 1, 1]), 0);
    }

    #[test]
    fn without_examples_strong_evidence_moves_the_node_off_the_greedy_answer() {
        // It crashed where another did not.
        let crash = [seen(true, 1, &["a", "b"]), seen(true, 0, &["a"])];
        assert_eq!(by_prior(&crash, &[1, 1]), 1);
        // It has no body, or it did not import.
        let mut bodiless = seen(true, 0, &["a", "b"]);
        bodiless.as_mut().unwrap().has_body = false;
        assert_eq!(by_prior(&[bodiless, seen(true, 2, &[])], &[3, 1]), 1);
        assert_eq!(by_prior(&[None, seen(true, 2, &[])], &[1, 1]), 1);
        // A tie keeps the earlier.
        assert_eq!(
            by_prior(&[seen(true, 1, &["a"]), seen(true, 1, &["b"])], &[1, 1]),
            0
        );
    }

    #[test]
    fn against_the_prior_only_a_gate_or_fewer_crashes_replace_the_kept_code() {
        let c = |gated, passed, crashed: usize| Candidate {
            text: String::new(),
            gated,
            passed,
            disputed: Vec::new(),
            crashed: vec!["t".to_string(); crashed],
            undefined: Vec::new(),
            disputed_tests: Vec::new(),
            undisputed_tests: String::new(),
        };
        assert!(!c(true, 9, 0).beats(&c(true, 2, 0), Weighing::Prior));
        // A name used and defined nowhere weighs as a crash.
        let undefined = Candidate {
            undefined: vec!["helper".to_string()],
            ..c(true, 9, 0)
        };
        assert!(c(true, 0, 0).beats(&undefined, Weighing::Prior));
        assert!(!c(true, 0, 2).beats(&undefined, Weighing::Prior));
        assert!(c(true, 0, 0).beats(&c(true, 5, 1), Weighing::Prior));
        assert!(c(true, 0, 3).beats(&c(false, 5, 0), Weighing::Prior));
        assert!(c(true, 9, 0).beats(&c(true, 2, 0), Weighing::Agreement));
    }

    #[test]
    fn the_kept_module_is_traced_to_the_round_that_made_it() {
        let m = |body: &str| format!("import os\n\n\ndef f():\n    return {body}\n");
        let mut lineage = Lineage::default();
        lineage.round(Role::Impl, &[m("1"), m("2")], true);
        assert_eq!(lineage.departure(&m("1")), None, "the greedy answer");
        let chosen = lineage.departure(&m("2")).unwrap();
        assert_eq!(chosen.kind, DepartureKind::Candidate);
        assert_eq!(
            chosen.prior, "def f():\n    return 1\n",
            "only what the kept module lacks"
        );
        lineage.round(Role::Fix, &[m("3")], true);
        lineage.round(Role::Impl, &[m("4"), m("1")], true);
        assert_eq!(lineage.departure(&m("3")).unwrap().kind, DepartureKind::Fix);
        assert_eq!(
            lineage.departure(&m("4")).unwrap().kind,
            DepartureKind::FreshStart
        );
        assert_eq!(
            lineage.departure(&m("1")),
            None,
            "a later round's copy is still the prior"
        );
        assert_eq!(
            lineage.departure("def f(*a): raise").unwrap().kind,
            DepartureKind::Stub
        );
        // Without a usable greedy answer there is nothing to depart from.
        let mut none = Lineage::default();
        none.round(Role::Impl, &[m("2")], false);
        assert_eq!(none.departure(&m("2")), None);
    }
}
