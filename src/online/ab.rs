//! Metrics per variant (A/B arm) and the difference of each arm from the baseline: a
//! percentile-bootstrap interval over sessions and its p-value.
//!
//! Resample r draws, from stream r of the seed (the compare module's ChaCha8 streams, so
//! the numbers do not depend on the thread count), as many sessions with replacement
//! from each arm as it has (as counts per session), and recomputes every metric of each
//! arm from the drawn sessions' numerators and denominators (a cluster bootstrap: a
//! session's SERPs stay together). The interval holds the (1 - confidence)/2 and
//! (1 + confidence)/2 quantiles of the resampled differences (numpy's linear
//! quantiles); the two-sided p-value is
//! min(1, 2 · (min(#{d* <= 0}, #{d* >= 0}) + 1) / (R + 1)), which is below 1 - confidence
//! exactly when the interval leaves out 0. Resamples where a metric is undefined (an
//! arm without SERPs drawn) are left out of that metric's quantiles and count.

use crate::compare::rng::{below, Streams};
use crate::error::Result;
use crate::stats::resample_room;

use super::metrics::{Metric, SessionTable};

/// How to compare arms.
#[derive(Clone, Debug)]
pub struct Resampling {
    /// Bootstrap resamples (default 1000).
    pub n_resamples: usize,
    /// The seed (default 42).
    pub seed: u64,
    /// The interval's confidence (default 0.95).
    pub confidence: f64,
}

impl Default for Resampling {
    fn default() -> Self {
        Resampling {
            n_resamples: 1000,
            seed: 42,
            confidence: 0.95,
        }
    }
}

/// One arm against the baseline on one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The metric.
    pub metric: String,
    /// The baseline arm.
    pub baseline: String,
    /// The other arm.
    pub variant: String,
    /// The arm's value less the baseline's.
    pub difference: f64,
    /// The bootstrap interval of the difference.
    pub ci: (f64, f64),
    /// The two-sided bootstrap p-value.
    pub pvalue: f64,
}

/// A difference, its interval and its p-value.
pub(crate) type ArmDifference = (f64, (f64, f64), f64);

/// The differences of `arm` from `base` (session lists into `table`), with their
/// intervals and p-values, one per metric.
pub(crate) fn compare_arms(
    table: &SessionTable,
    base: &[usize],
    arm: &[usize],
    observed: (&[f64], &[f64]),
    how: &Resampling,
) -> Result<Vec<ArmDifference>> {
    crate::stats::check_resamples("n_resamples", how.n_resamples)?;
    crate::stats::check_confidence(how.confidence)?;
    let w = table.metrics.len();
    // the two arms' columns made side by side
    let arms = crate::parallel::map_chunks(&[base, arm], |m| Arm::new(table, m));
    let streams = Streams::new(how.seed);
    // every resample's w differences are held (in a list of their own: a header of
    // three words); too many resamples are refused here, not by the allocator's abort
    let n = how.n_resamples;
    drop(resample_room::<f64>(
        "n_resamples",
        n,
        n.saturating_mul(w + 4),
    )?);
    let mut rows: Vec<u64> = resample_room("n_resamples", n, n)?;
    rows.extend(0..n as u64);
    let diffs: Vec<Vec<f64>> =
        crate::parallel::map_with(&rows, Vec::new, |counts: &mut Vec<u32>, &r| {
            let mut rng = streams.stream(r);
            // a resample as counts: draw |arm| sessions of the arm with replacement
            let mut resample = |a: &Arm, counts: &mut Vec<u32>| {
                let n = a.members.len();
                counts.clear();
                counts.resize(n, 0);
                for _ in 0..n {
                    counts[below(&mut rng, n)] += 1;
                }
                a.values(counts)
            };
            let a = resample(&arms[0], counts);
            let b = resample(&arms[1], counts);
            b.iter().zip(&a).map(|(x, y)| x - y).collect()
        });
    let alpha = (1.0 - how.confidence) / 2.0;
    Ok((0..w)
        .map(|m| {
            let difference = observed.1[m] - observed.0[m];
            let mut d: Vec<f64> = diffs
                .iter()
                .map(|row| row[m])
                .filter(|v| !v.is_nan())
                .collect();
            if d.is_empty() || difference.is_nan() {
                return (difference, (f64::NAN, f64::NAN), f64::NAN);
            }
            d.sort_by(f64::total_cmp);
            let q = |p| crate::stats::quantile(&d, p);
            let low = d.iter().filter(|v| **v <= 0.0).count();
            let high = d.iter().filter(|v| **v >= 0.0).count();
            let p = (2.0 * (low.min(high) as f64 + 1.0) / (d.len() as f64 + 1.0)).min(1.0);
            (difference, (q(alpha), q(1.0 - alpha)), p)
        })
        .collect())
}

/// One arm's sessions as columns, each distinct numerator or denominator column once
/// (several metrics share the SERP count), so that a resample is one pass of its counts
/// over contiguous columns ([`column_sums`]).
struct Arm<'t> {
    members: &'t [usize],
    columns: Vec<Column>,
    /// Per metric, its numerator and denominator columns; `None`: the median.
    parts: Vec<Option<(usize, usize)>>,
    /// The times to first click, for their median (when a metric needs it).
    times: Option<Times>,
}

/// A column of an arm: dense; whole numbers below 2^16 as such (a quarter of the
/// memory a resample reads); or (whole numbers, mostly zero: clicks at position 9,
/// SERPs without results) its nonzero entries only. Products and sums of whole numbers
/// are exact in any order, so each gives the bits of the dense dot product.
enum Column {
    Dense(Vec<f64>),
    Whole(Vec<u16>),
    Sparse(Vec<u32>, Vec<f64>),
}

/// What is known of a column's values, for its kind ([`Shape::kind`]), gathered value
/// by value.
struct Shape {
    len: usize,
    /// Below it, a whole number's sums over any resample stay below 2^53.
    bound: f64,
    /// Whole numbers whose sums over any resample stay below 2^53 (exact).
    whole: bool,
    /// Whole numbers from 0 to 65535.
    small: bool,
    nonzero: usize,
}

/// The kinds of [`Column`].
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Dense,
    Whole,
    Sparse,
}

impl Shape {
    fn new(len: usize) -> Shape {
        Shape {
            len,
            bound: 9.0e15 / len.max(1) as f64,
            whole: true,
            small: true,
            nonzero: 0,
        }
    }

    #[inline]
    fn see(&mut self, v: f64) {
        self.whole &= v.fract() == 0.0 && v.abs() < self.bound;
        self.small &= (0.0..65536.0).contains(&v);
        self.nonzero += usize::from(v != 0.0);
    }

    fn kind(&self) -> Kind {
        if !self.whole {
            Kind::Dense
        } else if self.nonzero * 4 <= self.len {
            Kind::Sparse
        } else if self.small {
            Kind::Whole
        } else {
            Kind::Dense
        }
    }
}

impl Column {
    /// An empty column of `kind` with room for `len` values.
    fn empty(kind: Kind, len: usize, nonzero: usize) -> Column {
        match kind {
            Kind::Dense => Column::Dense(Vec::with_capacity(len)),
            Kind::Whole => Column::Whole(Vec::with_capacity(len)),
            Kind::Sparse => {
                Column::Sparse(Vec::with_capacity(nonzero), Vec::with_capacity(nonzero))
            }
        }
    }

    /// Value `v` of place `j` (places pushed in order; `v` fits the column's kind).
    #[inline]
    fn push(&mut self, j: usize, v: f64) {
        match self {
            Column::Dense(d) => d.push(v),
            Column::Whole(d) => d.push(v as u16),
            Column::Sparse(at, d) => {
                if v != 0.0 {
                    at.push(j as u32);
                    d.push(v);
                }
            }
        }
    }

    fn of(values: Vec<f64>) -> Column {
        let mut shape = Shape::new(values.len());
        values.iter().for_each(|&v| shape.see(v));
        if shape.kind() == Kind::Dense {
            return Column::Dense(values);
        }
        let mut c = Column::empty(shape.kind(), values.len(), shape.nonzero);
        for (j, &v) in values.iter().enumerate() {
            c.push(j, v);
        }
        c
    }
}

/// A resample's sums of an arm's columns, made in one pass over its counts by blocks
/// of [`BLOCK`] sessions (a block of counts stays in the cache while every column's
/// part of it is read), each dense sum in the four running sums of [`dot`] (blocks of a
/// multiple of 4 continue them), so its bits are the whole column's dot product's.
fn column_sums(columns: &[Column], counts: &[u32]) -> Vec<f64> {
    let n = counts.len();
    let lanes_end = n - n % 4;
    let mut acc = vec![[0.0f64; 4]; columns.len()];
    let mut whole = vec![0u64; columns.len()];
    for b in (0..lanes_end).step_by(BLOCK) {
        let e = (b + BLOCK).min(lanes_end);
        let c = &counts[b..e];
        for (k, col) in columns.iter().enumerate() {
            match col {
                Column::Dense(v) => {
                    for (x, y) in c.chunks_exact(4).zip(v[b..e].chunks_exact(4)) {
                        for l in 0..4 {
                            acc[k][l] += f64::from(x[l]) * y[l];
                        }
                    }
                }
                Column::Whole(v) => {
                    whole[k] += c
                        .iter()
                        .zip(&v[b..e])
                        .map(|(&x, &y)| u64::from(x) * u64::from(y))
                        .sum::<u64>();
                }
                Column::Sparse(..) => {}
            }
        }
    }
    let tail = &counts[lanes_end..];
    (columns.iter().enumerate())
        .map(|(k, col)| match col {
            Column::Dense(v) => {
                let t: f64 = (tail.iter().zip(&v[lanes_end..]))
                    .map(|(&x, y)| f64::from(x) * y)
                    .sum();
                let a = acc[k];
                (a[0] + a[1]) + (a[2] + a[3]) + t
            }
            Column::Whole(v) => {
                let t: u64 = (tail.iter().zip(&v[lanes_end..]))
                    .map(|(&x, &y)| u64::from(x) * u64::from(y))
                    .sum();
                (whole[k] + t) as f64
            }
            Column::Sparse(at, v) => at
                .iter()
                .zip(v)
                .fold(0.0, |a, (&j, x)| a + f64::from(counts[j as usize]) * x),
        })
        .collect()
}

/// Sessions per block of [`column_sums`] (a multiple of 4).
const BLOCK: usize = 2048;

/// An arm's times to first click, for the median of a resample's: the median of the
/// times of the drawn sessions, each as often as drawn, is the value at the middle
/// rank of all times sorted, each weighted by its session's count. Such a median lies
/// near the arm's own median, so the times are walked only through a band around it:
/// how many weighted times lie below the band is a dot product of the counts with each
/// session's number of times below it. Where the middle falls outside the band (rare),
/// every time is walked. The value is the same either way (numpy's median of the
/// resample's times, as `metrics::median` gives).
struct Times {
    /// (time, member) in time order.
    sorted: Vec<(f64, u32)>,
    /// The arm's columns of each member's number of times, and of its number of times
    /// before the band (their sums come with the other columns').
    count_col: usize,
    before_col: usize,
    band: std::ops::Range<usize>,
}

impl Times {
    /// The times of `members`, and the two columns their median reads (to be the
    /// arm's columns `first` and `first + 1`).
    fn new(table: &SessionTable, members: &[usize], first: usize) -> (Times, Vec<f64>, Vec<f64>) {
        let mut sorted: Vec<(f64, u32)> = Vec::new();
        let mut count = Vec::with_capacity(members.len());
        for (j, &s) in members.iter().enumerate() {
            let t = table.ttfc_of(s);
            sorted.extend(t.iter().map(|&v| (v, j as u32)));
            count.push(t.len() as f64);
        }
        sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        // a resample's middle rank moves by a few standard deviations of about
        // sqrt(m) / 2 (more where sessions have several times): 8 sqrt(m) each side
        let m = sorted.len();
        let k = 8 * (m as f64).sqrt() as usize + 64;
        let band = (m / 2).saturating_sub(k)..(m / 2 + k).min(m);
        let mut before = vec![0.0; members.len()];
        for &(_, j) in &sorted[..band.start] {
            before[j as usize] += 1.0;
        }
        let t = Times {
            sorted,
            count_col: first,
            before_col: first + 1,
            band,
        };
        (t, count, before)
    }

    /// The median of the times, each weighted by its session's count (NaN: none);
    /// `sums`: the resample's sums of the arm's columns.
    fn median(&self, sums: &[f64], counts: &[u32]) -> f64 {
        // whole numbers below 2^53: the sums are exact
        let total = sums[self.count_col] as u64;
        if total == 0 {
            return f64::NAN;
        }
        let hi = total / 2;
        let lo = if total % 2 == 1 { hi } else { hi - 1 };
        let before = sums[self.before_col] as u64;
        if before <= lo {
            if let Some(v) = self.walk(counts, self.band.clone(), before, lo, hi) {
                return v;
            }
        }
        self.walk(counts, 0..self.sorted.len(), 0, lo, hi)
            .unwrap_or(f64::NAN)
    }

    /// The median from the times `range`, `seen` weighted times lying before it, if
    /// the middle ranks `lo` and `hi` fall in it.
    fn walk(
        &self,
        counts: &[u32],
        range: std::ops::Range<usize>,
        mut seen: u64,
        lo: u64,
        hi: u64,
    ) -> Option<f64> {
        let mut low = None;
        for &(v, j) in &self.sorted[range] {
            let c = u64::from(counts[j as usize]);
            if c == 0 {
                continue;
            }
            seen += c;
            if low.is_none() && seen > lo {
                low = Some(v);
            }
            if seen > hi {
                let low = low.unwrap_or(v);
                return Some(if lo == hi { v } else { (low + v) / 2.0 });
            }
        }
        None
    }
}

impl<'t> Arm<'t> {
    fn new(table: &'t SessionTable, members: &'t [usize]) -> Arm<'t> {
        let w = table.metrics.len();
        // the candidate columns, as places in a session's row of numerators then
        // denominators: each metric's numerator (m) and denominator (w + m), the
        // median's excepted
        let wanted: Vec<usize> = (0..w)
            .filter(|&m| table.metrics[m] != Metric::TimeToFirstClick)
            .flat_map(|m| [m, w + m])
            .collect();
        // Every pass reads each member's row once, in order: a column gathered on its
        // own read the table with a stride of a row, a cache line per value (for 2.9 M
        // sessions and 21 metrics on one thread, most of a comparison's set-up time);
        // the columns that are equal (several metrics share the SERP count) are found
        // by their hashes first and made once.
        let mut row = vec![0.0; 2 * w];
        let mut rows = |f: &mut dyn FnMut(&[f64])| {
            for &s in members {
                row[..w].copy_from_slice(&table.num[s * w..(s + 1) * w]);
                row[w..].copy_from_slice(&table.den[s * w..(s + 1) * w]);
                f(&row);
            }
        };
        // each column's hash and shape (so that it is made in its kind at once)
        let mut hashes = vec![0u64; wanted.len()];
        let mut shapes: Vec<Shape> = wanted.iter().map(|_| Shape::new(members.len())).collect();
        rows(&mut |row| {
            for ((h, shape), &c) in hashes.iter_mut().zip(&mut shapes).zip(&wanted) {
                *h = (h.rotate_left(5) ^ row[c].to_bits()).wrapping_mul(HASH_MUL);
                shape.see(row[c]);
            }
        });
        // each column's first equal: the first of the same hash (itself a first), then
        // checked value by value
        let mut same: Vec<Option<usize>> = (0..wanted.len())
            .map(|i| (0..i).find(|&j| hashes[j] == hashes[i]))
            .collect();
        if same.iter().any(Option::is_some) {
            let mut equal = vec![true; wanted.len()];
            rows(&mut |row| {
                for (i, j) in same.iter().enumerate() {
                    if let Some(j) = *j {
                        equal[i] &= row[wanted[i]] == row[wanted[j]];
                    }
                }
            });
            for (j, eq) in same.iter_mut().zip(equal) {
                if !eq {
                    *j = None; // a hash shared by columns that differ: a column of its own
                }
            }
        }
        let distinct: Vec<usize> = (0..wanted.len()).filter(|&i| same[i].is_none()).collect();
        let mut columns: Vec<Column> = (distinct.iter())
            .map(|&i| Column::empty(shapes[i].kind(), members.len(), shapes[i].nonzero))
            .collect();
        let places: Vec<usize> = distinct.iter().map(|&i| wanted[i]).collect();
        let mut j = 0;
        rows(&mut |row| {
            for (col, &c) in columns.iter_mut().zip(&places) {
                col.push(j, row[c]);
            }
            j += 1;
        });
        let at = |c: usize| {
            let i = wanted.iter().position(|&x| x == c).unwrap_or(0);
            let first = same[i].unwrap_or(i);
            distinct.iter().position(|&d| d == first).unwrap_or(0)
        };
        let parts: Vec<Option<(usize, usize)>> = (0..w)
            .map(|m| (table.metrics[m] != Metric::TimeToFirstClick).then(|| (at(m), at(w + m))))
            .collect();
        let mut times = None;
        if parts.iter().any(Option::is_none) {
            let (t, count, before) = Times::new(table, members, columns.len());
            columns.extend([Column::of(count), Column::of(before)]);
            times = Some(t);
        }
        Arm {
            members,
            columns,
            parts,
            times,
        }
    }

    /// The metrics over the arm's sessions, each counted `counts[j]` times.
    fn values(&self, counts: &[u32]) -> Vec<f64> {
        let sums = column_sums(&self.columns, counts);
        let median = (self.times.as_ref()).map_or(f64::NAN, |t| t.median(&sums, counts));
        self.parts
            .iter()
            .map(|p| match p {
                None => median,
                Some((_, d)) if sums[*d] == 0.0 => f64::NAN,
                Some((n, d)) => sums[*n] / sums[*d],
            })
            .collect()
    }
}

/// The multiplier of the columns' hashes (the golden ratio's, as Fibonacci hashing).
const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// The dot product, in four running sums (the same order every time): the bits
/// [`column_sums`] gives.
#[cfg(test)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::metrics::{median, Rows};
    use proptest::prelude::*;

    proptest! {
        /// Every kind of column (dense, whole numbers, sparse), summed by blocks with
        /// the others, gives the plain dot product's bits, at lengths across blocks.
        #[test]
        fn column_sums_give_the_dot_products_bits(
            values in proptest::collection::vec((0u8..10, 0u8..3), 0..(3 * BLOCK + 7)),
            counts in proptest::collection::vec(0u8..5, 3 * BLOCK + 7),
            dense_cut in 0u8..10,
        ) {
            // mostly zeros (sparse), mostly whole numbers (whole), or a fraction (dense)
            let col = |zero_below: u8, frac: bool| -> Vec<f64> {
                values
                    .iter()
                    .map(|&(z, v)| {
                        if z < zero_below {
                            0.0
                        } else {
                            f64::from(v) + if frac && z == 9 { 0.5 } else { 0.0 }
                        }
                    })
                    .collect()
            };
            let cols = [col(8, false), col(dense_cut.min(2), false), col(dense_cut, true)];
            let n = values.len();
            let counts: Vec<u32> = counts[..n].iter().map(|&c| u32::from(c)).collect();
            let as_f64: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
            let want: Vec<u64> = cols.iter().map(|c| dot(&as_f64, c).to_bits()).collect();
            let got: Vec<u64> = column_sums(&cols.map(Column::of), &counts)
                .iter()
                .map(|v| v.to_bits())
                .collect();
            prop_assert_eq!(got, want);
        }

        /// The weighted median of the band (or of every time, where the middle falls
        /// outside it) is numpy's median of the times repeated as often as drawn.
        #[test]
        fn weighted_median_is_the_median_of_the_drawn_times(
            times in proptest::collection::vec(proptest::collection::vec(0u8..60, 0..4), 1..3000),
            counts in proptest::collection::vec(0u8..4, 3000),
            skew in 0u8..70,
        ) {
            let n = times.len();
            let mut ttfc = Vec::new();
            let mut ttfc_ends = vec![0];
            for t in &times {
                ttfc.extend(t.iter().map(|&v| f64::from(v) / 4.0));
                ttfc_ends.push(ttfc.len());
            }
            let table = SessionTable {
                metrics: vec![Metric::TimeToFirstClick],
                rows: Rows::Sessions,
                sessions: n,
                num: vec![0.0; n],
                den: vec![0.0; n],
                ttfc,
                ttfc_ends,
            };
            let members: Vec<usize> = (0..n).collect();
            let (t, count, before) = Times::new(&table, &members, 0);
            let columns = [Column::of(count), Column::of(before)];
            // counts drawn anywhere, or only on sessions whose times are all low (the
            // middle then lies below the band)
            let counts: Vec<u32> = (0..n)
                .map(|s| {
                    let low = times[s].iter().all(|&v| v < skew);
                    if skew < 60 && !low { 0 } else { u32::from(counts[s]) }
                })
                .collect();
            let mut drawn: Vec<f64> = (0..n)
                .flat_map(|s| {
                    let c = counts[s] as usize;
                    table.ttfc_of(s).iter().flat_map(move |&v| std::iter::repeat_n(v, c))
                })
                .collect();
            let want = median(&mut drawn);
            let got = t.median(&column_sums(&columns, &counts), &counts);
            prop_assert!(got == want || (got.is_nan() && want.is_nan()), "{got} != {want}");
        }
    }
}
