//! Gain-based measures: ndcg, ndcg_rel, Rndcg, G, binG, ndcg_cut, rbp, rbp_resid.
//!
//! Gains default to the label values (linear gain) and can be overridden per level
//! with `level=gain` pairs, as in trec_eval (`ndcg.1=3,2=7`).

use super::QueryCtx;

/// One relevance level with its gain and number of judged documents.
#[derive(Clone, Copy, Debug)]
struct Level {
    level: i64,
    count: u64,
    gain: f64,
}

/// The gain table of one query: user gains first, then the query's own levels,
/// ordered by increasing gain (trec_eval's `setup_gains`).
struct Gains {
    levels: Vec<Level>,
}

impl Gains {
    fn new(c: &QueryCtx, pairs: &[(String, f64)]) -> Gains {
        let mut levels: Vec<Level> = pairs
            .iter()
            .filter_map(|(name, g)| {
                name.parse::<i64>().ok().map(|level| Level {
                    level,
                    count: 0,
                    gain: *g,
                })
            })
            .collect();
        for &(level, count) in c.levels {
            match levels.iter_mut().find(|l| l.level == level) {
                Some(l) => l.count = count,
                None => levels.push(Level {
                    level,
                    count,
                    gain: level as f64,
                }),
            }
        }
        levels.sort_by(|a, b| a.gain.total_cmp(&b.gain));
        Gains { levels }
    }

    #[inline]
    fn gain(&self, rel: i64) -> f64 {
        self.levels
            .iter()
            .find(|l| l.level == rel)
            .map_or(0.0, |l| l.gain)
    }
}

/// Walks the ideal ranking: gains of the judged documents, highest first, stopping at
/// the first non-positive gain.
struct Ideal<'g> {
    levels: &'g [Level],
    cur: isize,
    num_at_level: u64,
    gain: f64,
}

impl<'g> Ideal<'g> {
    fn new(g: &'g Gains) -> Self {
        let cur = g.levels.len() as isize - 1;
        Ideal {
            levels: &g.levels,
            cur,
            num_at_level: 0,
            gain: if cur >= 0 {
                g.levels[cur as usize].gain
            } else {
                0.0
            },
        }
    }

    /// Advance one rank; returns the ideal gain there (<= 0 once exhausted).
    #[inline]
    fn step(&mut self) -> f64 {
        self.num_at_level += 1;
        while self.cur >= 0 && self.num_at_level > self.levels[self.cur as usize].count {
            self.num_at_level = 1;
            self.cur -= 1;
            self.gain = if self.cur >= 0 {
                self.levels[self.cur as usize].gain
            } else {
                0.0
            };
        }
        self.gain
    }
}

use super::discount;

/// nDCG with trec_eval's gains; the ideal ranking uses every judged document.
pub(super) fn ndcg(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    let g = Gains::new(c, pairs);
    let mut ideal = Ideal::new(&g);
    let (mut dcg, mut idcg) = (0.0, 0.0);
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = g.gain(c.rels[i]);
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        let ig = ideal.step();
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    while i < n {
        let rg = g.gain(c.rels[i]);
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    if idcg > 0.0 {
        dcg / idcg
    } else {
        0.0
    }
}

/// nDCG averaged over the relevant documents (trec_eval's experimental ndcg_rel).
pub(super) fn ndcg_rel(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    let g = Gains::new(c, pairs);
    let mut ideal = Ideal::new(&g);
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let (mut num_rel, mut num_rel_ret) = (0u64, 0u64);
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = g.gain(c.rels[i]);
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        if rg > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while i < n {
        let rg = g.gain(c.rels[i]);
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        if rg > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        i += 1;
    }
    sum += (num_rel as f64 - num_rel_ret as f64) * dcg / idcg;
    if sum > 0.0 {
        sum / num_rel as f64
    } else {
        0.0
    }
}

/// nDCG averaged at the points where the ideal gain changes (trec_eval's Rndcg).
pub(super) fn r_ndcg(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    if c.num_rel == 0 {
        return 0.0;
    }
    let g = Gains::new(c, pairs);
    let mut ideal = Ideal::new(&g);
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut old_gain = ideal.gain;
    let mut changes = 0u64;
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = g.gain(c.rels[i]);
        let ig = ideal.step();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    if i < n {
        while i < n {
            let rg = g.gain(c.rels[i]);
            if rg != 0.0 {
                dcg += rg / discount(i);
            }
            i += 1;
        }
        if idcg > 0.0 {
            sum += dcg / idcg;
            changes += 1;
        }
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    sum / changes as f64
}

/// G: gain discounted by log2(2 + cost so far - gain so far), over the ideal gain sum.
pub(super) fn g(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    let gains = Gains::new(c, pairs);
    let mut ideal = Ideal::new(&gains);
    let (mut results_g, mut sum_results, mut sum_ideal, mut sum_cost) = (0.0, 0.0, 0.0, 0.0);
    let min_cost = 1.0;
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = gains.gain(c.rels[i]);
        sum_results += rg;
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
        sum_cost += if ig >= min_cost { ig } else { min_cost };
        if rg != 0.0 {
            results_g += rg / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while i < n {
        let rg = gains.gain(c.rels[i]);
        sum_results += rg;
        sum_cost += min_cost;
        if rg != 0.0 {
            results_g += rg / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
    }
    if sum_ideal > 0.0 {
        results_g / sum_ideal
    } else {
        0.0
    }
}

/// binG: average over relevant documents of 1 / log2(2 + non-relevant ranked above).
pub(super) fn bin_g(c: &QueryCtx) -> f64 {
    let mut rel_so_far = 0u64;
    let mut sum = 0.0;
    for i in 0..c.num_ret() {
        if c.is_rel(i) {
            rel_so_far += 1;
            sum += 1.0 / ((3 + i as u64 - rel_so_far) as f64).log2();
        }
    }
    if rel_so_far > 0 {
        sum / c.num_rel as f64
    } else {
        0.0
    }
}

/// nDCG at cut-offs with the labels as gains; the ideal is the top k of the judged
/// documents (trec_eval's ndcg_cut; `-l` and gain maps do not apply).
pub(super) fn ndcg_cut(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    super::dcg::dcg_at(c, super::dcg::Gain::Linear, cutoffs, out);
    // Ideal DCG: labels in decreasing order (positive ones only)
    let mut idcg = 0.0;
    let mut next = 0;
    let mut i = 0u64;
    'levels: for &(level, count) in c.levels.iter().rev() {
        if level <= 0 {
            break;
        }
        for _ in 0..count {
            while next < cutoffs.len() && i == cutoffs[next] {
                if idcg > 0.0 {
                    out[next] /= idcg;
                }
                next += 1;
            }
            if next == cutoffs.len() {
                break 'levels;
            }
            idcg += level as f64 / discount(i as usize);
            i += 1;
        }
    }
    for o in out.iter_mut().skip(next) {
        if idcg > 0.0 {
            *o /= idcg;
        }
    }
}

fn persistence(pairs: &[(String, f64)]) -> f64 {
    pairs
        .iter()
        .rev()
        .find(|(n, _)| n == "p")
        .map_or(0.9, |(_, v)| *v)
}

/// Rank-biased precision (Moffat and Zobel 2008) with trec_eval's gains: when any
/// gain lies outside [0, 1] all gains are rescaled by (g - min) / (max - min) over the
/// query's levels 0..max (and any user gains).
pub(super) fn rbp(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    let p = persistence(pairs);
    let mut gains = Gains::new(c, pairs);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in &gains.levels {
        min = min.min(l.gain);
        max = max.max(l.gain);
    }
    // trec_eval's table also holds every level 0..max_label (gain = level) that the
    // user did not set: the smallest and largest of those can move min and max.
    if let Some(&(top, _)) = c.levels.last() {
        let user = |lvl: i64| {
            pairs
                .iter()
                .any(|(n, _)| n.parse::<i64>().ok() == Some(lvl))
        };
        let lo = (0..=top).find(|&l| !user(l));
        let hi = (0..=top).rev().find(|&l| !user(l));
        for v in [lo, hi].into_iter().flatten() {
            min = min.min(v as f64);
            max = max.max(v as f64);
        }
    }
    if min < 0.0 || max > 1.0 {
        for l in &mut gains.levels {
            l.gain = (l.gain - min) / (max - min);
        }
    }
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &r in c.rels {
        let g = gains.gain(r);
        if g != 0.0 {
            sum += g * cur_p;
        }
        cur_p *= p;
    }
    (1.0 - p) * sum
}

/// The RBP residual: what RBP would gain if every unjudged document were relevant,
/// plus the weight beyond the end of the ranking (0 when nothing is unjudged).
pub(super) fn rbp_resid(c: &QueryCtx, pairs: &[(String, f64)]) -> f64 {
    let p = persistence(pairs);
    let mut unj = 0u64;
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &r in c.rels {
        if r < 0 {
            unj += 1;
            sum += cur_p;
        }
        cur_p *= p;
    }
    if unj > 0 {
        cur_p + (1.0 - p) * sum
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    #[test]
    fn ndcg_linear_gains() {
        // ranked labels 3,2,3,0,0,1,2,2,3,0; judged labels the same multiset
        let rels = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0];
        let dcg: f64 = rels
            .iter()
            .enumerate()
            .map(|(i, &r)| r as f64 / (i as f64 + 2.0).log2())
            .sum();
        let mut ideal = rels.to_vec();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal
            .iter()
            .enumerate()
            .map(|(i, &r)| r as f64 / (i as f64 + 2.0).log2())
            .sum();
        let v = eval("ndcg", &rels, &rels)[0];
        assert!((v - dcg / idcg).abs() < 1e-12);
        let v = eval("ndcg_cut.10", &rels, &rels)[0];
        assert!((v - dcg / idcg).abs() < 1e-12);
        // a perfect ranking scores 1
        assert_eq!(eval("ndcg", &ideal, &rels)[0], 1.0);
        assert_eq!(eval("ndcg_cut.3", &ideal, &rels)[0], 1.0);
    }

    #[test]
    fn rbp_binary_and_graded() {
        // binary: (1-p) * sum p^(i-1) over relevant ranks 1 and 3, p = 0.5
        let v = eval("rbp.p=0.5", &[1, 0, 1], &[1, 1, 0])[0];
        assert!((v - 0.5 * (1.0 + 0.25)).abs() < 1e-15);
        // graded, max label 2: gains rescaled to 0, .5, 1
        let v = eval("rbp.p=0.5", &[1, 2], &[1, 2, 0])[0];
        assert!((v - 0.5 * (0.5 + 0.5)).abs() < 1e-15);
        // residual: unjudged at rank 2 adds p^1, plus p^n beyond the ranking
        let v = eval("rbp_resid.p=0.5", &[1, -1], &[1])[0];
        assert!((v - (0.25 + 0.5 * 0.5)).abs() < 1e-15);
    }
}
