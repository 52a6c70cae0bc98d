//! The gain model of every DCG-like measure (dcg.rs, graded RBP in rbp.rs): one
//! per-query table from label to gain, built as trec_eval's `setup_gains` does.
//!
//! A label gains its base value (the label itself, or 2^label - 1 for Burges et al.'s
//! exponential gain) unless the measure sets a gain for it (trec_eval's `ndcg.1=3`
//! pairs, irmetrics' `gN=x` options). A label that is in neither the query's
//! judgments nor the user's gains gains 0: that covers unjudged (-2) and unpooled (-1)
//! documents, unless the user gave those labels a gain (trec_eval allows `-1=x`).
//! The relevance level (`-l`) never applies.

use super::QueryCtx;

/// The gain of a label nobody set a gain for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Base {
    /// The label itself (trec_eval, ranx `ndcg`).
    Linear,
    /// 2^label - 1 (Burges et al. 2005; ranx `ndcg_burges`, gdeval.pl).
    Exp,
}

impl Base {
    #[inline]
    fn of(self, label: i64) -> f64 {
        match self {
            Base::Linear => label as f64,
            Base::Exp => (label as f64).exp2() - 1.0,
        }
    }
}

/// User gains of trec_eval's `level=gain` pairs (`ndcg.1=3,2=7`; other pairs, such as
/// rbp's `p`, are not levels).
pub(super) fn from_pairs(pairs: &[(String, f64)]) -> Vec<(i64, f64)> {
    pairs
        .iter()
        .filter_map(|(n, g)| n.parse::<i64>().ok().map(|l| (l, *g)))
        .collect()
}

/// User gains of a measure's `gN=x` options.
pub(super) fn from_options(opts: &[(String, f64)]) -> Vec<(i64, f64)> {
    opts.iter()
        .filter_map(|(n, g)| {
            n.strip_prefix('g')
                .and_then(|d| d.parse::<i64>().ok())
                .map(|l| (l, *g))
        })
        .collect()
}

/// One label with its gain and number of judged documents.
#[derive(Clone, Copy, Debug)]
struct Level {
    level: i64,
    count: u64,
    gain: f64,
}

/// Labels below this get an O(1) lookup; larger ones (rare) a scan.
const DENSE_LIMIT: i64 = 256;

/// The gain table of one query: user gains first, then the query's own levels,
/// ordered by increasing gain (trec_eval's `setup_gains`).
pub(super) struct Gains {
    levels: Vec<Level>,
    /// gain by label for labels 0..DENSE_LIMIT (0 where the table has none)
    dense: Vec<f64>,
    /// The smallest label of the table (`i64::MAX` when it is empty): the unjudged and
    /// unpooled documents' negative labels are below it unless a user gain names them.
    lowest: i64,
}

impl Gains {
    /// The table of `c`'s judged levels, with `user` gains overriding `base`, in
    /// increasing gain order.
    pub(super) fn new(c: &QueryCtx, base: Base, user: &[(i64, f64)]) -> Gains {
        let mut levels = Self::table(c, base, user);
        // stable: among equal gains the user's come first, as in trec_eval
        levels.sort_by(|a, b| a.gain.total_cmp(&b.gain));
        Self::from_levels(levels)
    }

    /// trec_eval's table (`setup_gains`): the labels as gains, overridden by `user`'s
    /// level=gain pairs, in the order trec_eval's sort leaves them ([`trec_eval_sort`]:
    /// increasing gain where gains are whole numbers or at least 1 apart).
    pub(super) fn trec_eval(c: &QueryCtx, user: &[(i64, f64)]) -> Gains {
        let mut levels = Self::table(c, Base::Linear, user);
        let mut merged = Vec::with_capacity(levels.len());
        trec_eval_sort(&mut levels, &mut merged);
        Self::from_levels(levels)
    }

    /// The user's levels first, then the query's other judged levels with `base` gains.
    fn table(c: &QueryCtx, base: Base, user: &[(i64, f64)]) -> Vec<Level> {
        let mut levels: Vec<Level> = user
            .iter()
            .map(|&(level, gain)| Level {
                level,
                count: 0,
                gain,
            })
            .collect();
        for &(level, count) in c.levels {
            match levels.iter_mut().find(|l| l.level == level) {
                Some(l) => l.count = count,
                None => levels.push(Level {
                    level,
                    count,
                    gain: base.of(level),
                }),
            }
        }
        levels
    }

    fn from_levels(levels: Vec<Level>) -> Gains {
        let mut g = Gains {
            levels,
            dense: Vec::new(),
            lowest: i64::MAX,
        };
        g.fill_dense();
        g
    }

    /// Linear gains, no user gains (trec_eval's ndcg_cut).
    pub(super) fn linear(c: &QueryCtx) -> Gains {
        Gains::new(c, Base::Linear, &[])
    }

    /// Derive `dense` and `lowest` from `levels` (after they are set or rescaled).
    fn fill_dense(&mut self) {
        let top = self
            .levels
            .iter()
            .map(|l| l.level)
            .filter(|&l| l < DENSE_LIMIT)
            .max()
            .unwrap_or(-1);
        self.dense = vec![0.0; usize::try_from(top + 1).unwrap_or(0)];
        self.lowest = self
            .levels
            .iter()
            .map(|l| l.level)
            .min()
            .unwrap_or(i64::MAX);
        // in reverse, so that the first level of the sorted table wins (as `find`)
        for l in self.levels.iter().rev() {
            if let Some(d) = usize::try_from(l.level)
                .ok()
                .and_then(|i| self.dense.get_mut(i))
            {
                *d = l.gain;
            }
        }
    }

    /// The gain of a ranked document's label. Every label of the table below
    /// `DENSE_LIMIT` is in `dense`, so only larger labels, and negative ones when the
    /// table has some, are looked for in it: most documents of a long ranking are
    /// unpooled (-1), and their scan of the table was a third of `eval_query`'s samples
    /// for `-q -m all_trec` over 1,000 documents a query.
    #[inline]
    pub(super) fn gain(&self, rel: i64) -> f64 {
        if (0..DENSE_LIMIT).contains(&rel) {
            return self.dense.get(rel as usize).copied().unwrap_or(0.0);
        }
        if rel < self.lowest {
            return 0.0;
        }
        self.levels
            .iter()
            .find(|l| l.level == rel)
            .map_or(0.0, |l| l.gain)
    }

    /// Smallest and largest gain of the table (infinities when it is empty).
    pub(super) fn gain_range(&self) -> (f64, f64) {
        self.levels
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| {
                (lo.min(l.gain), hi.max(l.gain))
            })
    }

    /// Map every gain g to (g - min) / (max - min) (graded RBP's rescaling).
    pub(super) fn rescale(&mut self, min: f64, max: f64) {
        for l in &mut self.levels {
            l.gain = (l.gain - min) / (max - min);
        }
        self.fill_dense();
    }

    /// The first level (in the table's order of increasing gain) at which the sum of
    /// the absolute gains of the judged documents stops being a finite number, if any:
    /// every DCG of the query, ideal or not, is at most that sum (each judged document
    /// counts once, every discount is at least 1), so when it is finite no DCG-like
    /// value can become infinite or NaN.
    pub(super) fn overflowing_level(&self) -> Option<i64> {
        let mut sum = 0.0f64;
        for l in self.levels.iter().filter(|l| l.count > 0) {
            sum += l.count as f64 * l.gain.abs();
            if !sum.is_finite() {
                return Some(l.level);
            }
        }
        None
    }

    /// The ideal ranking's gains, highest first.
    pub(super) fn ideal(&self) -> Ideal<'_> {
        Ideal::new(self)
    }
}

/// trec_eval's sort of a gain table: glibc's `qsort` (a top-down merge sort: the first
/// n/2 entries sorted, the rest sorted, then merged taking the left entry while the
/// comparator says <= 0) with trec_eval's comparator `comp_rel_gain`, which returns the
/// difference of two gains cast to `int`. Gains less than 1 apart compare equal, so with
/// fractional gains (`ndcg.3=0.5` beside labels 0..4) the table is not in gain order
/// and the ideal ranking is the one this merge leaves (ndcg, ideal_dcg, G, Rndcg, ...
/// differ from a true sort there). Written out because no library sort reproduces an
/// inconsistent comparator's order; with gains at least 1 apart (whole-number gains,
/// the default) it is a stable sort by gain.
fn trec_eval_sort(levels: &mut [Level], merged: &mut Vec<Level>) {
    fn comp_rel_gain(a: &Level, b: &Level) -> i32 {
        let d = a.gain - b.gain;
        // C's conversion truncates; out of int's range x86 (cvttsd2si) gives INT_MIN
        if d > -2_147_483_649.0 && d < 2_147_483_648.0 {
            d as i32
        } else {
            i32::MIN
        }
    }
    if levels.len() <= 1 {
        return;
    }
    let n1 = levels.len() / 2;
    trec_eval_sort(&mut levels[..n1], merged);
    trec_eval_sort(&mut levels[n1..], merged);
    merged.clear();
    let (left, right) = levels.split_at(n1);
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if comp_rel_gain(&left[i], &right[j]) <= 0 {
            merged.push(left[i]);
            i += 1;
        } else {
            merged.push(right[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&left[i..]);
    merged.extend_from_slice(&right[j..]);
    levels.copy_from_slice(merged);
}

/// Walks the ideal ranking: gains of the judged documents, highest first; once the
/// judged documents with positive gain are used up it yields gains <= 0.
pub(super) struct Ideal<'g> {
    levels: &'g [Level],
    cur: isize,
    num_at_level: u64,
    /// The gain of the current level (> 0 while positive gains remain).
    pub(super) gain: f64,
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
    pub(super) fn step(&mut self) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_util::levels;

    fn ctx<'a>(lv: &'a [(i64, u64)]) -> QueryCtx<'a> {
        QueryCtx::new(&[], lv, 1, 0, false)
    }

    #[test]
    fn labels_user_gains_and_unjudged() {
        let lv = levels(&[0, 1, 1, 2, 5]);
        let c = ctx(&lv);
        let g = Gains::new(&c, Base::Linear, &from_pairs(&[("1".into(), 3.0)]));
        // judged labels gain their value unless set; unjudged/unpooled and labels
        // the query does not have gain 0 (trec_eval's get_gain)
        assert_eq!(
            [g.gain(0), g.gain(1), g.gain(2), g.gain(5)],
            [0.0, 3.0, 2.0, 5.0]
        );
        assert_eq!([g.gain(-1), g.gain(-2), g.gain(3)], [0.0, 0.0, 0.0]);
        // trec_eval lets a pair give unpooled documents (-1) a gain
        let g = Gains::new(&c, Base::Linear, &from_pairs(&[("-1".into(), 0.5)]));
        assert_eq!(g.gain(-1), 0.5);
        // a gain for -2 only: -1 and -3 are looked for and not found
        let g = Gains::new(&c, Base::Linear, &[(-2, 0.25)]);
        assert_eq!([g.gain(-3), g.gain(-2), g.gain(-1)], [0.0, 0.25, 0.0]);
        // labels past the dense table are found too
        let lv = levels(&[1000]);
        let g = Gains::new(&ctx(&lv), Base::Linear, &[]);
        assert_eq!(g.gain(1000), 1000.0);
        let g = Gains::new(
            &ctx(&lv),
            Base::Exp,
            &from_options(&[("g1000".into(), 7.0)]),
        );
        assert_eq!(g.gain(1000), 7.0);
    }

    #[test]
    fn exponential_base_and_ideal_order() {
        let lv = levels(&[0, 1, 3, 3, 2]);
        let c = ctx(&lv);
        let g = Gains::new(&c, Base::Exp, &[]);
        assert_eq!(
            [g.gain(0), g.gain(1), g.gain(2), g.gain(3)],
            [0.0, 1.0, 3.0, 7.0]
        );
        // the ideal ranking: 3, 3, 2, 1, then nothing positive
        let mut ideal = g.ideal();
        let walk: Vec<f64> = (0..6).map(|_| ideal.step()).collect();
        assert_eq!(walk, [7.0, 7.0, 3.0, 1.0, 0.0, 0.0]);
        // a user gain reorders the ideal ranking: label 1 worth 10 comes first
        let g = Gains::new(&c, Base::Linear, &[(1, 10.0)]);
        let mut ideal = g.ideal();
        assert_eq!([ideal.step(), ideal.step(), ideal.step()], [10.0, 3.0, 3.0]);
        assert_eq!(g.gain_range(), (0.0, 10.0));
    }

    /// trec_eval's table for labels 0..4 with `3=0.5`: the user's level first, then the
    /// labels; its merge sort calls 0.5 equal to 0 and to 1 (the int cast of the
    /// difference), so level 3 stays first, below label 0, where a true sort puts it
    /// between 0 and 1.
    #[test]
    fn trec_eval_sorts_fractional_gains_as_its_comparator_does() {
        let lv = [(0, 3), (1, 2), (2, 1), (3, 1), (4, 1)];
        let c = ctx(&lv);
        let order = |g: &Gains| g.levels.iter().map(|l| l.level).collect::<Vec<_>>();
        assert_eq!(order(&Gains::trec_eval(&c, &[(3, 0.5)])), [3, 0, 1, 2, 4]);
        assert_eq!(
            order(&Gains::new(&c, Base::Linear, &[(3, 0.5)])),
            [0, 3, 1, 2, 4]
        );
        // whole-number gains: the true order, the user's level first among equals
        assert_eq!(order(&Gains::trec_eval(&c, &[(4, 1.0)])), [0, 4, 1, 2, 3]);
    }
}
