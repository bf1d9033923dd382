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

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::kv_cache::KvCacheConversionError;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::{BatchAddError, LlamaBatch};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{
    ApplyChatTemplateError, ChatTemplateError, DecodeError, LlamaContextLoadError, LlamaCppError,
    LlamaModelLoadError, NewLlamaChatMessageError,
};

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse, Role, Usage};
use crate::edit::cutoff::{MOST_TESTS, stop_after_tests};

const CONTEXT_TOKENS: u32 = 8192;
const BATCH: usize = 512;

struct Job {
    request: LlmRequest,
    reply: tokio::sync::oneshot::Sender<Result<LlmResponse, LlmError>>,
}

pub(crate) struct LocalProvider {
    jobs: mpsc::Sender<Job>,
    name: String,
}

impl LocalProvider {
    /// Loads the model on a worker thread (a few seconds) and returns once it is ready.
    pub(crate) fn load(path: &Path) -> Result<LocalProvider, LlmError> {
        let (jobs, incoming) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LocalError>>();
        let model_path: PathBuf = path.to_path_buf();
        std::thread::Builder::new()
            .name("zerorepo-llm".into())
            .spawn(move || worker(&model_path, &ready_tx, &incoming))
            .map_err(|e| permanent(format!("cannot start the model thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(failed(e)),
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

/// Why the worker could not load the model or answer a request.
///
/// The texts are the ones users have always seen: llama.cpp's own message where it has one.
/// [`failed`] turns it into the [`LlmError`] every provider speaks; that type is compared and
/// cloned by callers, so it carries the text, not this value.
#[derive(Debug, thiserror::Error)]
enum LocalError {
    #[error("llama.cpp: {0}")]
    Backend(#[source] LlamaCppError),
    #[error("cannot load {}: {source}", .path.display())]
    Load {
        path: PathBuf,
        source: LlamaModelLoadError,
    },
    #[error("cannot create a llama.cpp context: {0}")]
    Context(#[source] LlamaContextLoadError),
    #[error("{} has no usable chat template: {source}", .path.display())]
    NoChatTemplate {
        path: PathBuf,
        source: ChatTemplateError,
    },
    #[error(transparent)]
    Message(#[from] NewLlamaChatMessageError),
    #[error(transparent)]
    ApplyChatTemplate(#[from] ApplyChatTemplateError),
    #[error("empty prompt")]
    EmptyPrompt,
    #[error("prompt of {tokens} tokens does not fit the {context} token context")]
    PromptTooLong { tokens: usize, context: u32 },
    #[error(transparent)]
    KvCache(#[from] KvCacheConversionError),
    #[error(transparent)]
    Batch(#[from] BatchAddError),
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

fn permanent(message: String) -> LlmError {
    LlmError::Permanent {
        provider: "local".into(),
        message,
    }
}

fn failed(error: LocalError) -> LlmError {
    permanent(error.to_string())
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

/// The model thread: loads, says whether it is ready, then serves jobs until the provider is
/// dropped. The context borrows the model, which is why both live here and not in the provider.
fn worker(path: &Path, ready: &mpsc::Sender<Result<(), LocalError>>, jobs: &mpsc::Receiver<Job>) {
    let (backend, model) = match load(path) {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    match Session::open(&backend, &model, path) {
        Ok(mut session) => {
            let _ = ready.send(Ok(()));
            session.serve(jobs);
        }
        Err(e) => {
            let _ = ready.send(Err(e));
        }
    }
}

fn load(path: &Path) -> Result<(LlamaBackend, LlamaModel), LocalError> {
    let mut backend = LlamaBackend::init().map_err(LocalError::Backend)?;
    if !tracing::enabled!(tracing::Level::TRACE) {
        backend.void_logs();
    }
    let model = LlamaModel::load_from_file(&backend, path, &LlamaModelParams::default()).map_err(
        |source| LocalError::Load {
            path: path.to_path_buf(),
            source,
        },
    )?;
    Ok((backend, model))
}

/// A context on the model and what its KV cache holds, kept from one job to the next.
struct Session<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    /// The tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
}

impl<'m> Session<'m> {
    fn open(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        path: &Path,
    ) -> Result<Session<'m>, LocalError> {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(CONTEXT_TOKENS))
            .with_n_batch(BATCH as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model
            .new_context(backend, params)
            .map_err(LocalError::Context)?;
        let template = model
            .chat_template(None)
            .map_err(|source| LocalError::NoChatTemplate {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Session {
            model,
            ctx,
            template,
            cached: Vec::new(),
        })
    }

    fn serve(&mut self, jobs: &mpsc::Receiver<Job>) {
        while let Ok(job) = jobs.recv() {
            let result = self.answer(&job.request);
            if result.is_err() {
                self.forget();
            }
            let _ = job.reply.send(result.map_err(failed));
        }
    }

    /// After a failure the cache may hold half a prompt: the next job starts from nothing.
    fn forget(&mut self) {
        self.cached.clear();
        self.ctx.clear_kv_cache();
    }

    fn answer(&mut self, request: &LlmRequest) -> Result<LlmResponse, LocalError> {
        let started = Instant::now();
        let tokens = self.prompt(request)?;
        let keep = self.reuse_prefix(&tokens)?;
        let mut batch = self.evaluate(&tokens[keep..])?;
        let (text, generated) = self.generate(request, &mut batch)?;
        tracing::debug!(
            node = %request.node_id,
            role = request.role.as_str(),
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
    }

    /// The request through the GGUF's chat template, tokenized; refused when it leaves no room
    /// in the context for the answer.
    fn prompt(&self, request: &LlmRequest) -> Result<Vec<LlamaToken>, LocalError> {
        let chat = request
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        if tokens.is_empty() {
            return Err(LocalError::EmptyPrompt);
        }
        let budget = CONTEXT_TOKENS as usize - request.max_tokens as usize;
        if tokens.len() > budget {
            return Err(LocalError::PromptTooLong {
                tokens: tokens.len(),
                context: CONTEXT_TOKENS,
            });
        }
        Ok(tokens)
    }

    /// Keeps the KV cache for the prefix this prompt shares with what is already there and
    /// drops the rest; returns how many tokens are kept. At least the last token is always
    /// evaluated again, since sampling needs its logits.
    fn reuse_prefix(&mut self, tokens: &[LlamaToken]) -> Result<usize, LocalError> {
        let keep = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        self.ctx
            .clear_kv_cache_seq(Some(0), Some(keep as u32), None)?;
        self.cached.truncate(keep);
        Ok(keep)
    }

    /// Decodes `fresh` after the cached tokens, a batch at a time; returns the last batch,
    /// whose last token holds the logits the first sample reads.
    fn evaluate<'b>(&mut self, fresh: &[LlamaToken]) -> Result<LlamaBatch<'b>, LocalError> {
        let keep = self.cached.len();
        let mut batch = LlamaBatch::new(BATCH, 1);
        for (chunk_index, chunk) in fresh.chunks(BATCH).enumerate() {
            batch.clear();
            let last_chunk = (chunk_index + 1) * BATCH >= fresh.len();
            for (i, token) in chunk.iter().enumerate() {
                let pos = (keep + chunk_index * BATCH + i) as i32;
                batch.add(*token, pos, &[0], last_chunk && i + 1 == chunk.len())?;
            }
            self.ctx.decode(&mut batch)?;
        }
        self.cached.extend_from_slice(fresh);
        Ok(batch)
    }

    /// Samples up to `max_tokens` tokens; returns the text and how many tokens it took.
    fn generate(
        &mut self,
        request: &LlmRequest,
        batch: &mut LlamaBatch<'_>,
    ) -> Result<(String, u64), LocalError> {
        let model = self.model;
        let mut sampler = sampler(model, request);
        let vocab = model.vocab();
        let mut text: Vec<u8> = Vec::new();
        let mut generated = 0u64;
        for _ in 0..request.max_tokens {
            let token = sampler.sample(&self.ctx, batch.n_tokens() - 1);
            sampler.accept(token);
            if vocab.is_eog(token) {
                break;
            }
            text.extend(vocab.token_to_piece(token, false, None));
            generated += 1;
            self.feed(batch, token)?;
            if answer_is_complete(&mut text, request.role) {
                break;
            }
        }
        Ok((String::from_utf8_lossy(&text).into_owned(), generated))
    }

    /// Decodes one sampled token, so that the next sample follows it.
    fn feed(&mut self, batch: &mut LlamaBatch<'_>, token: LlamaToken) -> Result<(), LocalError> {
        batch.clear();
        batch.add(token, self.cached.len() as i32, &[0], true)?;
        self.ctx.decode(batch)?;
        self.cached.push(token);
        Ok(())
    }
}

/// Greedy at temperature 0 (reproducible), otherwise top-k with the request's seed.
fn sampler(model: &LlamaModel, request: &LlmRequest) -> LlamaSampler {
    // A mild repetition penalty: small models can loop on one token until the limit.
    let penalties = LlamaSampler::penalties(model.n_vocab(), 64, 1.1, 0.0, 0.0);
    if request.temperature <= 0.0 {
        LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
    } else {
        LlamaSampler::chain_simple([
            penalties,
            LlamaSampler::top_k(40),
            LlamaSampler::temp(request.temperature),
            LlamaSampler::dist(request.seed.unwrap_or(0) as u32),
        ])
    }
}

/// Whether to stop generating: the fenced block is closed, or a test answer already holds as
/// many tests as we keep (then `text` is cut to them).
fn answer_is_complete(text: &mut Vec<u8>, role: Role) -> bool {
    if closes_a_code_block(text) {
        return true;
    }
    if role == Role::Test
        && let Some(stopped) = stop_after_tests(&String::from_utf8_lossy(text), MOST_TESTS)
    {
        *text = stopped.into_bytes();
        return true;
    }
    false
}

/// The answers we ask for are one fenced block: stop as soon as it is closed.
fn closes_a_code_block(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    text.match_indices("```").count() >= 2 && text.trim_end().ends_with("```")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts users see are the ones the worker formatted by hand before it had an error type.
    #[test]
    fn messages_are_the_old_texts() {
        let path = Path::new("/m/q.gguf");
        let cases: Vec<(LocalError, String)> = vec![
            (
                LocalError::Backend(LlamaCppError::BackendAlreadyInitialized),
                format!("llama.cpp: {}", LlamaCppError::BackendAlreadyInitialized),
            ),
            (
                LocalError::Load {
                    path: path.to_path_buf(),
                    source: LlamaModelLoadError::NullResult,
                },
                format!(
                    "cannot load {}: {}",
                    path.display(),
                    LlamaModelLoadError::NullResult
                ),
            ),
            (
                LocalError::Context(LlamaContextLoadError::NullReturn),
                format!(
                    "cannot create a llama.cpp context: {}",
                    LlamaContextLoadError::NullReturn
                ),
            ),
            (
                LocalError::NoChatTemplate {
                    path: path.to_path_buf(),
                    source: ChatTemplateError::MissingTemplate,
                },
                format!(
                    "{} has no usable chat template: {}",
                    path.display(),
                    ChatTemplateError::MissingTemplate
                ),
            ),
            (
                ApplyChatTemplateError::NullResult.into(),
                ApplyChatTemplateError::NullResult.to_string(),
            ),
            (LocalError::EmptyPrompt, "empty prompt".to_string()),
            (
                LocalError::PromptTooLong {
                    tokens: 9000,
                    context: CONTEXT_TOKENS,
                },
                "prompt of 9000 tokens does not fit the 8192 token context".to_string(),
            ),
            (
                BatchAddError::InsufficientSpace(3).into(),
                BatchAddError::InsufficientSpace(3).to_string(),
            ),
            (
                DecodeError::NoKvCacheSlot.into(),
                DecodeError::NoKvCacheSlot.to_string(),
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
            assert_eq!(
                failed(error),
                LlmError::Permanent {
                    provider: "local".into(),
                    message: text
                }
            );
        }
    }
}
