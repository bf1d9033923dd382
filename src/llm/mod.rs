//! Language models behind one trait.
//!
//! [`LlmProvider`] is async and object-safe so that an HTTP client, an embedded GGUF model and
//! the deterministic [`scripted::ScriptedProvider`] are interchangeable. Requests carry the node
//! id, role and attempt so scripted answers, recordings and token accounting can key on them.

pub mod chain;
pub mod derive;
#[cfg(feature = "local-model")]
pub mod local;
pub mod model;
pub mod openai;
pub mod record;
pub mod scripted;

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
}

/// Rough token estimate for providers that do not count (4 characters per token).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}
