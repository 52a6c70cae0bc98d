//! Streamed evaluation: a run handed over query by query ([`QueryStream`]), from a file
//! read block by block or from any producer, keeping only the per-query values.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{Evaluator, Scratch};
use crate::error::{show, Error, Result, Unit};
use crate::ids::RepeatFinder;
use crate::intake::{find_duplicate, Arrived, Origins, PieceSink, Place, Sequence};
use crate::progress::Progress;
use crate::qrels::QrelsQuery;
use crate::results::{Results, Row};
use crate::run::RunQuery;

/// The blocks a streamed file is read in: half those of a file read whole. Evaluated
/// as they come, the blocks in flight and their parsed queries are most of a stream's
/// memory (M, 10 M lines, 2 threads: peak 119 MiB with 16 MiB blocks, 89 with 8, 81-87
/// with 2-4; no change in time measured on 2 cores, nor at L, where the judgments and
/// the per-query values are most of it).
const STREAM_BLOCK: usize = 8 << 20;

/// What to do about a query of a streamed file that comes back.
const FILE_HINT: &str = "streaming evaluation needs the run grouped by query (sort it, e.g. \
                         `sort -s -k1,1`, or load it whole with Run.from_file)";
/// What to do about a query handed over twice.
const STREAM_HINT: &str = "each query must come whole, once";

impl Evaluator {
    /// Evaluate a run file query by query without holding the run in memory: only one
    /// block of the file and the per-query values are kept. The file must be grouped
    /// by query (all lines of a query together, as trec_eval writes them); otherwise
    /// the error names the first query that appears again.
    pub fn evaluate_file(&self, path: impl AsRef<Path>) -> Result<Results> {
        self.evaluate_file_cancellable(path, None)
    }

    /// [`Evaluator::evaluate_file`], stopping soon after `cancel` is set. A file whose
    /// name implies another format ([`crate::formats::Format::of_path`]) is read whole.
    pub fn evaluate_file_cancellable(
        &self,
        path: impl AsRef<Path>,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        let path = path.as_ref();
        // TREC text streams; the other formats (by the file name) are read whole
        if crate::formats::Format::of_path(path) != crate::formats::Format::Trec {
            let run = crate::formats::read_run(path, None, cancel)?;
            return self.evaluate_cancellable(&run, cancel);
        }
        self.stream_file(path, cancel, None)
    }

    /// Evaluate the run in a file of any format, as the command line and
    /// `evaluate(qrels, path)` do: a TREC run file whose queries' lines are together (as
    /// trec_eval and the toolkits write them) is evaluated as it is read, as by
    /// [`Evaluator::evaluate_file`], holding a block of the file and the per-query values
    /// instead of the run (10 M lines of 10,000 queries: 85-99 MiB instead of 273-283
    /// MiB, and no slower; 100,000 queries of 100 lines on one thread: up to 15%
    /// slower, measured on a noisy 2-core VM). A file where a query comes back after
    /// another, or with any error, is then read whole and evaluated
    /// ([`Evaluator::evaluate_with`]), so the numbers and the messages are those of the
    /// run read whole. That second reading costs what the first had read up to the
    /// query that came back. Standard input, pipes and the other formats are read whole
    /// at once. `progress` counts the KiB read, then the
    /// queries evaluated (announced batch by batch when streamed).
    pub fn evaluate_path(
        &self,
        path: impl AsRef<Path>,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        let path = path.as_ref();
        let streamable = crate::formats::Format::of_path(path) == crate::formats::Format::Trec
            && crate::trec::input_size(path)?.is_some();
        if streamable {
            match self.stream_file(path, cancel, progress) {
                Err(Error::Interrupted) => return Err(Error::Interrupted),
                Err(_) => {} // read whole below: its numbers, or its message
                ok => return ok,
            }
        }
        let run = crate::formats::read_run_counted(path, None, cancel, progress)?;
        self.evaluate_with(&run, cancel, progress)
    }

    /// A TREC run file evaluated as it is read, in blocks of [`STREAM_BLOCK`] bytes.
    fn stream_file(
        &self,
        path: &Path,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        let blocks = crate::trec::Blocks::open_counted(path, Some(STREAM_BLOCK), cancel, progress)?;
        self.evaluate_blocks(blocks, &path.display().to_string(), cancel, progress)
    }

    /// Streaming evaluation of TREC run text from any reader (see [`Evaluator::evaluate_file`]).
    pub fn evaluate_reader(
        &self,
        r: impl Read + Send + 'static,
        source: &str,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        let blocks = crate::trec::Blocks::reader(r, source, STREAM_BLOCK, cancel)?;
        self.evaluate_blocks(blocks, source, cancel, None)
    }

    fn evaluate_blocks(
        &self,
        blocks: crate::trec::Blocks<'_>,
        source: &str,
        cancel: Option<&AtomicBool>,
        progress: Option<&Progress>,
    ) -> Result<Results> {
        crate::parallel::with_threads(self.options.n_threads, || {
            let mut stream = self.stream_of(Place::new(source, Unit::Line), FILE_HINT, cancel);
            stream.progress = progress;
            let runid = crate::trec::read_run_blocks(blocks, source, &mut stream)?;
            stream.finish(runid)
        })
    }

    /// Evaluate a run handed over query by query (see [`QueryStream`]): only the
    /// per-query values are kept. `source` names the run in error messages; the
    /// evaluation stops with [`Error::Interrupted`] soon after `cancel` is set.
    pub fn stream<'a>(&'a self, source: &str, cancel: Option<&'a AtomicBool>) -> QueryStream<'a> {
        self.stream_of(Place::new(source, Unit::None), STREAM_HINT, cancel)
    }

    /// [`Evaluator::stream`] holding a share of the evaluator instead of a borrow: a
    /// stream that lives as long as its owner wants (a Python object's).
    pub fn stream_shared(ev: Arc<Evaluator>, source: &str) -> QueryStream<'static> {
        QueryStream::new(
            Held::Shared(ev),
            Place::new(source, Unit::None),
            STREAM_HINT,
            None,
        )
    }

    pub(crate) fn stream_of<'a>(
        &'a self,
        place: Place,
        hint: &'static str,
        cancel: Option<&'a AtomicBool>,
    ) -> QueryStream<'a> {
        QueryStream::new(Held::Borrowed(self), place, hint, cancel)
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
    ev: Held<'a>,
    cancel: Option<&'a AtomicBool>,
    /// One slot per qrels query.
    rows: Vec<Option<Row>>,
    /// Joins pieces, takes each query once.
    sequence: Sequence,
    pending: Vec<Arrived>,
    pending_results: usize,
    /// The smallest ids taken (at most 3), for messages.
    examples: Vec<Box<[u8]>>,
    /// Evaluated queries' buffers, for [`PieceSink::spare`].
    pub(crate) spare: Vec<RunQuery>,
    pub(crate) recycle: bool,
    check_duplicates: bool,
    pool: crate::parallel::Pool,
    /// Counts the queries evaluated, announced a batch at a time.
    pub(crate) progress: Option<&'a Progress>,
}

/// The evaluator a stream works for: borrowed, or shared by the stream's owner.
enum Held<'a> {
    Borrowed(&'a Evaluator),
    Shared(Arc<Evaluator>),
}

impl std::ops::Deref for Held<'_> {
    type Target = Evaluator;
    fn deref(&self) -> &Evaluator {
        match self {
            Held::Borrowed(ev) => ev,
            Held::Shared(ev) => ev,
        }
    }
}

/// Pending results that make a batch worth evaluating in parallel.
pub(crate) const BATCH_RESULTS: usize = 1 << 18;

impl<'a> QueryStream<'a> {
    fn new(
        ev: Held<'a>,
        place: Place,
        hint: &'static str,
        cancel: Option<&'a AtomicBool>,
    ) -> QueryStream<'a> {
        let pool = crate::parallel::Pool::new(ev.options.n_threads);
        QueryStream {
            rows: (0..ev.qrels.len()).map(|_| None).collect(),
            ev,
            cancel,
            sequence: Sequence::new(place, hint),
            pending: Vec::new(),
            pending_results: 0,
            examples: Vec::new(),
            spare: Vec::new(),
            recycle: false,
            check_duplicates: true,
            pool,
            progress: None,
        }
    }

    /// Add one query's results (`(document, score)` pairs in any order); fails if the
    /// query was added before, a document occurs twice or a score is NaN.
    pub fn add<'d>(
        &mut self,
        qid: &[u8],
        results: impl IntoIterator<Item = (&'d [u8], f64)>,
    ) -> Result<()> {
        let mut q = self.spare();
        q.qid = qid.into();
        for (doc, score) in results {
            q.push(doc, score)?;
        }
        if self.sequence.is_over(qid) || !q.is_empty() {
            if let Some(done) = self.sequence.whole(q, 0)? {
                self.take(done);
            }
            if self.pending_results >= BATCH_RESULTS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Skip the duplicate-document check (for inputs unique by construction: dict keys).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn unique_documents(&mut self) {
        self.check_duplicates = false;
    }

    /// Take a whole query that a producer already took through a [`Sequence`].
    pub(crate) fn take(&mut self, q: Arrived) {
        // the three smallest ids, for the message about a run sharing no query
        let id = q.0.id();
        if self.examples.len() < 3 || self.examples.last().is_some_and(|l| **l > *id) {
            let at = self.examples.partition_point(|e| **e < *id);
            if self.examples.get(at).is_none_or(|e| **e != *id) {
                self.examples.insert(at, id.into());
                self.examples.truncate(3);
            }
        }
        self.pending_results += q.0.len();
        self.pending.push(q);
    }

    /// Evaluate the waiting queries (in parallel) and keep only their values.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending_results = 0;
        let ev = &*self.ev;
        let place = &self.sequence.place;
        let check = self.check_duplicates;
        let out = self.pool.install(|| {
            crate::parallel::map_with(
                &pending,
                || (Scratch::default(), RepeatFinder::default()),
                |(s, finder), (rq, origins): &(RunQuery, Origins)| {
                    // the duplicate check hashes every document: the lookups in the
                    // qrels use those hashes
                    let hashes = if check {
                        if let Some(d) = find_duplicate(&rq.docs, finder) {
                            return Err(place.duplicate(rq, Some(origins), d));
                        }
                        Some(finder.hashes())
                    } else {
                        None
                    };
                    let Some(qi) = ev.qrels.position(rq.id()) else {
                        return Ok(None); // not judged: ignored, as trec_eval does
                    };
                    let qq = &ev.qrels.queries()[qi];
                    Ok(Some((qi, ev.eval_query_hashed(qq, Some((rq, hashes)), s))))
                },
            )
        });
        let mut evaluated = 0;
        for r in out {
            if let Some((qi, row)) = r? {
                self.rows[qi] = Some(row);
                evaluated += 1;
            }
        }
        crate::progress::announce(self.progress, evaluated);
        crate::progress::advance(self.progress, evaluated);
        if self.recycle {
            for (mut q, _) in pending {
                q.clear();
                self.spare.push(q);
            }
        }
        Ok(())
    }

    /// Evaluate what is left and return the results (`runid`: the run's tag).
    pub fn finish(mut self, runid: Vec<u8>) -> Result<Results> {
        if let Some(q) = self.sequence.finish() {
            self.take(q);
        }
        self.flush()?;
        let ev = &*self.ev;
        let mut rows = std::mem::take(&mut self.rows);
        let matched = rows.iter().filter(|r| r.is_some()).count();
        let examples = std::mem::take(&mut self.examples);
        ev.check_coverage(matched, || examples.iter().map(|i| i.to_vec()).collect())?;
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

impl PieceSink<f64> for QueryStream<'_> {
    /// A piece of a query (from a file, a frame or [`QueryStream::add`]); a query that
    /// comes back after another is refused, naming where.
    fn piece(&mut self, piece: RunQuery, mark: u64) -> Result<()> {
        if let Some(done) = self.sequence.piece(piece, mark)? {
            self.take(done);
        }
        if self.pending_results >= BATCH_RESULTS {
            self.flush()?;
        }
        Ok(())
    }

    fn block_done(&mut self) -> Result<()> {
        self.flush()
    }

    fn spare(&mut self) -> RunQuery {
        self.recycle = true;
        self.spare.pop().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::MeasureSet;
    use crate::qrels::Qrels;
    use crate::run::Run;
    use crate::Options;

    fn setup() -> Qrels {
        Qrels::from_bytes(
            b"q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 x 1\nq3 0 z 1\n",
            "qrels",
        )
        .unwrap()
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
    fn query_stream_equals_whole_evaluation() {
        let (qrels, run) = big();
        let ms = MeasureSet::parse(&["all_trec"]).unwrap();
        let ev = Evaluator::new(qrels, ms, Options::default()).unwrap();
        let want = ev.evaluate(&run).unwrap().to_trec(true, false);
        assert!(ev.evaluate(&run).unwrap().summary_by_name("num_rel_ret") > Some(1000.0));
        let mut stream = ev.stream("r", None);
        for q in run.queries() {
            stream.add(q.id(), q.iter()).unwrap();
        }
        let got = stream.finish(b"t".to_vec()).unwrap();
        assert_eq!(got.to_trec(true, false), want);
    }

    #[test]
    fn a_shared_stream_equals_whole_evaluation() {
        let (qrels, run) = big();
        let ms = MeasureSet::parse(&["map", "ndcg_cut.10", "P.5"]).unwrap();
        let ev = Arc::new(Evaluator::new(qrels, ms, Options::default()).unwrap());
        let want = ev.evaluate(&run).unwrap().to_trec(true, true);
        let mut stream = Evaluator::stream_shared(ev.clone(), "r");
        drop(ev); // the stream holds its own share
        for q in run.queries() {
            stream.add(q.id(), q.iter()).unwrap();
        }
        let got = stream.finish(b"t".to_vec()).unwrap();
        assert_eq!(got.to_trec(true, true), want);
    }

    #[test]
    fn query_stream_refuses_repeats_and_duplicates() {
        let ms = MeasureSet::parse(&["map"]).unwrap();
        let ev = Evaluator::new(setup(), ms, Options::default()).unwrap();
        let mut s = ev.stream("engine", None);
        s.add(b"q1", [(&b"a"[..], 1.0)]).unwrap();
        let e = s.add(b"q1", [(&b"c"[..], 1.0)]).unwrap_err().to_string();
        assert_eq!(
            e,
            "engine: query 'q1' appears again after other queries; each query must come \
             whole, once"
        );
        s.add(b"q2", [(&b"x"[..], 1.0), (&b"x"[..], 0.5)]).unwrap();
        let e = s.finish(Vec::new()).unwrap_err().to_string();
        assert_eq!(e, "engine: document 'x' appears twice for query 'q2'");
        let mut s = ev.stream("engine", None);
        let e = s
            .add(b"q1", [(&b"a"[..], f64::NAN)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "engine: score of document 'a' for query 'q1' is NaN; a ranking needs \
             comparable scores"
        );
    }

    #[test]
    fn streamed_file_names_both_lines_of_a_duplicate() {
        let ms = MeasureSet::parse(&["map"]).unwrap();
        let ev = Evaluator::new(setup(), ms, Options::default()).unwrap();
        let text = b"q1 Q0 a 1 1 r\n# note\nq1 Q0 c 2 0.5 r\nq1 Q0 a 3 0.2 r\n";
        let e = ev
            .evaluate_reader(&text[..], "run.txt", None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "run.txt:4: document 'a' appears twice for query 'q1' (first at line 1)"
        );
    }

    /// The file route streams a grouped file and reads any other whole: the same
    /// values either way, and the messages of the run read whole.
    #[test]
    fn a_run_file_is_streamed_when_grouped_else_read_whole() {
        let (qrels, run) = big();
        let ms = MeasureSet::parse(&["all_trec"]).unwrap();
        let ev = Evaluator::new(qrels, ms, Options::default()).unwrap();
        let want = ev.evaluate(&run).unwrap().to_trec(true, true);
        let dir = tempfile::tempdir().unwrap();
        let grouped = dir.path().join("grouped.txt");
        let mut text = Vec::new();
        crate::trec::write_run(&run, &mut text).unwrap();
        std::fs::write(&grouped, &text).unwrap();
        let progress = Progress::new();
        let got = ev.evaluate_path(&grouped, None, Some(&progress)).unwrap();
        assert_eq!(got.to_trec(true, true), want);
        // KiB read, then the 600 queries
        assert_eq!(
            progress.get(),
            (
                text.len() as u64 / 1024 + 600,
                text.len() as u64 / 1024 + 600
            )
        );
        // the last line first: its query comes back at the end of the file
        let cut = text[..text.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let moved = [&text[cut..], &text[..cut]].concat();
        let apart = dir.path().join("apart.txt");
        std::fs::write(&apart, &moved).unwrap();
        assert!(ev.evaluate_file(&apart).is_err());
        let progress = Progress::new();
        let got = ev.evaluate_path(&apart, None, Some(&progress)).unwrap();
        assert_eq!(got.to_trec(true, true), want);
        let (done, total) = progress.get();
        assert_eq!(done, total);
        // a bad line after the query that comes back: the whole reading's message
        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, [&moved[..], b"q3 Q0 zz 1 nope t\n"].concat()).unwrap();
        let whole = crate::trec::read_run(&bad).unwrap_err().to_string();
        let e = ev.evaluate_path(&bad, None, None).unwrap_err().to_string();
        assert_eq!(e, whole);
        assert!(e.contains("bad.txt:600001"), "{e}");
    }
}
