//! Asking the model for a node: one answer, `n` candidates decoded together, or one vote,
//! each judged as the loop can use it (tokens counted, a cut-off answer refused, a provider
//! failure told apart from a transient one) and given up at once on cancellation.

use crate::llm::{LlmError, Role, UsageByRole};
use crate::rpg::Node;

use super::prompt::{self, PromptInputs};
use super::{Context, vote};

/// An answer that could not be used, as the reason fed back to the next attempt.
pub(super) fn unusable(error: impl std::fmt::Display) -> AskError {
    AskError::Unusable(error.to_string())
}

pub(super) enum AskError {
    /// The answer had no usable code: worth another attempt, with the reason fed back.
    Unusable(String),
    /// The provider cannot answer: the node fails now.
    Provider(String),
}

/// One answer of the model for this node and role.
pub(super) async fn ask(
    ctx: &Context,
    node: &Node,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    ask_many(
        ctx,
        node,
        role,
        attempt,
        inputs,
        usage,
        (1, Sampling::ByAttempt),
    )
    .await
    .0
    .into_iter()
    .next()
    .unwrap_or_else(|| Err(AskError::Provider("the provider gave no answer".into())))
}

/// Vote `i` of a diagnosis: its own request (its options, temperature and seed; see
/// [`vote`]), which shares all of its prompt but the options with the other votes.
pub(super) async fn ask_vote(
    ctx: &Context,
    node: &Node,
    attempt: u32,
    inputs: &PromptInputs,
    i: u32,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    ctx.phases.report(
        &node.id,
        &format!("diagnosing: vote {}/{}", i + 1, vote::VOTERS),
    );
    let request = prompt::request(&node.id, Role::Diagnose, attempt, inputs)
        .map_err(|e| AskError::Provider(e.to_string()))?
        .candidate(i);
    let response = tokio::select! {
        r = ctx.llm.complete(&request) => r,
        _ = ctx.cancel.cancelled() => return Err(AskError::Unusable("interrupted".into())),
    };
    judge(node, Role::Diagnose, request.max_tokens, response, usage)
}

/// How the first answer of a request is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sampling {
    /// Greedy on the first attempt, sampled on later ones (see [`prompt::request`]).
    ByAttempt,
    /// Greedy whatever the attempt.
    GreedyFirst,
}

/// `n` candidate answers to one prompt, the first sampled as `sampling` says (the local model decodes them together), and the
/// prompt's size in tokens.
pub(super) async fn ask_many(
    ctx: &Context,
    node: &Node,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
    usage: &mut UsageByRole,
    (n, sampling): (u32, Sampling),
) -> (Vec<Result<String, AskError>>, u64) {
    let phase = match (role, n) {
        (Role::Test, _) => "writing tests".to_string(),
        (Role::Impl, 1) => "writing code".to_string(),
        (Role::Impl, n) => format!("writing {n} candidates"),
        (Role::Fix, _) => format!("fixing (attempt {})", attempt + 1),
        (Role::Diagnose, _) => "diagnosing".to_string(),
    };
    ctx.phases.report(&node.id, &phase);
    let request = match prompt::request(&node.id, role, attempt, inputs) {
        Ok(request) => request,
        Err(e) => return (vec![Err(AskError::Provider(e.to_string()))], 0),
    };
    let request = match sampling {
        Sampling::ByAttempt => request,
        // The node's first implementation round: its first candidate is the answer asking
        // once gives, whatever attempt the tests took to write.
        Sampling::GreedyFirst => crate::llm::LlmRequest {
            temperature: 0.0,
            ..request
        },
    };
    let responses = tokio::select! {
        r = ctx.llm.complete_many(&request, n) => r,
        _ = ctx.cancel.cancelled() => {
            return (vec![Err(AskError::Unusable("interrupted".into()))], 0);
        }
    };
    // The prompt's size: a provider that evaluates it once for all candidates counts it on
    // one answer, one asked once per candidate on each.
    let prompt_tokens = responses
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|r| r.usage.prompt_tokens)
        .max()
        .unwrap_or(0);
    let answers = responses
        .into_iter()
        .map(|response| judge(node, role, request.max_tokens, response, usage))
        .collect();
    (answers, prompt_tokens)
}

/// An answer as the node loop can use it: its tokens counted, a cut-off answer refused (but
/// the complete tests of one kept), a provider failure told apart from a transient one.
pub(super) fn judge(
    node: &Node,
    role: Role,
    max_tokens: u32,
    response: Result<crate::llm::LlmResponse, LlmError>,
    usage: &mut UsageByRole,
) -> Result<String, AskError> {
    match response {
        // A vote is one letter: its token limit is a cap, not a sign of a runaway answer.
        Ok(response)
            if role != Role::Diagnose
                && response.usage.completion_tokens >= u64::from(max_tokens) =>
        {
            usage.entry(role).or_default().add(response.usage);
            // Tests are independent: the complete ones of a long answer are still useful.
            // A cut-off implementation is not, whatever it parses to.
            if role == Role::Test
                && let Some(kept) = crate::edit::cutoff::drop_unfinished_tail(&response.text)
            {
                tracing::info!(node = %node.id, "kept the complete tests of an answer cut off at the token limit");
                return Ok(kept);
            }
            Err(AskError::Unusable(format!(
                "the answer was cut off at the {max_tokens} token limit (it probably repeated itself)"
            )))
        }
        Ok(response) => {
            usage.entry(role).or_default().add(response.usage);
            Ok(response.text)
        }
        Err(e @ LlmError::Transient { .. }) => Err(AskError::Unusable(e.to_string())),
        Err(e) => Err(AskError::Provider(format!("LLM provider failed: {e}"))),
    }
}
