//! The token budget every prompt of `zerorepo code` is built to. Pure.
//!
//! The embedded model reads a prompt and writes its answer in one context of
//! [`crate::llm::CONTEXT_TOKENS`] tokens: a prompt that leaves less than the answer's
//! `max_tokens` is refused by the model, after the run has done its work. So every prompt is
//! measured before it is sent and its long parts (a check's output, the file, the files
//! beside it) are cut to fit; a request whose fixed parts alone cannot fit is refused before
//! any model call ([`check_spec`]), with the sizes, instead of stopping a run half-way.
//!
//! The estimate is deliberately high: 3 bytes a token, where the crate's accounting estimate
//! ([`crate::llm::estimate_tokens`]) takes 4. Code, test output and text in scripts other
//! than Latin tokenize denser than English prose, and a prompt cut a little short loses
//! little while one a little too long loses the whole answer.

use crate::llm::LlmRequest;

/// The context of one request: the prompt and the answer together.
pub(super) const CONTEXT_TOKENS: u64 = crate::llm::CONTEXT_TOKENS as u64;
/// Bytes a token, estimated high (see the module doc).
const BYTES_PER_TOKEN: u64 = 3;
/// What the chat template adds around the messages: role markers, the answer's turn.
const CHAT_TOKENS: u64 = 64;
/// Room the answer of a symbol-anchored edit may fill: a few whole definitions.
pub(super) const ANCHORED_ANSWER_TOKENS: u32 = 2_048;
/// Room the answer of a new file may fill.
pub(super) const NEW_FILE_ANSWER_TOKENS: u32 = 1_536;
/// Room the plan's answer may fill.
pub(super) const PLAN_ANSWER_TOKENS: u32 = 768;
/// The least a prompt must leave for the file, the error and the task besides the request.
pub(super) const MIN_ROOM_TOKENS: u64 = 1_024;

/// A request that cannot fit the model's context, however its long parts are cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} does not fit the model's context: it needs about {needed} tokens and a prompt may \
     use {limit} ({context} in all, less {answer} for the answer); shorten it",
    context = CONTEXT_TOKENS
)]
pub struct TooLarge {
    pub what: String,
    pub needed: u64,
    pub limit: u64,
    pub answer: u32,
}

/// The tokens `text` may take, estimated high.
pub(super) fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The bytes `tokens` tokens hold at the estimate's rate.
pub(super) fn bytes(tokens: u64) -> usize {
    (tokens * BYTES_PER_TOKEN) as usize
}

/// The least room each of several answers decoded together keeps: a correction's
/// definitions with room to spare. Below it, fewer answers are asked.
const MIN_CANDIDATE_ANSWER_TOKENS: u64 = 1_024;

/// How many of `wanted` answers to `request` fit the context beside its prompt, each with at
/// least [`MIN_CANDIDATE_ANSWER_TOKENS`] (1 at least), and the `max_tokens` each may fill:
/// the answers of one request share one context, the prompt evaluated once.
pub(super) fn candidates(request: &LlmRequest, wanted: u32) -> (u32, u32) {
    let room = CONTEXT_TOKENS.saturating_sub(prompt_tokens(request) + CHAT_TOKENS);
    let fits = (1..=wanted.max(1))
        .rev()
        .find(|&n| room / u64::from(n) >= MIN_CANDIDATE_ANSWER_TOKENS)
        .unwrap_or(1);
    match fits {
        1 => (1, request.max_tokens),
        n => (n, request.max_tokens.min((room / u64::from(n)) as u32)),
    }
}

/// The tokens a prompt may take beside an answer of `max_tokens`.
pub(super) fn prompt_limit(max_tokens: u32) -> u64 {
    CONTEXT_TOKENS.saturating_sub(u64::from(max_tokens) + CHAT_TOKENS)
}

/// The prompt's tokens: every message and the answer's prefill.
pub(super) fn prompt_tokens(request: &LlmRequest) -> u64 {
    let prefill = request.prefill.as_deref().map_or(0, tokens);
    request
        .messages
        .iter()
        .map(|m| tokens(&m.content))
        .sum::<u64>()
        + prefill
}

/// Whether `request`, its answer included, fits the context.
pub(super) fn fits(request: &LlmRequest) -> bool {
    prompt_tokens(request) <= prompt_limit(request.max_tokens)
}

/// `Err` when `request` does not fit, naming it `what`.
pub(super) fn check(request: &LlmRequest, what: &str) -> Result<(), TooLarge> {
    let needed = prompt_tokens(request);
    let limit = prompt_limit(request.max_tokens);
    match needed <= limit {
        true => Ok(()),
        false => Err(TooLarge {
            what: what.to_string(),
            needed,
            limit,
            answer: request.max_tokens,
        }),
    }
}

/// Refuses a request too large for any prompt built around it: every task and correction
/// quotes the request whole, beside the template and at least [`MIN_ROOM_TOKENS`] for the
/// file and the error. `template` is the largest template's text without its long parts.
pub(super) fn check_spec(spec: &str, template: &str) -> Result<(), TooLarge> {
    let needed = tokens(spec) + tokens(template) + MIN_ROOM_TOKENS;
    let limit = prompt_limit(ANCHORED_ANSWER_TOKENS);
    match needed <= limit {
        true => Ok(()),
        false => Err(TooLarge {
            what: format!("the request ({} bytes)", spec.len()),
            needed,
            limit,
            answer: ANCHORED_ANSWER_TOKENS,
        }),
    }
}

/// `text` cut to its first `max` bytes at a line boundary (at a char boundary when its
/// first line is longer), with a note of what was left out.
pub(super) fn head(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind('\n').map_or(end, |i| i + 1);
    let left = text[cut..].lines().count();
    format!("{}[... {left} more line(s) not shown]\n", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role};

    fn request(prompt: &str, max_tokens: u32) -> LlmRequest {
        LlmRequest {
            node_id: "1".into(),
            role: Role::Impl,
            attempt: 0,
            messages: vec![Message {
                role: "user".into(),
                content: prompt.into(),
            }],
            temperature: 0.2,
            max_tokens,
            seed: None,
            template: "t@1".into(),
            candidate: 0,
            prefill: None,
        }
    }

    #[test]
    fn a_prompt_fits_only_beside_its_answer() {
        let limit = prompt_limit(2_048);
        assert_eq!(limit, 8_192 - 2_048 - CHAT_TOKENS);
        let just = "x".repeat(bytes(limit));
        assert!(fits(&request(&just, 2_048)));
        assert!(!fits(&request(&format!("{just}xxxx"), 2_048)));
        let err = check(&request(&just, 4_096), "task 1's prompt").unwrap_err();
        assert!(
            err.to_string().contains("task 1's prompt does not fit"),
            "{err}"
        );
        assert_eq!(err.answer, 4_096);
    }

    #[test]
    fn a_request_too_large_for_any_prompt_is_refused_with_its_size() {
        assert!(check_spec("Add multiply(a, b).", "template").is_ok());
        let huge = "word ".repeat(6_000);
        let err = check_spec(&huge, "template").unwrap_err();
        assert!(err.what.contains("30000 bytes"), "{err}");
        assert!(err.needed > err.limit);
    }

    #[test]
    fn head_cuts_at_a_line_and_says_so() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(head(text, 100), text);
        assert_eq!(head(text, 9), "one\ntwo\n[... 1 more line(s) not shown]\n");
        assert!(head("ééé", 3).starts_with('é'));
    }

    #[test]
    fn several_answers_share_what_the_prompt_leaves() {
        let ask = |prompt_bytes: usize| LlmRequest {
            node_id: "correct".into(),
            role: crate::llm::Role::Fix,
            attempt: 0,
            messages: vec![crate::llm::Message {
                role: "user".into(),
                content: "x".repeat(prompt_bytes),
            }],
            temperature: 0.3,
            max_tokens: 2_048,
            seed: None,
            template: String::new(),
            candidate: 0,
            prefill: None,
        };
        // 1,000 tokens of prompt: three answers of 2,048 fit whole.
        assert_eq!(candidates(&ask(3_000), 3), (3, 2_048));
        // 4,000: three share the rest; 5,500: two; 6,700: one, as built.
        let (n, each) = candidates(&ask(12_000), 3);
        assert_eq!(n, 3);
        assert!((1_024..2_048).contains(&each) && 4_064 + 3 * u64::from(each) <= 8_192);
        assert_eq!(candidates(&ask(16_500), 3).0, 2);
        assert_eq!(candidates(&ask(20_000), 3), (1, 2_048));
    }
}
