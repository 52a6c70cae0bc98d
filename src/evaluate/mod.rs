//! The engine: judgments and measures prepared once, then each run evaluated query by
//! query (in parallel), and the `all` row summed in query order.
//!
//! `mod.rs` holds [`Evaluator`] and the per-query loop (a query's ranking mapped to a
//! relevance vector once, then every measure's kernel from [`crate::metrics`]);
//! `stream.rs` evaluates runs handed over query by query ([`QueryStream`], files read
//! without holding the run).

mod credibility;
mod stream;

pub use credibility::read_credibility;
pub use stream::QueryStream;
#[cfg(feature = "python")]
pub(crate) use stream::BATCH_RESULTS;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{show, Error, Result};
use crate::measure::{Family, MeasureSet};
use crate::metrics::{self, QueryCtx, NONPOOL, UNJUDGED};
use crate::progress::Progress;
use crate::qrels::{Qrels, QrelsQuery};
use crate::results::{Results, Row};
use crate::run::{Run, RunQuery, Ties};

/// trec_eval's options, with their command-line flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `-l`: a document is relevant when its label is at least this (default 1).
    pub relevance_level: i64,
    /// `-M`: only the top `max_docs` documents of each ranking are evaluated.
    pub max_docs: Option<u64>,
    /// `-J`: rank only the documents that are judged (label >= 0).
    pub judged_only: bool,
    /// `-c`: judged queries missing from the run are scored as empty rankings and
    /// count in the averages (without it, such a query is an error).
    pub complete: bool,
    /// `-N`: number of documents in the collection (utility's fourth coefficient).
    pub num_docs_in_collection: i64,
    /// Threads to use; 0 means all cores (or `IRMETRICS_NUM_THREADS`).
    pub n_threads: usize,
    /// The order of tied scores in each ranking: trec_eval's (document id descending),
    /// or ascending (ir_measures' msmarco and judged providers: its `RR@k`, `Judged@k`).
    pub ties: Ties,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            relevance_level: 1,
            max_docs: None,
            judged_only: false,
            complete: false,
            num_docs_in_collection: 0,
            n_threads: 0,
            ties: Ties::DocDescending,
        }
    }
}

/// Evaluates runs against one set of judgments and measures.
///
/// ```
/// use irmetrics::{Evaluator, MeasureSet, Options, Qrels, Run};
/// let qrels = Qrels::from_bytes(b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n", "qrels").unwrap();
/// let run = Run::from_bytes(b"q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq1 Q0 d3 3 0.7 r\n", "run").unwrap();
/// let measures = MeasureSet::parse(&["map", "P.2"]).unwrap();
/// let ev = Evaluator::new(qrels, measures, Options::default()).unwrap();
/// let res = ev.evaluate(&run).unwrap();
/// assert_eq!(res.summary_by_name("P_2"), Some(0.5));
/// assert!((res.summary_by_name("map").unwrap() - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
/// ```
#[derive(Clone, Debug)]
pub struct Evaluator {
    qrels: Arc<Qrels>,
    measures: MeasureSet,
    options: Options,
    /// The largest label of the qrels (ERR's default maximum grade).
    max_label: i64,
    /// Credibility judgments, for the relevance-and-credibility measures
    /// ([`Family::needs_credibility`]).
    credibility: Option<Arc<Qrels>>,
    plan: Plan,
}

/// What every query's evaluation needs, decided once from the measures and options
/// (asked per query, the options' lookups were ~3% of an evaluation at L).
#[derive(Clone, Debug)]
struct Plan {
    /// Values per query (the measures' widths summed).
    width: usize,
    /// Some measure needs the scores and qrels places ([`Family::needs_scores`]).
    scored: bool,
    /// Some measure needs the credibility labels ([`Family::needs_credibility`]).
    credibility: bool,
    /// Per measure: its own `judged_only=True` (without -J for all).
    own_judged: Vec<bool>,
    /// How deep a ranking the measures read
    /// ([`crate::measure::Measure::ranking_depth`], at most `max_docs`); `None`: all
    /// of it (some measure may read every document, or `judged_only` filters the
    /// ranking before the measures cut it).
    depth: Option<usize>,
}

impl Plan {
    fn new(measures: &MeasureSet, options: &Options) -> Plan {
        let ms = measures.measures();
        let own_judged: Vec<bool> = ms
            .iter()
            .map(|m| !options.judged_only && m.opt("judged_only", 0.0) == 1.0)
            .collect();
        let max_docs = options.max_docs.map(|m| m.min(usize::MAX as u64) as usize);
        let depth = if options.judged_only || own_judged.contains(&true) {
            max_docs
        } else {
            ms.iter()
                .map(|m| m.ranking_depth().map(|d| d.min(usize::MAX as u64) as usize))
                .try_fold(0, |a, d| d.map(|d| a.max(d)))
                .map(|d| max_docs.map_or(d, |m| m.min(d)))
                .or(max_docs)
        };
        Plan {
            width: measures.width(),
            scored: ms.iter().any(|m| m.family.needs_scores()),
            credibility: ms.iter().any(|m| m.family.needs_credibility()),
            own_judged,
            depth,
        }
    }
}

/// Per-thread buffers reused across queries.
#[derive(Default)]
pub(crate) struct Scratch {
    order: Vec<u32>,
    /// [`RunQuery::ranking_top`]'s buffer.
    keyed: Vec<(u64, u32)>,
    rels: Vec<i64>,
    /// `rels` without the unjudged documents, for measures with their own
    /// `judged_only=True` (ir_measures' option; trec_eval's -J for one measure).
    judged: Vec<i64>,
    /// Scores and qrels places beside `rels` (and `judged`), for the families that
    /// need them ([`Family::needs_scores`]).
    scores: Vec<f64>,
    qrels_pos: Vec<u32>,
    judged_scores: Vec<f64>,
    judged_pos: Vec<u32>,
    /// Credibility labels beside `rels`, for the measures that need them.
    cred: Vec<i64>,
    /// The ranks of `rels`' pooled documents ([`metrics::pooled_ranks_of`]).
    pooled: Vec<u32>,
    /// Keep each query's ranking in its [`RunQuery`] ([`RunQuery::ranking_held`]):
    /// for a held [`Run`], evaluated again and again (`compare`, a notebook's cells);
    /// not for the queries of a stream, dropped once evaluated.
    keep_ranking: bool,
}

impl Scratch {
    /// Forget the last query's judged ranking.
    fn clear_judged(&mut self) {
        self.rels.clear();
        self.scores.clear();
        self.qrels_pos.clear();
        self.cred.clear();
    }

    /// The next ranked document kept: its relevance, and with `scored` its score and
    /// qrels place.
    #[inline(always)]
    fn push_ranked(&mut self, rel: i64, scored: bool, score: f64, pos: Option<usize>) {
        self.rels.push(rel);
        if scored {
            self.scores.push(score);
            self.qrels_pos
                .push(pos.map_or(metrics::NOT_JUDGED, |p| p as u32));
        }
    }
}

/// The judgments of `rq`'s ranking (`s.order`) into `s.rels` (and beside them the
/// credibility labels of `cq`, and with `scored` the scores and qrels places). A
/// function of its own, never inlined: inside `eval_query`, grown large, LLVM stopped
/// inlining the hash lookup of each document (measured at L, 100k queries x 100
/// documents: an out-of-line `RawTable::find` took 24% of an evaluation, 15% slower);
/// here it is inlined again.
#[inline(never)]
fn judge(
    qq: &QrelsQuery,
    rq: &RunQuery,
    hashes: Option<&[u64]>,
    cq: Option<&QrelsQuery>,
    judged_only: bool,
    scored: bool,
    s: &mut Scratch,
) {
    debug_assert!(hashes.is_none_or(|h| h.len() == rq.len()));
    let order = std::mem::take(&mut s.order);
    let hash = |i: usize| match hashes {
        Some(made) => made[i],
        None => rq.docs.hash(i),
    };
    if cq.is_none() && !judged_only {
        // every ranked document stays: the columns filled as unpooled at once and
        // each judged one (a few in a run's hundreds or thousands) set where it is
        // found, instead of three pushes, each checking its room, for every rank.
        // M (10 M ranked documents, 5 measures), a held run evaluated on 1 thread,
        // alternating processes: best of 12 calls 0.166-0.195 -> 0.143-0.161 s
        debug_assert!(s.rels.is_empty() && s.scores.is_empty() && s.qrels_pos.is_empty());
        s.rels.resize(order.len(), NONPOOL);
        if scored {
            s.scores
                .extend(order.iter().map(|&i| rq.values[i as usize]));
            s.qrels_pos.resize(order.len(), metrics::NOT_JUDGED);
        }
        for (r, &i) in order.iter().enumerate() {
            let i = i as usize;
            if let Some(p) = qq.position_ranked(rq.docs.get(i), hash(i)) {
                s.rels[r] = rel_of(qq, Some(p));
                if scored {
                    s.qrels_pos[r] = p as u32;
                }
            }
        }
        s.order = order;
        return;
    }
    for &i in &order {
        let i = i as usize;
        let doc = rq.docs.get(i);
        let pos = qq.position_ranked(doc, hash(i));
        let rel = rel_of(qq, pos);
        if !judged_only || rel >= 0 {
            if let Some(cq) = cq {
                s.cred.push(cq.label(doc).unwrap_or(NONPOOL));
            }
            s.push_ranked(rel, scored, rq.values[i], pos);
        }
    }
    s.order = order;
}

/// Whether trec_eval gives measure `m` of a judged query missing from the run (-c) the
/// value of its one-document stand-in ranking ([`Evaluator::eval_query_hashed`]): the
/// families trec_eval resets by name, when named with explicit parameters.
fn keeps_stand_in(m: &crate::measure::Measure) -> bool {
    matches!(
        m.family,
        Family::Utility | Family::Relstring | Family::RbpResid
    ) && m.has_explicit_params()
}

/// A ranked document's relevance as the measures read it: its label, [`UNJUDGED`] for
/// a negative one, [`NONPOOL`] when the qrels lack it (`pos`: its place in `qq`).
#[inline(always)]
fn rel_of(qq: &QrelsQuery, pos: Option<usize>) -> i64 {
    match pos.map(|p| qq.labels[p]) {
        Some(l) if l >= 0 => l,
        Some(_) => UNJUDGED,
        None => NONPOOL,
    }
}

impl Evaluator {
    /// Prepare an evaluator. Fails when the options or judgments cannot be used.
    pub fn new(
        qrels: impl Into<Arc<Qrels>>,
        measures: MeasureSet,
        options: Options,
    ) -> Result<Evaluator> {
        Evaluator::new_with_credibility(qrels, measures, options, None)
    }

    /// [`Evaluator::new`] with credibility judgments (qrels-shaped, labels 0 or more:
    /// [`read_credibility`]) for the relevance-and-credibility measures (`nlre`, `ngre`,
    /// `nwcs`, `cam`, `wham`), which refuse to run without them.
    pub fn new_with_credibility(
        qrels: impl Into<Arc<Qrels>>,
        measures: MeasureSet,
        options: Options,
        credibility: Option<Arc<Qrels>>,
    ) -> Result<Evaluator> {
        let qrels = qrels.into();
        match (
            &credibility,
            measures
                .measures()
                .iter()
                .find(|m| m.family.needs_credibility()),
        ) {
            (Some(c), _) => credibility::check(&qrels, c)?,
            (None, Some(m)) => {
                return Err(Error::Option(format!(
                    "measure '{}' needs credibility judgments: give them as credibility= \
                     (Python) or --credibility FILE (command line), a qrels-shaped file \
                     of credibility labels",
                    m.family.name()
                )))
            }
            (None, None) => {}
        }
        if measures.is_empty() {
            return Err(Error::Measure("no measure requested".into()));
        }
        if options.max_docs == Some(0) {
            return Err(Error::Option(
                "max_docs (-M) must be at least 1; leave it unset to evaluate whole rankings"
                    .into(),
            ));
        }
        for m in measures.measures() {
            m.check()?;
        }
        measures.check_judgments(crate::measure::JudgmentKind::Qrels)?;
        crate::parallel::check_threads(options.n_threads as i128, "n_threads (--threads)")?;
        crate::check_environment()?;
        check_num_docs(&qrels, options.num_docs_in_collection)?;
        if let Some(m) = measures
            .measures()
            .iter()
            .find(|m| m.family.needs_num_docs())
        {
            if options.num_docs_in_collection == 0 {
                return Err(Error::Option(format!(
                    "measure '{}' needs the number of documents in the collection: set \
                     num_docs_in_collection (-N)",
                    m.family.name()
                )));
            }
        }
        if options.relevance_level < 0 {
            return Err(Error::Option(format!(
                "relevance_level (-l) must be 0 or more, got {}; negative labels mean \
                 'pooled but unjudged' and can never be relevant",
                options.relevance_level
            )));
        }
        if let Some(l) = measures
            .measures()
            .iter()
            .filter_map(|m| m.rel_level)
            .find(|&l| l < 0)
        {
            return Err(Error::Measure(format!(
                "relevance level rel={l} must be 0 or more; negative labels mean 'pooled \
                 but unjudged' and can never be relevant"
            )));
        }
        if qrels.is_empty() {
            return Err(Error::Input("the qrels contain no judgment".into()));
        }
        if let Some(q) = qrels.queries().iter().find(|q| q.levels().is_empty()) {
            return Err(Error::Input(format!(
                "query '{}' has only negative labels (pooled but not judged), so no document \
                 of it is judged and every measure is undefined (trec_eval stops with \
                 \"Can't calculate measure\" when it is the first query, crashes on labels \
                 below -1, and scores it from a buffer of the query before otherwise). \
                 Remove its lines from the qrels or give them labels >= 0",
                show(q.id())
            )));
        }
        let max_label = qrels
            .queries()
            .iter()
            .filter_map(|q| q.levels().last().map(|&(l, _)| l))
            .max()
            .unwrap_or(0);
        check_gains(&qrels, &measures, max_label)?;
        Ok(Evaluator {
            plan: Plan::new(&measures, &options),
            qrels,
            measures,
            options,
            max_label,
            credibility,
        })
    }

    /// The same evaluator with `max_label` as the largest label of the judgments (ERR's
    /// default maximum grade): for evaluating a part of a qrels split by query (as
    /// `irmetrics.spark` does) with the whole qrels' value. Refused below the part's own.
    pub fn with_max_label(mut self, max_label: i64) -> Result<Evaluator> {
        if max_label < self.max_label {
            return Err(Error::Input(format!(
                "max_label {max_label} is below the largest label of the qrels ({})",
                self.max_label
            )));
        }
        check_gains(&self.qrels, &self.measures, max_label)?;
        self.max_label = max_label;
        Ok(self)
    }

    /// The judgments.
    pub fn qrels(&self) -> &Qrels {
        &self.qrels
    }

    /// The credibility judgments, if given.
    pub fn credibility(&self) -> Option<&Arc<Qrels>> {
        self.credibility.as_ref()
    }

    /// The measures.
    pub fn measures(&self) -> &MeasureSet {
        &self.measures
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Evaluate a run.
    pub fn evaluate(&self, run: &Run) -> Result<Results> {
        self.evaluate_cancellable(run, None)
    }

    /// Evaluate a run; stops with [`Error::Interrupted`] soon after `cancel` is set.
    pub fn evaluate_cancellable(&self, run: &Run, cancel: Option<&AtomicBool>) -> Result<Results> {
        self.evaluate_with(run, cancel, None)
    }

    /// [`Evaluator::evaluate_cancellable`], counting each evaluated query in `progress`
    /// (the queries are announced first).
    pub fn evaluate_with(
        &self,
        run: &Run,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        let pairs = self.pair_queries(run)?;
        crate::progress::announce(progress, pairs.len());
        self.evaluate_pairs(run, pairs, cancel, progress)
    }

    /// How many queries evaluating `run` counts in a [`Progress`] (0 for a run that
    /// cannot be evaluated: its error comes when it is).
    pub(crate) fn progress_units(&self, run: &Run) -> usize {
        self.pair_queries(run).map_or(0, |p| p.len())
    }

    /// [`Evaluator::evaluate_with`] for queries already announced
    /// ([`Evaluator::progress_units`]).
    pub(crate) fn evaluate_announced(
        &self,
        run: &Run,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        let pairs = self.pair_queries(run)?;
        self.evaluate_pairs(run, pairs, cancel, progress)
    }

    fn evaluate_pairs(
        &self,
        run: &Run,
        pairs: Vec<(&QrelsQuery, Option<&RunQuery>)>,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        let rows = crate::parallel::with_threads(self.options.n_threads, || {
            let scratch = || Scratch {
                keep_ranking: true,
                ..Scratch::default()
            };
            crate::parallel::map_with(&pairs, scratch, |s, &(qq, rq)| {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return None;
                }
                let row = self.eval_query(qq, rq, s);
                crate::progress::advance(progress, 1);
                Some(row)
            })
        });
        let rows: Vec<Row> = rows
            .into_iter()
            .collect::<Option<Vec<Row>>>()
            .ok_or(Error::Interrupted)?;
        let qrels_queries: Vec<&QrelsQuery> = pairs.iter().map(|(q, _)| *q).collect();
        Ok(self.finish(&qrels_queries, rows, run.runid().to_vec()))
    }

    pub(crate) fn finish(
        &self,
        queries: &[&QrelsQuery],
        rows: Vec<Row>,
        runid: Vec<u8>,
    ) -> Results {
        let ids = queries.iter().map(|q| q.id().into()).collect();
        let mut res = Results::new(self.measures.clone(), ids, rows, runid);
        if self.options.complete {
            // trec_eval 10 quirk: with -c, the `all` value of num_rel counts the judged
            // documents with label >= 1 whatever -l says.
            let total: u64 = queries.iter().map(|q| q.num_rel(1)).sum();
            res.set_summary(Family::NumRel, total as f64);
        }
        res
    }

    /// Errors for runs that share no query with the qrels, or miss judged queries
    /// without `complete`.
    pub(crate) fn check_coverage(
        &self,
        matched: usize,
        run_examples: impl FnOnce() -> Vec<Vec<u8>>,
    ) -> Result<()> {
        if matched == 0 && !self.options.complete {
            let ex = |ids: Vec<&[u8]>| {
                ids.iter()
                    .take(3)
                    .map(|i| format!("'{}'", show(i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let run_ids = run_examples();
            if run_ids.is_empty() {
                return Err(empty_run());
            }
            return Err(Error::Input(format!(
                "no query of the run is judged in the qrels (run queries: {}; qrels queries: \
                 {}); are the files swapped or from different collections?",
                ex(run_ids.iter().map(|v| v.as_slice()).collect()),
                ex(self.qrels.queries().iter().map(|q| q.id()).collect()),
            )));
        }
        Ok(())
    }

    /// The evaluated queries (the judged ones, in id order) with their results.
    fn pair_queries<'a>(
        &'a self,
        run: &'a Run,
    ) -> Result<Vec<(&'a QrelsQuery, Option<&'a RunQuery>)>> {
        let pairs: Vec<_> = self
            .qrels
            .queries()
            .iter()
            .map(|q| (q, run.query(q.id())))
            .collect();
        let matched = pairs.iter().filter(|(_, r)| r.is_some()).count();
        self.check_coverage(matched, || {
            run.queries()
                .iter()
                .take(3)
                .map(|q| q.id().to_vec())
                .collect()
        })?;
        if !self.options.complete {
            if let Some((q, _)) = pairs.iter().find(|(_, r)| r.is_none()) {
                return Err(Error::MissingQuery {
                    query: show(q.id()),
                });
            }
        }
        Ok(pairs)
    }

    pub(crate) fn eval_query(
        &self,
        qq: &QrelsQuery,
        rq: Option<&RunQuery>,
        s: &mut Scratch,
    ) -> Row {
        self.eval_query_hashed(qq, rq.map(|rq| (rq, None)), s)
    }

    /// [`Evaluator::eval_query`] of a ranking whose documents' hashes ([`crate::ids::Ids::hash`],
    /// in storage order) were made already (by the duplicate check of the same list:
    /// `Some`), or are made here (`None`).
    pub(crate) fn eval_query_hashed(
        &self,
        qq: &QrelsQuery,
        rq: Option<(&RunQuery, Option<&[u64]>)>,
        s: &mut Scratch,
    ) -> Row {
        let o = &self.options;
        s.clear_judged();
        // the query's credibility judgments, when a measure needs them
        let cq = self
            .credibility
            .as_deref()
            .filter(|_| self.plan.credibility)
            .and_then(|c| c.query(qq.id()));
        if let Some((rq, hashes)) = rq {
            // all of it, or as deep as the measures read (`nDCG@10` alone: the top 10;
            // -M): those found without sorting the rest
            match (self.plan.depth, o.ties) {
                // (kept, or found by selection where it was not)
                (Some(d), Ties::DocDescending) if !s.keep_ranking || d < rq.len() => {
                    rq.ranking_top(d, &mut s.keyed, &mut s.order)
                }
                (depth, ties) => {
                    // the whole ranking (a held run's kept for its next evaluation: the
                    // sort is made anyway), its ties put in order for another order of
                    // ties, then cut (the last group of ties cut whole first)
                    if s.keep_ranking {
                        rq.ranking_held(&mut s.order);
                    } else {
                        rq.ranking(&mut s.order);
                    }
                    ties.apply(&rq.values, &mut s.order);
                    if let Some(d) = depth {
                        s.order.truncate(d);
                    }
                }
            }
            judge(qq, rq, hashes, cq, o.judged_only, self.plan.scored, s);
            return self.eval_judged(qq, cq, s);
        }
        let mut row = self.eval_judged(qq, cq, s);
        if !o.judged_only && self.measures.measures().iter().any(keeps_stand_in) {
            // trec_eval 10 scores a judged query missing from the run (-c) as a ranking
            // of one unjudged stand-in document ("ceci_nest_pas_un_docno"), then resets
            // the values named num_ret, utility, relstring, rbp_resid and unj*: by name,
            // so a measure named with its parameters (utility_2,-1,0,0, relstring_5,
            // rbp_resid_p=0.9) keeps the stand-in's value (utility counts it as a
            // retrieved non-relevant document). -J removes the stand-in (unjudged).
            s.clear_judged();
            s.push_ranked(NONPOOL, self.plan.scored, 1.0, None);
            let stand_in = self.eval_judged(qq, cq, s);
            let mut at = 0;
            for m in self.measures.measures() {
                let w = m.width();
                if keeps_stand_in(m) {
                    row.values[at..at + w].copy_from_slice(&stand_in.values[at..at + w]);
                    if m.family == Family::Relstring {
                        row.relstring.clone_from(&stand_in.relstring);
                    }
                }
                at += w;
            }
        }
        row
    }

    /// How deep a ranking the measures read (at most `max_docs`); `None`: all of it.
    /// A ranking may be cut there before [`Evaluator::eval_positions`].
    pub(crate) fn ranking_depth(&self) -> Option<usize> {
        self.plan.depth
    }

    /// [`Evaluator::eval_query`] of a ranking already judged: each document, best
    /// first, as its place in `qq` (`None`: not in the qrels) and its score. For work
    /// that ranks the same documents again and again (fusion's grid search) and looks
    /// each up once. Only for an evaluator without credibility judgments (`None`
    /// otherwise: their measures need each document's id).
    pub(crate) fn eval_positions(
        &self,
        qq: &QrelsQuery,
        ranked: impl Iterator<Item = (Option<usize>, f64)>,
        s: &mut Scratch,
    ) -> Option<Row> {
        if self.credibility.is_some() {
            return None;
        }
        let (o, scored) = (&self.options, self.plan.scored);
        s.clear_judged();
        for (pos, score) in ranked.take(self.plan.depth.unwrap_or(usize::MAX)) {
            let rel = rel_of(qq, pos);
            if !o.judged_only || rel >= 0 {
                s.push_ranked(rel, scored, score, pos);
            }
        }
        Some(self.eval_judged(qq, None, s))
    }

    /// The measures of one query from its judged ranking in `s` (`s.rels`, and the
    /// scores, qrels places and credibility labels beside them when needed).
    fn eval_judged(&self, qq: &QrelsQuery, cq: Option<&QrelsQuery>, s: &mut Scratch) -> Row {
        let o = &self.options;
        let plan = &self.plan;
        let scored = plan.scored;
        s.judged.clear();
        s.judged_scores.clear();
        s.judged_pos.clear();
        if plan.own_judged.contains(&true) {
            s.judged.extend(s.rels.iter().copied().filter(|&r| r >= 0));
            if scored {
                for (i, &r) in s.rels.iter().enumerate() {
                    if r >= 0 {
                        s.judged_scores.push(s.scores[i]);
                        s.judged_pos.push(s.qrels_pos[i]);
                    }
                }
            }
        }
        metrics::pooled_ranks_of(&s.rels, &mut s.pooled);
        let (rels, judged, pooled) = (&s.rels, &s.judged, &s.pooled);
        let mut values = vec![0.0; plan.width];
        let mut relstring = None;
        let mut at = 0;
        let mut ctxs: Vec<(bool, QueryCtx)> = Vec::with_capacity(1);
        for (m, &j) in self.measures.measures().iter().zip(&plan.own_judged) {
            let level = m.rel_level.unwrap_or(o.relevance_level);
            let ctx = match ctxs.iter().find(|(cj, c)| *cj == j && c.rel_level == level) {
                Some((_, c)) => *c,
                None => {
                    let c = QueryCtx::new(
                        if j { judged } else { rels },
                        qq.levels(),
                        level,
                        o.num_docs_in_collection,
                        o.judged_only || j,
                    )
                    .with_max_label(self.max_label)
                    .with_scores(
                        if j { &s.judged_scores } else { &s.scores },
                        if j { &s.judged_pos } else { &s.qrels_pos },
                        if scored { &qq.labels } else { &[] },
                    )
                    .with_credibility(&s.cred, cq.map_or(&[][..], |q| q.levels()));
                    // (the judged-only ranking, rarely asked for, is scanned)
                    let c = if j { c } else { c.with_pooled(pooled) };
                    ctxs.push((j, c));
                    c
                }
            };
            let w = m.width();
            metrics::compute(m, &ctx, &mut values[at..at + w]);
            if m.family == Family::Relstring {
                let len = m.numbers().first().copied().unwrap_or(10.0).max(0.0) as usize;
                relstring = Some(metrics::relstring(&ctx, len));
            }
            at += w;
        }
        Row { values, relstring }
    }
}

/// `-N` (`num_docs_in_collection`): 0 means unknown (the default; measures that need
/// it refuse to run), otherwise the collection holds at least every document judged
/// for any one query (labels of every sign), or TN-like counts (`N - ret - rel +
/// relret`) would be negative.
fn check_num_docs(qrels: &Qrels, n: i64) -> Result<()> {
    if n < 0 {
        return Err(Error::Option(format!(
            "num_docs_in_collection (-N) must be 0 (unknown) or the number of documents \
             in the collection, got {n}"
        )));
    }
    if n > 0 {
        if let Some(q) = qrels.queries().iter().find(|q| q.len() as u64 > n as u64) {
            return Err(Error::Option(format!(
                "num_docs_in_collection (-N) is {n}, but query '{}' alone has {} judged \
                 documents; -N counts every document of the collection",
                show(q.id()),
                q.len()
            )));
        }
    }
    Ok(())
}

/// Gains computed from labels must stay finite ([`metrics::gain_overflow`]): a label
/// too large for exponential gains is refused, naming the query, document and label.
fn check_gains(qrels: &Qrels, measures: &MeasureSet, max_label: i64) -> Result<()> {
    for m in measures.measures() {
        for q in qrels.queries() {
            if let Some((label, why)) = metrics::gain_overflow(m, q.levels(), max_label) {
                let doc = q
                    .iter()
                    .find(|&(_, l)| l == label)
                    .map_or_else(String::new, |(d, _)| show(d));
                return Err(Error::Input(format!(
                    "query '{}', document '{doc}': label {label} is too large: {why}",
                    show(q.id())
                )));
            }
        }
    }
    Ok(())
}

/// AUROC pooled over queries: one ROC curve of the retrieved judged documents
/// (label 0 or more) of every judged query together, run scores against label >= `rel_level`,
/// tied scores as one threshold (sklearn's `roc_auc_score` on the concatenation);
/// `max_fpr` gives sklearn's McClish-standardized partial AUC. Documents of queries
/// the qrels lack are left out. 0 without a relevant, 1 without a non-relevant
/// document.
pub fn pooled_auroc(qrels: &Qrels, run: &Run, rel_level: i64, max_fpr: Option<f64>) -> Result<f64> {
    if rel_level < 0 {
        return Err(Error::Option(format!(
            "the relevance level must be 0 or more, got {rel_level}"
        )));
    }
    let domain = crate::measure::Domain::UnitAboveZero;
    if let Some(x) = max_fpr.filter(|&x| !domain.contains(x)) {
        return Err(Error::Option(format!(
            "max_fpr must be {}, got {x}",
            domain.describe()
        )));
    }
    let mut scored: Vec<(f64, bool)> = Vec::new();
    for qq in qrels.queries() {
        if let Some(rq) = run.query(qq.id()) {
            for (i, &score) in rq.values.iter().enumerate() {
                if let Some(l) = qq.label(rq.docs.get(i)).filter(|&l| l >= 0) {
                    scored.push((score, l >= rel_level));
                }
            }
        }
    }
    scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    Ok(metrics::roc_area(
        metrics::thresholds(scored.into_iter()),
        max_fpr.unwrap_or(1.0),
    ))
}

/// Evaluate one run against judgments: the one-call convenience.
pub fn evaluate(qrels: &Qrels, run: &Run, measures: &[&str], options: Options) -> Result<Results> {
    let set = MeasureSet::parse(measures)?;
    Evaluator::new(qrels.clone(), set, options)?.evaluate(run)
}

/// The error for a run without results (a file without any is refused as it is read;
/// an empty table, dict or exhausted stream makes an empty run).
pub(crate) fn empty_run() -> Error {
    Error::Input("the run is empty: it holds no result (an empty table, dict or stream?)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ir_measures' `judged_only=True` on one measure is trec_eval's -J for that
    /// measure alone: the unjudged documents leave its ranking, not the others'.
    #[test]
    fn judged_only_of_one_measure_is_minus_j_for_it() {
        let q = Qrels::from_bytes(b"q1 0 a 1\nq1 0 b 0\nq1 0 c 1\n", "q").unwrap();
        let r = Run::from_bytes(
            b"q1 Q0 x 1 9 r\nq1 Q0 a 2 8 r\nq1 Q0 y 3 7 r\nq1 Q0 c 4 6 r\n",
            "r",
        )
        .unwrap();
        let ev = |names: &[&str], judged_only: bool| {
            let o = Options {
                judged_only,
                ..Options::default()
            };
            Evaluator::new(q.clone(), MeasureSet::parse(names).unwrap(), o)
                .unwrap()
                .evaluate(&r)
                .unwrap()
        };
        let own = ev(
            &["P(judged_only=True)@2", "P@2", "map(judged_only=1)"],
            false,
        );
        let minus_j = ev(&["P@2", "map"], true);
        // ranking a, c once x and y (unjudged) are gone: P@2 = 1
        assert_eq!(own.summary_by_name("P_2(judged_only=1)"), Some(1.0));
        assert_eq!(
            own.summary_by_name("P_2(judged_only=1)"),
            minus_j.summary_by_name("P_2")
        );
        assert_eq!(
            own.summary_by_name("map(judged_only=1)"),
            minus_j.summary_by_name("map")
        );
        // the measure without the option keeps the whole ranking: x, a -> 1/2
        assert_eq!(own.summary_by_name("P_2"), Some(0.5));
    }

    /// Every family that says it reads the top k only ([`Measure::ranking_depth`])
    /// gives the same values, to the bit, on rankings cut at its depth as on whole
    /// ones (evaluated beside `map`, which reads all of them and so keeps them whole):
    /// seeded runs with tied scores, unjudged and unpooled documents, rankings shorter
    /// and longer than the cut-offs.
    #[test]
    fn measures_of_the_top_k_read_only_the_top_k() {
        use crate::measure::Measure;
        let mut rng = crate::testing::Lcg::new(11);
        let mut next = |m: u64| rng.below(m);
        let (mut qrels, mut run) = (String::new(), String::new());
        for q in 0..60 {
            for d in 0..next(25) {
                let label = next(5) as i64 - 1;
                qrels += &format!("q{q} 0 d{d} {label}\n");
            }
            qrels += &format!("q{q} 0 top 1\n");
            for d in 0..next(40) {
                if next(4) > 0 {
                    let score = next(6); // ties
                    run += &format!("q{q} Q0 d{d} 0 {score} r\n");
                }
            }
        }
        let qrels = Qrels::from_bytes(qrels.as_bytes(), "qrels").unwrap();
        // a fresh run for each cut evaluation: one evaluated beside `map` keeps its
        // rankings, which the next cut would read instead of selecting its top k
        let fresh = || Run::from_bytes(run.as_bytes(), "run").unwrap();
        let complete = || Options {
            complete: true,
            ..Options::default()
        };
        // each family that reads the top k only, at its defaults; then the options
        // that change what such a family computes from the top k (gains, gmax, beta,
        // the relevance level, the ideal's depth, the DCG form)
        let families = (Family::ALL.iter())
            .filter(|&&f| Measure::new(f).ranking_depth().is_some())
            .map(|f| format!("{}.1,3,8", f.name()));
        let with_options = [
            "F_cut_8(beta=2)",
            "F_cut_8(beta=0.5)",
            "err_cut_8(gmax=2)",
            "nerr_cut_8(gmax=3)",
            "dcg_cut_8(g0=-1,g1=0.5,g3=7)",
            "ndcg_gain_cut_8(g1=0.5,g2=3)",
            "ndcg_gain_cut_8(ideal_all=1)",
            "ndcg_gain_cut_8(g0=-1,g3=7,ideal_all=1)",
            "P(rel=2)@8",
            "R(rel=3)@8",
            "RR(rel=2)@8",
            "Success(rel=2)@8",
            "nDCG(dcg='exp-log2')@8",
        ];
        let names = families.chain(with_options.iter().map(|n| n.to_string()));
        let mut checked = 0;
        for name in names {
            let alone = MeasureSet::parse(&[name.as_str()]).unwrap();
            let ev = Evaluator::new(qrels.clone(), alone, complete()).unwrap();
            assert_eq!(ev.ranking_depth(), Some(8), "{name}");
            let cut = ev.evaluate(&fresh()).unwrap();
            let both = MeasureSet::parse(&[name.as_str(), "map"]).unwrap();
            let ev = Evaluator::new(qrels.clone(), both, complete()).unwrap();
            assert_eq!(ev.ranking_depth(), None, "{name}");
            let whole = ev.evaluate(&fresh()).unwrap();
            for (c, col) in cut.columns().iter().enumerate() {
                let w = (whole.columns().iter())
                    .position(|o| o.name == col.name)
                    .unwrap();
                for q in 0..cut.num_queries() {
                    assert_eq!(
                        cut.value(q, c).to_bits(),
                        whole.value(q, w).to_bits(),
                        "{name}: {} of query {q}",
                        col.name
                    );
                }
            }
            checked += 1;
        }
        assert!(checked >= 15 + with_options.len(), "{checked}");
        // -M cuts deeper measures; -J (and a measure's own judged_only) filters first
        let ms = || MeasureSet::parse(&["P.5", "ndcg_cut.20"]).unwrap();
        let depth = |o: Options| {
            Evaluator::new(qrels.clone(), ms(), o)
                .unwrap()
                .ranking_depth()
        };
        assert_eq!(depth(Options::default()), Some(20));
        let m = |m| Options {
            max_docs: Some(m),
            ..Options::default()
        };
        assert_eq!(depth(m(7)), Some(7));
        assert_eq!(depth(m(70)), Some(20));
        let j = Options {
            judged_only: true,
            ..Options::default()
        };
        assert_eq!(depth(j), None);
        let own = MeasureSet::parse(&["P(judged_only=True)@5"]).unwrap();
        let ev = Evaluator::new(qrels.clone(), own, Options::default()).unwrap();
        assert_eq!(ev.ranking_depth(), None);
    }

    /// `ties: DocAscending` ranks equal scores by document id ascending, before any
    /// cut (a measure's depth, -M): the whole last group of ties is ordered first.
    #[test]
    fn ascending_ties_rank_equal_scores_by_id_ascending() {
        // q1: a (relevant) ties with b and c at the top, d below
        let q = Qrels::from_bytes(b"q1 0 a 1\nq1 0 d 1\n", "q").unwrap();
        let r = Run::from_bytes(
            b"q1 Q0 c 1 5 r\nq1 Q0 a 2 5 r\nq1 Q0 b 3 5 r\nq1 Q0 d 4 1 r\n",
            "r",
        )
        .unwrap();
        let value = |names: &[&str], ties: Ties, max_docs: Option<u64>| {
            let o = Options {
                ties,
                max_docs,
                ..Options::default()
            };
            let ev = Evaluator::new(q.clone(), MeasureSet::parse(names).unwrap(), o).unwrap();
            ev.evaluate(&r).unwrap().summary_by_name(names[0]).unwrap()
        };
        // trec_eval: c, b, a, d; ascending: a, b, c, d
        assert_eq!(value(&["recip_rank"], Ties::DocDescending, None), 1.0 / 3.0);
        assert_eq!(value(&["recip_rank"], Ties::DocAscending, None), 1.0);
        // a depth of 1 (P@1 alone) and -M 1 cut after the ties are ordered
        assert_eq!(value(&["P_1"], Ties::DocDescending, None), 0.0);
        assert_eq!(value(&["P_1"], Ties::DocAscending, None), 1.0);
        assert_eq!(value(&["recip_rank"], Ties::DocAscending, Some(1)), 1.0);
        assert_eq!(value(&["recip_rank"], Ties::DocDescending, Some(2)), 0.0);
        // map: a at 1 and d at 4 (ascending), a at 3 and d at 4 (trec_eval)
        assert_eq!(
            value(&["map"], Ties::DocAscending, None),
            (1.0 + 2.0 / 4.0) / 2.0
        );
        let trec = value(&["map"], Ties::DocDescending, None);
        assert!((trec - (1.0 / 3.0 + 2.0 / 4.0) / 2.0).abs() < 1e-15);
        assert_eq!(Ties::parse("ascending").unwrap(), Ties::DocAscending);
        assert!(Ties::parse("asc")
            .unwrap_err()
            .to_string()
            .contains("'ascending'"));
    }

    /// A held run keeps the rankings its evaluation sorted whole (not those it cut by
    /// selection, nor those that came in score order), and evaluations after that give
    /// the same bits as on a run never evaluated: whole rankings, cut ones, ascending
    /// ties, -M; rankings shuffled, with ties, shorter and longer than the cut-offs;
    /// the same rankings in score order (a run file's) keep nothing.
    #[test]
    fn a_held_run_keeps_its_rankings_and_the_same_values() {
        let mut rng = crate::testing::Lcg::new(5);
        let mut next = |m: u64| rng.below(m);
        let (mut qrels, mut run) = (String::new(), String::new());
        for q in 0..40 {
            for d in 0..next(20) {
                qrels += &format!("q{q} 0 d{d} {}\n", next(4) as i64 - 1);
            }
            qrels += &format!("q{q} 0 top 1\n");
            for d in (0..next(30))
                .map(|_| next(60))
                .collect::<std::collections::BTreeSet<_>>()
            {
                run += &format!("q{q} Q0 d{d} 0 {} r\n", next(5));
            }
        }
        let qrels = Qrels::from_bytes(qrels.as_bytes(), "qrels").unwrap();
        let fresh = || Run::from_bytes(run.as_bytes(), "run").unwrap();
        let in_order = |q: &RunQuery| q.values.windows(2).all(|w| w[0] >= w[1]);
        let settings: [(&[&str], Ties, Option<u64>); 5] = [
            (&["map", "P.5", "ndcg"], Ties::DocDescending, None),
            (&["P.5", "ndcg_cut.8"], Ties::DocDescending, None),
            (&["P.5", "recip_rank"], Ties::DocAscending, None),
            (&["map", "ndcg_cut.8"], Ties::DocAscending, Some(6)),
            (&["ndcg_cut.8"], Ties::DocDescending, Some(3)),
        ];
        let evaluate = |run: &Run, (names, ties, max_docs): (&[&str], Ties, Option<u64>)| {
            let o = Options {
                ties,
                max_docs,
                complete: true,
                ..Options::default()
            };
            let ev = Evaluator::new(qrels.clone(), MeasureSet::parse(names).unwrap(), o).unwrap();
            let r = ev.evaluate(run).unwrap();
            let mut bits = Vec::new();
            for q in 0..r.num_queries() {
                bits.extend((0..r.columns().len()).map(|c| r.value(q, c).to_bits()));
            }
            bits
        };
        let expect: Vec<_> = settings.iter().map(|&s| evaluate(&fresh(), s)).collect();
        // the cut setting alone keeps only the rankings it sorted whole (no longer
        // than its depth)
        let held = fresh();
        evaluate(&held, settings[1]);
        for q in held.queries() {
            let sorted = q.len() <= 8 && !in_order(q);
            let kept = q.ranked.get().is_some_and(|k| !k.is_empty());
            assert_eq!(kept, sorted, "{}", show(&q.qid));
        }
        let held = fresh();
        for round in 0..2 {
            for (s, e) in settings.iter().zip(&expect) {
                assert_eq!(&evaluate(&held, *s), e, "round {round}: {s:?}");
            }
            // after the first setting the ranking of every query out of order is kept
            // (an in-order one's, if any, as the empty ranking: the arrival order)
            for q in held.queries() {
                let kept = q.ranked.get().is_some_and(|k| !k.is_empty());
                assert_eq!(kept, !in_order(q), "{}", show(&q.qid));
            }
        }
        // the same run in score order, as a file has it: the same values, nothing kept
        let mut sorted = String::new();
        for q in held.queries() {
            let mut order = Vec::new();
            q.ranking(&mut order);
            for &i in &order {
                let (d, v) = (show(q.docs.get(i as usize)), q.values[i as usize]);
                sorted += &format!("{} Q0 {d} 0 {v} r\n", show(&q.qid));
            }
        }
        let ranked = Run::from_bytes(sorted.as_bytes(), "run").unwrap();
        for (s, e) in settings.iter().zip(&expect) {
            assert_eq!(&evaluate(&ranked, *s), e, "in score order: {s:?}");
        }
        // (no memory held: an in-order ranking is kept as the empty one)
        assert!(ranked
            .queries()
            .iter()
            .all(|q| q.ranked.get().is_none_or(|k| k.is_empty())));
        assert!(ranked.queries().iter().any(|q| q.ranked.get().is_some()));
        let kept = held
            .queries()
            .iter()
            .filter(|q| q.ranked.get().is_some_and(|k| !k.is_empty()));
        assert!(
            kept.count() > 20,
            "most queries are shuffled: their positions are kept"
        );
        assert!(held.heap_bytes() > fresh().heap_bytes());
    }

    fn setup() -> (Qrels, Vec<u8>) {
        let qrels = Qrels::from_bytes(
            b"q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 x 1\nq3 0 z 1\n",
            "qrels",
        )
        .unwrap();
        let run = b"q1 Q0 a 1 0.5 r\nq1 Q0 c 2 0.5 r\nq1 Q0 d 3 0.1 r\nq2 Q0 x 1 3 r\nq2 Q0 y 2 2 r\nq9 Q0 a 1 1 r2\n".to_vec();
        (qrels, run)
    }

    #[test]
    fn streaming_equals_loaded() {
        let (qrels, text) = setup();
        let ms = MeasureSet::parse(&["all_trec"]).unwrap();
        let opts = Options {
            complete: true,
            ..Options::default()
        };
        let ev = Evaluator::new(qrels, ms, opts).unwrap();
        let loaded = ev
            .evaluate(&Run::from_bytes(&text, "run").unwrap())
            .unwrap();
        let streamed = ev
            .evaluate_reader(std::io::Cursor::new(text.clone()), "run", None)
            .unwrap();
        assert_eq!(loaded.to_trec(true, true), streamed.to_trec(true, true));
        assert_eq!(streamed.runid(), b"r2");
    }

    #[test]
    fn streaming_needs_grouped_runs() {
        let (qrels, _) = setup();
        let ms = MeasureSet::parse(&["map"]).unwrap();
        let ev = Evaluator::new(qrels, ms, Options::default()).unwrap();
        let text = b"q1 Q0 a 1 1 r\nq2 Q0 a 1 1 r\nq1 Q0 b 2 0 r\nq3 Q0 z 1 1 r\n";
        let e = ev
            .evaluate_reader(&text[..], "run.txt", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("run.txt:3: query 'q1' appears again"), "{e}");
        // and a judged query missing without complete is an error naming it
        let text = b"q1 Q0 a 1 1 r\nq2 Q0 a 1 1 r\n";
        let e = ev.evaluate_reader(&text[..], "run.txt", None).unwrap_err();
        assert!(
            matches!(e, Error::MissingQuery { ref query } if query == "q3"),
            "{e}"
        );
    }

    fn new_err(qrels: &[u8], measure: &str, options: Options) -> Error {
        let qrels = Qrels::from_bytes(qrels, "qrels").unwrap();
        let ms = MeasureSet::parse(&[measure]).unwrap();
        Evaluator::new(qrels, ms, options).unwrap_err()
    }

    #[test]
    fn num_docs_must_cover_the_judged_documents() {
        let qrels = b"q1 0 a 1\nq1 0 b 0\nq1 0 c -1\nq2 0 a 1\n";
        let n = |n| Options {
            num_docs_in_collection: n,
            ..Options::default()
        };
        let e = new_err(qrels, "map", n(-1));
        assert!(matches!(e, Error::Option(_)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("num_docs_in_collection (-N) must be 0 (unknown)"),
            "{e}"
        );
        // q1 has three judged documents (labels of every sign)
        let e = new_err(qrels, "fallout@10", n(2));
        assert!(matches!(e, Error::Option(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "num_docs_in_collection (-N) is 2, but query 'q1' alone has 3 judged documents; \
             -N counts every document of the collection"
        );
        let q = Qrels::from_bytes(qrels, "qrels").unwrap();
        for ok in [0, 3, i64::MAX] {
            let ms = MeasureSet::parse(&["utility"]).unwrap();
            assert!(Evaluator::new(q.clone(), ms, n(ok)).is_ok(), "{ok}");
        }
        // a measure that needs -N still says so when it is 0
        let e = new_err(qrels, "fallout@10", n(0)).to_string();
        assert!(e.contains("needs the number of documents"), "{e}");
    }

    #[test]
    fn thread_counts_follow_the_one_rule() {
        let e = new_err(
            b"q 0 d 1\n",
            "map",
            Options {
                n_threads: crate::parallel::MAX_THREADS + 1,
                ..Options::default()
            },
        );
        assert!(matches!(e, Error::Option(_)), "{e:?}");
        assert!(
            e.to_string().starts_with(
                "n_threads (--threads) must be a whole number from 0 to 4096, got 4097"
            ),
            "{e}"
        );
    }

    #[test]
    fn hand_built_measures_meet_the_parser_rules() {
        let qrels = Qrels::from_bytes(b"q 0 d 1\n", "qrels").unwrap();
        let mut m = crate::measure::Measure::new(Family::SetF);
        m.params = crate::measure::Params::Numbers {
            values: vec![-1.0],
            text: None,
        };
        let mut set = MeasureSet::default();
        set.add(m);
        let e = Evaluator::new(qrels, set, Options::default()).unwrap_err();
        assert!(matches!(e, Error::Measure(_)), "{e:?}");
        assert!(
            e.to_string().contains("measure 'set_F': parameter beta"),
            "{e}"
        );
    }

    /// Labels too large for exponential gains are refused by name, never NaN.
    #[test]
    fn exponential_gains_of_huge_labels_are_refused() {
        let qrels = b"q1 0 a 1\nq2 0 b 0\nq2 0 huge 1100\n";
        for measure in [
            "ndcg_burges",
            "ndcg_burges@10",
            "dcg_burges",
            "dcg_burges@5",
            "nDCG(dcg='exp-log2')@10",
            "err@10",
            "nerr@10",
        ] {
            let e = new_err(qrels, measure, Options::default());
            assert!(matches!(e, Error::Input(_)), "{measure}: {e:?}");
            let e = e.to_string();
            assert!(
                e.starts_with("query 'q2', document 'huge': label 1100 is too large: "),
                "{measure}: {e}"
            );
        }
        // the largest exponent a double holds is fine alone; three of them overflow
        let ok = b"q1 0 a 1023\nq1 0 b 1\n";
        let run = Run::from_bytes(b"q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n", "run").unwrap();
        for measure in ["ndcg_burges", "err@10", "nerr@10", "dcg_burges"] {
            let q = Qrels::from_bytes(ok, "qrels").unwrap();
            let ms = MeasureSet::parse(&[measure]).unwrap();
            let res = Evaluator::new(q, ms, Options::default())
                .unwrap()
                .evaluate(&run)
                .unwrap();
            let v = res.summary(0);
            assert!(v.is_finite(), "{measure}: {v}");
        }
        let e = new_err(
            b"q1 0 a 1023\nq1 0 b 1023\nq1 0 c 1023\n",
            "ndcg_burges",
            Options::default(),
        );
        assert!(e.to_string().contains("label 1023 is too large"), "{e}");
        // ERR with an explicit gmax counts larger labels as gmax: nothing overflows
        let q = Qrels::from_bytes(qrels, "qrels").unwrap();
        let ms = MeasureSet::parse(&["ERR(gmax=4)@10"]).unwrap();
        assert!(Evaluator::new(q.clone(), ms, Options::default()).is_ok());
        // linear gains of the same labels are fine
        let ms = MeasureSet::parse(&["ndcg", "ndcg_cut.10", "rbp"]).unwrap();
        assert!(Evaluator::new(q, ms, Options::default()).is_ok());
        // user gains are bounded by their domain (2^53), so no sum of them overflows,
        // not even an unjudged document's gain repeated down the ranking
        for measure in [
            "ndcg.2=1e308",
            "ndcg.-1=1e308",
            "nDCG(g2=1e308)@10",
            "rbp.2=-1e20",
        ] {
            let e = MeasureSet::parse(&[measure]).unwrap_err();
            assert!(matches!(e, Error::Measure(_)), "{measure}: {e:?}");
            assert!(e.to_string().contains("-2^53 to 2^53"), "{measure}: {e}");
        }
        assert!(
            MeasureSet::parse(&["ndcg.2=9007199254740992", "ndcg.-1=-9007199254740992"]).is_ok()
        );
    }

    /// Pooled AUROC: the Mann-Whitney statistic of every query's judged retrieved
    /// documents together (unjudged and run-only queries left out).
    #[test]
    fn pooled_auroc_by_hand() {
        let q = Qrels::from_bytes(b"q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 0\n", "q").unwrap();
        let r = Run::from_bytes(
            b"q1 Q0 a 1 0.5 r\nq1 Q0 b 2 0.9 r\nq1 Q0 x 3 0.1 r\nq2 Q0 c 1 0.9 r\nq2 Q0 d 2 0.2 r\nq3 Q0 e 1 5 r\n",
            "r",
        )
        .unwrap();
        // positives 0.5, 0.9; negatives 0.9, 0.2: pairs 0 + 1 + 0.5 + 1 = 2.5 of 4
        assert_eq!(pooled_auroc(&q, &r, 1, None).unwrap(), 0.625);
        // at level 2 only c is positive: above b (tie: 1/2) and d, a is negative
        assert_eq!(pooled_auroc(&q, &r, 2, None).unwrap(), 2.5 / 3.0);
        assert!(pooled_auroc(&q, &r, 1, Some(0.0)).is_err());
        assert!(pooled_auroc(&q, &r, -1, None).is_err());
    }

    #[test]
    fn thread_count_does_not_change_numbers() {
        let (qrels, text) = setup();
        let run = Run::from_bytes(&text, "run").unwrap();
        let ms = MeasureSet::parse(&["all_trec"]).unwrap();
        let out: Vec<Vec<u8>> = [1, 2, 4]
            .iter()
            .map(|&n| {
                let opts = Options {
                    complete: true,
                    n_threads: n,
                    ..Options::default()
                };
                let ev = Evaluator::new(qrels.clone(), ms.clone(), opts).unwrap();
                ev.evaluate(&run).unwrap().to_trec(true, true)
            })
            .collect();
        assert!(out.windows(2).all(|w| w[0] == w[1]));
    }
}
