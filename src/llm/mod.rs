//! Language models behind one trait.
//!
//! [`LlmProvider`] is async and object-safe so that an HTTP client, an embedded GGUF model and
//! the deterministic [`scripted::ScriptedProvider`] are interchangeable. Requests carry the node
//! id, role and attempt so scripted answers, recordings and token accounting can key on them.

pub mod chain;
pub mod derive;
pub mod draft;
#[cfg(feature = "local-model")]
pub mod local;
pub mod model;
pub mod openai;
#[cfg(feature = "local-model")]
mod placement;
pub mod pool;
pub mod record;
pub mod scripted;
#[cfg(feature = "local-model")]
mod sequence;

use serde::{Deserialize, Serialize};

pub use crate::usage::{Role, Usage, UsageByRole, total};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest {
    pub node_id: String,
    pub role: Role,
    /// 0 for the first call of this role on this node, counting up on retries.
    pub attempt: u32,
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Passed through to providers that support it, for reproducible sampling.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The prompt template that produced the messages (`id@version`).
    pub template: String,
    /// Which of several answers to the same messages this is (see
    /// [`LlmProvider::complete_many`]); 0 for the first or only one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub candidate: u32,
    /// How the answer begins, written by the engine (for an implementation: the fence, the
    /// planned signature and the specification as its docstring). A provider that can
    /// continue an assistant message (the embedded model) starts the answer with it and
    /// returns it as part of the text, so the model writes only the body, in the layout code
    /// models are trained on; the others ignore it and answer with the whole code, which the
    /// engine reads the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The sampling temperature of every candidate after the first: different enough that the
/// candidates differ, low enough that a 1.5B model still writes valid code.
pub(crate) const CANDIDATE_TEMPERATURE: f32 = 0.7;

impl LlmRequest {
    /// Candidate `i` of this request: the request itself for 0; for the others the same
    /// messages sampled at [`CANDIDATE_TEMPERATURE`] (or the request's, if higher) with seed
    /// `seed + i`, so every candidate is reproducible. Diagnosis votes instead spread over
    /// temperatures: vote `i` samples at the request's plus 0.1·i (the seed's §4.5).
    pub fn candidate(&self, i: u32) -> LlmRequest {
        if i == 0 {
            return self.clone();
        }
        let temperature = match self.role {
            Role::Diagnose => self.temperature + 0.1 * i as f32,
            _ => self.temperature.max(CANDIDATE_TEMPERATURE),
        };
        LlmRequest {
            candidate: i,
            temperature,
            seed: Some(self.seed.unwrap_or(0).wrapping_add(u64::from(i))),
            ..self.clone()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    pub text: String,
    pub usage: Usage,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The provider cannot answer this request and retrying will not help.
    #[error("{provider}: {message}")]
    Permanent { provider: String, message: String },
    /// A transient failure (rate limit, timeout, 5xx); the caller may try again.
    #[error("{provider} (transient): {message}")]
    Transient { provider: String, message: String },
}

impl LlmError {
    pub fn is_retryable(&self) -> bool {
        matches!(self, LlmError::Transient { .. })
    }
}

#[async_trait::async_trait]
pub trait LlmProvider: Send + Sync {
    /// A short name for logs and reports (never contains a secret).
    fn name(&self) -> String;
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError>;

    /// `n` answers to one request, candidate `i` sampled as [`LlmRequest::candidate`] says.
    /// The default asks `n` times; the local model decodes them together as `n` sequences
    /// over one evaluation of the shared prompt.
    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        let mut answers = Vec::with_capacity(n as usize);
        for i in 0..n.max(1) {
            answers.push(self.complete(&request.candidate(i)).await);
        }
        answers
    }
}

/// `n` candidates of `request` asked of `provider` at once, each with its own temperature and
/// seed ([`LlmRequest::candidate`]): for remote models, which are bound by latency, so that k
/// answers take about the time of one (and spread over a pool's endpoints).
pub(crate) async fn concurrent_candidates<P: LlmProvider + ?Sized>(
    provider: &P,
    request: &LlmRequest,
    n: u32,
) -> Vec<Result<LlmResponse, LlmError>> {
    let candidates: Vec<LlmRequest> = (0..n.max(1)).map(|i| request.candidate(i)).collect();
    futures_util::future::join_all(candidates.iter().map(|c| provider.complete(c))).await
}

/// The embedded model's context per request: the prompt and the answer's `max_tokens`
/// together (prompts that must fit it are built to it, see `change::budget`).
pub const CONTEXT_TOKENS: u32 = 8_192;

/// Rough token estimate for providers that do not count (4 characters per token).
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}
