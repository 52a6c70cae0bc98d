//! The engine: judgments and measures prepared once, then each run evaluated query by
//! query (in parallel), and the `all` row summed in query order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{show, Error, Result};
use crate::measure::{Family, MeasureSet};
use crate::metrics::{self, QueryCtx, NONPOOL, UNJUDGED};
use crate::qrels::{Qrels, QrelsQuery};
use crate::results::Results;
use crate::run::{Run, RunQuery};

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
}

/// Per-thread buffers reused across queries.
#[derive(Default)]
struct Scratch {
    order: Vec<u32>,
    rels: Vec<i64>,
}

/// One query's values.
pub(crate) struct Row {
    pub(crate) values: Vec<f64>,
    pub(crate) relstring: Option<String>,
}

impl Evaluator {
    /// Prepare an evaluator. Fails when the options or judgments cannot be used.
    pub fn new(
        qrels: impl Into<Arc<Qrels>>,
        measures: MeasureSet,
        options: Options,
    ) -> Result<Evaluator> {
        let qrels = qrels.into();
        if measures.is_empty() {
            return Err(Error::Measure("no measure requested".into()));
        }
        if options.max_docs == Some(0) {
            return Err(Error::Option(
                "max_docs (-M) must be at least 1; leave it unset to evaluate whole rankings"
                    .into(),
            ));
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
                 of it is judged and every measure is undefined; trec_eval fails on such a \
                 query. Remove its lines from the qrels or give them labels >= 0",
                show(q.id())
            )));
        }
        Ok(Evaluator {
            qrels,
            measures,
            options,
        })
    }

    /// The judgments.
    pub fn qrels(&self) -> &Qrels {
        &self.qrels
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
        let pairs = self.pair_queries(run)?;
        let rows = crate::parallel::with_threads(self.options.n_threads, || {
            crate::parallel::map_with(&pairs, Scratch::default, |s, &(qq, rq)| {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return None;
                }
                Some(self.eval_query(qq, rq, s))
            })
        });
        let rows: Vec<Row> = rows
            .into_iter()
            .collect::<Option<Vec<Row>>>()
            .ok_or(Error::Interrupted)?;
        let ids = pairs.iter().map(|(q, _)| q.id().into()).collect();
        let mut res = Results::new(self.measures.clone(), ids, rows, run.runid().to_vec());
        if self.options.complete {
            // trec_eval 10 quirk: with -c, the `all` value of num_rel counts the judged
            // documents with label >= 1 whatever -l says.
            let total: u64 = pairs.iter().map(|(q, _)| q.num_rel(1)).sum();
            res.set_summary(Family::NumRel, total as f64);
        }
        Ok(res)
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
        if matched == 0 && !self.options.complete {
            let ex = |ids: Vec<&[u8]>| {
                ids.iter()
                    .take(3)
                    .map(|i| format!("'{}'", show(i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(Error::Input(format!(
                "no query of the run is judged in the qrels (run queries: {}; qrels queries: \
                 {}); are the files swapped or from different collections?",
                ex(run.queries().iter().map(|q| q.id()).collect()),
                ex(self.qrels.queries().iter().map(|q| q.id()).collect()),
            )));
        }
        if !self.options.complete {
            if let Some((q, _)) = pairs.iter().find(|(_, r)| r.is_none()) {
                return Err(Error::MissingQuery {
                    query: show(q.id()),
                });
            }
        }
        Ok(pairs)
    }

    fn eval_query(&self, qq: &QrelsQuery, rq: Option<&RunQuery>, s: &mut Scratch) -> Row {
        let o = &self.options;
        s.rels.clear();
        if let Some(rq) = rq {
            rq.ranking(&mut s.order);
            if let Some(m) = o.max_docs {
                s.order.truncate(m.min(usize::MAX as u64) as usize);
            }
            for &i in &s.order {
                let rel = match qq.label(rq.docs.get(i as usize)) {
                    Some(l) if l >= 0 => l,
                    Some(_) => UNJUDGED,
                    None => NONPOOL,
                };
                if !o.judged_only || rel >= 0 {
                    s.rels.push(rel);
                }
            }
        }
        let width: usize = self.measures.measures().iter().map(|m| m.width()).sum();
        let mut values = vec![0.0; width];
        let mut relstring = None;
        let mut at = 0;
        let mut ctxs: Vec<QueryCtx> = Vec::with_capacity(1);
        for m in self.measures.measures() {
            let level = m.rel_level.unwrap_or(o.relevance_level);
            let ctx = match ctxs.iter().find(|c| c.rel_level == level) {
                Some(c) => *c,
                None => {
                    let c = QueryCtx::new(
                        &s.rels,
                        qq.levels(),
                        level,
                        o.num_docs_in_collection,
                        o.judged_only,
                    );
                    ctxs.push(c);
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

/// Evaluate one run against judgments: the one-call convenience.
pub fn evaluate(qrels: &Qrels, run: &Run, measures: &[&str], options: Options) -> Result<Results> {
    let set = MeasureSet::parse(measures)?;
    Evaluator::new(qrels.clone(), set, options)?.evaluate(run)
}
