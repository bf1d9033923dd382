//! Decoding speed of the embedded model with and without prompt-lookup drafting, per role.
//!
//! The requests are the ones a real ml_lib run sent (`fixtures/ml_lib/recorded/…`), the first
//! few of each role (tests, implementation, fix): tests and implementations asked greedily,
//! as the engine asks a role's first attempt, fixes sampled as recorded (temperature 0.4 and
//! their seed), as the engine asks its fix rounds; a sampled sequence drafts like a greedy one
//! and keeps its distribution (`zerorepo::llm::draft`). One provider (llama.cpp starts once per process)
//! decodes each request without drafting, then with; before each timed call the request is
//! sent with one token asked, so its prompt is cached and the timed call measures decoding. It prints a Markdown table (copied into reports/decode.md):
//! generated tokens per second each way, draft tokens accepted per verification, and whether
//! both ways wrote the same text.
//!
//! `cargo bench --bench decode` runs three requests per role (minutes on two cores; run it
//! alone on the machine). `-- --requests N` takes N per role; `-- --drafts 1,3` compares
//! those draft lengths (`ZEROREPO_DRAFT=lookup:N`; default: the provider's default, 3);
//! `-- --role fix` (or `test`, `impl`) that role alone; `-- --smoke` one test request of 32
//! tokens, to see that it works. Under `cargo test` (no `--bench`) it says it skipped.
//!
//! `-- --replay` decodes nothing: it loads only the model's vocabulary, tokenizes every
//! recorded prompt and answer, and replays each answer through [`propose`] for several draft
//! lengths, as greedy decoding would check them (an answer recorded at temperature 0 is
//! exactly what greedy decoding writes, if its text tokenizes back to the same tokens). It
//! prints how many decode steps drafting would take and how many tokens those steps carry,
//! which with the measured cost of a step of n tokens says which draft length pays.
//!
//! `-- --step-cost [REPS]` measures that cost: after a recorded prompt, steps of 1, 2, 3, 4,
//! 5 and 8 tokens of one sequence, logits on all (as a step with drafts has), taken in turn
//! REPS times (default 30) and removed from the cache after each; it prints the mean time of
//! each size and its ratio to one token.
//!
//! `-- --draft-model [N]` measures a draft model (Qwen2.5-Coder-0.5B, `zerorepo model pull
//! code --name qwen2.5-coder-0.5b`; it shares the 1.5B's vocabulary) against prompt lookup on
//! the first N recorded exchanges of each role (default 8). The 0.5B reads each prompt and
//! answer in one pass (teacher forcing), so its greedy guess after every prefix of the answer
//! is known; drafting k tokens from a prefix accepts the guesses that match the answer in a
//! row, exactly as a greedy draft of k tokens would (its later guesses are made on the tokens
//! it was right about). The cost of each way is measured in the same process: a step of the
//! 0.5B, and steps of 1 to 5 tokens of the 1.5B. A check of k drafts costs k steps of the 0.5B
//! and one step of k + 1 tokens of the 1.5B; lookup's check costs only the latter. It prints,
//! per role and k, the tokens accepted per check and the speed-up over plain decoding that
//! those measured costs give.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use zerorepo::llm::draft::{DraftCounts, Drafting, propose};
use zerorepo::llm::local::LocalProvider;
use zerorepo::llm::{LlmProvider, LlmRequest, Role};

const RECORDING: &str = "fixtures/ml_lib/recorded/qwen2.5-coder-1.5b-b/exchanges.jsonl";

struct Options {
    requests: usize,
    roles: Vec<Role>,
    /// Overrides the recorded requests' `max_tokens`.
    max_tokens: Option<u32>,
    /// The drafting settings compared with none.
    drafts: Vec<Drafting>,
}

fn options() -> Option<Options> {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        return None;
    }
    let drafts = args
        .iter()
        .position(|a| a == "--drafts")
        .and_then(|i| args.get(i + 1))
        .map_or(vec![Drafting::LOOKUP], |list| {
            list.split(',')
                .map(|n| format!("lookup:{n}").parse().unwrap())
                .collect()
        });
    if args.iter().any(|a| a == "--smoke") {
        return Some(Options {
            requests: 1,
            roles: vec![Role::Test],
            max_tokens: Some(32),
            drafts,
        });
    }
    let requests = args
        .iter()
        .position(|a| a == "--requests")
        .and_then(|i| args.get(i + 1))
        .map_or(3, |n| n.parse().expect("--requests takes a number"));
    // `--role fix` (or test, impl): that role alone.
    let all = [Role::Test, Role::Impl, Role::Fix];
    let roles = match args
        .iter()
        .position(|a| a == "--role")
        .and_then(|i| args.get(i + 1))
    {
        Some(name) => vec![
            *all.iter()
                .find(|r| r.as_str() == name)
                .expect("--role takes test, impl or fix"),
        ],
        None => all.to_vec(),
    };
    Some(Options {
        requests,
        roles,
        max_tokens: None,
        drafts,
    })
}

/// The first `n` recorded requests of `role`, made greedy unless they are fixes.
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
            if role != Role::Fix {
                r.temperature = 0.0;
            }
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
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--replay") {
        replay();
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--draft-model") {
        let n = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(8);
        draft_model(n);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--step-cost") {
        let reps = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(30);
        step_cost(reps);
        return;
    }
    let path = zerorepo::llm::model::resolve(None).unwrap();
    let provider = LocalProvider::load_with(&path, Drafting::Off).unwrap();
    println!(
        "| role | requests | drafts | plain tok/s | lookup tok/s | speed-up | generated | \
         verifications | accepted / verification | accepted / proposed | same text |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for role in options.roles {
        let requests = recorded(role, options.requests, options.max_tokens);
        let mut off = Total::default();
        let mut on: Vec<(Total, usize)> =
            options.drafts.iter().map(|_| Default::default()).collect();
        // Each request both ways in turn, so drift over the run touches all alike.
        for request in &requests {
            let plain = timed(&provider, Drafting::Off, request, &mut off).await;
            for (drafting, (total, same)) in options.drafts.iter().zip(&mut on) {
                let text = timed(&provider, *drafting, request, total).await;
                *same += usize::from(text == plain);
            }
        }
        for (drafting, (total, same)) in options.drafts.iter().zip(&on) {
            let d = total.drafts;
            println!(
                "| {} | {} | {} | {:.1} | {:.1} | {:.2}× | {} | {} | {:.2} | {:.2} | {same} of {} |",
                role.as_str(),
                requests.len(),
                drafting.tokens(),
                off.rate(),
                total.rate(),
                total.rate() / off.rate(),
                total.generated,
                d.verifications,
                d.accepted as f64 / d.verifications.max(1) as f64,
                d.accepted as f64 / d.proposed.max(1) as f64,
                requests.len()
            );
        }
    }
}

/// One recorded exchange as tokens: its role, its prompt through the chat template, its answer.
fn recorded_tokens(model: &LlamaModel) -> Vec<(Role, Vec<i32>, Vec<i32>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(RECORDING)).unwrap();
    let template = model.chat_template(None).unwrap();
    let vocab = model.vocab();
    let ids = |text: &str, special: bool| -> Vec<i32> {
        vocab
            .tokenize(text.as_bytes(), special, special)
            .iter()
            .map(|t| t.0)
            .collect()
    };
    text.lines()
        .map(|line| {
            let exchange: serde_json::Value = serde_json::from_str(line).unwrap();
            let request: LlmRequest = serde_json::from_value(exchange["request"].clone()).unwrap();
            let chat: Vec<LlamaChatMessage> = request
                .messages
                .iter()
                .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()).unwrap())
                .collect();
            let prompt = model.apply_chat_template(&template, &chat, true).unwrap();
            let answer = exchange["response"]["text"].as_str().unwrap();
            (request.role, ids(&prompt, true), ids(answer, false))
        })
        .collect()
}

/// Decode steps and batch tokens greedy decoding of `answer` after `prompt` takes with drafts
/// of at most `most` tokens (with `exact`, of `most` tokens or none, as the provider drafts):
/// (steps, batch tokens, verifications, accepted).
fn replay_one(prompt: &[i32], answer: &[i32], most: usize, exact: bool) -> (u64, u64, u64, u64) {
    let (mut steps, mut carried, mut verifications, mut accepted) = (0, 0, 0, 0);
    let mut history = prompt.to_vec();
    // The first token comes from the prompt's logits; each step then feeds one token.
    let mut i = 0;
    while i + 1 < answer.len() {
        history.push(answer[i]);
        let left = answer.len() - i - 1;
        let mut drafts = if most == 0 {
            Vec::new()
        } else {
            propose(&history, most.min(left))
        };
        if exact && drafts.len() < most {
            drafts.clear();
        }
        let kept = drafts
            .iter()
            .zip(&answer[i + 1..])
            .take_while(|(d, a)| d == a)
            .count();
        steps += 1;
        carried += 1 + drafts.len() as u64;
        if !drafts.is_empty() {
            verifications += 1;
            accepted += kept as u64;
        }
        history.extend_from_slice(&answer[i + 1..i + 1 + kept]);
        i += kept + 1;
    }
    (steps, carried, verifications, accepted)
}

/// How many tokens before the end of `history` match those before the earlier occurrence
/// [`propose`] continues from (the same search: the last 3, else 2 tokens), up to 16; 0 when
/// nothing matches. A long match says the answer is copying; a short one may be chance.
fn matched_context(history: &[i32]) -> usize {
    let len = history.len();
    for n in [3, 2] {
        if len <= n {
            continue;
        }
        let suffix = &history[len - n..];
        if let Some(i) = (0..len - n).rev().find(|&i| &history[i..i + n] == suffix) {
            let end = i + n;
            return (1..=16.min(end))
                .take_while(|&k| history[end - k] == history[len - k])
                .count();
        }
    }
    0
}

/// Checks of 3 drafts and the drafts accepted, by [`matched_context`] bucket.
fn by_context(prompt: &[i32], answer: &[i32], buckets: &mut [(u64, u64); 4]) {
    let mut history = prompt.to_vec();
    let mut i = 0;
    while i + 1 < answer.len() {
        history.push(answer[i]);
        let left = answer.len() - i - 1;
        let drafts = propose(&history, 3.min(left));
        let kept = drafts
            .iter()
            .zip(&answer[i + 1..])
            .take_while(|(d, a)| d == a)
            .count();
        if drafts.len() == 3 {
            let bucket = match matched_context(&history) {
                0..=2 => 0,
                3..=4 => 1,
                5..=8 => 2,
                _ => 3,
            };
            buckets[bucket].0 += 1;
            buckets[bucket].1 += kept as u64;
        }
        history.extend_from_slice(&answer[i + 1..i + 1 + kept]);
        i += kept + 1;
    }
}

/// Replays every recorded answer through [`propose`] (see the module doc).
fn replay() {
    let backend = LlamaBackend::init().unwrap();
    let params = LlamaModelParams::default().with_vocab_only(true);
    let path = zerorepo::llm::model::resolve(None).unwrap();
    let model = LlamaModel::load_from_file(&backend, path, &params).unwrap();
    let exchanges = recorded_tokens(&model);
    println!(
        "| role | answers | tokens | drafts | steps | tokens / step | batch tokens / step | \
         verifications | accepted / verification |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let policies = [
        (0, false),
        (1, false),
        (2, false),
        (3, false),
        (4, false),
        (6, false),
        (8, false),
        (3, true),
        (7, true),
    ];
    for role in [Role::Test, Role::Impl, Role::Fix] {
        let mine: Vec<_> = exchanges.iter().filter(|e| e.0 == role).collect();
        let tokens: u64 = mine.iter().map(|e| e.2.len() as u64).sum();
        for (most, exact) in policies {
            let (mut steps, mut carried, mut verifications, mut accepted) = (0, 0, 0, 0);
            for (_, prompt, answer) in &mine {
                let (s, c, v, a) = replay_one(prompt, answer, most, exact);
                (steps, carried, verifications, accepted) =
                    (steps + s, carried + c, verifications + v, accepted + a);
            }
            let drafts = if exact {
                format!("exactly {most}")
            } else {
                format!("up to {most}")
            };
            println!(
                "| {} | {} | {tokens} | {drafts} | {steps} | {:.2} | {:.2} | {verifications} | {:.2} |",
                role.as_str(),
                mine.len(),
                tokens as f64 / steps as f64,
                carried as f64 / steps as f64,
                accepted as f64 / verifications.max(1) as f64
            );
        }
    }
    println!("\nChecks of exactly 3 drafts by how many tokens before the end matched:\n");
    println!("| role | 2 | 3–4 | 5–8 | 9 or more |");
    println!("|---|---|---|---|---|");
    for role in [Role::Test, Role::Impl, Role::Fix] {
        let mut buckets = [(0u64, 0u64); 4];
        for (_, prompt, answer) in exchanges.iter().filter(|e| e.0 == role) {
            by_context(prompt, answer, &mut buckets);
        }
        let cells: Vec<String> = buckets
            .iter()
            .map(|(checks, kept)| {
                format!(
                    "{checks} checks, {:.2} accepted",
                    *kept as f64 / (*checks).max(1) as f64
                )
            })
            .collect();
        println!("| {} | {} |", role.as_str(), cells.join(" | "));
    }
}

/// The mean time of a decode step by its number of tokens (see the module doc).
fn step_cost(reps: usize) {
    let backend = LlamaBackend::init().unwrap();
    let path = zerorepo::llm::model::resolve(None).unwrap();
    let model = LlamaModel::load_from_file(&backend, path, &LlamaModelParams::default()).unwrap();
    let prompt: Vec<LlamaToken> = recorded_tokens(&model)[0]
        .1
        .iter()
        .map(|&t| LlamaToken(t))
        .collect();
    let sizes = [1usize, 2, 3, 4, 5, 8];
    let seconds = step_seconds(&backend, &model, &prompt, &sizes, reps);
    println!(
        "{} prompt tokens cached, {reps} steps of each size\n",
        prompt.len()
    );
    println!("| tokens in the step | ms per step | vs one token |");
    println!("|---|---|---|");
    for (k, n) in sizes.iter().enumerate() {
        println!(
            "| {n} | {:.1} | {:.2} |",
            1000.0 * seconds[k],
            seconds[k] / seconds[0]
        );
    }
}

/// A context of `model` as the provider makes one: every core, batches of 512.
fn context<'m>(
    backend: &LlamaBackend,
    model: &'m LlamaModel,
    n_ctx: u32,
) -> llama_cpp_2::context::LlamaContext<'m> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
    let params = LlamaContextParams::default()
        .with_n_ctx(std::num::NonZeroU32::new(n_ctx))
        .with_n_batch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    model.new_context(backend, params).unwrap()
}

/// The mean seconds of a decode step of each of `sizes` tokens of one sequence after
/// `prompt`, logits on all, the sizes taken in turn `reps` times after one unmeasured round
/// (so drift touches all alike), each removed from the cache after it.
fn step_seconds(
    backend: &LlamaBackend,
    model: &LlamaModel,
    prompt: &[LlamaToken],
    sizes: &[usize],
    reps: usize,
) -> Vec<f64> {
    let mut ctx = context(backend, model, 4096);
    for (start, chunk) in prompt.chunks(512).enumerate() {
        let mut batch = LlamaBatch::new(512, 1);
        for (i, &t) in chunk.iter().enumerate() {
            let pos = start * 512 + i;
            batch
                .add(t, pos as i32, &[0], pos + 1 == prompt.len())
                .unwrap();
        }
        ctx.decode(&mut batch).unwrap();
    }
    let base = prompt.len() as i32;
    let mut seconds = vec![0.0f64; sizes.len()];
    for round in 0..=reps {
        for (k, &n) in sizes.iter().enumerate() {
            let mut batch = LlamaBatch::new(512, 1);
            for (i, &t) in prompt.iter().take(n).enumerate() {
                batch.add(t, base + i as i32, &[0], true).unwrap();
            }
            let started = Instant::now();
            ctx.decode(&mut batch).unwrap();
            if round > 0 {
                seconds[k] += started.elapsed().as_secs_f64();
            }
            ctx.clear_kv_cache_seq(Some(0), Some(base as u32), None)
                .unwrap();
        }
    }
    seconds.iter().map(|s| s / reps as f64).collect()
}

/// The draft model's greedy guess of each answer token, from the prompt and the answer's
/// tokens before it (teacher forcing): `guesses[j]` is its guess of `answer[j]`.
fn guesses(
    ctx: &mut llama_cpp_2::context::LlamaContext<'_>,
    prompt: &[i32],
    answer: &[i32],
) -> Vec<i32> {
    ctx.clear_kv_cache_seq(Some(0), None, None).unwrap();
    let tokens: Vec<i32> = prompt.iter().chain(answer).copied().collect();
    // Positions prompt.len() - 1 .. tokens.len() - 1 predict the answer's tokens.
    let first = prompt.len() - 1;
    let mut out = Vec::with_capacity(answer.len());
    for (start, chunk) in tokens.chunks(512).enumerate() {
        let mut batch = LlamaBatch::new(512, 1);
        let mut wanted = Vec::new();
        for (i, &t) in chunk.iter().enumerate() {
            let pos = start * 512 + i;
            let logits = pos >= first && pos + 1 < tokens.len();
            batch.add(LlamaToken(t), pos as i32, &[0], logits).unwrap();
            if logits {
                wanted.push(i as i32);
            }
        }
        ctx.decode(&mut batch).unwrap();
        for i in wanted {
            let logits = ctx.get_logits_ith(i);
            let best = logits
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(t, _)| t as i32);
            out.push(best);
        }
    }
    out
}

/// Checks and accepted drafts of greedy decoding of `answer` with a draft model that guesses
/// `guesses` and drafts `k` tokens a check: (checks, accepted, answer tokens).
fn draft_replay(answer: &[i32], guesses: &[i32], k: usize) -> (u64, u64, u64) {
    let (mut checks, mut accepted) = (0u64, 0u64);
    // The first token comes from the prompt's logits; each check then carries the last
    // token and k drafts, and gives the accepted drafts and one token of its own.
    let mut n = 1;
    while n < answer.len() {
        let kept = (n..answer.len().min(n + k))
            .take_while(|&j| guesses[j] == answer[j])
            .count();
        checks += 1;
        accepted += kept as u64;
        n += kept + 1;
    }
    (checks, accepted, answer.len() as u64)
}

/// The draft model against prompt lookup (see the module doc).
fn draft_model(per_role: usize) {
    let backend = LlamaBackend::init().unwrap();
    let target_path = zerorepo::llm::model::resolve(None).unwrap();
    let target =
        LlamaModel::load_from_file(&backend, target_path, &LlamaModelParams::default()).unwrap();
    let spec = zerorepo::llm::model::spec_by_name("qwen2.5-coder-0.5b").unwrap();
    let draft_path = zerorepo::llm::model::models_dir().join(spec.file_name);
    assert!(
        draft_path.is_file(),
        "{} is missing: zerorepo model pull code --name qwen2.5-coder-0.5b",
        draft_path.display()
    );
    let draft =
        LlamaModel::load_from_file(&backend, &draft_path, &LlamaModelParams::default()).unwrap();
    assert_eq!(
        target.n_vocab(),
        draft.n_vocab(),
        "the two models' vocabularies differ"
    );
    let exchanges = recorded_tokens(&target);
    let prompt: Vec<LlamaToken> = exchanges[0].1.iter().map(|&t| LlamaToken(t)).collect();
    let target_cost = step_seconds(&backend, &target, &prompt, &[1, 2, 3, 4, 5], 20);
    let draft_cost = step_seconds(&backend, &draft, &prompt, &[1], 20)[0];
    println!(
        "steps measured after {} prompt tokens: 1.5B {} ms for 1 to 5 tokens; 0.5B {:.1} ms for 1\n",
        prompt.len(),
        target_cost
            .iter()
            .map(|s| format!("{:.1}", 1000.0 * s))
            .collect::<Vec<_>>()
            .join(" / "),
        1000.0 * draft_cost
    );
    println!(
        "| role | answers | tokens | method | drafts a check | checks | accepted / check | speed-up |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let longest = exchanges
        .iter()
        .map(|e| e.1.len() + e.2.len())
        .max()
        .unwrap_or(0);
    let mut ctx = context(&backend, &draft, (longest as u32 + 64).max(512));
    for role in [Role::Test, Role::Impl, Role::Fix] {
        let mine: Vec<_> = exchanges
            .iter()
            .filter(|e| e.0 == role && e.2.len() > 1)
            .take(per_role)
            .collect();
        let guessed: Vec<Vec<i32>> = mine
            .iter()
            .map(|(_, prompt, answer)| guesses(&mut ctx, prompt, answer))
            .collect();
        let tokens: u64 = mine.iter().map(|e| e.2.len() as u64).sum();
        let plain = tokens as f64 * target_cost[0];
        // A check of k drafts is verified in a step of k + 1 tokens: `target_cost[k]`.
        for (k, verify) in target_cost.iter().enumerate().skip(1) {
            let (mut checks, mut accepted) = (0, 0);
            for ((_, _, answer), guesses) in mine.iter().zip(&guessed) {
                let (c, a, _) = draft_replay(answer, guesses, k);
                (checks, accepted) = (checks + c, accepted + a);
            }
            let cost = checks as f64 * (k as f64 * draft_cost + verify);
            println!(
                "| {} | {} | {tokens} | 0.5B draft | {k} | {checks} | {:.2} | {:.2}× |",
                role.as_str(),
                mine.len(),
                accepted as f64 / checks.max(1) as f64,
                plain / cost
            );
        }
        // Lookup as the provider drafts: exactly 3 or none, checked in a step of 4.
        let (mut steps, mut verifications, mut accepted) = (0, 0, 0);
        for (_, prompt, answer) in &mine {
            let (s, _, v, a) = replay_one(prompt, answer, 3, true);
            (steps, verifications, accepted) = (steps + s, verifications + v, accepted + a);
        }
        let cost =
            verifications as f64 * target_cost[3] + (steps - verifications) as f64 * target_cost[0];
        println!(
            "| {} | {} | {tokens} | prompt lookup | 3 | {verifications} | {:.2} | {:.2}× |",
            role.as_str(),
            mine.len(),
            accepted as f64 / verifications.max(1) as f64,
            plain / cost
        );
    }
}
