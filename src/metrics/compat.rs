//! Compatibility (Clarke, Vtyurina and Smucker, "Assessing top-k preferences", TOIS
//! 2021), as ir_measures' `Compat(p, normalize)` computes it: the rank-biased overlap of
//! the ranking with an ideal ranking, truncated at depth max(|ranking|, |ideal|),
//!
//!   RBO = sum_{d=1}^{depth} p^(d-1) |ranking[..d] ∩ ideal[..d]| / d  /  sum_{d=1}^{depth} p^(d-1),
//!
//! divided (`normalize`) by the same quantity of the ideal ranking with itself when
//! that is positive. The ideal ranking holds the relevant documents of the qrels,
//! by label descending, then by run score descending (0 for a document the run did
//! not retrieve), then in qrels order. The ranking orders ties by document id
//! *ascending* (ir_measures' `sort()` then stable sort by score), not trec_eval's
//! descending: the kernel reverses each run of tied scores.

use super::{QueryCtx, NOT_JUDGED};
use crate::correlation::overlaps_dense;
use std::cmp::Ordering;

/// Compat of one query (0 for an empty ranking with no relevant document, where
/// ir_measures divides 0 by 0).
pub(super) fn compat(c: &QueryCtx, p: f64, normalize: bool) -> f64 {
    let (n, labels) = (c.rels.len(), c.labels);
    // identity of a document: its place in the qrels, or after them its rank
    let key = |i: usize| match c.qrels_pos[i] {
        NOT_JUDGED => labels.len() + i,
        j => j as usize,
    };
    let mut ranking: Vec<usize> = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && c.scores[j] == c.scores[i] {
            j += 1;
        }
        ranking.extend((i..j).rev().map(key));
        i = j;
    }
    let mut score_of = vec![0.0; labels.len()];
    for (i, &j) in c.qrels_pos.iter().enumerate() {
        if j != NOT_JUDGED {
            score_of[j as usize] = c.scores[i];
        }
    }
    let mut ideal: Vec<usize> = (0..labels.len())
        // ir_measures: label > 0; a relevance level above 1 raises the bar
        .filter(|&j| labels[j] >= c.rel_level.max(1))
        .collect();
    // stable: equal (label, score) keep the qrels order
    ideal.sort_by(|&a, &b| {
        labels[b].cmp(&labels[a]).then(
            score_of[b]
                .partial_cmp(&score_of[a])
                .unwrap_or(Ordering::Equal),
        )
    });
    let depth = n.max(ideal.len());
    if depth == 0 {
        return 0.0;
    }
    let x = overlaps_dense(&ranking, &ideal);
    let score = truncated_rbo(&x, depth, p);
    if normalize {
        let best = truncated_rbo(
            &(0..=depth).map(|d| d.min(ideal.len())).collect::<Vec<_>>(),
            depth,
            p,
        );
        if best > 0.0 {
            return score / best;
        }
    }
    score
}

/// ir_measures' `rbo`: sum over depths d = 1..depth of p^(d-1) x[d] / d, divided by the
/// sum of the weights (its order of operations). `x` has depth + 1 entries, or fewer
/// when the overlap stopped growing (its last value then holds).
fn truncated_rbo(x: &[usize], depth: usize, p: f64) -> f64 {
    let (mut score, mut normalizer, mut weight) = (0.0, 0.0, 1.0);
    for d in 1..=depth {
        let xd = x[d.min(x.len() - 1)] as f64;
        score += weight * xd / d as f64;
        normalizer += weight;
        weight *= p;
    }
    score / normalizer
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval_scored;
    use crate::metrics::NONPOOL;

    /// RBO by its definition, on two explicit lists of ids, to the given depth.
    fn rbo_def(r: &[&str], ideal: &[&str], p: f64, depth: usize) -> f64 {
        let (mut s, mut z) = (0.0, 0.0);
        for d in 1..=depth {
            let a: std::collections::HashSet<_> = r.iter().take(d).collect();
            let b: std::collections::HashSet<_> = ideal.iter().take(d).collect();
            let w = p.powi(d as i32 - 1);
            s += w * a.intersection(&b).count() as f64 / d as f64;
            z += w;
        }
        s / z
    }

    #[test]
    fn compat_by_its_definition() {
        // ranking a(0), b(2), x(unjudged), c(1); unretrieved relevant e(1)
        // ideal: b (label 2), then c (score 0.5) and e (score 0): b, c, e
        let ranked = [(0.9, 0), (0.8, 2), (0.7, NONPOOL), (0.5, 1)];
        let want = rbo_def(&["a", "b", "x", "c"], &["b", "c", "e"], 0.8, 4);
        let v = eval_scored("Compat(p=0.8,normalize=False)", &ranked, &[1])[0];
        assert!((v - want).abs() < 1e-15, "{v} {want}");
        // the ideal's own overlap, to the same depth (the longer of the two lists)
        let best = rbo_def(&["b", "c", "e"], &["b", "c", "e"], 0.8, 4);
        let v = eval_scored("Compat(p=0.8)", &ranked, &[1])[0];
        assert!((v - want / best).abs() < 1e-15, "{v}");
        // the ideal ranking itself scores 1; no relevant document: 0
        let ideal = [(3.0, 2), (2.0, 1), (1.0, 1)];
        assert!((eval_scored("compat", &ideal, &[])[0] - 1.0).abs() < 1e-15);
        assert_eq!(eval_scored("compat", &[(1.0, 0)], &[0])[0], 0.0);
        assert_eq!(eval_scored("compat", &[], &[0])[0], 0.0);
    }

    #[test]
    fn tied_scores_rank_by_id_ascending() {
        // two tied documents: trec order puts the later id first; Compat the earlier.
        // Here the ranked order given is trec's (ids "b" then "a", tied): Compat
        // reads a, b. With a relevant and b not: ideal [a] matches at depth 1.
        let v = eval_scored("Compat(normalize=False,p=0.5)", &[(1.0, 0), (1.0, 1)], &[])[0];
        let want = rbo_def(&["a", "b"], &["a"], 0.5, 2);
        assert!((v - want).abs() < 1e-15, "{v} {want}");
    }
}
