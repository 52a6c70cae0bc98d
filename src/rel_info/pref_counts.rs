//! One query's preferences laid over one ranking: for each judgment group, how many of
//! its preferences the ranking fulfils, in trec_eval's categories (`form_prefs_counts.c`):
//! both documents retrieved, one of them (implied), or neither.
//!
//! Documents are numbered by "docid rank": the judged documents the run retrieved come
//! first, in ranking order (0 .. `num_judged_ret`), then the unretrieved ones in
//! document-id order. A preference "a over b" is fulfilled when a's docid rank is the
//! smaller. A group with one sub-group is a list of equivalence classes (equal levels);
//! a group with several sub-groups is a preference relation made transitive (a bit
//! matrix over the query's judged documents), as in trec_eval.

use crate::error::{Error, Result};

/// A square bit matrix: `get(i, j)` is "document i is preferred to document j".
pub(super) struct BitMatrix {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    fn new(n: usize) -> BitMatrix {
        let words = n.div_ceil(64);
        BitMatrix {
            n,
            words,
            bits: vec![0; n * words],
        }
    }

    fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    fn set(&mut self, i: usize, j: usize) {
        self.bits[i * self.words + j / 64] |= 1 << (j % 64);
    }

    fn clear(&mut self, i: usize, j: usize) {
        self.bits[i * self.words + j / 64] &= !(1 << (j % 64));
    }

    pub(super) fn get(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }

    /// Transitive closure (Warshall's algorithm, a row of words at a time).
    fn close(&mut self) {
        for k in 0..self.n {
            for i in 0..self.n {
                if i != k && self.get(i, k) {
                    for w in 0..self.words {
                        let src = self.bits[k * self.words + w];
                        self.bits[i * self.words + w] |= src;
                    }
                }
            }
        }
    }

    /// The columns set in row `i`, ascending.
    pub(super) fn ones(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.row(i).iter().enumerate().flat_map(|(w, &word)| {
            let mut x = word;
            std::iter::from_fn(move || {
                (x != 0).then(|| {
                    let b = x.trailing_zeros() as usize;
                    x &= x - 1;
                    w * 64 + b
                })
            })
        })
    }

    /// How many columns in `lo..hi` row `i` has set.
    fn count(&self, i: usize, lo: usize, hi: usize) -> u64 {
        if lo >= hi {
            return 0;
        }
        let row = self.row(i);
        let (wl, wh) = (lo / 64, (hi - 1) / 64);
        let mut total = 0;
        for (w, &word) in row.iter().enumerate().take(wh + 1).skip(wl) {
            let mut x = word;
            if w == wl {
                x &= !0u64 << (lo % 64);
            }
            if w == wh && hi % 64 != 0 {
                x &= !0u64 >> (64 - hi % 64);
            }
            total += u64::from(x.count_ones());
        }
        total
    }
}

/// Documents of one level in a single-sub-group judgment group; `ranks` ascending.
pub(super) struct Class {
    pub(super) level: f64,
    pub(super) ranks: Vec<u32>,
}

/// How a judgment group's preferences are held.
pub(super) enum Relation {
    /// One sub-group: classes of equal level, best first.
    Classes(Vec<Class>),
    /// Several sub-groups: the transitive preference relation over the query's judged
    /// documents, and each document's level (-1 when the group does not judge it).
    Matrix {
        /// `prefers.get(i, j)`: i preferred to j.
        prefers: BitMatrix,
        /// Level of each document in the group.
        levels: Vec<f64>,
    },
}

impl Default for Relation {
    fn default() -> Self {
        Relation::Classes(Vec::new())
    }
}

/// One judgment group's counts (trec_eval's `JG`). `possible_*` include the
/// fulfilled ones.
#[derive(Default)]
pub(super) struct Group {
    pub(super) fulfilled_ret: u64,
    pub(super) possible_ret: u64,
    pub(super) fulfilled_imp: u64,
    pub(super) possible_imp: u64,
    pub(super) possible_notoccur: u64,
    pub(super) num_rel: u64,
    pub(super) num_rel_ret: u64,
    pub(super) num_nonrel: u64,
    pub(super) num_nonrel_ret: u64,
    pub(super) relation: Relation,
}

/// A query's counts over one ranking.
pub(super) struct QueryCounts {
    pub(super) groups: Vec<Group>,
    pub(super) num_judged: usize,
    pub(super) num_judged_ret: usize,
    /// `pairs[i * num_judged + j]`: how many groups prefer document i to j (only when
    /// a pair measure asks for it).
    pub(super) pairs: Option<Vec<u32>>,
}

/// One preference line of a query, with its document's docid rank: the group and
/// sub-group as numbers whose order is their ids' byte order.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) group: u32,
    pub(super) sub: u32,
    pub(super) level: f64,
    pub(super) rank: u32,
}

/// What a contradiction names: the query, the group and the documents involved
/// (by docid rank; `name` turns a rank into the document's id).
pub(super) struct Names<'a> {
    pub(super) query: &'a str,
    pub(super) group: &'a dyn Fn(u32) -> String,
    pub(super) doc: &'a dyn Fn(u32) -> String,
}

/// Count the preferences of `entries` (all of one query) over a ranking that retrieved
/// `num_judged_ret` of the `num_judged` judged documents.
pub(super) fn count(
    mut entries: Vec<Entry>,
    num_judged: usize,
    num_judged_ret: usize,
    want_pairs: bool,
    names: &Names,
) -> Result<QueryCounts> {
    // trec_eval's order: group, sub-group, level descending, docid rank
    entries.sort_by(|a, b| {
        (a.group, a.sub)
            .cmp(&(b.group, b.sub))
            .then(b.level.total_cmp(&a.level))
            .then(a.rank.cmp(&b.rank))
    });
    let mut out = QueryCounts {
        groups: Vec::new(),
        num_judged,
        num_judged_ret,
        pairs: want_pairs.then(|| vec![0; num_judged * num_judged]),
    };
    for group in entries.chunk_by(|a, b| a.group == b.group) {
        let several = group.windows(2).any(|w| w[0].sub != w[1].sub);
        let g = if several {
            matrix_group(group, &mut out, names)?
        } else {
            class_group(group, &mut out)
        };
        out.groups.push(g);
    }
    Ok(out)
}

/// Pairs (x, y), x from `xs` and y from `ys` (both ascending), with x < y.
fn pairs_ascending(xs: &[u32], ys: &[u32]) -> u64 {
    let mut below = 0;
    let mut total = 0;
    for &y in ys {
        while below < xs.len() && xs[below] < y {
            below += 1;
        }
        total += below as u64;
    }
    total
}

/// A group with one sub-group: every document of a better class is preferred to every
/// document of a worse one.
fn class_group(group: &[Entry], out: &mut QueryCounts) -> Group {
    let classes: Vec<Class> = group
        .chunk_by(|a, b| a.level == b.level)
        .map(|c| Class {
            level: c[0].level,
            ranks: c.iter().map(|e| e.rank).collect(),
        })
        .collect();
    let njr = out.num_judged_ret as u32;
    let retrieved = |c: &Class| c.ranks.partition_point(|&r| r < njr);
    let mut g = Group::default();
    for (i, c1) in classes.iter().enumerate() {
        let a = retrieved(c1);
        let (a_n, a_out) = (a as u64, (c1.ranks.len() - a) as u64);
        if c1.level > 0.0 {
            g.num_rel_ret += a_n;
            g.num_rel += c1.ranks.len() as u64;
        } else {
            g.num_nonrel_ret += a_n;
            g.num_nonrel += c1.ranks.len() as u64;
        }
        for c2 in &classes[i + 1..] {
            let b = retrieved(c2);
            let (b_n, b_out) = (b as u64, (c2.ranks.len() - b) as u64);
            // both retrieved: fulfilled when the better one ranks higher
            let ful = pairs_ascending(&c1.ranks[..a], &c2.ranks[..b]);
            g.fulfilled_ret += ful;
            g.possible_ret += a_n * b_n - ful;
            // one retrieved: fulfilled exactly when it is the better one
            g.fulfilled_imp += a_n * b_out;
            g.possible_imp += a_out * b_n;
            g.possible_notoccur += a_out * b_out;
            if let Some(p) = out.pairs.as_mut() {
                for &r1 in &c1.ranks {
                    for &r2 in &c2.ranks {
                        p[r1 as usize * out.num_judged + r2 as usize] += 1;
                    }
                }
            }
        }
    }
    g.possible_ret += g.fulfilled_ret;
    g.possible_imp += g.fulfilled_imp;
    g.relation = Relation::Classes(classes);
    g
}

/// A group with several sub-groups: each sub-group prefers its better documents to its
/// worse ones; the union is made transitive and must not contradict itself.
fn matrix_group(group: &[Entry], out: &mut QueryCounts, names: &Names) -> Result<Group> {
    let n = out.num_judged;
    let njr = out.num_judged_ret;
    let mut prefers = BitMatrix::new(n);
    let mut levels = vec![-1.0; n];
    let contradiction = |msg: String| {
        Error::Input(format!(
            "query '{}', judgment group '{}': {msg}; a judgment group must be consistent \
             (put disagreeing judgments in different groups)",
            names.query,
            (names.group)(group[0].group)
        ))
    };
    for (i, e) in group.iter().enumerate() {
        let r = e.rank as usize;
        let old: f64 = levels[r];
        if (old > 0.0 && e.level == 0.0) || (old == 0.0 && e.level > 0.0) {
            return Err(contradiction(format!(
                "document '{}' has level 0 (non-relevant) in one sub-group and a positive \
                 level in another",
                (names.doc)(e.rank)
            )));
        }
        levels[r] = e.level;
        let same_sub = |f: &&Entry| f.sub == e.sub;
        for f in group[i + 1..]
            .iter()
            .take_while(same_sub)
            .skip_while(|f| f.level == e.level)
        {
            prefers.set(r, f.rank as usize);
        }
    }
    prefers.close();
    for i in 0..n {
        prefers.clear(i, i);
    }
    for i in 0..n {
        if let Some(j) = prefers.ones(i).find(|&j| prefers.get(j, i)) {
            return Err(contradiction(format!(
                "documents '{}' and '{}' are each preferred to the other (through its \
                 sub-groups' preferences)",
                (names.doc)(i as u32),
                (names.doc)(j as u32)
            )));
        }
    }
    let mut g = Group::default();
    for (i, &l) in levels.iter().enumerate() {
        let ret = i < njr;
        if l > 0.0 {
            g.num_rel += 1;
            g.num_rel_ret += u64::from(ret);
        } else if l == 0.0 {
            g.num_nonrel += 1;
            g.num_nonrel_ret += u64::from(ret);
        }
    }
    for i in 0..n {
        if i < njr {
            g.possible_ret += prefers.count(i, 0, i);
            g.fulfilled_ret += prefers.count(i, i + 1, njr);
            g.fulfilled_imp += prefers.count(i, njr, n);
        } else {
            g.possible_imp += prefers.count(i, 0, njr);
            g.possible_notoccur += prefers.count(i, njr, n);
        }
        if let Some(p) = out.pairs.as_mut() {
            for j in prefers.ones(i) {
                p[i * n + j] += 1;
            }
        }
    }
    g.possible_ret += g.fulfilled_ret;
    g.possible_imp += g.fulfilled_imp;
    g.relation = Relation::Matrix { prefers, levels };
    Ok(g)
}

impl Group {
    /// Fulfilled and possible preferences once the group's non-relevant documents
    /// (level 0) are cut to its first R (R = its relevant documents; with `retrieved`,
    /// both counted among the retrieved documents only): trec_eval's recount for
    /// `prefs_avgjg_Rnonrel` when the group has more non-relevant documents than
    /// relevant ones, kept as it is (the class form pairs the non-relevant class with
    /// the kept part of itself as well). None where trec_eval's value is undefined: the
    /// class form takes the first R documents of the lowest class, and when that class
    /// holds fewer (levels below 0 make several non-relevant classes) trec_eval reads
    /// memory past the group's judgments.
    pub(super) fn recount(&self, num_judged_ret: usize, retrieved: bool) -> Option<(u64, u64)> {
        let njr = num_judged_ret as u32;
        let (mut ful, mut poss) = (0u64, 0u64);
        match &self.relation {
            Relation::Classes(classes) => {
                let last = classes.last()?;
                let part = |c: &[u32]| {
                    if retrieved {
                        c.len().min(c.partition_point(|&r| r < njr))
                    } else {
                        c.len()
                    }
                };
                let keep = if retrieved {
                    self.num_rel_ret
                } else {
                    self.num_rel
                };
                // trec_eval reads `keep` ranks, the retrieved ones with `retrieved`
                // (stopping at the first unretrieved one)
                let wanted = last.ranks.iter().take(keep as usize);
                let read = if retrieved {
                    wanted.take_while(|&&r| r < njr).count()
                } else {
                    wanted.count()
                };
                let stopped = retrieved && last.ranks.get(read).is_some_and(|&r| r >= njr);
                if read < keep as usize && !stopped {
                    return None;
                }
                let kept = &last.ranks[..read];
                // (fulfilled, all) over pairs of xs and ys: fulfilled when x < y and,
                // counting implied preferences, x retrieved
                let mut tally = |xs: &[u32], ys: &[u32]| {
                    let xs = &xs[..part(xs)];
                    let xs_ret = if retrieved {
                        xs
                    } else {
                        &xs[..xs.partition_point(|&r| r < njr)]
                    };
                    let f = pairs_ascending(xs_ret, ys);
                    ful += f;
                    poss += xs.len() as u64 * ys.len() as u64 - f;
                };
                let k = classes.len();
                for (e1, c1) in classes.iter().enumerate() {
                    for c2 in classes.iter().take(k - 1).skip(e1 + 1) {
                        let ys = &c2.ranks[..part(&c2.ranks)];
                        tally(&c1.ranks, ys);
                    }
                }
                for c1 in classes {
                    tally(&c1.ranks, kept);
                }
            }
            Relation::Matrix { prefers, levels } => {
                let n = levels.len();
                let scan = if retrieved { num_judged_ret } else { n };
                let mut seen = 0;
                let mut first_cut = scan;
                for (i, &l) in levels.iter().enumerate().take(scan) {
                    if l == 0.0 {
                        seen += 1;
                        if seen == self.num_rel + 1 {
                            first_cut = i;
                            break;
                        }
                    }
                }
                let skip = |i: usize| i >= first_cut && levels[i] == 0.0;
                let rows = if retrieved { num_judged_ret } else { n };
                for i in (0..rows).filter(|&i| !skip(i)) {
                    for j in prefers.ones(i).filter(|&j| !skip(j)) {
                        if retrieved && j >= num_judged_ret {
                            continue;
                        }
                        if i < num_judged_ret && j > i {
                            ful += 1;
                        } else {
                            poss += 1;
                        }
                    }
                }
            }
        }
        Some((ful, poss + ful))
    }
}
