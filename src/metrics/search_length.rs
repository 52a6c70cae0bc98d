//! Cooper's search length ("Expected search length", American Documentation 19(1),
//! 1968): the number of non-relevant documents a user examines before finding the k
//! relevant ones wanted. The lecture notes' "search length = rank of the answer" is
//! `sl@1 + 1` on a ranking whose first relevant document is the answer.
//!
//! * sl@k: on the ranking (trec_eval's order, ties broken by document id).
//! * esl@k: Cooper's expected search length of a weak ordering: documents of equal run
//!   score form one level, examined in random order. With j non-relevant documents in
//!   the levels before the one where the k-th relevant document lies, and r relevant
//!   and i non-relevant documents in that level, s of which are still wanted:
//!   ESL = j + i s / (r + 1).
//!
//! When fewer than k relevant documents are retrieved, the user examines the whole
//! ranking: both give the number of non-relevant documents retrieved. Documents not in
//! the qrels (or with a negative label) are non-relevant.

use super::QueryCtx;

/// Search length at each wanted number of relevant documents k.
pub(super) fn search_length(c: &QueryCtx, wanted: &[u64], out: &mut [f64]) {
    let total_nonrel = c.rels.len() as u64 - c.num_rel_ret;
    for (o, &k) in out.iter_mut().zip(wanted) {
        let (mut found, mut nonrel) = (0u64, 0u64);
        let mut value = total_nonrel;
        for i in 0..c.num_ret() {
            if c.is_rel(i) {
                found += 1;
                if found == k {
                    value = nonrel;
                    break;
                }
            } else {
                nonrel += 1;
            }
        }
        *o = value as f64;
    }
}

/// Expected search length at each k, levels being runs of equal scores.
pub(super) fn expected_search_length(c: &QueryCtx, wanted: &[u64], out: &mut [f64]) {
    // (relevant, non-relevant) per level, best first
    let mut levels: Vec<(u64, u64)> = Vec::new();
    for i in 0..c.num_ret() {
        let rel = u64::from(c.is_rel(i));
        match levels.last_mut() {
            Some(l) if c.scores[i] == c.scores[i - 1] => {
                l.0 += rel;
                l.1 += 1 - rel;
            }
            _ => levels.push((rel, 1 - rel)),
        }
    }
    let total_nonrel: u64 = levels.iter().map(|l| l.1).sum();
    for (o, &k) in out.iter_mut().zip(wanted) {
        let (mut need, mut before) = (k, 0u64);
        let mut value = total_nonrel as f64;
        for &(r, i) in &levels {
            if r >= need {
                value = before as f64 + (i * need) as f64 / (r + 1) as f64;
                break;
            }
            need -= r;
            before += i;
        }
        *o = value;
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::{eval, eval_scored};

    #[test]
    fn search_length_by_hand() {
        // N R N N R: one non-relevant before the first relevant, three before the second
        let rels = [0, 1, -1, 0, 2];
        assert_eq!(eval("sl.1,2,3", &rels, &[1, 2, 0, 0]), [1.0, 3.0, 3.0]);
        assert_eq!(eval("SL@2", &rels, &[1, 2, 0, 0]), [3.0]);
        assert_eq!(eval("sl", &[1], &[1]), [0.0]);
    }

    /// Cooper's formula against the average over every order of each level.
    #[test]
    fn expected_search_length_by_enumeration() {
        // levels: {N, R, N} at 3.0, {R, N} at 2.0, {N} at 1.0
        let r = [(3.0, 0), (3.0, 1), (3.0, 0), (2.0, 1), (2.0, 0), (1.0, 0)];
        // k = 1: first level, r = 1, i = 2, s = 1: 2/2 = 1 (orders NNR, NRN, RNN...
        // the relevant document's place is uniform over 3 spots: 0, 1, 2 -> mean 1)
        assert_eq!(eval_scored("esl@1", &r, &[]), [1.0]);
        // k = 2: two non-relevant before, then level {R, N}: 2 + 1/2
        assert_eq!(eval_scored("ESL@2", &r, &[]), [2.5]);
        // k = 3: fewer relevant retrieved: every non-relevant document, 4
        assert_eq!(eval_scored("esl@3", &r, &[]), [4.0]);
        // no ties: ESL is SL
        let r = [(3.0, 0), (2.0, 1), (1.0, 0)];
        assert_eq!(eval_scored("esl@1", &r, &[]), eval_scored("sl@1", &r, &[]));
    }
}
