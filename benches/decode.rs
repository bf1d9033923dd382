//! Decoding speed of the embedded model with and without prompt-lookup drafting, per role.
//!
//! The requests are the ones a real ml_lib run sent (`fixtures/ml_lib/recorded/…`), the first
//! few of each role (tests, implementation, fix), every one asked greedily: drafting only
//! applies to greedy sequences, and the engine asks a role's first attempt at temperature 0
//! (fix rounds are retries, sampled at 0.4 today: their row says what drafting would do for
//! them once sampled sequences draft too). One provider (llama.cpp starts once per process)
//! decodes each request without drafting, then with; before each timed call the request is
//! sent with one token asked, so its prompt is cached and the timed call measures decoding. It prints a Markdown table (copied into reports/decode.md):
//! generated tokens per second each way, draft tokens accepted per verification, and whether
//! both ways wrote the same text.
//!
//! `cargo bench --bench decode` runs three requests per role (minutes on two cores; run it
//! alone on the machine). `-- --requests N` takes N per role; `-- --smoke` one test request of
//! 32 tokens, to see that it works. Under `cargo test` (no `--bench`) it says it skipped.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use zerorepo::llm::draft::{DraftCounts, Drafting};
use zerorepo::llm::local::LocalProvider;
use zerorepo::llm::{LlmProvider, LlmRequest, Role};

const RECORDING: &str = "fixtures/ml_lib/recorded/qwen2.5-coder-1.5b-b/exchanges.jsonl";

struct Options {
    requests: usize,
    roles: Vec<Role>,
    /// Overrides the recorded requests' `max_tokens`.
    max_tokens: Option<u32>,
}

fn options() -> Option<Options> {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        return None;
    }
    if args.iter().any(|a| a == "--smoke") {
        return Some(Options {
            requests: 1,
            roles: vec![Role::Test],
            max_tokens: Some(32),
        });
    }
    let requests = args
        .iter()
        .position(|a| a == "--requests")
        .and_then(|i| args.get(i + 1))
        .map_or(3, |n| n.parse().expect("--requests takes a number"));
    Some(Options {
        requests,
        roles: vec![Role::Test, Role::Impl, Role::Fix],
        max_tokens: None,
    })
}

/// The first `n` recorded requests of `role`, made greedy.
fn recorded(role: Role, n: usize, max_tokens: Option<u32>) -> Vec<LlmRequest> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(RECORDING)).unwrap();
    text.lines()
        .map(|line| {
            let exchange: serde_json::Value = serde_json::from_str(line).unwrap();
            serde_json::from_value::<LlmRequest>(exchange["request"].clone()).unwrap()
        })
        .filter(|r| r.role == role)
        .take(n)
        .map(|mut r| {
            r.temperature = 0.0;
            r.candidate = 0;
            if let Some(most) = max_tokens {
                r.max_tokens = most;
            }
            r
        })
        .collect()
}

/// One way of decoding, summed over a role's requests.
#[derive(Default)]
struct Total {
    generated: u64,
    seconds: f64,
    drafts: DraftCounts,
}

impl Total {
    fn add(&mut self, generated: u64, seconds: f64, before: DraftCounts, after: DraftCounts) {
        self.generated += generated;
        self.seconds += seconds;
        self.drafts.verifications += after.verifications - before.verifications;
        self.drafts.proposed += after.proposed - before.proposed;
        self.drafts.accepted += after.accepted - before.accepted;
    }

    fn rate(&self) -> f64 {
        self.generated as f64 / self.seconds
    }
}

/// Decodes `request` on `provider`, drafting as told, with its prompt cached: the text, and
/// the call's share of the totals.
async fn timed(
    provider: &LocalProvider,
    drafting: Drafting,
    request: &LlmRequest,
    total: &mut Total,
) -> String {
    provider.set_drafting(drafting);
    let mut warm = request.clone();
    warm.max_tokens = 1;
    provider.complete(&warm).await.unwrap();
    let before = provider.draft_counts();
    let started = Instant::now();
    let answer = provider.complete(request).await.unwrap();
    let seconds = started.elapsed().as_secs_f64();
    total.add(
        answer.usage.completion_tokens,
        seconds,
        before,
        provider.draft_counts(),
    );
    answer.text
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(options) = options() else {
        eprintln!(
            "SKIPPED: the decode bench runs the local model for minutes; run `cargo bench --bench decode`"
        );
        return;
    };
    let path = zerorepo::llm::model::resolve(None).unwrap();
    let provider = LocalProvider::load_with(&path, Drafting::Off).unwrap();
    println!(
        "| role | requests | plain tok/s | lookup tok/s | speed-up | generated | verifications | \
         accepted / verification | accepted / proposed | same text |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for role in options.roles {
        let requests = recorded(role, options.requests, options.max_tokens);
        let (mut off, mut on, mut same) = (Total::default(), Total::default(), 0);
        for request in &requests {
            let a = timed(&provider, Drafting::Off, request, &mut off).await;
            let b = timed(&provider, Drafting::Lookup, request, &mut on).await;
            same += usize::from(a == b);
        }
        let d = on.drafts;
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.2}× | {} | {} | {:.2} | {:.2} | {same} of {} |",
            role.as_str(),
            requests.len(),
            off.rate(),
            on.rate(),
            on.rate() / off.rate(),
            on.generated,
            d.verifications,
            d.accepted as f64 / d.verifications.max(1) as f64,
            d.accepted as f64 / d.proposed.max(1) as f64,
            requests.len()
        );
    }
}
