//! The embedded model: a GGUF run in-process by llama.cpp (`llama-cpp-2`), the default provider.
//!
//! llama.cpp's context borrows its model, so both live on one worker thread that owns them and
//! serves requests from a channel; the async side only sends a job and awaits the answer.
//! The worker keeps the tokens already in the KV cache: a new prompt that shares a prefix with
//! the previous one (the system prompt, the node's specification and dependency code are put
//! first for this reason) only evaluates what differs; what was reused is reported as
//! `Usage::cached_tokens`. Long prompts are decoded in batches.
//! The chat template is the one stored in the GGUF.
//!
//! Several candidates of one request are decoded together: the prompt is evaluated once on
//! the slot's first sequence, its cache is shared with the candidates' sequences, and each
//! step decodes one token of every live sequence in one batch. On a CPU a step of n
//! sequences costs much less than n steps of one (the weights are read once per step), which
//! is what makes asking for several candidates affordable.
//!
//! Requests of different nodes (`generate --jobs N`) are batched the same way (continuous
//! batching): the worker takes new jobs between decode steps, gives each an idle slot of the
//! cache, and every step carries the next token of every job's candidates plus a chunk of any
//! prompt still being evaluated. Each slot keeps its own cached prefix, so nodes that take
//! turns no longer evict each other's prompts. Floating-point sums depend on what shares a
//! batch, so greedy answers can differ with `--jobs`; with one job they do not.
//!
//! A sequence also drafts ([`super::draft`], prompt lookup; by default for fix rounds only,
//! `ZEROREPO_DRAFT` says otherwise): after the token it sampled, the batch carries the three
//! tokens its history suggests come next, each with logits. After the decode the sequence
//! samples from the logits of each position in turn, through its usual sampler and stop
//! conditions, and moves on while what it sampled is the drafted token already in the cache;
//! the first token that differs is the one fed next, and the rejected drafts are removed from
//! the sequence's cache. So the tokens, the text and the cache are those of one token at a
//! time, in fewer steps, greedy or sampled: for a sampled sequence this is the
//! speculative-sampling rule for a draft that is one token for sure (see `super::draft`).
//! Whether fewer steps of more tokens are faster depends on the machine and the role
//! ([`super::draft::DRAFT_TOKENS`]). The same caveat as above holds: a position's logits
//! computed among four rows may differ in the last bits from one row's, which could flip a
//! near tie; tests compare a real greedy answer, and a sampled one with its seed, both ways.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::kv_cache::KvCacheConversionError;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::{BatchAddError, LlamaBatch};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{
    ApplyChatTemplateError, ChatTemplateError, DecodeError, LlamaContextLoadError, LlamaCppError,
    LlamaModelLoadError, NewLlamaChatMessageError,
};

use super::draft::{DraftCounters, DraftCounts, DraftSetting, Drafting, MOST_DRAFT_TOKENS};
use super::placement::{Placement, SlotView, place};
use super::sequence::{Holds, Sequence, sampler};
use super::{LlmError, LlmProvider, LlmRequest, LlmResponse, Usage};

// The most one request may take of the cache (its prompt and all its answers) is
// `super::CONTEXT_TOKENS`.
use super::CONTEXT_TOKENS;
/// Requests decoded at once, each in its own slot of the cache.
const LANES: usize = 4;
/// The cache all slots share (about 28 KiB a token for the 1.5B model). Two requests at their
/// largest fit; smaller ones fit four, and a job waits while the cache is full.
const CACHE_TOKENS: usize = 2 * CONTEXT_TOKENS as usize;
const BATCH: usize = 512;
/// The most sequences of one request decoded together: the five diagnosis votes
/// (implementation candidates are at most 4); more are capped to this.
pub(crate) const MAX_SEQUENCES: u32 = 5;
// Every sequence's token and drafts fit one batch beside nothing else.
const _: () = assert!(LANES * MAX_SEQUENCES as usize * (1 + MOST_DRAFT_TOKENS) <= BATCH);

struct DecodeJob {
    request: LlmRequest,
    /// Candidates wanted.
    n: u32,
    reply: tokio::sync::oneshot::Sender<Vec<Result<LlmResponse, LlmError>>>,
}

/// The embedded model as a provider (built by `chain::from_spec("local")`; public so that the
/// tests and benches can choose [`Drafting`] and read its counters).
pub struct LocalProvider {
    jobs: mpsc::Sender<DecodeJob>,
    name: String,
    stats: Arc<Stats>,
}

/// What the model thread counts for the provider to read.
#[derive(Debug, Default)]
struct Stats {
    /// Decodes that carried tokens of more than one job (see [`LocalProvider::shared_decodes`]).
    shared_decodes: AtomicU64,
    /// How to draft; read when a job's candidates begin, so a change applies to the next job.
    drafting: DraftSetting,
    drafts: DraftCounters,
}

impl LocalProvider {
    /// Loads the model on a worker thread (a few seconds), drafting as `ZEROREPO_DRAFT` says.
    pub(crate) fn load(path: &Path) -> Result<LocalProvider, LlmError> {
        let drafting = Drafting::from_env().map_err(|e| permanent(e.to_string()))?;
        LocalProvider::load_with(path, drafting)
    }

    /// Loads the model on a worker thread (a few seconds) and returns once it is ready.
    /// llama.cpp is initialized once per process, so a process has one such provider.
    pub fn load_with(path: &Path, drafting: Drafting) -> Result<LocalProvider, LlmError> {
        let (jobs, incoming) = mpsc::channel::<DecodeJob>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LocalError>>();
        let model_path: PathBuf = path.to_path_buf();
        let stats = Arc::new(Stats::default());
        stats.drafting.set(drafting);
        let counters = Arc::clone(&stats);
        std::thread::Builder::new()
            .name("zerorepo-llm".into())
            .spawn(move || worker(&model_path, &ready_tx, &incoming, counters))
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
            stats,
        })
    }

    /// How many decode steps so far carried tokens of more than one request: the evidence
    /// that concurrent requests were batched together rather than taking turns.
    pub(crate) fn shared_decodes(&self) -> u64 {
        self.stats.shared_decodes.load(Ordering::Relaxed)
    }

    /// Drafts or not from the next request on (the tests and benches compare both ways in
    /// one process, which can load the model only once).
    pub fn set_drafting(&self, drafting: Drafting) {
        self.stats.drafting.set(drafting);
    }

    /// What drafting proposed and the model accepted so far, all requests together.
    pub fn draft_counts(&self) -> DraftCounts {
        self.stats.drafts.counts()
    }
}

impl Drop for LocalProvider {
    fn drop(&mut self) {
        let drafts = self.draft_counts();
        tracing::debug!(
            shared_decodes = self.shared_decodes(),
            verifications = drafts.verifications,
            proposed = drafts.proposed,
            accepted = drafts.accepted,
            "local model: decode steps that carried more than one request; drafts"
        );
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
    #[error("llama.cpp kept the rejected draft tokens of sequence {0} in its cache")]
    DraftKept(i32),
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
        let job = DecodeJob {
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
fn worker(
    path: &Path,
    ready: &mpsc::Sender<Result<(), LocalError>>,
    jobs: &mpsc::Receiver<DecodeJob>,
    stats: Arc<Stats>,
) {
    let (backend, model) = match load(path) {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    match ModelContext::open(&backend, &model, path, stats) {
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
///
/// The cache is shared by [`LANES`] slots. A slot owns [`MAX_SEQUENCES`] sequence ids; its
/// first keeps the tokens of the last prompt (and first answer) it served, so a request that
/// comes back to it only evaluates what changed. A job runs in the idle slot whose cache shares
/// the longest prefix with its prompt, which keeps a node's successive requests on one slot
/// while other nodes' requests use theirs.
struct ModelContext<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    slots: Vec<Slot>,
    /// Jobs tokenized and waiting for a slot or for room in the cache, oldest first.
    waiting: VecDeque<Pending>,
    /// Counts placements, so the least recently used slot is known.
    clock: u64,
    stats: Arc<Stats>,
}

/// One slot of the cache: what its first sequence holds, and the job it runs, if any.
#[derive(Default)]
struct Slot {
    /// The tokens whose keys and values the slot's first sequence holds, in order.
    cached: Vec<LlamaToken>,
    last_used: u64,
    lane: Option<Lane>,
}

/// A job with its prompt tokenized.
struct Pending {
    job: DecodeJob,
    /// Candidates (sequences) to decode: the job's, at most [`MAX_SEQUENCES`].
    n: u32,
    tokens: Vec<LlamaToken>,
    /// When it arrived: the wait for a slot or for room in the cache is logged.
    queued: Instant,
}

/// A job being served in a slot: its prompt being evaluated, then its candidates decoded.
struct Lane {
    pending: Pending,
    /// Prompt tokens found in the cache when the job was placed.
    reused: usize,
    /// Cells held for this job: its prompt and its answers at their longest.
    cells: usize,
    /// Prompt tokens evaluated so far (the reused ones included).
    evaluated: usize,
    /// Where in the current batch the prompt's last token is, once it has been added.
    prompt_logits: Option<i32>,
    /// Empty until the prompt has been evaluated.
    sequences: Vec<Sequence>,
    /// This job's drafts, logged with its call.
    drafts: DraftCounts,
    started: Instant,
}

impl Lane {
    fn done(&self) -> bool {
        !self.sequences.is_empty() && self.sequences.iter().all(|s| s.logits.is_none())
    }
}

/// The sequence id of candidate `k` in slot `slot`.
fn seq_id(slot: usize, k: u32) -> i32 {
    (slot as u32 * MAX_SEQUENCES + k) as i32
}

impl<'m> ModelContext<'m> {
    fn open(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        path: &Path,
        stats: Arc<Stats>,
    ) -> Result<ModelContext<'m>, LocalError> {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
        // One cache for all sequences: candidates share the prompt's entries, and a slot can
        // start from another slot's prefix. Attention skips the cells of other sequences.
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(CACHE_TOKENS as u32))
            .with_n_seq_max(LANES as u32 * MAX_SEQUENCES)
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
        Ok(ModelContext {
            model,
            ctx,
            template,
            slots: (0..LANES).map(|_| Slot::default()).collect(),
            waiting: VecDeque::new(),
            clock: 0,
            stats,
        })
    }

    /// Serves jobs until the provider is dropped: takes new jobs between decode steps, so a
    /// job that arrives while others are being decoded joins their batches at once.
    fn serve(&mut self, jobs: &mpsc::Receiver<DecodeJob>) {
        loop {
            if self.idle() {
                match jobs.recv() {
                    Ok(job) => self.take(job),
                    Err(_) => return,
                }
            }
            while let Ok(job) = jobs.try_recv() {
                self.take(job);
            }
            if let Err(e) = self.place_waiting().and_then(|()| self.step()) {
                self.fail_all(&e);
                continue;
            }
            self.finish_done();
        }
    }

    fn idle(&self) -> bool {
        self.waiting.is_empty() && self.slots.iter().all(|s| s.lane.is_none())
    }

    /// Tokenizes a new job and queues it; a prompt that cannot fit is answered at once.
    fn take(&mut self, job: DecodeJob) {
        let n = job.n.clamp(1, MAX_SEQUENCES);
        match self.prompt(&job.request, n) {
            Ok(tokens) => self.waiting.push_back(Pending {
                job,
                n,
                tokens,
                queued: Instant::now(),
            }),
            Err(e) => {
                let _ = job.reply.send(vec![Err(failed(e))]);
            }
        }
    }

    /// Places waiting jobs, oldest first, while a slot is idle and the cache has room.
    fn place_waiting(&mut self) -> Result<(), LocalError> {
        while let Some(next) = self.waiting.front() {
            let need = next.tokens.len() + (next.n * next.job.request.max_tokens) as usize;
            let views: Vec<SlotView> = self
                .slots
                .iter()
                .map(|s| SlotView {
                    shared: common_prefix(&s.cached, &next.tokens),
                    cells: s.lane.as_ref().map_or(s.cached.len(), |l| l.cells),
                    busy: s.lane.is_some(),
                    last_used: s.last_used,
                })
                .collect();
            let Placement::Slot { slot, evict } = place(&views, need, CACHE_TOKENS) else {
                return Ok(());
            };
            for other in evict {
                self.ctx
                    .clear_kv_cache_seq(Some(seq_id(other, 0) as u32), None, None)?;
                self.slots[other].cached.clear();
            }
            let Some(pending) = self.waiting.pop_front() else {
                return Ok(());
            };
            self.start(slot, pending, need)?;
        }
        Ok(())
    }

    /// Starts `pending` in `slot`: keeps the longest cached prefix of its prompt (the slot's
    /// own, or copied from another slot's) and drops the rest of the slot's cache.
    fn start(&mut self, slot: usize, pending: Pending, cells: usize) -> Result<(), LocalError> {
        let tokens = &pending.tokens;
        // At least the last token is evaluated again, since sampling needs its logits.
        let most = tokens.len() - 1;
        let own = common_prefix(&self.slots[slot].cached, tokens).min(most);
        let donor = (0..self.slots.len())
            .filter(|&s| s != slot)
            .map(|s| (s, common_prefix(&self.slots[s].cached, tokens).min(most)))
            .max_by_key(|&(_, shared)| shared)
            .filter(|&(_, shared)| shared > own);
        let base = seq_id(slot, 0) as u32;
        let keep = match donor {
            Some((from, shared)) => {
                self.ctx.clear_kv_cache_seq(Some(base), None, None)?;
                self.ctx.copy_kv_cache_seq(
                    seq_id(from, 0),
                    base as i32,
                    None,
                    Some(shared as u32),
                )?;
                self.slots[slot].cached = tokens[..shared].to_vec();
                shared
            }
            None => {
                self.ctx
                    .clear_kv_cache_seq(Some(base), Some(own as u32), None)?;
                self.slots[slot].cached.truncate(own);
                own
            }
        };
        self.clock += 1;
        let s = &mut self.slots[slot];
        s.last_used = self.clock;
        s.lane = Some(Lane {
            pending,
            reused: keep,
            cells,
            evaluated: keep,
            prompt_logits: None,
            sequences: Vec::new(),
            drafts: DraftCounts::default(),
            started: Instant::now(),
        });
        Ok(())
    }

    /// One decode: the next token of every live candidate of every job, then as much of the
    /// prompts still to evaluate as the batch holds.
    fn step(&mut self) -> Result<(), LocalError> {
        let mut batch = LlamaBatch::new(BATCH, 1);
        let mut fed_to_first: Vec<(usize, LlamaToken)> = Vec::new();
        let mut jobs_in_batch = self.feed_candidates(&mut batch, &mut fed_to_first)?;
        // Prompts last: their chunks take what room the candidates left.
        for (slot, s) in self.slots.iter_mut().enumerate() {
            let Some(lane) = s.lane.as_mut() else {
                continue;
            };
            let tokens = &lane.pending.tokens;
            let room = BATCH - batch.n_tokens() as usize;
            if lane.evaluated == tokens.len() || room == 0 {
                continue;
            }
            let end = tokens.len().min(lane.evaluated + room);
            for (pos, token) in tokens.iter().enumerate().take(end).skip(lane.evaluated) {
                let last = pos + 1 == tokens.len();
                if last {
                    lane.prompt_logits = Some(batch.n_tokens());
                }
                batch.add(*token, pos as i32, &[seq_id(slot, 0)], last)?;
            }
            s.cached.extend_from_slice(&tokens[lane.evaluated..end]);
            lane.evaluated = end;
            jobs_in_batch += 1;
        }
        if batch.n_tokens() == 0 {
            return Ok(());
        }
        self.ctx.decode(&mut batch)?;
        if jobs_in_batch > 1 {
            self.stats.shared_decodes.fetch_add(1, Ordering::Relaxed);
        }
        for (slot, token) in fed_to_first {
            self.slots[slot].cached.push(token);
        }
        self.begin_candidates()
    }

    /// Adds the next token of every live candidate to `batch`, with its drafts, if any, and
    /// notes those of first sequences in `fed_to_first`; returns how many jobs it added to.
    fn feed_candidates(
        &mut self,
        batch: &mut LlamaBatch,
        fed_to_first: &mut Vec<(usize, LlamaToken)>,
    ) -> Result<usize, LocalError> {
        let vocab = self.model.vocab();
        let mut jobs = 0;
        for (slot, s) in self.slots.iter_mut().enumerate() {
            let Slot { cached, lane, .. } = s;
            let Some(lane) = lane.as_mut() else {
                continue;
            };
            let before = batch.n_tokens();
            let request = &lane.pending.job.request;
            for (k, q) in lane.sequences.iter_mut().enumerate() {
                let seq = seq_id(slot, k as u32);
                let (start, drafted) = (q.position, q.drafted.len());
                let next = q.advance(&self.ctx, &vocab, request);
                let accepted = (q.position - start) as usize;
                if drafted > 0 {
                    self.stats.drafts.record(drafted, accepted);
                    lane.drafts.verifications += 1;
                    lane.drafts.proposed += drafted as u64;
                    lane.drafts.accepted += accepted as u64;
                }
                if accepted < drafted {
                    // The rejected drafts leave the cache, as if never fed.
                    let from = q.position as u32;
                    if !self
                        .ctx
                        .clear_kv_cache_seq(Some(seq as u32), Some(from), None)?
                    {
                        return Err(LocalError::DraftKept(seq));
                    }
                    if k == 0 {
                        cached.truncate(from as usize);
                    }
                }
                let Some(token) = next else {
                    continue;
                };
                let drafts = q.draft(request.max_tokens);
                q.logits = Some(batch.n_tokens());
                for (i, &t) in std::iter::once(&token).chain(&drafts).enumerate() {
                    batch.add(t, q.position + i as i32, &[seq], true)?;
                    if k == 0 {
                        fed_to_first.push((slot, t));
                    }
                }
                q.position += 1;
                q.drafted = drafts;
            }
            if batch.n_tokens() > before {
                jobs += 1;
            }
        }
        Ok(jobs)
    }

    /// For each job whose prompt was just evaluated: shares the prompt's cache with its other
    /// candidates' sequences and starts them all from the prompt's last logits.
    fn begin_candidates(&mut self) -> Result<(), LocalError> {
        let model = self.model;
        for slot in 0..self.slots.len() {
            let Some(lane) = self.slots[slot].lane.as_mut() else {
                continue;
            };
            let Some(first) = lane.prompt_logits.take() else {
                continue;
            };
            for k in 1..lane.pending.n {
                self.ctx
                    .copy_kv_cache_seq(seq_id(slot, 0), seq_id(slot, k), None, None)?;
            }
            let request = &lane.pending.job.request;
            let prompt = &lane.pending.tokens;
            // Greedy and sampled sequences alike: see the module doc.
            let draft_tokens = self.stats.drafting.get().tokens_for(request.role);
            lane.sequences = (0..lane.pending.n)
                .map(|i| {
                    let candidate = request.candidate(i);
                    Sequence {
                        sampler: sampler(model, &candidate),
                        text: request.prefill.clone().unwrap_or_default().into_bytes(),
                        generated: 0,
                        logits: Some(first),
                        position: prompt.len() as i32,
                        history: (draft_tokens > 0).then(|| prompt.clone()),
                        draft_tokens,
                        drafted: Vec::new(),
                        holds: Holds::of(&candidate),
                    }
                })
                .collect();
        }
        Ok(())
    }

    /// Answers every job whose candidates have all stopped, and frees their sequences; the
    /// slot keeps its first sequence's cache for the next job.
    fn finish_done(&mut self) {
        for slot in 0..self.slots.len() {
            let Some(n) = self.slots[slot]
                .lane
                .as_ref()
                .filter(|l| l.done())
                .map(|l| l.pending.n)
            else {
                continue;
            };
            let dropped = (1..n).try_for_each(|k| {
                self.ctx
                    .clear_kv_cache_seq(Some(seq_id(slot, k) as u32), None, None)
                    .map(drop)
            });
            if let Err(e) = dropped {
                // A candidate's entries could not be dropped, and emptying the cache takes
                // every other job's entries with it: all of them fail, this one included.
                self.fail_all(&e.into());
                return;
            }
            if let Some(lane) = self.slots[slot].lane.take() {
                answer(lane);
            }
        }
    }

    /// A decode failed: every job in flight gets the error, and the cache, which may hold half
    /// a batch, is emptied.
    fn fail_all(&mut self, error: &LocalError) {
        for slot in &mut self.slots {
            if let Some(lane) = slot.lane.take() {
                let _ = lane
                    .pending
                    .job
                    .reply
                    .send(vec![Err(permanent(error.to_string()))]);
            }
        }
        self.forget();
    }

    fn forget(&mut self) {
        for slot in &mut self.slots {
            slot.cached.clear();
        }
        self.ctx.clear_kv_cache();
    }

    /// The request through the GGUF's chat template and then its prefill, tokenized; refused
    /// when it leaves no room in one request's share of the cache for `n` answers.
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
}

/// Sends a finished job its candidates.
fn answer(lane: Lane) {
    let request = &lane.pending.job.request;
    let prompt_tokens = lane.pending.tokens.len();
    tracing::debug!(
        node = %request.node_id,
        role = request.role.as_str(),
        prompt_tokens,
        reused = lane.reused,
        candidates = lane.pending.n,
        generated = lane.sequences.iter().map(|s| s.generated).sum::<u64>(),
        seconds = lane.started.elapsed().as_secs_f64(),
        queued = lane.started.duration_since(lane.pending.queued).as_secs_f64(),
        draft_checks = lane.drafts.verifications,
        drafts_accepted = lane.drafts.accepted,
        "local model call"
    );
    // The prompt was evaluated once: its tokens count once, with the first candidate.
    let answers = lane
        .sequences
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(LlmResponse {
                text: String::from_utf8_lossy(&s.text).into_owned(),
                usage: Usage {
                    prompt_tokens: if i == 0 { prompt_tokens as u64 } else { 0 },
                    completion_tokens: s.generated,
                    cached_tokens: if i == 0 { lane.reused as u64 } else { 0 },
                },
            })
        })
        .collect();
    let _ = lane.pending.job.reply.send(answers);
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests;
