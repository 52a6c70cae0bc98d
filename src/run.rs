//! A run: for each query, the retrieved documents with their scores.

use crate::error::{show, Error, Result, Unit};
use crate::ids::{KeyIndex, RepeatFinder};
use crate::intake::{find_duplicate, id_problem, Grouper, Place, Rows};

/// The results of one query, in input order (they are ranked at evaluation time).
pub type RunQuery = Rows<f64>;

impl RunQuery {
    /// Positions of the documents in trec_eval order: score descending, ties broken by
    /// document id descending (byte order). Skips the sort when already in order, or
    /// when `RunQuery::ranking_kept` kept the order.
    pub fn ranking(&self, out: &mut Vec<u32>) {
        out.clear();
        match self.ranked.get() {
            Some(kept) => self.extend_kept(kept, out),
            None => {
                self.rank_into(out);
            }
        }
    }

    /// [`RunQuery::ranking`], keeping the order for the next consumer (nothing is kept
    /// when it is the arrival order). For work that ranks the same runs again and again
    /// (fusion, its grid search); see [`RunQuery::ranking_held`] for evaluation.
    pub(crate) fn ranking_kept(&self, out: &mut Vec<u32>) {
        if self.ranked.get().is_some() {
            return self.ranking(out);
        }
        let found = self.rank_into(out);
        self.keep(out, found);
    }

    /// Keep `out`, the ranking [`rank_into`] made as `found`: the arrival order as the
    /// empty ranking (no memory), any other as its positions.
    fn keep(&self, out: &[u32], found: Found) {
        let identity = match found {
            Found::Arrival => true,
            Found::Sorted => false,
            Found::TiesOrdered => out.iter().enumerate().all(|(i, &p)| p as usize == i),
        };
        let kept = self
            .ranked
            .get_or_init(|| if identity { Box::default() } else { out.into() });
        debug_assert!(kept.is_empty() || kept[..] == out[..]);
    }

    /// [`RunQuery::ranking`] for the evaluation of a held [`Run`], evaluated again and
    /// again (`compare` evaluates each run again; ranx's runs are sorted once, when
    /// made): kept where the scores needed a sort, 4 bytes a result; where they come
    /// in score order with no ties to reorder, kept as the empty ranking (no memory);
    /// not where ties were ordered by id (a pass again, and a run read from a file
    /// holds nothing more). One pass tells which ([`rank_into`]'s answer). Measured on
    /// 5 runs x 5,000 queries x 100 documents stored out of rank order, 4 measures, 1
    /// thread: medians 143-153 ms -> 95-97 ms for the second and later evaluations; in
    /// score order (callgrind, four evaluations of the five runs after a first):
    /// `rank_into` and `ranking` 64.6 M -> 28.4 M instructions.
    pub(crate) fn ranking_held(&self, out: &mut Vec<u32>) {
        if self.ranked.get().is_some() {
            return self.ranking(out);
        }
        match self.rank_into(out) {
            // in score order, its ties put in order by id: not kept (a run file's
            // ranking would then hold 4 bytes a result)
            Found::TiesOrdered => {}
            found => self.keep(out, found),
        }
    }

    /// The first `k` positions of [`RunQuery::ranking`] (all of them when `k` is at
    /// least the length), without sorting the rest ([`rank_top_into`]; `keyed` is its
    /// buffer).
    pub(crate) fn ranking_top(&self, k: usize, keyed: &mut Vec<(u64, u32)>, out: &mut Vec<u32>) {
        match self.ranked.get() {
            Some(kept) => {
                out.clear();
                if kept.is_empty() {
                    out.extend(0..self.values.len().min(k) as u32);
                } else {
                    out.extend_from_slice(&kept[..kept.len().min(k)]);
                }
            }
            None => rank_top_into(&self.values, &self.docs, k, keyed, out),
        }
    }

    fn extend_kept(&self, kept: &[u32], out: &mut Vec<u32>) {
        if kept.is_empty() {
            out.extend(0..self.values.len() as u32);
        } else {
            out.extend_from_slice(kept);
        }
    }

    /// The ranking into `out`, inlined into `ranking` (out of line, an L evaluation on
    /// one thread took 231-232 ms instead of 226-228: a Rust-only loop, best of 8).
    /// How it was found ([`rank_into`]'s answer).
    #[inline]
    fn rank_into(&self, out: &mut Vec<u32>) -> Found {
        rank_into(&self.values, &self.docs, out)
    }
}

/// How documents with equal scores are ordered in a ranking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ties {
    /// By document id descending: trec_eval's order (and ndeval's `-traditional`).
    #[default]
    DocDescending,
    /// By document id ascending: the order of pyndeval and of ir_measures' msmarco and
    /// judged providers (Python's sort by score, then id).
    DocAscending,
}

impl Ties {
    /// The order by name: `descending` or `ascending`.
    pub fn parse(name: &str) -> Result<Ties> {
        match name {
            "descending" => Ok(Ties::DocDescending),
            "ascending" => Ok(Ties::DocAscending),
            other => Err(Error::Option(format!(
                "ties must be 'descending' (trec_eval, ndeval -traditional) or 'ascending' \
                 (pyndeval; ir_measures' RR@k and Judged@k), got '{other}'"
            ))),
        }
    }

    /// Its name ([`Ties::parse`]'s).
    pub fn name(self) -> &'static str {
        match self {
            Ties::DocDescending => "descending",
            Ties::DocAscending => "ascending",
        }
    }

    /// Put `order`, a whole ranking in trec_eval's order ([`RunQuery::ranking`]; `s`
    /// the scores it indexes), in this order: each run of equal scores reversed for
    /// [`Ties::DocAscending`]. A ranking cut before its end may have lost part of its
    /// last run of ties: cut it after this.
    pub fn apply(self, s: &[f64], order: &mut [u32]) {
        if self == Ties::DocDescending {
            return;
        }
        let mut i = 0;
        while i < order.len() {
            let v = s[order[i] as usize];
            let mut j = i + 1;
            while j < order.len() && s[order[j] as usize] == v {
                j += 1;
            }
            order[i..j].reverse();
            i = j;
        }
    }
}

/// How [`rank_into`] found a ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The scores came in descending order with no ties: the arrival order.
    Arrival,
    /// In descending order with ties, each group of ties then ordered by id (perhaps
    /// as it came).
    TiesOrdered,
    /// Sorted: some score is below a later one, so not the arrival order.
    Sorted,
}

/// Positions of `docs` (with scores `s`) in trec_eval order into `out` (emptied
/// first): score descending, ties by document id descending ([`RunQuery::ranking`],
/// and fusion's grid search ranking each setting's fused scores); how they were found.
#[inline]
pub(crate) fn rank_into(s: &[f64], docs: &crate::ids::Ids, out: &mut Vec<u32>) -> Found {
    out.clear();
    // One branch-free pass (vectorized): already ordered by score (most run files)?
    // with tied scores?
    let (mut sorted, mut tied) = (true, false);
    for w in s.windows(2) {
        sorted &= w[0] >= w[1];
        tied |= w[0] == w[1];
    }
    if sorted {
        out.extend(0..s.len() as u32);
        if !tied {
            return Found::Arrival;
        }
    } else {
        // Sort by an integer key that orders scores descending, then fix ties.
        let mut keyed: Vec<(u64, u32)> = s
            .iter()
            .enumerate()
            .map(|(i, &x)| (descending_key(x), i as u32))
            .collect();
        keyed.sort_unstable();
        out.extend(keyed.iter().map(|&(_, i)| i));
    }
    order_ties(s, docs, out);
    if sorted {
        Found::TiesOrdered
    } else {
        Found::Sorted
    }
}

/// The first `k` positions of [`rank_into`]'s ranking (all of it when `k` is at least
/// the length), found without sorting the rest: the k best keys are selected, those
/// tied with the k-th are added from the rest (so that the tie-break by id sees the
/// whole group), and only they are sorted. `keyed` is a buffer for the keys. For
/// measures that read the top k only (fusion's grid search ranking ~150 candidates
/// for nDCG@10: the sort was a third of each setting).
pub(crate) fn rank_top_into(
    s: &[f64],
    docs: &crate::ids::Ids,
    k: usize,
    keyed: &mut Vec<(u64, u32)>,
    out: &mut Vec<u32>,
) {
    if k >= s.len() {
        rank_into(s, docs, out);
        return;
    }
    out.clear();
    if k == 0 {
        return;
    }
    if is_descending(s) {
        // the first k, and the ties of the k-th, in place
        let mut m = k;
        while m < s.len() && s[m] == s[k - 1] {
            m += 1;
        }
        out.extend(0..m as u32);
        order_ties(s, docs, out);
        out.truncate(k);
        return;
    }
    keyed.clear();
    keyed.extend(
        s.iter()
            .enumerate()
            .map(|(i, &x)| (descending_key(x), i as u32)),
    );
    let t = keyed.select_nth_unstable(k - 1).1 .0;
    let mut m = k;
    for i in k..keyed.len() {
        if keyed[i].0 == t {
            keyed.swap(m, i);
            m += 1;
        }
    }
    keyed[..m].sort_unstable();
    out.extend(keyed[..m].iter().map(|&(_, i)| i));
    order_ties(s, docs, out);
    out.truncate(k);
}

/// Whether `s` is in descending order: one pass without a branch (vectorized).
#[inline]
fn is_descending(s: &[f64]) -> bool {
    s.windows(2).fold(true, |sorted, w| sorted & (w[0] >= w[1]))
}

/// Order each run of tied scores in `out` (positions into `s`, by score descending) by
/// document id descending.
#[inline]
fn order_ties(s: &[f64], docs: &crate::ids::Ids, out: &mut [u32]) {
    let by_doc_desc = |a: &u32, b: &u32| docs.get(*b as usize).cmp(docs.get(*a as usize));
    let mut i = 0;
    while i < out.len() {
        let mut j = i + 1;
        while j < out.len() && s[out[j] as usize] == s[out[i] as usize] {
            j += 1;
        }
        if j - i > 1 {
            out[i..j].sort_unstable_by(by_doc_desc);
        }
        i = j;
    }
}

/// A key whose ascending order is the descending order of scores (-0.0 equals 0.0,
/// as in C comparisons; NaN never occurs in a run).
#[inline]
pub(crate) fn descending_key(x: f64) -> u64 {
    let x = if x == 0.0 { 0.0 } else { x };
    let b = x.to_bits();
    // total order of finite/infinite doubles as unsigned integers, then reversed
    let asc = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    !asc
}

/// A ranked-retrieval run, ordered by query id (byte order).
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub(crate) queries: Vec<RunQuery>,
    index: KeyIndex,
    pub(crate) runid: Vec<u8>,
}

impl Run {
    /// Start building a run in memory.
    pub fn builder() -> RunBuilder {
        RunBuilder::default()
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// True when there is no query.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Total number of (query, document) lines.
    pub fn num_results(&self) -> usize {
        self.queries.iter().map(|q| q.len()).sum()
    }

    /// The run with each score rounded to the nearest 32-bit float, as trec_eval 9 and
    /// pytrec_eval (which embeds it) hold scores in a C `float` (trec_eval 10 reads a
    /// `double`): scores closer than a float's precision then tie and are ordered by
    /// document id, magnitudes beyond 3.4e38 become infinite and below 1.4e-45 zero.
    pub fn with_float32_scores(&self) -> Run {
        let mut out = self.clone();
        for q in &mut out.queries {
            for v in &mut q.values {
                *v = f64::from(*v as f32);
            }
            q.ranked = std::sync::OnceLock::new();
        }
        out
    }

    /// The queries in byte order of their ids.
    pub fn queries(&self) -> &[RunQuery] {
        &self.queries
    }

    /// One query's results.
    pub fn query(&self, qid: &[u8]) -> Option<&RunQuery> {
        let pos = self.index.get(qid, |i| &self.queries[i].qid);
        pos.map(|i| &self.queries[i])
    }

    /// The run tag: the tag of the last line of a run file (trec_eval's `runid`).
    pub fn runid(&self) -> &[u8] {
        &self.runid
    }

    /// Set the run tag (empty: none, written as `irmetrics`). A tag holding whitespace
    /// or a NUL byte is refused ([`Error::Input`]): it could not be written to a TREC
    /// run and read back as it is.
    pub fn set_runid(&mut self, tag: &[u8]) -> Result<()> {
        check_runid(tag)?;
        self.runid = tag.to_vec();
        Ok(())
    }

    /// A run from the queries a [`Grouper`] gathered; fails, naming both places, if a
    /// document occurs twice for one query (trec_eval: "duplicate docs").
    pub(crate) fn from_grouper(g: Grouper<f64>, runid: Vec<u8>) -> Result<Run> {
        let (queries, origins, place) = g.finish();
        let dup = crate::parallel::find_first_with(&queries, RepeatFinder::default, |finder, q| {
            find_duplicate(&q.docs, finder).map(|d| (q.qid.clone(), d))
        });
        if let Some((qid, d)) = dup {
            // error path: find the query again
            if let Some(i) = queries.iter().position(|q| q.qid == qid) {
                return Err(place.duplicate(&queries[i], origins.get(i), d));
            }
        }
        Ok(Self::from_unique(queries, runid))
    }

    /// Build from queries known to hold no duplicate document (from dict keys).
    pub(crate) fn from_unique(queries: Vec<RunQuery>, runid: Vec<u8>) -> Run {
        let mut queries = queries;
        let index = KeyIndex::sorted(&mut queries, |q| &q.qid);
        Run {
            queries,
            index,
            runid,
        }
    }

    /// Approximate heap memory in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.queries
            .iter()
            .map(|q| {
                let kept = q.ranked.get().map_or(0, |k| 4 * k.len());
                q.docs.heap_bytes() + 8 * q.values.capacity() + kept
            })
            .sum()
    }
}

/// A run tag given from outside a run file (the Rust builders, Python's `name`): empty
/// (no tag) or an id that a TREC run can carry, the last field of a line (see
/// [`id_problem`]). Tags read from run files always are.
pub(crate) fn check_runid(tag: &[u8]) -> Result<()> {
    match id_problem(tag) {
        Some(p) if !tag.is_empty() => Err(Error::Input(format!("run tag '{}' {p}", show(tag)))),
        _ => Ok(()),
    }
}

/// Builds a [`Run`] one result at a time; a problem names the row (the number of
/// results added before it).
pub struct RunBuilder {
    rows: Grouper<f64>,
    runid: Vec<u8>,
}

impl Default for RunBuilder {
    fn default() -> Self {
        RunBuilder {
            rows: Grouper::new(Place::new("run", Unit::Row)),
            runid: Vec::new(),
        }
    }
}

impl RunBuilder {
    /// A builder whose messages name `place` (a file and its rows, for readers of
    /// other formats).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn at(place: Place) -> Self {
        RunBuilder {
            rows: Grouper::new(place),
            runid: Vec::new(),
        }
    }

    /// Add one result. Scores must not be NaN.
    pub fn add(&mut self, qid: &[u8], doc: &[u8], score: f64) -> Result<()> {
        self.rows.add(qid, doc, score)
    }

    /// The intake the rows go to, for producers of whole pieces of queries.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn grouper(&mut self) -> &mut Grouper<f64> {
        &mut self.rows
    }

    /// Set the run tag; refused as by [`Run::set_runid`].
    pub fn runid(&mut self, tag: &[u8]) -> Result<&mut Self> {
        check_runid(tag)?;
        self.runid = tag.to_vec();
        Ok(self)
    }

    /// Finish; fails if a document occurs twice for one query.
    pub fn build(self) -> Result<Run> {
        Run::from_grouper(self.rows, self.runid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_tags_that_a_run_file_cannot_carry_are_refused() {
        let mut b = Run::builder();
        for bad in [&b"a b"[..], b"a\tb", b"a\nb", b"a\0b", b" ", b"\r"] {
            let e = b
                .runid(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.starts_with("run tag '") && e.contains("whitespace or a NUL"),
                "{e}"
            );
        }
        b.runid(b"").unwrap();
        b.runid(b"bm25\xff").unwrap();
        b.add(b"q", b"d", 1.0).unwrap();
        let mut run = b.build().unwrap();
        assert_eq!(run.runid(), b"bm25\xff");
        assert!(matches!(run.set_runid(b"x y"), Err(Error::Input(_))));
        assert_eq!(run.runid(), b"bm25\xff", "a refused tag leaves the old one");
        run.set_runid(b"").unwrap();
        assert_eq!(run.runid(), b"");
    }

    /// The top k of `rank_top_into` are the first k of `rank_into`, for every k, on
    /// scores with long ties (the k-th inside a tie group, ties across the cut), -0.0
    /// beside 0.0 and infinities.
    #[test]
    fn the_top_k_are_the_ranking_cut_at_k() {
        let mut rng = crate::testing::Lcg::new(3);
        let mut next = |m: u64| rng.below(m);
        let (mut full, mut top, mut keyed) = (Vec::new(), Vec::new(), Vec::new());
        for n in [0usize, 1, 2, 5, 17, 60, 150] {
            for distinct in [1u64, 3, 10, 1000] {
                let mut docs = crate::ids::Ids::with_capacity(n, 0);
                let s: Vec<f64> = (0..n)
                    .map(|i| {
                        docs.push(format!("d{}", (i * 7919) % 1009).as_bytes())
                            .unwrap();
                        match next(distinct) {
                            0 => -0.0,
                            1 if distinct > 3 => f64::INFINITY,
                            v => v as f64 - 2.0,
                        }
                    })
                    .collect();
                // as drawn, and sorted descending (the path of ranked files)
                let mut sorted = s.clone();
                sorted.sort_by(|a, b| b.total_cmp(a));
                for s in [s, sorted] {
                    rank_into(&s, &docs, &mut full);
                    for k in 0..=n + 1 {
                        rank_top_into(&s, &docs, k, &mut keyed, &mut top);
                        assert_eq!(top[..], full[..k.min(n)], "n {n} distinct {distinct} k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn ranking_is_score_desc_then_doc_desc() {
        let mut b = Run::builder();
        for (d, s) in [
            ("a", 0.5),
            ("b", f64::INFINITY),
            ("c", -0.0),
            ("d", 0.0),
            ("e", -3.0),
            ("f", 0.5),
            ("g", f64::NEG_INFINITY),
            ("h", 1e-300),
        ] {
            b.add(b"q", d.as_bytes(), s).unwrap();
        }
        let run = b.build().unwrap();
        let q = &run.queries()[0];
        let mut order = Vec::new();
        q.ranking(&mut order);
        let docs: Vec<&[u8]> = order.iter().map(|&i| q.docs.get(i as usize)).collect();
        let expect: Vec<&[u8]> = vec![b"b", b"f", b"a", b"h", b"d", b"c", b"e", b"g"];
        assert_eq!(docs, expect);
        // kept: the second ranking is the first
        let mut again = Vec::new();
        q.ranking_kept(&mut again);
        assert_eq!(again, order);
        q.ranking(&mut again);
        assert_eq!(again, order);
        assert!(q.ranked.get().is_some_and(|k| k.len() == 8));
        // the top k of a kept ranking are its first k
        let mut keyed = Vec::new();
        for k in 0..=9 {
            q.ranking_top(k, &mut keyed, &mut again);
            assert_eq!(again[..], order[..k.min(8)], "k {k}");
        }
    }

    #[test]
    fn float32_scores_tie_where_the_doubles_differ() {
        let mut b = Run::builder();
        for (d, s) in [("a", 0.1 + 1e-9), ("b", 0.1), ("c", 1e-300), ("d", 1e39)] {
            b.add(b"q", d.as_bytes(), s).unwrap();
        }
        let run = b.build().unwrap();
        let mut order = Vec::new();
        run.queries()[0].ranking_kept(&mut order);
        assert_eq!(order, [3, 0, 1, 2]); // d, a, b, c
        let f = run.with_float32_scores();
        let q = &f.queries()[0];
        assert_eq!(q.values, [0.1f32 as f64, 0.1f32 as f64, 0.0, f64::INFINITY]);
        // the kept order is forgotten: a and b tie, the higher id first
        q.ranking(&mut order);
        assert_eq!(order, [3, 1, 0, 2]);
    }

    proptest::proptest! {
        /// The ranking is a plain sort by (score descending, id descending), for
        /// rankings given in order (with and without ties: the one-pass check) and
        /// shuffled.
        #[test]
        fn ranking_is_a_sort(
            scores in proptest::collection::vec(0u8..6, 0..40),
            in_order: bool,
        ) {
            let mut scores: Vec<f64> = scores.iter().map(|&x| f64::from(x) - 2.0).collect();
            if in_order {
                scores.sort_by(|a, b| b.total_cmp(a));
            }
            let mut q = RunQuery::new(b"q");
            for (i, &x) in scores.iter().enumerate() {
                // -0.0 for 0.0 at odd places: equal as scores
                let x = if x == 0.0 && i % 2 == 1 { -0.0 } else { x };
                q.push(format!("d{i:03}").as_bytes(), x).unwrap();
            }
            let mut expect: Vec<u32> = (0..scores.len() as u32).collect();
            expect.sort_by(|&a, &b| {
                let (x, y) = (scores[a as usize], scores[b as usize]);
                y.partial_cmp(&x).unwrap().then(b.cmp(&a))
            });
            let mut order = Vec::new();
            q.ranking(&mut order);
            proptest::prop_assert_eq!(order, expect);
        }
    }

    #[test]
    fn a_kept_ranking_is_forgotten_when_the_rows_change() {
        let mut q = RunQuery::new(b"q");
        q.push(b"a", 1.0).unwrap();
        q.push(b"b", 2.0).unwrap();
        let mut order = Vec::new();
        q.ranking_kept(&mut order);
        assert_eq!(order, [1, 0]);
        q.push(b"c", 3.0).unwrap();
        q.ranking_kept(&mut order);
        assert_eq!(order, [2, 1, 0]);
        q.truncate(1);
        q.ranking(&mut order);
        assert_eq!(order, [0]);
        // in order already: nothing is kept but the ranking is the same
        let mut s = RunQuery::new(b"s");
        s.push(b"x", 2.0).unwrap();
        s.push(b"y", 1.0).unwrap();
        s.ranking_kept(&mut order);
        assert_eq!(order, [0, 1]);
        assert_eq!(s.ranked.get().map(|k| k.len()), Some(0));
        s.ranking(&mut order);
        assert_eq!(order, [0, 1]);
    }
}
