//! Okapi BM25 over term lists: the lexical ranking used when the embedder is absent. Pure.
//!
//! Postings are kept per term, so a query touches only the documents that share a term with
//! it; scoring 10,000 short descriptions takes microseconds.

use std::collections::HashMap;

/// Term-frequency saturation: the usual value, so a tenth `mean` adds little over the second.
const K1: f32 = 1.2;
/// Length normalisation: a long docstring is not favoured for mentioning more words.
const B: f32 = 0.75;

#[derive(Debug, Clone, Default)]
pub(crate) struct Bm25 {
    /// term → (document, term frequency), documents ascending.
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    average_length: f32,
}

impl Bm25 {
    /// Indexes documents given as term lists (repeat a term to weight it).
    pub fn build(documents: &[Vec<String>]) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(documents.len());
        for (doc, terms) in documents.iter().enumerate() {
            lengths.push(terms.len() as u32);
            let mut counts: HashMap<&str, u32> = HashMap::new();
            for term in terms {
                *counts.entry(term.as_str()).or_default() += 1;
            }
            for (term, count) in counts {
                postings
                    .entry(term.to_string())
                    .or_default()
                    .push((doc as u32, count));
            }
        }
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            total as f32 / lengths.len() as f32
        };
        Bm25 {
            postings,
            lengths,
            average_length,
        }
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// BM25 score of every document (0 for documents sharing no term with the query).
    /// Repeated query terms count once.
    pub(crate) fn scores(&self, query_terms: &[String]) -> Vec<f32> {
        let mut scores = vec![0.0f32; self.lengths.len()];
        let n = self.lengths.len() as f32;
        let mut seen: Vec<&str> = Vec::new();
        for term in query_terms {
            if seen.contains(&term.as_str()) {
                continue;
            }
            seen.push(term);
            let Some(posting) = self.postings.get(term) else {
                continue;
            };
            let df = posting.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in posting {
                let tf = tf as f32;
                let length = self.lengths[doc as usize] as f32;
                let norm = K1 * (1.0 - B + B * length / self.average_length.max(1.0));
                scores[doc as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        scores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(texts: &[&str]) -> Vec<Vec<String>> {
        texts
            .iter()
            .map(|t| t.split(' ').map(String::from).collect())
            .collect()
    }

    #[test]
    fn rare_terms_outweigh_common_ones() {
        let index = Bm25::build(&docs(&[
            "calculat mean number",
            "calculat median number",
            "calculat varianc number",
        ]));
        let scores = index.scores(&["calculat".into(), "mean".into()]);
        assert!(scores[0] > scores[1], "{scores:?}");
        assert_eq!(scores[1], scores[2], "only the shared term scores");
        assert!(scores[1] > 0.0);
    }

    #[test]
    fn documents_without_query_terms_score_zero_and_repeats_count_once() {
        let index = Bm25::build(&docs(&["parse csv", "mean mean mean"]));
        assert_eq!(index.scores(&["json".into()]), [0.0, 0.0]);
        assert_eq!(
            index.scores(&["mean".into()]),
            index.scores(&["mean".into(), "mean".into()])
        );
    }

    #[test]
    fn shorter_documents_win_at_equal_term_frequency() {
        let index = Bm25::build(&docs(&[
            "mean",
            "mean with many other words in a long docstring",
        ]));
        let scores = index.scores(&["mean".into()]);
        assert!(scores[0] > scores[1], "{scores:?}");
    }

    #[test]
    fn an_empty_index_scores_nothing() {
        let index = Bm25::build(&[]);
        assert!(index.is_empty());
        assert!(index.scores(&["mean".into()]).is_empty());
    }
}
