//! Rank fusion and score normalization, exactly as ranx defines them (its source is the
//! definition; see the README's "Fusion" section).
//!
//! | file | what it holds |
//! |---|---|
//! | `names.rs` | [`Method`], [`Norm`], [`Params`]: names both ways, parameters, suggestions |
//! | `norm.rs` | the per-query normalizations |
//! | `kernels.rs` | the fusion kernels over one query's candidates |
//! | `trained.rs` | the methods trained on qrels (probfuse, segfuse, posfuse, slidefuse, bayesfuse, mapfuse) |
//! | `optimize.rs` | ranx's grid search of a method's parameters ([`optimize_fusion`]) |
//!
//! Per query, every run's list is taken in trec_eval order (score descending, ties by
//! document id descending), normalized if asked, and the candidates (every document any
//! run retrieved for the query) are scored by the method. Queries are the union of the
//! runs' queries: a query missing from a run is an empty list there (ranx requires
//! equal query sets; with empty lists added it gives the same numbers). A document
//! missing from a run is absent there, not 0, unless the method says so (ranx's
//! `comb_sum` and `wsum` count 0, `comb_max` -1e9, `comb_min` 1e9, `bordafuse`
//! `(c - n + 1) / 2`). Queries run in parallel (rayon, when built with it).
//!
//! ```
//! use irmetrics::fusion::{fuse, Method, Params};
//! use irmetrics::Run;
//!
//! let bm25 = Run::from_bytes(b"q1 Q0 a 1 9.5 bm25\nq1 Q0 b 2 7.0 bm25\n", "bm25")?;
//! let dense = Run::from_bytes(b"q1 Q0 b 1 0.9 dense\nq1 Q0 c 2 0.8 dense\n", "dense")?;
//! let fused = fuse(&[&bm25, &dense], Method::Rrf, None, &Params::new())?;
//! let q = &fused.queries()[0];
//! let b = q.iter().find(|(d, _)| *d == b"b").map(|(_, s)| s);
//! assert_eq!(b, Some(1.0 / 62.0 + 1.0 / 61.0));
//! # Ok::<(), irmetrics::Error>(())
//! ```

mod kernels;
mod names;
mod norm;
mod optimize;
mod stream;
mod trained;

pub use names::{Method, Norm, ParamSpec, Params};
pub use optimize::{grid, optimize_fusion, optimize_fusion_with, Optimization, Trial};
pub(crate) use stream::{fuse_files, streamable};
pub use trained::FusionModel;

use crate::error::{show, Error, Result};
use crate::ids::{FirstSight, Ids};
use crate::qrels::Qrels;
use crate::run::{Run, RunQuery};
use kernels::{Cell, Combiner, Setting};
use norm::{List, Pointwise, PointwiseNorm};

/// Normalize every query of `run` (ranx's `normalize`). Borda over one run is rank
/// normalization (its candidates are its own documents).
pub fn normalize(run: &Run, norm: Norm) -> Result<Run> {
    check_not_empty(run, 1)?;
    let queries = crate::parallel::map_with(run.queries(), Work::default, |w, q| {
        w.gather(&[run], q.id())?;
        w.normalize(Some(norm));
        w.normalized(q.id(), 0)
    });
    finish(queries, run.runid().to_vec())
}

/// Fuse `runs` with `method`, normalizing each first with `norm` if given; `params` as
/// ranx's keyword arguments (`k` of RRF, `phi` of RBC, `weights`, ...). The fused run's
/// tag is the method's name. Methods trained on qrels need [`fuse_trained`].
pub fn fuse(runs: &[&Run], method: Method, norm: Option<Norm>, params: &Params) -> Result<Run> {
    if method.needs_qrels() {
        return Err(Error::Option(format!(
            "fusion method '{method}' is trained on qrels; pass qrels"
        )));
    }
    fuse_with(runs, method, norm, params, None)
}

/// Fuse with a method trained on qrels (ranx's `*_train`, then the method): trained on
/// the judgments of the qrels' queries, applied to every query of the runs.
pub fn fuse_trained(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
) -> Result<Run> {
    let model = train_fusion(qrels, runs, method, norm, params)?;
    fuse_with(runs, method, norm, params, Some(&model.model))
}

/// Train `method` on the judgments of the qrels' queries (ranx's `*_train`: probfuse
/// with `n_segments`, slidefuse with its window `w`), each run normalized with `norm`
/// first as the fusion will see it: what [`fuse_trained`] learns before it fuses, kept
/// to fuse without the qrels ([`fuse_with_model`]).
pub fn train_fusion(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
) -> Result<FusionModel> {
    if !method.needs_qrels() {
        return Err(Error::Option(format!(
            "fusion method '{method}' is not trained on qrels; fuse without qrels"
        )));
    }
    let model = train(qrels, runs, method, norm, params)?;
    Ok(FusionModel { method, model })
}

/// Fuse `runs` (normalized with `norm` first) with a trained model ([`train_fusion`],
/// [`FusionModel::from_tables`]): ranx's `probfuse(runs, probs)` and the like. The
/// model holds a table per run, in the runs' order.
pub fn fuse_with_model(runs: &[&Run], norm: Option<Norm>, model: &FusionModel) -> Result<Run> {
    if model.n_runs() != runs.len() {
        return Err(Error::Option(format!(
            "the {} model holds tables for {} runs; {} runs given",
            model.method,
            model.n_runs(),
            runs.len()
        )));
    }
    fuse_with(runs, model.method, norm, &Params::new(), Some(&model.model))
}

/// The checks of [`fuse_trained`], then its training.
fn train(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
) -> Result<trained::Model> {
    check_runs(runs)?;
    params.check(method, runs.len())?;
    if qrels.is_empty() {
        return Err(Error::Input(
            "the qrels are empty: nothing to train on".into(),
        ));
    }
    trained::train(qrels, runs, method, norm, params)
}

fn fuse_with(
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
    model: Option<&trained::Model>,
) -> Result<Run> {
    check_runs(runs)?;
    if model.is_none() {
        // (a model's parameters were checked when it was trained or made)
        params.check(method, runs.len())?;
    }
    let setting = setting(method, params, model);
    let (qids, slots) = union_of_queries(runs);
    let groups: Vec<(&[u8], &[Option<&RunQuery>])> = qids
        .into_iter()
        .zip(slots.chunks_exact(runs.len()))
        .collect();
    let queries = crate::parallel::map_with(&groups, Work::default, |w, &(qid, group)| {
        w.fuse_queries(group.iter().copied(), norm, &setting, qid)
    });
    finish(queries, method.name().as_bytes().to_vec())
}

/// The method's parameters as its kernel takes them (checked before).
fn setting<'a>(
    method: Method,
    params: &'a Params,
    model: Option<&'a trained::Model>,
) -> Setting<'a> {
    Setting {
        method,
        weights: params.weights.as_deref().unwrap_or(&[]),
        k: param_or(params, method, "k"),
        phi: param_or(params, method, "phi"),
        gamma: param_or(params, method, "gamma"),
        sigma: param_or(params, method, "sigma"),
        model,
    }
}

fn param_or(params: &Params, method: Method, name: &str) -> f64 {
    if method.params().iter().any(|p| p.name == name) {
        params.get(method, name).unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

fn check_runs(runs: &[&Run]) -> Result<()> {
    if runs.len() < 2 {
        return Err(Error::Input(format!(
            "fusion needs at least two runs, got {}",
            runs.len()
        )));
    }
    for (i, r) in runs.iter().enumerate() {
        check_not_empty(r, i + 1)?;
    }
    Ok(())
}

fn check_not_empty(run: &Run, which: usize) -> Result<()> {
    if run.num_results() == 0 {
        return Err(Error::Input(format!("run {which} is empty (no results)")));
    }
    Ok(())
}

/// The ids of every query of any run, in byte order, and per id each run's query
/// (`None` where the run has none): `runs.len()` slots an id, in run order. One sort of
/// every run's queries, instead of a lookup in each run for each id (a hash of the id
/// and two pointers followed, to the query and to its id: 5% of a fusion of 5 runs of
/// 5,000 queries). A stable sort by id alone: a run holds its queries in byte order of
/// their ids, so the runs' queries one run after another are `runs.len()` sorted
/// stretches, which it merges (the same id's queries stay in run order); the unstable
/// sort by (id, run) it replaces took 2.5-3.2 ms of a 30 ms fusion of 5 runs x 5,000
/// queries, on the one thread that prepares the parallel work.
#[allow(clippy::type_complexity)]
fn union_of_queries<'a>(runs: &[&'a Run]) -> (Vec<&'a [u8]>, Vec<Option<&'a RunQuery>>) {
    let mut all: Vec<(&[u8], usize, &RunQuery)> = runs
        .iter()
        .enumerate()
        .flat_map(|(r, run)| run.queries().iter().map(move |q| (q.id(), r, q)))
        .collect();
    all.sort_by(|a, b| a.0.cmp(b.0));
    let mut qids: Vec<&[u8]> = Vec::new();
    let mut slots = Vec::new();
    for (qid, r, q) in all {
        if qids.last() != Some(&qid) {
            qids.push(qid);
            slots.resize(slots.len() + runs.len(), None);
        }
        let at = slots.len() - runs.len() + r;
        slots[at] = Some(q);
    }
    (qids, slots)
}

/// A run from the fused (or normalized) queries; a query no run retrieved anything
/// for is left out (a run file cannot hold it).
fn finish(queries: Vec<Result<Option<RunQuery>>>, runid: Vec<u8>) -> Result<Run> {
    let mut out = Vec::with_capacity(queries.len());
    for q in queries {
        if let Some(q) = q? {
            out.push(q);
        }
    }
    Ok(Run::from_unique(out, runid))
}

/// One query's work area, reused by a thread from query to query.
#[derive(Default)]
struct Work {
    /// The candidates: every document any run retrieved, in order of first appearance
    /// (runs in order, each best first).
    cands: Ids,
    /// Per run: (candidate, score), best first.
    lists: Vec<List>,
    /// The candidates' numbers, emptied for each query (its room kept).
    index: FirstSight,
    /// One run's query: its ids' hashes and its scores, in storage order.
    hashes: Vec<u64>,
    scores: Vec<f64>,
    order: Vec<u32>,
    /// One run's query, in storage order: each document's candidate, and its rank.
    numbers: Vec<u32>,
    ranks: Vec<u32>,
    seen: Vec<bool>,
    combiner: Combiner,
}

impl Work {
    /// Take each run's list for `qid` in trec_eval order and number the candidates.
    fn gather(&mut self, runs: &[&Run], qid: &[u8]) -> Result<()> {
        self.gather_queries(runs.iter().map(|r| r.query(qid)))
    }

    /// [`Work::gather`] of one query's lists, a run's `None` where it has none. Fails
    /// only when the query's candidates' ids together pass what an [`Ids`] holds (4
    /// GiB; each run's query fits, their union may not).
    fn gather_queries<'q>(
        &mut self,
        queries: impl ExactSizeIterator<Item = Option<&'q RunQuery>> + Clone,
    ) -> Result<()> {
        self.cands.truncate(0);
        self.index
            .reset(queries.clone().flatten().map(RunQuery::len).sum());
        self.lists.resize_with(queries.len(), Vec::new);
        for (q, list) in queries.zip(self.lists.iter_mut()) {
            list.clear();
            let Some(q) = q else { continue };
            q.ranking_kept(&mut self.order);
            // the ids hashed and the scores copied in storage order first: read in
            // ranked order straight from memory, each is a cache miss (measured: 13% of
            // a fusion of 5 runs x 5,000 queries x 100 documents)
            self.hashes.clear();
            self.hashes.extend(q.docs.hashes());
            self.scores.clear();
            self.scores.extend_from_slice(&q.values);
            for &i in &self.order {
                let (doc, h) = (q.docs.get(i as usize), self.hashes[i as usize]);
                let c = self
                    .index
                    .find_or_push(&mut self.cands, doc, h)
                    .map_err(|e| cannot_fuse(&q.qid, e))?;
                list.push((c as u32, self.scores[i as usize]));
            }
        }
        Ok(())
    }

    /// [`Work::gather`], then [`Work::normalize`].
    fn gather_normalized(&mut self, runs: &[&Run], qid: &[u8], norm: Option<Norm>) -> Result<()> {
        self.gather(runs, qid)?;
        self.normalize(norm);
        Ok(())
    }

    fn normalize(&mut self, norm: Option<Norm>) {
        if let Some(norm) = norm {
            let n_cand = self.cands.len();
            for list in &mut self.lists {
                norm::apply(norm, list, n_cand, &self.cands, &mut self.seen);
            }
        }
    }

    /// One query's lists (a run's `None` where it has none) normalized with `norm`,
    /// fused with the method, and the fused query returned (`None`: nothing retrieved).
    fn fuse_queries<'q>(
        &mut self,
        queries: impl ExactSizeIterator<Item = Option<&'q RunQuery>> + Clone,
        norm: Option<Norm>,
        s: &Setting<'_>,
        qid: &[u8],
    ) -> Result<Option<RunQuery>> {
        if !self.add_in_storage_order(queries.clone(), norm, s)? {
            self.gather_queries(queries)?;
            self.normalize(norm);
            let lists = self.lists.iter().map(|l| l.as_slice());
            self.combiner.combine(s, lists, self.cands.len());
        }
        self.fused_query(qid)
    }

    /// The additive methods ([`kernels::is_additive`]) after a normalization that maps
    /// each score by itself ([`Pointwise`]): each run's query read in storage order,
    /// its documents numbered as candidates and added into their sums as they come
    /// (a rank-reading method's ranks from the run's kept order), with no list in rank
    /// order made. The same sums, to the bit, as [`Work::gather_queries`] then
    /// [`Combiner::combine`]: each candidate's terms are the same and come in run order
    /// either way. Only the candidates' numbering (the fused query's storage order)
    /// differs. False, with nothing fused, for the other methods and normalizations.
    /// Measured (`tools/fuse_speed.rs`, 5 runs x 5,000 queries x 100 documents stored
    /// out of rank order, one thread, medians of 15 calls, two alternating rounds):
    /// mnz 78 -> 60 ms, wsum min-max 80 -> 65, rrf 79 -> 68; the fused bits the same.
    fn add_in_storage_order<'q>(
        &mut self,
        queries: impl ExactSizeIterator<Item = Option<&'q RunQuery>> + Clone,
        norm: Option<Norm>,
        s: &Setting<'_>,
    ) -> Result<bool> {
        let Some(norm) = PointwiseNorm::of(norm).filter(|_| kernels::is_additive(s.method)) else {
            return Ok(false);
        };
        let n: usize = queries.clone().flatten().map(RunQuery::len).sum();
        self.cands.truncate(0);
        self.index.reset(n);
        self.combiner.start_sums(s, n);
        let ranks = kernels::reads_ranks(s.method);
        for (r, q) in queries.enumerate() {
            let Some(q) = q else { continue };
            self.numbers.clear();
            for (id, h) in q.docs.hashed() {
                let c = (self.index)
                    .find_or_push(&mut self.cands, id, h)
                    .map_err(|e| cannot_fuse(&q.qid, e))?;
                self.numbers.push(c as u32);
            }
            if ranks {
                q.ranking_kept(&mut self.order);
                self.ranks.clear();
                self.ranks.resize(q.len(), 0);
                for (pos, &i) in self.order.iter().enumerate() {
                    self.ranks[i as usize] = pos as u32;
                }
                let cells = (self.numbers.iter().zip(&self.ranks))
                    .map(|(&c, &rank)| (c, Cell { score: 0.0, rank }));
                self.combiner.add_run(s, r, cells);
            } else {
                let p = Pointwise::of(norm, q.values.iter().copied());
                let cells = (self.numbers.iter().zip(&q.values)).map(|(&c, &v)| {
                    (
                        c,
                        Cell {
                            score: p.apply(v),
                            rank: 0,
                        },
                    )
                });
                self.combiner.add_run(s, r, cells);
            }
        }
        self.combiner.truncate_sums(self.cands.len());
        self.combiner.finish_sums(s);
        Ok(true)
    }

    /// The query of the candidates and their fused scores.
    fn fused_query(&self, qid: &[u8]) -> Result<Option<RunQuery>> {
        let fused = &self.combiner.fused;
        if fused.is_empty() {
            return Ok(None);
        }
        if let Some(i) = fused.iter().position(|v| v.is_nan()) {
            return Err(nan_fused(self.cands.get(i), qid));
        }
        let mut q = RunQuery::new(qid);
        q.values = fused.clone();
        // the candidates are the query's ids, copied at their size: the work list keeps
        // its room. Moved out instead (the next query's room made at this one's size),
        // a query with more candidates or bytes than the one before it doubled its
        // buffers as it grew, and the fused run kept the slack: 10 fusions of 5 runs x
        // 5,000 queries x 100 documents held 291-301 MiB, 237-240 MiB copied.
        q.docs = self.cands.clone();
        Ok(Some(q))
    }

    /// The query of run `which`'s normalized list (ids in the list's order: it may be
    /// reordered); `None` when the list is empty.
    fn normalized(&self, qid: &[u8], which: usize) -> Result<Option<RunQuery>> {
        let Some(list) = self.lists.get(which).filter(|l| !l.is_empty()) else {
            return Ok(None);
        };
        let mut q = RunQuery::new(qid);
        // room for the ids made first (grown one by one, the buffers double): the
        // candidates' bytes, exactly theirs when the list holds every candidate (as a
        // normalized run's one list does)
        q.docs = Ids::with_capacity(list.len(), self.cands.byte_len());
        for &(c, _) in list {
            q.docs.push(self.cands.get(c as usize))?;
        }
        q.values = list.iter().map(|x| x.1).collect();
        if let Some(i) = q.values.iter().position(|v| v.is_nan()) {
            return Err(nan_fused(q.docs.get(i), qid));
        }
        Ok(Some(q))
    }
}

/// The error of a query whose candidates cannot be numbered.
fn cannot_fuse(qid: &[u8], e: Error) -> Error {
    Error::Input(format!("query '{}' cannot be fused: {e}", show(qid)))
}

/// The error of a fused score that is NaN.
fn nan_fused(doc: &[u8], qid: &[u8]) -> Error {
    Error::Input(format!(
        "the fused score of document '{}' for query '{}' is NaN (infinite scores cannot be \
         normalized or combined)",
        show(doc),
        show(qid)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Run {
        Run::from_bytes(text.as_bytes(), "run").unwrap()
    }

    fn scores(r: &Run, qid: &str) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = r
            .query(qid.as_bytes())
            .map(|q| {
                q.iter()
                    .map(|(d, s)| (String::from_utf8_lossy(d).into_owned(), s))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    #[test]
    fn queries_are_the_union_and_missing_ones_are_empty_lists() {
        let a = run("q1 Q0 x 1 3 a\nq1 Q0 y 2 1 a\nq2 Q0 z 1 5 a\n");
        let b = run("q1 Q0 y 1 2 b\nq3 Q0 w 1 1 b\n");
        let f = fuse(&[&a, &b], Method::Sum, Some(Norm::MinMax), &Params::new()).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f.runid(), b"sum");
        assert_eq!(scores(&f, "q1"), [("x".into(), 1.0), ("y".into(), 0.0)]);
        // one document: min-max gives 0 (ranx's 1e-9 floor)
        assert_eq!(scores(&f, "q2"), [("z".into(), 0.0)]);
        let f = fuse(&[&a, &b], Method::Rrf, None, &Params::new().set("k", 0.0)).unwrap();
        assert_eq!(
            scores(&f, "q1"),
            [("x".into(), 1.0), ("y".into(), 0.5 + 1.0)]
        );
    }

    /// A fused (or normalized) query holds its ids and scores at their size: no buffer
    /// grown by doubling (as the candidates' were, moved out of the work area),
    /// whichever thread fused it and whatever it fused before.
    #[test]
    fn fused_queries_keep_no_room_beyond_their_ids() {
        let a = run("q1 Q0 x 1 3 a\nq2 Q0 long-id-1 1 3 a\nq2 Q0 long-id-2 2 2 a\n");
        let b = run(concat!(
            "q1 Q0 y 1 2 b\nq2 Q0 long-id-3 1 3 b\n",
            "q2 Q0 long-id-4 2 1 b\nq2 Q0 long-id-5 3 1 b\n"
        ));
        let exact = |r: &Run| -> usize {
            (r.queries().iter())
                .map(|q| q.docs.byte_len() + 4 * q.docs.len() + 8 * q.values.len())
                .sum()
        };
        for method in [Method::Mnz, Method::Rrf, Method::BordaFuse] {
            let f = fuse(&[&a, &b], method, None, &Params::new()).unwrap();
            assert_eq!(f.heap_bytes(), exact(&f), "{method:?}");
            assert_eq!(f.num_results(), 2 + 5);
        }
        let n = normalize(&b, Norm::MinMax).unwrap();
        assert_eq!(n.heap_bytes(), exact(&n));
    }

    #[test]
    fn normalize_keeps_the_tag_and_borda_of_one_run_is_rank() {
        let a = run("q1 Q0 x 1 3 a\nq1 Q0 y 2 1 a\nq1 Q0 z 3 2 a\n");
        let n = normalize(&a, Norm::Borda).unwrap();
        assert_eq!(n.runid(), b"a");
        let r = normalize(&a, Norm::Rank).unwrap();
        assert_eq!(scores(&n, "q1"), scores(&r, "q1"));
        let i = normalize(&a, Norm::MinMaxInverted).unwrap();
        assert_eq!(
            scores(&i, "q1"),
            [("x".into(), 0.0), ("y".into(), 1.0), ("z".into(), 0.5)]
        );
    }

    /// A model trained once fuses as the training fusion does, to the bit, and so does
    /// the model made again from its tables; it fuses queries the qrels lack.
    #[test]
    fn a_trained_model_fuses_as_fuse_trained() {
        let a = run("q1 Q0 x 1 3 a\nq1 Q0 y 2 1 a\nq1 Q0 z 3 2 a\nq2 Q0 x 1 5 a\nq3 Q0 w 1 1 a\n");
        let b = run("q1 Q0 y 1 2 b\nq1 Q0 w 2 1 b\nq2 Q0 v 1 1 b\nq2 Q0 x 2 0 b\n");
        let qrels = Qrels::from_bytes(b"q1 0 y 1\nq1 0 z 0\nq2 0 x 2\n", "q").unwrap();
        let settings = [
            (Method::ProbFuse, Params::new().set("n_segments", 2.0)),
            (Method::SegFuse, Params::new()),
            (Method::PosFuse, Params::new()),
            (Method::SlideFuse, Params::new().set("w", 1.0)),
            (Method::BayesFuse, Params::new()),
            (Method::MapFuse, Params::new()),
        ];
        let bits = |r: &Run| -> Vec<(String, Vec<(String, u64)>)> {
            (r.queries().iter())
                .map(|q| {
                    let id = String::from_utf8_lossy(q.id()).into_owned();
                    let docs = (q.iter())
                        .map(|(d, s)| (String::from_utf8_lossy(d).into_owned(), s.to_bits()))
                        .collect();
                    (id, docs)
                })
                .collect()
        };
        for (method, params) in settings {
            for norm in [None, Some(Norm::MinMax)] {
                let want = fuse_trained(&qrels, &[&a, &b], method, norm, &params).unwrap();
                let model = train_fusion(&qrels, &[&a, &b], method, norm, &params).unwrap();
                assert_eq!(model.method(), method);
                let got = fuse_with_model(&[&a, &b], norm, &model).unwrap();
                assert_eq!(bits(&got), bits(&want), "{method}");
                assert_eq!(got.len(), 3, "{method}: q3 is fused too");
                let again = FusionModel::from_tables(method, model.tables(), model.window());
                assert_eq!(again.unwrap(), model, "{method}");
            }
        }
        // bad tables and mismatches, each said
        let err =
            |m, t: Vec<Vec<f64>>, w| FusionModel::from_tables(m, t, w).unwrap_err().to_string();
        assert!(err(Method::SegFuse, vec![vec![0.5; 9]], None).contains("has 9 values, not 10"));
        assert!(err(Method::ProbFuse, vec![vec![]], None).contains("not at least 1"));
        assert!(err(Method::PosFuse, vec![vec![f64::NAN]], None).contains("must be finite"));
        assert!(err(Method::SlideFuse, vec![vec![0.5]], None).contains("window w"));
        assert!(err(Method::PosFuse, vec![vec![0.5]], Some(2)).contains("only slidefuse"));
        assert!(err(Method::Rrf, vec![vec![0.5]], None).contains("not trained"));
        assert!(err(Method::MapFuse, vec![], None).contains("no tables"));
        // the window among ranx's params: slidefuse's whole w, nothing else
        let slide = |p: Params| FusionModel::from_params(Method::SlideFuse, vec![vec![0.5]], &p);
        assert_eq!(
            slide(Params::new().set("w", 2.0)).unwrap().window(),
            Some(2)
        );
        let e = slide(Params::new().set("w", 1.5)).unwrap_err().to_string();
        assert!(e.contains("must be a whole number"), "{e}");
        let e = FusionModel::from_params(
            Method::PosFuse,
            vec![vec![0.5]],
            &Params::new().set("w", 1.0),
        );
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("'w' is not a parameter of 'posfuse'"));
        let one = FusionModel::from_tables(Method::MapFuse, vec![vec![0.3]], None).unwrap();
        let e = fuse_with_model(&[&a, &b], None, &one)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds tables for 1 runs; 2 runs given"), "{e}");
    }

    /// The additive methods fused in storage order ([`Work::add_in_storage_order`])
    /// give the bits of the lists in rank order ([`Work::gather_queries`], then
    /// [`Combiner::combine`]) for every normalization it takes: runs stored out of rank
    /// order, with ties, -0.0 beside 0.0, infinities, one-document queries, a query one
    /// run lacks, and weights of both signs.
    #[test]
    fn storage_order_sums_are_the_ranked_lists_sums() {
        let a = run(concat!(
            "q1 Q0 x 1 1.5 a\nq1 Q0 y 2 3 a\nq1 Q0 z 3 3 a\nq1 Q0 w 4 -0.0 a\n",
            "q1 Q0 v 5 0.0 a\nq2 Q0 x 1 2 a\nq3 Q0 u 1 -2 a\nq3 Q0 t 2 inf a\n"
        ));
        let b = run(concat!(
            "q1 Q0 v 1 0.0 b\nq1 Q0 z 2 7 b\nq1 Q0 s 3 -1e300 b\nq1 Q0 x 4 7 b\n",
            "q3 Q0 t 1 5 b\nq3 Q0 r 2 -inf b\nq4 Q0 p 1 0.25 b\n"
        ));
        let c = run("q1 Q0 w 1 -0.0 c\nq1 Q0 y 2 -0.0 c\nq2 Q0 x 1 1e-12 c\nq4 Q0 p 1 -3 c\n");
        let runs = [&a, &b, &c];
        let methods = Method::all().filter(|&m| kernels::is_additive(m));
        let mut tried = 0;
        for method in methods {
            let mut params = Params::new();
            if matches!(method, Method::Wsum | Method::Wmnz | Method::Mixed) {
                params = params.with_weights(vec![0.5, -0.0, 2.0]);
            }
            let setting = setting(method, &params, None);
            for norm in [None, Some(Norm::MinMax), Some(Norm::Max)] {
                let (qids, slots) = union_of_queries(&runs);
                for (qid, group) in qids.into_iter().zip(slots.chunks_exact(runs.len())) {
                    let mut w = Work::default();
                    let queries = group.iter().copied();
                    assert!(w
                        .add_in_storage_order(queries.clone(), norm, &setting)
                        .unwrap());
                    // (a NaN fused score, of infinities, is an error either way; which
                    // of the query's NaN documents it names may differ)
                    let direct = w.fused_query(qid).map(|q| q.map(|q| sorted_bits(&q)));
                    let mut w = Work::default();
                    w.gather_queries(queries).unwrap();
                    w.normalize(norm);
                    let lists = w.lists.iter().map(|l| l.as_slice());
                    w.combiner.combine(&setting, lists, w.cands.len());
                    let ranked = w.fused_query(qid).map(|q| q.map(|q| sorted_bits(&q)));
                    let what = format!("{method} {norm:?} {}", show(qid));
                    match (direct, ranked) {
                        (Ok(d), Ok(r)) => assert_eq!(d, r, "{what}"),
                        (Err(d), Err(r)) => assert!(d.to_string().contains("is NaN"), "{r}"),
                        (d, r) => panic!("{what}: {d:?} against {r:?}"),
                    }
                    tried += 1;
                }
            }
        }
        assert_eq!(tried, 12 * 3 * 4);
    }

    fn sorted_bits(q: &RunQuery) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<(Vec<u8>, u64)> = q.iter().map(|(d, s)| (d.to_vec(), s.to_bits())).collect();
        v.sort();
        v
    }

    #[test]
    fn bad_input_is_refused() {
        let a = run("q1 Q0 x 1 3 a\n");
        let e = fuse(&[&a], Method::Rrf, None, &Params::new()).unwrap_err();
        assert_eq!(e.to_string(), "fusion needs at least two runs, got 1");
        let empty = Run::default();
        let e = fuse(&[&a, &empty], Method::Rrf, None, &Params::new()).unwrap_err();
        assert_eq!(e.to_string(), "run 2 is empty (no results)");
        let e = fuse(&[&a, &a], Method::ProbFuse, None, &Params::new()).unwrap_err();
        assert!(e.to_string().contains("trained on qrels"), "{e}");
        let inf = run("q1 Q0 x 1 inf a\nq1 Q0 y 1 1 a\n");
        let e = fuse(&[&inf, &a], Method::Sum, Some(Norm::MinMax), &Params::new()).unwrap_err();
        assert!(e.to_string().contains("is NaN"), "{e}");
    }
}
