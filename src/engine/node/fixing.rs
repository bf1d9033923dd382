//! What a leaf's fix rounds carry between attempts: the failing tests the next fix must
//! answer, the localization budget (20 queries a debug iteration, seed 004), where each fix
//! looked first, and the module's other functions the fix under way may correct.

use crate::localize::Budget;
use crate::records::LocalizedFix;

use super::super::ground::LeafGround;
use super::super::suspects::{self, PlanFunction};
use super::rounds::normalized;
use super::site::Site;

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
