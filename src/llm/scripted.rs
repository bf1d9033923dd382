//! A deterministic provider that answers from a JSONL script, for tests and benchmarks.
//!
//! Each line: `{"node": "node_001", "role": "test"|"impl"|"fix", "attempt": 0, "answer": "..."}`.
//! The entry used for a request is the one with the same node and role and the highest
//! attempt not above the request's; a `fix` request with no `fix` entry falls back to `impl`.
//! A line may carry `"fault"` instead of (or besides) an answer:
//! - `"wrong_first"`: attempt 0 gets an implementation that raises, later attempts the answer;
//! - `"permanent"`: every call fails with a permanent provider error;
//! - `"malformed"`: the answer is prose without code;
//! - `"always_wrong"`: every implementation and fix gets an implementation that raises.
//!
//! `$ZEROREPO_SCRIPTED_LATENCY_MS` makes every answer wait that long first, like a hosted
//! model (for measuring what `--jobs` overlaps).

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse, Role, Usage, estimate_tokens};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    WrongFirst,
    Permanent,
    Malformed,
    AlwaysWrong,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptEntry {
    pub node: String,
    pub role: Role,
    #[serde(default)]
    pub attempt: u32,
    /// Which candidate of the request this answers (see `LlmRequest::candidate`); a
    /// candidate with no entry of its own gets candidate 0's answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub candidate: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("script {path}, line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
}

#[derive(Debug, Clone, Default)]
pub struct ScriptedProvider {
    entries: HashMap<(String, Role), Vec<ScriptEntry>>,
    latency: std::time::Duration,
}

/// The variable that sets [`ScriptedProvider::with_latency`] from the command line.
pub(crate) const LATENCY_ENV: &str = "ZEROREPO_SCRIPTED_LATENCY_MS";

impl ScriptedProvider {
    pub fn from_entries(list: impl IntoIterator<Item = ScriptEntry>) -> ScriptedProvider {
        let mut entries: HashMap<(String, Role), Vec<ScriptEntry>> = HashMap::new();
        for entry in list {
            entries
                .entry((entry.node.clone(), entry.role))
                .or_default()
                .push(entry);
        }
        for list in entries.values_mut() {
            list.sort_by_key(|e| e.attempt);
        }
        ScriptedProvider {
            entries,
            latency: std::time::Duration::ZERO,
        }
    }

    /// Every answer waits `latency` before it comes (a latency-bound provider).
    pub(crate) fn with_latency(mut self, latency: std::time::Duration) -> ScriptedProvider {
        self.latency = latency;
        self
    }

    pub fn load(path: &Path) -> Result<ScriptedProvider, ScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: shown.clone(),
            source,
        })?;
        let mut list = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: ScriptEntry =
                serde_json::from_str(line).map_err(|e| ScriptError::Parse {
                    path: shown.clone(),
                    line: i + 1,
                    message: e.to_string(),
                })?;
            if entry.answer.is_none() && entry.fault.is_none() {
                return Err(ScriptError::Parse {
                    path: shown,
                    line: i + 1,
                    message: "needs `answer` or `fault`".into(),
                });
            }
            list.push(entry);
        }
        Ok(ScriptedProvider::from_entries(list))
    }

    fn entry_for(&self, request: &LlmRequest) -> Option<&ScriptEntry> {
        let (node, attempt) = (&request.node_id, request.attempt);
        let pick_candidate = |role: Role, candidate: u32| {
            self.entries
                .get(&(node.to_string(), role))
                .and_then(|list| {
                    list.iter()
                        .rev()
                        .find(|e| e.attempt <= attempt && e.candidate == candidate)
                })
        };
        let pick = |role: Role| {
            pick_candidate(role, request.candidate).or_else(|| pick_candidate(role, 0))
        };
        let role = request.role;
        pick(role).or_else(|| {
            if role == Role::Fix {
                pick(Role::Impl)
            } else {
                None
            }
        })
    }

    /// The fault of a node and role, wherever it is scripted (faults apply to all attempts).
    fn fault_for(&self, node: &str, role: Role) -> Option<Fault> {
        let roles: &[Role] = if role == Role::Fix {
            &[Role::Fix, Role::Impl]
        } else {
            &[role]
        };
        roles.iter().find_map(|r| {
            self.entries
                .get(&(node.to_string(), *r))
                .and_then(|list| list.iter().find_map(|e| e.fault))
        })
    }
}

/// An implementation that imports fine and fails every test: what a wrong first answer is.
fn wrong_answer(request: &LlmRequest) -> String {
    let name = request.messages.iter().rev().find_map(|m| {
        m.content.lines().find_map(|l| {
            l.strip_prefix("Function name: ")
                .map(str::trim)
                .map(str::to_string)
        })
    });
    let name = name.unwrap_or_else(|| "unknown".into());
    format!(
        "```python\ndef {name}(*args, **kwargs):\n    raise NotImplementedError(\"scripted wrong answer\")\n```\n"
    )
}

#[async_trait::async_trait]
impl LlmProvider for ScriptedProvider {
    fn name(&self) -> String {
        "scripted".into()
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        let fault = self.fault_for(&request.node_id, request.role);
        let text = match fault {
            Some(Fault::Permanent) => {
                return Err(LlmError::Permanent {
                    provider: self.name(),
                    message: format!(
                        "injected permanent failure for {} ({})",
                        request.node_id,
                        request.role.as_str()
                    ),
                });
            }
            Some(Fault::Malformed) => "I am sorry, I cannot write that code right now.".to_string(),
            Some(Fault::WrongFirst) if request.attempt == 0 && request.role != Role::Test => {
                wrong_answer(request)
            }
            Some(Fault::AlwaysWrong) if request.role != Role::Test => wrong_answer(request),
            _ => self
                .entry_for(request)
                .and_then(|e| e.answer.clone())
                .ok_or_else(|| LlmError::Permanent {
                    provider: self.name(),
                    message: format!(
                        "the script has no `{}` answer for node {} (attempt {})",
                        request.role.as_str(),
                        request.node_id,
                        request.attempt
                    ),
                })?,
        };
        let prompt: u64 = request
            .messages
            .iter()
            .map(|m| estimate_tokens(&m.content))
            .sum();
        Ok(LlmResponse {
            usage: Usage {
                prompt_tokens: prompt,
                completion_tokens: estimate_tokens(&text),
                cached_tokens: 0,
            },
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(node: &str, role: Role, attempt: u32) -> LlmRequest {
        LlmRequest {
            node_id: node.into(),
            role,
            attempt,
            messages: vec![super::super::Message {
                role: "user".into(),
                content: "Function name: mean\n".into(),
            }],
            temperature: 0.0,
            max_tokens: 100,
            seed: None,
            template: "t@1".into(),
            candidate: 0,
            prefill: None,
        }
    }

    fn entry(role: Role, attempt: u32, answer: &str) -> ScriptEntry {
        ScriptEntry {
            node: "n".into(),
            role,
            attempt,
            candidate: 0,
            answer: Some(answer.into()),
            fault: None,
        }
    }

    #[tokio::test]
    async fn picks_the_latest_attempt_not_above_the_request() {
        let p = ScriptedProvider::from_entries([
            entry(Role::Impl, 0, "a0"),
            entry(Role::Impl, 2, "a2"),
        ]);
        let text = |a| {
            let p = p.clone();
            async move { p.complete(&request("n", Role::Impl, a)).await.unwrap().text }
        };
        assert_eq!(
            (text(0).await, text(1).await, text(2).await, text(7).await),
            ("a0".into(), "a0".into(), "a2".into(), "a2".into())
        );
        assert_eq!(
            p.complete(&request("n", Role::Fix, 3)).await.unwrap().text,
            "a2",
            "fix falls back to impl"
        );
    }

    #[tokio::test]
    async fn faults_are_injected() {
        let faulty = |fault| ScriptEntry {
            fault: Some(fault),
            ..entry(Role::Impl, 0, "good")
        };
        let p = ScriptedProvider::from_entries([faulty(Fault::WrongFirst)]);
        assert!(
            p.complete(&request("n", Role::Impl, 0))
                .await
                .unwrap()
                .text
                .contains("def mean(*args")
        );
        assert_eq!(
            p.complete(&request("n", Role::Fix, 1)).await.unwrap().text,
            "good"
        );
        let p = ScriptedProvider::from_entries([faulty(Fault::Permanent)]);
        assert!(
            !p.complete(&request("n", Role::Impl, 0))
                .await
                .unwrap_err()
                .is_retryable()
        );
        let missing = p
            .complete(&request("other", Role::Test, 0))
            .await
            .unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("no `test` answer for node other"),
            "{missing}"
        );
    }
}
