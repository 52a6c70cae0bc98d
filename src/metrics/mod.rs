//! Per-query measure kernels. Each family is a pure function of one query's ranked
//! relevance vector plus its judgment counts ([`QueryCtx`]); one file per concept:
//!
//! | file | families |
//! |---|---|
//! | `counts.rs` | num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, unj, hits, judged (set_hits, set_success, set_judged: here in `compute`) |
//! | `precision.rs` | P, recall, relative_P, success, Rprec, Rprec_mult, recip_rank(_cut), set_*, utility, f |
//! | `ap.rs` | map, gm_map, map_cut, relative_map_cut, bpref, gm_bpref, infAP, iprec_at_recall, 11pt_avg, iprec, ap_11pt |
//! | `gain.rs` | the gain model (label -> gain table, ideal ranking) of dcg.rs and rbp.rs |
//! | `dcg.rs` | ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG, dcg(_cut), ndcg_gain(_cut), dcg/ndcg_burges(_cut), dcg_jk |
//! | `err.rs` | err_cut, nerr_cut |
//! | `rbp.rs` | rbp, rbp_resid, rbp_bin, rbp_label |
//! | `confusion.rs` | fallout and the confusion-matrix rates at cut-offs (tpr, ppv, mcc, ...) |
//! | `compat.rs` | compat (Clarke et al.'s RBO with the ideal ranking) |
//! | `roc.rs` | the ranking as a scored classifier: pair_accuracy(_cut), auroc, recall_at_precision, precision_at_recall |
//! | `search_length.rs` | sl, esl (Cooper's search length and expected search length) |
//! | `credibility.rs` | relevance and credibility (Lioma et al. 2017): nlre, ngre, nwcs, cam, wham |
//! | `cwl.rs` | the C/W/L user models of cwl_eval: cwl_P, cwl_rr, cwl_ap, cwl_rbp, INST, INSQ, BPM, BPM_dynamic, sdcg_cut, nerr8_cut, nerr9_cut, nerr10, nerr11 |
//!
//! The relevance vector uses trec_eval's encoding: a judged document has its label
//! (>= 0), [`NONPOOL`] (-1) marks a retrieved document absent from the qrels and
//! [`UNJUDGED`] (-2) one whose qrels label is negative ("pooled but not judged").
//! Loops follow trec_eval's order of floating-point operations so that values agree
//! to the last bit.

mod ap;
mod compat;
mod confusion;
mod counts;
mod credibility;
mod cwl;
mod dcg;
mod err;
mod gain;
mod precision;
mod rbp;
mod roc;
mod search_length;

pub(crate) use roc::{roc_area, thresholds};

use crate::measure::{Family, Measure};
use gain::{Base, Gains};
use std::sync::OnceLock;

/// A retrieved document that is not in the qrels.
pub const NONPOOL: i64 = -1;
/// A retrieved document with a negative qrels label (in the pool but not judged).
pub const UNJUDGED: i64 = -2;

/// Everything a kernel may look at for one query.
#[derive(Clone, Copy, Debug)]
pub struct QueryCtx<'a> {
    /// Relevance of each ranked document, best first (after `-M` and `-J`).
    pub rels: &'a [i64],
    /// Distinct non-negative labels in the query's judgments with counts, ascending.
    pub levels: &'a [(i64, u64)],
    /// A document is relevant when its label is at least this.
    pub rel_level: i64,
    /// Judged documents with label >= `rel_level`.
    pub num_rel: u64,
    /// Retrieved judged documents with label >= `rel_level`.
    pub num_rel_ret: u64,
    /// Number of documents in the collection (`-N`), for utility and fall-out.
    pub num_docs: i64,
    /// `-J`: only judged documents were ranked.
    pub judged_only: bool,
    /// The largest label of the whole qrels (ERR's default gmax); `new` sets the
    /// query's own largest label, the evaluator the collection's.
    pub max_label: i64,
    /// The run's score of each ranked document (beside `rels`); empty unless a measure
    /// needs scores ([`Family::needs_scores`]).
    pub scores: &'a [f64],
    /// Where each ranked document stands in the query's qrels (input order), or
    /// [`NOT_JUDGED`]; empty unless a measure needs scores.
    pub qrels_pos: &'a [u32],
    /// The query's qrels labels in input order; empty unless a measure needs scores.
    pub labels: &'a [i64],
    /// The credibility label of each ranked document (beside `rels`, same encoding:
    /// [`NONPOOL`] when the credibility judgments lack it); empty unless a measure
    /// needs credibility ([`Family::needs_credibility`]).
    pub cred: &'a [i64],
    /// The distinct credibility labels of the query's credibility judgments with
    /// counts, ascending (as `levels`).
    pub cred_levels: &'a [(i64, u64)],
    /// The ranks (0-based, ascending) of the documents in the query's qrels (every rel
    /// but [`NONPOOL`]), when the caller listed them ([`QueryCtx::with_pooled`]);
    /// `None`: found by a scan of `rels` ([`QueryCtx::pooled_ranks`]).
    pub pooled: Option<&'a [u32]>,
}

/// `qrels_pos` of a ranked document that is not in the qrels.
pub const NOT_JUDGED: u32 = u32::MAX;

impl<'a> QueryCtx<'a> {
    /// Build the context; counts are derived from `rels` and `levels`.
    pub fn new(
        rels: &'a [i64],
        levels: &'a [(i64, u64)],
        rel_level: i64,
        num_docs: i64,
        judged_only: bool,
    ) -> Self {
        let num_rel = levels
            .iter()
            .filter(|(l, _)| *l >= rel_level)
            .map(|(_, c)| c)
            .sum();
        let num_rel_ret = rels.iter().filter(|&&r| r >= 0 && r >= rel_level).count() as u64;
        QueryCtx {
            rels,
            levels,
            rel_level,
            num_rel,
            num_rel_ret,
            num_docs,
            judged_only,
            max_label: levels.last().map_or(0, |&(l, _)| l),
            scores: &[],
            qrels_pos: &[],
            labels: &[],
            cred: &[],
            cred_levels: &[],
            pooled: None,
        }
    }

    /// The same context with the ranks of its pooled documents listed (see the field;
    /// [`pooled_ranks_of`] makes the list).
    pub fn with_pooled(mut self, pooled: &'a [u32]) -> Self {
        debug_assert!(pooled
            .iter()
            .map(|&i| i as usize)
            .eq(Ranks::scan(self.rels)));
        self.pooled = Some(pooled);
        self
    }

    /// The ranks a measure of judgments visits, ascending (or, reversed, descending):
    /// those of the documents in the query's qrels (every one but [`NONPOOL`]), or
    /// every rank when `nonpool_counts` (a gain table that gives unpooled documents a
    /// gain) or when the relevance level would count them relevant. A run retrieves
    /// many more documents than were judged (1,000 against 10-30 in TREC's runs): a
    /// measure visits these ranks instead of the whole ranking, with the same
    /// floating-point operations in the same order as a visit of every rank that
    /// skips the others. Kernels still check each visited document.
    #[inline]
    pub fn pooled_ranks(&self, nonpool_counts: bool) -> Ranks<'a> {
        if nonpool_counts || self.rel_level <= NONPOOL {
            return Ranks::All(0..self.rels.len());
        }
        match self.pooled {
            Some(listed) => Ranks::Listed(listed.iter()),
            None => Ranks::scan(self.rels),
        }
    }

    /// The same context with the ranked documents' credibility labels and the query's
    /// credibility levels (see the fields).
    pub fn with_credibility(mut self, cred: &'a [i64], cred_levels: &'a [(i64, u64)]) -> Self {
        self.cred = cred;
        self.cred_levels = cred_levels;
        self
    }

    /// The same context with the ranked documents' scores, their places in the qrels
    /// and the qrels labels (see the fields).
    pub fn with_scores(
        mut self,
        scores: &'a [f64],
        qrels_pos: &'a [u32],
        labels: &'a [i64],
    ) -> Self {
        self.scores = scores;
        self.qrels_pos = qrels_pos;
        self.labels = labels;
        self
    }

    /// The same context with the collection-wide largest label.
    pub fn with_max_label(mut self, max_label: i64) -> Self {
        self.max_label = max_label;
        self
    }

    /// Number of ranked documents.
    #[inline]
    pub fn num_ret(&self) -> usize {
        self.rels.len()
    }

    /// Whether the document at rank `i` (0-based) counts as relevant.
    #[inline]
    pub fn is_rel(&self, i: usize) -> bool {
        self.rels[i] >= self.rel_level
    }
}

/// The ranks of a query's pooled documents ([`QueryCtx::pooled_ranks`]): listed by
/// the caller, or found by a scan of the ranking.
#[derive(Clone, Debug)]
pub enum Ranks<'a> {
    /// Every rank.
    All(std::ops::Range<usize>),
    /// The ranks as listed.
    Listed(std::slice::Iter<'a, u32>),
    /// The ranks of the ranking (`.1`) not yet visited, each kept when pooled.
    Scan(std::ops::Range<usize>, &'a [i64]),
}

impl<'a> Ranks<'a> {
    fn scan(rels: &'a [i64]) -> Self {
        Ranks::Scan(0..rels.len(), rels)
    }
}

impl Iterator for Ranks<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            Ranks::All(it) => it.next(),
            Ranks::Listed(it) => it.next().map(|&i| i as usize),
            Ranks::Scan(it, rels) => it.find(|&i| rels[i] != NONPOOL),
        }
    }
}

impl DoubleEndedIterator for Ranks<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<usize> {
        match self {
            Ranks::All(it) => it.next_back(),
            Ranks::Listed(it) => it.next_back().map(|&i| i as usize),
            Ranks::Scan(it, rels) => it.rfind(|&i| rels[i] != NONPOOL),
        }
    }
}

/// The ranks of `rels`' pooled documents (every rel but [`NONPOOL`]) into `out`, for
/// [`QueryCtx::with_pooled`]: one pass, without a branch on the labels.
pub fn pooled_ranks_of(rels: &[i64], out: &mut Vec<u32>) {
    out.clear();
    out.resize(rels.len(), 0);
    let mut n = 0;
    for (i, &r) in rels.iter().enumerate() {
        out[n] = i as u32;
        n += usize::from(r != NONPOOL);
    }
    out.truncate(n);
}

/// Compute one measure for one query into `out` (`m.width()` values).
pub fn compute(m: &Measure, c: &QueryCtx, out: &mut [f64]) {
    use Family::*;
    match m.family {
        RunId | NumQ | Relstring => out.fill(0.0),
        // computed from other judgments by `crate::rel_info` (preference counts; map, P
        // and Rprec_mult per judgment group), never from one qrels
        PrefsNumPrefsPoss | PrefsNumPrefsFul | PrefsNumPrefsFulRet | PrefsSimp | PrefsPair
        | PrefsAvgjg | PrefsAvgjgRnonrel | PrefsSimpRet | PrefsPairRet | PrefsAvgjgRet
        | PrefsAvgjgRnonrelRet | PrefsSimpImp | PrefsPairImp | PrefsAvgjgImp | MapAvgjg
        | PAvgjg | RprecMultAvgjg => out.fill(0.0),
        NumRet | NumRel | NumRelRet | NumNonrelJudgedRet => counts::count(m.family, c, out),
        Map | GmMap => out[0] = ap::average_precision(c),
        MapCut => ap::average_precision_cut(c, m.cutoffs(), out),
        Bpref | GmBpref => out[0] = ap::bpref(c),
        InfAP => out[0] = ap::inf_ap(c),
        IprecAtRecall => {
            ap::interpolated_precision(c, m.fractions(), m.opt("trec_eval9", 0.0) != 0.0, out)
        }
        Pt11Avg => out[0] = ap::eleven_point(c, m.numbers(), m.opt("trec_eval9", 0.0) != 0.0),
        P => precision::precision_at(c, m.cutoffs(), out),
        Recall => precision::recall_at(c, m.cutoffs(), out),
        RelativeP => precision::relative_precision_at(c, m.cutoffs(), out),
        Success => precision::success_at(c, m.cutoffs(), out),
        Rprec => out[0] = precision::r_precision(c),
        RprecMult => precision::r_precision_mult(c, m.fractions(), out),
        RecipRank => out[0] = precision::reciprocal_rank(c, usize::MAX),
        RecipRankCut => {
            for (o, &k) in out.iter_mut().zip(m.cutoffs()) {
                *o = precision::reciprocal_rank(c, k as usize);
            }
        }
        SetP | SetRelativeP | SetRecall | SetMap | SetF | Utility => {
            out[0] = precision::set_measure(m.family, c, m.numbers())
        }
        Unj => counts::unjudged_at(c, m.cutoffs(), out),
        BinG => out[0] = dcg::bin_g(c),
        G => out[0] = dcg::g(c, &trec_gains(c, m)),
        Ndcg => dcg::ndcg(c, &trec_gains(c, m), &[u64::MAX], false, out),
        IdealDcg => dcg::ideal_dcg(&trec_gains(c, m), &[u64::MAX], out),
        Yaap => out[0] = ap::yaap(c),
        NdcgRel => out[0] = dcg::ndcg_rel(c, &trec_gains(c, m)),
        Rndcg => out[0] = dcg::r_ndcg(c, &trec_gains(c, m)),
        NdcgCut => dcg::ndcg(
            c,
            &gains(c, m, Base::Linear, Vec::new()),
            m.cutoffs(),
            false,
            out,
        ),
        Rbp => {
            let user = gain::from_pairs(m.pairs());
            let gains = Gains::trec_eval(c, &user);
            out[0] = rbp::rbp(c, gains, &user, rbp::persistence(m.pairs()))
        }
        Fallout | Tpr | Tnr | Ppv | Npv | Fnr | Fpr | Fdr | FalseOmissionRate | LrPos | LrNeg
        | PrevalenceThreshold | ThreatScore | Prevalence | Accuracy | BalancedAccuracy | Mcc
        | FowlkesMallows | Informedness | Markedness | DiagnosticOddsRatio => {
            confusion::confusion_at(m.family, c, m.cutoffs(), out)
        }
        Iprec => ap::interpolated_precision_standard(c, m.fractions(), out),
        Ap11pt => out[0] = ap::eleven_point_voc(c),
        RbpBin => out[0] = rbp::rbp_binary(c, m.opt("p", 0.8)),
        RbpLabel => out[0] = rbp::rbp_labels(c, m.opt("p", 0.9)),
        SetHits => out[0] = c.num_rel_ret as f64,
        SetSuccess => out[0] = f64::from(u8::from(c.num_rel_ret > 0)),
        SetJudged => counts::judged_at(c, &[u64::MAX], out),
        Hits => counts::hits_at(c, m.cutoffs(), out),
        Judged => counts::judged_at(c, m.cutoffs(), out),
        FCut => precision::f_at(c, m.opt("beta", 1.0), m.cutoffs(), out),
        RelativeMapCut => ap::relative_average_precision_cut(c, m.cutoffs(), out),
        Dcg | DcgCut | NdcgGain | NdcgGainCut => {
            // dcg's gains: trec_eval's level=gain pairs or the gN options (never both:
            // Measure::check)
            let gains = if m.family == Dcg && !m.pairs().is_empty() {
                trec_gains(c, m)
            } else {
                gains(c, m, Base::Linear, gain::from_options(&m.opts))
            };
            let cuts: &[u64] = if matches!(m.family, Dcg | NdcgGain) {
                &[u64::MAX]
            } else {
                m.cutoffs()
            };
            if matches!(m.family, Dcg | DcgCut) {
                dcg::dcg(c, &gains, cuts, out)
            } else {
                dcg::ndcg(c, &gains, cuts, m.opt("ideal_all", 0.0) == 1.0, out)
            }
        }
        DcgBurges => dcg::dcg(c, &exp_gains(c, m), &[u64::MAX], out),
        DcgBurgesCut => dcg::dcg(c, &exp_gains(c, m), m.cutoffs(), out),
        NdcgBurges => dcg::ndcg(c, &exp_gains(c, m), &[u64::MAX], false, out),
        NdcgBurgesCut => dcg::ndcg(c, &exp_gains(c, m), m.cutoffs(), false, out),
        DcgJk => {
            let gains = gains(c, m, Base::Linear, Vec::new());
            dcg::dcg_jk(c, &gains, m.opt("b", 2.0), m.cutoffs(), out)
        }
        ErrCut => err::err(c, m.opt("gmax", c.max_label as f64), m.cutoffs(), out),
        NerrCut => err::nerr(c, m.opt("gmax", c.max_label as f64), m.cutoffs(), out),
        RbpResid => out[0] = rbp::rbp_resid(c, rbp::persistence(m.pairs())),
        Compat => out[0] = compat::compat(c, m.opt("p", 0.95), m.opt("normalize", 1.0) == 1.0),
        PairAccuracy => out[0] = roc::pair_accuracy(c, usize::MAX),
        PairAccuracyCut => {
            for (o, &k) in out.iter_mut().zip(m.cutoffs()) {
                *o = roc::pair_accuracy(c, k.min(usize::MAX as u64) as usize);
            }
        }
        Auroc => out[0] = roc::auroc(c, m.opt("max_fpr", 1.0)),
        RecallAtPrecision => roc::recall_at_precision(c, m.fractions(), out),
        PrecisionAtRecall => roc::precision_at_recall(c, m.fractions(), out),
        SearchLength => search_length::search_length(c, m.cutoffs(), out),
        ExpectedSearchLength => search_length::expected_search_length(c, m.cutoffs(), out),
        CwlP | CwlRr | CwlAp | CwlRbp | Inst | Insq | Bpm | BpmDynamic | SdcgCut | Nerr8Cut
        | Nerr9Cut | Nerr10 | Nerr11 => cwl::cwl(m, c, out),
        Nlre => out[0] = credibility::nlre(c, m.opt("mu", 0.5), m.opt("nu", 0.5)),
        Ngre => out[0] = credibility::ngre(c, m.opt("mu", 0.5), m.opt("nu", 0.5)),
        Nwcs => out[0] = credibility::nwcs(c, m.opt("lambda", 0.5)),
        Cam => out[0] = credibility::cam(c, m.opt("m", 0.0), m.opt("lambda", 0.5)),
        Wham => out[0] = credibility::wham(c, m.opt("m", 0.0), m.opt("lambda", 0.5)),
    }
}

/// Whether measure `m` can compute finite values from one query's judgments (`levels`;
/// `max_label` is the largest label of the whole qrels): the one check of the gains
/// computed from labels (the exponential gains 2^label - 1 of dcg/ndcg_burges, ERR's
/// 2^gmax with gmax defaulting to the largest label; gains set by the user are bounded
/// by their parameter domain, `MAX_GAIN`), and of the C/W/L models' labels read as
/// gains (cwl_eval's range [0, 1]). Returns the offending label and why it cannot be
/// used; None when every value is finite.
pub fn gain_overflow(m: &Measure, levels: &[(i64, u64)], max_label: i64) -> Option<(i64, String)> {
    use Family::*;
    let c = QueryCtx::new(&[], levels, 1, 0, false).with_max_label(max_label);
    let top = levels.last().map(|&(l, _)| l)?;
    let sum_overflow = |gains: Gains, what: &str| {
        gains.overflowing_level().map(|l| {
            (
                l,
                format!(
                    "the {what} of measure '{}' overflow a double (their sum over the \
                     query's judged documents passes 1.8e308), so its values would be \
                     infinite or NaN",
                    m.family.name()
                ),
            )
        })
    };
    match m.family {
        ErrCut | NerrCut => {
            // labels above gmax count as gmax: only a default gmax (the largest label)
            // can be too large, and the query holding that label is named
            let gmax = m.opt("gmax", max_label as f64);
            (gmax > f64::from(crate::measure::MAX_EXPONENT) && top == max_label).then(|| {
                (
                    top,
                    format!(
                        "measure '{}' takes the largest label of the qrels as its maximum \
                         grade gmax, and 2^{top} overflows a double; give gmax \
                         explicitly (e.g. '{}_10(gmax=4)'; at most {})",
                        m.family.name(),
                        m.family.name(),
                        crate::measure::MAX_EXPONENT
                    ),
                )
            })
        }
        DcgBurges | DcgBurgesCut | NdcgBurges | NdcgBurgesCut => {
            sum_overflow(exp_gains(&c, m), "exponential gains 2^label - 1")
        }
        // cwl_eval reads labels as gains, which must lie in [0, 1]
        f if f.is_cwl() && cwl::labels_are_gains(m) && top > 1 => Some((
            top,
            format!(
                "measure '{}' reads labels as gains, as cwl_eval does, and those must lie \
                 in [0, 1]; scale graded labels with max_rel (e.g. '{}(max_rel={top})': \
                 gain = label / {top}) or make them binary with rel (e.g. rel=1)",
                f.name(),
                f.name()
            ),
        )),
        // labels as gains (at most 2^63 each), user gains (at most 2^53, the gain
        // Domain) and RBP's rescaled gains stay finite
        _ => None,
    }
}

/// The gain table of a graded measure: `base` of each label, `user` gains over it,
/// and with the measure's own relevance level (ranx's `ndcg@10-l2`, `rel=2`) every
/// label below that level gaining 0, as ranx drops those judgments before computing
/// DCG. trec_eval's global level (`-l`, `relevance_level`) leaves graded gains alone,
/// as trec_eval does.
fn gains(c: &QueryCtx, m: &Measure, base: Base, user: Vec<(i64, f64)>) -> Gains {
    Gains::new(c, base, &at_level(c, m, user))
}

/// `user` gains with the labels below the measure's own relevance level (if any) set to
/// gain 0.
fn at_level(c: &QueryCtx, m: &Measure, mut user: Vec<(i64, f64)>) -> Vec<(i64, f64)> {
    if let Some(level) = m.rel_level {
        user.retain(|&(l, _)| l >= level);
        user.extend(
            c.levels
                .iter()
                .filter(|&&(l, _)| l < level)
                .map(|&(l, _)| (l, 0.0)),
        );
    }
    user
}

/// trec_eval's gains: labels, overridden by the measure's `level=gain` pairs, in
/// trec_eval's order.
fn trec_gains(c: &QueryCtx, m: &Measure) -> Gains {
    Gains::trec_eval(c, &at_level(c, m, gain::from_pairs(m.pairs())))
}

/// Burges et al.'s exponential gains 2^label - 1.
fn exp_gains(c: &QueryCtx, m: &Measure) -> Gains {
    gains(c, m, Base::Exp, Vec::new())
}

/// trec_eval's relstring: one character per top-`len` document.
pub fn relstring(c: &QueryCtx, len: usize) -> String {
    c.rels
        .iter()
        .take(len)
        .map(|&r| match r {
            r if r > 9 => '>',
            r if r >= 0 => (b'0' + r as u8) as char,
            NONPOOL => '-',
            UNJUDGED => '.',
            _ => '<',
        })
        .collect()
}

/// The DCG discount log2(rank + 1) of the 0-based position `i`: for the first ranks
/// read from a table of the same `log2` calls (the same bits; libm's `log2` was 2% of
/// the samples of `compare` on 5 runs x 5,000 queries x 100 documents with nDCG@10;
/// the five evaluations of its 4 measures on 1 thread, medians of 40 calls in 8 pairs of
/// alternating processes: 62-92 -> 58-71 ms, lower in every pair), else computed.
#[inline]
pub(crate) fn discount(i: usize) -> f64 {
    static LOG2: OnceLock<Box<[f64]>> = OnceLock::new();
    by_rank(&LOG2, |i| (i as f64 + 2.0).log2(), i)
}

/// `f(i)` of a 0-based rank: for the first 4,096 ranks from `table`, made once of
/// `f`'s own values (the same bits), else computed. For a per-rank weight that
/// measures read at each rank of each query.
#[inline]
pub(crate) fn by_rank(table: &'static OnceLock<Box<[f64]>>, f: fn(usize) -> f64, i: usize) -> f64 {
    const RANKS: usize = 4096;
    let t = table.get_or_init(|| (0..RANKS).map(f).collect());
    t.get(i).copied().unwrap_or_else(|| f(i))
}

/// For each cut-off k (ascending), how many of the top k documents satisfy `pred`,
/// written into `out`: one pass over the ranking for all cut-offs.
pub(crate) fn counts_at(
    rels: &[i64],
    cutoffs: &[u64],
    pred: impl Fn(i64) -> bool,
    out: &mut [f64],
) {
    let (mut count, mut i) = (0u64, 0usize);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let k = (k.min(usize::MAX as u64) as usize).min(rels.len());
        if k < i {
            // cut-offs out of order (never from the parser): count again
            (count, i) = (0, 0);
        }
        while i < k {
            count += u64::from(pred(rels[i]));
            i += 1;
        }
        *o = count as f64;
    }
}

/// For each cut-off k (ascending, distinct), the sum of the terms of the ranks below
/// k, into `out`: `term(i)` of each of `ranks` (ascending) in turn, `None` adding
/// nothing; a cut-off past the last rank gets the whole sum. One pass for all
/// cut-offs, stopping at the last one.
pub(crate) fn sums_at(
    ranks: impl Iterator<Item = usize>,
    cutoffs: &[u64],
    out: &mut [f64],
    mut term: impl FnMut(usize) -> Option<f64>,
) {
    debug_assert!(cutoffs.windows(2).all(|w| w[0] < w[1]));
    let mut sum = 0.0;
    let mut next = 0;
    for i in ranks {
        while next < cutoffs.len() && cutoffs[next] <= i as u64 {
            out[next] = sum;
            next += 1;
        }
        if next == cutoffs.len() {
            return;
        }
        if let Some(t) = term(i) {
            sum += t;
        }
    }
    for o in out.iter_mut().skip(next) {
        *o = sum;
    }
}

/// Relevant documents in the top k for each (ascending) cut-off, into `out`.
#[inline]
pub(crate) fn rel_counts_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    counts_at(c.rels, cutoffs, |r| r >= c.rel_level, out);
}

/// Number of relevant documents in the top `k` (or in the whole list if shorter).
#[inline]
pub(crate) fn rel_in_top(c: &QueryCtx, k: usize) -> u64 {
    c.rels.iter().take(k).filter(|&&r| r >= c.rel_level).count() as u64
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::measure::MeasureSet;

    /// Levels counted from a list of judged labels.
    pub fn levels(labels: &[i64]) -> Vec<(i64, u64)> {
        crate::qrels::count_levels(labels)
    }

    /// Value(s) of a measure by name for a ranked relevance list and judged labels.
    pub fn eval(name: &str, rels: &[i64], judged: &[i64]) -> Vec<f64> {
        let set = MeasureSet::parse(&[name]).unwrap();
        let m = &set.measures()[0];
        let lv = levels(judged);
        let c = QueryCtx::new(rels, &lv, m.rel_level.unwrap_or(1), 0, false);
        let mut out = vec![0.0; m.width()];
        compute(m, &c, &mut out);
        out
    }

    /// Value(s) of a measure by name for ranked documents given as (score, label)
    /// in rank order (label `NONPOOL`/`UNJUDGED` as in `rels`), the qrels being the
    /// judged labels of the ranked documents (in rank order) followed by `unretrieved`.
    pub fn eval_scored(name: &str, ranked: &[(f64, i64)], unretrieved: &[i64]) -> Vec<f64> {
        let set = MeasureSet::parse(&[name]).unwrap();
        let m = &set.measures()[0];
        let rels: Vec<i64> = ranked.iter().map(|r| r.1).collect();
        let scores: Vec<f64> = ranked.iter().map(|r| r.0).collect();
        let mut labels = Vec::new();
        let mut pos = Vec::new();
        for &(_, l) in ranked {
            if l >= 0 {
                pos.push(labels.len() as u32);
                labels.push(l);
            } else {
                pos.push(NOT_JUDGED);
            }
        }
        labels.extend_from_slice(unretrieved);
        let judged: Vec<i64> = labels.iter().copied().filter(|&l| l >= 0).collect();
        let lv = levels(&judged);
        let c = QueryCtx::new(&rels, &lv, m.rel_level.unwrap_or(1), 0, false)
            .with_scores(&scores, &pos, &labels);
        let mut out = vec![0.0; m.width()];
        compute(m, &c, &mut out);
        out
    }
}

#[cfg(test)]
mod pooled_tests {
    use super::*;
    use crate::measure::MeasureSet;

    /// trec_eval's interpolated precision as it walks the ranking: up from the bottom,
    /// the precision at every rank into the running maximum (`fractions` ascending).
    fn iprec_walking_every_rank(c: &QueryCtx, fractions: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; fractions.len()];
        if c.num_ret() == 0 && !c.judged_only {
            return out; // trec_eval's 0 for an empty ranking
        }
        let cutoffs: Vec<i64> = fractions
            .iter()
            .map(|&p| (p * c.num_rel as f64).round() as i64)
            .collect();
        let mut cur = cutoffs.len() as isize - 1;
        while cur >= 0 && cutoffs[cur as usize] > c.num_rel_ret as i64 {
            cur -= 1;
        }
        let mut int_precis = c.num_rel_ret as f64 / c.num_ret() as f64;
        let mut rel_so_far = c.num_rel_ret as i64;
        let mut i = c.num_ret();
        while i > 0 && rel_so_far > 0 {
            int_precis = int_precis.max(rel_so_far as f64 / i as f64);
            if c.rels[i - 1] >= c.rel_level {
                while cur >= 0 && rel_so_far == cutoffs[cur as usize] {
                    out[cur as usize] = int_precis;
                    cur -= 1;
                }
                rel_so_far -= 1;
            }
            i -= 1;
        }
        while cur >= 0 {
            out[cur as usize] = int_precis;
            cur -= 1;
        }
        out
    }

    /// A measure's value(s) with the pooled ranks listed, as the evaluator gives them.
    fn eval_listed(name: &str, rels: &[i64], lv: &[(i64, u64)]) -> Vec<f64> {
        let set = MeasureSet::parse(&[name]).unwrap();
        let m = &set.measures()[0];
        let mut listed = Vec::new();
        pooled_ranks_of(rels, &mut listed);
        let c = QueryCtx::new(rels, lv, m.rel_level.unwrap_or(1), 0, false).with_pooled(&listed);
        let mut out = vec![0.0; m.width()];
        compute(m, &c, &mut out);
        out
    }

    /// The measures that visit only the pooled ranks ([`QueryCtx::pooled_ranks`]) give,
    /// to the bit, what they give visiting every rank (each document still checked),
    /// listed or scanned; interpolated precision, which visits only the relevant ones,
    /// what trec_eval's walk over every rank gives. Seeded rankings, mostly unpooled,
    /// with unjudged, non-relevant and graded documents, cut-offs inside and past them.
    #[test]
    fn pooled_ranks_give_the_bits_of_every_rank() {
        let names = [
            "map",
            "map_cut.1,3,10,50,1000",
            "relative_map_cut.2,5,100",
            "bpref",
            "infAP",
            "iprec_at_recall",
            "11pt_avg",
            "iprec.0,0.2,0.5,1",
            "ap_11pt",
            "yaap",
            "ndcg",
            "ndcg_cut.1,5,10,30",
            "ndcg_rel",
            "Rndcg",
            "binG",
            "dcg@5",
            "ndcg.1=0.5,2=3",
            "map-l2",
            "nDCG(rel=2)@3",
        ];
        let set = MeasureSet::parse(&names).unwrap();
        let fractions: Vec<f64> = (0..=10).map(|i| i as f64 / 10.0).collect();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut rng = crate::testing::Lcg::new(7);
        for _ in 0..500 {
            let n = rng.below(120) as usize;
            let rels: Vec<i64> = (0..n)
                .map(|_| match rng.below(10) {
                    0..=5 => NONPOOL,
                    6 => UNJUDGED,
                    x => x as i64 - 7,
                })
                .collect();
            let mut judged: Vec<i64> = rels.iter().copied().filter(|&r| r >= 0).collect();
            for _ in 0..rng.below(8) {
                judged.push(rng.below(4) as i64);
            }
            let lv = test_util::levels(&judged);
            let mut listed = Vec::new();
            pooled_ranks_of(&rels, &mut listed);
            let every: Vec<u32> = (0..n as u32).collect();
            for m in set.measures() {
                let c = QueryCtx::new(&rels, &lv, m.rel_level.unwrap_or(1), 0, false);
                let value = |pooled: Option<&[u32]>| {
                    let mut c = c;
                    c.pooled = pooled;
                    let mut out = vec![0.0; m.width()];
                    compute(m, &c, &mut out);
                    out
                };
                let dense = value(Some(&every));
                let why = || format!("{:?}: {rels:?} {judged:?}", m.column_names());
                assert_eq!(bits(&value(Some(&listed))), bits(&dense), "{}", why());
                assert_eq!(bits(&value(None)), bits(&dense), "{}", why());
                if m.family == crate::measure::Family::IprecAtRecall {
                    let walk = iprec_walking_every_rank(&c, &fractions);
                    assert_eq!(bits(&dense), bits(&walk), "{}", why());
                }
            }
            // a cut-off k gives the whole ranking's value of the top k (the whole
            // ranking's sum never stops at a cut-off)
            for (cut, whole) in [("map_cut", "map"), ("dcg_cut", "dcg")] {
                let ks = [1, 3, 10, 50, 1000];
                let name = format!("{cut}.{}", ks.map(|k| k.to_string()).join(","));
                let at = eval_listed(&name, &rels, &lv);
                for (k, v) in ks.iter().zip(at) {
                    let top = &rels[..n.min(*k)];
                    let want = eval_listed(whole, top, &lv)[0];
                    assert_eq!(v.to_bits(), want.to_bits(), "{name} at {k}: {rels:?}");
                }
            }
        }
    }
}
