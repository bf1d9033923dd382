//! The sentence embedder (all-MiniLM-L6-v2, int8 ONNX, via fastembed and a dynamically
//! loaded ONNX Runtime) and the on-disk cache of the vectors it produced.
//!
//! Loading never panics on a missing runtime: fastembed/ort would abort the process when the
//! shared library cannot be opened, so every file is checked first and the library is opened
//! through `ort::init_from`, which reports failure as an error. Callers fall back to lexical
//! search on any error here.
//!
//! The cache lives in `~/.cache/zerorepo/embeddings/<model>.bin` (under `$XDG_CACHE_HOME` when
//! set): outside the generated repository, so searching never writes into it, and shared by
//! every output directory, since identical descriptions give identical vectors. Records are
//! keyed by the sha256 of the embedded text and appended; a torn last record (a crash while
//! appending) is ignored when reading.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::LocalizeError;
use super::vector::normalize;
use crate::llm::model;

/// Output width of all-MiniLM-L6-v2.
pub const DIM: usize = 384;
/// Token limit per text: node descriptions are short; longer ones are cut, not rejected.
const MAX_TOKENS: usize = 256;

pub struct Embedder {
    model: fastembed::TextEmbedding,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Embedder(all-minilm-l6-v2-int8)")
    }
}

fn embedder_err(what: impl std::fmt::Display) -> LocalizeError {
    LocalizeError::Embedder(what.to_string())
}

impl Embedder {
    /// Loads the model from `dir` (see [`model::embedder_dir`]). The ONNX Runtime library is
    /// `$ORT_DYLIB_PATH` when set, else the one `zerorepo model pull embedder` put in `dir`.
    pub fn load(dir: &Path) -> Result<Embedder, LocalizeError> {
        let missing = model::embedder_missing(dir);
        let library = match std::env::var_os("ORT_DYLIB_PATH") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => dir.join(model::ORT_LIBRARY),
        };
        if !missing.is_empty() || !library.is_file() {
            let mut names: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
            if !library.is_file() && !names.iter().any(|n| n == model::ORT_LIBRARY) {
                names.push(library.display().to_string());
            }
            return Err(LocalizeError::EmbedderMissing {
                dir: dir.to_path_buf(),
                missing: names.join(", "),
            });
        }
        // Opens the library now, as an error we can handle, instead of the panic ort raises
        // when it loads the library lazily and fails. The builder is not needed: sessions
        // create the default environment themselves.
        let _builder = ort::init_from(&library).map_err(embedder_err)?;
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| LocalizeError::Io { path, source })
        };
        let tokenizer = fastembed::TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read("config.json")?,
            special_tokens_map_file: read("special_tokens_map.json")?,
            tokenizer_config_file: read("tokenizer_config.json")?,
        };
        let user_model = fastembed::UserDefinedEmbeddingModel::new(read("model.onnx")?, tokenizer)
            .with_pooling(fastembed::Pooling::Mean);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let options = fastembed::InitOptionsUserDefined::new()
            .with_max_length(MAX_TOKENS)
            .with_intra_threads(threads);
        let model = fastembed::TextEmbedding::try_new_from_user_defined(user_model, options)
            .map_err(embedder_err)?;
        Ok(Embedder { model })
    }

    /// Unit vectors, one per text. Texts are embedded one at a time: the int8 model quantises
    /// activations per batch, so a text's vector would otherwise depend on its batch-mates and
    /// padding, and the cache (keyed by text) would hold vectors that differ run to run.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LocalizeError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for text in texts {
            let mut out = self.model.embed([*text], Some(1)).map_err(embedder_err)?;
            let mut v = out.pop().unwrap_or_default();
            v.resize(DIM, 0.0);
            normalize(&mut v);
            vectors.push(v);
        }
        Ok(vectors)
    }
}

const MAGIC: &[u8; 8] = b"ZREMB001";
const HEADER: usize = 12;
const RECORD: usize = 32 + DIM * 4;

/// Vectors already computed, keyed by the sha256 of their text.
#[derive(Debug, Default)]
pub(crate) struct EmbeddingCache {
    path: Option<PathBuf>,
    vectors: HashMap<[u8; 32], Vec<f32>>,
}

/// `~/.cache/zerorepo/embeddings` (under `$XDG_CACHE_HOME` when set).
pub(crate) fn default_cache_dir() -> PathBuf {
    model::cache_home().join("embeddings")
}

pub(crate) fn text_key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl EmbeddingCache {
    /// A cache that keeps nothing on disk.
    pub(crate) fn in_memory() -> EmbeddingCache {
        EmbeddingCache::default()
    }

    /// Opens `dir/<model>.bin`. An unreadable or foreign file is treated as empty (and
    /// replaced on the next write): the cache only saves time.
    pub fn open(dir: &Path) -> EmbeddingCache {
        let path = dir.join(format!("{}.bin", model::EMBEDDER.name));
        let mut vectors = HashMap::new();
        if let Ok(bytes) = std::fs::read(&path) {
            let header_ok = bytes.len() >= HEADER
                && &bytes[..8] == MAGIC
                && bytes[8..12] == (DIM as u32).to_le_bytes();
            if header_ok {
                for record in bytes[HEADER..].chunks_exact(RECORD) {
                    let mut key = [0u8; 32];
                    key.copy_from_slice(&record[..32]);
                    let v = record[32..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    vectors.insert(key, v);
                }
            }
        }
        EmbeddingCache {
            path: Some(path),
            vectors,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.vectors.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    pub fn get(&self, text: &str) -> Option<&Vec<f32>> {
        self.vectors.get(&text_key(text))
    }

    /// Adds vectors and appends them to the file. A failed write is reported, never fatal.
    pub(crate) fn insert_all(
        &mut self,
        items: Vec<(String, Vec<f32>)>,
    ) -> Result<(), LocalizeError> {
        let mut bytes = Vec::with_capacity(items.len() * RECORD);
        for (text, vector) in items {
            let key = text_key(&text);
            bytes.extend_from_slice(&key);
            for i in 0..DIM {
                bytes.extend_from_slice(&vector.get(i).copied().unwrap_or(0.0).to_le_bytes());
            }
            self.vectors.insert(key, vector);
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        if bytes.is_empty() {
            return Ok(());
        }
        let io = |source| LocalizeError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let valid_header = std::fs::read(path)
            .ok()
            .is_some_and(|b| b.len() >= HEADER && &b[..8] == MAGIC);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if !valid_header {
            file.set_len(0).map_err(io)?;
            let mut header = MAGIC.to_vec();
            header.extend_from_slice(&(DIM as u32).to_le_bytes());
            file.write_all(&header).map_err(io)?;
        } else {
            // Cut a torn record left by a crash, so the new records stay aligned.
            let len = file.metadata().map_err(io)?.len();
            let aligned = HEADER as u64 + (len - HEADER as u64) / RECORD as u64 * RECORD as u64;
            if aligned != len {
                file.set_len(aligned).map_err(io)?;
            }
        }
        file.write_all(&bytes).map_err(io)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_tail_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(dir.path());
        assert!(cache.is_empty());
        let v: Vec<f32> = (0..DIM).map(|i| i as f32).collect();
        cache
            .insert_all(vec![
                ("mean".into(), v.clone()),
                ("median".into(), vec![1.0; DIM]),
            ])
            .unwrap();
        let path = dir.path().join(format!("{}.bin", model::EMBEDDER.name));
        // A crash while appending leaves half a record.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(&[7u8; 100]).unwrap();
        drop(file);
        let mut reopened = EmbeddingCache::open(dir.path());
        assert_eq!(reopened.len(), 2);
        assert_eq!(reopened.get("mean"), Some(&v));
        reopened
            .insert_all(vec![("mode".into(), vec![2.0; DIM])])
            .unwrap();
        let again = EmbeddingCache::open(dir.path());
        assert_eq!(again.len(), 3, "the torn record was cut before appending");
        assert_eq!(again.get("mode"), Some(&vec![2.0; DIM]));
    }

    #[test]
    fn a_missing_model_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let err = Embedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("model.onnx"), "{err}");
        assert!(err.contains("zerorepo model pull embedder"), "{err}");
    }
}
