//! The engine: judgments and measures prepared once, then each run evaluated query by
//! query (in parallel), and the `all` row summed in query order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use std::io::Read;
use std::path::Path;

use rustc_hash::FxHashSet;

use crate::error::{show, Error, Location, Result};
use crate::ids::RepeatFinder;
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
    /// The largest label of the qrels (ERR's default maximum grade).
    max_label: i64,
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
        if let Some(m) = measures
            .measures()
            .iter()
            .find(|m| m.family.needs_num_docs())
        {
            if options.num_docs_in_collection <= 0 {
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
                 of it is judged and every measure is undefined; trec_eval fails on such a \
                 query. Remove its lines from the qrels or give them labels >= 0",
                show(q.id())
            )));
        }
        let max_label = qrels
            .queries()
            .iter()
            .filter_map(|q| q.levels().last().map(|&(l, _)| l))
            .max()
            .unwrap_or(0);
        Ok(Evaluator {
            qrels,
            measures,
            options,
            max_label,
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
        let qrels_queries: Vec<&QrelsQuery> = pairs.iter().map(|(q, _)| *q).collect();
        Ok(self.finish(&qrels_queries, rows, run.runid().to_vec()))
    }

    /// Evaluate a run file query by query without holding the run in memory: only one
    /// block of the file and the per-query values are kept. The file must be grouped
    /// by query (all lines of a query together, as trec_eval writes them); otherwise
    /// the error names the first query that appears again.
    pub fn evaluate_file(&self, path: impl AsRef<Path>) -> Result<Results> {
        self.evaluate_file_cancellable(path, None)
    }

    /// [`Evaluator::evaluate_file`], stopping soon after `cancel` is set.
    pub fn evaluate_file_cancellable(
        &self,
        path: impl AsRef<Path>,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        let path = path.as_ref();
        let (r, size) = crate::trec::open_input_sized(path)?;
        self.evaluate_stream(r, &path.display().to_string(), cancel, size)
    }

    /// Streaming evaluation of TREC run text from any reader (see [`Evaluator::evaluate_file`]).
    pub fn evaluate_reader(
        &self,
        r: impl Read + Send,
        source: &str,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        self.evaluate_stream(r, source, cancel, None)
    }

    fn evaluate_stream(
        &self,
        r: impl Read + Send,
        source: &str,
        cancel: Option<&AtomicBool>,
        size_hint: Option<u64>,
    ) -> Result<Results> {
        crate::parallel::with_threads(self.options.n_threads, || {
            let mut sink = Streamer {
                stream: self.stream(source, cancel),
                current: None,
            };
            let block = crate::trec::block_size(size_hint);
            let runid = crate::trec::read_run_blocks(r, source, &mut sink, block, cancel)?;
            if let Some(c) = sink.current.take() {
                sink.stream.push(c);
            }
            sink.stream.finish(runid)
        })
    }

    /// Evaluate a run handed over query by query (see [`QueryStream`]): only the
    /// per-query values are kept. `source` names the run in error messages; the
    /// evaluation stops with [`Error::Interrupted`] soon after `cancel` is set.
    pub fn stream<'a>(&'a self, source: &str, cancel: Option<&'a AtomicBool>) -> QueryStream<'a> {
        QueryStream {
            ev: self,
            source: source.to_string(),
            cancel,
            rows: (0..self.qrels.len()).map(|_| None).collect(),
            seen: FxHashSet::default(),
            pending: Vec::new(),
            pending_results: 0,
            spare: Vec::new(),
            recycle: false,
            check_duplicates: true,
            pool: crate::parallel::Pool::new(self.options.n_threads),
        }
    }

    fn finish(&self, queries: &[&QrelsQuery], rows: Vec<Row>, runid: Vec<u8>) -> Results {
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
    fn check_coverage(
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
                    )
                    .with_max_label(self.max_label);
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

/// Evaluates a run handed over one query at a time, keeping only the per-query values
/// (bounded memory): the core of [`Evaluator::evaluate_file`], also usable for results
/// produced on the fly. Each query must come whole and once. Queries are evaluated in
/// parallel batches; the numbers are those of [`Evaluator::evaluate`] on the same run.
///
/// ```
/// use irmetrics::{Evaluator, MeasureSet, Options, Qrels};
/// let qrels = Qrels::from_bytes(b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 1\n", "qrels").unwrap();
/// let ev = Evaluator::new(qrels, MeasureSet::parse(&["P.1"]).unwrap(), Options::default()).unwrap();
/// let mut stream = ev.stream("my engine", None);
/// stream.add(b"q1", [(&b"d2"[..], 0.9), (&b"d1"[..], 0.5)]).unwrap();
/// stream.add(b"q2", [(&b"d9"[..], 1.0)]).unwrap();
/// let res = stream.finish(b"engine-v1".to_vec()).unwrap();
/// assert_eq!(res.summary_by_name("P_1"), Some(0.5));
/// ```
pub struct QueryStream<'a> {
    ev: &'a Evaluator,
    source: String,
    cancel: Option<&'a AtomicBool>,
    /// One slot per qrels query.
    rows: Vec<Option<Row>>,
    /// Queries already handed over.
    seen: FxHashSet<Box<[u8]>>,
    pending: Vec<RunQuery>,
    pending_results: usize,
    /// Evaluated queries' buffers, for [`QueryStream::spare`].
    spare: Vec<RunQuery>,
    recycle: bool,
    check_duplicates: bool,
    pool: crate::parallel::Pool,
}

/// Pending results that make a batch worth evaluating in parallel.
const BATCH_RESULTS: usize = 1 << 18;

impl QueryStream<'_> {
    /// Add one query's results (`(document, score)` pairs in any order); fails if the
    /// query was added before, a document occurs twice or a score is NaN.
    pub fn add<'d>(
        &mut self,
        qid: &[u8],
        results: impl IntoIterator<Item = (&'d [u8], f64)>,
    ) -> Result<()> {
        if self.contains(qid) {
            return Err(Error::Input(format!(
                "{}: query '{}' was given before; each query must come whole, once",
                self.source,
                show(qid)
            )));
        }
        let mut q = self.spare();
        q.qid = qid.into();
        for (doc, score) in results {
            q.push(doc, score)?;
        }
        if !q.is_empty() {
            self.push(q);
        }
        if self.wants_flush() {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether query `qid` was handed over already.
    pub(crate) fn contains(&self, qid: &[u8]) -> bool {
        self.seen.contains(qid)
    }

    /// Skip the duplicate-document check (for inputs unique by construction: dict keys).
    pub(crate) fn unique_documents(&mut self) {
        self.check_duplicates = false;
    }

    /// An empty query whose buffers (from an evaluated query) can be filled again.
    pub(crate) fn spare(&mut self) -> RunQuery {
        self.recycle = true;
        self.spare.pop().unwrap_or_default()
    }

    /// Hand over one whole query (not seen before: see [`QueryStream::contains`]).
    pub(crate) fn push(&mut self, q: RunQuery) {
        self.seen.insert(q.qid.clone());
        self.pending_results += q.len();
        self.pending.push(q);
    }

    /// True when enough results wait for [`QueryStream::flush`].
    pub(crate) fn wants_flush(&self) -> bool {
        self.pending_results >= BATCH_RESULTS
    }

    /// Evaluate the waiting queries (in parallel) and keep only their values.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending_results = 0;
        let ev = self.ev;
        let source = self.source.as_str();
        let check = self.check_duplicates;
        let out = self.pool.install(|| {
            crate::parallel::map_with(
                &pending,
                || (Scratch::default(), RepeatFinder::default()),
                |(s, dup), rq| -> Result<Option<(usize, Row)>> {
                    if check {
                        rq.check_duplicates(dup).map_err(|e| match e {
                            Error::DuplicateEntry { query, doc, .. } => Error::DuplicateEntry {
                                location: Location {
                                    source: source.to_string(),
                                    line: 0,
                                },
                                query,
                                doc,
                                first: String::new(),
                            },
                            e => e,
                        })?;
                    }
                    let Some(qi) = ev.qrels.position(rq.id()) else {
                        return Ok(None); // not judged: ignored, as trec_eval does
                    };
                    let qq = &ev.qrels.queries()[qi];
                    Ok(Some((qi, ev.eval_query(qq, Some(rq), s))))
                },
            )
        });
        for r in out {
            if let Some((qi, row)) = r? {
                self.rows[qi] = Some(row);
            }
        }
        if self.recycle {
            for mut q in pending {
                q.clear();
                self.spare.push(q);
            }
        }
        Ok(())
    }

    /// Evaluate what is left and return the results (`runid`: the run's tag).
    pub fn finish(mut self, runid: Vec<u8>) -> Result<Results> {
        self.flush()?;
        let ev = self.ev;
        let mut rows = self.rows;
        let matched = rows.iter().filter(|r| r.is_some()).count();
        let seen = self.seen;
        ev.check_coverage(matched, || {
            let mut ids: Vec<&[u8]> = seen.iter().map(|q| &**q).collect();
            ids.sort_unstable();
            ids.truncate(3);
            ids.iter().map(|i| i.to_vec()).collect()
        })?;
        let queries: Vec<&QrelsQuery> = ev.qrels.queries().iter().collect();
        if !ev.options.complete {
            if let Some(i) = rows.iter().position(|r| r.is_none()) {
                return Err(Error::MissingQuery {
                    query: show(queries[i].id()),
                });
            }
        }
        let mut s = Scratch::default();
        let rows: Vec<Row> = queries
            .iter()
            .zip(rows.iter_mut())
            .map(|(qq, row)| {
                row.take()
                    .unwrap_or_else(|| ev.eval_query(qq, None, &mut s))
            })
            .collect();
        Ok(ev.finish(&queries, rows, runid))
    }
}

/// Hands queries from a producing thread to [`Evaluator::evaluate_pipelined`]'s
/// evaluating thread, in batches, and brings back evaluated queries' buffers for reuse.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) struct Batcher {
    batch: Vec<RunQuery>,
    batch_results: usize,
    spare: Vec<RunQuery>,
    seen: FxHashSet<Box<[u8]>>,
    tx: std::sync::mpsc::SyncSender<Vec<RunQuery>>,
    back: std::sync::mpsc::Receiver<Vec<RunQuery>>,
    stopped: bool,
}

#[cfg_attr(not(feature = "python"), allow(dead_code))]
impl Batcher {
    /// Whether a query with this id may come now (each query comes once).
    pub(crate) fn accepts(&self, qid: &[u8]) -> bool {
        !self.seen.contains(qid)
    }

    /// An empty query to fill (buffers of evaluated queries when there are some).
    pub(crate) fn spare(&mut self) -> RunQuery {
        if self.spare.is_empty() {
            while let Ok(v) = self.back.try_recv() {
                self.spare.extend(v);
            }
        }
        self.spare.pop().unwrap_or_default()
    }

    /// Hand over a whole query. Returns true when a batch left for evaluation (a good
    /// moment to look for Ctrl-C); an evaluation that stopped (an error) shows at the end.
    pub(crate) fn push(&mut self, q: RunQuery) -> bool {
        self.seen.insert(q.qid.clone());
        self.batch_results += q.len();
        self.batch.push(q);
        if self.batch_results < BATCH_RESULTS {
            return false;
        }
        self.send();
        true
    }

    fn send(&mut self) {
        self.batch_results = 0;
        let batch = std::mem::take(&mut self.batch);
        if !self.stopped && !batch.is_empty() && self.tx.send(batch).is_err() {
            self.stopped = true;
        }
    }
}

impl Evaluator {
    /// Evaluate the queries that `produce` makes on the calling thread while the batches
    /// already made are evaluated on other threads (conversion from Python objects
    /// overlaps evaluation). `produce` returns Ok(false) to abandon the evaluation;
    /// `wait` runs the closure it is given (the Python layer releases the GIL there).
    /// `unique`: the documents of a query are known to be distinct (dict keys).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn evaluate_pipelined<E>(
        &self,
        runid: Vec<u8>,
        unique: bool,
        produce: impl FnOnce(&mut Batcher) -> std::result::Result<bool, E>,
        wait: impl FnOnce(&mut (dyn FnMut() + Send)),
    ) -> std::result::Result<Option<Result<Results>>, E> {
        let cancel = AtomicBool::new(false);
        let cancel = &cancel;
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<RunQuery>>(1);
            let (back_tx, back) = std::sync::mpsc::channel();
            let worker = scope.spawn(move || -> Result<Results> {
                let mut stream = self.stream("run", Some(cancel));
                stream.recycle = true;
                if unique {
                    stream.unique_documents();
                }
                for batch in rx {
                    for q in batch {
                        stream.push(q);
                    }
                    stream.flush()?;
                    let _ = back_tx.send(std::mem::take(&mut stream.spare));
                }
                stream.finish(runid)
            });
            let mut b = Batcher {
                batch: Vec::new(),
                batch_results: 0,
                spare: Vec::new(),
                seen: FxHashSet::default(),
                tx,
                back,
                stopped: false,
            };
            let produced = produce(&mut b);
            if !matches!(produced, Ok(true)) {
                cancel.store(true, Ordering::Relaxed);
            }
            b.send();
            drop(b); // closes the channel: the worker finishes
            let mut handle = Some(worker);
            let mut joined = None;
            wait(&mut || joined = handle.take().map(|h| h.join()));
            let res = match joined {
                Some(Ok(r)) => r,
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => Err(Error::Interrupted),
            };
            match produced {
                Ok(true) => Ok(Some(res)),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }
}

/// Groups the segments of a streamed run file into queries for a [`QueryStream`].
struct Streamer<'a> {
    stream: QueryStream<'a>,
    current: Option<RunQuery>,
}

impl crate::trec::SegmentSink for Streamer<'_> {
    fn segment(&mut self, seg: RunQuery, line: u64) -> Result<()> {
        match &mut self.current {
            Some(c) if c.qid == seg.qid => return c.append(seg),
            _ => {}
        }
        if self.stream.contains(&seg.qid) {
            return Err(Error::format(
                &self.stream.source,
                line,
                format!(
                    "query '{}' appears again after other queries: streaming evaluation needs \
                     the run grouped by query (sort it, e.g. `sort -s -k1,1`, or load it whole \
                     with Run.from_file)",
                    show(&seg.qid)
                ),
            ));
        }
        if let Some(c) = self.current.take() {
            self.stream.push(c);
        }
        self.current = Some(seg);
        Ok(())
    }

    fn block_done(&mut self) -> Result<()> {
        self.stream.flush()
    }
}

/// Evaluate one run against judgments: the one-call convenience.
pub fn evaluate(qrels: &Qrels, run: &Run, measures: &[&str], options: Options) -> Result<Results> {
    let set = MeasureSet::parse(measures)?;
    Evaluator::new(qrels.clone(), set, options)?.evaluate(run)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let streamed = ev.evaluate_reader(&text[..], "run", None).unwrap();
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

    /// Many queries: a run of 600 queries x 1000 results, several batches.
    fn big() -> (Qrels, Run) {
        let mut q = String::new();
        let mut r = String::new();
        for i in 0..600u64 {
            for j in 0..1000u64 {
                let d = (i * 7919 + j * 104_729) % 5000;
                r.push_str(&format!(
                    "q{i} Q0 d{d} 0 {} t\n",
                    (j * 37 % 101) as f64 / 10.0
                ));
                if j % 25 == 0 {
                    q.push_str(&format!("q{i} 0 d{d} {}\n", j % 3));
                }
            }
        }
        (
            Qrels::from_bytes(q.as_bytes(), "q").unwrap(),
            Run::from_bytes(r.as_bytes(), "r").unwrap(),
        )
    }

    #[test]
    fn query_stream_and_pipeline_equal_whole_evaluation() {
        let (qrels, run) = big();
        let ms = MeasureSet::parse(&["all_trec"]).unwrap();
        let ev = Evaluator::new(qrels, ms, Options::default()).unwrap();
        let want = ev.evaluate(&run).unwrap().to_trec(true, false);
        assert!(ev.evaluate(&run).unwrap().summary_by_name("num_rel_ret") > Some(1000.0));
        // query by query
        let mut stream = ev.stream("r", None);
        for q in run.queries() {
            stream.add(q.id(), q.iter()).unwrap();
        }
        let got = stream.finish(b"t".to_vec()).unwrap();
        assert_eq!(got.to_trec(true, false), want);
        // pipelined, buffers recycled
        let res = ev
            .evaluate_pipelined(
                b"t".to_vec(),
                false,
                |b| -> std::result::Result<bool, ()> {
                    for q in run.queries() {
                        let mut rq = b.spare();
                        assert!(rq.is_empty());
                        rq.qid = q.id().into();
                        for (d, s) in q.iter() {
                            rq.push(d, s).unwrap();
                        }
                        b.push(rq);
                    }
                    Ok(true)
                },
                |f| f(),
            )
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(res.to_trec(true, false), want);
        // abandoned, and failed
        let none = ev.evaluate_pipelined(Vec::new(), false, |_| Ok::<_, ()>(false), |f| f());
        assert!(matches!(none, Ok(None)));
        let failed = ev.evaluate_pipelined(Vec::new(), false, |_| Err::<bool, _>("no"), |f| f());
        assert!(matches!(failed, Err("no")));
    }

    #[test]
    fn query_stream_refuses_repeats_and_duplicates() {
        let (qrels, _) = setup();
        let ms = MeasureSet::parse(&["map"]).unwrap();
        let ev = Evaluator::new(qrels, ms, Options::default()).unwrap();
        let mut s = ev.stream("engine", None);
        s.add(b"q1", [(&b"a"[..], 1.0)]).unwrap();
        let e = s.add(b"q1", [(&b"c"[..], 1.0)]).unwrap_err().to_string();
        assert!(e.contains("query 'q1' was given before"), "{e}");
        s.add(b"q2", [(&b"x"[..], 1.0), (&b"x"[..], 0.5)]).unwrap();
        let e = s.finish(Vec::new()).unwrap_err().to_string();
        assert_eq!(e, "engine: document 'x' appears twice for query 'q2'");
        let mut s = ev.stream("engine", None);
        let e = s
            .add(b"q1", [(&b"a"[..], f64::NAN)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("NaN"), "{e}");
    }
}
