//! Prompt-lookup drafting: a guess of a sequence's next tokens read from its own history.
//!
//! The answers the engine asks for repeat their input a lot: tests restate the examples of a
//! specification, a fix rewrites the function it was shown, an implementation reuses the names
//! of its signature and of the code around it. So when the last few tokens of a sequence
//! occurred before, in the prompt or in the answer so far, the tokens that followed that
//! occurrence are a cheap guess of what comes next. The embedded provider (`super::local`)
//! checks such a guess in the same batch as the token it is sure of and keeps the longest
//! prefix the model agrees with: a good guess saves decode steps, a bad one costs a fraction of
//! a step and never changes the answer.
//!
//! The rule, for a history `h[0..L]` (prompt tokens, then answer tokens) and a budget `most`:
//!
//! ```text
//! for n in NGRAMS (3, then 2):
//!     if L > n:
//!         i := the largest i < L - n with h[i..i+n] == h[L-n..L]
//!         if such an i exists: propose h[i+n .. min(i+n+most, L)], stop
//! propose nothing
//! ```
//!
//! The most recent occurrence wins, since what the answer did last is the best guess of what
//! it does next. A continuation may run into the suffix itself (`a b a b a b …` proposes more
//! of the same), which is what a repeating answer does.
//!
//! A sampled sequence drafts as a greedy one does, and its answers keep their distribution:
//! at each position the provider samples from the model's own distribution there, as it would
//! without drafts, and goes on to the next position only when what it sampled is the drafted
//! token (whose logits the batch already computed). For a proposal that is one token for
//! sure, this is the speculative-sampling rule itself: the draft `d` is accepted with
//! probability `p(d)`, and otherwise a token comes from `p` without `d`, renormalised; every
//! token is drawn from `p` given the true prefix, with one random number a token, as before.
//!
//! [`Drafting`] says whether and for which requests the provider drafts (`ZEROREPO_DRAFT`), so
//! one build can be measured both ways; [`DraftCounts`] is what it reports of its guesses.

use std::str::FromStr;
#[cfg(feature = "local-model")]
use std::sync::atomic::{AtomicU64, Ordering};

/// The n-gram lengths tried, longest first: three tokens rarely match by chance; two find more
/// (a name followed by a parenthesis) at the price of more wrong guesses.
const NGRAMS: [usize; 2] = [3, 2];

/// Up to `most` tokens that followed the most recent earlier occurrence of the last tokens of
/// `history` (see the module doc); empty when nothing matches or `most` is 0. Public for the
/// decode bench, which replays recorded answers through it.
pub fn propose<T: PartialEq + Copy>(history: &[T], most: usize) -> Vec<T> {
    if most == 0 {
        return Vec::new();
    }
    let len = history.len();
    for n in NGRAMS {
        if len <= n {
            continue;
        }
        let suffix = &history[len - n..];
        // Windows starting before len - n: the suffix itself is not an earlier occurrence.
        if let Some(i) = (0..len - n).rev().find(|&i| &history[i..i + n] == suffix) {
            let from = i + n;
            return history[from..len.min(from + most)].to_vec();
        }
    }
    Vec::new()
}

/// Draft tokens checked after a sequence's next token by default: all of a guess or none.
///
/// On two cores a step's cost grows with its tokens: a step of 4 cost 1.8 to 3.0 single steps
/// depending on the build and the day (`reports/batching.md`, four sequences; reports/decode.md,
/// `--step-cost`), so a check pays only when enough of it is accepted. llama.cpp's CPU kernels
/// for repacked weights (Q4_K here) multiply batch rows four at a time and the rest one by one
/// (`ggml-cpu/repack.cpp`), which makes 4 the cheapest step per token where those kernels run:
/// hence the token and 3 drafts. Replaying recorded ml_lib answers (`benches/decode.rs
/// --replay`), 3 drafts are accepted 1.9 at a time for tests, 1.5 for implementations, 2.6 for
/// fixes. `ZEROREPO_DRAFT=lookup:N` tries another length, so the bench can compare them.
pub(crate) const DRAFT_TOKENS: usize = 3;

/// The longest draft `lookup:N` may ask for: every sequence's token and drafts fit one batch.
pub(crate) const MOST_DRAFT_TOKENS: usize = 8;

/// Whether the embedded provider drafts tokens (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drafting {
    /// One token per sequence and step, as before drafting existed.
    Off,
    /// Prompt lookup ([`propose`]): `tokens` drafts a check, or none, for the requests of
    /// `roles`.
    Lookup { tokens: usize, roles: DraftRoles },
}

/// The requests whose sequences draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftRoles {
    All,
    /// Fix rounds only: they rewrite the function they were shown, and lookup drafts pay
    /// there (alone on this project's 2-core machine kind, 1.24× greedy and 1.07× sampled,
    /// reports/decode.md) while on
    /// tests (1.00×) and implementations (0.91×) they do not.
    Fixes,
}

/// The variable that chooses [`Drafting`] for the default provider.
pub(crate) const DRAFT_ENV: &str = "ZEROREPO_DRAFT";

/// `ZEROREPO_DRAFT` holds none of `off`, `lookup`, `lookup:N`, `fixes`, `fixes:N` (N from 1
/// to 8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{DRAFT_ENV} must be `off`, `lookup`, `lookup:N`, `fixes` or `fixes:N` (N from 1 to {MOST_DRAFT_TOKENS}), not {0:?}"
)]
pub struct UnknownDrafting(pub String);

impl FromStr for Drafting {
    type Err = UnknownDrafting;

    fn from_str(s: &str) -> Result<Drafting, UnknownDrafting> {
        let unknown = || UnknownDrafting(s.trim().to_string());
        let text = s.trim();
        if text == "off" {
            return Ok(Drafting::Off);
        }
        let (name, count) = text
            .split_once(':')
            .map_or((text, None), |(n, c)| (n, Some(c)));
        let roles = match name {
            "lookup" => DraftRoles::All,
            "fixes" => DraftRoles::Fixes,
            _ => return Err(unknown()),
        };
        let tokens = match count {
            None => DRAFT_TOKENS,
            Some(n) => n.parse().map_err(|_| unknown())?,
        };
        match (1..=MOST_DRAFT_TOKENS).contains(&tokens) {
            true => Ok(Drafting::Lookup { tokens, roles }),
            false => Err(unknown()),
        }
    }
}

impl Drafting {
    /// Prompt lookup with [`DRAFT_TOKENS`] drafts a check, for every request.
    pub const LOOKUP: Drafting = Drafting::Lookup {
        tokens: DRAFT_TOKENS,
        roles: DraftRoles::All,
    };

    /// Prompt lookup with [`DRAFT_TOKENS`] drafts a check, for fix rounds only: the default.
    pub const FIXES: Drafting = Drafting::Lookup {
        tokens: DRAFT_TOKENS,
        roles: DraftRoles::Fixes,
    };

    /// What `ZEROREPO_DRAFT` asks for; unset means [`Drafting::FIXES`]: alone on this
    /// project's machine kind a step of four tokens costs 2.6 to 2.9 steps of one, and the
    /// decode bench measured lookup at 1.00–1.09× for tests, 0.84–0.91× for implementations
    /// and 1.13–1.24× for fixes (reports/decode.md, 2026-11-27 and 2026-12-01).
    pub(crate) fn from_env() -> Result<Drafting, UnknownDrafting> {
        match std::env::var(DRAFT_ENV) {
            Ok(value) => value.parse(),
            Err(_) => Ok(Drafting::FIXES),
        }
    }

    /// Drafts a check: 0 when off.
    pub fn tokens(self) -> usize {
        match self {
            Drafting::Off => 0,
            Drafting::Lookup { tokens, .. } => tokens,
        }
    }

    /// Drafts a check for a request of `role`: 0 when it does not draft.
    pub(crate) fn tokens_for(self, role: super::Role) -> usize {
        match self {
            Drafting::Lookup {
                tokens,
                roles: DraftRoles::All,
            } => tokens,
            Drafting::Lookup {
                tokens,
                roles: DraftRoles::Fixes,
            } if role == super::Role::Fix => tokens,
            _ => 0,
        }
    }
}

/// What drafting achieved so far, summed over all sequences of one provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DraftCounts {
    /// Guesses checked: decode steps in which a sequence carried draft tokens.
    pub verifications: u64,
    /// Draft tokens checked.
    pub proposed: u64,
    /// Draft tokens the model agreed with: decode steps saved.
    pub accepted: u64,
}

/// [`DraftCounts`] shared between the model thread, which adds, and the provider, which reads.
#[cfg(feature = "local-model")]
#[derive(Debug, Default)]
pub(crate) struct DraftCounters {
    verifications: AtomicU64,
    proposed: AtomicU64,
    accepted: AtomicU64,
}

#[cfg(feature = "local-model")]
impl DraftCounters {
    /// One guess of `proposed` tokens was checked, and the first `accepted` kept.
    pub(crate) fn record(&self, proposed: usize, accepted: usize) {
        self.verifications.fetch_add(1, Ordering::Relaxed);
        self.proposed.fetch_add(proposed as u64, Ordering::Relaxed);
        self.accepted.fetch_add(accepted as u64, Ordering::Relaxed);
    }

    pub(crate) fn counts(&self) -> DraftCounts {
        DraftCounts {
            verifications: self.verifications.load(Ordering::Relaxed),
            proposed: self.proposed.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
        }
    }
}

/// A [`Drafting`] the provider sets and the model thread reads when a job's candidates begin
/// (once a job, not a token: a lock costs nothing there).
#[cfg(feature = "local-model")]
#[derive(Debug)]
pub(crate) struct DraftSetting(std::sync::Mutex<Drafting>);

/// Off until the provider sets it, as it does when it loads.
#[cfg(feature = "local-model")]
impl Default for DraftSetting {
    fn default() -> DraftSetting {
        DraftSetting(std::sync::Mutex::new(Drafting::Off))
    }
}

#[cfg(feature = "local-model")]
impl DraftSetting {
    pub(crate) fn set(&self, drafting: Drafting) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = drafting;
    }

    pub(crate) fn get(&self) -> Drafting {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokens_after_the_last_earlier_trigram_are_proposed() {
        // 1 2 3 occurs at 0 and 5; the most recent earlier one (5) is followed by 7 8.
        let history = [1, 2, 3, 4, 9, 1, 2, 3, 7, 8, 6, 1, 2, 3];
        assert_eq!(propose(&history, 4), vec![7, 8, 6, 1]);
        assert_eq!(propose(&history, 2), vec![7, 8]);
    }

    #[test]
    fn a_proposal_stops_at_the_end_of_the_history() {
        let history = [5, 6, 7, 8, 5, 6, 7];
        assert_eq!(propose(&history, 10), vec![8, 5, 6, 7]);
    }

    #[test]
    fn a_bigram_is_tried_when_no_trigram_matches() {
        // The trigram 9 2 3 never occurred; the bigram 2 3 did, followed by 4.
        let history = [1, 2, 3, 4, 9, 2, 3];
        assert_eq!(propose(&history, 3), vec![4, 9, 2]);
    }

    #[test]
    fn a_trigram_match_wins_over_a_more_recent_bigram_match() {
        // 1 2 3 → 4 (trigram, at 0); 2 3 → 8 (bigram, more recent, at 6) is not used.
        let history = [1, 2, 3, 4, 0, 0, 2, 3, 8, 1, 2, 3];
        assert_eq!(propose(&history, 1), vec![4]);
    }

    #[test]
    fn a_repeating_history_proposes_more_of_itself() {
        let history = [7, 7, 7, 7];
        assert_eq!(propose(&history, 5), vec![7]);
        // 2 1 2 last occurred at 1; what followed it runs to the end of the history.
        let history = [1, 2, 1, 2, 1, 2];
        assert_eq!(propose(&history, 5), vec![1, 2]);
    }

    #[test]
    fn nothing_is_proposed_without_a_match_or_a_budget() {
        assert!(propose(&[1, 2, 3, 4, 5, 6], 4).is_empty());
        assert!(propose(&[1, 2, 1, 2], 0).is_empty());
        assert!(propose::<u32>(&[], 4).is_empty());
        assert!(propose(&[3], 4).is_empty());
        // The suffix alone is no earlier occurrence of itself.
        assert!(propose(&[4, 5], 4).is_empty());
    }

    #[test]
    fn drafting_is_read_from_its_names_and_nothing_else() {
        let lookup = |tokens, roles| Drafting::Lookup { tokens, roles };
        assert_eq!("off".parse(), Ok(Drafting::Off));
        assert_eq!(" lookup\n".parse(), Ok(lookup(3, DraftRoles::All)));
        assert_eq!("lookup:1".parse(), Ok(lookup(1, DraftRoles::All)));
        assert_eq!("lookup:8".parse(), Ok(lookup(8, DraftRoles::All)));
        assert_eq!("fixes".parse(), Ok(Drafting::FIXES));
        assert_eq!("fixes:2".parse(), Ok(lookup(2, DraftRoles::Fixes)));
        for wrong in [
            "Lookup", "lookup:0", "lookup:9", "lookup:", "lookup:x", "on", "fixes:0", "off:3",
        ] {
            assert_eq!(
                wrong.parse::<Drafting>(),
                Err(UnknownDrafting(wrong.into())),
                "{wrong}"
            );
        }
        assert_eq!(
            UnknownDrafting("x".into()).to_string(),
            "ZEROREPO_DRAFT must be `off`, `lookup`, `lookup:N`, `fixes` or `fixes:N` (N from 1 to 8), not \"x\""
        );
        assert_eq!(Drafting::Off.tokens(), 0);
        assert_eq!(Drafting::LOOKUP.tokens(), DRAFT_TOKENS);
        use super::super::Role;
        let by_role = |d: Drafting| [Role::Test, Role::Impl, Role::Fix].map(|r| d.tokens_for(r));
        assert_eq!(by_role(Drafting::Off), [0, 0, 0]);
        assert_eq!(by_role(Drafting::LOOKUP), [3, 3, 3]);
        assert_eq!(by_role(Drafting::FIXES), [0, 0, 3]);
    }

    #[cfg(feature = "local-model")]
    #[test]
    fn counters_add_up_guesses() {
        let counters = DraftCounters::default();
        counters.record(4, 4);
        counters.record(3, 0);
        assert_eq!(
            counters.counts(),
            DraftCounts {
                verifications: 2,
                proposed: 7,
                accepted: 4
            }
        );
    }
}
