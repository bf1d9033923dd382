//! Any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LM Studio,
//! llama.cpp's server), over reqwest with rustls.
//!
//! Transient failures (429, 5xx, timeouts, connection errors, malformed bodies) are retried with
//! exponential backoff and full jitter, honouring `Retry-After`; anything else fails at once.
//! The API key comes from the environment and is held in [`ApiKey`], whose `Debug` prints
//! `***`; every message that leaves this module passes through [`redact`] as well.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse, Usage};

/// A secret that never prints.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Also registers the key with [`crate::redact`], so no test run's output can carry it.
    pub fn new(key: String) -> ApiKey {
        crate::redact::register(&key);
        ApiKey(key)
    }

    pub(crate) fn from_env(var: &str) -> Option<ApiKey> {
        std::env::var(var)
            .ok()
            .filter(|k| !k.is_empty())
            .map(ApiKey::new)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// How transient failures are retried (data, like the sandbox policy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryPolicy {
    /// Calls in all, the first included.
    pub max_attempts: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay_ms: 500,
            max_delay_ms: 20_000,
        }
    }
}

impl RetryPolicy {
    /// Full jitter: a uniform delay in `[0, min(max, base * 2^attempt)]`, `unit` in `[0, 1)`.
    pub(crate) fn backoff(&self, attempt: u32, unit: f64) -> Duration {
        let ceiling = self
            .base_delay_ms
            .saturating_mul(1u64 << attempt.min(20))
            .min(self.max_delay_ms);
        Duration::from_millis((ceiling as f64 * unit.clamp(0.0, 1.0)) as u64)
    }
}

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// For example `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// Per call.
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

pub struct OpenAiProvider {
    client: reqwest::Client,
    config: OpenAiConfig,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [super::Message],
    temperature: f32,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    /// Servers that keep prompt prefixes say how many of the prompt's tokens they reused.
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// One attempt's outcome: done, retry (after at least this long), or give up.
enum Attempt {
    Done(LlmResponse),
    Retry(String, Option<Duration>),
    Fail(String),
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiProvider, LlmError> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Permanent {
                provider: "openai".into(),
                message: e.to_string(),
            })?;
        Ok(OpenAiProvider { client, config })
    }

    fn redact(&self, text: &str) -> String {
        redact(text, self.config.api_key.as_ref())
    }

    async fn attempt(&self, request: &LlmRequest) -> Attempt {
        let reply = match self.send(request).await {
            Ok(reply) => reply,
            Err(why) => return Attempt::Retry(why.to_string(), None),
        };
        let status = reply.status;
        if status.as_u16() == 429 || status.is_server_error() {
            return Attempt::Retry(
                format!("HTTP {status}: {}", snippet(&reply.text)),
                reply.retry_after,
            );
        }
        if !status.is_success() {
            return Attempt::Fail(format!("HTTP {status}: {}", snippet(&reply.text)));
        }
        answer(&reply.text, request)
    }

    /// Posts the request and reads the whole reply. `Err` is why no reply came (a timeout, a
    /// failed connection or body): always worth another attempt.
    async fn send(&self, request: &LlmRequest) -> Result<Reply, SendError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let body = ChatRequest {
            model: &self.config.model,
            messages: &request.messages,
            temperature: request.temperature,
            max_tokens: request.max_tokens,
            seed: request.seed,
        };
        let mut call = self.client.post(&url).json(&body);
        if let Some(key) = &self.config.api_key {
            call = call.bearer_auth(&key.0);
        }
        let response = match call.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => return Err(SendError::Timeout(self.config.timeout)),
            Err(e) => return Err(SendError::Request(e)),
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().await.map_err(SendError::Body)?;
        Ok(Reply {
            status,
            retry_after,
            text,
        })
    }
}

/// Why no reply came: always worth another attempt.
#[derive(Debug, thiserror::Error)]
enum SendError {
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("request failed: {0}")]
    Request(#[source] reqwest::Error),
    #[error("reading the body failed: {0}")]
    Body(#[source] reqwest::Error),
}

/// A reply that arrived whole, whatever its status.
struct Reply {
    status: reqwest::StatusCode,
    /// `Retry-After` in seconds, when the server sent one.
    retry_after: Option<Duration>,
    text: String,
}

/// The answer in a successful reply's body. A body without one is retried: servers under
/// load send truncated or empty ones.
fn answer(text: &str, request: &LlmRequest) -> Attempt {
    let parsed: ChatResponse = match serde_json::from_str(text) {
        Ok(p) => p,
        Err(e) => {
            return Attempt::Retry(format!("malformed response ({e}): {}", snippet(text)), None);
        }
    };
    let Some(content) = parsed
        .choices
        .into_iter()
        .next()
        .and_then(|c| c.message.content)
    else {
        return Attempt::Retry("response without choices[0].message.content".into(), None);
    };
    let usage = parsed.usage.map_or_else(
        || estimated_usage(request, &content),
        |u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cached_tokens: u.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
        },
    );
    Attempt::Done(LlmResponse {
        text: content,
        usage,
    })
}

/// For servers that report no usage: an estimate from the text sent and received.
fn estimated_usage(request: &LlmRequest, content: &str) -> Usage {
    Usage {
        prompt_tokens: request
            .messages
            .iter()
            .map(|m| super::estimate_tokens(&m.content))
            .sum(),
        completion_tokens: super::estimate_tokens(content),
        cached_tokens: 0,
    }
}

fn snippet(text: &str) -> String {
    text.chars().take(200).collect()
}

/// Replaces the key, wherever it appears, with `***`.
fn redact(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(ApiKey(k)) if k.len() >= 4 => text.replace(k.as_str(), "***"),
        _ => text.to_string(),
    }
}

/// A uniform number in [0, 1) for jitter (no RNG dependency: time and a counter suffice).
fn unit_random() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ nanos;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[async_trait::async_trait]
impl LlmProvider for OpenAiProvider {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let provider = self.name();
        let mut last = String::new();
        for attempt in 0..self.config.retry.max_attempts.max(1) {
            match self.attempt(request).await {
                // An endpoint can echo the key (or any known secret) back; the answer becomes
                // generated code, git history and `--record` files, so it never holds one.
                Attempt::Done(mut response) => {
                    response.text =
                        crate::redact::redact(&self.redact(&response.text)).into_owned();
                    return Ok(response);
                }
                Attempt::Fail(message) => {
                    return Err(LlmError::Permanent {
                        provider,
                        message: self.redact(&message),
                    });
                }
                Attempt::Retry(message, retry_after) => {
                    tracing::warn!(%provider, attempt, "transient failure: {}", self.redact(&message));
                    last = message;
                    if attempt + 1 < self.config.retry.max_attempts {
                        let wait = retry_after
                            .unwrap_or_else(|| self.config.retry.backoff(attempt, unit_random()));
                        tokio::time::sleep(
                            wait.min(Duration::from_millis(self.config.retry.max_delay_ms)),
                        )
                        .await;
                    }
                }
            }
        }
        Err(LlmError::Transient {
            provider,
            message: self.redact(&format!(
                "gave up after {} attempts: {last}",
                self.config.retry.max_attempts
            )),
        })
    }
    /// The candidates as concurrent requests ([`super::concurrent_candidates`]); a server's
    /// `n` would sample every answer alike.
    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        super::concurrent_candidates(self, request, n).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded_full_jitter() {
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay_ms: 100,
            max_delay_ms: 1000,
        };
        assert_eq!(policy.backoff(0, 0.0), Duration::ZERO);
        assert_eq!(policy.backoff(0, 0.999), Duration::from_millis(99));
        assert_eq!(policy.backoff(3, 0.5), Duration::from_millis(400));
        assert_eq!(
            policy.backoff(10, 0.5),
            Duration::from_millis(500),
            "capped at max_delay"
        );
    }

    #[test]
    fn keys_never_print() {
        let key = ApiKey("sk-test-1234567890".into());
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(
            redact("bad key sk-test-1234567890!", Some(&key)),
            "bad key ***!"
        );
    }
}
