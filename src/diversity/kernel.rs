//! One query's diversity values, with ndeval's arithmetic step for step (`ndeval.c`
//! version 4.5: `computeDCG`, `computeERR`, `computeNRBP`, `computeSTRecall`,
//! `computePrecision`, `computeMAP`, `idealResult`, `renormalize`).
//!
//! A ranking is a list of documents, each `None` (not judged for the query) or the
//! ascending indices of the subtopics it is relevant to (empty: judged, relevant to
//! none). Both count as nothing: ndeval treats unjudged and non-relevant alike.

use std::collections::BinaryHeap;

/// The curves of one ranking, cut at `depth` (the largest cut-off asked for; ndeval's
/// `DEPTH` is 20): value `i` is the value at cut-off `i + 1`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Curves {
    /// alpha-DCG, normalized by the "ideal ideal" gains (ndeval's collection-independent
    /// normalization; the value at cut-off 1 is left unnormalized, as ndeval leaves it).
    pub(crate) dcg: Vec<f64>,
    /// ERR-IA, normalized the same way.
    pub(crate) err: Vec<f64>,
    /// Intent-aware precision.
    pub(crate) precision: Vec<f64>,
    /// Subtopic recall.
    pub(crate) strec: Vec<f64>,
    /// NRBP over the whole ranking.
    pub(crate) nrbp: f64,
    /// Intent-aware average precision over the whole ranking.
    pub(crate) map_ia: f64,
}

/// What the kernel needs of a query's judgments.
pub(crate) struct Judgments<'a> {
    /// Number of subtopic indices.
    pub(crate) subtopics: usize,
    /// For each subtopic, its number of relevant documents (ndeval's `nrelSub`).
    pub(crate) nrel_sub: &'a [u32],
}

impl Judgments<'_> {
    /// Subtopics with at least one relevant document (ndeval's `actualSubtopics`).
    pub(crate) fn actual(&self) -> usize {
        self.nrel_sub.iter().filter(|&&n| n > 0).count()
    }
}

/// ndeval's `discount`: 1 at the first rank, log(2) / log(i + 2) after.
fn discount(i: usize) -> f64 {
    if i == 0 {
        1.0
    } else {
        2f64.ln() / (i as f64 + 2.0).ln()
    }
}

/// The curves of `ranking` (see the module doc), the parameters `alpha` (redundancy
/// intolerance) and `beta` (patience).
pub(crate) fn curves<'a>(
    ranking: impl Iterator<Item = Option<&'a [u32]>>,
    judged: &Judgments<'_>,
    depth: usize,
    alpha: f64,
    beta: f64,
) -> Curves {
    let mut c = Curves {
        dcg: vec![0.0; depth],
        err: vec![0.0; depth],
        precision: vec![0.0; depth],
        strec: vec![0.0; depth],
        nrbp: 0.0,
        map_ia: 0.0,
    };
    let actual = judged.actual();
    if actual == 0 {
        return c;
    }
    let n = judged.subtopics;
    let mut gain = vec![1.0f64; n];
    let mut seen = vec![false; n];
    let mut sub_count = vec![0u64; n];
    let mut sub_total = vec![0.0f64; n];
    let (mut covered, mut pairs, mut decay) = (0usize, 0usize, 1.0f64);
    let mut ranked = 0usize;
    for (i, rel) in ranking.enumerate() {
        ranked = i + 1;
        let rel = rel.unwrap_or(&[]);
        let mut score = 0.0;
        for &j in rel {
            let j = j as usize;
            score += gain[j];
            gain[j] *= 1.0 - alpha;
            sub_count[j] += 1;
            sub_total[j] += sub_count[j] as f64 / (i + 1) as f64;
        }
        c.nrbp += score * decay;
        decay *= beta;
        if i < depth {
            c.dcg[i] = score * discount(i);
            c.err[i] = score / (i + 1) as f64;
            for &j in rel {
                if !seen[j as usize] {
                    seen[j as usize] = true;
                    covered += 1;
                }
            }
            pairs += rel.len();
            c.strec[i] = covered as f64 / actual as f64;
            c.precision[i] = pairs as f64 / ((i + 1) * actual) as f64;
        }
    }
    for i in ranked.min(depth)..depth {
        c.strec[i] = covered as f64 / actual as f64;
        c.precision[i] = pairs as f64 / ((i + 1) * actual) as f64;
    }
    // the "ideal ideal" gains: every subtopic covered at the first rank, then again
    let (mut ideal_dcg, mut ideal_err) = (vec![0.0; depth], vec![0.0; depth]);
    let mut g = actual as f64;
    for i in 0..depth {
        ideal_dcg[i] = g * discount(i);
        ideal_err[i] = g / (i + 1) as f64;
        g *= 1.0 - alpha;
    }
    for i in 1..depth {
        c.dcg[i] += c.dcg[i - 1];
        ideal_dcg[i] += ideal_dcg[i - 1];
        c.err[i] += c.err[i - 1];
        ideal_err[i] += ideal_err[i - 1];
    }
    for i in 1..depth {
        c.dcg[i] /= ideal_dcg[i];
        c.err[i] /= ideal_err[i];
    }
    c.nrbp *= (1.0 - (1.0 - alpha) * beta) / actual as f64;
    let mut map = 0.0;
    for (j, &nrel) in judged.nrel_sub.iter().enumerate() {
        if nrel > 0 {
            map += sub_total[j] / nrel as f64;
        }
    }
    c.map_ia = map / actual as f64;
    c
}

/// ndeval's greedy approximation of the ideal ranking (`idealResult`): at each rank
/// the document adding the most novelty-discounted gain, ties to the greater document
/// id. `docs` holds the relevant subtopics of each judged document in document id
/// order (ascending). Returns the indices of the documents that add gain, in ideal
/// order: the rest add nothing wherever they are placed.
///
/// ndeval rescans every document at every rank; here a heap keeps each document's
/// last known gain, an upper bound (gains only shrink), and a document is taken when
/// its recomputed gain is still the largest: the same choice in O(n log n) for the
/// usual few subtopics per document.
pub(crate) fn ideal_order(docs: &[&[u32]], subtopics: usize, alpha: f64) -> Vec<u32> {
    let mut gain = vec![1.0f64; subtopics];
    let score = |gain: &[f64], rel: &[u32]| -> f64 {
        let mut s = 0.0;
        for &j in rel {
            s += gain[j as usize];
        }
        s
    };
    // gains are sums of non-negative numbers: their bits order as their values
    let mut heap: BinaryHeap<(u64, u32)> = docs
        .iter()
        .enumerate()
        .filter(|(_, rel)| !rel.is_empty())
        .map(|(i, rel)| (score(&gain, rel).to_bits(), i as u32))
        .collect();
    let mut order = Vec::with_capacity(heap.len());
    while let Some((stored, i)) = heap.pop() {
        let rel = docs[i as usize];
        let now = score(&gain, rel);
        if now.to_bits() != stored {
            heap.push((now.to_bits(), i));
            continue;
        }
        if now == 0.0 {
            // (alpha = 1) the largest gain left is none: the rest add nothing
            break;
        }
        order.push(i);
        for &j in rel {
            gain[j as usize] *= 1.0 - alpha;
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(nrel: &[u32]) -> Judgments<'_> {
        Judgments {
            subtopics: nrel.len(),
            nrel_sub: nrel,
        }
    }

    /// ndeval's quadratic scan, for comparison with the heap.
    fn ideal_scan(docs: &[&[u32]], subtopics: usize, alpha: f64) -> Vec<u32> {
        let mut gain = vec![1.0f64; subtopics];
        let mut taken = vec![false; docs.len()];
        let mut out = Vec::new();
        for _ in 0..docs.len() {
            let mut best: Option<(f64, usize)> = None;
            for (i, rel) in docs.iter().enumerate() {
                if taken[i] {
                    continue;
                }
                let s: f64 = rel.iter().map(|&j| gain[j as usize]).sum();
                if best.is_none_or(|(b, _)| s >= b) {
                    best = Some((s, i));
                }
            }
            let Some((s, i)) = best else { break };
            taken[i] = true;
            if s > 0.0 {
                out.push(i as u32);
            }
            for &j in docs[i] {
                gain[j as usize] *= 1.0 - alpha;
            }
        }
        out
    }

    #[test]
    fn the_heap_picks_as_ndeval_scans() {
        // seeded: documents over 5 subtopics
        let mut rng = crate::testing::Lcg::new(7);
        for _ in 0..200 {
            let mut sets: Vec<Vec<u32>> = Vec::new();
            let n = 1 + rng.below(12) as usize;
            for _ in 0..n {
                let bits = rng.below(32) as u32;
                sets.push((0..5).filter(|j| bits >> j & 1 == 1).collect());
            }
            let docs: Vec<&[u32]> = sets.iter().map(|s| s.as_slice()).collect();
            for alpha in [0.0, 0.3, 0.5, 1.0] {
                assert_eq!(ideal_order(&docs, 5, alpha), ideal_scan(&docs, 5, alpha));
            }
        }
    }

    #[test]
    fn alpha_dcg_by_hand() {
        // two subtopics, each with one relevant document; the run finds subtopic 0 at
        // rank 1, then an unjudged document, then a document relevant to both
        let nrel = [2, 1];
        let both: &[u32] = &[0, 1];
        let run = [Some(&[0u32][..]), None, Some(both)];
        let c = curves(run.into_iter(), &judged(&nrel), 3, 0.5, 0.5);
        let d2 = 2f64.ln() / 3f64.ln();
        let d3 = 2f64.ln() / 4f64.ln();
        // gains 1, 0, 0.5 + 1; ideal ideal gains 2, 1, 0.5
        assert_eq!(c.dcg[0], 1.0);
        let want = (1.0 + 1.5 * d3) / (2.0 + d2 + 0.5 * d3);
        assert!((c.dcg[2] - want).abs() < 1e-15);
        assert_eq!(c.strec, vec![0.5, 0.5, 1.0]);
        assert_eq!(c.precision[2], 3.0 / 6.0);
        // AP-IA: subtopic 0 at ranks 1 and 3 (2 relevant), subtopic 1 at rank 3
        let want = ((1.0 + 2.0 / 3.0) / 2.0 + (1.0 / 3.0) / 1.0) / 2.0;
        assert!((c.map_ia - want).abs() < 1e-15);
        // NRBP: (1 + 0 + 1.5 * 0.25) * (1 - 0.5 * 0.5) / 2
        assert!((c.nrbp - 1.375 * 0.75 / 2.0).abs() < 1e-15);
    }

    #[test]
    fn no_relevant_subtopic_gives_zeros() {
        let c = curves([Some(&[][..])].into_iter(), &judged(&[0, 0]), 2, 0.5, 0.5);
        assert_eq!(
            c,
            Curves {
                dcg: vec![0.0; 2],
                err: vec![0.0; 2],
                precision: vec![0.0; 2],
                strec: vec![0.0; 2],
                nrbp: 0.0,
                map_ia: 0.0,
            }
        );
    }
}
