//! Rank correlation: between two score vectors (Kendall's tau-b, Spearman's rho),
//! between two ranked lists (normalized Kendall tau distance over the top k,
//! rank-biased overlap), and between two runs query by query. Used for
//! meta-evaluation too: the correlation of system orderings under two measures is
//! the tau or rho of the systems' two score vectors.

use std::collections::HashMap;
use std::hash::Hash;

use crate::error::{Error, Result};
use crate::run::Run;

fn same_len(x: &[f64], y: &[f64]) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::Input(format!(
            "the two score lists differ in length ({} and {})",
            x.len(),
            y.len()
        )));
    }
    Ok(())
}

/// Whether either list holds a NaN: the correlation is then NaN, as scipy's default
/// (`nan_policy="propagate"`) gives, not a number from an arbitrary order of NaNs.
fn has_nan(x: &[f64], y: &[f64]) -> bool {
    x.iter().chain(y).any(|v| v.is_nan())
}

/// Kendall's tau-b (ties in either variable corrected as in scipy's `kendalltau`):
/// (C - D) / sqrt((n0 - n1)(n0 - n2)). NaN when either list is constant or shorter
/// than 2. O(n log n) ([`kendall_tau_test`]).
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Result<f64> {
    Ok(kendall_tau_test(x, y)?.0)
}

/// Pair counts of Knight's algorithm.
struct KendallCounts {
    n: u64,
    /// Discordant pairs.
    dis: u64,
    /// Pairs tied in x, in y, in both.
    xtie: u64,
    ytie: u64,
    ntie: u64,
    /// Sums over tie groups of t(t-1)(t-2) and t(t-1)(2t+5), for the variance.
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

/// Tie statistics of sorted values: (pairs tied, sum t(t-1)(t-2), sum t(t-1)(2t+5)).
fn tie_counts(sorted: &[f64]) -> (u64, f64, f64) {
    let (mut pairs, mut a, mut b) = (0u64, 0.0, 0.0);
    for g in sorted.chunk_by(|p, q| p.total_cmp(q).is_eq()) {
        let t = g.len() as u64;
        if t > 1 {
            let tf = t as f64;
            pairs += t * (t - 1) / 2;
            a += tf * (tf - 1.0) * (tf - 2.0);
            b += tf * (tf - 1.0) * (2.0 * tf + 5.0);
        }
    }
    (pairs, a, b)
}

/// Count inversions (pairs i < j with v[i] > v[j]) by merge sort, sorting `v`.
fn inversions(v: &mut [f64], buf: &mut Vec<f64>) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut count = inversions(&mut v[..mid], buf) + inversions(&mut v[mid..], buf);
    buf.clear();
    let (mut i, mut j) = (0, mid);
    while i < mid && j < n {
        if v[j].total_cmp(&v[i]).is_lt() {
            count += (mid - i) as u64;
            buf.push(v[j]);
            j += 1;
        } else {
            buf.push(v[i]);
            i += 1;
        }
    }
    buf.extend_from_slice(&v[i..mid]);
    buf.extend_from_slice(&v[j..n]);
    v.copy_from_slice(buf);
    count
}

/// Knight's O(n log n) counts: sort by (x, y), count ties, then the discordant pairs
/// are the inversions of y in that order.
fn kendall_counts(x: &[f64], y: &[f64]) -> KendallCounts {
    let n = x.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(y[a].total_cmp(&y[b])));
    let xs: Vec<f64> = idx.iter().map(|&i| x[i]).collect();
    let mut ys: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    let mut ntie = 0u64;
    let mut start = 0;
    for k in 1..=n {
        if k == n || !(xs[k].total_cmp(&xs[start]).is_eq() && ys[k].total_cmp(&ys[start]).is_eq()) {
            let t = (k - start) as u64;
            ntie += t * t.saturating_sub(1) / 2;
            start = k;
        }
    }
    let (xtie, x0, x1) = tie_counts(&xs);
    let mut buf = Vec::with_capacity(n);
    let dis = inversions(&mut ys, &mut buf);
    let (ytie, y0, y1) = tie_counts(&ys);
    KendallCounts {
        n: n as u64,
        dis,
        xtie,
        ytie,
        ntie,
        x0,
        x1,
        y0,
        y1,
    }
}

/// Kendall's tau-b with its two-sided p-value and how the p-value was had, as
/// `scipy.stats.kendalltau(x, y)` with its default `method="auto"`: `"exact"` (the
/// distribution of inversions of a random permutation) without ties for n <= 33 or
/// when at most one pair is discordant (or concordant), else `"asymptotic"` (the normal
/// approximation with the tie-corrected variance). NaN (and NaN p-value) when either list
/// is constant, shorter than 2, or holds NaN.
pub fn kendall_tau_test(x: &[f64], y: &[f64]) -> Result<(f64, f64, &'static str)> {
    same_len(x, y)?;
    if has_nan(x, y) {
        return Ok((f64::NAN, f64::NAN, "nan"));
    }
    let k = kendall_counts(x, y);
    let tot = k.n * k.n.saturating_sub(1) / 2;
    if k.xtie == tot || k.ytie == tot {
        return Ok((f64::NAN, f64::NAN, "constant"));
    }
    let cmd = tot as f64 - k.xtie as f64 - k.ytie as f64 + k.ntie as f64 - 2.0 * k.dis as f64;
    let tau =
        (cmd / ((tot - k.xtie) as f64).sqrt() / ((tot - k.ytie) as f64).sqrt()).clamp(-1.0, 1.0);
    let no_ties = k.xtie == 0 && k.ytie == 0;
    if no_ties && (k.n <= 33 || k.dis.min(tot - k.dis) <= 1) {
        return Ok((tau, kendall_p_exact(k.n, tot - k.dis), "exact"));
    }
    let n = k.n as f64;
    let m = n * (n - 1.0);
    let var = (m * (2.0 * n + 5.0) - k.x1 - k.y1) / 18.0
        + (2.0 * k.xtie as f64 * k.ytie as f64) / m
        + k.x0 * k.y0 / (9.0 * m * (n - 2.0));
    let z = cmd / var.sqrt();
    let p = (2.0 * crate::stats::normal_sf(z.abs())).min(1.0);
    Ok((tau, p, "asymptotic"))
}

/// Two-sided exact p-value of `c` concordant pairs among n items without ties: twice
/// the probability of at most min(c, total - c) inversions of a random permutation
/// (counted exactly in u128 for n <= 33: 33! < 2^128), capped at 1.
fn kendall_p_exact(n: u64, c: u64) -> f64 {
    let tot = n * n.saturating_sub(1) / 2;
    let c = c.min(tot - c);
    if n <= 2 || 4 * c == n * (n - 1) {
        return 1.0;
    }
    let fact = |k: u64| (1..=k).fold(1.0f64, |a, i| a * i as f64);
    if c == 0 {
        return 2.0 / fact(n);
    }
    if c == 1 {
        return 2.0 / fact(n - 1);
    }
    if n > 33 {
        // only reached for c <= 1 (handled above)
        return f64::NAN;
    }
    // counts[k]: permutations of j items with k inversions, for k <= c
    let c = c as usize;
    let mut counts = vec![0u128; c + 1];
    counts[0] = 1;
    for j in 2..=n as usize {
        // new[k] = sum_{i=0}^{min(k, j-1)} old[k - i]: a running window sum
        let mut next = vec![0u128; c + 1];
        let mut window = 0u128;
        for k in 0..=c {
            window += counts[k];
            if k >= j {
                window -= counts[k - j];
            }
            next[k] = window;
        }
        counts = next;
    }
    let at_most: u128 = counts.iter().sum();
    let total: u128 = (1..=n as u128).product();
    (2.0 * at_most as f64 / total as f64).min(1.0)
}

/// A Fenwick (binary indexed) tree counting items by position, for the inversion
/// counts of [`tau_ap`] and [`kendall_topk_distance`] in O(n log n).
struct Fenwick(Vec<u64>);

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick(vec![0; n + 1])
    }

    /// Count one item at position `i` (0-based).
    fn add(&mut self, i: usize) {
        let mut k = i + 1;
        while k < self.0.len() {
            self.0[k] += 1;
            k += k & k.wrapping_neg();
        }
    }

    /// The items counted at positions `0..=i`.
    fn at_most(&self, i: usize) -> u64 {
        let (mut k, mut n) = (i + 1, 0);
        while k > 0 {
            n += self.0[k];
            k &= k - 1;
        }
        n
    }
}

/// AP correlation tau_ap (Yilmaz, Aslam and Robertson 2008) of the ranking by `y`
/// against the reference ranking by `x` (higher scores rank first):
/// 2/(n-1) Σ_{i=2..n} C(i)/(i-1) - 1, where C(i) counts the items `y` ranks above its
/// i-th item that `x` also ranks above it. Swaps near the top cost more than swaps
/// near the bottom; not symmetric in x and y. Needs n >= 2 and no ties in either list
/// (ties make the ranking ambiguous: an error). O(n log n).
pub fn tau_ap(x: &[f64], y: &[f64]) -> Result<f64> {
    same_len(x, y)?;
    let n = x.len();
    if n < 2 {
        return Err(Error::Input(format!(
            "tau_ap needs at least 2 items, got {n}"
        )));
    }
    if has_nan(x, y) {
        return Ok(f64::NAN);
    }
    for (v, what) in [(x, "x"), (y, "y")] {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        if s.windows(2).any(|w| w[0].total_cmp(&w[1]).is_eq()) {
            return Err(Error::Input(format!(
                "tau_ap is defined for rankings without ties; {what} has tied scores"
            )));
        }
    }
    // rank of each item in x (0 = lowest score), for a Fenwick tree of "seen" items
    let mut by_x: Vec<usize> = (0..n).collect();
    by_x.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut xrank = vec![0usize; n];
    for (r, &i) in by_x.iter().enumerate() {
        xrank[i] = r;
    }
    let mut by_y: Vec<usize> = (0..n).collect();
    by_y.sort_by(|&a, &b| y[b].total_cmp(&y[a]));
    let mut tree = Fenwick::new(n);
    let mut sum = 0.0;
    for (pos, &i) in by_y.iter().enumerate() {
        if pos > 0 {
            // items seen so far (ranked above by y) with a higher x rank
            let above = pos as u64 - tree.at_most(xrank[i]);
            sum += above as f64 / pos as f64;
        }
        tree.add(xrank[i]);
    }
    Ok(2.0 / (n - 1) as f64 * sum - 1.0)
}

/// Ranks 1..n with ties given their average rank.
pub(crate) fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]].total_cmp(&x[idx[i]]).is_eq() {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rho: Pearson's correlation of the (average) ranks. NaN when either list
/// is constant or shorter than 2.
pub fn spearman_rho(x: &[f64], y: &[f64]) -> Result<f64> {
    same_len(x, y)?;
    let n = x.len();
    if n < 2 || has_nan(x, y) {
        return Ok(f64::NAN);
    }
    let (rx, ry) = (average_ranks(x), average_ranks(y));
    let mean = (n as f64 + 1.0) / 2.0;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mean) * (b - mean);
        sxx += (a - mean) * (a - mean);
        syy += (b - mean) * (b - mean);
    }
    let d = (sxx * syy).sqrt();
    Ok(if d > 0.0 { sxy / d } else { f64::NAN })
}

/// Normalized Kendall tau distance between two top-k lists (Fagin, Kumar and
/// Sivakumar 2003, K^(p)), over the pairs of the union of the two lists:
/// a pair ranked in both lists costs 1 when the lists order it differently; a pair
/// with both items in one list and one in the other costs 1 when the other list keeps
/// the lower-ranked one; a pair split between the lists costs 1; a pair of items both
/// missing from one list costs `penalty` (0 optimistic, 0.5 neutral; 0 to 1). The sum
/// is divided by the number of pairs of the union: 0 for identical lists, 1 for a list
/// and its reverse. Only the first `k` items of each list count (all when `k` is None).
/// Items must be distinct within a list (an error names the two ranks).
///
/// O(n log n): the pairs of each kind are counted, not visited (the discordant pairs
/// of the common items are the inversions of a's order in b's ranks, by a Fenwick tree).
pub fn kendall_topk_distance<T: Eq + Hash>(
    a: &[T],
    b: &[T],
    k: Option<usize>,
    penalty: f64,
) -> Result<f64> {
    if !(0.0..=1.0).contains(&penalty) {
        return Err(Error::Option(format!(
            "the penalty of a pair missing from one list must lie between 0 and 1, got \
             {penalty}"
        )));
    }
    let ka = k.map_or(a.len(), |k| k.min(a.len()));
    let kb = k.map_or(b.len(), |k| k.min(b.len()));
    let (a, b) = (&a[..ka], &b[..kb]);
    let pos_a = positions(a, "first")?;
    let pos_b = positions(b, "second")?;
    // a's items in a's order: their ranks in b (common items), and for each common
    // item the a-only items a ranks above it (each such pair costs 1)
    let (mut common, mut a_only, mut above_in_a) = (Vec::new(), 0u64, 0u64);
    for d in a {
        match pos_b.get(d) {
            Some(&r) => {
                common.push(r);
                above_in_a += a_only;
            }
            None => a_only += 1,
        }
    }
    let (mut b_only, mut above_in_b) = (0u64, 0u64);
    for d in b {
        if pos_a.contains_key(d) {
            above_in_b += b_only;
        } else {
            b_only += 1;
        }
    }
    let u = (a.len() as u64) + b_only;
    if u < 2 {
        return Ok(0.0);
    }
    // common pairs that b orders the other way: each common item's b rank against the
    // b ranks of the common items a put above it
    let mut tree = Fenwick::new(b.len());
    let mut discordant = 0u64;
    for (seen, &r) in common.iter().enumerate() {
        discordant += seen as u64 - tree.at_most(r);
        tree.add(r);
    }
    let pairs = |n: u64| n * n.saturating_sub(1) / 2;
    let ones = discordant + above_in_a + above_in_b + a_only * b_only;
    let cost = ones as f64 + penalty * (pairs(a_only) + pairs(b_only)) as f64;
    Ok(cost / pairs(u) as f64)
}

/// Each item's position in `list`, which must hold each item once.
fn positions<'a, T: Eq + Hash>(list: &'a [T], which: &str) -> Result<HashMap<&'a T, usize>> {
    let mut pos = HashMap::with_capacity(list.len());
    for (i, d) in list.iter().enumerate() {
        if let Some(j) = pos.insert(d, i) {
            return Err(repeated(which, j, i));
        }
    }
    Ok(pos)
}

fn repeated(which: &str, first: usize, again: usize) -> Error {
    Error::Input(format!(
        "the {which} ranked list holds one item at ranks {} and {}; a ranking holds each \
         item once",
        first + 1,
        again + 1
    ))
}

/// Extrapolated rank-biased overlap (Webber, Moffat and Zobel 2010, eq. 32) of two
/// ranked lists with persistence `p`: 1 for identical lists, 0 for disjoint ones.
/// Lists of different lengths are handled as in the paper (the shorter list's overlap
/// is extrapolated). Items must be distinct within a list (an error names the ranks).
pub fn rbo<T: Eq + Hash>(a: &[T], b: &[T], p: f64) -> Result<f64> {
    positions(a, "first")?;
    positions(b, "second")?;
    rbo_of_rankings(a, b, p)
}

/// [`rbo`] of lists known to hold distinct items (a run's ranked documents).
fn rbo_of_rankings<T: Eq + Hash>(a: &[T], b: &[T], p: f64) -> Result<f64> {
    if !(p > 0.0 && p < 1.0) {
        return Err(Error::Option(format!(
            "RBO persistence p must lie strictly between 0 and 1, got {p}"
        )));
    }
    let (s, l) = (a.len().min(b.len()), a.len().max(b.len()));
    if l == 0 {
        return Ok(f64::NAN);
    }
    if s == 0 {
        return Ok(0.0);
    }
    let x = overlaps(a, b);
    let (xs, xl) = (x[s] as f64, x[l] as f64);
    let mut sum = 0.0;
    let mut pd = 1.0;
    for (d, &xd) in x.iter().enumerate().skip(1) {
        pd *= p;
        sum += xd as f64 / d as f64 * pd;
        if d > s {
            sum += xs * (d - s) as f64 / (s * d) as f64 * pd;
        }
    }
    Ok((1.0 - p) / p * sum + ((xl - xs) / l as f64 + xs / s as f64) * pd)
}

/// The overlaps of two ranked lists at every depth: `x[d]` is the number of items the
/// first min(d, |a|) of `a` and the first min(d, |b|) of `b` share, for d = 0 to the
/// longer length (RBO's X_d, and Compat's). Items are assumed distinct within a list.
pub fn overlaps<T: Eq + Hash>(a: &[T], b: &[T]) -> Vec<usize> {
    let (s_list, l_list) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (s, l) = (s_list.len(), l_list.len());
    let mut seen_s: HashMap<&T, ()> = HashMap::new();
    let mut seen_l: HashMap<&T, ()> = HashMap::new();
    let mut overlap = 0usize;
    let mut x = vec![0usize; l + 1];
    for d in 1..=l {
        let li = &l_list[d - 1];
        if d <= s {
            let si = &s_list[d - 1];
            if si == li {
                overlap += 1;
            } else {
                if seen_l.contains_key(si) {
                    overlap += 1;
                }
                if seen_s.contains_key(li) {
                    overlap += 1;
                }
            }
            seen_s.insert(si, ());
        } else if seen_s.contains_key(li) {
            overlap += 1;
        }
        seen_l.insert(li, ());
        x[d] = overlap;
    }
    x
}

/// [`overlaps`] of two lists of small whole numbers (each below the lists' total
/// length), without hashing: where each item stands in each list, kept in two arrays.
pub fn overlaps_dense(a: &[usize], b: &[usize]) -> Vec<usize> {
    const ABSENT: usize = usize::MAX;
    let universe = a.iter().chain(b).max().map_or(0, |&m| m + 1);
    let (mut in_a, mut in_b) = (vec![ABSENT; universe], vec![ABSENT; universe]);
    for (i, &x) in a.iter().enumerate() {
        in_a[x] = i;
    }
    for (i, &x) in b.iter().enumerate() {
        in_b[x] = i;
    }
    let depth = a.len().max(b.len());
    let mut x = vec![0usize; depth + 1];
    let mut overlap = 0usize;
    for (d, xd) in x.iter_mut().enumerate().skip(1) {
        // a's d-th item meets b's first d; b's d-th item meets a's first d - 1 (the
        // d-th of a, if the same item, was counted just before)
        if let Some(&item) = a.get(d - 1) {
            overlap += usize::from(in_b[item] < d);
        }
        if let Some(&item) = b.get(d - 1) {
            overlap += usize::from(in_a[item] < d - 1);
        }
        *xd = overlap;
    }
    x
}

/// How two runs are compared query by query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunComparison {
    /// Kendall's tau-b of the scores of the documents both runs retrieved.
    KendallTau,
    /// Spearman's rho of the scores of the documents both runs retrieved.
    SpearmanRho,
    /// Normalized Kendall tau distance of the two top-k rankings, with this penalty.
    KendallTopK(f64),
    /// Rank-biased overlap of the two rankings, with this persistence.
    Rbo(f64),
}

/// Compare two runs on every query both contain (in query-id byte order): the
/// rankings are trec_eval's (score descending, ties by doc id descending) cut at
/// `k` when given. Queries with fewer than two common documents give NaN for the
/// score correlations.
pub fn compare_runs(
    a: &Run,
    b: &Run,
    how: RunComparison,
    k: Option<usize>,
) -> Result<Vec<(Box<[u8]>, f64)>> {
    // the options are checked once, before any query (and with no query in common)
    match how {
        RunComparison::Rbo(p) => {
            rbo::<u8>(&[], &[], p)?;
        }
        RunComparison::KendallTopK(pen) => {
            kendall_topk_distance::<u8>(&[], &[], None, pen)?;
        }
        RunComparison::KendallTau | RunComparison::SpearmanRho => {}
    }
    let mut out = Vec::new();
    let (mut oa, mut ob) = (Vec::new(), Vec::new());
    let mut qa: Vec<_> = a.queries().iter().collect();
    qa.sort_by(|x, y| x.id().cmp(y.id()));
    for q in qa {
        let Some(r) = b.query(q.id()) else { continue };
        q.ranking(&mut oa);
        r.ranking(&mut ob);
        let cut = |o: &mut Vec<u32>| {
            if let Some(k) = k {
                o.truncate(k);
            }
        };
        cut(&mut oa);
        cut(&mut ob);
        let docs_a: Vec<&[u8]> = oa.iter().map(|&i| q.docs.get(i as usize)).collect();
        let docs_b: Vec<&[u8]> = ob.iter().map(|&i| r.docs.get(i as usize)).collect();
        let v = match how {
            RunComparison::Rbo(p) => rbo_of_rankings(&docs_a, &docs_b, p)?,
            RunComparison::KendallTopK(pen) => kendall_topk_distance(&docs_a, &docs_b, None, pen)?,
            RunComparison::KendallTau | RunComparison::SpearmanRho => {
                let score_b: HashMap<&[u8], f64> = ob
                    .iter()
                    .map(|&i| (r.docs.get(i as usize), r.values[i as usize]))
                    .collect();
                let (mut x, mut y) = (Vec::new(), Vec::new());
                for &i in &oa {
                    if let Some(&sb) = score_b.get(q.docs.get(i as usize)) {
                        x.push(q.values[i as usize]);
                        y.push(sb);
                    }
                }
                if how == RunComparison::KendallTau {
                    kendall_tau_b(&x, &y)?
                } else {
                    spearman_rho(&x, &y)?
                }
            }
        };
        out.push((q.id().into(), v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_propagates_as_in_scipy() {
        // scipy.stats.kendalltau([1, nan, 3], [1, 2, 3]) and spearmanr(...): nan
        let x = [1.0, f64::NAN, 3.0];
        let y = [1.0, 2.0, 3.0];
        assert!(kendall_tau_b(&x, &y).unwrap().is_nan());
        assert!(spearman_rho(&y, &x).unwrap().is_nan());
    }

    #[test]
    fn kendall_tau_b_scipy_example() {
        // scipy.stats.kendalltau documentation: tau-b = -0.47140452079103173
        let x = [12.0, 2.0, 1.0, 12.0, 2.0];
        let y = [1.0, 4.0, 7.0, 1.0, 0.0];
        let t = kendall_tau_b(&x, &y).unwrap();
        assert!((t + 0.471_404_520_791_031_73).abs() < 1e-12, "{t}");
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap(),
            1.0
        );
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap(),
            -1.0
        );
        assert!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]).unwrap().is_nan());
        assert!(kendall_tau_b(&[1.0], &[1.0, 2.0]).is_err());
    }

    /// The O(n^2) definition, as the crate computed it before Knight's algorithm.
    fn tau_b_quadratic(x: &[f64], y: &[f64]) -> f64 {
        let n = x.len();
        let (mut c, mut d, mut tx, mut ty) = (0i64, 0i64, 0i64, 0i64);
        for i in 0..n {
            for j in i + 1..n {
                let dx = x[i].total_cmp(&x[j]) as i64;
                let dy = y[i].total_cmp(&y[j]) as i64;
                tx += i64::from(dx == 0);
                ty += i64::from(dy == 0);
                match dx * dy {
                    1 => c += 1,
                    -1 => d += 1,
                    _ => {}
                }
            }
        }
        let n0 = (n * (n - 1) / 2) as i64;
        (c - d) as f64 / (((n0 - tx) as f64) * ((n0 - ty) as f64)).sqrt()
    }

    #[test]
    fn knight_equals_the_quadratic_definition() {
        let mut rng = crate::testing::Lcg::new(12345);
        let mut next = |k: u64| rng.below(k) as f64;
        for n in [2usize, 3, 5, 17, 64, 200] {
            for levels in [3u64, 10, 1000] {
                let x: Vec<f64> = (0..n).map(|_| next(levels)).collect();
                let y: Vec<f64> = (0..n).map(|_| next(levels)).collect();
                let a = kendall_tau_b(&x, &y).unwrap();
                let b = tau_b_quadratic(&x, &y);
                assert!(
                    (a - b).abs() < 1e-12 || (a.is_nan() && b.is_nan()),
                    "{n} {a} {b}"
                );
            }
        }
    }

    #[test]
    fn kendall_exact_p_small() {
        // n = 3 without ties: 6 permutations, inversions 0..3 with counts 1 2 2 1;
        // identical order: 2 * 1/6
        let (t, p, m) = kendall_tau_test(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((t, m), (1.0, "exact"));
        assert!((p - 1.0 / 3.0).abs() < 1e-15, "{p}");
        // n = 4, one inversion: 2 * (1 + 3) / 24
        let (_, p, _) = kendall_tau_test(&[1.0, 2.0, 3.0, 4.0], &[2.0, 1.0, 3.0, 4.0]).unwrap();
        assert!((p - 8.0 / 24.0).abs() < 1e-15, "{p}");
        assert_eq!(kendall_p_exact(5, 5), 1.0);
        // two inversions of 5 (c = 2): counts 1 4 9 -> 2 * 14 / 120
        assert!((kendall_p_exact(5, 2) - 28.0 / 120.0).abs() < 1e-15);
    }

    #[test]
    fn tau_ap_bounds() {
        let x = [4.0, 3.0, 2.0, 1.0];
        assert_eq!(tau_ap(&x, &x).unwrap(), 1.0);
        assert_eq!(tau_ap(&x, &[1.0, 2.0, 3.0, 4.0]).unwrap(), -1.0);
        // swap at the top costs more than at the bottom
        let top = tau_ap(&x, &[3.0, 4.0, 2.0, 1.0]).unwrap();
        let bottom = tau_ap(&x, &[4.0, 3.0, 1.0, 2.0]).unwrap();
        assert!(top < bottom, "{top} {bottom}");
        // top swap: C = 0, 2, 3 -> 2/3 (0 + 1 + 1) - 1 = 1/3
        assert!((top - 1.0 / 3.0).abs() < 1e-15);
        assert!(tau_ap(&x, &[1.0, 1.0, 2.0, 3.0]).is_err());
    }

    #[test]
    fn spearman_wikipedia_example() {
        // Wikipedia, "Spearman's rank correlation coefficient": IQ against hours of
        // television per week, rho = -29/165.
        let iq = [
            106.0, 100.0, 86.0, 101.0, 99.0, 103.0, 97.0, 113.0, 112.0, 110.0,
        ];
        let tv = [7.0, 27.0, 2.0, 50.0, 28.0, 29.0, 20.0, 12.0, 6.0, 17.0];
        let r = spearman_rho(&iq, &tv).unwrap();
        assert!((r + 29.0 / 165.0).abs() < 1e-12, "{r}");
        // ties get average ranks: perfectly monotone with ties is still 1
        assert!((spearman_rho(&[1.0, 1.0, 2.0], &[5.0, 5.0, 9.0]).unwrap() - 1.0).abs() < 1e-12);
    }

    /// Fagin's K^(p) pair by pair, as defined: the reference of the counting version.
    fn kendall_topk_by_pairs(a: &[u32], b: &[u32], penalty: f64) -> f64 {
        let pos = |l: &[u32], x: u32| l.iter().position(|&d| d == x);
        let mut union: Vec<u32> = a.to_vec();
        union.extend(b.iter().filter(|d| !a.contains(d)));
        let u = union.len();
        if u < 2 {
            return 0.0;
        }
        let mut cost = 0.0;
        for i in 0..u {
            for j in i + 1..u {
                let (x, y) = (union[i], union[j]);
                cost += match (pos(a, x), pos(a, y), pos(b, x), pos(b, y)) {
                    (Some(ax), Some(ay), Some(bx), Some(by)) => f64::from((ax < ay) != (bx < by)),
                    (Some(ax), Some(ay), Some(_), None) => f64::from(ax > ay),
                    (Some(ax), Some(ay), None, Some(_)) => f64::from(ay > ax),
                    (Some(_), None, Some(bx), Some(by)) => f64::from(bx > by),
                    (None, Some(_), Some(bx), Some(by)) => f64::from(by > bx),
                    (Some(_), Some(_), None, None) | (None, None, Some(_), Some(_)) => penalty,
                    _ => 1.0,
                };
            }
        }
        cost / (u * (u - 1) / 2) as f64
    }

    #[test]
    fn kendall_topk_distance_counts_what_the_pairs_give() {
        // seeded lists of 0-40 distinct items drawn from 0-59: overlapping, disjoint,
        // one empty, prefixes
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..2000 {
            let (la, lb) = (next(41), next(41));
            let mut lists = [Vec::new(), Vec::new()];
            for (l, len) in lists.iter_mut().zip([la, lb]) {
                while (l.len() as u64) < len {
                    let d = next(60) as u32;
                    if !l.contains(&d) {
                        l.push(d);
                    }
                }
            }
            let [a, b] = lists;
            for pen in [0.0, 0.5, 0.3, 1.0] {
                let got = kendall_topk_distance(&a, &b, None, pen).unwrap();
                let want = kendall_topk_by_pairs(&a, &b, pen);
                assert!(
                    (got - want).abs() < 1e-12,
                    "{a:?} {b:?} {pen}: {got} {want}"
                );
            }
        }
        assert!(kendall_topk_distance(&[1, 2, 1], &[1], None, 0.5).is_err());
        assert!(kendall_topk_distance(&[1], &[1], None, 1.5).is_err());
        assert!(rbo(&[1], &[2, 3, 2], 0.9).is_err());
    }

    #[test]
    fn kendall_topk_distance_bounds() {
        let a = ["a", "b", "c", "d"];
        let rev = ["d", "c", "b", "a"];
        assert_eq!(kendall_topk_distance(&a, &a, None, 0.5).unwrap(), 0.0);
        assert_eq!(kendall_topk_distance(&a, &rev, None, 0.5).unwrap(), 1.0);
        // one swap of 6 pairs
        let sw = ["b", "a", "c", "d"];
        assert!((kendall_topk_distance(&a, &sw, None, 0.5).unwrap() - 1.0 / 6.0).abs() < 1e-15);
        // top 2 of a = {a, b}, of ["a", "x"] = {a, x}: union {a, b, x}; pairs (a,b): b
        // missing from list 2 while a is kept ahead: 0; (a,x): 0; (b,x) split: 1
        let v = kendall_topk_distance(&a, &["a", "x", "y"], Some(2), 0.5).unwrap();
        assert!((v - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn dense_overlaps_equal_hashed_ones() {
        let lists: [&[usize]; 6] = [
            &[],
            &[0],
            &[3, 1, 4, 0],
            &[4, 3, 9],
            &[0, 1, 2, 3, 4, 5],
            &[5, 7],
        ];
        for a in lists {
            for b in lists {
                assert_eq!(overlaps_dense(a, b), overlaps(a, b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn rbo_values() {
        let a = ["a", "b", "c"];
        assert!((rbo(&a, &a, 0.9).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(rbo(&a, &["x", "y", "z"], 0.9).unwrap(), 0.0);
        // X = 0, 2, 3 at depths 1..3: (0.1/0.9)(0.81 + 0.729) + 0.729 = 0.9
        let v = rbo(&a, &["b", "a", "c"], 0.9).unwrap();
        assert!((v - 0.9).abs() < 1e-12, "{v}");
        // a list and its own prefix: the prefix is extrapolated as a perfect match
        assert!((rbo(&a, &a[..2], 0.9).unwrap() - 1.0).abs() < 1e-12);
        assert!(rbo(&a, &a, 1.0).is_err());
    }
}
