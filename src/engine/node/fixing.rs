//! What a leaf's fix rounds carry between attempts: the failing tests the next fix must
//! answer, the localization budget (20 queries a debug iteration, seed 004), where each fix
//! looked first, and the module's other functions the fix under way may correct.

use crate::fsutil::FsError;
use crate::localize::Budget;
use crate::records::LocalizedFix;

use super::super::ground::LeafGround;
use super::super::suspects::{self, PlanFunction};
use super::choice::{Candidate, Weighing};
use super::rounds::normalized;
use super::site::Site;
use super::undefined_message;

/// The state of a leaf's fixes.
pub(super) struct Fixing {
    /// The failing test functions the next fix must answer ([`Site::focus`]).
    pub(super) focus: Vec<String>,
    /// Localization queries: 20 per fix (a debug iteration), every query kept.
    budget: Budget,
    /// Where each fix looked first.
    pub(super) localizations: Vec<LocalizedFix>,
    /// The module's functions the fix under way may correct besides the node's own
    /// ([`suspects::Localization::editable`]); empty outside a fix.
    pub(super) editable: Vec<String>,
}

impl Fixing {
    pub(super) fn new() -> Fixing {
        Fixing {
            focus: Vec::new(),
            budget: Budget::new(crate::localize::DEFAULT_LIMIT),
            localizations: Vec::new(),
            editable: Vec::new(),
        }
    }

    /// Aims the next fix at `best`, the kept code, which the vote blamed: puts it back in
    /// place, focuses on its disputed tests (against the prior, only its crashes, the only
    /// evidence there) and returns the failure the fix answers.
    pub(super) fn aim_at(&mut self, site: &Site, best: &Candidate) -> Result<String, FsError> {
        site.ctx
            .workspace
            .write_if_changed(&site.file, &best.text)?;
        self.focus = match site.weighing() {
            Weighing::Agreement => best.disputed.clone(),
            Weighing::Prior => best.crashed.clone(),
        };
        let mut failure = best.disputed_output_of(&self.focus);
        if !best.undefined.is_empty() {
            failure = format!("{failure}\n\n{}", undefined_message(&best.undefined));
        }
        Ok(failure.trim_start().to_string())
    }

    /// Localizes `failure`, which the fix of `attempt` answers ([`suspects`]): records the
    /// suspects and returns the prompt's section on what the failure points at outside the
    /// function.
    pub(super) fn localize(&mut self, site: &Site, failure: &str, attempt: u32) -> String {
        let own = PlanFunction {
            id: site.node.id.clone(),
            name: site.node.name.clone(),
            file: site.file.clone(),
        };
        let ground = LeafGround {
            ctx: site.ctx,
            position: site.position,
        };
        let found = suspects::localize(&own, failure, &ground, &mut self.budget);
        self.budget.next_iteration();
        tracing::debug!(
            node = %site.node.id,
            queries = found.queries,
            suspects = ?found.suspects.iter().map(|s| s.symbol.as_str()).collect::<Vec<_>>(),
            "localized a failure"
        );
        // The node's own function, unless the chosen answer corrects a suspect of its module
        // instead (set once the candidates ran).
        self.localizations
            .push(found.record(attempt, &site.node.name));
        self.editable = found.editable(&own);
        suspects::prompt_section(&own.name, &found.shown(&own), &self.editable)
    }

    /// The prompt tokens the last fix's request took.
    pub(super) fn note_prompt_tokens(&mut self, tokens: u64) {
        if let Some(fix) = self.localizations.last_mut() {
            fix.prompt_tokens = tokens;
        }
    }

    /// The last fix turned module `before` into `after`: records the suspect it corrected,
    /// if it corrected one.
    pub(super) fn note_corrected(&mut self, before: &str, after: &str) {
        if let Some(symbol) = corrected_suspect(before, after, &self.editable)
            && let Some(fix) = self.localizations.last_mut()
        {
            fix.edited = symbol;
        }
    }
}

/// The first of `editable` whose definition differs between the module `before` a fix and
/// `after` it: the suspect the fix corrected.
fn corrected_suspect(before: &str, after: &str, editable: &[String]) -> Option<String> {
    let definition = |code: &str, name: &str| {
        crate::symbols::split_units(code)
            .into_iter()
            .find(|u| u.def_name() == Some(name))
            .map(|u| normalized(&u.text))
    };
    editable
        .iter()
        .find(|name| definition(before, name) != definition(after, name))
        .cloned()
}
