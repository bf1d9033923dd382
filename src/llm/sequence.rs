//! One candidate of a request as the embedded provider decodes it: its sampler, its text,
//! when it stops, and its drafts (see `super::local`'s module doc for the decoding loop).
//!
//! The stop conditions and the sampler are applied token by token in [`Sequence::advance`],
//! whether the token came alone or after drafts the model agreed with, which is what keeps an
//! answer, greedy or sampled with its seed, the same with drafting and without: a sampled
//! sequence draws each token with the same random number either way.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::vocab::LlamaVocab;

use std::borrow::Cow;

use super::draft;
use super::{LlmRequest, Role};
use crate::edit::cutoff::{
    MOST_PROBES, MOST_TESTS, end_of_loop, stop_after_probes, stop_after_tests,
};

/// One candidate being decoded.
pub(super) struct Sequence {
    pub(super) sampler: LlamaSampler,
    pub(super) text: Vec<u8>,
    pub(super) generated: u64,
    /// Where in the last decoded batch this sequence's next logits are; `None` once finished.
    /// Those of its drafts follow.
    pub(super) logits: Option<i32>,
    /// The position its next token takes.
    pub(super) position: i32,
    /// Its prompt and answer tokens, for a sequence that drafts; `None` for one that does not.
    pub(super) history: Option<Vec<LlamaToken>>,
    /// Draft tokens a check: all of a guess or none ([`draft::DRAFT_TOKENS`]).
    pub(super) draft_tokens: usize,
    /// The draft tokens the last batch carried after its token, at the positions after it.
    pub(super) drafted: Vec<LlamaToken>,
    /// What the answer holds, which says where it may be cut short.
    pub(super) holds: Holds,
}

/// What an answer holds, as far as its stop conditions care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Holds {
    /// Test functions: cut at [`MOST_TESTS`].
    Tests,
    /// Probes (`write_probes`): cut at [`MOST_PROBES`] calls (and as tests).
    Probes,
    /// Code or anything else: ends with its fenced block.
    Code,
}

impl Holds {
    pub(super) fn of(request: &LlmRequest) -> Holds {
        match request.role {
            Role::Test if request.template == crate::prompts::WRITE_PROBES.label() => Holds::Probes,
            Role::Test => Holds::Tests,
            _ => Holds::Code,
        }
    }
}

impl Sequence {
    /// Reads the last batch's logits: samples the next token and, while it is the draft the
    /// batch held at its position (so already in the cache), samples the one after from that
    /// draft's logits. Every token goes through the sampler and the stop conditions as if
    /// decoded alone; `position` passes the accepted drafts. Returns the token to feed next,
    /// or `None` once the sequence has stopped.
    pub(super) fn advance(
        &mut self,
        ctx: &LlamaContext,
        vocab: &LlamaVocab,
        request: &LlmRequest,
    ) -> Option<LlamaToken> {
        let mut index = self.logits.take()?;
        let drafted = std::mem::take(&mut self.drafted);
        let mut drafts = drafted.iter();
        loop {
            let token = self.sampler.sample(ctx, index);
            // llama.cpp's sample already accepts the token, so the repetition penalty's
            // window of 64 holds each token twice. Kept as it was before drafting, so answers
            // stay the same; removing it is a change of its own.
            self.sampler.accept(token);
            if !self.keep(token, vocab, request) {
                return None;
            }
            if drafts.next() != Some(&token) {
                return Some(token);
            }
            self.position += 1;
            index += 1;
        }
    }

    /// Adds a sampled token to the answer; whether the sequence goes on (not an end of
    /// generation, not the last token allowed, the answer not complete).
    fn keep(&mut self, token: LlamaToken, vocab: &LlamaVocab, request: &LlmRequest) -> bool {
        if vocab.is_eog(token) {
            return false;
        }
        self.text.extend(vocab.token_to_piece(token, false, None));
        self.generated += 1;
        if let Some(history) = &mut self.history {
            history.push(token);
        }
        self.generated < u64::from(request.max_tokens)
            && !answer_is_complete(&mut self.text, self.holds)
    }

    /// The drafts to check after the token just kept: `draft_tokens` of them or none (a
    /// shorter guess costs single rows for few tokens: [`draft::DRAFT_TOKENS`]); none for a
    /// sequence that does not draft, and none past the last token the request allows (their
    /// cells were not reserved).
    pub(super) fn draft(&self, max_tokens: u32) -> Vec<LlamaToken> {
        let Some(history) = &self.history else {
            return Vec::new();
        };
        // Token `max_tokens` is sampled but never fed, so only the ones before it are drafted.
        let left = u64::from(max_tokens).saturating_sub(self.generated + 1);
        let want = self.draft_tokens;
        if want == 0 || left < want as u64 {
            return Vec::new();
        }
        let mut drafts = draft::propose(history, want);
        if drafts.len() < want {
            drafts.clear();
        }
        drafts
    }
}

/// Greedy at temperature 0 (reproducible), otherwise top-k with the request's seed.
pub(super) fn sampler(model: &LlamaModel, request: &LlmRequest) -> LlamaSampler {
    // A mild repetition penalty: small models can loop on one token until the limit.
    let penalties = LlamaSampler::penalties(model.n_vocab(), 64, 1.1, 0.0, 0.0);
    if request.temperature <= 0.0 {
        LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
    } else {
        LlamaSampler::chain_simple([
            penalties,
            LlamaSampler::top_k(40),
            LlamaSampler::temp(request.temperature),
            LlamaSampler::dist(request.seed.unwrap_or(0) as u32),
        ])
    }
}

/// Whether to stop generating: the fenced block is closed, a tests answer already holds as
/// many tests as we keep (a probes answer as many calls), or the answer loops over one block
/// of lines; `text` is then cut to the tests, the calls, or the block's first copy.
fn answer_is_complete(text: &mut Vec<u8>, holds: Holds) -> bool {
    let whole = String::from_utf8_lossy(text);
    if closes_a_code_block(&whole) {
        return true;
    }
    // Tokens carry a newline with the next line's indent, so every token is checked. A loop
    // is looked for only while the text is whole characters, so its end is an offset of `text`.
    let looped = match &whole {
        Cow::Borrowed(valid) => end_of_loop(valid).map(|end| valid[..end].to_string()),
        Cow::Owned(_) => None,
    };
    let stopped = looped.or_else(|| match holds {
        Holds::Probes => {
            stop_after_probes(&whole, MOST_PROBES).or_else(|| stop_after_tests(&whole, MOST_TESTS))
        }
        Holds::Tests => stop_after_tests(&whole, MOST_TESTS),
        Holds::Code => None,
    });
    match stopped {
        Some(stopped) => {
            *text = stopped.into_bytes();
            true
        }
        None => false,
    }
}

/// The answers we ask for are one fenced block: stop as soon as it is closed.
fn closes_a_code_block(text: &str) -> bool {
    text.match_indices("```").count() >= 2 && text.trim_end().ends_with("```")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drafting(history: &[i32], generated: u64) -> Sequence {
        Sequence {
            sampler: LlamaSampler::greedy(),
            text: Vec::new(),
            generated,
            logits: None,
            position: history.len() as i32,
            history: Some(history.iter().map(|&t| LlamaToken(t)).collect()),
            draft_tokens: 3,
            drafted: Vec::new(),
            holds: Holds::Code,
        }
    }

    fn ids(tokens: &[LlamaToken]) -> Vec<i32> {
        tokens.iter().map(|t| t.0).collect()
    }

    #[test]
    fn a_sequence_drafts_three_tokens_or_none() {
        // 1 2 3 was followed by 4 5 6 7: three of them are drafted.
        let copying = drafting(&[1, 2, 3, 4, 5, 6, 7, 9, 1, 2, 3], 4);
        assert_eq!(ids(&copying.draft(100)), vec![4, 5, 6]);
        // Only 1 2 follow the earlier 1 2: two drafts would cost more than they can save.
        let short = drafting(&[1, 2, 1, 2], 2);
        assert!(short.draft(100).is_empty());
        // A sequence that does not draft has no history.
        let mut sampled = drafting(&[1, 2, 3, 4, 5, 6, 1, 2, 3], 1);
        sampled.history = None;
        assert!(sampled.draft(100).is_empty());
    }

    #[test]
    fn no_draft_reaches_past_the_last_token_fed() {
        let history = [1, 2, 3, 4, 5, 6, 7, 9, 1, 2, 3];
        // 96 kept of 100: tokens 97, 98 and 99 may still be fed, so three drafts fit.
        assert_eq!(drafting(&history, 96).draft(100).len(), 3);
        // 97 kept: only 98 and 99 are left before the 100th, which is never fed.
        assert!(drafting(&history, 97).draft(100).is_empty());
    }
}
