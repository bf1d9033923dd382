//! The embedded model: a GGUF run in-process by llama.cpp (`llama-cpp-2`), the default provider.
//!
//! llama.cpp's context borrows its model, so both live on one worker thread that owns them and
//! serves requests from a channel; the async side only sends a job and awaits the answer.
//! The worker keeps the tokens already in the KV cache: a new prompt that shares a prefix with
//! the previous one (the system prompt, the node's specification and dependency code are put
//! first for this reason) only evaluates what differs. Long prompts are decoded in batches.
//! The chat template is the one stored in the GGUF.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse, Role, Usage};
use crate::edit::cutoff::{MOST_TESTS, stop_after_tests};

const CONTEXT_TOKENS: u32 = 8192;
const BATCH: usize = 512;

struct Job {
    request: LlmRequest,
    reply: tokio::sync::oneshot::Sender<Result<LlmResponse, LlmError>>,
}

pub struct LocalProvider {
    jobs: mpsc::Sender<Job>,
    name: String,
}

impl LocalProvider {
    /// Loads the model on a worker thread (a few seconds) and returns once it is ready.
    pub fn load(path: &Path) -> Result<LocalProvider, LlmError> {
        let (jobs, incoming) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let model_path: PathBuf = path.to_path_buf();
        std::thread::Builder::new()
            .name("zerorepo-llm".into())
            .spawn(move || worker(&model_path, &ready_tx, &incoming))
            .map_err(|e| permanent(format!("cannot start the model thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(permanent(e)),
            Err(_) => return Err(permanent("the model thread stopped while loading".into())),
        }
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(LocalProvider {
            jobs,
            name: format!("local:{file}"),
        })
    }
}

fn permanent(message: String) -> LlmError {
    LlmError::Permanent {
        provider: "local".into(),
        message,
    }
}

#[async_trait::async_trait]
impl LlmProvider for LocalProvider {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Job {
                request: request.clone(),
                reply,
            })
            .map_err(|_| permanent("the model thread has stopped".into()))?;
        answer
            .await
            .map_err(|_| permanent("the model thread dropped the request".into()))?
    }
}

fn worker(path: &Path, ready: &mpsc::Sender<Result<(), String>>, jobs: &mpsc::Receiver<Job>) {
    let loaded = (|| -> Result<(LlamaBackend, LlamaModel), String> {
        let mut backend = LlamaBackend::init().map_err(|e| format!("llama.cpp: {e}"))?;
        if !tracing::enabled!(tracing::Level::TRACE) {
            backend.void_logs();
        }
        let model = LlamaModel::load_from_file(&backend, path, &LlamaModelParams::default())
            .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        Ok((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(CONTEXT_TOKENS))
        .with_n_batch(BATCH as u32)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(&backend, params) {
        Ok(ctx) => ctx,
        Err(e) => {
            let _ = ready.send(Err(format!("cannot create a llama.cpp context: {e}")));
            return;
        }
    };
    let template = match model.chat_template(None) {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(format!(
                "{} has no usable chat template: {e}",
                path.display()
            )));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut cached: Vec<LlamaToken> = Vec::new();
    while let Ok(job) = jobs.recv() {
        let started = Instant::now();
        let result = (|| -> Result<LlmResponse, String> {
            let chat = job
                .request
                .messages
                .iter()
                .map(|m| {
                    LlamaChatMessage::new(m.role.clone(), m.content.clone())
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            let prompt = model
                .apply_chat_template(&template, &chat, true)
                .map_err(|e| e.to_string())?;
            let tokens = model.vocab().tokenize(prompt.as_bytes(), true, true);
            if tokens.is_empty() {
                return Err("empty prompt".into());
            }
            let budget = CONTEXT_TOKENS as usize - job.request.max_tokens as usize;
            if tokens.len() > budget {
                return Err(format!(
                    "prompt of {} tokens does not fit the {} token context",
                    tokens.len(),
                    CONTEXT_TOKENS
                ));
            }
            // Reuse the KV cache for the prefix this prompt shares with what is already there.
            let keep = cached
                .iter()
                .zip(&tokens)
                .take_while(|(a, b)| a == b)
                .count()
                .min(tokens.len() - 1);
            ctx.clear_kv_cache_seq(Some(0), Some(keep as u32), None)
                .map_err(|e| e.to_string())?;
            cached.truncate(keep);
            let mut batch = LlamaBatch::new(BATCH, 1);
            let fresh = &tokens[keep..];
            for (chunk_index, chunk) in fresh.chunks(BATCH).enumerate() {
                batch.clear();
                let last_chunk = (chunk_index + 1) * BATCH >= fresh.len();
                for (i, token) in chunk.iter().enumerate() {
                    let pos = (keep + chunk_index * BATCH + i) as i32;
                    batch
                        .add(*token, pos, &[0], last_chunk && i + 1 == chunk.len())
                        .map_err(|e| e.to_string())?;
                }
                ctx.decode(&mut batch).map_err(|e| e.to_string())?;
            }
            cached.extend_from_slice(fresh);
            // A mild repetition penalty: small models can loop on one token until the limit.
            let penalties = LlamaSampler::penalties(model.n_vocab(), 64, 1.1, 0.0, 0.0);
            let mut sampler = if job.request.temperature <= 0.0 {
                LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
            } else {
                LlamaSampler::chain_simple([
                    penalties,
                    LlamaSampler::top_k(40),
                    LlamaSampler::temp(job.request.temperature),
                    LlamaSampler::dist(job.request.seed.unwrap_or(0) as u32),
                ])
            };
            let vocab = model.vocab();
            let mut text: Vec<u8> = Vec::new();
            let mut generated = 0u64;
            for _ in 0..job.request.max_tokens {
                let token = sampler.sample(&ctx, batch.n_tokens() - 1);
                sampler.accept(token);
                if vocab.is_eog(token) {
                    break;
                }
                text.extend(vocab.token_to_piece(token, false, None));
                generated += 1;
                batch.clear();
                batch
                    .add(token, cached.len() as i32, &[0], true)
                    .map_err(|e| e.to_string())?;
                ctx.decode(&mut batch).map_err(|e| e.to_string())?;
                cached.push(token);
                if closes_a_code_block(&text) {
                    break;
                }
                if job.request.role == Role::Test
                    && let Some(stopped) =
                        stop_after_tests(&String::from_utf8_lossy(&text), MOST_TESTS)
                {
                    text = stopped.into_bytes();
                    break;
                }
            }
            let text = String::from_utf8_lossy(&text).into_owned();
            tracing::debug!(
                node = %job.request.node_id,
                role = job.request.role.as_str(),
                prompt_tokens = tokens.len(),
                reused = keep,
                generated,
                seconds = started.elapsed().as_secs_f64(),
                "local model call"
            );
            Ok(LlmResponse {
                text,
                usage: Usage {
                    prompt_tokens: tokens.len() as u64,
                    completion_tokens: generated,
                },
            })
        })();
        if result.is_err() {
            cached.clear();
            ctx.clear_kv_cache();
        }
        let _ = job.reply.send(result.map_err(permanent));
    }
}

/// The answers we ask for are one fenced block: stop as soon as it is closed.
fn closes_a_code_block(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    text.match_indices("```").count() >= 2 && text.trim_end().ends_with("```")
}
