//! Record and replay: every exchange as a JSON line, and a provider that answers from them.
//!
//! A recording is `DIR/exchanges.jsonl`: the request (node, role, attempt, template, messages)
//! and the response. Requests never carry API keys, so recordings are safe to commit; they are
//! how regression tests reuse real model output. Replay matches node, role, attempt and the
//! exact messages (and the answer's prefill, when there is one); a request that was not
//! recorded is an error that names it.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse};

pub const FILE: &str = "exchanges.jsonl";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exchange {
    pub request: LlmRequest,
    pub response: LlmResponse,
    pub provider: String,
    pub seconds: f64,
}

fn key(request: &LlmRequest) -> String {
    let mut messages = serde_json::to_vec(&request.messages).unwrap_or_default();
    // The answer depends on how it was begun: a prefilled request is keyed apart.
    if let Some(prefill) = &request.prefill {
        messages.extend_from_slice(prefill.as_bytes());
    }
    // The candidate joins the key only when it is not the first: recordings made before
    // candidates existed keep their keys.
    let candidate = match request.candidate {
        0 => String::new(),
        i => format!("#{i}"),
    };
    format!(
        "{}|{}|{}{candidate}|{:x}",
        request.node_id,
        request.role.as_str(),
        request.attempt,
        Sha256::digest(messages)
    )
}

pub(crate) struct RecordingProvider {
    inner: Arc<dyn LlmProvider>,
    file: std::sync::Mutex<std::fs::File>,
}

impl RecordingProvider {
    pub fn new(inner: Arc<dyn LlmProvider>, dir: &Path) -> std::io::Result<RecordingProvider> {
        std::fs::create_dir_all(dir)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(FILE))?;
        Ok(RecordingProvider {
            inner,
            file: std::sync::Mutex::new(file),
        })
    }
}

#[async_trait::async_trait]
impl LlmProvider for RecordingProvider {
    fn name(&self) -> String {
        self.inner.name()
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let started = std::time::Instant::now();
        let response = self.inner.complete(request).await?;
        self.record(request, &response, started.elapsed().as_secs_f64());
        Ok(response)
    }

    /// The inner provider answers all candidates at once (the local model batches them);
    /// each answer is recorded as its candidate's exchange.
    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        let started = std::time::Instant::now();
        let answers = self.inner.complete_many(request, n).await;
        let seconds = started.elapsed().as_secs_f64() / answers.len().max(1) as f64;
        for (i, answer) in answers.iter().enumerate() {
            if let Ok(response) = answer {
                self.record(&request.candidate(i as u32), response, seconds);
            }
        }
        answers
    }
}

impl RecordingProvider {
    fn record(&self, request: &LlmRequest, response: &LlmResponse, seconds: f64) {
        let exchange = Exchange {
            request: request.clone(),
            response: response.clone(),
            provider: self.inner.name(),
            seconds,
        };
        if let Ok(mut line) = serde_json::to_string(&exchange) {
            line.push('\n');
            if let Ok(mut file) = self.file.lock()
                && let Err(e) = file.write_all(line.as_bytes())
            {
                tracing::warn!("cannot record an exchange: {e}");
            }
        }
    }
}

pub struct ReplayProvider {
    answers: HashMap<String, LlmResponse>,
    source: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot read recording {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("recording {path}, line {line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl ReplayProvider {
    pub fn load(dir: &Path) -> Result<ReplayProvider, ReplayError> {
        let path = if dir.is_dir() {
            dir.join(FILE)
        } else {
            dir.to_path_buf()
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ReplayError::Read {
            path: path.clone(),
            source,
        })?;
        let mut answers = HashMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let exchange: Exchange =
                serde_json::from_str(line).map_err(|e| ReplayError::Parse {
                    path: path.clone(),
                    line: i + 1,
                    message: e.to_string(),
                })?;
            answers.insert(key(&exchange.request), exchange.response);
        }
        Ok(ReplayProvider {
            answers,
            source: path,
        })
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }
}

#[async_trait::async_trait]
impl LlmProvider for ReplayProvider {
    fn name(&self) -> String {
        format!("replay:{}", self.source.display())
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        self.answers.get(&key(request)).cloned().ok_or_else(|| LlmError::Permanent {
            provider: self.name(),
            message: format!(
                "no recorded answer for node {} role {} attempt {} (template {}) with these exact messages",
                request.node_id,
                request.role.as_str(),
                request.attempt,
                request.template
            ),
        })
    }
}
