//! Several endpoints serving the same model (vLLM replicas, llama.cpp servers, Ollama hosts)
//! as one provider: each request goes to the endpoint with the fewest requests in flight, and
//! an endpoint that fails is taken out for a cool-down and its request goes to the next.
//!
//! `--llm openai:MODEL --llm-base-url URL1,URL2` builds one; the failover chain of `--llm a,b`
//! sits on top, unchanged. The order in which endpoints are tried, and their bookkeeping, are
//! [`crate::balance`]'s. Candidates of one request are asked concurrently, so they spread
//! over the endpoints. Members are asked once each per round, and rounds are repeated with backoff
//! (the members' own retries are turned off, so a failing endpoint hands its request on at
//! once instead of after its backoff).

use std::sync::Arc;
use std::time::Duration;

use super::openai::RetryPolicy;
use super::{LlmError, LlmProvider, LlmRequest, LlmResponse};
use crate::balance::Members;

/// How long an endpoint that failed is skipped (unless every endpoint is out).
pub(crate) const COOL_DOWN: Duration = Duration::from_secs(30);

pub(crate) struct Pool {
    members: Members<Arc<dyn LlmProvider>>,
    retry: RetryPolicy,
    name: String,
}

impl Pool {
    /// `members` serve the same model and should not retry themselves; `retry` sets the
    /// rounds over them.
    pub fn new(name: String, members: Vec<Arc<dyn LlmProvider>>, retry: RetryPolicy) -> Pool {
        Pool {
            members: Members::new(members, COOL_DOWN),
            retry,
            name,
        }
    }

    /// One pass over the endpoints in [`crate::balance::order`]: the first answer, or the last error.
    async fn round(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let mut last = None;
        for index in self.members.next_order() {
            let in_flight = self.members.start(index);
            let result = self.members.get(index).complete(request).await;
            drop(in_flight);
            self.members.mark(index, result.is_ok());
            match result {
                Ok(response) => return Ok(response),
                Err(error) => {
                    tracing::warn!(
                        endpoint = index,
                        "taking the endpoint out for {COOL_DOWN:?}: {error}"
                    );
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or_else(|| LlmError::Permanent {
            provider: self.name.clone(),
            message: "the pool has no endpoint".into(),
        }))
    }
}

#[async_trait::async_trait]
impl LlmProvider for Pool {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let rounds = self.retry.max_attempts.max(1);
        let mut last = None;
        for round in 0..rounds {
            match self.round(request).await {
                Ok(response) => return Ok(response),
                Err(error) => last = Some(error),
            }
            if round + 1 < rounds {
                tokio::time::sleep(self.retry.backoff(round, 0.5)).await;
            }
        }
        let last = last.map_or_else(String::new, |e| e.to_string());
        Err(LlmError::Transient {
            provider: self.name.clone(),
            message: format!("every endpoint failed, {rounds} round(s): {last}"),
        })
    }

    /// The candidates concurrently, so that they spread over the endpoints.
    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        super::concurrent_candidates(self, request, n).await
    }
}
