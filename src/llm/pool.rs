//! Several endpoints serving the same model (vLLM replicas, llama.cpp servers, Ollama hosts)
//! as one provider: each request goes to the endpoint with the fewest requests in flight, and
//! an endpoint that fails is taken out for a cool-down and its request goes to the next.
//!
//! `--llm openai:MODEL --llm-base-url URL1,URL2` builds one; the failover chain of `--llm a,b`
//! sits on top, unchanged. The order in which endpoints are tried is [`order`], a pure
//! function of each endpoint's state, tested with integers; the provider only keeps the
//! state. Candidates of one request are asked concurrently, so they spread over the
//! endpoints. Members are asked once each per round, and rounds are repeated with backoff
//! (the members' own retries are turned off, so a failing endpoint hands its request on at
//! once instead of after its backoff).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::openai::RetryPolicy;
use super::{LlmError, LlmProvider, LlmRequest, LlmResponse};

/// How long an endpoint that failed is skipped (unless every endpoint is out).
pub const COOL_DOWN: Duration = Duration::from_secs(30);

/// What [`order`] needs to know of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberState {
    pub in_flight: usize,
    /// Out of the pool until then, in milliseconds on any monotonic clock.
    pub down_until_ms: Option<u64>,
}

/// The order to try the endpoints in at `now_ms`: those in the pool by fewest requests in
/// flight, ties from `turn` on (round robin); then those out of it, soonest back first, so a
/// request still has somewhere to go when every endpoint has failed recently.
pub fn order(members: &[MemberState], now_ms: u64, turn: usize) -> Vec<usize> {
    let n = members.len();
    let rotated = |i: usize| (i + n - turn % n.max(1)) % n.max(1);
    let up = |m: &MemberState| m.down_until_ms.is_none_or(|t| t <= now_ms);
    let mut healthy: Vec<usize> = (0..n).filter(|&i| up(&members[i])).collect();
    healthy.sort_by_key(|&i| (members[i].in_flight, rotated(i)));
    let mut down: Vec<usize> = (0..n).filter(|&i| !up(&members[i])).collect();
    down.sort_by_key(|&i| (members[i].down_until_ms, rotated(i)));
    healthy.extend(down);
    healthy
}

struct Member {
    provider: Arc<dyn LlmProvider>,
    in_flight: AtomicUsize,
    down_until: Mutex<Option<Instant>>,
}

pub struct Pool {
    members: Vec<Member>,
    turn: AtomicUsize,
    retry: RetryPolicy,
    epoch: Instant,
    name: String,
}

/// Decrements a member's in-flight count however the request ends.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    /// `members` serve the same model and should not retry themselves; `retry` sets the
    /// rounds over them.
    pub fn new(name: String, members: Vec<Arc<dyn LlmProvider>>, retry: RetryPolicy) -> Pool {
        Pool {
            members: members
                .into_iter()
                .map(|provider| Member {
                    provider,
                    in_flight: AtomicUsize::new(0),
                    down_until: Mutex::new(None),
                })
                .collect(),
            turn: AtomicUsize::new(0),
            retry,
            epoch: Instant::now(),
            name,
        }
    }

    fn ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    fn states(&self) -> Vec<MemberState> {
        self.members
            .iter()
            .map(|m| MemberState {
                in_flight: m.in_flight.load(Ordering::SeqCst),
                down_until_ms: m.down_until.lock().ok().and_then(|d| d.map(|t| self.ms(t))),
            })
            .collect()
    }

    fn set_down(&self, member: &Member, down: bool) {
        if let Ok(mut until) = member.down_until.lock() {
            *until = down.then(|| Instant::now() + COOL_DOWN);
        }
    }

    /// One pass over the endpoints in [`order`]: the first answer, or the last error.
    async fn round(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let turn = self.turn.fetch_add(1, Ordering::SeqCst);
        let mut last = None;
        for index in order(&self.states(), self.ms(Instant::now()), turn) {
            let member = &self.members[index];
            member.in_flight.fetch_add(1, Ordering::SeqCst);
            let guard = InFlight(&member.in_flight);
            let result = member.provider.complete(request).await;
            drop(guard);
            match result {
                Ok(response) => {
                    self.set_down(member, false);
                    return Ok(response);
                }
                Err(error) => {
                    tracing::warn!(
                        endpoint = index,
                        "taking the endpoint out for {COOL_DOWN:?}: {error}"
                    );
                    self.set_down(member, true);
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
        let candidates: Vec<LlmRequest> = (0..n.max(1)).map(|i| request.candidate(i)).collect();
        futures_util::future::join_all(candidates.iter().map(|c| self.complete(c))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(in_flight: usize) -> MemberState {
        MemberState {
            in_flight,
            down_until_ms: None,
        }
    }

    #[test]
    fn the_least_busy_endpoint_goes_first_and_ties_take_turns() {
        assert_eq!(order(&[up(2), up(0), up(1)], 0, 0), [1, 2, 0]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 0), [0, 1, 2]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 1), [1, 2, 0]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 5), [2, 0, 1]);
    }

    #[test]
    fn an_endpoint_out_of_the_pool_comes_last_until_its_cool_down_ends() {
        let down = |until| MemberState {
            in_flight: 0,
            down_until_ms: Some(until),
        };
        assert_eq!(order(&[down(100), up(3)], 50, 0), [1, 0]);
        assert_eq!(order(&[down(100), up(3)], 100, 0), [0, 1]);
        // Every endpoint out: the one back soonest first.
        assert_eq!(order(&[down(300), down(200)], 0, 0), [1, 0]);
        assert!(order(&[], 0, 7).is_empty());
    }
}
