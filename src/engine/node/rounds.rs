//! A leaf's implementation rounds: the modules each round made, which of them ran, the best
//! candidate so far and where each came from. How candidates are weighed is
//! [`super::choice`]; this is the state that weighing reads and writes across attempts.

use std::collections::HashSet;

use crate::fsutil::FsError;
use crate::llm::Role;
use crate::records::{Diagnosis, Verdict};
use crate::sandbox::TestRun;

use super::super::ask::Ahead;
use super::super::machine::Standing;
use super::super::prompt::PromptInputs;
use super::super::testfile::{disputed_tests, failing_functions, test_function, without_tests};
use super::super::vote;
use super::choice::{Candidate, Evidence, Lineage, Sample};
use super::site::Site;

/// What a leaf's implementation rounds have produced so far.
pub(super) struct Rounds {
    /// The best implementation that ran so far, kept if no attempt passes.
    pub(super) best: Option<Candidate>,
    /// The distinct modules of the last implementation round, for the vote's evidence.
    pub(super) samples: Vec<Sample>,
    /// Every module a round put in place, normalised ([`normalized`]).
    pub(super) tried: HashSet<String>,
    /// Which round made each module, and the greedy answer.
    pub(super) lineage: Lineage,
    /// The first implementation round, asked while the tests are written ([`Ahead`]).
    pub(super) ahead: Option<Ahead>,
}

impl Rounds {
    pub(super) fn new() -> Rounds {
        Rounds {
            best: None,
            samples: Vec::new(),
            tried: HashSet::new(),
            lineage: Lineage::default(),
            ahead: None,
        }
    }

    /// Puts the best candidate back with its undisputed tests, so that its disputed tests
    /// are asked again with what it did in them (`inputs`); nothing without one.
    pub(super) fn put_back_best(
        &self,
        site: &Site,
        inputs: &mut PromptInputs,
    ) -> Result<(), FsError> {
        let Some(best) = &self.best else {
            return Ok(());
        };
        let ws = &site.ctx.workspace;
        ws.write_if_changed(&site.file, &best.text)?;
        ws.write_if_changed(&site.test_file, &best.undisputed_tests)?;
        let sources: Vec<&str> = best
            .disputed_tests
            .iter()
            .map(|t| t.source.as_str())
            .collect();
        inputs.failure = best.disputed_output();
        inputs.tests = sources.join("\n\n");
        inputs.current = best.text.clone();
        Ok(())
    }

    /// The same fix is never tried twice: drops from `modules` the fix answers whose code an
    /// earlier round already ran (but not the code in place, `current`: giving it back says
    /// the model holds it right). True when answers were given and every one repeated.
    pub(super) fn drop_repeated_fixes(
        &self,
        role: Role,
        current: &str,
        modules: &mut Vec<(String, usize)>,
    ) -> bool {
        if role != Role::Fix {
            return false;
        }
        let current = normalized(current);
        let before = modules.len();
        modules.retain(|(m, _)| {
            let code = normalized(m);
            code == current || !self.tried.contains(&code)
        });
        modules.is_empty() && before > 0
    }

    /// The round's distinct modules, put in place in turn; records them as tried and traced.
    pub(super) fn note_round(&mut self, role: Role, modules: &[String], greedy_first: bool) {
        self.tried.extend(modules.iter().map(|m| normalized(m)));
        self.lineage.round(role, modules, greedy_first);
    }

    /// Keeps the implementation in place, just run, if it imported (some test passed or
    /// failed rather than erred) and has better evidence than the best so far.
    pub(super) fn remember(&mut self, site: &Site, run: &TestRun) -> Result<(), FsError> {
        let text = site.module_text()?;
        let evidence = site.evidence(run, &text);
        if !evidence.usable {
            return Ok(());
        }
        let disputed = failing_functions(run);
        let tests = site.test_text()?;
        let candidate = Candidate {
            crashed: site.crashes(run),
            undefined: site.undefined(&text),
            text,
            gated: evidence.gated,
            passed: run.passed,
            undisputed_tests: without_tests(&tests, &disputed),
            disputed_tests: disputed_tests(&tests, &disputed, run),
            disputed,
        };
        let weighing = site.weighing();
        if self
            .best
            .as_ref()
            .is_none_or(|best| candidate.beats(best, weighing))
        {
            self.best = Some(candidate);
        }
        Ok(())
    }

    /// What the best candidate so far has against it.
    pub(super) fn standing(&self) -> Standing {
        match &self.best {
            Some(best) if best.gated && best.crashed.is_empty() && best.undefined.is_empty() => {
                Standing::Disputed
            }
            Some(best) if best.gated => Standing::Crashes,
            _ => Standing::Ungated,
        }
    }

    /// The disputed tests a fix round must make pass, whatever the samples agree on: after a
    /// vote for A, those where the kept code crashed instead of raising a documented error
    /// ([`vote::crashed_instead_of_documented_error`]). Not every test the vote judged right:
    /// on ml_lib the vote's A was right for 2 of 14 decided tests. None for any other round.
    pub(super) fn judged_right(
        &self,
        site: &Site,
        diagnosis: Option<&Diagnosis>,
        role: Role,
    ) -> Vec<String> {
        let voted_code_wrong =
            diagnosis.is_some_and(|d| d.outcome == Some(Verdict::Implementation));
        match (role == Role::Fix && voted_code_wrong, &self.best) {
            (true, Some(best)) => site.crashed_tests(best),
            _ => Vec::new(),
        }
    }

    /// What the last implementation round's runs say about `best`'s disputed tests.
    pub(super) fn execution(&self, site: &Site, best: &Candidate) -> vote::Execution {
        let gated: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| {
                s.text == best.text || s.evidence.as_ref().is_some_and(|e| e.usable && e.gated)
            })
            .collect();
        let passes_disputed = |e: &Evidence| {
            e.passed
                .iter()
                .any(|p| best.disputed.iter().any(|d| d == test_function(p)))
        };
        vote::Execution {
            environment: best
                .disputed_tests
                .iter()
                .any(|t| vote::blames_environment(&t.output)),
            crashed: !site.crashed_tests(best).is_empty(),
            misused_pytest: !best.disputed_tests.is_empty()
                && best
                    .disputed_tests
                    .iter()
                    .all(|t| vote::misuses_pytest(&t.output)),
            gated_candidates: gated.iter().map(|s| s.copies).sum(),
            any_passes_a_disputed_test: gated
                .iter()
                .filter_map(|s| s.evidence.as_ref())
                .any(passes_disputed),
        }
    }
}

/// `code` without comments, blank lines and trailing spaces: two answers that differ only
/// there are the same fix.
pub(super) fn normalized(code: &str) -> String {
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    lines.join("\n")
}
