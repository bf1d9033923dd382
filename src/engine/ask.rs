//! Asking the model for a node: one answer, `n` candidates decoded together, or one vote,
//! each judged as the loop can use it (tokens counted, a cut-off answer refused, a provider
//! failure told apart from a transient one) and given up at once on cancellation.

use crate::llm::{LlmError, LlmRequest, LlmResponse, Role, UsageByRole};
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
        (role, attempt),
        inputs,
        usage,
        (1, Sampling::ByAttempt),
        None,
    )
    .await
    .answers
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

/// What [`ask_many`] got.
pub(super) struct Asked {
    pub(super) answers: Vec<Result<String, AskError>>,
    /// The prompt's size in tokens.
    pub(super) prompt_tokens: u64,
    /// The answers were those asked ahead ([`Ahead`]).
    pub(super) ahead: bool,
}

/// `n` candidate answers to one prompt, the first sampled as `sampling` says (the local
/// model decodes them together): the answers asked `ahead` when they answer this very
/// request.
pub(super) async fn ask_many(
    ctx: &Context,
    node: &Node,
    (role, attempt): (Role, u32),
    inputs: &PromptInputs,
    usage: &mut UsageByRole,
    (n, sampling): (u32, Sampling),
    ahead: Option<Ahead>,
) -> Asked {
    let phase = match (role, n) {
        (Role::Test, _) => "writing tests".to_string(),
        (Role::Impl, 1) => "writing code".to_string(),
        (Role::Impl, n) => format!("writing {n} candidates"),
        (Role::Fix, _) => format!("fixing (attempt {})", attempt + 1),
        (Role::Diagnose, _) => "diagnosing".to_string(),
    };
    ctx.phases.report(&node.id, &phase);
    let request = match sampled_request(node, role, attempt, inputs, sampling) {
        Ok(request) => request,
        Err(e) => return Asked::none(e),
    };
    let handle = ahead.and_then(|a| a.answering(&request, n));
    let from_ahead = handle.is_some();
    let asked: Answers<'_> = match handle {
        Some(handle) => Box::pin(async move {
            handle.await.unwrap_or_else(|e| {
                vec![Err(LlmError::Permanent {
                    provider: ctx.llm.name(),
                    message: format!("the request asked ahead ended: {e}"),
                })]
            })
        }),
        None => ctx.llm.complete_many(&request, n),
    };
    let responses = tokio::select! {
        r = asked => r,
        _ = ctx.cancel.cancelled() => return Asked::none(AskError::Unusable("interrupted".into())),
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
    Asked {
        answers,
        prompt_tokens,
        ahead: from_ahead,
    }
}

impl Asked {
    fn none(error: AskError) -> Asked {
        Asked {
            answers: vec![Err(error)],
            prompt_tokens: 0,
            ahead: false,
        }
    }
}

/// The request `ask_many` sends: the prompt for `role`, its first candidate sampled as
/// `sampling` says.
fn sampled_request(
    node: &Node,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
    sampling: Sampling,
) -> Result<LlmRequest, AskError> {
    let request = prompt::request(&node.id, role, attempt, inputs)
        .map_err(|e| AskError::Provider(e.to_string()))?;
    Ok(match sampling {
        Sampling::ByAttempt => request,
        // The node's first implementation round: its first candidate is the answer asking
        // once gives, whatever attempt the tests took to write.
        Sampling::GreedyFirst => LlmRequest {
            temperature: 0.0,
            ..request
        },
    })
}

/// Answers asked before the loop needs them. The implementation prompt does not show the
/// node's tests, so the first implementation round can be asked while the tests are being
/// written: the local model then decodes both in the same batches, where a step of several
/// sequences costs little more than a step of one, instead of one after the other. The
/// answers are used only for a request identical to the one asked ahead (same prompt, same
/// sampling, same number of candidates), so the loop's decisions are those it would make
/// without asking ahead; otherwise, and when the node ends without asking, they are dropped.
pub(super) struct Ahead {
    request: LlmRequest,
    n: u32,
    /// `None` once handed to the request it answers.
    handle: Option<Answering>,
}

type Answering = tokio::task::JoinHandle<Vec<Result<LlmResponse, LlmError>>>;
type Answers<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Vec<Result<LlmResponse, LlmError>>> + Send + 'a>,
>;

impl Ahead {
    /// Asks `n` candidates of `request` now, in a task of their own.
    fn spawn(ctx: &Context, request: LlmRequest, n: u32) -> Ahead {
        let (llm, asked) = (ctx.llm.clone(), request.clone());
        Ahead {
            request,
            n,
            handle: Some(tokio::spawn(
                async move { llm.complete_many(&asked, n).await },
            )),
        }
    }

    /// Asks `role`'s `n` answers ahead, as [`ask_many`] would ask them with these inputs.
    pub(super) fn ask(
        ctx: &Context,
        node: &Node,
        (role, attempt): (Role, u32),
        inputs: &PromptInputs,
        (n, sampling): (u32, Sampling),
    ) -> Option<Ahead> {
        let request = sampled_request(node, role, attempt, inputs, sampling).ok()?;
        Some(Ahead::spawn(ctx, request, n))
    }

    /// The answers, when they answer exactly `request` with `n` candidates.
    fn answering(mut self, request: &LlmRequest, n: u32) -> Option<Answering> {
        if self.n != n || self.request != *request {
            tracing::debug!(node = %request.node_id, "the answers asked ahead answer another request: dropped");
            return None;
        }
        self.handle.take()
    }
}

impl Drop for Ahead {
    /// Answers nobody will read are not waited for.
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn request(text: &str, temperature: f32) -> LlmRequest {
        LlmRequest {
            node_id: "node_1".into(),
            role: Role::Impl,
            attempt: 0,
            messages: vec![Message {
                role: "user".into(),
                content: text.into(),
            }],
            temperature,
            max_tokens: 1024,
            seed: Some(0),
            template: "write_impl@6".into(),
            candidate: 0,
            prefill: None,
        }
    }

    fn ahead(request: LlmRequest, n: u32) -> Ahead {
        Ahead {
            request,
            n,
            handle: Some(tokio::spawn(async { Vec::new() })),
        }
    }

    #[tokio::test]
    async fn answers_asked_ahead_serve_only_the_identical_request() {
        let asked = request("write f", 0.0);
        assert!(ahead(asked.clone(), 3).answering(&asked, 3).is_some());
        // Another prompt, another sampling, another number of candidates: asked again.
        assert!(
            ahead(asked.clone(), 3)
                .answering(&request("write g", 0.0), 3)
                .is_none()
        );
        assert!(
            ahead(asked.clone(), 3)
                .answering(&request("write f", 0.4), 3)
                .is_none()
        );
        assert!(ahead(asked.clone(), 3).answering(&asked, 2).is_none());
    }
}
