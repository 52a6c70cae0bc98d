//! The fusion kernels: for one query, each run's list (candidate, normalized score; best
//! first) in, one fused score per candidate out. The additive methods add a term of each
//! run's entry into its candidate's sum; the others read a table of cells (candidate x
//! run: the run's normalized score and 0-based rank of the candidate, or absent). Each
//! follows the ranx function of its name; sums run over the runs in the order given, as
//! ranx's do.

use super::names::Method;

/// One run's view of one candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cell {
    /// The (normalized) score; 0.0 when absent (comb_sum and wsum read it as is).
    pub score: f64,
    /// The 0-based rank in the run's list; `u32::MAX` when absent.
    pub rank: u32,
}

impl Cell {
    pub(crate) const ABSENT: Cell = Cell {
        score: 0.0,
        rank: u32::MAX,
    };

    #[inline]
    fn present(self) -> bool {
        self.rank != u32::MAX
    }
}

/// The method's parameters, resolved (defaults filled in, checked).
#[derive(Clone, Debug)]
pub(crate) struct Setting<'a> {
    pub method: Method,
    pub weights: &'a [f64],
    pub k: f64,
    pub phi: f64,
    pub gamma: f64,
    pub sigma: f64,
    /// What a trained method learnt.
    pub model: Option<&'a super::trained::Model>,
}

/// A kernel's work area, reused from query to query: the fused scores and what the
/// methods need to compute them.
#[derive(Default)]
pub(crate) struct Combiner {
    /// The fused score of each candidate, after [`Combiner::combine`].
    pub fused: Vec<f64>,
    /// Per candidate: how many runs hold it (additive methods).
    count: Vec<u32>,
    /// The table of cells (other methods), row-major (candidate, run).
    cells: Vec<Cell>,
    lens: Vec<usize>,
    tmp: Vec<f64>,
}

impl Combiner {
    /// Fuse `lists` (per run: (candidate, score), best first) of `n_cand` candidates
    /// into [`Combiner::fused`].
    pub(crate) fn combine<'l>(
        &mut self,
        s: &Setting<'_>,
        lists: impl ExactSizeIterator<Item = &'l [(u32, f64)]>,
        n_cand: usize,
    ) {
        if is_additive(s.method) {
            self.start_sums(s, n_cand);
            for (r, list) in lists.enumerate() {
                let cells = list.iter().enumerate().map(|(pos, &(c, score))| {
                    let rank = pos as u32;
                    (c, Cell { score, rank })
                });
                self.add_run(s, r, cells);
            }
            self.finish_sums(s);
            return;
        }
        let n_runs = lists.len();
        self.cells.clear();
        self.cells.resize(n_cand * n_runs, Cell::ABSENT);
        self.lens.clear();
        for (r, list) in lists.enumerate() {
            self.lens.push(list.len());
            for (pos, &(c, score)) in list.iter().enumerate() {
                self.cells[c as usize * n_runs + r] = Cell {
                    score,
                    rank: pos as u32,
                };
            }
        }
        from_cells(s, &self.cells, &self.lens, &mut self.fused, &mut self.tmp);
    }

    /// The additive methods ([`is_additive`]), in three steps: the sums of `n_cand`
    /// candidates started at +0.0, each run's cells (candidate, cell; any order within
    /// a run) added in run order ([`Combiner::add_run`]), then each sum made the fused
    /// score ([`Combiner::finish_sums`]). A candidate's sum takes the same terms in the
    /// same order as a sum along its row of cells skipping the absent runs, so the bits
    /// are the same. Skipping is adding nothing: a sum starts at +0.0, so it is never
    /// -0.0 (a rounded sum is -0.0 only when both terms are), and `a + 0.0 == a` for
    /// every other `a`, NaN and infinities included; comb_sum's and wsum's absent 0.0
    /// (times a finite weight: +0.0 or -0.0) adds nothing either. The table of cells
    /// this replaces (5 runs, ~200 candidates a query: 1,000 cells filled for 500
    /// entries, then each row a chain of dependent additions) was 19% of a fusion of 5
    /// runs x 5,000 queries x 100 documents with mnz (one thread).
    pub(crate) fn start_sums(&mut self, s: &Setting<'_>, n_cand: usize) {
        self.fused.clear();
        self.fused.resize(n_cand, 0.0);
        self.count.clear();
        self.count.resize(n_cand, 0);
        if s.method == Method::Wmnz {
            self.tmp.clear();
            self.tmp.resize(n_cand, 0.0);
        }
    }

    /// Run `r`'s cells added into the sums (see [`Combiner::start_sums`]); each of its
    /// candidates once.
    #[inline(always)]
    pub(crate) fn add_run(
        &mut self,
        s: &Setting<'_>,
        r: usize,
        cells: impl Iterator<Item = (u32, Cell)> + Clone,
    ) {
        use Method::*;
        let w = s.weights.get(r).copied().unwrap_or(1.0);
        let (out, count) = (&mut self.fused, &mut self.count);
        // the method matched once per run, each arm a loop of its own
        match s.method {
            Sum | Mnz | Anz | Gmnz | Wmnz => add_terms(cells.clone(), out, count, |c| c.score),
            Wsum => add_terms(cells.clone(), out, count, |c| w * c.score),
            Mixed => add_terms(cells.clone(), out, count, |c| c.score * w),
            Rrf => add_terms(cells.clone(), out, count, |c| {
                1.0 / (s.k + c.rank as f64 + 1.0)
            }),
            Isr | LogIsr | LognIsr => add_terms(cells.clone(), out, count, isr),
            Rbc => add_terms(cells.clone(), out, count, |c| {
                (1.0 - s.phi) * powi(s.phi, c.rank)
            }),
            // not additive: never sent here (see `Combiner::combine`)
            _ => out.fill(f64::NAN),
        }
        if s.method == Wmnz {
            for (c, _) in cells {
                self.tmp[c as usize] += w;
            }
        }
    }

    /// Each sum made the method's fused score (see [`Combiner::start_sums`]).
    pub(crate) fn finish_sums(&mut self, s: &Setting<'_>) {
        use Method::*;
        let (out, count) = (&mut self.fused, &self.count);
        match s.method {
            Mnz | Isr => scale(out, count, |x, c| x * c),
            Anz => scale(out, count, |x, c| x / c),
            Gmnz => scale(out, count, |x, c| x * c.powf(s.gamma)),
            Mixed => scale(out, count, |x, c| x * c.sqrt()),
            LogIsr => scale(out, count, |x, c| x * c.ln()),
            LognIsr => scale(out, count, |x, c| x * (c + s.sigma).ln()),
            Wmnz => {
                for (x, w) in out.iter_mut().zip(self.tmp.iter()) {
                    *x *= *w;
                }
            }
            _ => {}
        }
    }

    /// Drop the sums of candidates `n_cand..` (made room for, never reached).
    pub(crate) fn truncate_sums(&mut self, n_cand: usize) {
        self.fused.truncate(n_cand);
        self.count.truncate(n_cand);
        self.tmp.truncate(n_cand);
    }
}

/// Whether the method's fused score is a sum, over the runs holding a candidate in run
/// order, of a term of the run's cell, then a function of that sum and of the runs
/// holding it ([`Combiner::start_sums`] computes those from the lists, with no table of
/// cells). comb_sum and wsum count an absent candidate's score as 0.0: a sum over the
/// present ones all the same (see [`Combiner::start_sums`]).
pub(crate) fn is_additive(m: Method) -> bool {
    use Method::*;
    matches!(
        m,
        Sum | Wsum | Mnz | Anz | Gmnz | Wmnz | Mixed | Rrf | Isr | LogIsr | LognIsr | Rbc
    )
}

/// Whether an additive method's term reads the cell's rank (the others read its
/// score alone).
pub(crate) fn reads_ranks(m: Method) -> bool {
    use Method::*;
    matches!(m, Rrf | Isr | LogIsr | LognIsr | Rbc)
}

/// Each candidate's sum `x` replaced by `f(x, runs holding it)`.
#[inline(always)]
fn scale(out: &mut [f64], count: &[u32], f: impl Fn(f64, f64) -> f64) {
    for (x, &c) in out.iter_mut().zip(count) {
        *x = f(*x, f64::from(c));
    }
}

/// `term` of each cell of a run added to its candidate's sum, and the candidate
/// counted: one loop compiled for each method.
#[inline(always)]
fn add_terms(
    cells: impl Iterator<Item = (u32, Cell)>,
    out: &mut [f64],
    count: &mut [u32],
    term: impl Fn(Cell) -> f64,
) {
    for (c, cell) in cells {
        out[c as usize] += term(cell);
        count[c as usize] += 1;
    }
}

/// Fused scores of the `n_cand` candidates of one query into `out`, for the methods
/// that are not additive (they read every run's cell of a candidate, absent ones
/// included, or compare candidates). `cells` is row-major (candidate, run); `list_lens`
/// the length of each run's list.
fn from_cells(
    s: &Setting<'_>,
    cells: &[Cell],
    list_lens: &[usize],
    out: &mut Vec<f64>,
    tmp: &mut Vec<f64>,
) {
    use Method::*;
    let n_runs = list_lens.len();
    out.clear();
    if n_runs == 0 {
        return;
    }
    let n_cand = cells.len() / n_runs;
    // The method is matched once, each arm a loop of its own over the candidates.
    let w = |r: usize| s.weights.get(r).copied().unwrap_or(1.0);
    match s.method {
        // comb_max / comb_min: absent is -1e9 / 1e9
        Max => fill(cells, n_runs, out, |row| {
            row.iter()
                .map(|c| score_or(*c, -1e9))
                .fold(f64::NEG_INFINITY, |a, x| if x > a { x } else { a })
        }),
        Min => fill(cells, n_runs, out, |row| {
            row.iter()
                .map(|c| score_or(*c, 1e9))
                .fold(f64::INFINITY, |a, x| if x < a { x } else { a })
        }),
        Med => {
            for row in cells.chunks_exact(n_runs) {
                tmp.clear();
                tmp.extend(row.iter().filter(|c| c.present()).map(|c| c.score));
                out.push(median(tmp));
            }
        }
        BordaFuse => fill(cells, n_runs, out, |row| {
            row.iter()
                .enumerate()
                .fold(0.0, |a, (r, c)| a + borda(*c, n_cand, list_lens[r]))
        }),
        WBordaFuse => fill(cells, n_runs, out, |row| {
            row.iter()
                .enumerate()
                .fold(0.0, |a, (r, c)| a + w(r) * borda(*c, n_cand, list_lens[r]))
        }),
        // trained: the model's score per run, summed (absent: the model's own)
        BayesFuse | MapFuse | PosFuse | ProbFuse | SegFuse | SlideFuse => match s.model {
            Some(m) => fill(cells, n_runs, out, |row| {
                row.iter().enumerate().fold(0.0, |a, (r, c)| {
                    a + if c.present() {
                        m.score(r, c.rank as usize, list_lens[r], c.score)
                    } else {
                        m.absent()
                    }
                })
            }),
            None => out.resize(n_cand, f64::NAN),
        },
        Condorcet | WCondorcet => condorcet(s, cells, n_runs, n_cand, out),
        // additive: never sent here (see `Combiner::combine`)
        Sum | Wsum | Mnz | Anz | Gmnz | Wmnz | Mixed | Rrf | Isr | LogIsr | LognIsr | Rbc => {
            out.resize(n_cand, f64::NAN)
        }
    }
}

/// `f` of each candidate's row of cells into `out`: one loop compiled for each
/// method.
#[inline(always)]
fn fill(cells: &[Cell], n_runs: usize, out: &mut Vec<f64>, f: impl Fn(&[Cell]) -> f64) {
    out.extend(cells.chunks_exact(n_runs).map(f));
}

#[inline]
fn score_or(c: Cell, absent: f64) -> f64 {
    if c.present() {
        c.score
    } else {
        absent
    }
}

/// ranx's `1 / ((i + 1) ** 2)` in integers, then divided.
#[inline]
fn isr(c: Cell) -> f64 {
    let r = c.rank as f64 + 1.0;
    1.0 / (r * r)
}

/// BordaFuse points: `c - i` for rank `i` of `c` candidates; `(c - n + 1) / 2` for a
/// candidate missing from a list of `n`.
#[inline]
fn borda(c: Cell, n_cand: usize, n: usize) -> f64 {
    if c.present() {
        (n_cand - c.rank as usize) as f64
    } else {
        (n_cand as f64 - n as f64 + 1.0) / 2.0
    }
}

/// `x ** n` by repeated squaring, as numba (and compiler-rt's `__powidf2`) computes a
/// float to an integer power.
fn powi(x: f64, n: u32) -> f64 {
    let (mut r, mut a, mut e) = (1.0, x, n);
    loop {
        if e & 1 == 1 {
            r *= a;
        }
        e >>= 1;
        if e == 0 {
            return r;
        }
        a *= a;
    }
}

/// numpy's median: the middle value, or the mean of the two middle ones.
fn median(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    v.sort_unstable_by(f64::total_cmp);
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// ranx's (weighted) Condorcet: candidates sorted with its pairwise comparison (`x`
/// before `y` when the weight of the runs ranking `x` strictly above `y` is at least
/// that of the others; a candidate missing from a run ranks below every present one
/// there), then scored `c - position`. The comparison is a total order when pairwise
/// majorities are; otherwise ranx's result depends on Python's set order (the string
/// hash seed), and this one is a stable merge sort from the order of first appearance.
fn condorcet(s: &Setting<'_>, cells: &[Cell], n_runs: usize, n_cand: usize, out: &mut Vec<f64>) {
    let weight = |r: usize| {
        if s.method == Method::WCondorcet {
            s.weights.get(r).copied().unwrap_or(1.0)
        } else {
            1.0
        }
    };
    let row = |c: u32| &cells[c as usize * n_runs..(c as usize + 1) * n_runs];
    let before = |x: u32, y: u32| {
        let (rx, ry) = (row(x), row(y));
        let (mut xv, mut yv) = (0.0, 0.0);
        for r in 0..n_runs {
            if rx[r].rank < ry[r].rank {
                xv += weight(r);
            } else {
                yv += weight(r);
            }
        }
        xv >= yv
    };
    let mut order: Vec<u32> = (0..n_cand as u32).collect();
    merge_sort(&mut order, &before);
    out.clear();
    out.resize(n_cand, 0.0);
    for (pos, &c) in order.iter().enumerate() {
        out[c as usize] = (n_cand - pos) as f64;
    }
}

/// A stable top-down merge sort that takes from the right half only when its head
/// comes strictly `before` the left's (as Python's sort does with `a < b`); never
/// panics, whatever the comparison.
fn merge_sort(v: &mut [u32], before: &dyn Fn(u32, u32) -> bool) {
    if v.len() < 2 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], before);
    merge_sort(&mut v[mid..], before);
    let left = v[..mid].to_vec();
    let right = v[mid..].to_vec();
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        let take_right = j < right.len() && (i >= left.len() || before(right[j], left[i]));
        if take_right {
            *slot = right[j];
            j += 1;
        } else {
            *slot = left[i];
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(score: f64, rank: u32) -> Cell {
        Cell { score, rank }
    }

    fn run(method: Method, weights: &[f64], cells: &[Cell], lens: &[usize]) -> Vec<f64> {
        let s = Setting {
            method,
            weights,
            k: 60.0,
            phi: 0.5,
            gamma: 2.0,
            sigma: 0.01,
            model: None,
        };
        // the cells as lists: each run's present candidates by rank
        let n_runs = lens.len();
        let lists: Vec<Vec<(u32, f64)>> = (0..n_runs)
            .map(|r| {
                let mut l: Vec<(u32, Cell)> = (cells.iter().skip(r).step_by(n_runs))
                    .enumerate()
                    .filter(|(_, c)| c.present())
                    .map(|(i, &c)| (i as u32, c))
                    .collect();
                l.sort_by_key(|(_, c)| c.rank);
                assert_eq!(l.len(), lens[r]);
                l.into_iter().map(|(i, c)| (i, c.score)).collect()
            })
            .collect();
        let mut k = Combiner::default();
        let n_cand = cells.len() / n_runs;
        k.combine(&s, lists.iter().map(|l| l.as_slice()), n_cand);
        k.fused
    }

    /// Two runs: a = [x 0.9, y 0.5], b = [y 0.8]. Candidates x, y.
    #[test]
    fn kernels_by_hand() {
        let a = Cell::ABSENT;
        let cells = [cell(0.9, 0), a, cell(0.5, 1), cell(0.8, 0)];
        let lens = [2, 1];
        let w = [0.25, 0.75];
        assert_eq!(run(Method::Sum, &[], &cells, &lens), [0.9, 0.5 + 0.8]);
        assert_eq!(
            run(Method::Wsum, &w, &cells, &lens),
            [0.25 * 0.9, 0.25 * 0.5 + 0.75 * 0.8]
        );
        assert_eq!(
            run(Method::Mnz, &[], &cells, &lens),
            [0.9, (0.5 + 0.8) * 2.0]
        );
        assert_eq!(
            run(Method::Anz, &[], &cells, &lens),
            [0.9, (0.5 + 0.8) / 2.0]
        );
        assert_eq!(
            run(Method::Gmnz, &[], &cells, &lens),
            [0.9, (0.5 + 0.8) * 4.0]
        );
        assert_eq!(
            run(Method::Wmnz, &w, &cells, &lens),
            [0.9 * 0.25, (0.5 + 0.8) * 1.0]
        );
        assert_eq!(run(Method::Max, &[], &cells, &lens), [0.9, 0.8]);
        assert_eq!(run(Method::Min, &[], &cells, &lens), [0.9, 0.5]);
        assert_eq!(
            run(Method::Med, &[], &cells, &lens),
            [0.9, (0.5 + 0.8) / 2.0]
        );
        assert_eq!(
            run(Method::Mixed, &w, &cells, &lens),
            [0.9 * 0.25, (0.5 * 0.25 + 0.8 * 0.75) * 2f64.sqrt()]
        );
        assert_eq!(
            run(Method::Rrf, &[], &cells, &lens),
            [1.0 / 61.0, 1.0 / 62.0 + 1.0 / 61.0]
        );
        assert_eq!(
            run(Method::Isr, &[], &cells, &lens),
            [1.0, (0.25 + 1.0) * 2.0]
        );
        assert_eq!(
            run(Method::LogIsr, &[], &cells, &lens),
            [0.0, 1.25 * 2f64.ln()]
        );
        assert_eq!(run(Method::Rbc, &[], &cells, &lens), [0.5, 0.5 * 0.5 + 0.5]);
        // Borda: 2 candidates; x missing from b (n = 1): (2 - 1 + 1) / 2 = 1
        assert_eq!(
            run(Method::BordaFuse, &[], &cells, &lens),
            [2.0 + 1.0, 1.0 + 2.0]
        );
        assert_eq!(
            run(Method::WBordaFuse, &w, &cells, &lens),
            [0.25 * 2.0 + 0.75 * 1.0, 0.25 * 1.0 + 0.75 * 2.0]
        );
    }

    #[test]
    fn condorcet_by_majority() {
        // three runs over x, y, z: x > y > z in two, z > y > x in one
        let r = |x, y, z| [cell(0.0, x), cell(0.0, y), cell(0.0, z)];
        let (a, b, c) = (r(0, 1, 2), r(0, 1, 2), r(2, 1, 0));
        let mut cells = Vec::new();
        for cand in 0..3 {
            cells.extend([a[cand], b[cand], c[cand]]);
        }
        assert_eq!(
            run(Method::Condorcet, &[], &cells, &[3, 3, 3]),
            [3.0, 2.0, 1.0]
        );
        // the third run outweighs the others
        assert_eq!(
            run(Method::WCondorcet, &[0.2, 0.2, 0.7], &cells, &[3, 3, 3]),
            [1.0, 2.0, 3.0]
        );
    }

    #[test]
    fn powi_is_repeated_squaring() {
        assert_eq!(powi(0.5, 0), 1.0);
        assert_eq!(powi(0.5, 3), 0.125);
        assert_eq!(powi(3.0, 5), 243.0);
    }
}
