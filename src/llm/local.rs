//! The embedded model: a GGUF run in-process by llama.cpp (`llama-cpp-2`), the default provider.
//!
//! llama.cpp's context borrows its model, so both live on one worker thread that owns them and
//! serves requests from a channel; the async side only sends a job and awaits the answer.
//! The worker keeps the tokens already in the KV cache: a new prompt that shares a prefix with
//! the previous one (the system prompt, the node's specification and dependency code are put
//! first for this reason) only evaluates what differs. Long prompts are decoded in batches.
//! The chat template is the one stored in the GGUF.
//!
//! Several candidates of one request are decoded together: the prompt is evaluated once on
//! sequence 0, its cache is shared with sequences 1..n, and each step decodes one token of
//! every live sequence in one batch. On a CPU a step of n sequences costs much less than n
//! steps of one (the weights are read once per step), which is what makes asking for
//! several candidates affordable.

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
/// The most sequences decoded together: the five diagnosis votes (implementation candidates
/// are at most 4); more are capped to this.
pub(crate) const MAX_SEQUENCES: u32 = 5;

struct Job {
    request: LlmRequest,
    /// Candidates wanted.
    n: u32,
    reply: tokio::sync::oneshot::Sender<Vec<Result<LlmResponse, LlmError>>>,
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
    #[error("{n} answers of up to {max_tokens} tokens do not fit the {context} token context")]
    AnswersTooLong {
        n: u32,
        max_tokens: u32,
        context: u32,
    },
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
        self.complete_many(request, 1)
            .await
            .into_iter()
            .next()
            .unwrap_or_else(|| Err(permanent("the model thread gave no answer".into())))
    }

    async fn complete_many(
        &self,
        request: &LlmRequest,
        n: u32,
    ) -> Vec<Result<LlmResponse, LlmError>> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            request: request.clone(),
            n,
            reply,
        };
        if self.jobs.send(job).is_err() {
            return vec![Err(permanent("the model thread has stopped".into()))];
        }
        answer.await.unwrap_or_else(|_| {
            vec![Err(permanent(
                "the model thread dropped the request".into(),
            ))]
        })
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
        // One cache for all sequences: candidates share the prompt's entries.
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(CONTEXT_TOKENS))
            .with_n_seq_max(MAX_SEQUENCES)
            .with_kv_unified(true)
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
            let answers = match self.answer(&job.request, job.n) {
                Ok(answers) => answers.into_iter().map(Ok).collect(),
                Err(e) => {
                    self.forget();
                    vec![Err(failed(e))]
                }
            };
            let _ = job.reply.send(answers);
        }
    }

    /// After a failure the cache may hold half a prompt: the next job starts from nothing.
    fn forget(&mut self) {
        self.cached.clear();
        self.ctx.clear_kv_cache();
    }

    /// `n` candidates of `request` (see [`LlmRequest::candidate`]), decoded together.
    fn answer(&mut self, request: &LlmRequest, n: u32) -> Result<Vec<LlmResponse>, LocalError> {
        let n = n.clamp(1, MAX_SEQUENCES);
        let started = Instant::now();
        let tokens = self.prompt(request, n)?;
        let keep = self.reuse_prefix(&tokens)?;
        let batch = self.evaluate(&tokens[keep..])?;
        for seq in 1..n {
            self.ctx.copy_kv_cache_seq(0, seq as i32, None, None)?;
        }
        let generated = self.generate(request, n, batch.n_tokens() - 1);
        for seq in 1..n {
            self.ctx.clear_kv_cache_seq(Some(seq), None, None)?;
        }
        let sequences = generated?;
        tracing::debug!(
            node = %request.node_id,
            role = request.role.as_str(),
            prompt_tokens = tokens.len(),
            reused = keep,
            candidates = n,
            generated = sequences.iter().map(|s| s.generated).sum::<u64>(),
            seconds = started.elapsed().as_secs_f64(),
            "local model call"
        );
        // The prompt was evaluated once: its tokens count once, with the first candidate.
        Ok(sequences
            .into_iter()
            .enumerate()
            .map(|(i, s)| LlmResponse {
                text: String::from_utf8_lossy(&s.text).into_owned(),
                usage: Usage {
                    prompt_tokens: if i == 0 { tokens.len() as u64 } else { 0 },
                    completion_tokens: s.generated,
                },
            })
            .collect())
    }

    /// The request through the GGUF's chat template and then its prefill, tokenized; refused when it leaves no room
    /// in the context for the answer.
    fn prompt(&self, request: &LlmRequest, n: u32) -> Result<Vec<LlamaToken>, LocalError> {
        let chat = request
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)?;
        // The answer's first characters are the engine's: the model continues from them.
        prompt.push_str(request.prefill.as_deref().unwrap_or(""));
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        if tokens.is_empty() {
            return Err(LocalError::EmptyPrompt);
        }
        let answers = CONTEXT_TOKENS
            .checked_sub(request.max_tokens.saturating_mul(n))
            .ok_or(LocalError::AnswersTooLong {
                n,
                max_tokens: request.max_tokens,
                context: CONTEXT_TOKENS,
            })?;
        if tokens.len() > answers as usize {
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

    /// Samples up to `max_tokens` tokens for each of `n` sequences, all starting from the
    /// logits at `first` (the prompt's last token); every step decodes the next token of each
    /// live sequence in one batch. Sequence 0's tokens join `cached`; the caller drops the
    /// others' cache entries.
    fn generate(
        &mut self,
        request: &LlmRequest,
        n: u32,
        first: i32,
    ) -> Result<Vec<Sequence>, LocalError> {
        let model = self.model;
        let vocab = model.vocab();
        let mut sequences: Vec<Sequence> = (0..n)
            .map(|i| Sequence {
                sampler: sampler(model, &request.candidate(i)),
                text: request.prefill.clone().unwrap_or_default().into_bytes(),
                generated: 0,
                logits: Some(first),
                position: self.cached.len() as i32,
            })
            .collect();
        let mut batch = LlamaBatch::new(n as usize, 1);
        loop {
            batch.clear();
            let mut fed_to_first = None;
            for (seq, s) in sequences.iter_mut().enumerate() {
                let Some(index) = s.logits.take() else {
                    continue;
                };
                let token = s.sampler.sample(&self.ctx, index);
                s.sampler.accept(token);
                if vocab.is_eog(token) {
                    continue;
                }
                s.text.extend(vocab.token_to_piece(token, false, None));
                s.generated += 1;
                if s.generated >= u64::from(request.max_tokens)
                    || answer_is_complete(&mut s.text, request.role)
                {
                    continue;
                }
                s.logits = Some(batch.n_tokens());
                batch.add(token, s.position, &[seq as i32], true)?;
                s.position += 1;
                if seq == 0 {
                    fed_to_first = Some(token);
                }
            }
            if batch.n_tokens() == 0 {
                return Ok(sequences);
            }
            self.ctx.decode(&mut batch)?;
            self.cached.extend(fed_to_first);
        }
    }
}

/// One candidate being decoded.
struct Sequence {
    sampler: LlamaSampler,
    text: Vec<u8>,
    generated: u64,
    /// Where in the last decoded batch this sequence's next logits are; `None` once finished.
    logits: Option<i32>,
    /// The position its next token takes.
    position: i32,
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
