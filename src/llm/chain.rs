//! Composition of providers: a failover chain, and building providers from `--llm` specs.
//!
//! `--llm` takes a comma-separated list: each provider is tried in order and the next one gets
//! the request when the previous fails (after its own retries). Specs:
//! `local` / `local:PATH` (the embedded GGUF), `openai:MODEL` (any OpenAI-compatible endpoint,
//! see [`OpenAiOptions`]; several comma-separated base URLs make a [`Pool`] that spreads the
//! requests over them), `scripted:PATH` (a JSONL script), `replay:DIR` (a recording).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::openai::{ApiKey, OpenAiConfig, OpenAiProvider, RetryPolicy};
use super::pool::Pool;
use super::record::{RecordingProvider, ReplayProvider};
use super::scripted::ScriptedProvider;
use super::{LlmError, LlmProvider, LlmRequest, LlmResponse};

pub struct Failover {
    providers: Vec<Arc<dyn LlmProvider>>,
}

impl Failover {
    pub fn new(providers: Vec<Arc<dyn LlmProvider>>) -> Failover {
        Failover { providers }
    }
}

#[async_trait::async_trait]
impl LlmProvider for Failover {
    fn name(&self) -> String {
        self.providers
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(",")
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let mut last = None;
        for provider in &self.providers {
            match provider.complete(request).await {
                Ok(response) => return Ok(response),
                Err(error) => {
                    tracing::warn!(provider = %provider.name(), "failing over: {error}");
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or_else(|| LlmError::Permanent {
            provider: "none".into(),
            message: "no provider configured".into(),
        }))
    }

    /// The first provider that gives any answer gives all of them (the local model batches
    /// candidates; asking candidate by candidate down the chain would not).
    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        let mut last = Vec::new();
        for provider in &self.providers {
            let answers = provider.complete_many(request, n).await;
            if answers.iter().any(Result::is_ok) {
                return answers;
            }
            tracing::warn!(provider = %provider.name(), "failing over: no candidate answered");
            last = answers;
        }
        last
    }
}

/// Settings for `openai:` providers.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    pub base_url: String,
    /// Name of the environment variable holding the key (the key itself is never a flag).
    pub api_key_env: String,
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for OpenAiOptions {
    fn default() -> Self {
        OpenAiOptions {
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(
        "unknown --llm provider `{0}`: expected local[:PATH], openai:MODEL, scripted:PATH or replay:DIR"
    )]
    Unknown(String),
    #[error("{0}")]
    Provider(String),
    #[error(
        "this build has no embedded model (built without the `local-model` feature): use --llm openai:MODEL or scripted:PATH"
    )]
    NoLocalModel,
}

/// Builds the provider for a `--llm` value (`None`: the embedded local model).
pub fn from_spec(
    spec: Option<&str>,
    model: Option<&Path>,
    openai: &OpenAiOptions,
    record: Option<&Path>,
) -> Result<Arc<dyn LlmProvider>, SpecError> {
    let spec = spec.unwrap_or("local");
    let mut providers: Vec<Arc<dyn LlmProvider>> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        providers.push(one(part, model, openai)?);
    }
    let provider: Arc<dyn LlmProvider> = match providers.len() {
        0 => return Err(SpecError::Unknown(spec.into())),
        1 => providers.remove(0),
        _ => Arc::new(Failover::new(providers)),
    };
    match record {
        Some(dir) => Ok(Arc::new(
            RecordingProvider::new(provider, dir)
                .map_err(|e| SpecError::Provider(e.to_string()))?,
        )),
        None => Ok(provider),
    }
}

fn one(
    part: &str,
    model: Option<&Path>,
    openai: &OpenAiOptions,
) -> Result<Arc<dyn LlmProvider>, SpecError> {
    let (kind, arg) = part
        .split_once(':')
        .map_or((part, None), |(k, a)| (k, Some(a)));
    match (kind, arg) {
        ("scripted", Some(path)) => {
            let latency = std::env::var(super::scripted::LATENCY_ENV)
                .ok()
                .and_then(|ms| ms.trim().parse::<u64>().ok())
                .map_or(std::time::Duration::ZERO, std::time::Duration::from_millis);
            Ok(Arc::new(
                ScriptedProvider::load(Path::new(path))
                    .map_err(|e| SpecError::Provider(e.to_string()))?
                    .with_latency(latency),
            ))
        }
        ("replay", Some(dir)) => Ok(Arc::new(
            ReplayProvider::load(Path::new(dir)).map_err(|e| SpecError::Provider(e.to_string()))?,
        )),
        ("openai", Some(name)) => openai_endpoints(name, openai),
        ("local", path) => local(path.map(PathBuf::from).as_deref().or(model)),
        _ => Err(SpecError::Unknown(part.into())),
    }
}

/// One endpoint, or a [`Pool`] when `base_url` lists several (comma-separated).
fn openai_endpoints(
    model: &str,
    openai: &OpenAiOptions,
) -> Result<Arc<dyn LlmProvider>, SpecError> {
    let urls: Vec<&str> = openai
        .base_url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    let endpoint = |base_url: &str, retry: RetryPolicy| {
        let config = OpenAiConfig {
            base_url: base_url.to_string(),
            model: model.to_string(),
            api_key: ApiKey::from_env(&openai.api_key_env),
            timeout: openai.timeout,
            retry,
        };
        OpenAiProvider::new(config)
            .map(|p| Arc::new(p) as Arc<dyn LlmProvider>)
            .map_err(|e| SpecError::Provider(e.to_string()))
    };
    match urls.as_slice() {
        [] => Err(SpecError::Provider("--llm-base-url is empty".into())),
        [one] => endpoint(one, openai.retry.clone()),
        many => {
            // The pool retries in rounds over the endpoints; a member hands a failure on at once.
            let once = RetryPolicy {
                max_attempts: 1,
                ..openai.retry.clone()
            };
            let members = many
                .iter()
                .map(|url| endpoint(url, once.clone()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Arc::new(Pool::new(
                format!("openai:{model} ({} endpoints)", members.len()),
                members,
                openai.retry.clone(),
            )))
        }
    }
}

#[cfg(feature = "local-model")]
fn local(path: Option<&Path>) -> Result<Arc<dyn LlmProvider>, SpecError> {
    let path = super::model::resolve(path).map_err(|e| SpecError::Provider(e.to_string()))?;
    tracing::info!("loading {}", path.display());
    let provider =
        super::local::LocalProvider::load(&path).map_err(|e| SpecError::Provider(e.to_string()))?;
    Ok(Arc::new(provider))
}

#[cfg(not(feature = "local-model"))]
fn local(_: Option<&Path>) -> Result<Arc<dyn LlmProvider>, SpecError> {
    Err(SpecError::NoLocalModel)
}
