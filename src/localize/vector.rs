//! Brute-force cosine search over unit vectors in one flat `f32` buffer, and the top-k
//! selection both rankings share. Pure.
//!
//! At RPG sizes (tens to tens of thousands of nodes, 384 dimensions) a linear scan is a few
//! million multiply-adds: about a millisecond, with no approximate index to build or tune.

/// Rows of `dim` floats, each scaled to unit length so a dot product is the cosine.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    dim: usize,
    data: Vec<f32>,
}

/// Scales `v` to unit length in place (a zero vector stays zero and matches nothing).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

impl VectorIndex {
    pub fn new(dim: usize) -> VectorIndex {
        VectorIndex {
            dim,
            data: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Appends a row (normalised here). A row of the wrong length is padded or cut, which
    /// only happens if the model changed under a cache, and then ranks badly instead of
    /// shifting every later row.
    pub fn push(&mut self, vector: &[f32]) {
        let start = self.data.len();
        self.data.extend(
            vector
                .iter()
                .copied()
                .chain(std::iter::repeat(0.0))
                .take(self.dim),
        );
        normalize(&mut self.data[start..]);
    }

    /// The `k` rows most similar to `query` among those `keep` accepts, best first.
    pub(crate) fn top_k(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        let mut q = query.to_vec();
        q.resize(self.dim, 0.0);
        normalize(&mut q);
        let scores = self
            .data
            .chunks_exact(self.dim.max(1))
            .enumerate()
            .filter(|(row, _)| keep(*row))
            .map(|(row, v)| (row, dot(v, &q)));
        top_k(scores, k)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent accumulators let the compiler vectorise the loop.
    let mut acc = [0.0f32; 8];
    let chunks = a.len() / 8 * 8;
    for (x, y) in a[..chunks].chunks_exact(8).zip(b[..chunks].chunks_exact(8)) {
        for ((sum, x), y) in acc.iter_mut().zip(x).zip(y) {
            *sum += x * y;
        }
    }
    let tail: f32 = a[chunks..]
        .iter()
        .zip(&b[chunks..])
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// The `k` best `(item, score)` pairs, highest score first, ties by smaller item, so the same
/// input always gives the same order. Linear in the number of scores for small `k`.
pub(crate) fn top_k(scores: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    let mut best: Vec<(usize, f32)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return best;
    }
    let better = |a: &(usize, f32), b: &(usize, f32)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
    for item in scores {
        if best.len() == k && !better(&item, &best[k - 1]) {
            continue;
        }
        let at = best.partition_point(|held| better(held, &item));
        best.insert(at, item);
        best.truncate(k);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_keeps_the_best_in_order_and_breaks_ties_by_item() {
        let scores = [0.1, 0.9, 0.5, 0.9, 0.3].into_iter().enumerate();
        assert_eq!(top_k(scores, 3), [(1, 0.9), (3, 0.9), (2, 0.5)]);
        assert!(top_k([(0, 1.0)].into_iter(), 0).is_empty());
    }

    #[test]
    fn cosine_ranks_by_direction_not_length_and_honours_the_filter() {
        let mut index = VectorIndex::new(3);
        index.push(&[10.0, 0.0, 0.0]);
        index.push(&[0.0, 1.0, 0.0]);
        index.push(&[1.0, 1.0, 0.0]);
        assert_eq!(index.len(), 3);
        let hits = index.top_k(&[2.0, 0.1, 0.0], 2, |_| true);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 2]);
        assert!((hits[0].1 - 0.99875).abs() < 1e-3, "{hits:?}");
        let hits = index.top_k(&[2.0, 0.1, 0.0], 2, |row| row != 0);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn dot_handles_lengths_that_are_not_multiples_of_eight() {
        let a: Vec<f32> = (0..11).map(|i| i as f32).collect();
        let expected: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expected);
    }
}
